"""ModelProfile: what a PyMC model costs to sample, read from its graph without sampling."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import pymc as pm
import pytensor
from pytensor.gradient import NullTypeGradError

from pymc_accel.census import (
    OpCensus,
    census_of,
    series_evaluations,
    series_function_nodes,
)
from pymc_accel.graph_building import initial_point, quietly
from pymc_accel.jax_support import (
    jax_findings_with_derivatives,
    switched_log_densities,
    switched_nan_branches,
)
from pymc_accel.xla_series import loop_work, xla_gradient_stand_in

_DISCRETE_PREFIXES = ("int", "uint", "bool")


@dataclass
class ModelProfile:
    """Sizes, dtypes and an op census of a model's log density and gradient.

    Attributes
    ----------
    n_free : int
        Size of all free (value) variables together: the sampler's dimension.
    free_vars : dict of str to tuple
        Shape of each value variable (on the unconstrained scale).
    n_observed : int
        Number of observed values.
    discrete_vars : list of str
        Free variables with integer or boolean values.
    value_dtypes, data_dtypes : list of str
        Dtypes of the value variables and of the model's data.
    float_dtype : {"float32", "float64"}
        Precision the model was built in.
    census : OpCensus
        Work of one logp-and-gradient evaluation.
    profile_seconds : float
        Time spent building this profile.
    note : str
        What could not be profiled, if anything.
    data_bytes : int
        Bytes of the data the log density reads (observed values, data containers, constant
        arrays of the graph), in the dtypes the model holds them: what a device keeps resident.
    centred_hierarchies : list of str
        Free variables whose spread depends on another free variable (a centred hierarchy,
        :func:`centred_hierarchies`): the funnel geometry NUTS diverges in.
    scale_spread : float or None
        How differently scaled the variables are at the initial point
        (:func:`pymc_accel.curvature.scale_spread`), where the selector evaluated it for this
        model and its data; ``None`` otherwise (a profile is shared by models of one structure,
        whatever their data, and is stored without it).
    scale_spread_note : str
        What the spread was measured from.
    posterior_conditioning : float or None
        How correlated the posterior is at its mode, as the spread of its correlation scales
        (:func:`pymc_accel.conditioning.posterior_conditioning`), where the selector evaluated it
        for this model and its data; ``None`` otherwise, as the scale spread.
    posterior_conditioning_note : str
        What the conditioning was measured from.
    ops_without_jax : list of str
        Ops of the log density that PyTensor's JAX linker cannot convert
        (:func:`pymc_accel.jax_support.ops_without_jax`): the JAX samplers cannot run it.
    nan_jax_gradient_ops : list of str
        Ops of the log density whose derivative under JAX is NaN where PyTensor's is finite
        (:data:`pymc_accel.jax_support.NAN_JAX_GRADIENT_OPS`, and, named so, those in a
        switch's branch whose argument is outside their domain at the initial point and at a
        jittered start: :func:`pymc_accel.jax_support.switched_nan_branches`): ``auto`` leaves
        the JAX samplers out.
    ops_without_jax_derivative : list of str
        Ops the log density applies to a parameter where JAX has no derivative of them
        (:data:`pymc_accel.jax_support.NO_JAX_DERIVATIVE_INPUTS`): the JAX samplers cannot
        run it.
    switched_log_densities : list of str
        Censored or truncated variables (:func:`pymc_accel.jax_support.switched_log_densities`),
        whose log density JAX's derivative can make NaN: ``auto`` leaves the JAX samplers out.
    gradient_free_vars : list of str
        Free variables the log density has no gradient for (:func:`gradient_free_variables`):
        only a sampler with gradient-free steps (PyMC's, which gives them slice sampling) can
        run the model.
    xla_census : OpCensus or None
        For a log density with functions JAX computes by loops of its own
        (``census.SERIES_FUNCTIONS``), the work of the log density and the gradient JAX takes
        of it (:func:`pymc_accel.xla_series.xla_gradient_stand_in`), which the XLA runtimes
        are priced on; ``None`` otherwise (they are priced on ``census``).
    """

    n_free: int
    free_vars: dict[str, tuple[int, ...]]
    n_observed: int
    discrete_vars: list[str]
    value_dtypes: list[str]
    data_dtypes: list[str]
    float_dtype: str
    census: OpCensus
    profile_seconds: float = 0.0
    note: str = ""
    model_name: str = ""
    data_bytes: int = 0
    centred_hierarchies: list[str] = field(default_factory=list)
    scale_spread: float | None = None
    scale_spread_note: str = ""
    posterior_conditioning: float | None = None
    posterior_conditioning_note: str = ""
    ops_without_jax: list[str] = field(default_factory=list)
    gradient_free_vars: list[str] = field(default_factory=list)
    nan_jax_gradient_ops: list[str] = field(default_factory=list)
    switched_log_densities: list[str] = field(default_factory=list)
    ops_without_jax_derivative: list[str] = field(default_factory=list)
    xla_census: OpCensus | None = None

    @property
    def has_discrete(self) -> bool:
        """True when some free variable is discrete."""
        return bool(self.discrete_vars)

    @property
    def has_dense_linalg(self) -> bool:
        """True when the graph has dense linear algebra (dot products, decompositions)."""
        return bool(self.census.dense_linalg_ops)

    @property
    def working_set_bytes(self) -> float:
        """Bytes one chain's gradient evaluation keeps live: the data, a few arrays the size
        of the largest one a kernel touches (an operand, its result and its adjoint) and the
        sampler's state vectors (position, momentum, gradient and a NUTS tree's ends). While
        the working sets of the chains running side by side fit in the CPU's last-level cache,
        they do not compete for memory bandwidth."""
        itemsize = 4 if self.float_dtype == "float32" else 8
        return float(self.data_bytes + 3 * self.census.largest_array_bytes
                     + 8 * self.n_free * itemsize)

    @property
    def has_scan(self) -> bool:
        """True when the graph has a sequential Scan."""
        return bool(self.census.scans)

    def summary(self) -> dict[str, Any]:
        """The figures a report shows, as plain data."""
        c = self.census
        return {
            "free dimension": self.n_free,
            "observed values": self.n_observed,
            "discrete variables": ", ".join(self.discrete_vars) or "none",
            "precision of model": self.float_dtype,
            "gradient flops": f"{c.flops:.3g}",
            "gradient bytes": f"{c.bytes:.3g}",
            "kernels": c.kernels,
            # a Scan's step launched once a step, compiled once (what compile figures count)
            **({"compiled kernels": c.compiled_kernels}
               if c.compiled_kernels != c.kernels else {}),
            "compiled loops": _loops_line(c),
            "dense linear algebra": (
                f"{c.dense_linalg_share:.0%} of flops, largest operand {c.largest_dense_operand}"
                f" ({_dense_ops_line(c)})"
                if self.has_dense_linalg
                else "none"
            ),
            "sequential scans": _scans_line(c) if c.scans else "none",
            "centred hierarchies": ", ".join(self.centred_hierarchies) or "none",
            **({"ops without JAX": ", ".join(self.ops_without_jax)}
               if self.ops_without_jax else {}),
            **({"no JAX derivative": ", ".join(self.ops_without_jax_derivative)}
               if self.ops_without_jax_derivative else {}),
            **({"NaN JAX derivatives": ", ".join(
                [*self.nan_jax_gradient_ops, *self.switched_log_densities])}
               if self.nan_jax_gradient_ops or self.switched_log_densities else {}),
            **({"no gradient for": ", ".join(self.gradient_free_vars)}
               if self.gradient_free_vars else {}),
            **({"scale spread": self.scale_spread_note or f"{self.scale_spread:.3g}"}
               if self.scale_spread is not None else {}),
            **({"posterior conditioning": self.posterior_conditioning_note
                or f"{self.posterior_conditioning:.3g}"}
               if self.posterior_conditioning is not None else {}),
            # reused from an earlier profile, or shapes the census could not know
            **({"profile note": self.note} if self.note else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form."""
        d = asdict(self)
        d["free_vars"] = {k: list(v) for k, v in self.free_vars.items()}
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelProfile:
        """Rebuild a profile from :meth:`to_dict`'s form."""
        data = dict(data)
        data["free_vars"] = {k: tuple(v) for k, v in data["free_vars"].items()}
        data["census"] = OpCensus.from_dict(data["census"])
        if data.get("xla_census") is not None:
            data["xla_census"] = OpCensus.from_dict(data["xla_census"])
        return cls(**data)


