"""Is float32 safe for this model? Compare its log density and gradient with float64's.

The model's logp-and-gradient graph (built in float64) is rebuilt with every float64 input,
constant and data container in float32, so each operation computes and rounds in float32 as a
float32 backend would. The log density and gradient the profile built are checked as written;
where float32 fails there, the log density is rewritten with the stabilizing rewrites every
backend applies, differentiated, and checked again. Both graphs are evaluated as built, op by
op in Python (:class:`~pymc_accel.graph_building.Evaluator`: no JIT or C compilation, no
PyTensor function built and no further rewrites), at the initial point and at a few points
jittered as PyMC jitters chain starts (uniform(-1, 1) on the unconstrained scale). float32 is
safe when every float32 value is finite where float64's is, and the errors are within the
tolerances:

- log density: ``|logp32 - logp64| / max(|logp64|, 1)`` at most ``logp_rtol`` (default 1e-4);
- gradient: ``||grad32 - grad64|| / max(||grad64||, 1)`` at most ``grad_rtol`` (default 1e-3).

The check vouches for the evaluations a sampler starts from, not for a whole run: a float32 run
that diverges heavily is caught afterwards (:func:`divergence_fraction`) and re-run in float64 by
:func:`pymc_accel.sample`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pymc_accel.graph_building import Evaluator, RepeatedNodes, initial_point, quietly

if TYPE_CHECKING:
    from pymc_accel.profile import LogpGraph

LOGP_RTOL = 1e-4
GRAD_RTOL = 1e-3
#: PyTensor's rewrite databases the float32 check and the start check
#: (:func:`pymc_accel.integration.check_initial_point`) apply before evaluating the log density,
#: so that they compute what the backends compile (PyTensor's FAST_RUN, numba and JAX modes all
#: run canonicalize, stabilize and specialize). ``bench/compare_check_rewrites.py`` compares the
#: sets on forms that need them (docs/benchmarks.md, "The checks' rewrites").
#: ``canonicalize`` alone before ``stabilize`` hides log1p(-sigmoid(x)) from it (it is -inf in
#: float64 at x = 40 where the backends compute -40.0); ``stabilize`` alone leaves log(exp(x))
#: as written (+inf at x = 800 where the backends simplify it to x). With ``specialize`` the
#: checks match PyMC's compiled log density on every form compared, in about the same time.
BACKEND_REWRITES: tuple[str, ...] = ("canonicalize", "stabilize", "specialize")
#: Of what numba's and JAX's linkers both leave out of every compile (their
#: ``incompatible_rewrites``), the one tag those three sets hold: rewrites to ops that only
#: PyTensor's C code runs. Left in, one of them (sparse ``local_usmm``) read PyTensor's BLAS
#: flags, whose first read in a process probes the C compiler: negbin_12's first selection in a
#: new process took 387 ms, 149 ms without (docs/benchmarks.md, "Four model families no fit has
#: seen"). JAX also leaves out ``reuse_decomposition_multiple_solves`` for a JAX variant of its
#: own that computes the same; the checks keep PyTensor's.
BACKEND_EXCLUDED_REWRITES: tuple[str, ...] = ("cxx_only",)
#: Of :data:`BACKEND_REWRITES`, the one that writes an op PyTensor cannot differentiate: an
#: integer power over 2 as one fused ``Composite`` of squarings (``x**6`` as
#: ``sqr(sqr(x)) * sqr(x)``), whose gradient PyTensor does not implement. The float32 check
#: differentiates the rewritten log density, and on a model with such a power (skewnormal_6) it
#: raised ``NotImplementedError`` as compiled: ``auto`` used float64 unchecked, and
#: :func:`check_float32` raised it to the user. Left out there, the power stays a ``Pow``, which
#: differs from the squarings by a rounding.
NOT_DIFFERENTIABLE_REWRITES: tuple[str, ...] = ("local_pow_to_nested_squaring",)
#: :attr:`PrecisionCheck.graph` of a check of the log density as PyMC built it, with PyTensor's
#: gradient: what the check evaluates first. The backends compile it after
#: :data:`BACKEND_REWRITES`, and those rewrites are made to keep a value (merging, constant
#: folding, removing no-ops, cancelling terms) or compute it more stably (log1p, softplus,
#: log-sum-exp, log(exp(x)) as x). So float32 that passes as written is taken to pass as
#: compiled, and the rewrites and a second gradient (18 + 5 ms of glm_poisson's 39 ms check,
#: 34 + 12 of negbin_12's 89: docs/results/selection-parts-cpu-2026-11-28-as-compiled.md) are
#: spent only where float32 fails as written. That is observed, not proven:
#: ``bench/compare_check_rewrites.py`` gives the same verdict both ways on all 34 forms and
#: models compared: eleven of its fourteen hazard forms fail as written and pass as compiled,
#: one fails both ways, none passes as written and fails as compiled. A rewrite can in
#: principle overflow float32 where the graph as written does not: folding the constants of
#: ``(1e25 * x) * (1e25 * y)`` gives ``1e50 * (x * y)``, infinite in float32; in the forms
#: compared, the graph as written overflowed first.
#: Where float32 fails as written, the rewritten check settles it, with at least as many
#: points. The check as compiled only took 1.05x-1.60x as long on 19 of bench/fit_guard.py's
#: 20 models, 0.92x on the 200,000-row one (which now goes straight to it, past
#: :data:`AS_WRITTEN_MAX_DATA_BYTES`) and 0.84x on lkj_20, whose gradient as written is twice
#: the rewritten one; a check that fails as written costs about 1.4x the old one
#: (logistic_101 46 against 32 ms; docs/benchmarks.md, "The float32 check on the log density
#: as written first").
AS_WRITTEN = "as written"
#: Bytes of data the log density reads above which the check goes straight to the log density
#: as compiled. Evaluating it as written costs more per byte (its gradient is unsimplified)
#: and saves the rewrites, a cost that does not grow with the data. From bench/fit_guard.py's
#: two fits, a check that passes as written saves 6.2 ms + 0.039 ms a kernel and loses
#: 0.049 ms a MB of gradient: the hierarchical logistic regression at 50,000 rows (8.8 MB of
#: data, 178 MB a gradient) took 176 ms as written against 185, at 200,000 rows (35 MB, 714 MB)
#: 707 against 653 (docs/results/fit-guard-cpu-2026-11-27-as-*.jsonl). A check that fails as
#: written pays its evaluations as well: the seed blog's model at full size (1,000,000 rows,
#: 176 MB of data) fails at a jittered point, and its check took 8.2-8.3 s as written first
#: against 4.6-4.9 s as compiled only (fit-guard-cpu-2026-11-28-seed-1m.jsonl).
AS_WRITTEN_MAX_DATA_BYTES = 10e6
#: :attr:`PrecisionCheck.graph` of a check of the log density after :data:`BACKEND_REWRITES`,
#: differentiated after them, as the JAX backends differentiate it.
AS_COMPILED = "as the backends rewrite it"
JITTERED_POINTS = 3
#: Further jittered points where only float32's finiteness is checked: float32 evaluated alone,
#: float64 only where float32 is not finite (to confirm that float64 is). A float32 failure that
#: shows at some starts only is caught at one of them with the odds of ``1 + JITTERED_POINTS +``
#: this many draws: an HSGP regression's float32 gradient is NaN at 51 of 100 jittered starts
#: (its spectral density underflows), the three compared points missed it, and NumPyro's float32
#: chains then never left their starts (docs/benchmarks.md, "A third set of families"); three
#: starts miss such a failure one time in eight, nine one time in 600.
FINITENESS_POINTS = 6
#: Points a check that passes everywhere has evaluated.
POINTS_CHECKED = 1 + JITTERED_POINTS + FINITENESS_POINTS
#: Seconds after which the check evaluates no further jittered points.
CHECK_BUDGET_SECONDS = 10.0
#: A float32 run whose share of divergent transitions exceeds this is re-run in float64.
DIVERGENCE_FALLBACK_FRACTION = 0.1


@dataclass
class PrecisionCheck:
    """The outcome of comparing float32 with float64 on one model.

    Attributes
    ----------
    safe : bool
        Whether float32 passed: finite wherever float64 is, errors within tolerance.
    points : int
        Points evaluated (the initial point plus jittered ones); the last of them, where
        float32 was only required to be finite (:data:`FINITENESS_POINTS`), have ``"finite"``
        in their ``per_point`` entries.
    logp_rel_error, grad_rel_error : float
        Largest relative errors seen over the points (``inf`` when float32 was not finite).
    logp_rtol, grad_rtol : float
        The tolerances applied.
    problem : str
        Why float32 failed, empty when it passed.
    seconds : float
        Time the check took.
    kept : str
        Empty for a check just run; for one read from :mod:`pymc_accel.check_store`, when the
        check it repeats was run (a model of the same structure and data was checked then).
    graph : str
        Which graph the errors are of: :data:`AS_WRITTEN` (passed as written) or
        :data:`AS_COMPILED` (failed as written, or checked with ``as_written_first=False``).
    written_problem : str
        For a check of :data:`AS_COMPILED`, why float32 failed as written.
    """

    safe: bool
    points: int
    logp_rel_error: float
    grad_rel_error: float
    logp_rtol: float = LOGP_RTOL
    grad_rtol: float = GRAD_RTOL
    problem: str = ""
    seconds: float = 0.0
    per_point: list[dict[str, Any]] = field(default_factory=list)
    kept: str = ""
    graph: str = AS_COMPILED
    written_problem: str = ""

    def summary(self) -> str:
        """One line for reports, with the measured errors and the tolerances."""
        finite_only = sum(1 for p in self.per_point if "finite" in p)
        errors = (
            f"max logp rel. error {self.logp_rel_error:.2g} (tolerance {self.logp_rtol:g}), "
            f"max gradient rel. error {self.grad_rel_error:.2g} (tolerance {self.grad_rtol:g}) "
            f"over {self.points - finite_only} points of the log density {self.graph}"
        )
        if finite_only:
            errors += f", finite at {finite_only} more"
        if self.written_problem:
            errors += f" (as written: {self.written_problem})"
        if self.kept:
            errors += f" (the check of {self.kept}, kept: same model structure and data)"
        if self.safe:
            return f"float32 safe: {errors}"
        return f"float32 unsafe: {self.problem}; {errors}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form."""
        return asdict(self)


