"""Fit the numba drivers' fixed costs (``costmodel.NUMBA_NUTPIE``, ``NUMBA_PYMC``:
``compile_seconds`` + ``compile_seconds_per_kernel`` x kernels) to short runs timed on one or
more days.

Each input is ``fit_tuning.py`` output of 10 + 10 draws runs (``--lengths 10,10,10``), one file
per day the machine was timed on. Per model and candidate the first run (cold) is dropped and
the median of the others taken; the gradient work of 10 + 10 draws is left in, so models whose
gradients take more than a few hundred microseconds are left out (``--exclude``). The fit
minimises the squared log ratio of timing to fit, over every day at once, so a day on which
the machine compiles faster and one on which it compiles slower pull equally; it prints each
day's geometric mean ratio and range, which is how far a single day's figures sit from the fit.

    JAX_PLATFORMS=cpu python bench/fit_tuning.py --models eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid \\
        --lengths 10,10,10,10 > docs/results/fit-fixed-cpu-2026-11-24.jsonl
    JAX_PLATFORMS=cpu python bench/fit_fixed.py docs/results/fit-fixed-cpu.jsonl docs/results/fit-fixed-cpu-2026-11-24.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

DRIVERS = {"nutpie": "numba[cpu,float64,driver=nutpie]", "pymc": "numba[cpu,float64,driver=pymc]"}


def warm_medians(path: str) -> dict[tuple[str, str], float]:
    """(model, candidate) -> median wall time of its runs after the first, from one file."""
    runs: dict[tuple[str, str], list[float]] = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        if "wall" in row:
            runs[(row["model"], row["candidate"])].append(row["wall"])
    return {key: statistics.median(walls[1:]) for key, walls in runs.items() if len(walls) > 1}


def fit_line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """``(a, b)`` minimising the sum of ``log(y / (a + b x))**2`` over ``points`` (x, y)."""
    from scipy.optimize import least_squares

    xs = [x for x, _ in points]
    ys = [y for _, y in points]

    def residuals(ab):
        return [math.log(y / max(1e-6, ab[0] + ab[1] * x)) for x, y in zip(xs, ys)]

    start = (min(ys) / 2, (max(ys) - min(ys)) / max(1.0, max(xs) - min(xs)))
    return tuple(least_squares(residuals, start, bounds=([0.0, 0.0], [math.inf, math.inf])).x)


def kernels_of(models: set[str]) -> dict[str, int]:
    """Kernels per gradient evaluation of each zoo model (the census the cost model reads)."""
    import zoo

    from pymc_accel.profile import profile_model

    quick = zoo.zoo(quick=True)
    return {name: profile_model(quick[name]()).census.kernels for name in sorted(models)}


def main(argv=None) -> dict[str, dict]:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="fit_tuning.py output, one file per day")
    p.add_argument("--exclude", default="gp_200,seed_large",
                   help="models whose 10 + 10 draws' gradient work is not negligible")
    args = p.parse_args(argv)
    excluded = set(args.exclude.split(",")) if args.exclude else set()
    days = {path: warm_medians(path) for path in args.files}
    models = {m for medians in days.values() for m, _ in medians} - excluded
    kernels = kernels_of(models)
    fits = {}
    for driver, label in DRIVERS.items():
        points = [(path, model, kernels[model], wall) for path, medians in days.items()
                  for (model, cand), wall in medians.items() if cand == label and model in kernels]
        if not points:
            continue
        a, b = fit_line([(k, w) for _, _, k, w in points])
        print(f"{driver}: {a:.3f} s + {b * 1000:.2f} ms x kernels "
              f"({len(points)} model-days)")
        per_day = {}
        for path in days:
            ratios = [w / (a + b * k) for p_, _, k, w in points if p_ == path]
            if ratios:
                geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
                per_day[path] = {"geometric_mean": geo, "min": min(ratios), "max": max(ratios)}
                print(f"  {path}: timing / fit {geo:.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
        for path, model, k, wall in sorted(points, key=lambda p_: (p_[2], p_[1], p_[0])):
            print(f"    {model:14s} {k:4d} kernels  {wall:5.2f} s  fit {a + b * k:5.2f} s  ({path})")
        fits[driver] = {"seconds": a, "per_kernel": b, "days": per_day}
    return fits


if __name__ == "__main__":
    main()
