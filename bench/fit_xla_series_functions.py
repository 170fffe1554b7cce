"""What the functions JAX computes by loops run to convergence (``census.SERIES_FUNCTIONS``:
the incomplete gamma function and its derivative in the shape) cost a JAX sampler's leapfrog
on the CPU: the figures of ``costmodel.XLA_SERIES_EXP_EQUIVALENTS``, and a check of them on
NumPyro's leapfrog.

``--loops`` times JAX's ``igamma`` and ``igamma_grad_a`` on 4,000 elements at shapes 0.5 to 30
and ranges of ``x / a`` that take the power series, the continued fraction or both, each with
the shape one broadcast scalar (as a PyMC model's shape parameter) and an array of its own
(one JSON line a timing, with the iterations each loop takes as ``pymc_accel.xla_series``
counts them), and fits per function, by least squares, a call's seconds an element on an
intercept, an intercept for an own shape and each loop's iterations, in evaluations of the
machine's calibrated ``exp`` (10 flops at its ``cpu_flops``). ``--loops-from FILE`` fits saved
lines.

Files of ``bench/fit_numpyro_leapfrog.py`` lines (NumPyro's leapfrog timed in one compiled loop
after tuning, two chains side by side) of ``zoo.series_function_shapes()`` and the held-out
models with such functions are compared with the cost model: on the census of PyTensor's
gradient with the loops unpriced (as until 2026-12-01), on the census of the gradient JAX
takes (``ModelProfile.xla_census``) with them unpriced, and as the model stands.

    JAX_PLATFORMS=cpu python bench/fit_xla_series_functions.py --loops \
        > docs/results/fit-xla-series-loops-cpu-2026-12-01.jsonl
    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/fit_numpyro_leapfrog.py \
        --models copula_150,copula_2000,censored_gamma_300,censored_gamma_2000,\
censored_gamma_fixed_2000,censored_t_2000,copula_4,truncated_gamma_6 --lengths 100,600 \
        > docs/results/fit-numpyro-leapfrog-cpu-2026-12-01-series.jsonl
    PYMC_ACCEL_PROFILE_CACHE=off JAX_PLATFORMS=cpu python bench/fit_xla_series_functions.py \
        docs/results/fit-numpyro-leapfrog-cpu-2026-12-01-series.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

def modelled(profile, machine, precision: str, exp_table: dict[str, float]) -> float:
    """NumPyro's modelled leapfrog (two chains side by side) under ``exp_table``."""
    from pymc_accel import costmodel

    saved = dict(costmodel.XLA_SERIES_EXP_EQUIVALENTS)
    costmodel.XLA_SERIES_EXP_EQUIVALENTS.clear()
    costmodel.XLA_SERIES_EXP_EQUIVALENTS.update(exp_table)
    try:
        return costmodel.cpu_gradient_seconds(profile, machine, precision,
                                              costmodel.JAX_CPU_SAMPLER, 2).value
    finally:
        costmodel.XLA_SERIES_EXP_EQUIVALENTS.clear()
        costmodel.XLA_SERIES_EXP_EQUIVALENTS.update(saved)


def compare(paths: list[str]) -> None:
    """Print each line's timed NumPyro leapfrog beside the model's: on PyTensor's gradient
    census with the loops unpriced (as until 2026-12-01), on the census of JAX's gradient
    (``ModelProfile.xla_census``) with them unpriced, and as the cost model stands; with the
    rms log error of each."""
    from dataclasses import replace

    from fit_numpyro_leapfrog import _factory, _lines, per_leapfrog, reliable

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    machine = machine_figures()
    now = dict(costmodel.XLA_SERIES_EXP_EQUIVALENTS)
    print("| model | elements | loop iterations at the start (value; derivative) | timed (µs) "
          "| PyTensor's gradient, loops unpriced | JAX's gradient, loops unpriced | now |")
    print("|---|---|---|---|---|---|---|")
    errors: dict[str, list[float]] = {"before": [], "census": [], "now": []}
    for line in _lines(paths):
        if "error" in line or not reliable(line):
            print(f"| {line['model']} | left out: {line.get('error', 'within the runs noise')} |")
            continue
        profile = profile_model(_factory(line["model"])())
        precision, timed = line["precision"], per_leapfrog(line)
        figures = {
            "before": modelled(replace(profile, xla_census=None), machine, precision, {}),
            "census": modelled(profile, machine, precision, {}),
            "now": modelled(profile, machine, precision, now),
        }
        for name, value in figures.items():
            errors[name].append(math.log(value / timed))
        work = profile.census.series_evaluations
        elements = sum(work.get(k, 0.0) for k in ("GammaInc", "GammaIncC", "BetaInc"))
        per = {k: work.get(k, 0.0) / elements if elements else 0.0 for k in work}
        loops = (f"{per.get('igamma series', 0):.0f} + {per.get('igamma fraction', 0):.0f}; "
                 f"{per.get('igamma_grad_a series', 0):.0f} + "
                 f"{per.get('igamma_grad_a fraction', 0):.0f}")
        shown = " | ".join(f"{v * 1e6:.1f} ({v / timed:.2f}x)" for v in figures.values())
        print(f"| {line['model']} | {elements:.0f} | {loops} | {timed * 1e6:.1f} | {shown} |")
    print("\nrms log error: " + ", ".join(
        f"{name} {math.sqrt(sum(e * e for e in v) / len(v)):.3f}" for name, v in errors.items()
        if v))