def as_backends_rewrite(graph: Any, *, clone: bool = False,
                        differentiable: bool = False) -> Any:
    """``graph`` after the rewrites every backend compiles with, :data:`BACKEND_REWRITES` less
    :data:`BACKEND_EXCLUDED_REWRITES`, for the checks to compute what the samplers will.

    Parameters
    ----------
    graph : TensorVariable or list of TensorVariable
    clone : bool, default False
        Rewrite a copy of the graph on the same inputs; otherwise the graph itself is rewritten
        in place (its nodes rewired).
    differentiable : bool, default False
        Leave out :data:`NOT_DIFFERENTIABLE_REWRITES` too, so that ``pytensor.grad`` can
        differentiate the result.

    Returns
    -------
    TensorVariable or list of TensorVariable
        The rewritten output(s).
    """
    from pytensor.graph.rewriting.utils import rewrite_graph

    exclude = BACKEND_EXCLUDED_REWRITES + (NOT_DIFFERENTIABLE_REWRITES if differentiable else ())
    return rewrite_graph(graph, include=BACKEND_REWRITES, exclude=exclude, clone=clone)


def float32_graph(inputs: list[Any], outputs: list[Any]) -> tuple[list[Any], list[Any]]:
    """Rebuild a float64 graph so that it computes in float32.

    Every float64 input becomes a float32 input of the same shape, float64 constants and shared
    variables become float32 copies, explicit casts to float64 cast to float32, and each node is
    rebuilt on its float32 inputs. A node that cannot be rebuilt on float32 inputs (an op with
    fixed inner types, such as a ``Scan``) runs on its original dtypes with its float outputs
    rounded to float32, which still rounds at its boundary. A parameter check
    (``CheckAndRaise``, PyMC's ``CheckParameterValue``) passes its value through unchecked, as
    in the JAX runs float32 is checked for. In a graph with a scalar loop, a node that repeats
    an earlier one (the same op of the same inputs) is copied once, as the evaluator computes
    it once (:class:`pymc_accel.graph_building.RepeatedNodes`).

    Parameters
    ----------
    inputs, outputs : list of TensorVariable
        The graph, e.g. a model's value variables and ``[logp, *gradients]``.

    Returns
    -------
    new_inputs, new_outputs : list of TensorVariable
        A graph of new nodes only (it shares root constants and non-float inputs with the
        original).
    """
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import io_toposort
    from pytensor.raise_op import CheckAndRaise
    from pytensor.scalar.basic import Cast
    from pytensor.sparse import SparseTensorType, as_sparse_variable
    from pytensor.tensor.elemwise import Elemwise
    from pytensor.tensor.sharedvar import TensorSharedVariable

    mapping: dict[Any, Any] = {}
    rebuild = _Rebuilder()
    new_inputs = []
    for var in inputs:
        new = var
        if getattr(var.type, "dtype", None) == "float64":
            new = var.type.clone(dtype="float32")(name=var.name)
        mapping[var] = new
        new_inputs.append(new)

    def converted(var: Any) -> Any:
        if var in mapping:
            return mapping[var]
        new = var
        if getattr(var.type, "dtype", None) == "float64":
            if isinstance(var.type, SparseTensorType) and isinstance(var, Constant):
                # a SciPy sparse matrix (a sparse design matrix): np.asarray cannot convert it
                new = as_sparse_variable(var.data.astype("float32"), name=var.name)
            elif isinstance(var.type, SparseTensorType) and isinstance(var, SharedVariable):
                new = pytensor.shared(var.get_value(borrow=True).astype("float32"),
                                      name=var.name)
            elif isinstance(var, Constant):
                new = pt.constant(np.asarray(var.data, dtype="float32"), name=var.name)
            elif isinstance(var, TensorSharedVariable):
                new = pytensor.shared(
                    np.asarray(var.get_value(borrow=True), dtype="float32"),
                    name=var.name, shape=var.type.shape,
                )
        mapping[var] = new
        return new

    order = io_toposort(inputs, outputs)
    same = RepeatedNodes(order)  # a graph with a scalar loop: a repeated node copied once
    for node in order:
        op = node.op
        earlier = same.earlier(node)
        if earlier is not None:
            for old, first in zip(node.outputs, earlier.outputs, strict=True):
                mapping[old] = mapping[first]
            continue
        if isinstance(op, CheckAndRaise):
            # a parameter check passes its value through, as every JAX run does (PyTensor's
            # and PyMC's JAX conversions of CheckAndRaise and CheckParameterValue): its
            # tolerance was fixed for float64 when the graph was built (a ZeroSumNormal's
            # zero mean within 1e-9), which float32's rounding fails where no float32 run
            # evaluates the check
            mapping[node.outputs[0]] = converted(node.inputs[0])
            continue
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Cast) and (
            op.scalar_op.o_type.dtype == "float64"
        ):
            op = Elemwise(Cast(pytensor.scalar.float32, name="cast_float32"))
        new_ins = [converted(v) for v in node.inputs]
        try:
            rebuilt = rebuild(op, node, new_ins) or op.make_node(*new_ins)
            if len(rebuilt.outputs) != len(node.outputs):
                raise TypeError("output count changed")
            outs = rebuilt.outputs
        except Exception:  # fixed inner types: run as built, round the outputs
            originals = [
                pt.cast(n, o.type.dtype) if getattr(n.type, "dtype", None) != getattr(o.type, "dtype", None)
                else n
                for n, o in zip(new_ins, node.inputs, strict=True)
            ]
            outs = op.make_node(*originals).outputs
        for old, new in zip(node.outputs, outs, strict=True):
            if getattr(new.type, "dtype", None) == "float64":
                new = pt.cast(new, "float32")
            mapping[old] = new
    return new_inputs, [mapping.get(o, converted(o)) for o in outputs]


