"""What one more kernel costs inside a compiled loop on a JAX device, against the loop's own
iteration: the data for pricing a NUTS leapfrog on a GPU by its kernels.

The calibration's ``launch_seconds`` (``pymc_accel.calibration_jax``) times a ``fori_loop``
whose body is one tiny kernel, so it is the cost of a loop *iteration*: on a GPU the body's
launch plus the condition's, and the copy of the condition to the host that decides whether to
go on. The cost model charges that figure for each of a third of the gradient's kernels
(``costmodel.gpu_gradient_seconds``). On the H200 lease of 2026-11-27 that priced seed_mid's
leapfrog about 5x over (about 1.2 ms against about 0.2 ms) and eight schools' within its
fixed-cost noise, while the numba and NumPyro CPU figures held: kernels queued inside one
iteration cost less than an iteration.

Here the loop body is a chain of ``k`` steps, each a reduction whose result feeds the next
step's elementwise work (XLA fuses a step's elementwise producer into its reduction, and cannot
fuse a reduction into a consumer that broadcasts it back), for k = 1, 2, 4, 8, 16. A least
squares fit of the per-iteration seconds on k gives the iteration's own cost (intercept) and a
kernel's (slope). The compiled program's fusions are counted from its HLO text, to check that k
steps did become about k kernels. One JSON line per k, then the fit:

    python bench/gpu_launch_probe.py [--platform gpu] [--size 1024] > gpu-launch-probe.jsonl

On the third H200 lease (2026-11-27) the fit gave 0.42 µs a kernel against the calibration's
6.6 µs an iteration: ``costmodel.GPU_KERNEL_IN_LOOP_SHARE`` (``bench/fit_gpu_leapfrog.py``).
The points scatter (k = 4 took 6.0 µs an iteration, k = 1 9.2 µs): from k = 4 to 16 alone the
slope is 0.88 µs.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time

STEPS = (1, 2, 4, 8, 16)


def loop_program(k: int, iterations: int):
    """A jitted ``fori_loop`` of ``iterations`` iterations whose body is ``k`` dependent
    reduce-then-broadcast steps."""
    import jax
    import jax.numpy as jnp

    def body(_, v):
        for _ in range(k):
            v = v * 0.999 + jnp.sum(v) * 1e-6
        return v

    return jax.jit(lambda v: jax.lax.fori_loop(0, iterations, body, v))


def fusions(compiled_text: str) -> int:
    """Fused computations in a compiled program's HLO text (``fusion`` instructions)."""
    return len(re.findall(r"=\s*\S+\s+fusion\(", compiled_text))


def probe(platform: str, size: int, iterations: int, repeats: int) -> list[dict]:
    """Per-iteration seconds and HLO fusions of the loop program for each step count."""
    import jax
    import jax.numpy as jnp

    device = jax.devices(platform)[0]
    lines = []
    with jax.default_device(device):
        x = jnp.ones(size, dtype=jnp.float32)
        for k in STEPS:
            program = loop_program(k, iterations)
            text = program.lower(x).compile().as_text() or ""
            program(x).block_until_ready()  # compile and warm up
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                program(x).block_until_ready()
                times.append(time.perf_counter() - start)
            kind = getattr(device, "device_kind", str(device))
            lines.append({"platform": platform, "device": kind, "k": k, "size": size, "iterations": iterations,
                          "per_iteration_seconds": statistics.median(times) / iterations,
                          "fusions": fusions(text)})
    return lines


def fit(lines: list[dict]) -> tuple[float, float]:
    """Least squares ``per_iteration = iteration + kernel * k``; returns ``(iteration, kernel)``."""
    ks = [x["k"] for x in lines]
    ys = [x["per_iteration_seconds"] for x in lines]
    mk, my = statistics.fmean(ks), statistics.fmean(ys)
    slope = sum((k - mk) * (y - my) for k, y in zip(ks, ys)) / sum((k - mk) ** 2 for k in ks)
    return my - slope * mk, slope


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--platform", default="gpu")
    p.add_argument("--size", type=int, default=1024, help="elements of the loop's array")
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    lines = probe(args.platform, args.size, args.iterations, args.repeats)
    for line in lines:
        print(json.dumps(line), flush=True)
    iteration, kernel = fit(lines)
    print(json.dumps({"fit": "per_iteration = iteration + kernel * k",
                      "iteration_seconds": iteration, "kernel_seconds": kernel}), flush=True)


if __name__ == "__main__":
    main()
