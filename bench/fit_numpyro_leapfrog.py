"""NumPyro's cost per leapfrog on the CPU, timed after its compile: the data for
``pymc_accel.costmodel.JAX_CPU_SAMPLER``'s leapfrog.

``bench/fit_numpyro_tuning.py`` takes a leapfrog's cost from two whole runs of different
lengths, each compiling the sampler again (a second of noise either way), so only models whose
longer run took a second more gave a figure: four of the fit's sixteen. Here NumPyro tunes two
chains once (``MCMC.run`` with ``--warmup`` tuning draws, two chains on two XLA CPU devices,
``chain_method="parallel"``, as PyMC's ``sample_jax_nuts`` runs NumPyro), then its NUTS
kernel's ``sample`` is run from the tuned state inside one compiled loop whose length is an
argument (``jax.pmap`` over the two chains, as ``"parallel"`` maps them), at two lengths, each
repeated. One program serves every run, so the difference of the lengths removes everything
but the leapfrogs:

    per leapfrog (two chains side by side) = (wall(long) - wall(short))
                                             / (leapfrogs(long) - leapfrogs(short))

with the leapfrogs counted per chain (``num_steps``; the chains run side by side, so the slower
chain sets the pace: the larger of the two chains' counts is used).

Until 2026-11-26 the runs after tuning were ``MCMC.run`` calls from ``post_warmup_state``, on
the belief that every repeat after a length's first reused its compiled program. It does not:
each call compiles again (500 and 3000 draws of a 10-dimensional normal took 2.5 and 2.1 s
a call, their leapfrogs 3 and 20 ms), so the difference was the compile's noise on all but the largest models
(-115 to +160 µs a leapfrog on the quick zoo's small models in one run) and
:func:`reliable` kept only the models whose leapfrogs outweighed it.

Each model and precision gets one JSON line: the profile's free dimension, kernels, flops and
bytes, the timed leapfrog and what ``costmodel.JAX_CPU_SAMPLER`` models for it. ``--fit FILES``
prints them side by side and grid-fits the leapfrog's factors to the models of ``--fit-models``
(default: every model of :func:`zoo.fit_models` and :func:`zoo.leapfrog_shapes`) whose timing
stands out of the compile's noise (:func:`reliable`), reporting the held-out models' errors
under both the fitted and the current factors.

    JAX_PLATFORMS=cpu python bench/fit_numpyro_leapfrog.py --models glm_poisson,seed_mid \\
        > docs/results/fit-numpyro-leapfrog-cpu.jsonl
    python bench/fit_numpyro_leapfrog.py --fit docs/results/fit-numpyro-leapfrog-cpu.jsonl
    python bench/fit_numpyro_leapfrog.py --fit FILES --float32
    JAX_PLATFORMS=cpu python bench/fit_numpyro_leapfrog.py --driver 10,100,1000,5000

``--float32`` fits the float32 factors to each model's float64/float32 ratio of leapfrogs
(:func:`float32_fit`) instead.

``--driver`` times NumPyro's own work per leapfrog on standard normals of those dimensions
(:func:`measure_driver`), the ``per_gradient_seconds`` and ``per_dimension_seconds`` of
``costmodel.JAX_CPU_SAMPLER``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _factory(name: str):
    """A model any fitting script can name: the quick zoo, its shapes or a held-out model."""
    import zoo

    return zoo.named()[name]


def time_leapfrogs(potential, init: list, lengths: tuple[int, int], warmup: int,
                   repeats: int, blas_cores="auto") -> dict:
    """Tune NumPyro's NUTS on ``potential`` from ``init`` (a list of ``(chains, ...)`` arrays,
    two chains on two XLA CPU devices), then time its kernel in one compiled loop at each of
    ``lengths`` draws, ``repeats`` times: per length, the walls and the leapfrogs (the larger
    chain's count). BLAS is limited as the run limits it (``blas_cores``:
    :func:`pymc_accel.backends.blas_threads.limit_blas`; ``None`` leaves it, as runs did until
    2026-11-29)."""
    from pymc_accel.backends.blas_threads import limit_blas
    from pymc_accel.devices import cpu_cores

    with limit_blas(blas_cores, cpu_cores(), init[0].shape[0]):
        return _time_leapfrogs(potential, init, lengths, warmup, repeats)


def _time_leapfrogs(potential, init: list, lengths: tuple[int, int], warmup: int,
                    repeats: int) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from numpyro.infer import MCMC, NUTS

    chains = init[0].shape[0]
    kernel = NUTS(potential_fn=potential, target_accept_prob=0.8)
    tuned = MCMC(kernel, num_warmup=warmup, num_samples=1, num_chains=chains,
                 chain_method="parallel", progress_bar=False)
    tuned.run(jax.random.PRNGKey(0), init_params=init)
    state = tuned.last_state

    def draws(state, n):  # n draws from the tuned state; the leapfrogs they took
        def one(_, carry):
            state, leapfrogs = carry
            state = kernel.sample(state, (), {})
            return state, leapfrogs + state.num_steps
        return jax.lax.fori_loop(0, n, one, (state, jnp.zeros((), jnp.int64)))[1]

    run = jax.pmap(draws, in_axes=(0, None))  # a chain per XLA CPU device
    jax.block_until_ready(run(state, 1))  # the one compile
    timed = {}
    for n in lengths:
        walls, steps = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            per_chain = np.asarray(jax.block_until_ready(run(state, n)))
            walls.append(time.perf_counter() - t)
            steps.append(float(per_chain.max()))
        best = int(np.argmin(walls))
        timed[n] = {"wall": walls[best], "walls": walls, "leapfrogs": steps[best],
                    "leapfrogs_all": steps}
    return timed


def measure(name: str, precision: str, lengths: tuple[int, int], warmup: int, machine,
            repeats: int = 3, logp_source: str = "run", blas_cores="auto") -> dict:
    """One JSON line for a model in a precision."""
    import jax.numpy as jnp
    from fit_numpyro_tuning import numpyro_inputs

    from pymc_accel import costmodel
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.profile import profile_model

    model = _factory(name)()
    profile = profile_model(model)
    chains = 2
    with jax_precision(precision):
        logp, x0 = numpyro_inputs(model, precision, logp_source=logp_source)
        timed = time_leapfrogs(lambda xs: -logp(xs), [jnp.stack([x] * chains) for x in x0],
                               lengths, warmup, repeats, blas_cores)
    short, long = (timed[n] for n in lengths)
    per_leapfrog = ((long["wall"] - short["wall"])
                    / max(1.0, long["leapfrogs"] - short["leapfrogs"]))
    c = profile.census
    return {
        "model": name, "precision": precision, "n_free": profile.n_free,
        "kernels": c.kernels, "flops": c.flops, "bytes": c.bytes,
        "matvec_bytes": costmodel.memory_bound_dense_bytes(profile, precision),
        "method": "compiled_loop", "logp": logp_source, "blas_cores": blas_cores,
        "runs": timed,
        "per_leapfrog_seconds": per_leapfrog,
        "modelled_per_leapfrog_seconds": costmodel.cpu_gradient_seconds(
            profile, machine, precision, costmodel.JAX_CPU_SAMPLER, chains).value,
    }


def measure_driver(dims: list[int], lengths: tuple[int, int], warmup: int, machine,
                   repeats: int = 3) -> dict:
    """NumPyro's own work per leapfrog, its *driver*: its NUTS on a standard normal of each
    dimension in ``dims`` (a gradient of ``d`` multiplications), timed as :func:`measure`
    times a model. Fits ``a + b d`` seconds to the leapfrogs by least squares and gives it in
    the cost model's reference units (``costmodel.driver_seconds`` scales
    ``per_gradient_seconds + per_dimension_seconds * d`` by this machine's call overhead
    against the reference machine's)."""
    import jax.numpy as jnp

    from pymc_accel import costmodel
    from pymc_accel.backends.jax_model import jax_precision

    points = []
    with jax_precision("float64"):
        for d in dims:
            timed = time_leapfrogs(lambda xs: 0.5 * jnp.sum(xs[0] ** 2),
                                   [jnp.full((2, d), 0.1)], lengths, warmup, repeats)
            points.append((d, per_leapfrog({"runs": timed}), timed))
    n = len(points)
    mx, my = sum(d for d, _, _ in points) / n, sum(s for _, s, _ in points) / n
    b = (sum((d - mx) * (s - my) for d, s, _ in points)
         / max(1e-12, sum((d - mx) ** 2 for d, _, _ in points)))
    a = my - b * mx
    scale = costmodel._machine_scale(machine)
    return {"driver": [{"d": d, "per_leapfrog_seconds": s, "runs": t} for d, s, t in points],
            "fit_seconds": a, "fit_seconds_per_dimension": b,
            "per_gradient_seconds": a / scale, "per_dimension_seconds": b / scale,
            "machine_scale": scale,
            "modelled_now": {"per_gradient_seconds": costmodel.JAX_CPU_SAMPLER.per_gradient_seconds,
                             "per_dimension_seconds":
                                 costmodel.JAX_CPU_SAMPLER.per_dimension_seconds}}


