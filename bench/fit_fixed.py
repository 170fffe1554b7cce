"""Fit the numba drivers' fixed costs (``costmodel.NUMBA_NUTPIE``, ``NUMBA_PYMC``) to short runs
timed on one or more days: ``compile_seconds`` + ``compile_seconds_by_rank`` (seconds per
kernel looping over scalars, vectors, and loop nests: ``census.compiled_kernels_by_rank``, a
Scan's inner kernels once), and for comparison ``compile_seconds`` +
``compile_seconds_per_kernel`` x kernels, the form before 2026-11-24's evening (a term per Scan
was tried too: fitted at zero, the Scans' loop nests carry them).

Each input is ``fit_tuning.py`` output of 10 + 10 draws runs (``--lengths 10,10,10,10``), one
file per day the machine was timed on. Per model and candidate the first run (cold) is dropped
and the median of the others taken; the gradient work of 10 + 10 draws is left in, so models
whose gradients take more than a few hundred microseconds are left out (``--exclude``). A fit
minimises the squared log ratio of timing to fit, over every day at once, so a day on which the
machine compiles faster and one on which it compiles slower pull equally; it prints each day's
geometric mean ratio and range, each model's ratio, and the leave-one-model-out error (each
model predicted by a fit without it: how far a model the fit has not seen may land).

    JAX_PLATFORMS=cpu python bench/fit_tuning.py --models eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid,conjugate,many_scalars,logistic,student_t,varying_intercept,mixture,many_deterministics,ar1,pk_short \\
        --lengths 10,10,10,10 > docs/results/fit-fixed-shapes-cpu-2026-11-24.jsonl
    JAX_PLATFORMS=cpu python bench/fit_fixed.py docs/results/fit-fixed-cpu.jsonl docs/results/fit-fixed-cpu-2026-11-24.jsonl docs/results/fit-fixed-shapes-cpu-2026-11-24.jsonl

The models beyond the quick zoo (``zoo.shapes``) are there because the zoo has too few shapes
to tell a kernel count from the code a compile generates.
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


def fit_linear(rows: list[list[float]], ys: list[float]) -> list[float]:
    """Non-negative coefficients ``c`` minimising the sum of ``log(y / (c . x))**2`` over the
    ``rows`` (x) and ``ys``."""
    import numpy as np
    from scipy.optimize import least_squares

    X, Y = np.asarray(rows, float), np.asarray(ys, float)

    def residuals(c):
        return np.log(Y / np.maximum(1e-6, X @ c))

    start = np.full(X.shape[1], float(Y.min()) / X.shape[1] / max(1.0, float(X.max())))
    start[0] = float(Y.min()) / 2
    return list(least_squares(residuals, start, bounds=(0.0, np.inf)).x)


def fit_line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """``(a, b)`` minimising the sum of ``log(y / (a + b x))**2`` over ``points`` (x, y)."""
    a, b = fit_linear([[1.0, x] for x, _ in points], [y for _, y in points])
    return a, b


def kernels_of(models: set[str]) -> dict[str, int]:
    """Kernels per gradient evaluation of each model (the census the cost model reads)."""
    return {name: f["kernels"] for name, f in features_of(models).items()}


def features_of(models: set[str]) -> dict[str, dict]:
    """Per model: its kernel count and its kernels by loop rank, from the census."""
    import zoo

    from pymc_accel.profile import profile_model

    known = zoo.fit_models()
    out = {}
    for name in sorted(models):
        c = profile_model(known[name]()).census
        out[name] = {"kernels": c.kernels, "ranks": dict(c.compiled_kernels_by_rank)}
    return out


def _row(feature: dict, form: str) -> list[float]:
    if form == "kernels":
        return [1.0, feature["kernels"]]
    return [1.0, *feature["ranks"].values()]


def _leave_one_model_out(points, features, form) -> dict[str, float]:
    """Each model's timing / the fit made without that model, geometric mean over its days."""
    out = {}
    for model in {m for _, m, _ in points}:
        rest = [(m, w) for _, m, w in points if m != model]
        coef = fit_linear([_row(features[m], form) for m, _ in rest], [w for _, w in rest])
        mine = [w for _, m, w in points if m == model]
        fit = sum(c * x for c, x in zip(coef, _row(features[model], form)))
        out[model] = math.exp(statistics.fmean(math.log(w / fit) for w in mine))
    return out


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
    features = features_of(models)
    fits = {}
    for driver, label in DRIVERS.items():
        points = [(path, model, wall) for path, medians in days.items()
                  for (model, cand), wall in medians.items() if cand == label and model in features]
        if not points:
            continue
        fits[driver] = {}
        for form in ("kernels", "ranks"):
            coef = fit_linear([_row(features[m], form) for _, m, _ in points],
                              [w for _, _, w in points])

            def fitted(model, coef=coef, form=form):
                return sum(c * x for c, x in zip(coef, _row(features[model], form)))

            if form == "kernels":
                print(f"{driver}, by kernels: {coef[0]:.3f} s + {coef[1] * 1e3:.2f} ms x kernels "
                      f"({len(points)} model-days)")
            else:
                print(f"{driver}, by loop rank: {coef[0]:.3f} s + "
                      + " + ".join(f"{c * 1e3:.2f} ms x rank-{r}" for c, r in zip(coef[1:4], ("0", "1", "2+")))
                      + f" ({len(points)} model-days)")
            logs = [math.log(w / fitted(m)) for _, m, w in points]
            loo = _leave_one_model_out(points, features, form)
            loo_logs = [math.log(r) for r in loo.values()]
            print(f"  rms log error {math.sqrt(statistics.fmean(x * x for x in logs)):.3f}, "
                  f"leaving each model out {math.sqrt(statistics.fmean(x * x for x in loo_logs)):.3f} "
                  f"(worst {math.exp(max(map(abs, loo_logs))):.2f}x)")
            per_day = {}
            for path in days:
                ratios = [w / fitted(m) for p_, m, w in points if p_ == path]
                if ratios:
                    geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
                    per_day[path] = {"geometric_mean": geo, "min": min(ratios), "max": max(ratios)}
                    print(f"  {path}: timing / fit {geo:.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
            for path, model, wall in sorted(points, key=lambda p_: (fitted(p_[1]), p_[1], p_[0])):
                print(f"    {model:20s} {features[model]['kernels']:4d} kernels  {wall:5.2f} s  "
                      f"fit {fitted(model):5.2f} s  without it {wall / loo[model]:5.2f} s  "
                      f"({Path(path).name})")
            fits[driver][form] = {"coefficients": coef, "days": per_day, "leave_one_out": loo}
    return fits


if __name__ == "__main__":
    main()
