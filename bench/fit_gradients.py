"""One gradient, timed alone, against the cost model's roofline: the data the runtimes' gradient
figures are fitted to.

For each zoo model, compile the log density and gradient as measured mode does (PyTensor's
numba linker; PyMC's JAX graph, jit-compiled, in float64 and float32 on the CPU), time single
calls (median, call or dispatch overhead removed) and print them beside the modelled kernel
seconds of one chain (:func:`pymc_accel.costmodel.cpu_gradient_seconds` without the driver's
own work). One JSON line per (model, runtime, precision):

    JAX_PLATFORMS=cpu python bench/fit_gradients.py --quick --out docs/results/fit-gradients-cpu.jsonl

Nothing else should run on the machine meanwhile.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

warnings.filterwarnings("ignore")


def modelled_kernel_seconds(profile, machine, precision, runtime) -> float:
    """The roofline of one chain's gradient, without the driver's per-call work."""
    from pymc_accel import costmodel

    total = costmodel.cpu_gradient_seconds(profile, machine, precision, runtime, 1).value
    return total - costmodel.driver_seconds(profile, machine, runtime)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the zoo's quick sizes")
    parser.add_argument("--models", default="",
                        help="comma-separated zoo names (default: all), or bench/zoo.py:held_out's")
    parser.add_argument("--seconds", type=float, default=2.0, help="timing per gradient")
    parser.add_argument("--out", default="", help="append JSON lines here")
    args = parser.parse_args(argv)

    from zoo import held_out, zoo

    from pymc_accel import costmodel
    from pymc_accel.backends import _measure
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    machine = machine_figures()
    models = zoo(quick=args.quick)
    names = [n for n in args.models.split(",") if n] or list(models)
    from zoo import fit_models

    models |= fit_models() | held_out()  # named with --models: the fits' shapes, held-out models
    rows = []
    for name in names:
        profile = profile_model(models[name]())
        c = profile.census
        base = {"model": name, "n_free": profile.n_free, "kernels": c.kernels,
                "flops": c.flops, "bytes": c.bytes,
                "dense_flops": c.flops_by_category["dense_linalg"],
                "scan_steps": sum(s.n_steps or 0 for s in c.scans if not s.gradient)}
        timings = []
        compiled, kernel, calls = _measure.time_numba_gradient(
            models[name](), args.seconds * 2, machine)
        timings.append(("numba", "float64", kernel, calls, costmodel.NUMBA_PYMC))
        for precision in ("float64", "float32"):
            compiled, kernel, calls = _measure.time_jax_gradient(
                models[name](), "cpu", precision, args.seconds * 2)
            timings.append(("jax-cpu", precision, kernel, calls, costmodel.JAX_CPU))
        for runtime_name, precision, kernel, calls, runtime in timings:
            row = {**base, "runtime": runtime_name, "precision": precision,
                   "timed_seconds": kernel, "calls": calls,
                   "modelled_seconds": modelled_kernel_seconds(profile, machine, precision,
                                                               runtime)}
            rows.append(row)
            print(f"{name:14s} {runtime_name:8s} {precision}  kernels {c.kernels:5d}  timed "
                  f"{kernel * 1e6:9.1f} µs  modelled {row['modelled_seconds'] * 1e6:9.1f} µs",
                  flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
    return rows


if __name__ == "__main__":
    main()
