"""The float32 check with and without its finiteness points, model by model.

For each model: the check's verdict, the points it evaluated, its seconds and, where it refused
float32, why, first with the three compared jittered points only (``finiteness_points=0``, the
check until 2026-11-30) and then with the further points where float32 need only be finite
(:data:`pymc_accel.precision.FINITENESS_POINTS`). A verdict that moves is a model whose float32
choice moves with them:

    JAX_PLATFORMS=cpu python bench/compare_check_finiteness.py --models hsgp_33,glm_poisson

``--count-starts N`` prints instead, per model, at how many of ``N`` jittered starts float32 is not
finite where float64 is (the check as compiled, every start evaluated, none skipped by a budget):
the odds a check with a given number of starts misses a failure that shows at some starts only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", required=True)
    p.add_argument("--repeats", type=int, default=3, help="timed checks per setting (median)")
    p.add_argument("--count-starts", type=int, default=0, metavar="N")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    from zoo import named

    if args.count_starts:
        count_starts(named(), args.models.split(","), args.count_starts)
        return

    from pymc_accel.precision import FINITENESS_POINTS, check_float32

    factories = named()
    print("| model | compared points only: safe | points | ms | with finiteness points: safe "
          "| points | ms | problem with them |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        row = [name]
        for extra in (0, FINITENESS_POINTS):
            seconds, check = [], None
            for _ in range(args.repeats):
                model = factories[name]()
                start = time.perf_counter()
                check = check_float32(model, finiteness_points=extra)
                seconds.append(time.perf_counter() - start)
            row += [str(check.safe), str(check.points),
                    f"{statistics.median(seconds) * 1e3:.0f}"]
        row.append(check.problem or "–")
        print("| " + " | ".join(row) + " |", flush=True)


def count_starts(factories: dict, names: list[str], starts: int) -> None:
    """Per model, the jittered starts (of ``starts``) where float32 is not finite and float64
    is, from one check as compiled over all of them."""
    from pymc_accel.precision import check_float32

    print("| model | starts | float32 not finite where float64 is | float64 not finite |")
    print("|---|---|---|---|")
    for name in names:
        check = check_float32(factories[name](), n_jittered=starts, finiteness_points=0,
                              as_written_first=False, budget_seconds=1e9)
        jittered = check.per_point[1:]
        failed = sum(1 for p in jittered if "logp64" in p and "logp_rel_error" not in p)
        skipped = sum(1 for p in jittered if "skipped" in p)
        print(f"| {name} | {len(jittered)} | {failed} ({failed / len(jittered):.0%}) | "
              f"{skipped} |", flush=True)


if __name__ == "__main__":
    main()