class _Rebuilder:
    """Nodes rebuilt on inputs that changed dtype only (their static shapes as the original
    node's), as their op's ``make_node`` would build them, for the two kinds of node whose
    ``make_node`` works out what the original node already says:

    - ``Elemwise``: its output dtypes are the scalar op's on the new dtypes, worked out once per
      scalar op and input dtypes (:func:`_scalar_out_dtypes`, kept across copies);
      ``make_node`` works them out, and builds a new ``TensorType``, for every node.
    - ``Alloc``: its output has the value's dtype and the original's static shape;
      ``make_node`` infers that shape by constant-folding the shape's graph (a ``FunctionGraph``
      and rewrites on each call), a good part of the copy's time on the GP's gradient.

    The outputs keep the original node's static shapes, and a type is made once per dtype and
    shape. The copy takes about a third less time on seed_small and gp_100
    (docs/benchmarks.md, "The checks' elementwise nodes evaluated without PyTensor's
    wrappers").
    """

    def __init__(self) -> None:
        from pytensor.tensor.basic import Alloc
        from pytensor.tensor.elemwise import Elemwise

        self._alloc, self._elemwise = Alloc, Elemwise
        self.types: dict[tuple, Any] = {}  # (dtype, static shape) -> TensorType

    def __call__(self, op: Any, node: Any, new_ins: list[Any]) -> Any:
        """``op`` applied to ``new_ins`` for ``node``, or ``None`` where the node is not one of
        the two kinds or an input's static shape changed (``make_node`` then)."""
        from pytensor.graph.basic import Apply

        elementwise = isinstance(op, self._elemwise) and not op.inplace_pattern
        if not (elementwise or type(op) is self._alloc) or any(
            getattr(new.type, "shape", None) != old.type.shape
            for new, old in zip(new_ins, node.inputs, strict=True)
        ):
            return None
        if elementwise:
            dtypes = _scalar_out_dtypes(op, new_ins)
        elif all(new.type == old.type for new, old
                 in zip(new_ins[1:], node.inputs[1:], strict=True)):  # the shape, unchanged
            dtypes = [new_ins[0].type.dtype]
        else:
            return None
        return Apply(op, list(new_ins), [self._type(dtype, old.type.shape)()
                                         for dtype, old in zip(dtypes, node.outputs,
                                                               strict=True)])

    def _type(self, dtype: str, shape: tuple) -> Any:
        from pytensor.tensor.type import TensorType

        tensor_type = self.types.get((dtype, shape))
        if tensor_type is None:
            tensor_type = self.types[(dtype, shape)] = TensorType(dtype, shape=shape)
        return tensor_type


