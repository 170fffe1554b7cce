"""How many times the loops JAX computes the incomplete gamma function with run, replicated in
NumPy from ``jax._src.lax.special`` (JAX 0.8's ``_igamma_series`` and
``_igammac_continued_fraction``, ported from XLA's ``math.cc``).

JAX evaluates ``igamma``, ``igammac`` and ``igamma_grad_a`` (the derivative in the shape) with a
power series for the elements where ``x`` is small against the shape and a continued fraction
for the rest. Both run on the whole batch, each element's state kept once it has converged, as
one ``while_loop`` that stops when the last element converges: a node's cost is its elements
times the most iterations any of its elements takes in each loop. That depends on the values:
a truncated gamma regression's bounds (``x`` far from the shape) converge in a few iterations,
a copula's margin (``x`` near it) in dozens. Written by hand: neither JAX nor XLA reports the
iterations a loop would take.
"""

from __future__ import annotations

import numpy as np

#: Loops that may run away (a NaN in an argument) stop here; XLA's continued fraction stops
#: at 2000 iterations, its series never.
_MOST_ITERATIONS = 2000


def _log_prefactor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    with np.errstate(divide="ignore", invalid="ignore"):
        return a * np.log(x) - x - gammaln(a)


def _series_iterations(a: np.ndarray, x: np.ndarray, enabled: np.ndarray, derivative: bool,
                       eps: float) -> int:
    """Iterations of ``_igamma_series`` until its last enabled element converges."""
    a, x = a[enabled], x[enabled]
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    dc_da, dans_da = np.zeros_like(a), np.zeros_like(a)
    live = np.ones(a.shape, bool)
    iterations = 0
    with np.errstate(all="ignore"):
        while live.any() and iterations < _MOST_ITERATIONS:
            iterations += 1
            r = r + 1.0
            dc_da = dc_da * (x / r) - (c * x) / (r * r)
            dans_da = dans_da + dc_da
            c = c * (x / r)
            ans = ans + c
            test = np.abs(dc_da / dans_da) if derivative else c / ans
            live &= test > eps
    return iterations


def _fraction_iterations(a: np.ndarray, x: np.ndarray, enabled: np.ndarray, derivative: bool,
                         eps: float) -> int:
    """Iterations of ``_igammac_continued_fraction`` until its last enabled element converges
    (at most 2000)."""
    a, x = a[enabled], x[enabled]
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2, qkm2 = np.ones_like(x), x.copy()
    pkm1, qkm1 = x + 1.0, z * x
    with np.errstate(all="ignore"):
        ans = pkm1 / qkm1
        dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(x), np.zeros_like(x), np.zeros_like(x), -x)
        dans = (dpkm1 - ans * dqkm1) / qkm1
        live = np.ones(x.shape, bool)
        iterations = 0
        while live.any() and iterations < _MOST_ITERATIONS:
            iterations += 1
            c += 1.0
            y = y + 1.0
            z = z + 2.0
            yc = y * c
            pk = pkm1 * z - pkm2 * yc
            qk = qkm1 * z - qkm2 * yc
            nonzero = qk != 0
            r = pk / qk
            t = np.where(nonzero, np.abs((ans - r) / r), 1.0)
            ans = np.where(nonzero, r, ans)
            dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
            dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
            dans_new = np.where(nonzero, (dpk - ans * dqk) / qk, dans)
            change = np.where(nonzero, np.abs(dans_new - dans), 1.0)
            dans = dans_new
            pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
            dpkm2, dpkm1, dqkm2, dqkm1 = dpkm1, dpk, dqkm1, dqk
            scale = np.where(np.abs(pk) > 1.0 / eps, eps, 1.0)
            pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
            dpkm2, dpkm1, dqkm2, dqkm1 = (dpkm2 * scale, dpkm1 * scale, dqkm2 * scale,
                                          dqkm1 * scale)
            live &= (change if derivative else t) > eps
    return iterations


def igamma_loop_iterations(a, x, *, complement: bool = False, derivative: bool = False,
                           dtype: str = "float64") -> tuple[int, int]:
    """Iterations JAX's series and continued-fraction loops take for ``igamma(a, x)`` (or
    ``igammac``, ``complement``; or ``igamma_grad_a``, ``derivative``) over a batch.

    Parameters
    ----------
    a, x : array_like
        The shapes and the arguments, broadcast together.
    complement : bool
        ``igammac``: the series for the elements with ``x < 1`` or ``x < a``.
    derivative : bool
        ``igamma_grad_a``: the loops run until the derivative converges.
    dtype : {"float64", "float32"}
        The precision whose machine epsilon ends the loops.

    Returns
    -------
    (int, int)
        The series loop's iterations and the continued fraction's: each its slowest enabled
        element's, 0 where no element takes that loop.
    """
    a, x = (np.asarray(v, dtype=np.float64).ravel() for v in np.broadcast_arrays(a, x))
    eps = float(np.finfo(dtype).eps)
    with np.errstate(invalid="ignore"):
        bad = (np.isnan(a) | np.isnan(x) | (x < 0) | (a < 0) | np.isinf(a) | np.isinf(x)
               | (x == 0) | (a == 0)
               # exp(a log x - x - lgamma(a)) underflows in the precision: JAX leaves the
               # element out of both loops
               | (_log_prefactor(a, x) < -np.log(np.finfo(dtype).max)))
    if derivative or not complement:
        fraction = (x > 1) & (x > a) if derivative else (x >= 1) & (x > a)
    else:
        fraction = ~((x < 1) | (x < a))
    enabled = ~bad
    return (_series_iterations(a, x, enabled & ~fraction, derivative, eps),
            _fraction_iterations(a, x, enabled & fraction, derivative, eps))


