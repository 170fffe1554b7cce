"""An op census of a PyTensor graph: flops, bytes and kernels per evaluation, by category.

Written by hand because no library counts flops of a PyTensor graph. Shapes must be static
(:func:`pymc_accel.profile.profile_model` freezes the model's dims and data first), so nothing is
evaluated. Figures are estimates for the cost model, not exact operation counts: an
elementwise scalar op costs 1 flop, a transcendental one about 10.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from pytensor.graph.traversal import io_toposort

CATEGORIES = ("elementwise", "reduction", "indexing", "dense_linalg", "scan", "other")
#: Ranks a kernel is counted under in ``OpCensus.compiled_kernels_by_rank``: the largest number
#: of dimensions among its inputs and outputs (a scalar op, a loop over a vector, a loop nest).
RANKS = ("0", "1", "2+")

# Ops that only relabel or view data: no kernel, no flops.
_FREE_OPS = {
    "DimShuffle", "MakeVector", "ScalarFromTensor", "TensorFromScalar", "Shape", "Shape_i",
    "SpecifyShape", "Reshape", "CheckParameterValue", "Assert", "Subtensor", "ViewOp",
    "OutputGuard", "DeepCopyOp",
}
_TRANSCENDENTAL = (
    "Exp", "Log", "Sigmoid", "Softplus", "Erf", "Gamma", "Psi", "Tanh", "Pow", "Sqrt",
    "Cos", "Sin", "Tri", "Inv", "Bessel", "Betainc", "Digamma",
)
#: Flops the census charges one evaluation of a transcendental scalar function (any other scalar
#: op: 1), and so the flops of one ``exp`` that machine calibration times.
TRANSCENDENTAL_FLOPS = 10.0
#: What one evaluation of a transcendental scalar function costs in a numba-compiled loop, in
#: evaluations of ``exp`` (5.4 ns here): each function summed over 4,000 elements inside
#: PyTensor's numba mode, less the same loop without it (2-core fit machine, 2026-11-24; numpy's
#: own ``exp``, what machine calibration times, took 5.3 ns). numba calls libm for each
#: element, unvectorised, so ``softplus`` (16.6 ns) and ``tanh`` (15.0) cost three times ``exp``
#: and ``sqrt`` (0.4, one instruction) nearly nothing, where the flop count charges each
#: 10 flops. PyTensor's numba ``TriGamma`` took 15.8 µs an element. A transcendental function
#: not measured counts as two.
TRANSCENDENTAL_EXP_EQUIVALENTS = {
    "Exp": 1.0, "Exp2": 0.76, "Expm1": 1.70, "Log": 0.75, "Log2": 0.70, "Log10": 0.75,
    "Log1p": 1.49, "Log1mexp": 2.63, "Softplus": 3.06, "Sigmoid": 1.01, "Tanh": 2.76,
    "Sin": 1.72, "Cos": 1.75, "Cosh": 1.20, "Pow": 2.48, "Sqrt": 0.08, "Erf": 2.24,
    "Erfc": 2.27, "Erfcx": 4.50, "Erfinv": 2.03, "GammaLn": 1.77, "Gamma": 2.23, "Psi": 2.67,
    "TriGamma": 2900.0,
}
_UNMEASURED_TRANSCENDENTAL = 2.0
_DOT_OPS = ("Dot", "Gemm", "Gemv", "Ger", "Dot22", "BatchedDot", "Matmul", "MatMul")
_DECOMPOSITIONS = {
    "Cholesky": 1 / 3, "SolveTriangular": 1.0, "Solve": 2 / 3, "CholeskySolve": 2.0, "LUFactor": 2 / 3,
    "Det": 2 / 3, "SLogDet": 2 / 3, "MatrixInverse": 2.0, "MatrixPinv": 4.0, "Eig": 10.0,
    "Eigh": 4.0, "QR": 4 / 3, "SVD": 4.0, "LU": 2 / 3, "Expm": 20.0,
}


@dataclass
class ScanSummary:
    """One sequential ``Scan`` in the graph.

    Attributes
    ----------
    n_steps : int or None
        Steps, when the graph fixes them.
    inner_ops : int
        Nodes of the step's graph: kernels launched per step before fusion.
    inner_flops : float
        Flops of one step.
    state_shape : tuple of int or None
        Shape of the carried state (one carried state only; ``None`` otherwise).
    affine : bool
        Whether the step is ``c_t = A_t c_{t-1} + b_t`` with ``A_t, b_t`` free of the state
        (:func:`pymc_accel.rewrites.affine_scan.scan_affine_step`): such a scan can run as a
        parallel prefix of depth ``log2(n_steps)``.
    kind : str
        ``"mat"`` (matrix-vector) or ``"elem"`` (scalar, diagonal) for an affine step, else ``""``.
    gradient : bool
        A reverse-mode scan of the gradient (it carries the adjoints of a forward scan).
    inner_kernels : int
        Nodes of the step that do work (what the census counts as kernels, per step).
    """

    n_steps: int | None
    inner_ops: int
    inner_flops: float
    state_shape: tuple[int | None, ...] | None = None
    affine: bool = False
    kind: str = ""
    gradient: bool = False
    inner_kernels: int = 0

    def describe(self) -> str:
        """E.g. ``1000 steps, state 4x3, affine (matrix)``."""
        if self.gradient and self.n_steps is None:
            return "its reverse scan in the gradient"
        text = f"{self.n_steps if self.n_steps is not None else 'unknown'} steps"
        if self.state_shape is not None:
            text += ", state " + ("x".join("?" if d is None else str(d) for d in self.state_shape)
                                  or "scalar")
        if self.gradient:
            return text + ", reverse scan of the gradient"
        if self.affine:
            return text + f", affine ({'matrix' if self.kind == 'mat' else 'elementwise'})"
        return text + ", not affine"


@dataclass
class DenseOp:
    """One dense linear algebra op: its name, the shapes of its operands and output, its flops."""

    op: str
    operands: tuple[tuple[int, ...], ...]
    output: tuple[int, ...]
    flops: float

    def describe(self) -> str:
        """E.g. ``Cholesky(200x200)``."""
        shapes = ", ".join("x".join(map(str, s)) or "scalar" for s in self.operands)
        return f"{self.op}({shapes})"


@dataclass
class OpCensus:
    """What one evaluation of a graph costs, by category.

    Attributes
    ----------
    flops, bytes : float
        Estimated floating point operations and bytes read plus written.
    kernels : int
        Nodes that do work (an upper bound on device kernel launches before fusion).
    kernels_by_category : dict
        The same split into categories (a Scan's inner kernels, once per step, under ``scan``).
    flops_by_category, bytes_by_category : dict
        The same split into ``elementwise``, ``reduction``, ``indexing`` (gathers and scatters),
        ``dense_linalg``, ``scan`` and ``other``.
    dense_linalg_ops : list of (str, tuple)
        Each dense linear algebra op with the shape of its largest operand.
    dense_linalg_operands : list of DenseOp
        Each dense linear algebra op with the shapes of all its operands and its flops.
    largest_dense_operand : int
        Elements in the largest dense linear algebra operand (0 when there is none).
    largest_array_bytes : float
        Bytes of the largest array any kernel reads or writes: with the data and the sampler's
        state, what bounds the working set one evaluation keeps in cache.
    scans : list of ScanSummary
    transcendentals : float
        Transcendental function evaluations per evaluation of the graph (``exp``, ``log``,
        ``softplus``, ``erf``, ...), each weighted by its cost in a numba loop in evaluations of
        ``exp`` (:data:`TRANSCENDENTAL_EXP_EQUIVALENTS`), counted as the compiled function
        computes them: once per distinct computation, none on data alone (folded before it
        runs), with PyTensor's stabilizing rewrites' ``softplus`` for a log of a sigmoid. A
        logistic likelihood and its gradient cost about seven ``exp`` per row.
    transcendental_flops : float
        What ``flops`` charges those functions beyond one flop each (9 of its 10 per
        evaluation, however they are computed): a runtime that prices ``transcendentals``
        leaves these out of its flops.
    transcendentals_by_function : dict of str to float
        The same evaluations counted by function (``"Exp"``, ``"Log"``, ``"Softplus"``, ...),
        not weighted: for a runtime whose own functions cost other multiples of an ``exp``
        than a numba loop's (XLA's vectorised ``exp`` and ``log``).
    series_evaluations : dict of str to float
        Elements of each :data:`SERIES_FUNCTIONS` function the log density evaluates on values
        that depend on the parameters (``"GammaInc"``), and, keyed with the input's position
        (``"GammaInc'0"``), the elements whose derivative in that input the gradient takes
        (the input depends on the parameters): what a runtime that differentiates the log
        density itself (JAX) computes, not PyTensor's gradient graph. Filled by
        :func:`series_evaluations`.
    compiled_kernels_by_rank : dict
        Kernels a compiler generates code for, by the largest rank they loop over (:data:`RANKS`;
        a Scan's inner kernels once, not once per step; dense linear algebra, a call into LAPACK,
        not at all): what a numba compile's time follows. Timed on the 2-core machine, nutpie's
        compile took 1.0-1.5 s on models of 47 to 342 kernels whose loops are over vectors and
        scalars, and 3.1-3.6 s on models of 216 and 284 kernels with 32 and 33 loop nests
        (``bench/fit_fixed.py`` fits the drivers' fixed costs on it).
    """

    flops: float = 0.0
    bytes: float = 0.0
    kernels: int = 0
    flops_by_category: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0.0))
    bytes_by_category: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0.0))
    dense_linalg_ops: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    dense_linalg_operands: list[DenseOp] = field(default_factory=list)
    largest_dense_operand: int = 0
    largest_array_bytes: float = 0.0
    scans: list[ScanSummary] = field(default_factory=list)
    unknown_shapes: int = 0
    kernels_by_category: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    compiled_kernels_by_rank: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RANKS, 0))
    transcendentals: float = 0.0
    transcendental_flops: float = 0.0
    transcendentals_by_function: dict[str, float] = field(default_factory=dict)
    series_evaluations: dict[str, float] = field(default_factory=dict)

    @property
    def compiled_kernels(self) -> int:
        """:attr:`kernels` with each Scan's step counted once, where :attr:`kernels` counts it
        once a step: what a compile or a trace follows (a Scan's step is compiled once and
        launched each step). A GARCH(1, 1) model's 299-step Scan made 2,348 kernels of 262
        compiled ones, and NumPyro's fixed seconds, priced per kernel, 3.2x its runs' whole
        wall time (docs/benchmarks.md, "A sixth set of held-out families")."""
        repeated = sum(s.inner_kernels * (s.n_steps - 1) for s in self.scans if s.n_steps)
        return max(1, self.kernels - repeated)

    @property
    def dense_linalg_share(self) -> float:
        """Fraction of flops in dense linear algebra."""
        return self.flops_by_category["dense_linalg"] / self.flops if self.flops else 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpCensus:
        """Rebuild a census from its plain-data form (``dataclasses.asdict``)."""
        data = dict(data)
        data["dense_linalg_ops"] = [(name, tuple(shape)) for name, shape in data["dense_linalg_ops"]]
        data["dense_linalg_operands"] = [
            DenseOp(d["op"], tuple(map(tuple, d["operands"])), tuple(d["output"]), d["flops"])
            for d in data["dense_linalg_operands"]
        ]
        data["scans"] = [
            ScanSummary(**{**s, "state_shape": None if s["state_shape"] is None
                           else tuple(s["state_shape"])})
            for s in data["scans"]
        ]
        return cls(**data)

    def add(self, category: str, flops: float, nbytes: float, rank: int | None = None) -> None:
        """Account one kernel (looping over ``rank`` dimensions, when given)."""
        if rank is not None:
            self.compiled_kernels_by_rank[RANKS[min(rank, len(RANKS) - 1)]] += 1
        self.flops += flops
        self.bytes += nbytes
        self.kernels += 1
        self.kernels_by_category[category] += 1
        self.flops_by_category[category] += flops
        self.bytes_by_category[category] += nbytes

    def count_function(self, function: str, evaluations: float) -> None:
        """Add ``evaluations`` of the transcendental ``function`` to its count."""
        if evaluations:
            self.transcendentals_by_function[function] = (
                self.transcendentals_by_function.get(function, 0.0) + evaluations)


def _size(var: Any, census: OpCensus) -> int:
    if getattr(var.type, "shape", None) is None:
        return 1
    shape = _known_shape(var, census)
    if any(s is None for s in shape):
        census.unknown_shapes += 1
        return math.prod(s for s in shape if s is not None)
    return math.prod(shape)


def _known_shape(var: Any, census: OpCensus) -> tuple[int | None, ...]:
    """``var``'s shape, static or inferred (:func:`inferred_shapes`); ``None`` for a dimension
    neither gives."""
    shape = tuple(getattr(var.type, "shape", None) or ())
    if any(s is None for s in shape):
        shape = getattr(census, "_inferred_shapes", {}).get(var) or shape
    return shape


def _convolution_flops(node: Any, census: OpCensus) -> float:
    """A 1-d convolution's multiply-adds (PyTensor's ``Convolve1d``, batched), two flops each:
    ``n k`` in full mode, whose output is ``n + k - 1`` long, and ``(|n - k| + 1) min(n, k)``
    in valid mode. An output whose length is unknown (a mode the graph computes, as PyTensor's
    derivative in the kernel does: the output's gradient against the 156-week signal, valid,
    gives the adstock's 8 lags) is taken as valid, the fewer."""
    signal, kernel = (_known_shape(v, census) for v in node.inputs[:2])
    out = _known_shape(node.outputs[0], census)
    n, k = (signal[-1] if signal else 1) or 1, (kernel[-1] if kernel else 1) or 1
    length = out[-1] if out else None
    if length is None:
        length = abs(n - k) + 1
    products = n * k if length >= n + k - 1 else length * min(n, k)
    return 2.0 * math.prod(d or 1 for d in out[:-1]) * products


def inferred_shapes(nodes: list[Any]) -> dict[Any, tuple[int, ...]]:
    """Shapes of the variables of ``nodes`` whose static shape is partly unknown, where each
    op's own shape inference gives them from its inputs' shapes.

    PyTensor gives some ops' outputs no static length (a convolution's, ``convolve1d``), and
    the ops after them inherit it: the census counted each unknown length as 1, so an adstock
    regression's 48 unknown shapes made its whole gradient 1.2e4 flops, less than its two
    convolutions' multiply-adds. Here, in the graph's order, each node with such an output has
    its op's ``infer_shape`` called on its inputs' shapes, static or found before, as
    constants, and the result folded to constants (``get_underlying_scalar_constant_value``),
    as PyTensor's ``ShapeFeature`` would over the whole cloned graph: only those nodes are
    visited, 0.002-0.019 s a profile on the 17 zoo models with unknown shapes where the
    ``ShapeFeature`` took 0.016-0.098 s, for about as many shapes (adstock_11 12 of 14 either
    way; ``bench/count_inferred_shapes.py``,
    ``docs/results/inferred-shapes-cpu-2026-12-02{,-shape-feature}.txt``, on a machine whose
    Python loop ran 0.31 s). A shape that depends on a value the graph computes (the
    derivative of a convolution in its mode) stays unknown, and so do the shapes after it.

    Parameters
    ----------
    nodes : list of Apply
        A graph's nodes, each after the nodes its inputs come from
        (``io_toposort(inputs, outputs)``).

    Returns
    -------
    dict
        Variable -> shape, for the variables whose shape could be found; empty where every
        shape is static.
    """
    found: dict[Any, tuple[int, ...]] = {}

    def partly_unknown(var: Any) -> bool:
        return any(s is None for s in (getattr(var.type, "shape", None) or ()))

    todo = [node for node in nodes if any(partly_unknown(v) for v in node.outputs)]
    if not todo:
        return found
    from pytensor.tensor.basic import constant, get_underlying_scalar_constant_value

    for node in todo:
        shapes = []
        for var in node.inputs:
            shape = getattr(var.type, "shape", None)
            shape = found.get(var, shape)
            if shape is None or any(s is None for s in shape):
                break
            shapes.append(tuple(constant(s, dtype="int64") for s in shape))
        else:
            try:
                inferred = node.op.infer_shape(node, shapes)
            except Exception:  # an op without it, or one that needs the graph: unknown
                continue
            for var, dims in zip(node.outputs, inferred):
                if not partly_unknown(var):
                    continue
                try:
                    found[var] = tuple(int(get_underlying_scalar_constant_value(d))
                                       for d in dims)
                except Exception:  # not constant: unknown, and what follows from it
                    continue
    return found


def _itemsize(var: Any) -> int:
    dtype = getattr(var.type, "dtype", "float64")
    return 4 if dtype.endswith("32") else 1 if dtype in ("bool", "int8", "uint8") else 8


def _nbytes(node: Any, census: OpCensus) -> float:
    sizes = [_size(v, census) * _itemsize(v) for v in (*node.inputs, *node.outputs)]
    census.largest_array_bytes = max(census.largest_array_bytes, float(max(sizes, default=0)))
    return float(sum(sizes))


@functools.cache
def _is_transcendental(name: str) -> bool:
    return any(t in name for t in _TRANSCENDENTAL)


def _scalar_cost(scalar_op: Any, transcendental: float = TRANSCENDENTAL_FLOPS) -> float:
    """Flops of one evaluation: 1, or ``transcendental`` for a transcendental function."""
    name = type(scalar_op).__name__
    inner = getattr(scalar_op, "fgraph", None)
    if inner is not None:  # a fused Composite: add up what it contains
        return sum(_scalar_cost(n.op, transcendental) for n in inner.apply_nodes) or 1.0
    return transcendental if _is_transcendental(name) else 1.0


#: Exponents PyTensor's rewrites turn a power into multiplications (and a square root) for:
#: ``x ** 2`` becomes ``sqr(x)`` before any backend compiles it; the census counts the graph
#: before those rewrites, where a Normal's log density and its gradient hold such powers.
_CHEAP_POWERS = frozenset({-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0})


def _constant_scalar(var: Any) -> float | None:
    """The value of ``var`` when the graph fixes it to one scalar (through broadcasts and
    arithmetic on constants: a gradient's ``x ** (2 - 1)``), else ``None``."""
    from pytensor.tensor.basic import get_underlying_scalar_constant_value
    from pytensor.tensor.exceptions import NotScalarConstantError

    try:
        return float(get_underlying_scalar_constant_value(var))
    except (NotScalarConstantError, TypeError, ValueError):
        return None


def _transcendental_functions(node: Any) -> dict[str, float]:
    """Transcendental functions one evaluation of ``node``'s scalar function evaluates, by
    name: an Elemwise node's, a fused Composite's parts'. A power that PyTensor's rewrites turn
    into multiplications is none."""
    scalar_op = getattr(node.op, "scalar_op", node.op)
    inner = getattr(scalar_op, "fgraph", None)
    if inner is not None:
        out: dict[str, float] = {}
        for part in inner.apply_nodes:
            for name, count in _transcendental_functions(part).items():
                out[name] = out.get(name, 0.0) + count
        return out
    name = type(scalar_op).__name__
    if name == "Pow" and len(node.inputs) == 2:
        if _constant_scalar(node.inputs[1]) in _CHEAP_POWERS:
            return {}
    if name in TRANSCENDENTAL_EXP_EQUIVALENTS or _is_transcendental(name):
        return {name: 1.0}
    return {}


def _core_name(op: Any) -> str:
    core = getattr(op, "core_op", op)  # look through Blockwise
    return type(core).__name__


def _dense_flops(name: str, node: Any, census: OpCensus) -> tuple[float, tuple[int, ...]]:
    shapes = [tuple(s or 1 for s in getattr(v.type, "shape", ()) or ()) for v in node.inputs]
    largest = max(shapes, key=lambda s: math.prod(s) if s else 0, default=())
    out = _size(node.outputs[0], census)
    if any(d in name for d in _DOT_OPS):
        first = shapes[0] if shapes else ()
        inner = first[-1] if first else 1
        return 2.0 * out * inner, largest
    if "Solve" in name and len(shapes) >= 2 and len(shapes[0]) >= 2:
        # A x = b: a factorisation (none for triangular and Cholesky solves) plus n^2 per
        # right-hand side, per batch of A
        a, b = shapes[0], shapes[1]
        n = a[-1]
        batch = math.prod(a[:-2]) if len(a) > 2 else 1
        nrhs = max(1, math.prod(b) // max(1, n * batch))
        per_rhs = 2.0 if name in ("CholeskySolve", "Solve") else 1.0
        factor = 2 / 3 * n**3 if name == "Solve" else 0.0
        return batch * (factor + per_rhs * n * n * nrhs), largest
    for key, factor in _DECOMPOSITIONS.items():
        if key in name:
            n = largest[-1] if largest else 1
            batch = math.prod(largest[:-2]) if len(largest) > 2 else 1
            return factor * batch * n**3 + 2.0 * out, largest
    return 0.0, largest


def _static_shape(var: Any) -> tuple[int, ...]:
    return tuple(-1 if d is None else int(d) for d in (getattr(var.type, "shape", ()) or ()))


def _is_dense_linalg(name: str) -> bool:
    return any(d in name for d in _DOT_OPS) or any(k in name for k in _DECOMPOSITIONS)


def _constant_steps(var: Any) -> int | None:
    """The number of steps of a Scan when the graph fixes it (the gradient's reverse Scan has
    it as an expression of the forward one's)."""
    from pytensor.tensor.basic import get_underlying_scalar_constant_value
    from pytensor.tensor.exceptions import NotScalarConstantError

    try:
        return int(get_underlying_scalar_constant_value(var))
    except NotScalarConstantError:
        return None


def _scan_summary(node: Any, n_steps: int | None, sub: OpCensus) -> ScanSummary:
    """A Scan's size, carried state and whether its step is affine in that state."""
    from pymc_accel.rewrites.affine_scan import scan_affine_step

    info = node.op.info
    gradient = info.n_mit_mot > 0
    shape = None
    if info.n_sit_sot == 1 and not (info.n_mit_sot or info.n_mit_mot):
        shape = tuple(node.op.outer_sitsot(node.inputs)[0].type.shape[1:])
    try:
        step = None if gradient else scan_affine_step(node)
    except Exception:  # the analysis gives up: the scan counts as not affine
        step = None
    return ScanSummary(n_steps, len(node.op.fgraph.apply_nodes), sub.flops, shape,
                       step is not None, step.kind if step is not None else "", gradient,
                       sub.kernels)


def _account(node: Any, census: OpCensus) -> None:
    op = node.op
    name = type(op).__name__
    if name in _FREE_OPS:
        return
    if name == "Scan":
        inner = op.fgraph
        sub = census_of(inner.inputs, inner.outputs)
        for rank, count in sub.compiled_kernels_by_rank.items():  # compiled once, run per step
            census.compiled_kernels_by_rank[rank] += count
        n_steps = _constant_steps(node.inputs[0])
        census.scans.append(_scan_summary(node, n_steps, sub))
        census.add("scan", sub.flops * (n_steps or 1), sub.bytes * (n_steps or 1))
        census.transcendentals += sub.transcendentals * (n_steps or 1)
        for function, count in sub.transcendentals_by_function.items():
            census.count_function(function, count * (n_steps or 1))
        census.transcendental_flops += sub.transcendental_flops * (n_steps or 1)
        launches = sub.kernels * (n_steps or 1) - 1  # one per inner op per step; add() counted one
        census.kernels += launches
        census.kernels_by_category["scan"] += launches
        _nbytes(node, census)  # the stacked outputs count towards the largest array
        census.largest_array_bytes = max(census.largest_array_bytes, sub.largest_array_bytes)
        return
    core = _core_name(op)
    rank = max((getattr(v.type, "ndim", 0) for v in (*node.inputs, *node.outputs)), default=0)
    if _is_dense_linalg(core):
        flops, largest = _dense_flops(core, node, census)
        # a call into LAPACK or BLAS: little code of its own to compile, whatever its rank
        census.add("dense_linalg", flops, _nbytes(node, census))
        census.dense_linalg_ops.append((core, largest))
        census.dense_linalg_operands.append(DenseOp(
            core,
            tuple(_static_shape(v) for v in node.inputs if getattr(v.type, "ndim", 0) > 0),
            _static_shape(node.outputs[0]),
            flops,
        ))
        census.largest_dense_operand = max(census.largest_dense_operand, math.prod(largest or (0,)))
        return
    if name == "Elemwise":
        out = _size(node.outputs[0], census)
        flops = out * _scalar_cost(op.scalar_op)
        census.add("elementwise", flops, _nbytes(node, census), rank)
        census.transcendental_flops += flops - out * _scalar_cost(op.scalar_op, transcendental=1.0)
    elif hasattr(op, "axis") and hasattr(op, "scalar_op"):  # CAReduce: Sum, Max, All, ...
        census.add("reduction", float(_size(node.inputs[0], census)), _nbytes(node, census), rank)
    elif "Advanced" in name:  # gathers (AdvancedSubtensor) and scatters (AdvancedIncSubtensor)
        moved = _size(node.outputs[0], census) if "Inc" not in name else _size(node.inputs[1], census)
        census.add("indexing", float(moved), _nbytes(node, census), rank)
    elif core == "Convolve1d":  # its multiply-adds, not its output's length
        census.add("other", _convolution_flops(node, census), _nbytes(node, census), rank)
    else:
        census.add("other", float(_size(node.outputs[0], census)), _nbytes(node, census), rank)


def census_of(inputs: list[Any], outputs: list[Any]) -> OpCensus:
    """Count the work of evaluating ``outputs`` from ``inputs`` once.

    Parameters
    ----------
    inputs, outputs : list of TensorVariable
        The graph's inputs and outputs, with static shapes where possible.

    Returns
    -------
    OpCensus
    """
    census = OpCensus()
    nodes = io_toposort(inputs, outputs)
    # kept beside the census, not in it: a stored census needs no variables
    census._inferred_shapes = inferred_shapes(nodes)
    _Walk(census, inputs).nodes(nodes)
    return census


#: Scalar functions that JAX computes by a series or a continued fraction looped to convergence
#: for every element (XLA's ``igamma``, ``igammac`` and their derivative in the shape,
#: ``igamma_grad_a``; ``betainc``), at hundreds of ``exp`` an element where the census charges
#: one transcendental function (:data:`TRANSCENDENTAL_FLOPS`): a Gaussian copula's gamma
#: margin (``bench/zoo.py``'s ``gaussian_copula``, 500 rows) took NumPyro 459 µs a gradient
#: where 74 µs was priced. ``costmodel.XLA_SERIES_EXP_EQUIVALENTS`` prices them.
SERIES_FUNCTIONS = ("GammaInc", "GammaIncC", "BetaInc")


def series_function_nodes(inputs: list[Any], output: Any) -> list[tuple[Any, tuple[int, ...]]]:
    """The elementwise nodes of :data:`SERIES_FUNCTIONS` functions that evaluating ``output``
    from ``inputs`` computes on values depending on ``inputs``, each with the positions of its
    inputs that depend on them (a gradient in ``inputs`` takes the function's derivative in
    those), in the order of the graph."""
    varying = set(inputs)
    found = []
    for node in io_toposort(inputs, [output]):
        depends = [v in varying for v in node.inputs]
        if not any(depends):
            continue
        varying.update(node.outputs)
        name = type(getattr(node.op, "scalar_op", None)).__name__
        if type(node.op).__name__ == "Elemwise" and name in SERIES_FUNCTIONS:
            found.append((node, tuple(i for i, free in enumerate(depends) if free)))
    return found


def series_evaluations(nodes: list[tuple[Any, tuple[int, ...]]]) -> dict[str, float]:
    """Elements of each :data:`SERIES_FUNCTIONS` function that the nodes found by
    :func:`series_function_nodes` compute, and, keyed ``"Name'i"``, the elements whose
    derivative in the function's input ``i`` a gradient in the parameters takes.

    Parameters
    ----------
    nodes : list of (Apply, tuple of int)
        :func:`series_function_nodes` of the log density, before any gradient: a runtime that
        differentiates it itself (JAX) evaluates the functions' derivatives, not PyTensor's
        gradient graph.

    Returns
    -------
    dict of str to float
        Empty for a graph without such functions. ``"Name nodes"`` counts the nodes: each is
        a program of loops of its own in XLA.
    """
    scratch = OpCensus()
    counts: dict[str, float] = {}
    for node, free in nodes:
        name = type(node.op.scalar_op).__name__
        size = float(_size(node.outputs[0], scratch))
        for key in (name, *(f"{name}'{i}" for i in free)):
            counts[key] = counts.get(key, 0.0) + size
        counts[f"{name} nodes"] = counts.get(f"{name} nodes", 0.0) + 1.0
    return counts


class _Walk:
    """One census's walk over a graph's nodes, with what it has seen: the values that depend on
    the graph's inputs (the rest is folded before it runs), and the nodes whose op and inputs
    repeat an earlier node's (merged into it, as PyTensor's merge rewrite and XLA's common
    subexpressions merge them: their transcendental functions are counted once).

    An op defined by a graph (an ``OpFromGraph``: PyTensor writes ``logsumexp``, ``softmax`` and
    ``log_softmax`` as such ops, and their derivatives too) is walked within this walk, as the
    backends inline it: its nodes counted as the outer graph's and merged with them. The
    derivative of ``logsumexp`` recomputes the forward's exponentials, which the compiled
    program computes once. Until 2026-11-30 (morning) such an op was counted as one op of the
    category "other", and a Poisson mixture's log-sum-exp went uncounted; until that evening
    its inner graph was counted in a walk of its own, and those exponentials twice
    (docs/benchmarks.md, "The census merges a derivative's exponentials with its forward's").

    A value is known by its identity: an outer graph's variable is its own; a variable of an
    inner graph is known by its use (every use of an op shares its inner graph's variables)
    and itself, or by the identity of the value it repeats.
    """

    def __init__(self, census: OpCensus, inputs: list[Any]) -> None:
        self.census = census
        self.varying = set(inputs)  # identities of the values that depend on the inputs
        self.computed: dict[tuple, tuple] = {}  # (op, inputs' identities) -> outputs'
        self.held: dict[Any, Any] = {}  # identity -> a variable holding the value
        self.outer: dict[Any, Any] = {}  # the outer graph's merged variables -> identity

    def nodes(self, nodes: list[Any], scope: dict | None = None, use: Any = None) -> None:
        """Count ``nodes``, in an order where each node's inputs come first: the outer graph's
        (``scope`` None) or an inner graph's, with ``scope`` mapping its variables to
        identities and ``use`` telling this use of it from the others."""
        census = self.census
        if scope is None:
            scope = self.outer
        for node in nodes:
            inner = getattr(node.op, "fgraph", None)
            if inner is not None and type(node.op).__name__ != "Scan":
                self._inline(node, inner, scope)
                continue
            _account(node, census)
            args = tuple(scope.get(v, v) for v in node.inputs)
            key: tuple | None = (node.op, args)
            try:
                first = self.computed.get(key)
            except TypeError:  # an op that cannot be hashed: not merged
                first, key = None, None
            if first is not None:
                scope.update(zip(node.outputs, first))
                continue
            ids = tuple(node.outputs) if use is None else tuple((use, v) for v in node.outputs)
            if use is not None:
                scope.update(zip(node.outputs, ids))
                self.held.update(zip(ids, node.outputs))
            if key is not None:
                self.computed[key] = ids
            if not any(a in self.varying for a in args):
                continue
            self.varying.update(ids)
            if type(node.op).__name__ == "Elemwise":
                size = _size(node.outputs[0], census)
                functions = _compiled_functions(node, tuple(self.held.get(a, a) for a in args))
                census.transcendentals += size * _exp_equivalents(functions)
                for function, count in functions.items():
                    census.count_function(function, size * count)

    def _inline(self, node: Any, inner: Any, scope: dict) -> None:
        """Walk ``node``'s inner graph with its inputs standing for ``node``'s."""
        local = {v: scope.get(o, o) for v, o in zip(inner.inputs, node.inputs)}
        self.nodes(io_toposort(list(inner.inputs), list(inner.outputs)), local, object())
        for out, v in zip(node.outputs, inner.outputs):
            scope[out] = local.get(v, v)


def _scalar_name(var: Any) -> str:
    """The scalar function an Elemwise output ``var`` comes from (``""`` for anything else)."""
    owner = getattr(var, "owner", None)
    return type(getattr(owner.op, "scalar_op", None)).__name__ if owner is not None else ""


def _compiled_functions(node: Any, args: tuple) -> dict[str, float]:
    """Transcendental functions an Elemwise node (its inputs merged into ``args``) evaluates
    per element, by name, as the function every backend compiles evaluates them, after
    PyTensor's rewrites: none for ``log(exp(x))`` or ``exp(log(x))`` (reduced to ``x``); a
    ``softplus`` for a log of a sigmoid or of ``1 + exp``, which the stabilizing rewrites turn
    into one: ``log(sigmoid(x))``, ``log(1 - sigmoid(x))`` (a Bernoulli or binomial likelihood
    on ``logit_p``), ``log1p(-sigmoid(x))`` and ``log1p(exp(x))``; otherwise
    :func:`_transcendental_functions`."""
    name = type(node.op.scalar_op).__name__
    inner = _scalar_name(args[0]) if args else ""
    if (name, inner) in (("Log", "Exp"), ("Exp", "Log")):
        return {}
    if name in ("Log", "Log1p"):
        if inner == "Sigmoid" or (name == "Log1p" and inner == "Exp"):
            return {"Softplus": 1.0}
        owner = args[0].owner
        if inner in ("Sub", "Neg") and any(_scalar_name(v) == "Sigmoid" for v in owner.inputs):
            return {"Softplus": 1.0}
    return _transcendental_functions(node)


def _exp_equivalents(functions: dict[str, float]) -> float:
    """Evaluations of ``exp`` in a numba loop that ``functions`` (evaluations by name) cost
    (:data:`TRANSCENDENTAL_EXP_EQUIVALENTS`; :data:`_UNMEASURED_TRANSCENDENTAL` for the rest)."""
    return sum(count * TRANSCENDENTAL_EXP_EQUIVALENTS.get(name, _UNMEASURED_TRANSCENDENTAL)
               for name, count in functions.items())