#: Output dtypes of a scalar op on new input dtypes (:func:`_scalar_out_dtypes`), kept across
#: copies: the float32 check copies a graph as written and again as compiled, and for a scalar
#: loop working them out rebuilds the loop's inner graph (``ScalarLoop.make_node``). Kept
#: within one copy only, the interval model's two float32 copies took 70 ms, kept across them
#: 32-35 ms; the copula's 80 and 40-43 (selection-parts-cpu-2026-12-01-loop-dtypes.md in
#: docs/results). An op that cannot be rebuilt on them keeps its error's text, raised again as
#: a ``TypeError`` (the copy then runs the node on its original dtypes).
_OUT_DTYPES: dict[tuple, list[str] | str] = {}
_OUT_DTYPES_MAX = 1024


def _scalar_out_dtypes(op: Any, new_ins: list[Any]) -> list[str]:
    """The output dtypes ``op`` (an ``Elemwise``) gives ``new_ins``, as ``make_scalar_node``
    works them out, kept in :data:`_OUT_DTYPES` per scalar op and input dtypes."""
    key = (op.scalar_op, tuple(v.type.dtype for v in new_ins))
    kept = _OUT_DTYPES.get(key)
    if kept is None:
        try:
            kept = [o.type.dtype for o in op.make_scalar_node(*new_ins).outputs]
        except Exception as exc:  # raised again below, each time
            kept = f"{type(exc).__name__}: {exc}"
        if len(_OUT_DTYPES) >= _OUT_DTYPES_MAX:
            _OUT_DTYPES.clear()
        _OUT_DTYPES[key] = kept
    if isinstance(kept, str):
        raise TypeError(kept)
    return list(kept)


def _points(model: Any, n_jittered: int, initvals: dict | None, seed: int,
            start_point: dict | None = None) -> list[dict]:
    """The initial point (``start_point`` where the caller has it) and ``n_jittered`` copies
    jittered as PyMC jitters chain starts.

    PyMC adds uniform(-1, 1) noise to each transformed initial value
    (``make_initial_point_expression``); adding it here to the one initial point saves
    compiling a second, jittered initial-point function (about half of what the points cost).
    """
    if start_point is None:
        point = initial_point(model, initvals, seed)
    else:
        missing = sorted({v.name for v in model.value_vars} - set(start_point))
        if missing:
            raise ValueError(
                f"start_point has no value for {', '.join(missing)}: pass the model's initial "
                "point on the transformed scale (pymc_accel.graph_building.initial_point), or "
                "leave start_point out")
        point = start_point
    points = [point]
    for i in range(n_jittered):
        rng = np.random.default_rng(seed + 1 + i)
        points.append({
            name: (value + rng.uniform(-1.0, 1.0, size=np.shape(value))).astype(value.dtype)
            if np.issubdtype(np.asarray(value).dtype, np.floating) else value
            for name, value in point.items()
        })
    return points


