"""A GP kernel's distance between coinciding inputs held at an exact zero.

PyMC's stationary kernels (``pm.gp.cov.Stationary``) write the squared distance between scaled
inputs ``A`` and ``B`` as ``clip(-2 A B' + |A|^2 + |B|^2, 0, inf)``, and the Matern and
exponential kernels take the distance as ``sqrt(sqd + 1e-12)``. Where two inputs coincide (every
diagonal element of ``K(X, X)``, and data points that are also inducing points) the squared
distance is zero only because its terms cancel, its derivative in a length scale is zero the
same way, and the square root's derivative there is 5e5. XLA's CPU compiler fuses the squared
distance into each of its consumers, computes it again in each, and contracts products and sums
into fused multiply-adds in some of those places and not in others: the same element rounds a
little below zero in one (``clip``'s mask drops its derivative) and a little above in another
(kept), the terms no longer cancel, and the 5e5 carries what is left into the gradient. The log
density stays right; its gradient does not.

Measured (docs/benchmarks.md, "JAX's compiled gradient beside PyTensor's"): on the user sweep's
sparse GP (``pm.gp.MarginalApprox``, FITC, Matern 5/2, ten inducing points, two of them on data
points) the float64 gradient of PyMC's jaxified log density under ``jax.jit`` was off by a
relative 195 at the float32 check's points, 8e-13 evaluated op by op, and 4e-13 under
``jax.jit`` with XLA kept to AVX, which has no fused multiply-add
(``XLA_FLAGS=--xla_cpu_max_isa=AVX``; ``bench/compare_jax_gradient.py``), and
``pm.sample(nuts_sampler="numpyro")`` on it took 186 s for 2 x (300 + 300) draws, 1020 leapfrogs
a draw against NumPyro's cap of 1023, to an R-hat of 2.45 and a noise scale of 1.46 where PyMC's
NUTS found 0.28 in 9.9 s (``bench/sample_coincident_gp.py``). Which programs go wrong is the
compiler's choice: the zoo's larger sparse GP's gradient was right with the position a list of
arrays and off by 136 with it one flat vector, as pymc-accel's NumPyro runs hand it, and
pymc-accel's NumPyro run of it sampled well with the rewrite and without: inside NumPyro's
program XLA fused it otherwise.

The square root is one amplifier; a near-singular kernel matrix is another. PyMC's squared
exponential kernel (``ExpQuad``, as ``pm.gp.TP`` and most latent GPs use it) takes
``exp(-0.5 clip(sqd, 0, inf))`` with no root, and the Cholesky factor of a smooth kernel over
close inputs carries the diagonal's rounding into the gradient through its inverse: the user
sweep's latent Student-t process (25 inputs) ran NumPyro's chains with a gradient off by a
relative 8e3 to 3.4e4 at their last draws, two fixed leapfrog steps in a loop under ``pmap``
(NumPyro's chains on XLA's CPU devices) ended off by 105, and JAX's gradient of the same log
density compiled on its own, or under ``vmap``, was right: XLA fused the loop's program
otherwise (``bench/numpyro_chain_methods.py --model student_t_process --leapfrogs 2
--unheld``). So the search takes a guarded sum of a column and a row (``|a|^2[:, None] +
|b|^2[None, :]``, :func:`_outer_sum`) wherever it is used, root or none.

The same happens to a kernel a user writes by hand with another guard against a negative
squared distance: the sweep's sparse GP with its kernel's ``clip`` made ``maximum(sqd, 0)``,
``abs(sqd)`` or ``switch(sqd > 0, sqd, 0)`` had JAX's compiled gradient off by a relative 120,
390 and 230 (``sparse_gp_maximum_kernel`` and its neighbours in ``bench/sweep_user_models.py``;
docs/results/jax-gradient-cpu-2026-12-01-hand-kernels-at-3563496.md). Without a guard
(``sqrt(sqd + 1e-12)``) it was right to 1.1e-13: every guard's derivative jumps where the sum
crosses its bound, and that jump is what turns a rounding into a wrong gradient.

:func:`zeroed_coincident_distances` finds each sum or difference under a square root through
such a guard (``sqrt(c + guard(sqd))``) and each guarded sum of a column and a row
(:func:`guarded_distances`), evaluates it at the points given (the initial point and a jittered
copy), and where an element is zero to within rounding at all of them (:data:`ROUNDING_ULPS`
units in the last place of the largest element), takes it as an exact zero, by a constant mask:
the value is the same as before to rounding, and its derivative is the exact zero the log
density's is, in every copy XLA makes. Inputs that are themselves free (a latent-variable GP)
coincide at the initial point and not at a jittered one, so only the distances that are zero for
every value of the parameters are held.

Written by hand: PyTensor has no such rewrite, and XLA has no option that keeps one
expression's roundings the same wherever it computes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: An element of a squared distance within this many units in the last place (float64) of the
#: matrix's largest element, at every point evaluated, is taken to be zero for every parameter
#: value. A cancelled sum of ``|A|^2 + |B|^2`` terms leaves a few units; a distance of two
#: distinct inputs is that small only within 1e-6 length scales of each other, where PyMC's own
#: ``1e-12`` already sets the kernel's distance.
ROUNDING_ULPS = 64


def _scalar_op(var: Any) -> Any:
    from pytensor.tensor.elemwise import Elemwise

    op = var.owner.op if var.owner is not None else None
    return op.scalar_op if isinstance(op, Elemwise) else None


def _under_root(node: Any) -> Any:
    """The argument of ``node`` where it is a square root (``sqrt(x)``, ``x ** 0.5``), else
    ``None``."""
    from pytensor.scalar.basic import Pow, Sqrt

    from pymc_accel.census import _constant_scalar

    op = _scalar_op(node.outputs[0])
    if isinstance(op, Sqrt):
        return node.inputs[0]
    if isinstance(op, Pow) and _constant_scalar(node.inputs[1]) == 0.5:
        return node.inputs[0]
    return None


def _guard(var: Any) -> tuple[Any, float] | None:
    """The expression ``var`` keeps from going negative and the constant it holds it at, where
    ``var`` is such a guard: ``clip(x, c, ...)``, ``maximum(x, c)`` (either order), ``abs(x)``
    (at 0) or ``switch(cond, x, c)`` (either branch), ``c`` a constant; else ``None``. Each
    one's derivative jumps where ``x`` crosses its bound, which is what carries a rounding of a
    cancelled sum into the gradient."""
    from pytensor.scalar.basic import Abs, Clip, ScalarMaximum, Switch

    from pymc_accel.census import _constant_scalar

    op = _scalar_op(var)
    if op is None:
        return None
    inputs = var.owner.inputs
    if isinstance(op, Clip):
        bound = _constant_scalar(inputs[1])
        return (inputs[0], bound) if bound is not None else None
    if isinstance(op, Abs):
        return inputs[0], 0.0
    pairs = ((inputs, inputs[::-1]) if isinstance(op, ScalarMaximum) and len(inputs) == 2
             else ((inputs[1], inputs[2]), (inputs[2], inputs[1])) if isinstance(op, Switch)
             else ())
    for data, other in pairs:
        bound = _constant_scalar(other)
        if bound is not None and _constant_scalar(data) is None:
            return data, bound
    return None


def _guarded(var: Any) -> Any:
    """The expression ``var`` keeps from going negative, where ``var`` is a guard
    (:func:`_guard`), else ``None``."""
    guard = _guard(var)
    return None if guard is None else guard[0]


def _outer_sum(var: Any) -> bool:
    """Whether ``var`` is a sum or difference of two or more dimensions with, among its terms
    (through nested sums), a column and a row: the ``|a|^2[:, None] + |b|^2[None, :]`` of a
    squared distance between two sets of points, PyMC's ``Stationary.square_dist``."""
    from pytensor.scalar.basic import Add, Sub

    if var.ndim < 2 or not isinstance(_scalar_op(var), (Add, Sub)):
        return False
    shapes, stack = set(), [var]
    while stack:
        term = stack.pop()
        if isinstance(_scalar_op(term), (Add, Sub)):
            stack.extend(term.owner.inputs)
        elif term.ndim >= 2:
            shapes.add(tuple(term.type.broadcastable[-2:]))
    return (False, True) in shapes and (True, False) in shapes


