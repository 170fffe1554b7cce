"""What building the float32 check's float32 function costs, with and without the copy of its
graph that ``pytensor.function`` makes first.

:func:`pymc_accel.precision.float32_graph` builds a float32 copy of the profile's log density
and gradient that nothing else uses; since 2026-11-28 the check compiles it with PyTensor's
``FunctionMaker`` directly (:func:`pymc_accel.precision._function_of_private_graph`), skipping
``pytensor.function``'s copy. For each model, eight fresh copies, each compiled both ways in
alternating order (the first pair dropped), in the evaluating mode the check uses; medians in
milliseconds:

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

    from pymc_accel.graph_building import evaluating
    from pymc_accel.precision import _function_of_private_graph, float32_graph
    from pymc_accel.profile import profile_and_logp

    factories = zoo.fit_models() | zoo.held_out()
    print("| model | pytensor.function (ms) | FunctionMaker, no copy (ms) |")
    print("|---|---|---|")
    for name in args.models.split(","):
        timed: dict[str, list[float]] = {"copy": [], "no copy": []}
        for i in range(args.repeats):
            _, graph = profile_and_logp(factories[name]())
            outputs = [graph.logp, *graph.grads]
            for way in (("copy", "no copy") if i % 2 else ("no copy", "copy")):
                ins32, outs32 = float32_graph(graph.value_vars, outputs)
                gc.collect()
                with evaluating() as mode:
                    start = time.perf_counter()
                    if way == "copy":
                        pytensor.function(ins32, outs32, mode=mode, on_unused_input="ignore")
                    else:
                        _function_of_private_graph(ins32, outs32, mode)
                    timed[way].append(time.perf_counter() - start)
        print(f"| {name} | {1e3 * statistics.median(timed['copy'][1:]):.1f} "
              f"| {1e3 * statistics.median(timed['no copy'][1:]):.1f} |")


if __name__ == "__main__":
    main()
