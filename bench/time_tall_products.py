"""XLA's CPU dot on a data matrix's product, as written and with the matrix held transposed:
the figures behind ``pymc_accel.rewrites.tall_products``.

For each shape ``rows x columns`` and precision, the value and gradient of
``tanh(X @ b).sum()`` (the matrix a constant, ``b`` the position) in one compiled loop of
``--passes`` passes, with ``X`` as written and as ``b @ XT`` (``XT`` the transpose, held
row-major): the best of three runs, in µs a pass. Each precision runs in its own process
(JAX's 64-bit types are a process setting).

    JAX_PLATFORMS=cpu python bench/time_tall_products.py > docs/results/tall-products-cpu.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

SHAPES = [(2000, 10), (5000, 20), (20000, 3), (100000, 20), (3000, 32), (2000, 50),
          (1000, 100), (1000, 128), (1000, 200), (1000, 1000), (200, 2000)]


def time_shape(rows: int, columns: int, precision: str, transposed: bool, passes: int) -> float:
    """µs a pass of the loop (best of three runs after a compiling one)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    data = rng.normal(size=(rows, columns))
    dtype = getattr(jnp, precision)
    if transposed:
        held = jnp.asarray(np.ascontiguousarray(data.T), dtype=dtype)

        def density(b):
            return jnp.tanh(b @ held).sum()
    else:
        held = jnp.asarray(data, dtype=dtype)

        def density(b):
            return jnp.tanh(held @ b).sum()
    value_and_grad = jax.value_and_grad(density)

    @jax.jit
    def loop(b):
        def one(_, b):
            return b + 1e-9 * value_and_grad(b)[1]
        return jax.lax.fori_loop(0, passes, one, b)

    b0 = jnp.asarray(rng.normal(size=columns), dtype=dtype)
    jax.block_until_ready(loop(b0))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        jax.block_until_ready(loop(b0))
        best = min(best, time.perf_counter() - start)
    return best / passes * 1e6


def _one_precision(precision: str, passes: int) -> None:
    import jax

    jax.config.update("jax_enable_x64", precision == "float64")
    for rows, columns in SHAPES:
        scale = max(1, rows * columns // 200_000)  # about the same seconds a shape
        n = max(20, passes // scale)
        print(json.dumps({"rows": rows, "columns": columns, "precision": precision,
                          "as_written": time_shape(rows, columns, precision, False, n),
                          "transposed": time_shape(rows, columns, precision, True, n)}),
              flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--passes", type=int, default=500)
    p.add_argument("--precision", default=None, help=argparse.SUPPRESS)  # one process's share
    args = p.parse_args(argv)
    if args.precision:
        _one_precision(args.precision, args.passes)
        return
    lines = []
    for precision in ("float64", "float32"):
        out = subprocess.run([sys.executable, __file__, "--precision", precision,
                              "--passes", str(args.passes)],
                             capture_output=True, text=True, check=True)
        lines += [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    print(f"Command: `python bench/time_tall_products.py --passes {args.passes}`\n")
    print("| rows x columns | precision | as written (µs) | transposed (µs) | as written / transposed |")
    print("|---|---|---|---|---|")
    for r in sorted(lines, key=lambda r: (r["rows"] * r["columns"], r["columns"], r["precision"])):
        print(f"| {r['rows']} x {r['columns']} | {r['precision']} | {r['as_written']:.1f} | "
              f"{r['transposed']:.1f} | {r['as_written'] / r['transposed']:.2f} |")


if __name__ == "__main__":
    main()