def guarded_distances(outputs: list[Any]) -> list[Any]:
    """The squared distances in ``outputs``' graph taken through a guard against negative
    values: a sum or difference that a square root takes through the guard, with or without a
    constant added (``sqrt(c + guard(x))``), and a sum of a column and a row
    (:func:`_outer_sum`) guarded at a finite bound wherever it is used (a log density's bounds
    check, ``switch(cond, logp, -inf)``, is not a distance's guard); ``guard`` one of
    :func:`_guard`'s.

    PyMC's ``Stationary._sqrt`` of its ``square_dist`` is ``sqrt(1e-12 + clip(x, 0, inf))``
    (Matern, exponential); the squared exponential and rational quadratic kernels take
    ``clip(x, 0, inf)`` itself. A kernel written by hand may guard its
    ``|a|^2 + |b|^2 - 2 a.b`` with ``maximum``, ``abs`` or ``switch`` instead."""
    from pytensor.graph.traversal import applys_between, graph_inputs
    from pytensor.scalar.basic import Add, Sub

    from pymc_accel.census import _constant_scalar

    found = []
    for node in applys_between(list(graph_inputs(outputs)), outputs):
        guard = _guard(node.outputs[0])  # at a finite bound: not switch(cond, logp, -inf)
        if (guard is not None and np.isfinite(guard[1]) and _outer_sum(guard[0])
                and guard[0] not in found):
            found.append(guard[0])
        rooted = _under_root(node)
        if rooted is None:
            continue
        if isinstance(_scalar_op(rooted), Add) and len(rooted.owner.inputs) == 2:
            for term, other in (rooted.owner.inputs, rooted.owner.inputs[::-1]):
                if _constant_scalar(other) is not None:
                    rooted = term
                    break
        summed = _guarded(rooted)
        if (summed is not None and isinstance(_scalar_op(summed), (Add, Sub))
                and summed not in found):
            found.append(summed)
    return found


