"""XLA's CPU dot on a data matrix's product, as written and with the matrix held transposed:
the figures behind ``pymc_accel.rewrites.tall_products``.

For each shape ``rows x columns`` and precision, the value and gradient of
``tanh(X @ b).sum()`` (the matrix a constant, ``b`` the position) in one compiled loop of
``--passes`` passes, with ``X`` as written and as ``b @ XT`` (``XT`` the transpose, held
row-major): the best of three runs, in µs a pass. Each precision runs in its own process
(JAX's 64-bit types are a process setting).

    JAX_PLATFORMS=cpu python bench/time_tall_products.py > docs/results/tall-products-cpu.md

``--numba`` times what the numba backends would run instead: PyTensor's numba-compiled log
density and gradient of a linear regression (``y ~ N(X b, s)``) on each of ``--numba-shapes``,
as written and with its product as a vector-matrix product on the transposed matrix
(``dot(b, XT)``, :func:`vector_form`), the best of three batches of calls, in µs a call. The
numba backends do not apply the rewrite; this is the figure for deciding whether they should.
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


def vector_form(output):
    """``output`` with each tall matrix's ``dot(X, v)`` computed as ``dot(v, XT)``, ``XT`` the
    transpose held row-major (:func:`pymc_accel.rewrites.tall_products.transposed_tall_products`
    in another form): a vector-matrix product, one BLAS gemv under numba."""
    from pymc_accel.rewrites.tall_products import transposed_tall_products

    def vector_matrix(vector, held):
        if vector.ndim == 1:
            return vector.dot(held)
        return vector[:, 0].dot(held)[:, None]

    return transposed_tall_products([output], form=vector_matrix)[0][0]


def time_numba(rows: int, columns: int) -> dict:
    """µs a call of the numba-compiled log density and gradient of a linear regression, as
    written and in :func:`vector_form`."""
    import numpy as np
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    from pymc_accel.profile import log_density_graph

    rng = np.random.default_rng(1)
    data = rng.normal(size=(rows, columns))
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=columns)
        pm.Normal("y", pm.math.dot(data, b), pm.HalfNormal("s", 1),
                  observed=data @ rng.normal(size=columns) + rng.normal(size=rows))
    graph, _ = log_density_graph(model)
    start = model.initial_point()
    args = [np.asarray(start[v.name] + 0.1, dtype="float64") for v in graph.value_vars]
    calls = max(20, 2_000_000 // (rows * columns))
    timed = {"rows": rows, "columns": columns}
    for label, output in (("as_written", graph.logp), ("vector_form", vector_form(graph.logp))):
        fn = pytensor.function(graph.value_vars, [output, *pt.grad(output, graph.value_vars)],
                               mode="NUMBA", trust_input=True)
        fn(*args)
        best = float("inf")
        for _ in range(3):
            begin = time.perf_counter()
            for _ in range(calls):
                fn(*args)
            best = min(best, (time.perf_counter() - begin) / calls)
        timed[label] = best * 1e6
    return timed


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--passes", type=int, default=500)
    p.add_argument("--precision", default=None, help=argparse.SUPPRESS)  # one process's share
    p.add_argument("--numba", action="store_true",
                   help="time the numba-compiled gradient as written and in vector form")
    p.add_argument("--numba-shapes", default="2000x10,5000x20,20000x3,100000x20,3000x100")
    args = p.parse_args(argv)
    if args.numba:
        print(f"Command: `python bench/time_tall_products.py --numba --numba-shapes "
              f"{args.numba_shapes}`\n")
        print("| rows x columns | as written (µs) | vector form (µs) | as written / vector form |")
        print("|---|---|---|---|")
        for shape in args.numba_shapes.split(","):
            r = time_numba(*(int(x) for x in shape.split("x")))
            print(f"| {r['rows']} x {r['columns']} | {r['as_written']:.1f} | "
                  f"{r['vector_form']:.1f} | {r['as_written'] / r['vector_form']:.2f} |",
                  flush=True)
        return
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
