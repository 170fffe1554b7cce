"""Which elementwise rate should the machine calibration time: NumPy's ``exp`` or a compiled
loop's? Prints both, XLA's, and the zoo's gradients modelled from each against timed ones.

The runtimes' factors (``pymc_accel.costmodel``) were fitted against the calibrated rate on the
2-core fit machine, where NumPy's float64 ``exp`` was the C library's scalar one (1.9 GFLOP/s,
5.3 ns an element), as a numba loop's is. On a CPU with AVX-512 NumPy runs its own vectorised
``exp`` and the two part. This script times, on this machine:

1. ``exp`` over a million elements: NumPy's, a numba loop's (``machine.compiled_exp``) and
   XLA's (jitted; it spreads the array over every core, so per core is twice the time shown on
   two cores);
2. each model's numba logp-and-gradient (PyMC's ``logp_dlogp_function``, raveled inputs,
   trusted, the best of 7 x 200 calls), against the figure the cost model gives it from the
   NumPy-``exp`` rate and from the compiled loop's, and against the fit machine's timing of
   the same function (``docs/results/fit-gradients-cpu.jsonl``);
3. with ``--numpyro FILE`` (lines of ``bench/fit_numpyro_leapfrog.py``, run on this machine),
   NumPyro's leapfrog timed in one compiled loop, two chains side by side, against the same two
   figures and the fit machine's (``docs/results/fit-numpyro-leapfrog-cpu-2026-11-26.jsonl``).

    JAX_PLATFORMS=cpu python bench/fit_numpyro_leapfrog.py \\
        --models eight_schools,glm_linear,glm_poisson,seed_small,seed_mid,seed_large,pk_scan,gp_200 \\
        > docs/results/fit-numpyro-leapfrog-cpu-2026-11-27-avx512.jsonl
    JAX_PLATFORMS=cpu python bench/calibration_yardstick.py \\
        --numpyro docs/results/fit-numpyro-leapfrog-cpu-2026-11-27-avx512.jsonl

Nothing is sampled; about a minute.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("PYMC_ACCEL_HISTORY", "off")
RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
MODELS = "eight_schools,glm_linear,glm_poisson,seed_small,pk_scan,seed_mid,seed_large"


def _best(fn, repeats: int = 9) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def exp_rates() -> dict[str, dict[str, float]]:
    """Nanoseconds an element of ``exp`` over 2^20 elements: NumPy, numba loop, XLA."""
    import jax
    import jax.numpy as jnp

    from pymc_accel.machine import compiled_exp

    loop = compiled_exp()
    out: dict[str, dict[str, float]] = {}
    for precision in ("float64", "float32"):
        a = np.random.default_rng(0).random(1 << 20).astype(precision)
        res = np.empty_like(a)
        with jax.enable_x64(precision == "float64"):
            xa = jnp.asarray(a)
            xexp = jax.jit(jnp.exp)
            xla = _best(lambda: xexp(xa).block_until_ready())
        out[precision] = {"numpy": _best(lambda: np.exp(a, out=res)) / a.size * 1e9,
                          "numba loop": _best(lambda: loop(a, res)) / a.size * 1e9,
                          "xla (all cores)": xla / a.size * 1e9}
    return out


def numba_gradient_seconds(model) -> float:
    """Best of 7 x 200 calls of the model's numba logp-and-gradient, inputs trusted."""
    f = model.logp_dlogp_function(mode="NUMBA", ravel_inputs=True)
    f.set_extra_values({})
    f._pytensor_function.trust_input = True
    x = np.concatenate([np.ravel(v) for v in model.initial_point().values()]) + 0.1
    return _best(lambda: [f(x) for _ in range(200)], 7) / 200


def _fit_machine(path: Path, runtime: str, key: str) -> dict[str, float]:
    if not path.exists():
        return {}
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {d["model"]: d[key] for d in lines
            if d.get("runtime", runtime) == runtime and d.get("precision") == "float64"}