def zeroed_coincident_distances(
    outputs: list[Any], inputs: list[Any], points: Callable[[], list[list[Any]]],
) -> tuple[list[Any], int]:
    """``outputs`` with each guarded squared distance (:func:`guarded_distances`) an exact zero
    where it is zero to rounding at every one of ``points``.

    Parameters
    ----------
    outputs : list of TensorVariable
        The graph's outputs (a log density).
    inputs : list of TensorVariable
        The graph's inputs (its value variables).
    points : callable
        Called only where the graph has a guarded distance: a list of points, each a list of
        values of ``inputs`` in their order.

    Returns
    -------
    (list of TensorVariable, int)
        The outputs, rewritten where a distance had coinciding elements, and how many elements
        were held at zero. Where ``points`` or their evaluation raises, the outputs as given.
    """
    import pytensor.tensor as pt
    from pytensor.graph.replace import graph_replace

    summed = guarded_distances(outputs)
    if not summed:
        return list(outputs), 0
    try:
        masks = _coinciding(inputs, summed, points())
    except Exception:  # no point to judge by (an initial point PyMC cannot compute, a value the
        # evaluator cannot): the log density stays as it is written, never a run's failure
        return list(outputs), 0
    replacements = {}
    held = 0
    for distance, mask in zip(summed, masks, strict=True):
        if mask is None or not mask.any():
            continue
        held += int(mask.sum())
        replacements[distance] = pt.switch(pt.constant(mask), pt.zeros_like(distance), distance)
    if not replacements:
        return list(outputs), 0
    return list(graph_replace(outputs, replacements, strict=False)), held


def _coinciding(inputs: list[Any], squared: list[Any], points: list[list[Any]]) -> list[Any]:
    """For each of ``squared``, the elements zero to rounding at every one of ``points`` (a
    boolean array), or ``None`` where there are no points."""
    from pymc_accel.graph_building import Evaluator

    evaluate = Evaluator(inputs, squared)
    masks: list[Any] = [None] * len(squared)
    for point in points:
        for i, value in enumerate(evaluate(*point)):
            value = np.asarray(value, dtype=np.float64)
            if np.all(np.isfinite(value)):
                scale = float(np.max(np.abs(value), initial=0.0))
                zero = np.abs(value) <= ROUNDING_ULPS * np.finfo(np.float64).eps * scale
            else:  # no scale to judge rounding by: hold nothing
                zero = np.zeros(value.shape, dtype=bool)
            masks[i] = zero if masks[i] is None else masks[i] & zero
    return masks
