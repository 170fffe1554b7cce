"""NumPyro's fixed cost of a run, timed end to end as the regret benchmark times its runs.

``costmodel.JAX_CPU_SAMPLER``'s fixed seconds were fitted on ``MCMC.run`` called directly
(``bench/fit_numpyro_tuning.py``), on an earlier hour's machine, and then scaled: they leave
out what ``sample_jax_nuts`` does around the sampler (jaxifying the graph, the initial points,
compiling and running the transform of the draws back to the model's variables, building the
InferenceData). The regret runs of 2026-11-26 showed NumPyro's runs 1.3x their estimates with
their observed trees (``bench/fit_shared_run_error.py``), nutpie's 1.1x.

Here each model runs NumPyro's backend (``backend.sample``, as ``bench_regret.py`` times a
candidate) with 10 tuning steps and 10 draws x 2 chains in float64, once to warm the process
and then ``--repeats`` times (compiles vary by a second from run to run): a
run this short is its fixed cost (its leapfrogs, at the timed per-leapfrog cost, are
subtracted: ``--leapfrogs`` names a ``fit_numpyro_leapfrog.py`` result file). Each line has the
walls, the seconds XLA spent compiling (``jax.monitoring``'s ``backend_compile_duration``
events), PyMC's ``sampling_time`` (the sampler's call, compile included), the profile's
kernels and the fixed seconds of the candidate's estimate when it was measured. ``--candidate``
times another candidate the same way (nutpie: ``numba[cpu,float64,driver=nutpie]``, whose
leapfrogs in so short a run are not subtracted); ``--option chains_at_once=1`` lays its
chains out one a device through pymc-accel's chain map, as a NumPyro CPU run is laid out on a
GPU machine, and ``--option chain_method=vectorized`` vmaps them, as on one GPU (neither has
its leapfrogs subtracted). ``--long N`` also times ``--repeats`` runs of N + N draws in the
same hour: their median wall less the fixed cost is the sampling, set against the estimate's
sampling seconds at the leapfrogs per draw those runs took.
``--fit FILE``
fits ``a + b kernels`` to the median fixed seconds by least squares. ``--jax-cache on`` runs
with JAX's compile cache on disk in a new directory, so each model's first run (kept in the
line as ``first_run``) compiles its programs and the repeats load them; ``off`` (the default)
compiles every run; ``--fit`` then also fits the first run's fixed seconds beyond a repeat's.
``--primer NAME`` runs one model first, unreported, so that the first model timed does not pay
the process's first use. ``--pymcs-initial-points`` evaluates the log density at the initial
points op by op, as PyMC does and pymc-accel did before 2026-11-30 (``run_logp.JIT_LOGP``).

    JAX_PLATFORMS=cpu python bench/fit_numpyro_fixed.py \\
        --models eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid \\
        > docs/results/fit-numpyro-fixed-cpu-2026-11-26.jsonl
    python bench/fit_numpyro_fixed.py --fit docs/results/fit-numpyro-fixed-cpu-2026-11-26.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SHORT = 10  # tuning steps and draws of a run that is its fixed cost
DEFAULT_CANDIDATE = "numpyro[cpu,float64,chain_method=parallel]"


def measure(name: str, repeats: int, per_leapfrog: dict[str, float],
            label: str = DEFAULT_CANDIDATE, long: int = 0, options: dict | None = None) -> dict:
    """One model's line: ``repeats`` warm 10 + 10 runs of candidate ``label``, timed end to
    end as ``bench_regret.py`` times a candidate's run (``backend.sample``: the selection and
    ``pymc_accel.sample``'s own checks are not in it)."""
    import jax.monitoring

    from bench_regret import offered_candidates
    from fit_numpyro_tuning import _factory
    from pymc_accel import costmodel, jax_cache
    from pymc_accel.backend import Figure, SampleRequest
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry

    compiled = collections.defaultdict(float)

    def listen(event: str, seconds: float, **_) -> None:
        compiled[event.rsplit("/", 1)[-1]] += seconds

    jax.monitoring.register_event_duration_secs_listener(listen)
    factory = _factory(name)
    profile = profile_model(factory())
    offered = offered_candidates(profile)
    if label not in offered:  # a GPU candidate on a machine whose JAX sees no GPU, say
        raise SystemExit(f"--candidate {label}: not offered for {name} on this machine; "
                         f"offered: {', '.join(offered)}")
    candidate = offered[label]
    if options:  # chains_at_once=1: pymc-accel's chain map, the layout of a CPU run on a GPU
        merged = {**dict(candidate.options), **options}
        candidate = replace(candidate, options=tuple(merged.items()))
    backend = get_registry().backends[candidate.backend]
    runs = []
    first = None
    for i in range(repeats + 1):  # the first warms the process (imports, first use, caches)
        if i == 1:  # the first run's: with --jax-cache on, a compile its cache did not hold
            first = {"wall": wall, "compile": compiled.get("backend_compile_duration", 0.0),
                     "sampling_leapfrogs": leapfrogs}
        compiled.clear()
        request = SampleRequest(draws=SHORT, tune=SHORT, chains=2, cores=2, random_seed=i + 1,
                                progressbar=False)
        t0 = time.perf_counter()
        idata = backend.sample(factory(), candidate, request)
        wall = time.perf_counter() - t0
        leapfrogs = float(idata.sample_stats["n_steps"].sum())  # both chains' sampling draws
        if i:
            runs.append({"wall": wall, "sampling_time": float(idata.posterior.attrs.get(
                "sampling_time", float("nan"))), "compile": compiled.get(
                "backend_compile_duration", 0.0), "trace": compiled.get(
                "jaxpr_trace_duration", 0.0), "lower": compiled.get(
                "jaxpr_to_mlir_module_duration", 0.0), "sampling_leapfrogs": leapfrogs})
    # tuning's leapfrogs are not kept by sample_jax_nuts: counted at the sampling draws' rate,
    # the two chains side by side (NumPyro's timed leapfrog; none subtracted for others)
    lf = per_leapfrog.get(name) if label == DEFAULT_CANDIDATE and not options else None
    for run in [*runs, *([first] if first else [])]:
        run["fixed"] = run["wall"] - (run["sampling_leapfrogs"] * lf if lf else 0.0)
    estimate = backend.estimate(candidate, profile, machine_figures())
    line = {"model": name, "kernels": profile.census.kernels, "n_free": profile.n_free,
            "candidate": candidate.label, "runs": runs,
            "fixed_median": statistics.median(r["fixed"] for r in runs),
            "compile_median": statistics.median(r["compile"] for r in runs),
            "modelled_fixed": estimate.fixed_seconds.value, "per_leapfrog_seconds": lf,
            "first_run": first, "modelled_cold": estimate.cold_compile_seconds.value,
            "jax_cache": jax_cache.in_use(),
            # the machine's start-up pace, which the selection applies to both modelled
            # figures (neither is paced here), and what they owe to ops JAX compiles as
            # programs of their own
            "start_up_pace": costmodel.start_up_pace(machine_figures()),
            "program_ops": costmodel.xla_program_ops(profile),
            "modelled_programs_cached": costmodel.xla_program_seconds(profile, "cached"),
            "modelled_programs_cold": costmodel.xla_program_seconds(profile, "cold")}
    if long:  # the same hour's runs of ``long`` + ``long`` draws: the sampling the fixed cost left
        walls, per_draw = [], []
        for i in range(repeats):
            request = SampleRequest(draws=long, tune=long, chains=2, cores=2,
                                    random_seed=i + 1, progressbar=False)
            t0 = time.perf_counter()
            idata = backend.sample(factory(), candidate, request)
            walls.append(time.perf_counter() - t0)
            per_draw.append(float(idata.sample_stats["n_steps"].mean()))
        observed = replace(estimate, gradients_per_draw=Figure(statistics.median(per_draw)))
        line["long"] = {"draws": long, "walls": walls, "leapfrogs_per_draw": per_draw,
                        "sampling": statistics.median(walls) - line["fixed_median"],
                        "modelled_sampling": observed.sampling_seconds(2 * long, 2)}
    return line