def _rel(err: float, ref: float) -> float:
    return err / max(abs(ref), 1.0)


@quietly
def check_float32(
    model: Any = None,
    *,
    n_jittered: int = JITTERED_POINTS,
    logp_rtol: float = LOGP_RTOL,
    grad_rtol: float = GRAD_RTOL,
    initvals: dict | None = None,
    seed: int = 0,
    budget_seconds: float = CHECK_BUDGET_SECONDS,
    logp_graph: LogpGraph | None = None,
    as_written_first: bool | None = None,
    start_point: dict | None = None,
    finiteness_points: int = FINITENESS_POINTS,
) -> PrecisionCheck:
    """Compare the model's float32 log density and gradient with float64's.

    The log density is evaluated as written first (the profile's graph and gradient, when
    ``logp_graph`` holds them); only if float32 fails there is it evaluated again as the
    backends compile it (:func:`as_backends_rewrite`, then differentiated), at least at as many
    points as the first evaluation reached. The rewrites are made to keep a value or compute it
    more stably (see :data:`AS_WRITTEN`), so float32 that is safe as written is taken to be
    safe as compiled, and the rewrites are paid only where they can change the verdict.

    Parameters
    ----------
    model : pm.Model, optional
        A model built in float64 (defaults to the model on the context stack).
    n_jittered : int, default 3
        Jittered points evaluated besides the initial point.
    logp_rtol, grad_rtol : float
        Tolerances on the relative errors (see the module docstring).
    initvals : dict, optional
        Initial values, as given to ``pm.sample``.
    seed : int, default 0
        Seed of the jitter.
    budget_seconds : float, default 10
        Jittered points are evaluated only while the check has taken less than this (the
        initial point always is), so a very large model's check stays bounded; ``points``
        says how many were evaluated.
    logp_graph : pymc_accel.profile.LogpGraph, optional
        The model's log density and gradient as its profile built them
        (:func:`pymc_accel.profile.profile_and_logp`), to start from instead of building them
        again. The check leaves them as they were: the run that follows jaxifies the same log
        density (:mod:`pymc_accel.backends.run_logp`).
    as_written_first : bool, optional
        Whether to check the log density as written first. By default it is, where the log
        density reads at most :data:`AS_WRITTEN_MAX_DATA_BYTES` of data. False checks it as
        the backends compile it only (what the check did until 2026-11-27;
        ``bench/compare_check_rewrites.py`` compares the two).
    start_point : dict, optional
        The model's initial point from ``initvals`` and ``seed``
        (:func:`pymc_accel.graph_building.initial_point`), where the caller has evaluated it
        already (the selection's scale spread evaluates it first); not modified.
    finiteness_points : int, default :data:`FINITENESS_POINTS`
        Further jittered points, evaluated after the others within the same budget, where
        float32 must only be finite wherever float64 is (float64 is evaluated there only
        where float32 is not).

    Returns
    -------
    PrecisionCheck
        ``safe`` is False, with the reason and the measured errors, when float32 is not finite
        where float64 is or an error exceeds its tolerance.

    Raises
    ------
    UnsupportedArgumentError
        The log density has no gradient (an op without one, a simulator): no sampler that
        runs in float32 can run the model.
    """
    import pymc as pm
    import pytensor
    from pytensor.gradient import NullTypeGradError

    from pymc_accel.errors import UnsupportedArgumentError

    start = time.perf_counter()
    model = pm.modelcontext(model)
    if logp_graph is None:
        value_vars, logp, grads = list(model.value_vars), model.logp(), None
        data_bytes = None
    else:  # the profile's: a copy of the model with dims and data frozen, as a JAX run has them
        value_vars, logp = list(logp_graph.value_vars), logp_graph.logp
        grads, data_bytes = logp_graph.grads, logp_graph.data_bytes
    if as_written_first is None:
        if data_bytes is None:
            from pymc_accel.profile import data_bytes_read

            data_bytes = data_bytes_read([logp])
        as_written_first = data_bytes <= AS_WRITTEN_MAX_DATA_BYTES
    points = _points(model, n_jittered + finiteness_points, initvals, seed, start_point)
    logp, grads = _checked_log_density(logp_graph, value_vars, logp, grads, points)
    common = {"value_vars": value_vars, "points": points, "logp_rtol": logp_rtol,
              "grad_rtol": grad_rtol, "start": start, "budget_seconds": budget_seconds,
              "compared": 1 + n_jittered}
    written_problem, reached = "", 0
    if as_written_first:
        try:
            f64 = None
            if grads is None:
                grads = pytensor.grad(logp, value_vars)
            elif logp_graph is not None:
                # the profile's, built once for the scale spread and this check
                from pymc_accel.curvature import gradient_function

                f64 = gradient_function(logp_graph)
            written = _as_written([logp, *grads], f64=f64, **common)
        except Exception as exc:  # a graph the check cannot build: settled as compiled
            written = f"building it raised {type(exc).__name__}: {str(exc)[:100]}", 0
        if isinstance(written, PrecisionCheck):
            return written
        written_problem, reached = written
    # Every backend compiles the log density with PyTensor's stabilizing rewrites
    # (log(1 - sigmoid(x)) becomes -softplus(x), and so on); without them a float32 Bernoulli
    # likelihood whose logit reaches about 17 evaluates log(0), and the check would refuse
    # float32 that the samplers compute finitely (the seed blog's model at full size did).
    # Stabilize before differentiating, as the JAX backends do (they differentiate the rewritten
    # logp): the gradient of log(1 - sigmoid(x)) taken first is 0/0 in float32 at large x.
    logp = as_backends_rewrite(logp, clone=logp_graph is not None,  # the profile's kept whole
                               differentiable=True)
    try:
        grads = pytensor.grad(logp, value_vars)
    except (NotImplementedError, NullTypeGradError) as exc:  # an op with no gradient
        raise UnsupportedArgumentError(
            "float32 accuracy cannot be checked: the model's log density has no gradient "
            f"({type(exc).__name__}: {str(exc).splitlines()[0][:120]}). Only gradient "
            "samplers run in float32 here, and none can run this model; sample it in the "
            "precision it was built in (nuts_sampler='auto' or 'pymc' does)") from None
    check = _as_compiled([logp, *grads], model=model, initvals=initvals, at_least=reached,
                         **common)
    check.written_problem = written_problem
    return check


