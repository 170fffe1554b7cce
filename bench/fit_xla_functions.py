"""Would pricing XLA's transcendental functions one by one fit NumPyro's gradients better?

NumPyro's sampler runtime (``costmodel.JAX_CPU_SAMPLER``) charges every transcendental
function 10 flops at its flop rate, whatever the function. ``bench/fit_xla_ops.py`` times
them one by one under XLA (XLA's ``exp`` at a third of the calibration's ``exp`` loop, its
softplus at 2.3 of them). This replaces that charge, offline, with each function's timed cost
(``census.transcendentals_by_function`` times the ops file's figure in calibrated ``exp``s;
half an ``exp``, today's charge, for a function the file does not time), and fits the rate of
the remaining plain arithmetic (a multiple of the calibrated rate) and a cost per kernel to
the gradients measured mode timed in regret runs (their modelled driver taken off). It prints
the error of today's model and of each fit, per model. Nothing in the package changes.

    JAX_PLATFORMS=cpu python bench/fit_xla_functions.py \\
        --ops docs/results/fit-xla-ops-cpu-2026-11-27-avx512.jsonl \\
        docs/results/regret-cpu-1000-2026-11-27-start-up-pace.json \\
        docs/results/regret-cpu-1000-2026-11-27-heldout-start-up-pace.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

#: fit_xla_ops.py's op names -> the census's function names
FUNCTIONS = {"exp": "Exp", "log": "Log", "log1p": "Log1p", "softplus": "Softplus",
             "sigmoid": "Sigmoid"}
CANDIDATE = "numpyro[cpu,float64,chain_method=parallel]"


def function_costs(path: str) -> dict[str, float]:
    """Each timed function's cost under XLA in calibrated ``exp``s, at the largest size."""
    lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    largest = max(line["size"] for line in lines)
    return {FUNCTIONS[line["op"]]: line["in_calibrated_exps"] for line in lines
            if line["runtime"] == "xla" and line["size"] == largest and line["op"] in FUNCTIONS}


def rms(logs: list[float]) -> float:
    """Root mean square of log ratios."""
    return math.sqrt(sum(x * x for x in logs) / len(logs))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="bench_regret.py --out files")
    p.add_argument("--ops", required=True, help="fit_xla_ops.py --out file")
    args = p.parse_args(argv)
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    from gradient_vs_measured import measured_gradients
    from zoo import held_out, zoo

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    costs = function_costs(args.ops)
    machine = machine_figures()
    rate = machine.cpu_flops["float64"]
    runtime = costmodel.JAX_CPU_SAMPLER
    rows = []
    for (model, candidate), seconds in sorted(measured_gradients(args.results).items()):
        if candidate != CANDIDATE:
            continue
        profile = profile_model((zoo(quick=True) | held_out())[model]())
        c = profile.census
        driver = costmodel.driver_seconds(profile, machine, runtime)
        timed = seconds - driver
        if timed <= 1e-7:  # all driver, as modelled: nothing left to fit
            continue
        today = costmodel.cpu_gradient_seconds(profile, machine, "float64", runtime, 2).value
        plain = c.flops - c.flops_by_category["dense_linalg"] - c.transcendental_flops * 10 / 9
        functions = sum(n * costs.get(f, 0.5) for f, n in c.transcendentals_by_function.items())
        streamed = c.bytes * (1 - c.bytes_by_category["elementwise"] / c.bytes) if c.bytes else 0
        rows.append({"model": model, "timed": timed, "today": today - driver, "plain": plain,
                     "functions": functions * 10 / rate, "kernels": c.kernels,
                     "stream": streamed / (runtime.bandwidth_factor
                                           * machine.cpu_bandwidth["float64"])})

    def predicted(row, factor, per_kernel):
        compute = row["plain"] / (factor * rate) + row["functions"]
        return max(row["stream"], compute) + per_kernel * row["kernels"]

    def errors(factor, per_kernel):
        return [math.log(predicted(r, factor, per_kernel) / r["timed"]) for r in rows]

    fits = {"today's model": [math.log(r["today"] / r["timed"]) for r in rows]}
    flat = min((rms(errors(f, 0.0)), f) for f in np.linspace(1, 12, 111))
    fits[f"functions timed, plain at {flat[1]:.1f}x"] = errors(flat[1], 0.0)
    both = min((rms(errors(f, k)), f, k) for f in np.linspace(1, 12, 111)
               for k in np.linspace(0, 60e-9, 61))
    fits[f"functions timed, plain at {both[1]:.1f}x, {both[2] * 1e9:.0f} ns a kernel"] = errors(
        both[1], both[2])
    print("| model | " + " | ".join(fits) + " |")
    print("|---|" + "---|" * len(fits))
    for i, r in enumerate(rows):
        print(f"| {r['model']} | " + " | ".join(f"{math.exp(e[i]):.2f}" for e in fits.values())
              + " |")
    print("| rms log error | " + " | ".join(f"{rms(e):.3f}" for e in fits.values()) + " |")


if __name__ == "__main__":
    main()
