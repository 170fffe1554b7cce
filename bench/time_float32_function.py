"""What building and calling the float32 check's evaluations costs: PyTensor functions in the
evaluating mode, as the check built them until 2026-11-30, against the evaluators it builds
now (:class:`pymc_accel.graph_building.Evaluator`), and whether the two compute the same bits.

The check evaluates the profile's log density and gradient (float64, as written; the scale
spread evaluates the same one) and :func:`pymc_accel.precision.float32_graph`'s float32 copy of
it. Until 2026-11-30 it built the first with ``pytensor.function`` and the second with
PyTensor's ``FunctionMaker`` directly, which skips ``pytensor.function``'s copy of a graph
nothing else uses (from 2026-11-28); both in :func:`pymc_accel.graph_building.evaluating`.

For each model, ``--repeats`` fresh profiles, each graph built both ways in alternating order
(the first pair dropped); then each way's functions called ``--calls`` times at the model's
initial point. Medians in milliseconds, and "same" where every output of both ways is equal
bit for bit at the initial point and at a point jittered as the check jitters:

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


def _function(inputs, outputs, *, copy: bool):
    """A PyTensor function in the evaluating mode, as the check built it until 2026-11-30:
    ``pytensor.function`` (``copy``), or ``FunctionMaker`` on the graph itself."""
    import pytensor
    from pytensor.compile.io import In
    from pytensor.compile.maker import FunctionMaker

    from pymc_accel.graph_building import evaluating

    with evaluating() as mode:
        if copy:
            return pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore")
        return FunctionMaker([In(v) for v in inputs], outputs, mode=mode,
                             on_unused_input="ignore").create()


def _median_call(f, args, calls: int) -> float:
    f(*args)
    seconds = []
    for _ in range(calls):
        start = time.perf_counter()
        f(*args)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="ordinal_9,negbin_12,glm_poisson,stochvol_402,seed_mid")
    p.add_argument("--repeats", type=int, default=8)
    p.add_argument("--calls", type=int, default=9)
    args = p.parse_args(argv)

    import numpy as np
    import zoo

    from pymc_accel.graph_building import Evaluator, initial_point, quietly
    from pymc_accel.precision import _points, float32_graph
    from pymc_accel.profile import profile_and_logp

    factories = zoo.named()

    @quietly
    def built(graph, way: str, precision: str):
        inputs, outputs = list(graph.value_vars), [graph.logp, *graph.grads]
        if precision == "float32":
            inputs, outputs = float32_graph(inputs, outputs)
        gc.collect()
        start = time.perf_counter()
        if way == "evaluator":
            f = Evaluator(inputs, outputs)
        else:
            f = _function(inputs, outputs, copy=precision == "float64")
        return f, time.perf_counter() - start

    def arguments(point, value_vars, precision):
        values = [point[v.name] for v in value_vars]
        if precision == "float32":
            values = [np.asarray(a, dtype="float32") if a.dtype == np.float64 else a
                      for a in values]
        return values

    print("| model | float64: `pytensor.function` (ms) | float64: evaluator (ms) "
          "| float32: `FunctionMaker`, no copy (ms) | float32: evaluator (ms) "
          "| a float64 call: function / evaluator (ms) | a float32 call: function / evaluator "
          "(ms) | same values |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        build = {(w, pr): [] for w in ("function", "evaluator") for pr in ("float64", "float32")}
        calls: dict[tuple, list] = {key: [] for key in build}
        same = True
        for i in range(args.repeats):
            model = factories[name]()
            _, graph = profile_and_logp(model)
            start = initial_point(model)
            points = _points(model, 1, None, 0, start)
            for precision in ("float64", "float32"):
                made = {}
                for way in (("function", "evaluator") if i % 2 else ("evaluator", "function")):
                    made[way], seconds = built(graph, way, precision)
                    build[way, precision].append(seconds)
                for point in points:
                    values = [made[way](*arguments(point, graph.value_vars, precision))
                              for way in ("function", "evaluator")]
                    same &= all(np.array_equal(a, b, equal_nan=True)
                                for a, b in zip(*values, strict=True))
                for way in ("function", "evaluator"):
                    calls[way, precision].append(_median_call(
                        made[way], arguments(start, graph.value_vars, precision), args.calls))

        def ms(key, table, skip=1):
            return f"{1e3 * statistics.median(table[key][skip:]):.1f}"

        print(f"| {name} | {ms(('function', 'float64'), build)} "
              f"| {ms(('evaluator', 'float64'), build)} "
              f"| {ms(('function', 'float32'), build)} | {ms(('evaluator', 'float32'), build)} "
              f"| {ms(('function', 'float64'), calls, 0)} / "
              f"{ms(('evaluator', 'float64'), calls, 0)} "
              f"| {ms(('function', 'float32'), calls, 0)} / "
              f"{ms(('evaluator', 'float32'), calls, 0)} | {'same' if same else 'DIFFERENT'} |",
              flush=True)


if __name__ == "__main__":
    main()