def _checked_log_density(logp_graph: Any, value_vars: list[Any], logp: Any, grads: Any,
                         points: list[dict]) -> tuple[Any, Any]:
    """The log density the check checks, the JAX runs' (:func:`_with_held_distances`), and its
    gradient where it is built already (else ``None``): the profile's where the profile judged
    the distances as the runs judge them (:attr:`pymc_accel.profile.LogpGraph.held_logp`),
    else ``logp`` (``logp_graph``'s as PyMC built it, or the model's) judged here at the
    check's first two points, and ``grads`` only where nothing is held."""
    from pymc_accel.backends import run_logp

    if (logp_graph is not None and logp_graph.distances_judged
            and run_logp.ZERO_COINCIDENT_DISTANCES):
        return logp_graph.differentiated_logp, grads
    held = _with_held_distances(value_vars, logp, points)
    if held is not None:  # what the JAX runs compute: not the gradient given
        return held, None
    if logp_graph is not None and logp_graph.held_logp is not None:  # held as profiled, not now
        return logp, None
    return logp, grads


def _with_held_distances(value_vars: list[Any], logp: Any, points: list[dict]) -> Any:
    """``logp`` with a GP kernel's distances between coinciding inputs held at an exact zero,
    as every JAX run holds them (:mod:`pymc_accel.rewrites.coincident_distances`, judged at the
    initial point and the first jittered one, as a run judges them at its own two), or ``None``
    where nothing is held.

    Only JAX runs sample in float32, so the check checks the log density they compute. As
    written, the float32 gradient at such an element is float32's rounding of a cancelled sum
    through a square root's derivative of 5e5: the user sweep's GP of repeated measurements had
    a float32 gradient error of 0.11 without the hold, and its float32 posterior agreed with
    float64's (docs/benchmarks.md, "GPs users write")."""
    from pymc_accel.backends import run_logp

    if not run_logp.ZERO_COINCIDENT_DISTANCES:
        return None
    from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

    def two_points() -> list[list[Any]]:
        return [[point[v.name] for v in value_vars] for point in points[:2]]

    (out,), count = zeroed_coincident_distances([logp], list(value_vars), two_points)
    return out if count else None


def _evaluators(value_vars: list[Any], outputs: list[Any],
                f64: Any = None) -> tuple[Any, Any]:
    """Functions of a point giving ``outputs`` (a log density and its gradient) as the log
    density and one flat gradient, in float64 (``f64`` where it was built already) and,
    rebuilt by :func:`float32_graph`, in float32 (the gradient as float64 values); each an
    :class:`~pymc_accel.graph_building.Evaluator`, which builds no PyTensor function."""
    ins32, outs32 = float32_graph(value_vars, outputs)
    if f64 is None:
        f64 = Evaluator(value_vars, outputs)
    f32 = Evaluator(ins32, outs32)

    def flat(values: list[Any]) -> Any:
        lp, *g = values
        return lp, (np.concatenate([np.ravel(x) for x in g]).astype("float64") if g
                    else np.zeros(0))

    def at64(point: dict) -> tuple[Any, Any]:
        return flat(f64(*[point[v.name] for v in value_vars]))

    def at32(point: dict) -> tuple[Any, Any]:
        args = [point[v.name] for v in value_vars]
        return flat(f32(*[np.asarray(a, dtype="float32") if a.dtype == np.float64 else a
                          for a in args]))

    return at64, at32


def _errors(lp32: Any, g32: Any, lp64: Any, g64: Any) -> tuple[float, float]:
    """Relative errors of float32's log density and gradient (see the module docstring)."""
    le = _rel(float(abs(float(lp32) - float(lp64))), float(lp64))
    ge = float(np.linalg.norm(g32 - g64)) / max(float(np.linalg.norm(g64)), 1.0)
    return le, ge


