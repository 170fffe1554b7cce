"""What the float32 guard costs: the data behind ``costmodel.GUARD_*``.

The selector runs :func:`pymc_accel.precision.check_float32` before it chooses float32 for a
float64 model, and the check's seconds are the selection's, so a float32 candidate is charged
them in advance (``costmodel.guard_seconds``). For each model of the fit (the quick zoo and
``zoo.shapes()``), in one process that has checked a primer model first, it times the check on
a model object built afresh each time, from the log density its profile built (as a selection
runs it), and records the profile's census beside it, with the
seconds of ``pymc_accel.integration.check_initial_point`` (the start check ``pymc_accel.sample``
runs before a sampler that does not check its start itself) on another fresh model.

One JSON line per model and repeat; ``--summarise`` fits
``seconds = fixed + per_kernel * kernels + per_byte * bytes`` by least squares on the medians
(relative errors)
and prints each model's error, with each model left out of the fit in turn.

    JAX_PLATFORMS=cpu python bench/fit_guard.py --repeats 3 --big > docs/results/fit-guard-cpu.jsonl

Run with an older checkout's package first on ``PYTHONPATH`` (``git worktree add``), it times
that version's checks: ``docs/results/fit-guard-cpu-a96c893.jsonl`` is the checks before they
stopped compiling. ``--as-compiled-only`` times the check as it ran before it checked the log
density as written first (``docs/results/fit-guard-cpu-2026-11-27-as-compiled.jsonl``), and
``--as-written-first`` as written first whatever the model's data (by default the check goes
straight to the log density as compiled past ``precision.AS_WRITTEN_MAX_DATA_BYTES``).
    python bench/fit_guard.py --summarise docs/results/fit-guard-cpu.jsonl

Each line records the machine's pure-Python loop (``python_loop_seconds``, timed once per
process, :func:`pymc_accel.machine.python_loop_seconds`). ``--against OLD.jsonl`` with
``--summarise NEW.jsonl`` compares two machines model by model: each model's median check
here over there, beside the two loops' ratio. The check is Python's work a kernel, and
``costmodel.guard_seconds`` charges the fit machine's seconds on every machine
(docs/benchmarks.md, "A second, slower machine": 3.82x there, where the call overhead was 3.73x).
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


def time_model(name: str, build, as_written_first: bool | None = None,
               loop_seconds: float | None = None) -> dict:
    """One repeat: the check's seconds, its verdict and the model's census figures."""
    import time

    from pymc_accel.integration import check_initial_point
    from pymc_accel.precision import check_float32
    from pymc_accel.profile import profile_and_logp

    checked = build()
    profile, graph = profile_and_logp(checked)
    # as a selection runs it, after the profile
    check = check_float32(checked, logp_graph=graph, as_written_first=as_written_first)
    model = build()
    start = time.perf_counter()
    check_initial_point(model)
    start_check = time.perf_counter() - start
    census = profile.census
    return {"model": name, "seconds": check.seconds, "safe": check.safe, "points": check.points,
            "graph": check.graph,
            "start_check_seconds": start_check,
            "kernels": census.kernels, "bytes": census.bytes, "flops": census.flops,
            "series_evaluations": census.series_evaluations,
            "n_free": profile.n_free, "python_loop_seconds": loop_seconds}


def fit(rows: list[dict]) -> tuple[list[float], dict[str, float]]:
    """Least-squares ``(fixed, per_kernel, per_byte)`` on per-model medians, each model's error
    relative to its seconds (a 10 s check must not outweigh twenty 0.1 s ones), and each
    model's estimate with that model left out of the fit."""
    import numpy as np

    by_model = defaultdict(list)
    for r in rows:
        by_model[r["model"]].append(r)
    names = sorted(by_model)
    X = np.array([[1.0, by_model[n][0]["kernels"], by_model[n][0]["bytes"]] for n in names])
    y = np.array([statistics.median(r["seconds"] for r in by_model[n]) for n in names])
    w = 1.0 / y
    coef = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)[0]
    left_out = {}
    for i, n in enumerate(names):
        keep = [j for j in range(len(names)) if j != i]
        c = np.linalg.lstsq(X[keep] * w[keep, None], y[keep] * w[keep], rcond=None)[0]
        left_out[n] = float(X[i] @ c)
    return [float(c) for c in coef], left_out