def _least_squares(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """``(a, b)`` of ``y = a + b x`` by least squares."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def fit(paths: list[str]) -> tuple[float, float]:
    """Least squares of ``fixed_median = a + b kernels``; prints each model's fit and what was
    modelled when it was measured, and returns ``(a, b)``."""
    lines = [json.loads(x) for p in paths for x in Path(p).read_text().splitlines() if x.strip()]
    a, b = _least_squares([float(x["kernels"]) for x in lines], [x["fixed_median"] for x in lines])
    print(f"fixed = {a:.3f} s + {b * 1e3:.2f} ms x kernels ({len(lines)} models)")
    firsts = [x for x in lines if x.get("first_run")]
    if len(firsts) > 1:  # --jax-cache on: a model's first run, beyond a repeat that loads
        fa, fb = _least_squares([float(x["kernels"]) for x in firsts],
                                [x["first_run"]["fixed"] - x["fixed_median"] for x in firsts])
        print(f"first run, beyond that = {fa:.3f} s + {fb * 1e3:.2f} ms x kernels "
              f"({len(firsts)} models)")
    for x in lines:
        fitted = a + b * x["kernels"]
        print(f"  {x['model']:14s} kernels {x['kernels']:4d}: fixed {x['fixed_median']:.2f} s "
              f"(XLA compile {x['compile_median']:.2f} s), fit {fitted:.2f} "
              f"({fitted / x['fixed_median']:.2f}x), modelled when measured "
              f"{x['modelled_fixed']:.2f} ({x['modelled_fixed'] / x['fixed_median']:.2f}x)")
        if x.get("long"):
            g = x["long"]
            print(f"    {g['draws']} + {g['draws']} draws: sampling {g['sampling']:.2f} s (median "
                  f"wall less the fixed cost), modelled at its leapfrogs "
                  f"{g['modelled_sampling']:.2f} s ({g['modelled_sampling'] / g['sampling']:.2f}x)"
                  if g["sampling"] > 0 else f"    {g['draws']} + {g['draws']} draws: no longer "
                  "than the fixed cost")
    return a, b


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--long", type=int, default=0,
                   help="also time runs of this many tuning steps and draws, to check the "
                        "estimate's sampling seconds against what the fixed cost leaves of them")
    p.add_argument("--candidate", default=DEFAULT_CANDIDATE,
                   help="the candidate to time (another's fixed cost, measured the same way)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="set one of the candidate's options (chains_at_once=1: its chains one "
                        "a device through pymc-accel's chain map, the layout a NumPyro CPU run "
                        "takes on a machine whose default JAX backend is a GPU; "
                        "chain_method=vectorized: NumPyro's vmap over the chains)")
    p.add_argument("--leapfrogs", default="docs/results/fit-numpyro-leapfrog-cpu-2026-11-26.jsonl",
                   help="fit_numpyro_leapfrog.py lines: per-leapfrog seconds to subtract")
    p.add_argument("--fit", nargs="*")
    p.add_argument("--jax-cache", choices=["on", "off"], default="off",
                   help="on: JAX's compile cache on disk in a new directory (so each model's "
                        "first run compiles and its repeats load from it); off: none")
    p.add_argument("--primer", default="",
                   help="a model to run once first, unreported (the process's first use)")
    p.add_argument("--pymcs-initial-points", action="store_true",
                   help="evaluate the log density at the initial points as PyMC does, op by "
                        "op (run_logp.JIT_LOGP off): the runs before 2026-11-30")
    args = p.parse_args(argv)
    if args.fit:
        fit(args.fit)
        return
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    os.environ["PYMC_ACCEL_JAX_CACHE"] = args.jax_cache
    if args.pymcs_initial_points:
        from pymc_accel.backends import run_logp

        run_logp.JIT_LOGP = False
    if args.jax_cache == "on":
        import tempfile

        os.environ["PYMC_ACCEL_CACHE_DIR"] = tempfile.mkdtemp(prefix="fit-jax-cache-")
    options = {k: int(v) if v.isdigit() else v
               for k, v in (o.split("=", 1) for o in args.option)}
    if args.primer:
        measure(args.primer, 1, {}, args.candidate, options=options)
    per_leapfrog = {}
    if args.leapfrogs and Path(args.leapfrogs).exists():
        for x in Path(args.leapfrogs).read_text().splitlines():
            if x.strip() and (line := json.loads(x)).get("precision", "float64") == "float64":
                per_leapfrog[line["model"]] = line["per_leapfrog_seconds"]
    for name in [m for m in args.models.split(",") if m]:
        print(json.dumps(measure(name, args.repeats, per_leapfrog, args.candidate,
                                    args.long, options)), flush=True)


if __name__ == "__main__":
    main()
