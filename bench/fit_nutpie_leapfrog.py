"""nutpie's cost per leapfrog on the CPU, timed inside its own sampler: the data for
``pymc_accel.costmodel.NUMBA_NUTPIE``'s gradient and driver figures.

The figures nutpie's estimate used until 2026-11-29 were fitted on single gradients timed
alone through a PyTensor function call, with nutpie's Rust driver priced like a Python one
(scaled by the machine's Python call overhead). Here the model is compiled once
(``nutpie.compile_pymc_model``), then sampled at two lengths, each twice, with every
leapfrog of tuning and sampling counted (``n_steps`` of the warm-up and the draws, the larger
chain's: the two chains run side by side on two cores, so the slower sets the pace). The
difference of the lengths leaves only leapfrogs:

    per leapfrog = (min wall(long) - min wall(short)) / (leapfrogs(long) - leapfrogs(short))

The long run is sized from the short one to add about ``--extra-seconds`` of leapfrogs, so that
the difference stands out of the walls' noise on cheap gradients too.

Each model gets one JSON line: the profile's free dimension, kernels, flops, bytes and
transcendental evaluations, the timed leapfrog and what ``costmodel.NUMBA_NUTPIE`` models for
it, in parts. ``--fit FILES`` rebuilds the profiles, grid-fits the runtime's per-kernel seconds,
arithmetic rate and driver to the models of :func:`zoo.fit_models` and :func:`zoo.leapfrog_shapes`
and prints every model's modelled/timed ratio under the current and the fitted figures, the
held-out models (:func:`zoo.held_out`) apart.

    JAX_PLATFORMS=cpu python bench/fit_nutpie_leapfrog.py \\
        > docs/results/fit-nutpie-leapfrog-cpu-2026-11-29.jsonl
    JAX_PLATFORMS=cpu python bench/fit_nutpie_leapfrog.py \\
        --fit docs/results/fit-nutpie-leapfrog-cpu-2026-11-29.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=None,
                   help="comma-separated names of zoo.fit_models, leapfrog_shapes or held_out "
                        "(default: all of them)")
    p.add_argument("--short", type=int, default=300, help="tuning draws = draws of the short run")
    p.add_argument("--extra-seconds", type=float, default=1.5,
                   help="seconds of leapfrogs the long run adds over the short one")
    p.add_argument("--max-draws", type=int, default=20_000)
    p.add_argument("--fit", nargs="+", default=None, metavar="FILE")
    return p.parse_args(argv)


def _all_models():
    import zoo

    return {**zoo.fit_models(), **zoo.leapfrog_shapes(), **zoo.held_out()}


def _leapfrogs(trace) -> float:
    """Leapfrogs of the slower chain, tuning and draws together."""
    steps = trace.sample_stats["n_steps"].sum("draw")
    warmup = trace.warmup_sample_stats["n_steps"].sum("draw")  # save_warmup=True keeps it
    return float((steps + warmup).max())


def _run(compiled, n: int, seed: int) -> tuple[float, float]:
    import nutpie

    start = time.perf_counter()
    trace = nutpie.sample(compiled, draws=n, tune=n, chains=2, cores=2, progress_bar=False,
                          seed=seed, save_warmup=True)
    return time.perf_counter() - start, _leapfrogs(trace)


def modelled_parts(profile, runtime=None) -> dict[str, float]:
    """What ``runtime`` (default ``costmodel.NUMBA_NUTPIE``) models for one leapfrog of two
    chains side by side on this machine: the roofline, its per-kernel part, and the driver."""
    from pymc_accel import costmodel as cm
    from pymc_accel.machine import machine_figures

    runtime = runtime or cm.NUMBA_NUTPIE
    machine = machine_figures()
    roofline = cm._cpu_roofline(profile, machine, "float64", runtime, 2)
    driver = cm.driver_seconds(profile, machine, runtime)
    return {"roofline": roofline, "driver": driver, "total": roofline + driver,
            "kernel_term": cm.kernel_work_seconds(profile, machine, runtime)}


def _profile(factory):
    import pymc_accel

    return pymc_accel.select(factory(), draws=1000, tune=1000, chains=2).model_profile


def measure(name: str, factory, args) -> dict:
    import nutpie

    profile = _profile(factory)
    compiled = nutpie.compile_pymc_model(factory())
    _run(compiled, 20, 0)  # threads and first calls started
    short = [_run(compiled, args.short, seed) for seed in (1, 2)]
    wall_short = min(w for w, _ in short)
    lf_short = short[0][1]
    rough = max(wall_short - 0.3, 0.05) / max(lf_short, 1.0)  # seconds a leapfrog, roughly
    per_draw = lf_short / (2 * args.short)
    long_n = args.short + int(args.extra_seconds / max(rough * per_draw * 2, 1e-9))
    long_n = max(2 * args.short, min(args.max_draws, long_n))
    long = [_run(compiled, long_n, seed) for seed in (1, 2)]
    wall_long = min(w for w, _ in long)
    lf_long = long[0][1]
    per_leapfrog = (wall_long - wall_short) / max(lf_long - lf_short, 1.0)
    c = profile.census
    return {"model": name, "n_free": profile.n_free, "kernels": c.kernels,
            "elementwise_kernels": c.kernels_by_category["elementwise"], "flops": c.flops,
            "bytes": c.bytes, "transcendentals": c.transcendentals,
            "lengths": [args.short, long_n], "walls_short": [w for w, _ in short],
            "walls_long": [w for w, _ in long], "leapfrogs": [lf_short, lf_long],
            "per_leapfrog_seconds": per_leapfrog,
            "modelled": modelled_parts(profile)}


def _fit(files: list[str]) -> None:
    import zoo

    from pymc_accel import costmodel as cm

    rows = [json.loads(line) for f in files for line in Path(f).read_text().splitlines()
            if line.strip()]
    models = _all_models()
    held = set(zoo.held_out())
    profiles = {r["model"]: _profile(models[r["model"]]) for r in rows}
    base = cm.NUMBA_NUTPIE
    timed = {r["model"]: r["per_leapfrog_seconds"] for r in rows}

    def error(runtime, names) -> float:
        logs = [math.log(modelled_parts(profiles[n], runtime)["total"]
                         / timed[n]) for n in names]
        return math.sqrt(sum(x * x for x in logs) / len(logs)) if logs else float("nan")

    # dense linear algebra has its own rate (dense_efficiency), which one model cannot fit
    dense = {n for n, p in profiles.items() if cm.compute_bound_dense_flops(p) > 0}
    fit = [r["model"] for r in rows if r["model"] not in held | dense]
    out = [r["model"] for r in rows if r["model"] in held and r["model"] not in dense]

    def runtime(k, f, a, b, t):
        return dataclasses.replace(base, per_kernel_seconds=k, flops_factor=f,
                                   per_gradient_seconds=a, per_dimension_seconds=b,
                                   transcendental_factor=t)

    grid = itertools.product(
        [base.per_kernel_seconds * s for s in (0.0, 0.05, 0.1, 0.2, 0.35, 0.5)],
        [base.flops_factor * s for s in (0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)],
        [base.per_gradient_seconds * s for s in (0.0, 0.25, 0.5, 1.0)],
        [base.per_dimension_seconds * s for s in (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)],
        [base.transcendental_factor * s for s in (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)])
    best = min((error(runtime(*x), fit), x) for x in grid)
    k, f, a, b, t = best[1]
    fitted = runtime(k, f, a, b, t)
    print(f"current: per kernel {base.per_kernel_seconds * 1e9:.0f} ns, flops factor "
          f"{base.flops_factor:g}, driver {base.per_gradient_seconds * 1e6:.2f} µs + "
          f"{base.per_dimension_seconds * 1e9:.1f} ns a dimension, transcendental factor "
          f"{base.transcendental_factor:g}; rms log error fit "
          f"{error(base, fit):.3f}, held out {error(base, out):.3f}")
    print(f"fitted:  per kernel {k * 1e9:.0f} ns, flops factor {f:g}, driver {a * 1e6:.2f} µs + "
          f"{b * 1e9:.1f} ns a dimension, transcendental factor {t:g}; rms log error fit "
          f"{best[0]:.3f}, held out "
          f"{error(fitted, out):.3f}")
    print()
    print("| model | set | d | timed (µs) | current / timed | fitted / timed |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        n = r["model"]
        cur = modelled_parts(profiles[n], base)["total"] / timed[n]
        new = modelled_parts(profiles[n], fitted)["total"] / timed[n]
        kind = "dense" if n in dense else "held out" if n in held else "fit"
        print(f"| {n} | {kind} | {r['n_free']} | {timed[n] * 1e6:.1f} | {cur:.2f} | {new:.2f} |")


def main(argv=None) -> None:
    args = _parse(argv)
    warnings.filterwarnings("ignore")
    if args.fit:
        _fit(args.fit)
        return
    models = _all_models()
    names = args.models.split(",") if args.models else list(models)
    for name in names:
        print(json.dumps(measure(name, models[name], args)), flush=True)


if __name__ == "__main__":
    main()