def scan_launch_share(census: OpCensus) -> tuple[int, float]:
    """Kernel launches the graph's Scans make one after another per gradient, and the share of
    a datacenter GPU's modelled gradient time they take (:mod:`pymc_accel.costmodel`'s launch
    latency and roofline): near 1 when the scans' per-step launches dominate."""
    from pymc_accel import costmodel

    launches = sum((s.n_steps or 1) * s.inner_kernels for s in census.scans) // 3  # ~1/3 fused
    launch_s = launches * costmodel.GPU_LAUNCH_SECONDS
    total = max(1, census.kernels // 3) * costmodel.GPU_LAUNCH_SECONDS + max(
        census.bytes / costmodel.GPU_BANDWIDTH, census.flops / costmodel.GPU_FLOPS["float64"]
    )
    return launches, launch_s / total if total > 0 else 0.0


def _scans_line(census: OpCensus) -> str:
    """Each scan (steps, state, affine or not) and whether its launches dominate a GPU."""
    text = "; ".join(s.describe() for s in census.scans)
    launches, share = scan_launch_share(census)
    if share > 0.5:
        text += (f" -- {launches} sequential kernel launches per gradient, {share:.0%} of a GPU's"
                 " modelled time: launch cost dominates on a GPU")
        if any(s.affine for s in census.scans):
            text += " unless the affine scans run as parallel prefixes"
    return text


