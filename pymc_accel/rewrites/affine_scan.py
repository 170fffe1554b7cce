"""Replace a Scan whose step is affine in its state by a parallel prefix: depth O(log T).

``c_t = A_t c_{t-1} + b_t`` composes associatively: the pair ``(A, b)`` followed by ``(A', b')``
is ``(A' A, A' b + b')``. :class:`AffineScan` computes every ``c_t`` from all the pairs at once:

- on the JAX backend it lowers to ``jax.lax.associative_scan`` (work O(T), depth O(log T));
- elsewhere (Python, numba, C) it runs its PyTensor inner graph: recursive doubling over the
  static length (Hillis and Steele), ``ceil(log2 T)`` rounds of batched products. Doubling is
  written here because PyTensor has no associative scan; it does O(T log T) work for O(log T)
  sequential depth, and for a time-invariant ``A`` only needs ``A, A^2, A^4, ...``.

The gradient is PyTensor's own, through the inner graph (an ``OpFromGraph``), so logp and
gradient of a rewritten graph equal the original's to float tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytensor.tensor as pt
from pytensor.compile.builders import SymbolicOp
from pytensor.graph.basic import Variable
from pytensor.graph.replace import graph_replace, vectorize_graph
from pytensor.graph.traversal import ancestors

from pymc_accel.rewrites.affine_form import AffineStep, affine_step

#: Scans shorter than this are left sequential: a few steps cost less than the doubling rounds.
MIN_STEPS = 8


def _apply(kind: str, a: Any, x: Any, xp: Any) -> Any:
    """``A`` applied to ``x`` (elementwise, or a matrix on the last axis)."""
    if kind == "elem":
        return a * x
    return xp.sum(a * x[..., None, :], axis=-1)


def _compose(kind: str, later: Any, earlier: Any, xp: Any) -> Any:
    """The coefficient of ``later`` after ``earlier``."""
    if kind == "elem":
        return later * earlier
    return xp.matmul(later, earlier)


class AffineScan(SymbolicOp):
    """All states of ``c_t = A_t c_{t-1} + b_t``, ``t = 0..T-1``, from ``c_{-1} = c0``.

    Inputs are ``A`` (with a leading time axis when ``a_varies``), ``b`` of shape ``(T, *S)``
    and ``c0`` of shape ``S``; ``A`` has the state's number of dimensions (``kind="elem"``) or
    one more, ``(..., d, d)`` (``kind="mat"``). The output is ``(T, *S)``.
    """

    __props__ = ("kind", "a_varies")

    def __init__(self, input_types=None, *, kind: str = "mat", a_varies: bool = True, **kwargs):
        _register_jax()  # only once an AffineScan exists: the import costs 0.7 s of selection
        super().__init__(input_types, kind=kind, a_varies=a_varies, **kwargs)

    def build_inner_graph(self, a, b, c0):
        """Recursive doubling in PyTensor: ``ceil(log2 T)`` rounds."""
        steps = b.type.shape[0]
        first = a[0] if self.a_varies else a
        x = pt.concatenate([(_apply(self.kind, first, c0, pt) + b[0])[None], b[1:]], axis=0)
        k = 1
        while k < steps:
            if self.a_varies:
                coef = a[k:]
            else:
                coef = pt.shape_padleft(a, 1)
            x = pt.concatenate([x[:k], x[k:] + _apply(self.kind, coef, x[:-k], pt)], axis=0)
            if 2 * k < steps:
                if self.a_varies:
                    a = pt.concatenate([a[:k], _compose(self.kind, a[k:], a[:-k], pt)], axis=0)
                else:
                    a = _compose(self.kind, a, a, pt)
            k *= 2
        return [x]


_JAX_REGISTERED = False


def _register_jax() -> None:
    """Teach PyTensor's JAX linker to lower an AffineScan to ``jax.lax.associative_scan``."""
    global _JAX_REGISTERED
    if _JAX_REGISTERED:
        return
    _JAX_REGISTERED = True
    try:
        from pytensor.link.jax.dispatch import jax_funcify
    except ImportError:  # JAX not installed: the PyTensor inner graph is the only lowering
        return

    @jax_funcify.register(AffineScan)
    def _jax_affine_scan(op, node=None, **kwargs):
        import jax
        import jax.numpy as jnp

        kind, a_varies = op.kind, op.a_varies

        def affine_scan(a, b, c0):
            if not a_varies:
                a = jnp.broadcast_to(a, (b.shape[0], *a.shape))
            x = b.at[0].add(_apply(kind, a[0], c0, jnp))

            def combine(earlier, later):
                (a1, b1), (a2, b2) = earlier, later
                return _compose(kind, a2, a1, jnp), _apply(kind, a2, b1, jnp) + b2

            return jax.lax.associative_scan(combine, (a, x))[1]

        return affine_scan


@dataclass(frozen=True)
class RewrittenScan:
    """One Scan replaced by :class:`AffineScan`.

    Attributes
    ----------
    n_steps : int
    state_shape : tuple of int or None
    kind : {"elem", "mat"}
        Elementwise (scalar, diagonal) or matrix-vector recurrence.
    time_varying : bool
        Whether ``A_t`` changes with ``t``.
    """

    n_steps: int
    state_shape: tuple[int | None, ...]
    kind: str
    time_varying: bool

    def describe(self) -> str:
        """One line for the selection report."""
        what = "matrix" if self.kind == "mat" else "elementwise"
        varying = "time-varying" if self.time_varying else "constant"
        depth = max(1, math.ceil(math.log2(self.n_steps)))
        return (
            f"scan of {self.n_steps} steps, state {self.state_shape}, {varying} {what} "
            f"recurrence -> parallel prefix of depth {depth}"
        )


