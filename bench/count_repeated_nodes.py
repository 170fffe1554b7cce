"""How many nodes of the checks' graphs repeat an earlier one, and what computing them once saves.

For each model: the log density and gradient its profile built (what the scale spread and the
float32 check as written evaluate) and its float32 copy
(:func:`pymc_accel.precision.float32_graph`, which since 2026-12-01, 15:09, copies a repeated
node once where the graph has a scalar loop, so its float32 rows count fewer repeats), each as
an :class:`pymc_accel.graph_building.Evaluator`; the graph's nodes, the nodes the evaluator
computes once for the earlier node they repeat (``Evaluator.merged``), the scalar loops among
them, and one evaluation at the initial point with the repeats computed once and, in turn with
it, with every node computed where it stands (the evaluator before 2026-12-01, 15:00); the
evaluator's build both ways, and whether it merges by default (a graph with a scalar loop). Medians
of ``--repeats`` evaluations, in milliseconds, as a Markdown table:

    JAX_PLATFORMS=cpu python bench/count_repeated_nodes.py --models copula_4,intervals_2,seed_small
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _timed(evaluators: list, args, repeats: int) -> list[float]:
    """Median milliseconds of each evaluator at ``args``, taken in turn (one, the other, ...)."""
    seconds: list[list[float]] = [[] for _ in evaluators]
    for _ in range(repeats):
        for evaluator, times in zip(evaluators, seconds, strict=True):
            start = time.perf_counter()
            evaluator(*args)
            times.append(time.perf_counter() - start)
    return [statistics.median(times) * 1e3 for times in seconds]


def measure(model, repeats: int) -> dict:
    """Nodes, repeats and evaluation times of ``model``'s log density and gradient."""
    import numpy as np
    from pytensor.graph.traversal import io_toposort
    from pytensor.scalar.loop import ScalarLoop

    from pymc_accel import graph_building, precision
    from pymc_accel.graph_building import Evaluator
    from pymc_accel.profile import profile_and_logp

    graph = profile_and_logp(model)[1]
    value_vars = list(graph.value_vars)
    outputs = [graph.logp, *(graph.grads or [])]
    point = graph.initial_point or graph_building.initial_point(model)
    row: dict = {}
    ins32, outs32 = precision.float32_graph(value_vars, outputs)
    for precision_name, ins, outs, cast in [("float64", value_vars, outputs, None),
                                            ("float32", ins32, outs32, "float32")]:
        args = [np.asarray(point[v.name]) for v in value_vars]
        if cast:
            args = [a.astype(cast) if a.dtype == np.float64 else a for a in args]
        nodes = io_toposort(list(ins), outs)
        loops = {n for n in nodes if isinstance(getattr(n.op, "scalar_op", None), ScalarLoop)}
        merged, every = Evaluator(list(ins), outs, merge=True), Evaluator(list(ins), outs,
                                                                           merge=False)
        kept = set(merged.nodes)
        build_once, build_every = _timed(
            [lambda: Evaluator(list(ins), outs, merge=True),
             lambda: Evaluator(list(ins), outs, merge=False)], [], repeats)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = merged(*args), every(*args)
        same = all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))
        once, every_ms = _timed([merged, every], args, repeats)
        row[precision_name] = {
            "nodes": len(nodes), "merged": merged.merged, "loops": len(loops),
            "loops merged": len(loops - kept), "same values": same,
            "once": once, "every": every_ms, "build once": build_once,
            "build every": build_every, "default": Evaluator(list(ins), outs).merged > 0}
    return row


def main(argv=None) -> int:
    import zoo

    named = zoo.named()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="copula_4,intervals_2,seed_small",
                        help="comma-separated names of bench/zoo.py's named() models")
    parser.add_argument("--repeats", type=int, default=9, help="evaluations timed each way")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.models.split(",")) - set(named))
    if unknown or args.repeats < 1:
        parser.error(f"unknown models: {', '.join(unknown)}" if unknown
                     else "--repeats must be at least 1")
    warnings.filterwarnings("ignore")
    print(f"Command: `JAX_PLATFORMS=cpu python bench/count_repeated_nodes.py --models "
          f"{args.models} --repeats {args.repeats}`\n")
    print("| model | precision | nodes | repeats computed once | scalar loops | loops repeated "
          "| same values | evaluation, repeats once (ms) | evaluation, every node (ms) | ratio "
          "| build, repeats found (ms) | build, every node (ms) | merged by default |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        row = measure(named[name](), args.repeats)
        for precision_name, r in row.items():
            print(f"| {name} | {precision_name} | {r['nodes']} | {r['merged']} | {r['loops']} "
                  f"| {r['loops merged']} | {'yes' if r['same values'] else 'NO'} "
                  f"| {r['once']:.2f} | {r['every']:.2f} | {r['once'] / r['every']:.2f} "
                  f"| {r['build once']:.1f} | {r['build every']:.1f} "
                  f"| {'yes' if r['default'] else 'no'} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