def _row(name, here, fit, numpy_figure, compiled_figure) -> str:
    fit_text = f"{fit * 1e6:.1f}" if fit else "–"
    return (f"| {name} | {here * 1e6:.1f} | {fit_text} | {numpy_figure * 1e6:.1f} "
            f"({here / numpy_figure:.2f}) | {compiled_figure * 1e6:.1f} "
            f"({here / compiled_figure:.2f}) |")


def _rms_log(pairs: list[tuple[float, float]]) -> float:
    return math.sqrt(sum(math.log(a / b) ** 2 for a, b in pairs) / len(pairs))


def _compare(title, timed, fit, runtime, chains, by_numpy, by_loop) -> None:
    """Print each ``(name, seconds timed here, profile)`` against the fit machine's timing and
    the cost model's figure for ``runtime`` from each yardstick, and their rms log errors."""
    from pymc_accel import costmodel

    print(f"\n{title}:\n\n| model | timed here (µs) | fit machine (µs) | modelled from NumPy's "
          "exp (timed / modelled) | from the compiled loop (timed / modelled) |\n"
          "|---|---|---|---|---|")
    pairs_numpy, pairs_loop = [], []
    for name, here, profile in timed:
        a = costmodel.cpu_gradient_seconds(profile, by_numpy, "float64", runtime, chains).value
        b = costmodel.cpu_gradient_seconds(profile, by_loop, "float64", runtime, chains).value
        pairs_numpy.append((here, a))
        pairs_loop.append((here, b))
        print(_row(name, here, fit.get(name), a, b))
    print(f"\nrms log error: NumPy's exp {_rms_log(pairs_numpy):.2f}, "
          f"compiled loop {_rms_log(pairs_loop):.2f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=MODELS)
    p.add_argument("--numpyro", help="bench/fit_numpyro_leapfrog.py lines timed on this machine")
    args = p.parse_args(argv)

    import zoo
    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    rates = exp_rates()
    print("exp, ns an element (2^20 elements):\n")
    print("| precision | " + " | ".join(rates["float64"]) + " |")
    print("|---|" + "---|" * len(rates["float64"]))
    for precision, row in rates.items():
        print(f"| {precision} | " + " | ".join(f"{v:.2f}" for v in row.values()) + " |")

    figures = machine_figures()
    # the two yardsticks: NumPy's exp (calibration version 4) and the compiled loop's (5)
    numpy_rate = {k: 10e9 / v["numpy"] for k, v in rates.items()}
    loop_rate = {k: 10e9 / v["numba loop"] for k, v in rates.items()}
    by_numpy = replace(figures, cpu_flops=numpy_rate)
    by_loop = replace(figures, cpu_flops=loop_rate)
    factories = zoo.zoo(quick=True)
    names = [n for n in args.models.split(",") if n]
    profiles = {n: profile_model(factories[n]()) for n in names}

    fit = _fit_machine(RESULTS / "fit-gradients-cpu.jsonl", "numba", "timed_seconds")
    timed = [(name, numba_gradient_seconds(factories[name]()), profiles[name]) for name in names]
    _compare("numba logp-and-gradient, one call (nutpie's runtime)", timed, fit,
             costmodel.NUMBA_NUTPIE, 1, by_numpy, by_loop)

    if args.numpyro:
        import fit_numpyro_leapfrog

        fit = _fit_machine(RESULTS / "fit-numpyro-leapfrog-cpu-2026-11-26.jsonl", "",
                           "per_leapfrog_seconds")
        timed = []
        for text in Path(args.numpyro).read_text().splitlines():
            line = json.loads(text)
            name = line["model"]
            profile = profiles.get(name) or profile_model(factories[name]())
            timed.append((name, fit_numpyro_leapfrog.per_leapfrog(line), profile))
        _compare("NumPyro's leapfrog in one compiled loop, two chains side by side", timed, fit,
                 costmodel.JAX_CPU_SAMPLER, 2, by_numpy, by_loop)


if __name__ == "__main__":
    main()
