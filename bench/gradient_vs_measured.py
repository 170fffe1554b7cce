"""Modelled seconds per gradient against the timings measured mode recorded in regret runs.

``bench/bench_regret.py`` runs ``select(measure=True)`` on every model, and its JSON keeps each
timed candidate's seconds per gradient (``measurement.measured``: the gradient timed on this
machine plus the modelled driver). This script selects each of those models again in default
mode (run history off, no first use) and sets the modelled seconds per gradient beside the
timed ones, per candidate: a cheap check of the roofline on models nobody fitted it on, with
no new sampling. Run it on the machine that recorded the files.

    JAX_PLATFORMS=cpu python bench/gradient_vs_measured.py \\
        docs/results/regret-cpu-1000-2026-11-27-start-up-pace.json \\
        docs/results/regret-cpu-1000-2026-11-27-heldout-start-up-pace.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

CANDIDATES = ("numpyro[cpu,float64,chain_method=parallel]", "numba[cpu,float64,driver=nutpie]",
              "numba[cpu,float64,driver=pymc]")


def measured_gradients(paths: list[str]) -> dict[tuple[str, str], float]:
    """(model, candidate) -> the seconds per gradient measured mode timed, from result files
    (the last file naming a pair wins)."""
    out = {}
    for path in paths:
        for model in json.loads(Path(path).read_text())["models"]:
            for timed in (model.get("measurement") or {}).get("measured", []):
                out[(model["model"], timed["candidate"])] = timed["seconds_per_gradient"]
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="bench_regret.py --out files")
    args = p.parse_args(argv)
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    import pymc_accel
    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model
    from zoo import held_out, zoo

    runtimes = {"numpyro[cpu,float64,chain_method=parallel]": costmodel.JAX_CPU_SAMPLER,
                "numba[cpu,float64,driver=nutpie]": costmodel.NUMBA_NUTPIE,
                "numba[cpu,float64,driver=pymc]": costmodel.NUMBA_PYMC}
    machine = machine_figures()

    factories = zoo(quick=True) | held_out()
    timed = measured_gradients(args.results)
    ratios: dict[str, list[float]] = {}
    print("| model | candidate | modelled (µs) | measured (µs) | modelled / measured | "
          "the same less the modelled driver | transcendentals (exp equivalents) | "
          "other flops |")
    print("|---|---|---|---|---|---|---|---|")
    reports = {}
    for (model, candidate), seconds in sorted(timed.items()):
        if candidate not in CANDIDATES or model not in factories:
            continue
        if model not in reports:
            reports[model] = pymc_accel.select(factories[model](), draws=1000, tune=1000,
                                               chains=2)
        row = next((r for r in reports[model].rows if r.label == candidate), None)
        if row is None or not row.seconds_per_gradient:
            continue
        ratio = row.seconds_per_gradient / seconds
        ratios.setdefault(candidate, []).append(ratio)
        # the kernel alone: both figures carry the same modelled driver
        profile = profile_model(factories[model]())
        driver = costmodel.driver_seconds(profile, machine, runtimes[candidate])
        kernel = ((row.seconds_per_gradient - driver) / (seconds - driver)
                  if seconds > driver else float("nan"))
        c = profile.census
        other = c.flops - c.flops_by_category["dense_linalg"] - c.transcendental_flops
        print(f"| {model} | {candidate} | {row.seconds_per_gradient * 1e6:.1f} | "
              f"{seconds * 1e6:.1f} | {ratio:.2f} | {kernel:.2f} | {c.transcendentals:.0f} | "
              f"{other / 1e3:.0f}k |")
    print()
    print("| candidate | models | modelled / measured: geometric mean | range |")
    print("|---|---|---|---|")
    for candidate, rs in ratios.items():
        mean = math.exp(statistics.fmean(math.log(r) for r in rs))
        print(f"| {candidate} | {len(rs)} | {mean:.2f} | {min(rs):.2f}–{max(rs):.2f} |")


if __name__ == "__main__":
    main()
