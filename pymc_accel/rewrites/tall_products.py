"""A tall, narrow data matrix's products stored the way XLA's CPU dot reads fast.

A regression's linear predictor ``X @ beta`` (``X`` a constant of ``n`` rows and ``p``
columns, ``n`` well above ``p``) is ``n`` dot products of length ``p``, each along a row of
``X``. XLA's CPU dot runs that pattern slowly when the rows are short, and slowest in float32:
on the 2-core AVX2 machine, the value and gradient of ``tanh(X @ b).sum()`` in a compiled loop
took 19.7 µs (float64) and 16.9 µs (float32) at 2000 x 10, 44 and 56 µs at 5000 x 20, and
2.36 and 1.08 ms at 100,000 x 20. With ``X`` held as its transpose ``XT`` (a ``(p, n)``
constant) the same product is ``beta @ XT``, which contracts the matrix's leading axis as the
gradient's ``X.T @ r`` does: 9.8 and 4.5 µs, 39 and 17 µs, 1.40 and 0.37 ms. From 128 columns
on the two forms are within 7% of each other either way (1000 x 200: 49.0 against 52.4 µs in
float64, 30.1 against 30.6 in float32; 1000 x 1000: 289 against 307), so only matrices of at
most :data:`MAX_COLUMNS` columns and at least :data:`MIN_ROWS_PER_COLUMN` rows a column are
rewritten (``bench/time_tall_products.py``, docs/results/tall-products-cpu-2026-11-28.md).
NumPyro's leapfrog on the zoo's regressions ran 1.4x to 2.7x faster in float32 and up to 1.8x
in float64 (docs/benchmarks.md, "A tall matrix's products held transposed").

Written by hand: neither PyTensor's rewrites nor XLA's turn ``X @ b`` around; XLA runs the
product as the graph writes it. (Written ``b @ X.T`` in JAX, the transpose of a constant is
folded into a transposed constant, and the product runs as fast as with ``XT``: 14.9 against
40.8 µs at 5000 x 20 in float32. The rewrite holds the transposed copy itself, so the speed
does not rest on that folding.) The rewrite changes the order of the sums in each product, so
the log density moves in its last bits; the draws of a seeded run stay reproducible.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

#: Columns above which a matrix is left as it is: the two forms time alike there.
MAX_COLUMNS = 128
#: Rows a column below which a matrix is left as it is (a square matrix's rows are long enough).
MIN_ROWS_PER_COLUMN = 4


def _data(var: Any) -> Any | None:
    """The array of a constant or shared variable; ``None`` for anything else."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.tensor.variable import TensorConstant

    if isinstance(var, TensorConstant):
        return var.data
    if isinstance(var, SharedVariable):
        return var.get_value(borrow=True)
    return None


def _is_tall(data: Any) -> bool:
    import numpy as np

    if getattr(data, "ndim", 0) != 2 or not np.issubdtype(data.dtype, np.floating):
        return False
    rows, columns = data.shape
    return 0 < columns <= MAX_COLUMNS and rows >= MIN_ROWS_PER_COLUMN * columns


def _column(var: Any) -> bool:
    """A vector, or a matrix of one column (PyTensor's ``dot(X, v)`` makes ``v`` one)."""
    return var.ndim == 1 or (var.ndim == 2 and var.type.shape[1] == 1)


def _row_product(vector: Any, held: Any) -> Any:
    """``dot(X, v)`` from ``XT``: ``dot(v, XT)``, or ``dot(v.T, XT).T`` for a column ``v``
    ((1, p) @ (p, n) -> (1, n) -> (n, 1))."""
    import pytensor.tensor as pt

    return pt.dot(vector, held) if vector.ndim == 1 else pt.dot(vector.T, held).T


def transposed_tall_products(outputs: list[Any], form: Any = None) -> tuple[list[Any], int]:
    """``outputs`` with every ``dot(X, v)`` of a tall, narrow constant ``X`` computed as
    ``dot(v.T, XT).T``, ``XT`` a constant holding ``X``'s transpose in row-major order.

    A matrix used anywhere else in the graph is left as it is, so the rewrite never holds a
    second copy of the data.

    Parameters
    ----------
    outputs : list of TensorVariable
        The graph's outputs (a log density).
    form : callable, optional
        ``form(v, XT)``, the product of ``X`` and ``v`` built from the transposed constant, of
        ``dot(X, v)``'s shape; by default ``dot(v.T, XT).T`` (a benchmark times other forms).

    Returns
    -------
    (list of TensorVariable, int)
        The outputs, rewritten where a product qualified, and how many products were.
    """
    import numpy as np
    import pytensor.tensor as pt
    from pytensor.graph.replace import graph_replace
    from pytensor.graph.traversal import applys_between, graph_inputs
    from pytensor.tensor.math import Dot

    nodes = list(applys_between(list(graph_inputs(outputs)), outputs))
    uses = Counter(id(i) for node in nodes for i in node.inputs)
    uses.update(id(o) for o in outputs)
    replacements = {}
    for node in nodes:
        if not isinstance(node.op, Dot):
            continue
        matrix, vector = node.inputs
        data = _data(matrix)
        if data is None or uses[id(matrix)] != 1 or not _is_tall(data) or not _column(vector):
            continue
        held = pt.constant(np.ascontiguousarray(np.asarray(data).T),
                           name=f"{matrix.name}.T" if matrix.name else None)
        replacements[node.outputs[0]] = (form or _row_product)(vector, held)
    if not replacements:
        return list(outputs), 0
    return list(graph_replace(outputs, replacements, strict=False)), len(replacements)