def per_leapfrog(line: dict) -> float:
    """Seconds per leapfrog (two chains side by side) from the median walls at the two lengths:
    the regret benchmark judges by median walls, and on this machine one length's walls of a
    large model spread by up to 1.7x (seed_large 10.5 to 18.3 s), so their fastest, kept as
    ``per_leapfrog_seconds``, priced seed_large's leapfrog at 316 µs where its median run paid
    454 µs. The leapfrogs are the median repeat's where every repeat's were kept, else the
    fastest's (they differ by a few percent between repeats from one tuned state)."""
    import statistics

    short, long = line["runs"].values()

    def middle(run: dict) -> tuple[float, float]:
        walls = run["walls"]
        order = sorted(range(len(walls)), key=walls.__getitem__)
        i = order[len(order) // 2]
        steps = run.get("leapfrogs_all")
        return statistics.median(walls), (steps[i] if steps else run["leapfrogs"])

    (w0, l0), (w1, l1) = middle(short), middle(long)
    return (w1 - w0) / max(1.0, l1 - l0)


#: Seconds the longer run's leapfrogs must add to the shorter's for a line to be fitted on, by
#: how the line was timed: runs of one compiled loop (``"compiled_loop"``, since 2026-11-26),
#: whose walls at one length spread by a few milliseconds on small models, and the earlier
#: lines' ``MCMC.run`` calls, each of which compiled the sampler again (walls at one length
#: spread by up to 0.3 s).
RELIABLE_SECONDS = {"compiled_loop": 0.02, "mcmc_run": 0.5}


def reliable(line: dict) -> bool:
    """Whether a line's leapfrog stands out of its runs' noise (:data:`RELIABLE_SECONDS`)."""
    import statistics

    if "error" in line:
        return False
    walls = [statistics.median(run["walls"]) for run in line["runs"].values()]
    return walls[-1] - walls[0] >= RELIABLE_SECONDS[line.get("method", "mcmc_run")]


def _lines(paths: list[str]) -> list[dict]:
    """The JSON lines of the result files ``paths``, in order."""
    return [json.loads(x) for p in paths for x in Path(p).read_text().splitlines() if x.strip()]


def _rms(errors: list[float]) -> float:
    return math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else math.nan


def log_errors(runtime, rows: list[tuple[dict, object]], machine) -> list[float]:
    """log(modelled / timed) of each (line, profile) row's leapfrog under ``runtime``."""
    from pymc_accel import costmodel

    return [math.log(costmodel.cpu_gradient_seconds(p, machine, line["precision"], runtime,
                                                    2).value / per_leapfrog(line))
            for line, p in rows]


def grid_fit(rows: list[tuple[dict, object]], machine):
    """The grid's ``JAX_CPU_SAMPLER`` factors with the least rms log error over ``rows``
    ((line, profile) pairs): bandwidth, flops and matrix-vector factors, per-leapfrog and
    per-dimension seconds. Returns ``(rms, runtime)``."""
    import itertools
    from dataclasses import replace

    from pymc_accel import costmodel

    best = (math.inf, costmodel.JAX_CPU_SAMPLER)
    # transcendental functions are not priced apart (transcendental_factor 0): a factor of 0.5
    # or 1 (the numba runtimes') lowered the fitted lines' rms log error by under 5% (0.463 and
    # 0.451 against 0.473) (docs/benchmarks.md, "NumPyro's leapfrog timed apart")
    grid = itertools.product((0.3, 0.45, 0.6, 0.8, 1.0, 1.5, 2.0), (0.5, 1, 2, 4, 8),
                             (0.0, 1.0, 2.0, 3.0, 4.0, 6.0), (0.0, 0.5e-6, 1e-6, 2e-6, 5e-6, 10e-6),
                             (0.0, 1e-9, 2e-9, 5e-9, 1e-8, 2e-8, 5e-8, 1e-7))
    for bandwidth, flops, matvec, per_gradient, per_dimension in grid:
        runtime = replace(costmodel.JAX_CPU_SAMPLER, bandwidth_factor=bandwidth,
                          flops_factor=flops, matvec_bandwidth_factor=matvec,
                          matvec_threaded=True, per_gradient_seconds=per_gradient,
                          per_dimension_seconds=per_dimension, transcendental_factor=0.0)
        rms = _rms(log_errors(runtime, rows, machine))
        if rms < best[0]:
            best = (rms, runtime)
    return best


def fit(paths: list[str], fit_names: set[str], fixed_from: list[str] | None = None) -> None:
    """Print each line's timed and modelled leapfrog, and a grid fit on ``fit_names``."""
    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    lines = _lines(paths)
    lines = [line for line in lines if "error" not in line and per_leapfrog(line) > 0]
    machine = machine_figures()
    data = [(line, profile_model(_factory(line["model"])())) for line in lines]
    current = costmodel.JAX_CPU_SAMPLER

    def modelled(runtime, profile, precision):
        return costmodel.cpu_gradient_seconds(profile, machine, precision, runtime, 2).value

    print("| model | precision | d | kernels | fitted on | timed (µs) | modelled now (µs) | now / timed |")
    print("|---|---|---|---|---|---|---|---|")
    for line, profile in data:
        now = modelled(current, profile, line["precision"])
        role = ("yes" if line["model"] in fit_names else "held out") if reliable(line) else "noise"
        print(f"| {line['model']} | {line['precision']} | {line['n_free']} | {line['kernels']} "
              f"| {role} "
              f"| {per_leapfrog(line) * 1e6:.1f} | {now * 1e6:.1f} "
              f"| {now / per_leapfrog(line):.2f} |")
    fitted = [(line, p) for line, p in data if line["model"] in fit_names and reliable(line)]
    held = [(line, p) for line, p in data if line["model"] not in fit_names and reliable(line)]

    def errors(runtime, rows):
        return log_errors(runtime, rows, machine)

    rms, runtime = grid_fit(fitted, machine)
    print(f"\nfitted on {len(fitted)} lines: bandwidth_factor={runtime.bandwidth_factor}, "
          f"flops_factor={runtime.flops_factor}, "
          f"matvec_bandwidth_factor={runtime.matvec_bandwidth_factor} (threaded), "
          f"per_gradient_seconds={runtime.per_gradient_seconds}, "
          f"per_dimension_seconds={runtime.per_dimension_seconds}")
    print(f"rms log error, fitted lines: {rms:.3f} (now {_rms(errors(current, fitted)):.3f})")
    if held:
        print(f"rms log error, held-out lines: {_rms(errors(runtime, held)):.3f} "
              f"(now {_rms(errors(current, held)):.3f})")
        for (line, p), new, now in zip(held, errors(runtime, held), errors(current, held)):
            print(f"  {line['model']} {line['precision']}: fitted {math.exp(new):.2f}x, "
                  f"now {math.exp(now):.2f}x")
    if fixed_from:
        fixed_fit(fixed_from, {"now": current, "fitted": runtime}, fit_names, machine)


def precision_pairs(paths: list[str]) -> list[tuple[dict, dict]]:
    """(float64 line, float32 line) of each model timed in both precisions whose two leapfrogs
    stand out of the noise (:func:`reliable`); a model's last pair where it was timed twice."""
    lines = _lines(paths)
    by_model: dict[str, dict[str, dict]] = {}
    for line in lines:
        if reliable(line) and per_leapfrog(line) > 0:
            by_model.setdefault(line["model"], {})[line["precision"]] = line
    return [(got["float64"], got["float32"]) for got in by_model.values()
            if "float64" in got and "float32" in got]


def float32_fit(paths: list[str], fit_names: set[str]) -> tuple[float, float]:
    """Fit ``JAX_CPU_SAMPLER``'s float32 factors to the timed float64/float32 ratio of each
    model's leapfrog: the ratio, not the float32 leapfrog, so the float64 leapfrog's own error
    (its bandwidth, driver and flops factors) stays out of the fit. Prints each model's timed
    and modelled ratios and the grid's best ``(float32_flops_factor,
    float32_transcendental_factor)`` on the models of ``fit_names``, with the held-out models'
    errors under it and under the current factors. Returns the best factors."""
    import itertools
    from dataclasses import replace

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    machine = machine_figures()
    pairs = [(f64, f32, profile_model(_factory(f64["model"])()))
             for f64, f32 in precision_pairs(paths)]
    current = costmodel.JAX_CPU_SAMPLER

    def ratio(runtime, profile) -> float:
        return (costmodel.cpu_gradient_seconds(profile, machine, "float64", runtime, 2).value
                / costmodel.cpu_gradient_seconds(profile, machine, "float32", runtime, 2).value)

    def errors(runtime, rows) -> list[float]:
        return [math.log(ratio(runtime, p) / (per_leapfrog(f64) / per_leapfrog(f32)))
                for f64, f32, p in rows]

    fitted = [row for row in pairs if row[0]["model"] in fit_names]
    held = [row for row in pairs if row[0]["model"] not in fit_names]
    grid = []
    for flops, transcendental in itertools.product(
            (0.8, 1.0, 1.2, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0),
            (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)):
        runtime = replace(current, float32_flops_factor=flops,
                          float32_transcendental_factor=transcendental)
        grid.append((_rms(errors(runtime, fitted)), flops, transcendental, runtime))
    grid.sort(key=lambda g: g[0])
    rms, runtime = grid[0][0], grid[0][3]
    print("| model | role | timed float64 (µs) | timed float32 (µs) | timed ratio "
          "| modelled ratio now | fitted |")
    print("|---|---|---|---|---|---|---|")
    for f64, f32, p in pairs:
        role = "fitted" if f64["model"] in fit_names else "held out"
        print(f"| {f64['model']} | {role} | {per_leapfrog(f64) * 1e6:.1f} "
              f"| {per_leapfrog(f32) * 1e6:.1f} | {per_leapfrog(f64) / per_leapfrog(f32):.2f} "
              f"| {ratio(current, p):.2f} | {ratio(runtime, p):.2f} |")
    print(f"\nfitted on {len(fitted)} models: float32_flops_factor="
          f"{runtime.float32_flops_factor}, float32_transcendental_factor="
          f"{runtime.float32_transcendental_factor}")
    print(f"rms log error of the ratio, fitted models: {rms:.3f} "
          f"(now {_rms(errors(current, fitted)):.3f})")
    if held:
        print(f"rms log error of the ratio, held-out models: {_rms(errors(runtime, held)):.3f} "
              f"(now {_rms(errors(current, held)):.3f})")
    print("\nthe grid's eight best on the fitted models (fitted / held out):")
    for fit_rms, flops, transcendental, candidate in grid[:8]:
        print(f"  arithmetic {flops}, transcendental {transcendental}: {fit_rms:.3f} / "
              f"{_rms(errors(candidate, held)) if held else math.nan:.3f}")
    if held:
        both = min(grid, key=lambda g: _rms(errors(g[3], pairs)))
        print(f"the grid's best on every model: arithmetic {both[1]}, transcendental {both[2]}: "
              f"{both[0]:.3f} / {_rms(errors(both[3], held)):.3f} "
              f"(all {_rms(errors(both[3], pairs)):.3f}, now {_rms(errors(current, pairs)):.3f})")
    return runtime.float32_flops_factor, runtime.float32_transcendental_factor


def fixed_fit(paths: list[str], runtimes: dict, fit_names: set[str], machine) -> None:
    """The fixed seconds ``a + b kernels`` that go with each runtime's leapfrog: least squares
    over the shorter runs of ``bench/fit_numpyro_tuning.py`` lines (whole ``MCMC.run`` walls,
    every leapfrog counted) of the fitted models, less their leapfrogs at the runtime's price."""
    from pymc_accel import costmodel
    from pymc_accel.profile import profile_model

    lines = _lines(paths)
    lines = [line for line in lines if "error" not in line and line["model"] in fit_names]
    profiles = {line["model"]: profile_model(_factory(line["model"])()) for line in lines}
    for label, runtime in runtimes.items():
        points = []
        for line in lines:
            short = line["runs"][0]
            leapfrog = costmodel.cpu_gradient_seconds(profiles[line["model"]], machine,
                                                      line["precision"], runtime, 2).value
            leapfrogs = short["tuning_leapfrogs"] + short["sampling_leapfrogs"]
            points.append((line["kernels"], short["wall"] - leapfrogs * leapfrog))
        n = len(points)
        mx, my = sum(k for k, _ in points) / n, sum(f for _, f in points) / n
        b = (sum((k - mx) * (f - my) for k, f in points)
             / max(1e-12, sum((k - mx) ** 2 for k, _ in points)))
        a = my - b * mx
        spread = [f / (a + b * k) for k, f in points]
        print(f"fixed with the {label} leapfrog, over {n} runs: {a:.2f} s + {b * 1e3:.2f} ms per "
              f"kernel; each run's fixed share / the fit: {min(spread):.2f}-{max(spread):.2f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="")
    p.add_argument("--precisions", default="float64")
    p.add_argument("--lengths", default="100,1000", help="two post-tuning lengths")
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--fit", nargs="*", help="result files to fit instead of measuring")
    p.add_argument("--logp", choices=["run", "pymc"], default="run",
                   help="time the log density pymc-accel's CPU runs jaxify, or PyMC's own")
    p.add_argument("--blas-cores", default="auto",
                   help="BLAS threads of both chains together, as pm.sample's blas_cores: "
                        "'auto' (the run's: a chain's share of the cores) or 'none' (BLAS "
                        "left at a thread per core, as runs were until 2026-11-29)")
    p.add_argument("--driver", default="",
                   help="comma-separated dimensions: time NumPyro's driver on standard normals")
    p.add_argument("--fixed-from", nargs="*", default=None,
                   help="bench/fit_numpyro_tuning.py lines to refit the fixed seconds on")
    p.add_argument("--float32", action="store_true",
                   help="with --fit: fit the float32 factors to the float64/float32 ratios")
    p.add_argument("--fit-models", default="",
                   help="comma-separated models to fit on (default: zoo.fit_models())")
    args = p.parse_args(argv)
    if args.fit:
        import zoo

        names = (set(filter(None, args.fit_models.split(","))) if args.fit_models
                 else set(zoo.fit_models()) | set(zoo.leapfrog_shapes()))
        if args.float32:
            float32_fit(args.fit, names)
        else:
            fit(args.fit, names, args.fixed_from)
        return
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    from pymc_accel.machine import machine_figures

    machine = machine_figures()
    short, long = (int(n) for n in args.lengths.split(","))
    blas_cores = {"auto": "auto", "none": None}.get(args.blas_cores.lower())
    if blas_cores is None and args.blas_cores.lower() != "none":
        blas_cores = int(args.blas_cores)
    if args.driver:
        dims = [int(d) for d in args.driver.split(",")]
        print(json.dumps(measure_driver(dims, (short, long), args.warmup, machine,
                                        args.repeats)), flush=True)
        return
    for name in filter(None, args.models.split(",")):
        for precision in args.precisions.split(","):
            try:
                line = measure(name, precision, (short, long), args.warmup, machine,
                               args.repeats, args.logp, blas_cores)
            except Exception as exc:  # a model NumPyro cannot run: say so, go on
                line = {"model": name, "precision": precision, "error": repr(exc)[:300]}
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