def _finite(lp: Any, g: Any) -> bool:
    return bool(np.isfinite(lp) and np.all(np.isfinite(g)))


def _where(i: int) -> str:
    return "the initial point" if i == 0 else f"jittered point {i}"


def _as_written(
    outputs: list[Any], *, value_vars: list[Any], points: list[dict], logp_rtol: float,
    grad_rtol: float, start: float, budget_seconds: float, compared: int, f64: Any = None,
) -> PrecisionCheck | tuple[str, int]:
    """The check of the log density as written, which can only vouch for float32: its
    :class:`PrecisionCheck` where float32 passes at every point, otherwise why not and the
    index of the first point where it does not (float32 evaluated first, so that a non-finite
    one costs no float64 evaluation there). The check as compiled then settles it. ``f64``:
    the float64 function of ``outputs``, where it was compiled already."""
    at64, at32 = _evaluators(value_vars, outputs, f64=f64)
    first32 = _float32_first(at32, points, start, budget_seconds, compared)
    if isinstance(first32, tuple):
        return first32
    logp_err = grad_err = 0.0
    per_point = []
    for i, point in enumerate(points):
        if i > 0 and time.perf_counter() - start > budget_seconds:
            break
        try:
            lp32, g32 = first32[i] if i < len(first32) else at32(point)
            finite32 = _finite(lp32, g32)
            if finite32 and i >= compared:  # finiteness only: the check as compiled confirms
                per_point.append({"point": _where(i), "logp32": float(lp32), "finite": True})
                continue
            if finite32:
                lp64, g64 = at64(point)
        except Exception as exc:  # e.g. a float32 parameter check raising
            return _failed_as_written(i, exc)
        if not finite32:
            return _failed_as_written(i)
        if not _finite(lp64, g64):
            return f"float64 is not finite at {_where(i)}", i
        le, ge = _errors(lp32, g32, lp64, g64)
        if le > logp_rtol or ge > grad_rtol:
            return f"float32 differs from float64 beyond the tolerances at {_where(i)}", i
        per_point.append({"point": _where(i), "logp64": float(lp64), "logp32": float(lp32),
                          "logp_rel_error": le, "grad_rel_error": ge})
        logp_err, grad_err = max(logp_err, le), max(grad_err, ge)
    return PrecisionCheck(
        safe=True, points=len(per_point), logp_rel_error=logp_err, grad_rel_error=grad_err,
        logp_rtol=logp_rtol, grad_rtol=grad_rtol, seconds=time.perf_counter() - start,
        per_point=per_point, graph=AS_WRITTEN,
    )


def _float32_first(at32: Any, points: list[dict], start: float, budget_seconds: float,
                   compared: int) -> list[tuple[Any, Any]] | tuple[str, int]:
    """float32 at every point, before any float64 comparison, where all the check's
    evaluations fit in twice over what is left of the budget (timed on the first): float32
    not finite at a further start (a finiteness point) then costs no float64 evaluation, which
    on the copula is PyTensor's derivative of ``gammainc``, a scalar loop, evaluated in Python
    (4 of its 9 evaluations as written). A check that passes evaluates the same points, in
    another order. The values, in the points' order (fewer where the budget might not hold
    them all: the rest are evaluated point by point, as before), or why float32 failed and
    where, as :func:`_as_written` returns it."""
    values: list[tuple[Any, Any]] = []
    for i, point in enumerate(points):
        began = time.perf_counter()
        try:
            lp32, g32 = at32(point)
        except Exception as exc:  # e.g. a float32 parameter check raising
            return _failed_as_written(i, exc)
        if not _finite(lp32, g32):
            return _failed_as_written(i)
        values.append((lp32, g32))
        if i == 0:  # every evaluation of the check at this one's cost, twice over
            each = time.perf_counter() - began
            if (time.perf_counter() - start
                    + 2 * each * (len(points) - 1 + compared)) > budget_seconds:
                break
    return values


def _failed_as_written(i: int, exc: Exception | None = None) -> tuple[str, int]:
    """Why the check as written failed at point ``i``, and ``i``: evaluating it raised
    ``exc``, or (none given) float32 is not finite there."""
    if exc is not None:
        return f"evaluating it raised {type(exc).__name__} at {_where(i)}: {str(exc)[:100]}", i
    return f"float32 is not finite at {_where(i)}", i


def _parameter_check_errors(outputs: list[Any]) -> tuple[type, ...]:
    """The exception types the parameter checks (``CheckAndRaise`` ops, PyMC's
    ``CheckParameterValue``) of the graph of ``outputs`` raise."""
    from pytensor.graph.traversal import apply_ancestors
    from pytensor.raise_op import CheckAndRaise

    return tuple({node.op.exc_type for node in apply_ancestors(outputs)
                  if isinstance(node.op, CheckAndRaise)})