#: Shapes and ranges of ``x / a`` the loops are timed at: each range takes the series, the
#: continued fraction or both, for a few dozen iterations or fewer.
LOOP_SHAPES = (0.5, 2.0, 8.0, 30.0)
LOOP_RANGES = ((0.05, 0.5), (0.3, 0.95), (0.8, 1.2), (1.05, 2.0), (2.0, 6.0), (0.1, 6.0))


def time_loops(elements: int = 4000, repeats: int = 7, calls: int = 50) -> list[dict]:
    """JAX's ``igamma`` and ``igamma_grad_a`` on ``elements`` of each shape of
    :data:`LOOP_SHAPES` with ``x`` drawn over each range of :data:`LOOP_RANGES`, in float64
    and float32, the shape one scalar broadcast in the program (``"shared"``, as a PyMC model's
    shape parameter) or an array of its own (``"own"``): seconds a call (best of ``repeats`` x
    ``calls``, less an ``a + x`` call's), with the iterations each loop takes in that
    precision (``pymc_accel.xla_series``) and the machine's calibrated ``exp`` in it."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    from pymc_accel.census import TRANSCENDENTAL_FLOPS
    from pymc_accel.machine import machine_figures
    from pymc_accel.xla_series import igamma_loop_iterations

    cpu_flops = machine_figures().cpu_flops

    def best(fn, *args) -> float:
        fn = jax.jit(fn)
        jax.block_until_ready(fn(*args))
        fastest = math.inf
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                out = fn(*args)
            jax.block_until_ready(out)
            fastest = min(fastest, (time.perf_counter() - start) / calls)
        return fastest

    rng = np.random.default_rng(0)
    lines = []
    for shape in LOOP_SHAPES:
        for low, high in LOOP_RANGES:
            drawn = shape * rng.uniform(low, high, elements)
            for dtype in ("float64", "float32"):
                a = np.full(elements, shape, dtype=dtype)
                x = drawn.astype(dtype)
                base = best(lambda a, x: a + x, a, x)
                exp_seconds = TRANSCENDENTAL_FLOPS / cpu_flops[dtype]
                for loop, fn, derivative in (("igamma", jax.lax.igamma, False),
                                             ("igamma_grad_a", jax.lax.igamma_grad_a, True)):
                    series, fraction = igamma_loop_iterations(a, x, derivative=derivative,
                                                              dtype=dtype)
                    for kind in ("shared", "own"):
                        if kind == "own":
                            seconds = best(fn, a, x)
                        else:
                            seconds = best(lambda s, x: fn(jnp.broadcast_to(s, x.shape), x),
                                           a[:1].reshape(()), x)
                        line = {"loop": loop, "dtype": dtype, "shape": shape,
                                "shape_is": kind, "x_over_shape": [low, high],
                                "elements": elements, "seconds": seconds - base,
                                "series": series, "fraction": fraction,
                                "exp_seconds": exp_seconds}
                        print(json.dumps(line), flush=True)
                        lines.append(line)
    return lines


def fit_loops(lines: list[dict]) -> dict[str, dict[str, float]]:
    """Least squares, per precision and loop, of a call's seconds an element on an intercept,
    an intercept for a shape of the element's own, and the two loops' iterations, in exps an
    element (an element-iteration for the loops) of that precision: the figures of
    ``costmodel.XLA_SERIES_EXP_EQUIVALENTS``."""
    import numpy as np

    fitted: dict[str, dict[str, float]] = {}
    names = ("element", "own shape", "series", "fraction")
    for dtype in ("float64", "float32"):
        for loop in ("igamma", "igamma_grad_a"):
            rows = [line for line in lines
                    if line["loop"] == loop and line.get("dtype", "float64") == dtype]
            if not rows:
                continue
            a = np.array([[1.0, float(line["shape_is"] == "own"), line["series"],
                           line["fraction"]] for line in rows])
            b = np.array([line["seconds"] / line["elements"] / line["exp_seconds"]
                          for line in rows])
            solution, *_ = np.linalg.lstsq(a, b, rcond=None)
            fitted.setdefault(dtype, {}).update(
                {f"{loop} {name}": float(v) for name, v in zip(names, solution)})
            worst = max(abs(math.log(p / t)) for p, t in zip(a @ solution, b))
            ns = rows[0]["exp_seconds"] * 1e9
            print(f"{loop} in {dtype}: " + ", ".join(
                f"{name} {v:.2f} exps ({v * ns:.1f} ns)" for name, v in zip(names, solution))
                + f"; worst error {math.exp(worst):.2f}x over {len(rows)} timings")
    return fitted


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", help="bench/fit_numpyro_leapfrog.py result files")
    p.add_argument("--loops", action="store_true",
                   help="time JAX's igamma loops (one JSON line a timing) and fit them")
    p.add_argument("--loops-from", default="", help="fit the loops on these saved lines")
    args = p.parse_args(argv)
    if args.loops or args.loops_from:
        lines = (time_loops() if args.loops else
                 [json.loads(x) for x in Path(args.loops_from).read_text().splitlines()
                  if x.startswith("{")])
        fit_loops(lines)
    if args.files:
        compare(args.files)


if __name__ == "__main__":
    main()