def _rows(path: str) -> list[dict]:
    """The JSON lines of a file this script wrote."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def summarise(path: str) -> None:
    """Print the fit and each model's measured and left-out estimated seconds."""
    rows = _rows(path)
    coef, left_out = fit(rows)
    print(f"fit: {coef[0] * 1e3:.1f} ms + {coef[1] * 1e3:.3f} ms per kernel + "
          f"{coef[2] * 1e9:.3f} ms per MB of gradient bytes")
    print("| model | kernels | gradient MB | measured (median) | estimated, model left out | ratio "
          "| start check (median) |")
    print("|---|---|---|---|---|---|---|")
    errors = []
    for name in sorted(left_out):
        mine = [r for r in rows if r["model"] == name]
        measured = statistics.median(r["seconds"] for r in mine)
        est = left_out[name]
        errors.append(math.log(max(est, 1e-3) / measured))
        starts = [r["start_check_seconds"] for r in mine if "start_check_seconds" in r]
        start = f"{statistics.median(starts) * 1e3:.0f} ms" if starts else "—"
        print(f"| {name} | {mine[0]['kernels']} | {mine[0]['bytes'] / 1e6:.2f} | "
              f"{measured * 1e3:.0f} ms | {est * 1e3:.0f} ms | {est / measured:.2f} | {start} |")
    rms = math.sqrt(sum(e * e for e in errors) / len(errors))
    print(f"rms log error, each model left out: {rms:.3f}")


def compare(path: str, against: str) -> None:
    """Print each model's median check in ``path`` over its median in ``against`` (models in
    both), beside the two machines' pure-Python loops' ratio where both files record it."""
    def medians(file: str) -> tuple[dict[str, float], float | None]:
        rows = _rows(file)
        by_model = defaultdict(list)
        for r in rows:
            by_model[r["model"]].append(r["seconds"])
        loops = [r["python_loop_seconds"] for r in rows if r.get("python_loop_seconds")]
        return ({m: statistics.median(v) for m, v in by_model.items()},
                statistics.median(loops) if loops else None)

    here, loop_here = medians(path)
    there, loop_there = medians(against)
    if loop_here and loop_there:
        print(f"pure-Python loop: {loop_here * 1e3:.1f} ms here, {loop_there * 1e3:.1f} ms there "
              f"({loop_here / loop_there:.2f}x)")
    print("| model | check here | check there | ratio |")
    print("|---|---|---|---|")
    ratios = []
    for name in sorted(set(here) & set(there)):
        ratios.append(here[name] / there[name])
        print(f"| {name} | {here[name] * 1e3:.0f} ms | {there[name] * 1e3:.0f} ms | "
              f"{ratios[-1]:.2f} |")
    if ratios:
        geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
        print(f"geometric mean ratio {geo:.2f} over {len(ratios)} models "
              f"(range {min(ratios):.2f}-{max(ratios):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default="",
                        help="comma-separated: fit models, held-out ones or seed_1m; default: "
                             "every fit model")
    parser.add_argument("--big", action="store_true",
                        help="add two large hierarchical logistic regressions (50,000 and "
                             "200,000 rows, 20 covariates), where the check reads 0.2-0.7 GB")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--as-compiled-only", action="store_true",
                     help="time the check as the backends compile the log density only, as "
                          "it ran until 2026-11-27 (as_written_first=False)")
    how.add_argument("--as-written-first", action="store_true",
                     help="time the check as written first whatever the model's data "
                          "(as_written_first=True)")
    parser.add_argument("--summarise", metavar="JSONL", help="fit recorded timings instead")
    parser.add_argument("--against", metavar="JSONL",
                        help="with --summarise: compare its timings with these, model by model")
    args = parser.parse_args()
    if args.summarise:
        if args.against:
            compare(args.summarise, args.against)
        else:
            summarise(args.summarise)
        return
    if args.against:
        parser.error("--against goes with --summarise")
    import zoo

    from pymc_accel.integration import check_initial_point
    from pymc_accel.machine import python_loop_seconds
    from pymc_accel.models import eight_schools, hierarchical_logistic
    from pymc_accel.precision import check_float32

    check_float32(eight_schools())  # primer: PyTensor's and PyMC's code paths run once
    check_initial_point(eight_schools())
    models = zoo.fit_models()
    if args.big:
        models |= {"seed_50k": lambda: hierarchical_logistic(50_000, 5_000, 20).model,
                   "seed_200k": lambda: hierarchical_logistic(200_000, 20_000, 20).model}
    names = args.models.split(",") if args.models else list(models)
    # by name only, not fitted: any other model of zoo.named() (the held-out and the
    # series-function models among them), and the seed blog's model at full size
    # (1,000,000 rows, 100,000 groups, 20 covariates)
    by_name = {**zoo.named(),
               "seed_1m": lambda: hierarchical_logistic(1_000_000, 100_000, 20).model}
    models |= {k: v for k, v in by_name.items() if k in names}
    loop = python_loop_seconds()  # the machine's pace at interpreted work, for --against
    for _ in range(args.repeats):
        for name in names:
            how = False if args.as_compiled_only else True if args.as_written_first else None
            print(json.dumps(time_model(name, models[name], how, loop)), flush=True)


if __name__ == "__main__":
    main()