def _as_compiled(
    outputs: list[Any], *, value_vars: list[Any], points: list[dict], logp_rtol: float,
    grad_rtol: float, start: float, budget_seconds: float, compared: int, model: Any,
    initvals: dict | None, at_least: int = 0,
) -> PrecisionCheck:
    """The check of the log density as the backends compile it (``outputs``, rewritten and
    differentiated), which settles float32 either way. The point where the check as written
    failed (index ``at_least``) is evaluated first, and the points before it whatever the
    budget. The check stops at its first failure, which refuses float32 whatever the other
    points give (interval-censored waiting times, ``gammainc`` of a free shape: the check from
    927 to 494 ms), so float32 failing where it failed as written is refused on that point's
    evaluations alone, not those of every point before it (each an evaluation of PyTensor's
    derivative of ``gammainc``, a scalar loop, on the copula). A float64 failure at the initial
    point is reported as ``pm.sample`` reports a start outside the support. From index
    ``compared`` on float32 need only be finite where float64 is: float64 is evaluated there
    only where float32 is not finite (or raises)."""
    at64, at32 = _evaluators(value_vars, outputs)
    # what a parameter check raises where its condition fails (PyMC's ParameterValueError):
    # the backends compile such checks into -inf (PyMC's ``check_parameters`` rewrite), so
    # at a jittered point it means float64 is not finite there, not that the check failed (a
    # jittered LKJ correlation that is not positive definite raised and the check with it)
    check_errors = _parameter_check_errors(outputs)
    logp_err = grad_err = 0.0
    problem = ""
    per_point = []
    evaluated = 0
    order = list(range(len(points)))
    if 0 < at_least < len(points):  # where float32 failed as written, first
        order = [at_least, *order[:at_least], *order[at_least + 1:]]
    for i in order:
        point = points[i]
        if i > at_least and time.perf_counter() - start > budget_seconds:
            break
        if problem:  # float32 refused: the other points cannot change that
            break
        evaluated += 1
        where = _where(i)
        if i >= compared:  # finiteness only
            try:
                lp32, g32 = at32(point)
                finite32 = _finite(lp32, g32)
            except Exception:  # a float32 parameter check raising: not finite, as below
                lp32, finite32 = math.nan, False
            if finite32:
                per_point.append({"point": where, "logp32": float(lp32), "finite": True})
                continue
            try:
                lp64, g64 = at64(point)
            except check_errors:
                lp64, g64 = -math.inf, np.zeros(0)
            if not _finite(lp64, g64):
                per_point.append({"point": where, "skipped": "float64 not finite"})
                continue
            problem = problem or (f"float32 is not finite at {where} (float64 logp "
                                  f"{float(lp64):.6g})")
            logp_err, grad_err = math.inf, math.inf
            per_point.append({"point": where, "logp64": float(lp64), "logp32": float(lp32)})
            continue
        try:
            lp64, g64 = at64(point)
        except Exception as exc:
            if i > 0 and isinstance(exc, check_errors):
                per_point.append({"point": where, "skipped": "float64 not finite"})
                continue
            if i > 0:
                raise
            # a start outside the support: name the variable as sample() does, not PyTensor's
            # ParameterValueError from deep in the graph
            from pymc_accel.integration import check_initial_point

            check_initial_point(model, initvals)
            raise
        lp32, g32 = at32(point)
        if not _finite(lp64, g64):
            per_point.append({"point": where, "skipped": "float64 not finite"})
            continue  # nothing to compare against
        if not _finite(lp32, g32):
            what = "log density" if not np.isfinite(lp32) else "gradient"
            value = float(lp32) if not np.isfinite(lp32) else "non-finite entries"
            problem = problem or (
                f"the {what} is not finite in float32 at {where} ({value}; float64 logp "
                f"{float(lp64):.6g})"
            )
            logp_err, grad_err = math.inf, math.inf
            per_point.append({"point": where, "logp64": float(lp64), "logp32": float(lp32)})
            continue
        le, ge = _errors(lp32, g32, lp64, g64)
        per_point.append({"point": where, "logp64": float(lp64), "logp32": float(lp32),
                          "logp_rel_error": le, "grad_rel_error": ge})
        if not problem and le > logp_rtol:
            problem = f"log density differs from float64 by {le:.2g} (relative) at {where}"
        if not problem and ge > grad_rtol:
            problem = f"gradient differs from float64 by {ge:.2g} (relative) at {where}"
        logp_err, grad_err = max(logp_err, le), max(grad_err, ge)
    compared = [p for p in per_point if "skipped" not in p]
    if not compared and not problem:
        problem = "float64 itself is not finite at any checked point; nothing to compare"
    return PrecisionCheck(
        safe=not problem,
        points=evaluated,
        logp_rel_error=logp_err,
        grad_rel_error=grad_err,
        logp_rtol=logp_rtol,
        grad_rtol=grad_rtol,
        problem=problem,
        seconds=time.perf_counter() - start,
        per_point=per_point,
        graph=AS_COMPILED,
    )


def divergence_fraction(idata: Any) -> tuple[float, str]:
    """Share of divergent transitions in a result, and which draws it was measured on.

    Tuning draws are used when the result kept them (``warmup_sample_stats``), the kept draws
    otherwise.

    Returns
    -------
    fraction : float
        ``nan`` when the result has no ``diverging`` statistic.
    where : str
        ``"tuning"`` or ``"draws"``.
    """
    for group, where in (("warmup_sample_stats", "tuning"), ("sample_stats", "draws")):
        if group in idata.children and "diverging" in idata[group]:
            div = np.asarray(idata[group]["diverging"])
            if div.size:
                return float(div.mean()), where
    return math.nan, "draws"
