"""Where a model's JAX gradient spends its time, fusion by fusion, in each precision.

XLA compiles a gradient into fusions and a few library calls (scatters, reductions, YNNPACK
fusions), each run as one thunk. JAX's profiler records every thunk's run; this jits the
gradient of the log density pymc-accel's CPU runs jaxify
(``fit_numpyro_tuning.numpyro_inputs``, one array per variable) in each of ``--precisions``
(float32 as the JAX samplers run it: 64-bit types off), calls it ``--calls`` times inside
``jax.profiler.trace`` with a Perfetto trace, and reads the thunks' durations back from it;
``--rounds`` traces, and each thunk's median over them, in µs a call. A thunk's name is XLA's
(``multiply_add_fusion.4``), and the same model compiles to the same names in both
precisions where the fusions match, so the rows line up:

    JAX_PLATFORMS=cpu python bench/trace_gradient_fusions.py --models seed_mid,seed_small

Runs on one XLA CPU device; run it in its own process. Timings within a trace include the
profiler's own cost, a few per cent; set them against each other, not against untraced runs.
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: Trace events that are not one thunk of the compiled program.
_NOT_THUNKS = ("PjitFunction", "ThunkExecutor", "CommonPjRt", "AllocateOutputBuffers",
               "Handle input", "ParseArguments", "PythonRefManager", "end: ", "$")


def _thunk_seconds(trace_dir: str, calls: int) -> dict[str, float]:
    """Each thunk's microseconds a call, from the Perfetto trace in ``trace_dir``."""
    (path,) = glob.glob(f"{trace_dir}/**/perfetto_trace.json.gz", recursive=True)
    with gzip.open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    total: collections.Counter = collections.Counter()
    for event in events:
        name = event.get("name", "")
        if event.get("ph") == "X" and "dur" in event and not name.startswith(_NOT_THUNKS):
            total[name] += event["dur"]
    return {name: us / calls for name, us in total.items()}


def trace_model(model, precision: str, calls: int, rounds: int) -> dict[str, float]:
    """Median µs a call of each thunk of ``model``'s jitted gradient in ``precision``."""
    import jax
    from fit_numpyro_tuning import numpyro_inputs

    from pymc_accel.backends.jax_model import jax_precision

    per_round: dict[str, list[float]] = collections.defaultdict(list)
    with jax_precision(precision):
        logp, x = numpyro_inputs(model, precision, layout="per_variable", logp_source="run")
        gradient = jax.jit(jax.grad(lambda xs: logp(xs)))
        jax.block_until_ready(gradient(x))
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as trace_dir:
                with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
                    for _ in range(calls):
                        result = gradient(x)
                    jax.block_until_ready(result)
                for name, us in _thunk_seconds(trace_dir, calls).items():
                    per_round[name].append(us)
    return {name: statistics.median(values) for name, values in per_round.items()}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seed_mid,seed_small")
    p.add_argument("--precisions", default="float64,float32")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--top", type=int, default=12, help="thunks shown a model")
    args = p.parse_args(argv)
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count=1".strip()
    from zoo import named

    precisions = args.precisions.split(",")
    rows = []
    for name in args.models.split(","):
        timed = {pr: trace_model(named()[name](), pr, args.calls, args.rounds)
                 for pr in precisions}
        thunks = sorted(set().union(*timed.values()),
                        key=lambda t: -max(timed[pr].get(t, 0.0) for pr in precisions))
        print(f"\n{name}\n\n| thunk | " + " | ".join(f"{pr} (µs)" for pr in precisions)
              + " |\n|---|" + "---|" * len(precisions))
        totals = {pr: sum(timed[pr].values()) for pr in precisions}
        for thunk in thunks[:args.top]:
            cells = " | ".join(f"{timed[pr].get(thunk, 0.0):.1f}" for pr in precisions)
            print(f"| {thunk} | {cells} |")
        print("| all thunks | " + " | ".join(f"{totals[pr]:.1f}" for pr in precisions) + " |",
              flush=True)
        rows.append({"model": name, "thunks": timed})
    return rows


if __name__ == "__main__":
    main()
