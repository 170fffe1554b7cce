"""Is a Scan's step affine in its carried state? Read the linear part off the step's graph.

A step ``c_t = f(c_{t-1}, x_t, theta)`` is affine when ``f(c) = A c + b`` with ``A`` and ``b`` free
of ``c``. ``A`` is either elementwise (``a * c``: scalar and diagonal recurrences) or a matrix
acting on the state's last axis (``K @ c``, one matrix per subject of a batch, or one shared).

Written by hand because PyTensor has no linearity analysis. The walk is structural: it follows
the state through the ops users write for matrix-vector recurrences (``pt.dot``, ``@``,
``pt.matmul`` with an expanded column, ``c @ K.T``, ``(K * c[..., None, :]).sum(-1)``,
``pt.einsum``, ``+ - * /`` by state-free terms) and gives up, answering "not affine", on anything
else. A "no" is always safe: the scan is then left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytensor.tensor as pt
from pytensor.graph.basic import Variable
from pytensor.graph.traversal import ancestors

_IDENTITY = "identity"


@dataclass(frozen=True)
class _Lin:
    """Linear part of a state-dependent intermediate ``v``, as a map of the state ``s``.

    ``kind`` is ``"elem"`` (``L s = coef * s``, ``coef`` broadcastable to ``s``, or the identity)
    or ``"mat"`` (``L s = coef @ s`` on the last axis). ``layout`` says how ``v`` holds ``L s``:
    ``"state"`` (as is), ``"col"`` (``(L s)[..., None]``), ``"row"`` (``(L s)[..., None, :]``) or
    ``"outer"`` (``K[..., i, j] * (L s)[..., j]`` with ``K = outer``).
    """

    kind: str
    coef: Any
    layout: str = "state"
    outer: Any = None


@dataclass(frozen=True)
class AffineStep:
    """``c_t = A c_{t-1} + b`` read off a Scan's inner graph (inner-graph variables).

    Attributes
    ----------
    kind : {"elem", "mat"}
        ``A`` multiplies elementwise, or is a matrix on the state's last axis.
    A : Variable
        The coefficient: broadcastable to the state (``elem``) or ``(..., d, d)`` (``mat``).
    b : Variable
        The step's value at a zero state.
    """

    kind: str
    A: Variable
    b: Variable


class _NotAffine(Exception):
    pass


def _pad_to(x: Variable, ndim: int) -> Variable:
    x = pt.as_tensor_variable(x)
    if x.ndim > ndim:
        raise _NotAffine("coefficient broadcasts the state to more dimensions")
    return pt.shape_padleft(x, ndim - x.ndim) if x.ndim < ndim else x


class _Walker:
    def __init__(self, state: Variable) -> None:
        self.state = state
        self.nd = state.ndim
        self.d = state.type.shape[-1] if state.ndim else None
        self.cache: dict[Variable, _Lin | None] = {}

    def depends(self, var: Variable) -> bool:
        return any(a is self.state for a in ancestors([var]))

    # --- algebra on linear parts -------------------------------------------------------
    def to_mat(self, lin: _Lin) -> Any:
        if lin.kind == "mat":
            return lin.coef
        if self.d is None:
            raise _NotAffine("state size unknown")
        eye = pt.eye(self.d, dtype=self.state.dtype)
        if lin.coef == _IDENTITY:
            return eye
        return eye * _pad_to(lin.coef, self.nd)[..., :, None]

    def scale(self, lin: _Lin, g: Variable) -> _Lin:
        if lin.kind == "elem":
            coef = g if lin.coef == _IDENTITY else lin.coef * g
            return _Lin("elem", coef)
        return _Lin("mat", _pad_to(g, self.nd)[..., :, None] * lin.coef)

    def add(self, a: _Lin, b: _Lin) -> _Lin:
        if a.kind == b.kind == "elem":
            ca = 1.0 if a.coef == _IDENTITY else a.coef
            cb = 1.0 if b.coef == _IDENTITY else b.coef
            return _Lin("elem", pt.as_tensor_variable(ca) + cb)
        return _Lin("mat", self.to_mat(a) + self.to_mat(b))

    def left_mul(self, k: Variable, lin: _Lin, layout: str) -> _Lin:
        """The linear part of ``k @ (L s)``."""
        if lin.kind == "elem" and lin.coef == _IDENTITY:
            return _Lin("mat", k, layout)
        if lin.kind == "elem":
            return _Lin("mat", k * _pad_to(lin.coef, self.nd)[..., None, :], layout)
        return _Lin("mat", pt.matmul(k, lin.coef), layout)

    # --- the walk ----------------------------------------------------------------------
    def lin(self, var: Variable) -> _Lin | None:
        """Linear part of ``var`` in the state, ``None`` when ``var`` does not depend on it."""
        if var is self.state:
            return _Lin("elem", _IDENTITY)
        if var in self.cache:
            return self.cache[var]
        result = self._lin(var) if self.depends(var) else None
        self.cache[var] = result
        return result

    def _lin(self, var: Variable) -> _Lin:
        node = var.owner
        op = node.op
        name = type(op).__name__
        core = type(getattr(op, "core_op", op)).__name__
        if name == "Elemwise":
            return self._elemwise(var, node)
        if name == "DimShuffle":
            return self._dimshuffle(node)
        if core in ("Dot", "Matmul", "Dot22"):
            return self._matmul(node)
        if name == "Subtensor":
            return self._subtensor(node)
        if name == "Sum":
            src = self.lin(node.inputs[0])
            axes = tuple(a % node.inputs[0].ndim for a in op.axis) if op.axis is not None else ()
            if src.layout == "outer" and axes == (node.inputs[0].ndim - 1,):
                return self.left_mul(src.outer, src, "state")
            raise _NotAffine("sum over other than a matrix-vector product's inner axis")
        if name in ("SpecifyShape", "ViewOp", "OutputGuard"):
            return self.lin(node.inputs[0])
        if hasattr(op, "fgraph") and hasattr(op, "is_inline"):  # OpFromGraph, e.g. Einsum
            from pytensor.compile.rewriting import inline_ofg_node

            return self.lin(inline_ofg_node(node)[node.outputs.index(var)])
        raise _NotAffine(f"{name} of the state")

    def _elemwise(self, var: Variable, node: Any) -> _Lin:
        sname = type(node.op.scalar_op).__name__
        ins = [(i, self.lin(i)) for i in node.inputs]
        dep = [(i, lin) for i, lin in ins if lin is not None]
        free = [i for i, lin in ins if lin is None]
        if sname in ("Add", "Sub"):
            if var.ndim != self.nd or any(lin.layout != "state" or i.ndim != self.nd for i, lin in dep):
                raise _NotAffine("sum that broadcasts the state")
            total = None
            for pos, (i, lin) in enumerate(ins):
                if lin is None:
                    continue
                if sname == "Sub" and pos == 1:
                    lin = self.scale(lin, pt.constant(-1.0, dtype=var.dtype))
                total = lin if total is None else self.add(total, lin)
            return total
        if sname == "Neg":
            return self.scale(dep[0][1], pt.constant(-1.0, dtype=var.dtype))
        if sname in ("Identity", "Cast") and var.dtype == node.inputs[0].dtype:
            return dep[0][1]
        if len(dep) != 1:
            raise _NotAffine(f"{sname} of the state by itself")
        (i, lin), = dep
        if sname == "TrueDiv" and node.inputs[0] is i:
            g = 1.0 / node.inputs[1]
        elif sname == "Mul":
            g = free[0]
            for f in free[1:]:
                g = g * f
        else:
            raise _NotAffine(f"{sname} of the state")
        if lin.layout == "state" and var.ndim == self.nd:
            return self.scale(lin, g)
        if lin.layout == "row" and var.ndim == self.nd + 1 and lin.kind in ("elem", "mat"):
            return _Lin(lin.kind, lin.coef, "outer", _pad_to(g, self.nd + 1))
        raise _NotAffine("product that broadcasts the state")

    def _dimshuffle(self, node: Any) -> _Lin:
        src = self.lin(node.inputs[0])
        order = tuple(node.op.new_order)
        n = node.inputs[0].ndim
        if self.nd == 0:
            raise _NotAffine("reshaped scalar state")
        keep = tuple(range(n))
        if src.layout == "state" and order == keep + ("x",):
            return _Lin(src.kind, src.coef, "col")
        if src.layout == "state" and order == keep[:-1] + ("x", n - 1):
            return _Lin(src.kind, src.coef, "row")
        if src.layout == "col" and order == keep[:-1]:
            return _Lin(src.kind, src.coef, "state")
        if src.layout == "row" and order == keep[:-2] + (n - 1,):
            return _Lin(src.kind, src.coef, "state")
        raise _NotAffine(f"dimshuffle {order} of the state")

    def _matmul(self, node: Any) -> _Lin:
        x, y = node.inputs
        lx, ly = self.lin(x), self.lin(y)
        if lx is None and ly is not None and ly.layout == "col":
            return self.left_mul(_pad_to(x, self.nd + 1), ly, "col")
        if ly is None and lx is not None and (
            lx.layout == "row" or (lx.layout == "state" and self.nd >= 2)
        ):
            yt = pt.swapaxes(y, -1, -2)
            return self.left_mul(_pad_to(yt, self.nd + (1 if lx.layout == "row" else 0)), lx, lx.layout)
        raise _NotAffine("matrix product not of the form K @ state")

    def _subtensor(self, node: Any) -> _Lin:
        src = self.lin(node.inputs[0])
        x = node.inputs[0]
        idx = node.op.idx_list
        full = slice(None, None, None)
        scalars = node.inputs[1:]
        if len(scalars) != 1:
            raise _NotAffine("indexing of the state")
        try:
            value = int(pt.get_underlying_scalar_constant_value(scalars[0]))
        except Exception:
            raise _NotAffine("indexing of the state") from None
        ints = [k for k, e in enumerate(idx) if not isinstance(e, slice)]
        if value not in (0, -1) or len(ints) != 1 or any(e != full for e in idx if isinstance(e, slice)):
            raise _NotAffine("indexing of the state")
        axis = ints[0]
        if src.layout == "col" and axis == x.ndim - 1 and len(idx) == x.ndim:
            return _Lin(src.kind, src.coef, "state")
        if src.layout == "row" and axis == x.ndim - 2:
            return _Lin(src.kind, src.coef, "state")
        raise _NotAffine("indexing of the state")


def affine_step(state: Variable, out: Variable) -> AffineStep | None:
    """Write ``out`` as ``A state + b`` if it is affine in ``state``; otherwise ``None``.

    Parameters
    ----------
    state : Variable
        The carried state (a Scan's inner sit-sot input).
    out : Variable
        The next state (the matching inner output), of the same type.

    Returns
    -------
    AffineStep or None
        ``None`` when ``out`` is not affine in ``state``, does not depend on it, or is written
        with ops the walk does not follow.
    """
    if out.type.ndim != state.type.ndim or not out.dtype.startswith("float"):
        return None
    walker = _Walker(state)
    try:
        lin = walker.lin(out)
    except _NotAffine:
        return None
    if lin is None or lin.layout != "state":
        return None
    from pytensor.graph.replace import graph_replace

    b = graph_replace(out, {state: pt.zeros_like(state)}, strict=False)
    if lin.kind == "elem":
        coef = pt.ones((), dtype=out.dtype) if lin.coef == _IDENTITY else lin.coef
        return AffineStep("elem", pt.cast(coef, out.dtype), b)
    coef = pt.as_tensor_variable(lin.coef)
    if walker.d is not None and coef.type.shape[-2:] not in ((walker.d, walker.d),):
        if any(s not in (None, walker.d) for s in coef.type.shape[-2:]):
            return None
    return AffineStep("mat", pt.cast(coef, out.dtype), b)