def _loops_line(census: OpCensus) -> str:
    """E.g. ``66 scalar, 51 vector, 0 nested``: the kernels a numba compile generates code for,
    by the rank they loop over (what its compile time follows)."""
    ranks = census.compiled_kernels_by_rank
    return f"{ranks['0']} scalar, {ranks['1']} vector, {ranks['2+']} nested"


def _dense_ops_line(census: OpCensus, most: int = 4) -> str:
    """The costliest dense ops with their operand shapes, e.g. ``Cholesky(200x200), ...``."""
    ops = sorted(census.dense_linalg_operands, key=lambda d: -d.flops)
    text = ", ".join(d.describe() for d in ops[:most])
    return text + (f", +{len(ops) - most} more" if len(ops) > most else "")


def model_float_dtype(model: pm.Model) -> str:
    """The precision ``model`` was built in: float32 where every float free variable is
    float32, float64 where any is not, ``pytensor.config.floatX`` without float variables."""
    dtypes = {v.dtype for v in model.value_vars if v.dtype.startswith("float")}
    if dtypes == {"float32"}:
        return "float32"
    if dtypes:
        return "float64"
    return pytensor.config.floatX


def data_bytes_read(outputs: list) -> int:
    """Bytes of the constant arrays and shared data that ``outputs`` read (their data), as
    held in memory."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import graph_inputs

    total = 0
    for var in graph_inputs(outputs):
        if isinstance(var, Constant):
            total += int(getattr(var.data, "nbytes", 0))
        elif isinstance(var, SharedVariable):
            total += int(getattr(var.get_value(borrow=True), "nbytes", 0))
    return total


@dataclass
class LogpGraph:
    """The log density graph a profile built: its value variables (of the model's copy with dims
    and data frozen, named as the model's), its output and the gradient the census counted
    (``None`` where none was taken). The float32 check starts from it rather than building the
    log density and its gradient again (:func:`pymc_accel.precision.check_float32`), and the
    selection's JAX run jaxifies its log density (:mod:`pymc_accel.backends.run_logp`).

    Where the profile held a GP kernel's coinciding distances at zero, as every JAX run holds
    them (:func:`held_log_density`), ``grads`` is the gradient of that log density,
    :attr:`held_logp`: the one the JAX runs compute and the float32 check checks. ``logp``
    stays as PyMC built it, for the runs to rewrite as their own (a numba run computes it as
    written)."""

    value_vars: list[Any]
    logp: Any
    grads: list[Any] | None = None
    #: bytes of the data the log density reads (its constants and shared variables)
    data_bytes: int | None = None
    #: names of the value variables the log density has no gradient for (``grads`` is then
    #: ``None``: :func:`gradient_free_variables`)
    gradient_free_vars: list[str] = field(default_factory=list)
    #: a weak reference to the model it was built from (``None``: not recorded)
    source: Any = field(default=None, repr=False, compare=False)
    #: ``[logp, *grads]`` as an evaluator (:class:`pymc_accel.graph_building.Evaluator`), built
    #: once, by whichever evaluates them first (:func:`pymc_accel.curvature.gradient_function`:
    #: the scale spread and the float32 check)
    evaluate: Any = field(default=None, repr=False, compare=False)
    #: the model's initial point (no ``initvals``), where the profile evaluated it (for the free
    #: variables' shapes, or to judge a GP kernel's distances); the selection's scale spread and
    #: float32 check start from it
    initial_point: dict | None = field(default=None, repr=False, compare=False)
    #: ``logp`` with a GP kernel's coinciding distances held at zero where the profile held any
    #: (:func:`held_log_density`), else ``None``
    held_logp: Any = field(default=None, repr=False, compare=False)
    #: whether the profile judged which distances to hold, at the points a JAX run judges
    #: them (``held_logp`` is then the log density those runs compute, or ``None`` where they
    #: hold none)
    distances_judged: bool = field(default=False, repr=False, compare=False)
    #: the census the XLA runtimes are priced on, where it differs (:class:`ModelProfile`)
    xla_census: Any = field(default=None, repr=False, compare=False)
    #: the log density's nodes of functions JAX computes by loops of its own, with the inputs
    #: that depend on the parameters (``census.series_function_nodes``); ``None`` where the
    #: graph was not walked for them
    series_nodes: list | None = field(default=None, repr=False, compare=False)

    def built_from(self, model: Any) -> bool:
        """Whether this graph was built from ``model`` (True where that was not recorded)."""
        return self.source is None or self.source() is model

    @property
    def differentiated_logp(self) -> Any:
        """The log density ``grads`` is the gradient of: :attr:`held_logp` where the profile
        held distances, else ``logp``."""
        return self.logp if self.held_logp is None else self.held_logp


#: Whether the profile holds a GP kernel's coinciding distances before it takes the gradient
#: (:func:`held_log_density`), so the float32 check evaluates the profile's gradient; False
#: leaves the hold to the check, which then takes PyTensor's gradient of the held log density
#: again, as before 2026-12-02. A benchmark sets it False to time the difference
#: (``bench/time_profile_hold.py``).
HOLD_DISTANCES = True

#: ``freeze_dims_and_data`` sets the model's initial values aside while it copies the model and
#: puts them back after; two copies at once (two threads selecting one model) would put back
#: the first one's blanks. Written by hand: PyMC has no lock of its own around it.
_FREEZING = threading.Lock()


def log_density_graph(model: pm.Model) -> tuple[LogpGraph, str]:
    """The model's log density on a copy with dims and data frozen (PyMC's own
    ``freeze_dims_and_data``), so every intermediate shape is static; the model itself where it
    has no dims or data, or where freezing fails (the note then says why).

    The profile counts this graph, and the JAX runs jaxify it
    (:func:`pymc_accel.backends.run_logp.jaxified_logp`): built once for a selection and its
    run, and built the same way by a run whose selection reused a kept profile, so a seeded
    run's draws do not depend on what was kept.

    Parameters
    ----------
    model : pm.Model

    Returns
    -------
    (LogpGraph, str)
        The graph without its gradient, and a note (empty when the copy was frozen or needed
        no freezing).
    """
    import weakref

    from pymc.model.transform.optimization import freeze_dims_and_data

    note = ""
    try:
        # nothing to freeze without dims or data containers (an eighth of a small model's profile)
        needs_freezing = bool(model.dim_lengths) or bool(model.data_vars)
        if needs_freezing:
            with _FREEZING:
                frozen = freeze_dims_and_data(model)
        else:
            frozen = model
    except Exception as exc:  # models with unusual data containers: census on shapes we know
        frozen, note = model, f"shapes partly unknown ({type(exc).__name__})"
    try:
        source = weakref.ref(model)
    except TypeError:  # not weak-referenceable: not recorded
        source = None
    return LogpGraph(list(frozen.value_vars), frozen.logp(), source=source), note


def _logp_and_grad_census(
    model: pm.Model,
) -> tuple[OpCensus, str, int, dict[str, tuple[int, ...]] | None, LogpGraph]:
    """Census of logp + gradient, on :func:`log_density_graph`'s copy of the model with dims and
    data frozen; with the bytes of the data the graph reads, the value variables' shapes when
    the frozen copy knows them all (``None`` otherwise), and the log density graph, whose
    ``grads`` and ``data_bytes`` it fills in (the gradient the census walked, the bytes above)."""
    graph, note = log_density_graph(model)
    logp, value_vars = graph.logp, graph.value_vars
    if HOLD_DISTANCES:
        try:
            graph.held_logp = held_log_density(graph, model)
        except Exception:  # an unusual graph: the float32 check judges at its own points
            graph.held_logp = None
        else:
            graph.distances_judged = True
    # the gradient of what the JAX runs compute, taken once for the census, the scale spread and
    # the float32 check, which took it again where distances were held: nine GPs' first
    # selections took 0.63-0.82x as long without that, seven the check skips 1.04-1.28x
    # (docs/results/profile-hold-cpu-2026-12-02{,-unchecked}.md)
    differentiated = graph.differentiated_logp
    try:
        grads, without = pytensor.grad(differentiated, value_vars), []
    except _NO_GRADIENT:
        without = gradient_free_variables(logp, value_vars)
        if not without:
            raise
        # the census counts what a compound sampler evaluates: the log density, and the
        # gradient of the variables that have one
        with_gradient = [v for v in value_vars if v.name not in without]
        grads = pytensor.grad(differentiated, with_gradient) if with_gradient else []
        note = "; ".join(filter(None, [note, "no gradient for " + ", ".join(without)]))
    census = census_of(list(value_vars), [differentiated, *grads])
    graph.series_nodes = series_nodes = series_function_nodes(list(value_vars), logp)
    census.series_evaluations = series_evaluations(series_nodes)
    graph.xla_census = None
    if series_nodes and not without:
        stand_in = xla_gradient_stand_in(logp, series_nodes)
        graph.xla_census = census_of(
            list(value_vars), [stand_in, *pytensor.grad(stand_in, value_vars)])
        # the same dictionary: the loops' work at the initial point is added to both
        graph.xla_census.series_evaluations = census.series_evaluations
    if census.unknown_shapes and not note:
        note = f"{census.unknown_shapes} intermediate shapes unknown; counted as 1 element each"
    shapes = {v.name: tuple(v.type.shape) for v in value_vars}
    static = all(d is not None for shape in shapes.values() for d in shape)
    data_bytes = data_bytes_read([logp])
    graph.grads = None if without else list(grads)
    graph.data_bytes, graph.gradient_free_vars = data_bytes, without
    return census, note, data_bytes, (shapes if static else None), graph


def held_log_density(graph: LogpGraph, model: pm.Model) -> Any:
    """``graph``'s log density with a GP kernel's distances between coinciding inputs held at an
    exact zero, as a JAX run of ``model`` holds them (judged at the same two points:
    :func:`pymc_accel.backends.run_logp.judging_points`), or ``None`` where nothing is held or
    the runs hold nothing (:data:`~pymc_accel.backends.run_logp.ZERO_COINCIDENT_DISTANCES`
    off). The model's initial point, where the judging evaluates it, is kept on ``graph``;
    where it cannot be evaluated nothing is held, as the runs hold nothing then.
    """
    from pymc_accel.backends import run_logp

    if not run_logp.ZERO_COINCIDENT_DISTANCES:
        return None
    from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

    def points() -> list[list[Any]]:  # by name: the frozen copy orders its variables itself
        if graph.initial_point is None:
            graph.initial_point = initial_point(model)
        names = [v.name for v in model.value_vars]
        by_name = (dict(zip(names, point))
                   for point in run_logp.judging_points(model, graph.initial_point)())
        return [[values[v.name] for v in graph.value_vars] for values in by_name]

    (held,), count = zeroed_coincident_distances([graph.logp], list(graph.value_vars), points)
    return held if count else None


#: What ``pytensor.grad`` raises for an op without a gradient: ``NotImplementedError`` (an op
#: that defines none, as a black-box likelihood's often does) or ``NullTypeGradError`` (one
#: whose gradient is undefined, a ``pm.Simulator``'s).
_NO_GRADIENT = (NotImplementedError, NullTypeGradError)


def gradient_free_variables(logp: Any, value_vars: list[Any]) -> list[str]:
    """Names of the value variables ``logp`` has no gradient for, each tried alone, as PyMC's
    ``assign_step_methods`` tries them before giving such a variable a gradient-free step
    (slice sampling)."""
    without = []
    for var in value_vars:
        try:
            pytensor.grad(logp, var)
        except _NO_GRADIENT:
            without.append(var.name)
    return without


def profile_model(model: pm.Model | None = None) -> ModelProfile:
    """Profile a PyMC model for sampler selection, without sampling or evaluating it.

    Parameters
    ----------
    model : pm.Model, optional
        Defaults to the model on the context stack.

    Returns
    -------
    ModelProfile
    """
    return profile_and_logp(model)[0]


@quietly
def profile_and_logp(model: pm.Model | None = None) -> tuple[ModelProfile, LogpGraph]:
    """:func:`profile_model`, with the log density graph it built (:class:`LogpGraph`), for a
    caller that goes on to evaluate it."""
    start = time.perf_counter()
    model = pm.modelcontext(model)
    census, note, data_bytes, static_shapes, graph = _logp_and_grad_census(model)
    names = [v.name for v in model.value_vars]
    if static_shapes is not None and set(static_shapes) == set(names):
        # no initial-point function to compile (a third of a small model's profile)
        free_vars = {name: static_shapes[name] for name in names}
    else:
        # PyMC's initial point expression evaluated without compiling a function (a
        # ZeroSumNormal's value variable keeps an unknown length in the frozen copy: PyMC's
        # compiled initial point took about 18 ms of zsn_42's 160 ms selection), and kept
        if graph.initial_point is None:  # the distances' judging points start from it
            graph.initial_point = initial_point(model)
        point = graph.initial_point
        free_vars = {v.name: tuple(point[v.name].shape) for v in model.value_vars}
    n_free = sum(math.prod(s) for s in free_vars.values())
    discrete = [rv.name for rv in model.free_RVs if rv.dtype.startswith(_DISCRETE_PREFIXES)]
    n_observed = 0
    for rv in model.observed_RVs:
        value = model.rvs_to_values[rv]
        data = getattr(value, "data", None)
        if data is None and hasattr(value, "get_value"):
            data = value.get_value()
        n_observed += int(getattr(data, "size", 1))
    data_dtypes = sorted({str(getattr(d, "dtype", "")) for d in model.data_vars} - {""})
    try:
        switched = switched_log_densities(model)
    except Exception:  # an unusual variable: none found, as before
        switched = []
    try:
        centred = centred_hierarchies(model)
    except Exception:  # an unusual distribution: no funnel found is the prior's answer
        centred = []
    try:
        without_jax, nan_prone, underivable = jax_findings_with_derivatives([graph.logp])
    except Exception:  # an unusual graph: the JAX linker's own error at the run, as before
        without_jax, nan_prone, underivable = [], [], []

    def start_point() -> dict:
        if graph.initial_point is None:
            graph.initial_point = initial_point(model)
        return graph.initial_point

    def start_points() -> list[dict]:  # the initial point, and a copy jittered as a chain's
        from pymc_accel.precision import _points

        return _points(model, 1, None, 0, start_point())

    try:
        nan_prone = sorted({*nan_prone, *switched_nan_branches(
            [graph.logp], list(graph.value_vars), start_points)})
    except Exception:  # a graph the evaluator cannot run: no such branch found, as before
        pass
    try:
        if graph.series_nodes:
            census.series_evaluations.update(
                loop_work(graph.series_nodes, list(graph.value_vars), start_point()))
    except Exception:  # a graph the evaluator cannot run: the loops left unpriced
        pass
    profile = ModelProfile(
        n_free=n_free,
        free_vars=free_vars,
        n_observed=n_observed,
        discrete_vars=discrete,
        value_dtypes=sorted({v.dtype for v in model.value_vars}),
        data_dtypes=data_dtypes,
        float_dtype=model_float_dtype(model),
        census=census,
        profile_seconds=time.perf_counter() - start,
        note=note,
        model_name=model.name or "",
        data_bytes=data_bytes,
        centred_hierarchies=centred,
        ops_without_jax=without_jax,
        nan_jax_gradient_ops=nan_prone,
        ops_without_jax_derivative=underivable,
        switched_log_densities=switched,
        gradient_free_vars=list(graph.gradient_free_vars),
        xla_census=graph.xla_census,
    )
    return profile, graph


#: The location parameter of location-scale families, by random variable op: their location
#: may depend on other free variables without a funnel (``x ~ Normal(mu, 1)``); every other
#: parameter of every distribution is taken to set the spread.
_LOCATION_PARAMETER = {"NormalRV": 0, "CauchyRV": 0, "LaplaceRV": 0, "LogisticRV": 0,
                       "GumbelRV": 0, "StudentTRV": 1, "MvNormalRV": 0, "MvStudentTRV": 1}


def centred_hierarchies(model: pm.Model) -> list[str]:
    """Free variables whose spread depends on another free variable: a centred hierarchy
    (``x ~ Normal(0, exp(v / 2))``, Neal's funnel; ``theta ~ Normal(mu, tau)`` with ``tau``
    free). Its posterior narrows by orders of magnitude along the scale variable, which no
    single step size fits: NUTS diverges in the neck and its trees' length depends on the seed
    more than on the sampler (on the zoo's funnel, PyMC's NUTS took 0.5x to 8x nutpie's
    leapfrogs per draw between seeds). A non-centred parameterisation
    (``x = exp(v / 2) * z``, ``z ~ Normal(0, 1)``) removes it.

    Parameters
    ----------
    model : pm.Model

    Returns
    -------
    list of str
        Names of the free variables whose non-location parameters have other free variables
        among their ancestors, in the model's order.
    """
    from pytensor.graph.traversal import ancestors

    free = set(model.free_RVs)
    found = []
    for rv in model.free_RVs:
        op = rv.owner.op
        if not hasattr(op, "dist_params"):
            continue
        others = free - {rv}
        location = _LOCATION_PARAMETER.get(type(op).__name__)
        spread = [p for i, p in enumerate(op.dist_params(rv.owner)) if i != location]
        if spread and others & set(ancestors(spread)):
            found.append(rv.name)
    return found


#: Largest constant or data array whose values (not only its shape) enter :func:`structure_key`:
#: small ones can set shapes (``pt.eye(n)``, a Scan's length, a dimension's length).
_VALUES_UP_TO = 64


def structure_key(model: pm.Model) -> tuple:
    """What a model's profile depends on, computed from its random-variable graph without
    building the log density: every node's op (with its properties) in graph order, every
    input's type, the shapes and dtypes of constants and data (the values of small ones), the
    variables' names and transforms, the dimensions' lengths and the float precision.

    Two models built by the same code with data of the same shapes have equal keys, so the
    second needs no profile of its own (a notebook cell run again builds a new ``pm.Model``).
    The values of large data do not enter: the profile counts work, which depends on shapes.
    Written by hand: PyTensor has no structural hash of a graph.

    Parameters
    ----------
    model : pm.Model

    Returns
    -------
    tuple
        Hashable; raises ``TypeError`` on a graph it cannot describe.
    """
    import numpy as np
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import io_toposort

    def data_key(data) -> tuple:
        array = np.asarray(data)
        if array.dtype == object:  # a random generator's state and the like: no shape to count
            return (type(data).__name__,)
        values = array.tolist() if array.size <= _VALUES_UP_TO else None
        return array.shape, str(array.dtype), repr(values)

    outputs = [*model.free_RVs, *model.observed_RVs, *model.deterministics, *model.potentials]
    numbers: dict[Any, int] = {}  # variable -> position, so the key names no Python object

    def var_key(var) -> tuple:
        if var in numbers:
            return ("v", numbers[var])
        if isinstance(var, Constant):
            return ("c", str(var.type), data_key(var.data))
        if isinstance(var, SharedVariable):
            return ("s", str(var.type), data_key(var.get_value(borrow=True)))
        return ("i", str(var.type), var.name)

    nodes = []
    for node in io_toposort([], outputs):
        props = node.op._props_dict() if hasattr(node.op, "_props_dict") else {}
        nodes.append((type(node.op).__name__, repr(sorted(props.items())),
                      tuple(var_key(v) for v in node.inputs)))
        for out in node.outputs:
            numbers[out] = len(numbers)
    names = tuple((var.name, var_key(var)) for var in outputs)
    transforms = tuple(sorted((rv.name, type(t).__name__)
                              for rv, t in model.rvs_to_transforms.items() if t is not None))
    dims = tuple(sorted((k, var_key(v)) for k, v in model.dim_lengths.items()))
    return (tuple(nodes), names, transforms, dims, pytensor.config.floatX)


def data_digest(model: pm.Model) -> str:
    """A hash of the values of the model's data: every constant and data container its random
    variables, deterministics and potentials read, and the observed values.

    :func:`structure_key` leaves out the values of large data (the profile counts work, which
    shapes decide); what a model computes depends on them too. Two models with equal structure
    keys and digests have the same log density, so a float32 check of one holds for the other
    (:mod:`pymc_accel.check_store`). Hashing reads every byte once: about 0.2 s for the 1M x 20
    covariates of the seed blog's model, against minutes for a float32 check of it.

    Parameters
    ----------
    model : pm.Model

    Returns
    -------
    str
        Hexadecimal BLAKE2b digest.
    """
    import hashlib

    import numpy as np
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import graph_inputs

    outputs = [*model.free_RVs, *model.observed_RVs, *model.deterministics, *model.potentials,
               *(model.rvs_to_values[rv] for rv in model.observed_RVs)]
    digest = hashlib.blake2b(digest_size=16)
    for var in graph_inputs(outputs):
        if isinstance(var, Constant):
            data = var.data
        elif isinstance(var, SharedVariable):
            data = var.get_value(borrow=True)
        else:
            continue
        array = np.asarray(data)
        if array.dtype == object:  # a random generator's state: not data
            continue
        digest.update(f"{array.shape}{array.dtype}".encode())
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()
