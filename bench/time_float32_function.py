"""What building the float32 check's float32 evaluation costs: a PyTensor function in the
evaluating mode against the evaluator the check builds instead.

:func:`pymc_accel.precision.float32_graph` builds a float32 copy of the profile's log density
and gradient that nothing else uses. From 2026-11-28 the check compiled it with PyTensor's
``FunctionMaker`` directly, skipping ``pytensor.function``'s copy of the graph; since
2026-11-30 it builds no function (:class:`pymc_accel.graph_building.Evaluator`). For each
model, eight fresh copies, each built both ways in alternating order (the first pair dropped);
medians in milliseconds:

    JAX_PLATFORMS=cpu python bench/time_float32_function.py --models ordinal_9,negbin_12
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="ordinal_9,negbin_12,glm_poisson,stochvol_402,seed_mid")
    p.add_argument("--repeats", type=int, default=8)
    args = p.parse_args(argv)

    import pytensor
    import zoo

    from pymc_accel.graph_building import evaluating, evaluator
    from pymc_accel.precision import float32_graph
    from pymc_accel.profile import profile_and_logp

    factories = zoo.fit_models() | zoo.held_out()
    print("| model | pytensor.function (ms) | evaluator (ms) |")
    print("|---|---|---|")
    for name in args.models.split(","):
        timed: dict[str, list[float]] = {"function": [], "evaluator": []}
        for i in range(args.repeats):
            _, graph = profile_and_logp(factories[name]())
            outputs = [graph.logp, *graph.grads]
            for way in (("function", "evaluator") if i % 2 else ("evaluator", "function")):
                ins32, outs32 = float32_graph(graph.value_vars, outputs)
                gc.collect()
                with evaluating() as mode:
                    start = time.perf_counter()
                    if way == "function":
                        pytensor.function(ins32, outs32, mode=mode, on_unused_input="ignore")
                    else:
                        evaluator(ins32, outs32)
                    timed[way].append(time.perf_counter() - start)
        print(f"| {name} | {1e3 * statistics.median(timed['function'][1:]):.1f} "
              f"| {1e3 * statistics.median(timed['evaluator'][1:]):.1f} |")


if __name__ == "__main__":
    main()