#: ``census.series_evaluations`` keys of the loops' work (elements times iterations): the
#: value's loops (``igamma`` and ``igammac``) and the derivative in the shape's
#: (``igamma_grad_a``), each split into the series and the continued fraction; and the
#: elements whose shape is an array of their own, not one value broadcast (``own shape``:
#: each computes the shape's log-gamma, and digamma for the derivative).
LOOP_KEYS = ("igamma series", "igamma fraction", "igamma own shape", "igamma_grad_a series",
             "igamma_grad_a fraction", "igamma_grad_a own shape")
#: The loops' iterations in float32, whose machine epsilon ends them sooner, are kept under
#: the same keys with this suffix (``"igamma series float32"``).
FLOAT32_SUFFIX = " float32"


def loop_work(nodes: list, params: list, values: dict) -> dict[str, float]:
    """Elements times iterations of each of JAX's incomplete gamma loops that a leapfrog runs
    (:data:`LOOP_KEYS`; in float32 too, :data:`FLOAT32_SUFFIX`), with the arguments evaluated
    at ``values``.

    Parameters
    ----------
    nodes : list of (Apply, tuple of int)
        ``census.series_function_nodes``: each node and the positions of its inputs that
        depend on the parameters.
    params : list of Variable
        The value variables.
    values : dict
        Each value variable's value by name (the initial point).

    Returns
    -------
    dict of str to float
        Empty where no node is an incomplete gamma function.
    """
    from pymc_accel.graph_building import Evaluator

    gamma = [(node, free) for node, free in nodes
             if type(node.op.scalar_op).__name__ in ("GammaInc", "GammaIncC")]
    if not gamma:
        return {}
    arguments = Evaluator(list(params), [v for node, _ in gamma for v in node.inputs[:2]])(
        *[values[p.name] for p in params])
    work = dict.fromkeys(LOOP_KEYS, 0.0)
    work.update({key + FLOAT32_SUFFIX: 0.0 for key in LOOP_KEYS if "own" not in key})
    for i, (node, free) in enumerate(gamma):
        shape = np.asarray(arguments[2 * i])
        a, x = np.broadcast_arrays(shape, np.asarray(arguments[2 * i + 1]))
        own = a.size if shape.size == a.size and a.size > 1 else 0
        complement = type(node.op.scalar_op).__name__ == "GammaIncC"
        work["igamma own shape"] += own
        if 0 in free:
            work["igamma_grad_a own shape"] += own
        for dtype, suffix in (("float64", ""), ("float32", FLOAT32_SUFFIX)):
            series, fraction = igamma_loop_iterations(a, x, complement=complement, dtype=dtype)
            work["igamma series" + suffix] += a.size * series
            work["igamma fraction" + suffix] += a.size * fraction
            if 0 in free:
                series, fraction = igamma_loop_iterations(a, x, derivative=True, dtype=dtype)
                work["igamma_grad_a series" + suffix] += a.size * series
                work["igamma_grad_a fraction" + suffix] += a.size * fraction
    return work


def xla_gradient_stand_in(logp, nodes: list):
    """``logp`` with each node of ``nodes`` (``census.series_function_nodes``) replaced by an
    expression whose gradient costs what JAX's derivative of the function costs outside its
    loops: the census of the stand-in and its PyTensor gradient is what an XLA runtime runs.

    PyTensor differentiates the incomplete gamma function in its shape through a scalar loop
    of dozens of ops (``gammainc_grad``), and the incomplete beta function likewise, which a
    census of PyTensor's gradient counts for every element: 10x the forward's flops on a
    truncated gamma regression. JAX's derivative of ``logp`` is its own: the loops
    (:func:`loop_work`, priced apart) and, in the argument ``x``, ``x ** (a - 1) e ** -x`` up
    to a constant (``(1 - x) ** (b - 1)`` for the beta function), which the stand-in
    ``exp((a - 1) log x - x)`` (``exp((a - 1) log x + (b - 1) log1p(-x))``) stands for.

    Parameters
    ----------
    logp : TensorVariable
    nodes : list of (Apply, tuple of int)

    Returns
    -------
    TensorVariable
    """
    import pytensor.tensor as pt
    from pytensor.graph.replace import graph_replace

    replacements = {}
    for node, _ in nodes:
        name = type(node.op.scalar_op).__name__
        if name == "BetaInc":
            a, b, x = node.inputs
            stand_in = pt.exp((a - 1) * pt.log(x) + (b - 1) * pt.log1p(-x))
        else:
            a, x = node.inputs
            stand_in = pt.exp((a - 1) * pt.log(x) - x)
        # elementwise in the node's own inputs: the output's shape and broadcasting
        replacements[node.outputs[0]] = pt.cast(stand_in, node.outputs[0].dtype)
    return graph_replace([logp], replacements, strict=False)[0]
