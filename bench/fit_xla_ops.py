"""Seconds per element of single ops under XLA on the CPU and in numba loops, against what the
cost model charges them: data for pricing the census's ops one kind at a time.

The gradient roofline charges plain arithmetic at the runtime's flop rate and transcendental
functions in ``exp`` equivalents, both from the calibrated ``exp`` loop, and gathers and
scatters by the bytes they move (``census``, ``costmodel._cpu_roofline``). Measured mode's
timings left that 2-3x off on some models of this machine (docs/benchmarks.md, "The gradient
roofline against measured mode's timings"). Here each op runs on ``--size`` elements of each of
``--precisions`` (default float64):
under XLA inside one jitted ``lax.fori_loop`` of ``--passes`` passes (no dispatch per pass,
as NumPyro's sampler runs its gradient), and as a numba loop called ``--passes`` times; the
best of ``--rounds`` rounds, per element. Each line also gives what one ``exp`` of the
calibration costs (10 flops at ``cpu_flops``), to set the ops against.

    JAX_PLATFORMS=cpu python bench/fit_xla_ops.py --size 4000,20000 --out docs/results/fit-xla-ops-cpu.jsonl
    JAX_PLATFORMS=cpu python bench/fit_xla_ops.py --size 2000,10000 --groups 100 \\
        --precisions float64,float32 --ops gather,scatter_add,mul_add,exp --runtimes xla
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

#: name -> (XLA body on (x, y, idx, groups), numba kernel factory, flops the census counts an element)
OPS = ("mul_add", "exp", "log", "softplus", "gather", "scatter_add", "log1p", "sigmoid",
       "divide")


def _xla_runner(op: str, size: int, groups: int, passes: int, precision: str = "float64"):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # float32 arrays stay float32 (weak constants)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.random(size), dtype=precision)
    y = jnp.asarray(rng.random(size), dtype=precision)
    idx = jnp.asarray(rng.integers(0, groups, size))
    table = jnp.asarray(rng.random(groups), dtype=precision)

    def body(_, carry):
        v = carry
        if op == "mul_add":
            out = v * y + v
        elif op == "exp":
            out = jnp.exp(v)
        elif op == "log":
            out = jnp.log(v + 1.0)
        elif op == "softplus":
            out = jnp.logaddexp(v, 0.0)
        elif op == "gather":
            out = v + table[idx]
        elif op == "scatter_add":  # the gradient of a gather
            out = v + jnp.zeros(groups, dtype=precision).at[idx].add(v)[0]
        elif op == "log1p":
            out = jnp.log1p(v)
        elif op == "sigmoid":
            out = jax.nn.sigmoid(v)
        else:  # divide
            out = v / (y + 1.0)
        return out * 1e-3 + x  # keep values bounded and the loop carried

    run = jax.jit(lambda v: jax.lax.fori_loop(0, passes, body, v))
    jax.block_until_ready(run(x))
    return lambda: jax.block_until_ready(run(x))


def _numba_runner(op: str, size: int, groups: int, passes: int, precision: str = "float64"):
    import numba

    rng = np.random.default_rng(0)
    x, y = rng.random(size).astype(precision), rng.random(size).astype(precision)
    idx = rng.integers(0, groups, size)
    table = rng.random(groups).astype(precision)
    out, bins = np.empty(size, dtype=precision), np.zeros(groups, dtype=precision)

    @numba.njit
    def kernel(x, y, idx, table, out, bins, kind):  # pragma: no cover - compiled by numba
        if kind == 0:
            for i in range(x.size):
                out[i] = x[i] * y[i] + x[i]
        elif kind == 1:
            for i in range(x.size):
                out[i] = np.exp(x[i])
        elif kind == 2:
            for i in range(x.size):
                out[i] = np.log(x[i] + 1.0)
        elif kind == 3:
            for i in range(x.size):
                out[i] = np.log1p(np.exp(x[i]))
        elif kind == 4:
            for i in range(x.size):
                out[i] = x[i] + table[idx[i]]
        elif kind == 5:
            bins[:] = 0.0
            for i in range(x.size):
                bins[idx[i]] += x[i]
        elif kind == 6:
            for i in range(x.size):
                out[i] = np.log1p(x[i])
        elif kind == 7:
            for i in range(x.size):
                out[i] = 1.0 / (1.0 + np.exp(-x[i]))
        else:
            for i in range(x.size):
                out[i] = x[i] / (y[i] + 1.0)

    kind = OPS.index(op)
    kernel(x, y, idx, table, out, bins, kind)

    def run():
        for _ in range(passes):
            kernel(x, y, idx, table, out, bins, kind)
    return run


def best_seconds(run, rounds: int) -> float:
    """The least wall seconds of ``rounds`` calls of ``run``, a warmed-up function of nothing
    that returns once its work is done."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def time_op(runtime: str, op: str, size: int, groups: int, passes: int, rounds: int,
            precision: str = "float64") -> float:
    """Best seconds per element of ``op`` over ``rounds`` rounds of ``passes`` passes, on
    arrays of ``precision``."""
    runner = _xla_runner if runtime == "xla" else _numba_runner
    run = runner(op, size, groups, passes, precision)
    return best_seconds(run, rounds) / passes / size


def timed_line(fields: dict, ns: float, exp_ns: float) -> dict:
    """One JSON line of a timing per element: ``fields``, the nanoseconds, and the same in
    calibrated ``exp``s (``exp_ns``); printed as it is made."""
    line = {**fields, "ns_per_element": round(ns, 3), "calibrated_exp_ns": round(exp_ns, 3),
            "in_calibrated_exps": round(ns / exp_ns, 3)}
    print(json.dumps(line), flush=True)
    return line


def write_lines(path: str | None, lines: list[dict]) -> None:
    """Write ``lines`` as JSON lines to ``path`` (nothing without one)."""
    if path:
        Path(path).write_text("".join(json.dumps(line) + "\n" for line in lines))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="4000,20000", help="comma-separated element counts")
    p.add_argument("--groups", type=int, default=500, help="gather and scatter bins")
    p.add_argument("--passes", type=int, default=500)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", default=None, help="also write the lines here")
    p.add_argument("--precisions", default="float64")
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--runtimes", default="xla,numba")
    args = p.parse_args(argv)
    from pymc_accel.machine import machine_figures

    exp_ns = 10.0 / machine_figures().cpu_flops["float64"] * 1e9
    lines = []
    for size in map(int, args.size.split(",")):
        for op in args.ops.split(","):
            for runtime in args.runtimes.split(","):
                for precision in args.precisions.split(","):
                    ns = time_op(runtime, op, size, args.groups, args.passes, args.rounds,
                                 precision) * 1e9
                    fields = {"op": op, "runtime": runtime, "size": size, "groups": args.groups,
                              "precision": precision}
                    lines.append(timed_line(fields, ns, exp_ns))
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
