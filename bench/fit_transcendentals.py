"""What a transcendental function costs in a numba loop, and whether pricing them fixes the
numba gradient's model: the data behind ``census.TRANSCENDENTAL_EXP_EQUIVALENTS`` and
``costmodel.NUMBA_TRANSCENDENTAL_FACTOR``.

``--functions``: each scalar function summed over 4,000 elements in a PyTensor function under
the numba linker, less the same loop without it (best of 7 x 1,000 calls), beside NumPy's own
``exp`` (what machine calibration times). One JSON line per function.

``--gradients``: for each quick-zoo model and each shape of ``zoo.shapes()``, PyMC's numba
logp-and-gradient timed a start jitter away from the initial point (PyMC's U(-1, 1); best of 5 x
300 calls, the machine's call overhead taken off), beside the modelled kernel seconds of
PyMC's NUTS runtime with transcendentals priced and without (``transcendental_factor=0``).
One JSON line per model, then the rms log error of each over the models whose gradient takes
more than 10 µs (below that the per-kernel and driver terms, not the math, decide).

    JAX_PLATFORMS=cpu python bench/fit_transcendentals.py --functions --gradients \\
        --out docs/results/fit-transcendentals-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

warnings.filterwarnings("ignore")

ELEMENTS = 4000


def _best_seconds(fn, arg, calls: int, repeats: int) -> float:
    fn(arg)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn(arg)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def time_functions() -> list[dict]:
    """ns per element of each scalar function in a numba loop, and NumPy's exp."""
    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    x = pt.dvector("x")
    a = np.abs(np.random.default_rng(0).normal(size=ELEMENTS)) + 0.5

    def loop(expr):
        f = pytensor.function([x], pt.sum(expr * 2.0 + 1.0), mode="NUMBA", trust_input=True)
        return _best_seconds(f, a, 1000, 7)

    base = loop(x)
    functions = {
        "Exp": pt.exp, "Exp2": pt.exp2, "Expm1": pt.expm1, "Log": pt.log, "Log2": pt.log2,
        "Log10": pt.log10, "Log1p": pt.log1p, "Log1mexp": lambda v: pt.log1mexp(-v),
        "Softplus": pt.softplus, "Sigmoid": pt.sigmoid, "Tanh": pt.tanh, "Sin": pt.sin,
        "Cos": pt.cos, "Cosh": pt.cosh, "Pow": lambda v: v**1.7, "Sqrt": pt.sqrt, "Erf": pt.erf,
        "Erfc": pt.erfc, "Erfcx": pt.erfcx, "Erfinv": lambda v: pt.erfinv(v / 10),
        "GammaLn": pt.gammaln, "Gamma": pt.gamma, "Psi": pt.psi, "TriGamma": pt.tri_gamma,
    }
    rows = [{"function": name, "numba_ns": (loop(build(x)) - base) / ELEMENTS * 1e9}
            for name, build in functions.items()]
    out = np.empty_like(a)
    numpy_exp = _best_seconds(lambda v: np.exp(v, out=out), a, 1000, 7) / ELEMENTS * 1e9
    exp = next(r["numba_ns"] for r in rows if r["function"] == "Exp")
    for r in rows:
        r["exp_equivalents"] = r["numba_ns"] / exp
        r["numpy_exp_ns"] = numpy_exp
        print(f"{r['function']:9s} {r['numba_ns']:9.2f} ns  {r['exp_equivalents']:8.2f} exps "
              f"(NumPy's exp {numpy_exp:.2f} ns)", flush=True)
    return rows


def time_gradients(names: list[str] | None = None) -> list[dict]:
    """Timed (jittered) numba gradient against the modelled one, priced and unpriced."""
    import numpy as np
    from zoo import shapes, zoo

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    machine = machine_figures()
    models = zoo(quick=True) | shapes()
    runtime = costmodel.NUMBA_PYMC
    unpriced = replace(runtime, transcendental_factor=0.0)
    rows = []
    for name in names or list(models):
        model = models[name]()
        profile = profile_model(model)
        driver = costmodel.driver_seconds(profile, machine, runtime)

        def kernel(rt):
            return costmodel.cpu_gradient_seconds(profile, machine, "float64", rt, 1).value - driver

        fn = model.logp_dlogp_function(mode="NUMBA", ravel_inputs=True)
        fn.set_extra_values({})
        start = np.concatenate([np.ravel(v) for v in model.initial_point().values()])
        jittered = start + np.random.default_rng(1).uniform(-1, 1, start.size)
        compiled = fn._pytensor_function
        compiled.trust_input = True
        timed = _best_seconds(compiled, jittered, 300, 5) - machine.cpu_call_seconds
        row = {"model": name, "n_free": profile.n_free, "kernels": profile.census.kernels,
               "transcendentals": profile.census.transcendentals, "timed_seconds": timed,
               "modelled_seconds": kernel(runtime), "modelled_unpriced_seconds": kernel(unpriced)}
        rows.append(row)
        print(f"{name:20s} timed {timed * 1e6:8.1f} µs  priced {row['modelled_seconds'] * 1e6:8.1f} "
              f"({row['modelled_seconds'] / timed:4.2f}x)  unpriced "
              f"{row['modelled_unpriced_seconds'] * 1e6:8.1f} "
              f"({row['modelled_unpriced_seconds'] / timed:4.2f}x)", flush=True)
    for key in ("modelled_seconds", "modelled_unpriced_seconds"):
        errors = [math.log(r[key] / r["timed_seconds"]) for r in rows if r["timed_seconds"] > 1e-5]
        if errors:
            print(f"{key}: rms log error {math.sqrt(sum(e * e for e in errors) / len(errors)):.3f} "
                  f"over {len(errors)} models above 10 µs")
    return rows


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", action="store_true", help="time each scalar function")
    parser.add_argument("--gradients", action="store_true", help="time the models' gradients")
    parser.add_argument("--models", default="", help="comma-separated (default: all)")
    parser.add_argument("--out", default="", help="append JSON lines here")
    args = parser.parse_args(argv)
    rows = []
    if args.functions:
        rows += time_functions()
    if args.gradients:
        rows += time_gradients([n for n in args.models.split(",") if n] or None)
    if args.out:
        with open(args.out, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return rows


if __name__ == "__main__":
    main()