def _static_steps(node: Any) -> int | None:
    from pytensor.tensor.basic import get_underlying_scalar_constant_value

    try:
        return int(get_underlying_scalar_constant_value(node.inputs[0]))
    except Exception:
        return None


def _unfrozen_step(node: Any) -> tuple[AffineStep, list[Variable]] | None:
    """The affine step of a Scan with one carried state and no other outputs, on a fresh
    (unfrozen) copy of the inner graph whose inputs are returned alongside it."""
    op = node.op
    info = op.info
    if (
        info.n_mit_mot or info.n_mit_sot or info.n_nit_sot or info.n_untraced_sit_sot
        or info.as_while or info.sit_sot_in_slices != ((-1,),)
    ):
        return None
    fresh = [i.type() for i in op.fgraph.inputs]
    outs = op.fgraph.bind(fresh)
    state = op.inner_sitsot(fresh)[0]
    step = affine_step(state, op.inner_sitsot_outs(outs)[0])
    return (step, fresh) if step is not None else None


def scan_affine_step(node: Any) -> AffineStep | None:
    """The affine step of a Scan node with one carried state and no other outputs.

    Parameters
    ----------
    node : Apply
        A node whose op is a ``Scan``.

    Returns
    -------
    AffineStep or None
        ``None`` when the Scan carries more than one state, has extra outputs, taps other than
        the previous step, a ``while`` condition, or a step that is not affine in its state.
    """
    found = _unfrozen_step(node)
    return found[0] if found else None


def _pad_after_time(x: Variable, ndim: int, has_time: bool) -> Variable:
    """Insert broadcastable axes so ``x`` has ``ndim`` dimensions besides its time axis."""
    missing = ndim - (x.ndim - has_time)
    if missing <= 0:
        return x
    return pt.expand_dims(x, tuple(range(int(has_time), int(has_time) + missing)))


def parallel_scan_output(node: Any, min_steps: int = MIN_STEPS) -> tuple[Variable, RewrittenScan] | None:
    """A replacement for an affine Scan's output buffer, or ``None`` to leave it alone.

    Parameters
    ----------
    node : Apply
        A ``Scan`` node.
    min_steps : int
        Shorter scans are left alone.

    Returns
    -------
    (Variable, RewrittenScan) or None
        The ``(T + 1, *S)`` buffer (initial state first, as the Scan's own output) and what was
        done.
    """
    steps = _static_steps(node)
    if steps is None or steps < max(1, min_steps):
        return None
    found = _unfrozen_step(node)
    if found is None:
        return None
    step, fresh = found
    op, outer = node.op, node.inputs
    buffer_in = op.outer_sitsot(outer)[0]
    out_type = node.outputs[0].type
    if out_type.shape[0] not in (None, steps + 1):
        return None
    c0 = buffer_in[0]
    inner_seqs = op.inner_seqs(fresh)
    replace = dict(zip(op.inner_non_seqs(fresh), op.outer_non_seqs(outer), strict=True))
    replace[op.inner_sitsot(fresh)[0]] = c0  # b reads the state's shape only
    seqs = set(inner_seqs)
    a_varies = any(v in seqs for v in ancestors([step.A]))
    b_varies = any(v in seqs for v in ancestors([step.b]))
    a, b = graph_replace([step.A, step.b], replace, strict=False)
    if inner_seqs:
        outer_seqs = [s[:steps] for s in op.outer_seqs(outer)]
        a, b = vectorize_graph([a, b], dict(zip(inner_seqs, outer_seqs, strict=True)))
    nd = c0.ndim
    dtype = out_type.dtype
    a = _pad_after_time(pt.cast(a, dtype), nd + (step.kind == "mat"), a_varies)
    b = _pad_after_time(pt.cast(b, dtype), nd, b_varies)
    b = pt.broadcast_to(b if b_varies else b[None], (steps, *[c0.shape[i] for i in range(nd)]))
    b = pt.specify_shape(b, (steps, *out_type.shape[1:]))
    states = AffineScan(kind=step.kind, a_varies=a_varies)(a, b, pt.cast(c0, dtype))
    buffer = pt.concatenate([pt.cast(c0, dtype)[None], states], axis=0)
    buffer = out_type.filter_variable(pt.specify_shape(buffer, out_type.shape))
    return buffer, RewrittenScan(steps, tuple(out_type.shape[1:]), step.kind, a_varies)


def parallelize_affine_scans(
    outputs: list[Variable], *, min_steps: int = MIN_STEPS
) -> tuple[list[Variable], list[RewrittenScan]]:
    """Rewrite every affine-recurrence Scan feeding ``outputs`` into a parallel prefix.

    Parameters
    ----------
    outputs : list of Variable
        A graph's outputs (e.g. a model's logp). Not modified: a rewritten copy is returned.
    min_steps : int, default :data:`MIN_STEPS`
        Scans with fewer steps are left sequential.

    Returns
    -------
    (list of Variable, list of RewrittenScan)
        The rewritten outputs (the same variables when nothing was rewritten) and one entry per
        rewritten Scan.
    """
    from pytensor.graph.traversal import io_toposort

    done: list[RewrittenScan] = []
    replacements: dict[Variable, Variable] = {}
    inputs = [v for v in ancestors(outputs) if v.owner is None]
    for node in io_toposort(inputs, outputs):
        if type(node.op).__name__ != "Scan":
            continue
        found = parallel_scan_output(node, min_steps)
        if found is not None:
            replacements[node.outputs[0]] = found[0]
            done.append(found[1])
    if not replacements:
        return list(outputs), done
    return list(graph_replace(list(outputs), replacements, strict=False)), done
