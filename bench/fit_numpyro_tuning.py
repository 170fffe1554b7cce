"""NumPyro's NUTS on the CPU with every leapfrog counted, tuning included: the data for its
fixed cost, its early tuning's extra leapfrogs and its cost per leapfrog
(``pymc_accel.costmodel.JAX_CPU_SAMPLER``, ``stan_tuning_extra_gradients``).

PyMC's ``sample_jax_nuts`` keeps no statistics of NumPyro's tuning draws, so
``bench/fit_numpyro_loop.py`` counted tuning at the sampling phase's leapfrogs per draw. Its
early tuning runs deep trees (on the 612-parameter seed model, 5,905 leapfrogs a chain beyond
that rate in 200 tuning draws), which no term priced. Here NumPyro runs as
``sample_jax_nuts`` runs it (PyMC's jaxified log density, ``MCMC`` with two chains on two XLA
CPU devices, ``chain_method="parallel"``), with ``MCMC.warmup(collect_warmup=True)`` keeping the
tuning draws' ``num_steps``.

Each model and precision gets one JSON line:

- ``in_loop_gradient_seconds``: the gradient inside one jitted ``fori_loop`` of 500 steps;
- ``runs``: for ``n`` tune + ``n`` draws at each length, the fastest of ``--repeats`` walls of
  one ``MCMC.run`` (as ``sample_jax_nuts`` runs it: tuning and sampling compiled together, and
  compiled again each run, whose time varies by a second), and the tuning and sampling
  leapfrogs per chain of a second run of the same length whose tuning ran on its own
  (``MCMC.warmup``), which compiles twice and so is not timed;
- ``modelled_per_leapfrog_seconds``: what ``costmodel.JAX_CPU_SAMPLER`` gives for a leapfrog of
  two chains side by side; the profile's free dimension and kernels.

``--fit FILES`` reads such lines and prints each model's cost per leapfrog (the longer run less
the shorter over the leapfrogs between them), early tuning's extra leapfrogs (the shorter run's
tuning leapfrogs less its tuning draws at the longer run's sampling rate) and fixed cost (the
shorter run less its leapfrogs); then a grid fit of the leapfrog's factors to the lines whose
leapfrogs stand out of the compile's noise (``reliable``), the fixed cost ``a + b kernels`` and
the early tuning's ``c ln(d / 10)``. ``--fit-spread FILES`` prints each model's early tuning
against its scale spread (:mod:`pymc_accel.curvature`) and the factor of ``c x spread`` with the
least rms log error of a run's leapfrogs, against the dimension's law.

    JAX_PLATFORMS=cpu python bench/fit_numpyro_tuning.py --models glm_linear,seed_mid \\
        > docs/results/fit-numpyro-tuning-cpu.jsonl
    python bench/fit_numpyro_tuning.py --fit docs/results/fit-numpyro-tuning-cpu.jsonl
    python bench/fit_numpyro_tuning.py --fit-spread docs/results/fit-numpyro-tuning-cpu.jsonl
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
    """A model any fitting script can name (``zoo.named()``: the quick zoo, its shapes, a
    held-out model, or a leapfrog, dense, value-variable, program-size or series-function
    shape)."""
    import zoo

    return zoo.named()[name]


def numpyro_inputs(model, precision: str, layout: str = "flat", logp_source: str = "run"):
    """The jaxified log density of ``model`` (+log p: NumPyro's potential is its negative)
    and its initial point in ``precision``, as a list of arrays: one flat vector (``layout``
    "flat", as pymc-accel's JAX backends run it since 2026-11-26,
    ``pymc_accel.backends.flat_position``) or one array per value variable ("per_variable",
    as PyMC's ``sample_jax_nuts`` hands them over); call it inside
    ``jax_precision(precision)``. Shared with ``fit_numpyro_leapfrog.py``.

    ``logp_source`` "run" (the default since 2026-11-28) is the log density pymc-accel's CPU
    runs jaxify (``pymc_accel.jaxified_logp``: a tall data matrix's products transposed,
    ``pymc_accel.rewrites.tall_products``); "pymc" is PyMC's own ``get_jaxified_logp``, what
    every fit before then timed.

    PyMC's ``negative_logp`` flag reads the other way from its name: the default (``True``)
    gives +log p, ``False`` gives -log p (``sample_jax_nuts`` passes that to NumPyro as its
    potential). Until 2026-11-25 this took ``False``, so the fits' NUTS, whose potential is
    the negative of what this returns, sampled 1/p: their trees, tuning and leapfrog counts
    were of the wrong target (docs/benchmarks.md)."""
    import jax.numpy as jnp

    if logp_source == "pymc":
        from pymc.sampling.jax import get_jaxified_logp

        logp = get_jaxified_logp(model)
    else:
        from pymc_accel import jaxified_logp

        logp = jaxified_logp(model, device="cpu")
    start = model.initial_point()
    x0 = [jnp.asarray(start[v.name], dtype=precision) for v in model.value_vars]
    if layout == "per_variable":
        return logp, x0
    from pymc_accel.backends.flat_position import flatten_points

    flat, leaves = flatten_points(x0, 1, precision)  # as the backends flatten it
    return (lambda xs: logp(leaves.unravel(xs[0]))), [jnp.asarray(flat)]


def measure(name: str, precision: str, lengths: tuple[int, ...], machine,
            repeats: int = 3, layout: str = "flat") -> dict:
    """One JSON line for a model in a precision."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from numpyro.infer import MCMC, NUTS

    from pymc_accel import costmodel
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.profile import profile_model

    model = _factory(name)()
    profile = profile_model(model)
    chains = 2
    with jax_precision(precision):
        logp, x0 = numpyro_inputs(model, precision, layout)

        @jax.jit
        def loop(xs):
            def body(_, c):
                g = jax.grad(lambda q: -logp(q))(c)
                return [ci - 1e-6 * gi for ci, gi in zip(c, g)]
            return jax.lax.fori_loop(0, 500, body, xs)

        jax.block_until_ready(loop(x0))
        in_loop = []
        for _ in range(5):
            t = time.perf_counter()
            jax.block_until_ready(loop(x0))
            in_loop.append((time.perf_counter() - t) / 500)

        init = [jnp.stack([a] * chains) for a in x0]
        kernel = NUTS(potential_fn=lambda xs: -logp(xs), target_accept_prob=0.8)
        runs = []
        for n in lengths:
            walls = []
            for _ in range(repeats):
                # as sample_jax_nuts runs it: one MCMC.run, tuning and sampling in one compile
                mcmc = MCMC(kernel, num_warmup=n, num_samples=n, num_chains=chains,
                            chain_method="parallel", progress_bar=False)
                t = time.perf_counter()
                mcmc.run(jax.random.PRNGKey(1), init_params=init)
                jax.block_until_ready(mcmc.get_samples())
                walls.append(time.perf_counter() - t)
            # the same length again, tuning run on its own to keep its draws' statistics
            mcmc = MCMC(kernel, num_warmup=n, num_samples=n, num_chains=chains,
                        chain_method="parallel", progress_bar=False)
            mcmc.warmup(jax.random.PRNGKey(1), init_params=init, extra_fields=("num_steps",),
                        collect_warmup=True)
            tuning = float(np.asarray(mcmc.get_extra_fields()["num_steps"]).sum()) / chains
            mcmc.run(jax.random.PRNGKey(2), extra_fields=("num_steps",))
            sampling = float(np.asarray(mcmc.get_extra_fields()["num_steps"]).sum()) / chains
            runs.append({"n": n, "wall": min(walls), "walls": walls, "tuning_leapfrogs": tuning,
                         "sampling_leapfrogs": sampling})
    modelled = costmodel.cpu_gradient_seconds(profile, machine, precision,
                                              costmodel.JAX_CPU_SAMPLER, chains).value
    return {"model": name, "precision": precision, "layout": layout, "n_free": profile.n_free,
            "kernels": profile.census.kernels, "in_loop_gradient_seconds": min(in_loop),
            "runs": runs, "modelled_per_leapfrog_seconds": modelled,
            "matvec_bytes": costmodel.memory_bound_dense_bytes(profile, precision)}


def parts(line: dict) -> dict:
    """Cost per leapfrog, early tuning's extra leapfrogs and fixed seconds of one line."""
    short, long = line["runs"][0], line["runs"][-1]
    leapfrogs = [r["tuning_leapfrogs"] + r["sampling_leapfrogs"] for r in (short, long)]
    per_leapfrog = (long["wall"] - short["wall"]) / (leapfrogs[1] - leapfrogs[0])
    rate = long["sampling_leapfrogs"] / long["n"]
    extra = short["tuning_leapfrogs"] - short["n"] * rate
    fixed = short["wall"] - leapfrogs[0] * per_leapfrog
    return {"per_leapfrog": per_leapfrog, "rate": rate, "extra": extra, "fixed": fixed}


def reliable(line: dict) -> bool:
    """Whether a line's cost per leapfrog stands out of the compile's noise: the longer run's
    leapfrogs took at least a second more than the shorter's."""
    short, long = line["runs"][0], line["runs"][-1]
    return "error" not in line and long["wall"] - short["wall"] >= 1.0


def fit_leapfrog(lines: list[dict], machine) -> tuple[dict, float]:
    """Grid search of ``JAX_CPU_SAMPLER``'s bandwidth, flops and matrix-vector factors and its
    per-leapfrog seconds for the least rms log error of the modelled leapfrog (two chains side
    by side) against the reliable lines' measured ones."""
    import itertools
    from dataclasses import replace

    from pymc_accel import costmodel
    from pymc_accel.profile import profile_model

    data = [(profile_model(_factory(line["model"])()), line["precision"],
             parts(line)["per_leapfrog"]) for line in lines if reliable(line)]
    best = (math.inf, {})
    grid = itertools.product((0.3, 0.45, 0.6, 0.8, 1.0, 1.5, 2.0), (1, 2, 4, 8, 16),
                             (0.0, 1.0, 1.5, 2.0, 3.0, 4.0), (5e-6, 10e-6, 20e-6, 40e-6),
                             (False, True))
    for bandwidth, flops, matvec, per_gradient, gain in grid:
        runtime = replace(costmodel.JAX_CPU_SAMPLER, bandwidth_factor=bandwidth,
                          flops_factor=flops, matvec_bandwidth_factor=matvec,
                          matvec_threaded=True, per_gradient_seconds=per_gradient,
                          float32_gain=gain)
        errors = [math.log(costmodel.cpu_gradient_seconds(p, machine, precision, runtime, 2).value
                           / seconds) for p, precision, seconds in data if seconds > 0]
        rms = math.sqrt(sum(e * e for e in errors) / len(errors))
        if rms < best[0]:
            best = (rms, {"bandwidth_factor": bandwidth, "flops_factor": flops,
                          "matvec_bandwidth_factor": matvec, "per_gradient_seconds": per_gradient,
                          "float32_gain": gain})
    return best[1], best[0]


def fit(paths: list[str]) -> None:
    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures

    lines = [json.loads(x) for p in paths for x in Path(p).read_text().splitlines() if x.strip()]
    lines = [line for line in lines if "error" not in line]
    print("| model | precision | d | kernels | per leapfrog (µs) | modelled (µs) | gradient in a "
          "loop (µs) | leapfrogs per draw | early tuning's extra leapfrogs | fixed (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for line in lines:
        q = parts(line)
        flag = "" if reliable(line) else " (noise)"
        print(f"| {line['model']} | {line['precision']} | {line['n_free']} | {line['kernels']} "
              f"| {q['per_leapfrog'] * 1e6:.0f}{flag} "
              f"| {line['modelled_per_leapfrog_seconds'] * 1e6:.0f} "
              f"| {line['in_loop_gradient_seconds'] * 1e6:.0f} | {q['rate']:.1f} "
              f"| {q['extra']:.0f} | {q['fixed']:.2f} |")
    machine = machine_figures()
    factors, rms = fit_leapfrog(lines, machine)
    base = [math.log(line["modelled_per_leapfrog_seconds"] / parts(line)["per_leapfrog"])
            for line in lines if reliable(line) and parts(line)["per_leapfrog"] > 0]
    print(f"\nleapfrog: {factors}, rms log error {rms:.3f} "
          f"(JAX_CPU_SAMPLER as it is: {math.sqrt(sum(e * e for e in base) / len(base)):.3f})")
    # fixed seconds a + b * kernels, least squares; with every run's leapfrogs priced by the
    # refitted leapfrog, not the noisy per-line one
    from dataclasses import replace

    from pymc_accel.profile import profile_model

    runtime = replace(costmodel.JAX_CPU_SAMPLER, matvec_threaded=True, **factors)
    points = []
    for line in lines:
        short = line["runs"][0]
        profile = profile_model(_factory(line["model"])())
        leapfrog = costmodel.cpu_gradient_seconds(profile, machine, line["precision"],
                                                  runtime, 2).value
        leapfrogs = short["tuning_leapfrogs"] + short["sampling_leapfrogs"]
        points.append((line["kernels"], short["wall"] - leapfrogs * leapfrog))
    n = len(points)
    mx, my = sum(k for k, _ in points) / n, sum(f for _, f in points) / n
    b = (sum((k - mx) * (f - my) for k, f in points)
         / max(1e-12, sum((k - mx) ** 2 for k, _ in points)))
    print(f"fixed: {my - b * mx:.2f} s + {b * 1e3:.2f} ms per kernel")
    logs = [(math.log(max(1.0, line["n_free"] / 10)), parts(line)["extra"]) for line in lines]
    sxx = sum(x * x for x, _ in logs)
    if sxx:
        slope = sum(x * y for x, y in logs) / sxx
        print(f"early tuning's extra leapfrogs, least squares through zero: {slope:.0f} ln(d/10); "
              f"median at d <= 10: "
              f"{sorted(y for x, y in logs if x == 0)[len([1 for x, _ in logs if x == 0]) // 2] if any(x == 0 for x, _ in logs) else 'none'}")


def model_spread(name: str):
    """The scale spread of a model at its initial point, as the selector evaluates it
    (:func:`pymc_accel.curvature.scale_spread`)."""
    from pymc_accel.curvature import scale_spread
    from pymc_accel.graph_building import initial_point
    from pymc_accel.profile import profile_and_logp

    model = _factory(name)()
    _, graph = profile_and_logp(model)
    return scale_spread(graph, initial_point(model))


def fit_spread(paths: list[str]) -> None:
    """Each model's early tuning's extra leapfrogs against its scale spread, and the factor
    ``c`` of ``extra = c * spread`` (``costmodel.STAN_TUNING_EXTRA_PER_SPREAD``) that gives the
    least rms log error of a run's leapfrogs (tuning and sampling, every line's runs, the
    funnel's centred hierarchy left out) against the dimension's law
    (``STAN_TUNING_EXTRA_PER_LOG_DIMENSION``)."""
    from pymc_accel import costmodel

    lines = [json.loads(x) for p in paths for x in Path(p).read_text().splitlines() if x.strip()]
    lines = [line for line in lines if "error" not in line and line["model"] != "funnel"]
    print("| model | d | scale spread | early tuning's extra leapfrogs (each length) | "
          "by the spread | by the dimension |")
    print("|---|---|---|---|---|---|")
    runs, by_model = [], {}
    for line in lines:
        name = line["model"]
        if name not in by_model:
            by_model[name] = model_spread(name)
        spread = by_model[name].value if by_model[name] is not None else float("nan")
        rate = line["runs"][-1]["sampling_leapfrogs"] / line["runs"][-1]["n"]
        extras = [r["tuning_leapfrogs"] - r["n"] * rate for r in line["runs"]]
        dim = costmodel.STAN_TUNING_EXTRA_PER_LOG_DIMENSION * math.log(max(1, line["n_free"] / 10))
        print(f"| {name} | {line['n_free']} | {spread:.1f} | "
              f"{', '.join(f'{e:.0f}' for e in extras)} | "
              f"{costmodel.STAN_TUNING_EXTRA_PER_SPREAD * spread:.0f} | {dim:.0f} |")
        for r in line["runs"]:
            runs.append((spread, line["n_free"], 2 * r["n"] * rate,
                         r["tuning_leapfrogs"] + r["sampling_leapfrogs"]))

    def rms(extra) -> float:
        errors = [math.log((base + extra(s, d)) / total) for s, d, base, total in runs
                  if math.isfinite(s)]
        return math.sqrt(sum(e * e for e in errors) / len(errors))

    best = min(range(50, 2001, 25), key=lambda c: rms(lambda s, d: c * s))
    dim = costmodel.STAN_TUNING_EXTRA_PER_LOG_DIMENSION
    print(f"\nrms log error of a run's leapfrogs: {best} x spread "
          f"{rms(lambda s, d: best * s):.3f}; "
          f"{costmodel.STAN_TUNING_EXTRA_PER_SPREAD:.0f} x spread (the cost model's) "
          f"{rms(lambda s, d: costmodel.STAN_TUNING_EXTRA_PER_SPREAD * s):.3f}; "
          f"{dim:.0f} ln(d/10) {rms(lambda s, d: dim * math.log(max(1, d / 10))):.3f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="")
    p.add_argument("--precisions", default="float64")
    p.add_argument("--lengths", default="200,2000")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--layout", choices=["flat", "per_variable"], default="flat",
                   help="the sampler's position: one vector, or one array per value variable")
    p.add_argument("--fit", nargs="*", help="result files to fit instead of measuring")
    p.add_argument("--fit-spread", nargs="*",
                   help="result files whose early tuning to fit on the models' scale spread")
    args = p.parse_args(argv)
    if args.fit:
        fit(args.fit)
        return
    if args.fit_spread:
        fit_spread(args.fit_spread)
        return
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    from pymc_accel.machine import machine_figures

    machine = machine_figures()
    lengths = tuple(int(n) for n in args.lengths.split(","))
    for name in filter(None, args.models.split(",")):
        for precision in args.precisions.split(","):
            try:
                line = measure(name, precision, lengths, machine, args.repeats, args.layout)
            except Exception as exc:  # a model NumPyro cannot run: say so, go on
                line = {"model": name, "precision": precision, "error": repr(exc)[:300]}
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
