"""Whether a model's log density can run on JAX: the ops PyTensor has no JAX conversion for,
and those JAX cannot differentiate where the log density needs it
(:data:`NO_JAX_DERIVATIVE_INPUTS`).

A JAX backend (NumPyro, DEER-MALA, and the plugins that run on JAX) hands the log density to
PyTensor's JAX linker, which converts each op with ``jax_funcify``. A model with an op of the
user's own (a black-box likelihood written as a PyTensor ``Op`` with a Python ``perform``) has
no conversion: every JAX candidate failed at its run with PyTensor's ``NotImplementedError``
("No JAX conversion for the given `Op`"), the plugins' as the plugin's fault, and ``auto``
could choose one. The numba backend runs such an op in numba's object mode, and nutpie and
PyMC's NUTS sample the model.

The ops of PyTensor, PyMC and pymc-accel are taken to convert (PyTensor's JAX linker covers
those a PyMC log density holds), but for a few of PyMC's (:data:`PYMC_OPS_WITHOUT_JAX`), a few
of PyTensor's (:data:`PYTENSOR_OPS_WITHOUT_JAX`) and PyTensor's sparse and typed-list ops; an
op from any other module, or one of those, is looked up in ``jax_funcify``'s registry, which
imports JAX, so only a model with such an op pays for it. Written by hand: PyTensor offers no
check short of converting the graph.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: Modules whose ops are taken to have a JAX conversion, but for :data:`PYMC_OPS_WITHOUT_JAX`,
#: :data:`PYTENSOR_OPS_WITHOUT_JAX` and the modules of :data:`_LOOKED_UP_MODULES`.
_CONVERTED_MODULES = ("pytensor.", "pymc.", "pymc_accel.")
#: PyTensor's modules whose ops are each looked up in ``jax_funcify``'s registry: PyTensor
#: converts some of its sparse ops (a sparse design matrix's product) and not others
#: (``sp_sum``), and none of its typed lists (``pt.choose`` over a list of tensors).
_LOOKED_UP_MODULES = ("pytensor.sparse.", "pytensor.typed_list.")
#: PyMC's ops that a log density can hold and that have no JAX conversion, by qualified name:
#: ``pm.Interpolated``'s spline, ``pm.PolyaGamma``'s density, ``pm.math.batched_diag`` and
#: ``pm.ode.DifferentialEquation`` (SciPy's solver). They are looked up in ``jax_funcify``'s
#: registry as a user's op is (a user may register one). Until 2026-11-30 every op of PyMC's
#: was taken to convert, and ``nuts_sampler="numpyro"`` on a model with ``pm.Interpolated``
#: failed inside PyTensor's JAX linker (``bench/sweep_user_models.py``'s
#: ``interpolated_prior``). ``tests/test_jax_support.py`` lists PyMC's op classes without a
#: conversion, so a PyMC release that adds one fails there until it is added here.
PYMC_OPS_WITHOUT_JAX = frozenset({
    "pymc.distributions.dist_math.SplineWrapper",
    "pymc.distributions.continuous._PolyaGammaLogDistFunc",
    "pymc.math.BatchedDiag",
    "pymc.ode.ode.DifferentialEquation",
})
#: PyTensor's ops that a user's log density can hold, as written, and that have no JAX
#: conversion, by qualified name: a graph with one raises PyTensor's ``NotImplementedError``
#: when compiled in PyTensor's JAX mode (``tests/test_jax_support.py`` compiles one for each but
#: ``Fourier``, ``Choose`` and ``PdbBreakpoint``, and checks every listed class has no
#: conversion). A Python function made an op with ``pytensor.compile.ops.as_op`` (PyMC's
#: documented black-box likelihood), the real FFT (``pytensor.tensor.fft.rfft``), least squares,
#: the tensor solve and inverse, the QZ decomposition, the tridiagonal LU, a row permutation,
#: ``pt.choose``, the 2-D convolution, ``pytensor.tensor.optimize``'s minimizers and root
#: finders, complex numbers, rounding half away from zero, and the debugging ops (``Print``,
#: ``PdbBreakpoint``). Until 2026-12-01 every op of PyTensor's was taken to convert, and
#: ``auto`` chose NumPyro for a smoothing prior written with ``rfft``, which failed inside
#: PyTensor's JAX linker (``bench/sweep_user_models.py``'s ``spectral_smoothing``). PyTensor's
#: ops without a conversion that its rewrites replace before JAX sees them (its BLAS ops,
#: ``xtensor``'s ops, Sylvester's solver, ``join_dims``) are not listed;
#: ``tests/test_jax_support.py`` walks PyTensor's op classes, so a release that adds one fails
#: there until it is placed.
PYTENSOR_OPS_WITHOUT_JAX = frozenset({
    "pytensor.compile.ops.FromFunctionOp",
    "pytensor.tensor.fft.RFFTOp",
    "pytensor.tensor.fft.IRFFTOp",
    "pytensor.tensor.fourier.Fourier",
    "pytensor.tensor.linalg.solvers.lstsq.Lstsq",
    "pytensor.tensor.linalg.solvers.lstsq.TensorSolve",
    "pytensor.tensor.linalg.inverse.TensorInv",
    "pytensor.tensor.linalg.decomposition.schur.QZ",
    "pytensor.tensor.linalg.solvers.tridiagonal.LUFactorTridiagonal",
    "pytensor.tensor.linalg.solvers.tridiagonal.SolveLUFactorTridiagonal",
    "pytensor.tensor.basic.PermuteRowElements",
    "pytensor.tensor.basic.Choose",
    "pytensor.tensor.signal.conv.Convolve2d",
    "pytensor.tensor.extra_ops.CpuContiguous",
    "pytensor.tensor.optimize.MinimizeOp",
    "pytensor.tensor.optimize.MinimizeScalarOp",
    "pytensor.tensor.optimize.RootOp",
    "pytensor.tensor.optimize.RootScalarOp",
    "pytensor.scalar.basic.Complex",
    "pytensor.scalar.basic.RoundHalfAwayFromZero",
    "pytensor.printing.Print",
    "pytensor.breakpoint.PdbBreakpoint",
})
#: Every op looked up in ``jax_funcify``'s registry by its name, whatever its module.
_LOOKED_UP = PYMC_OPS_WITHOUT_JAX | PYTENSOR_OPS_WITHOUT_JAX


def _inner_ops(op: Any) -> Iterator[Any]:
    """``op`` and the ops it computes with: an elementwise op's scalar op, a blockwise op's
    core op, and the ops of an inner graph (a Scan's step, an ``OpFromGraph``, a fused
    ``Composite``), recursively."""
    yield op
    for attribute in ("scalar_op", "core_op"):
        inner = getattr(op, attribute, None)
        if inner is not None:
            yield from _inner_ops(inner)
    fgraph = getattr(op, "fgraph", None)
    for node in getattr(fgraph, "apply_nodes", ()):
        yield from _inner_ops(node.op)


def _qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _converts(cls: type) -> bool:
    """Whether ``jax_funcify`` has a conversion for ops of class ``cls``: one registered for
    it or a base class, and for a scalar op PyTensor's generic one only where the op names its
    NumPy function (``nfunc_spec``), as that conversion needs."""
    from pytensor.link.jax.dispatch import jax_funcify
    from pytensor.scalar.basic import ScalarOp

    found = jax_funcify.dispatch(cls)
    if found is jax_funcify.dispatch(object):
        return False
    if issubclass(cls, ScalarOp) and found is jax_funcify.dispatch(ScalarOp):
        return getattr(cls, "nfunc_spec", None) is not None
    return True


#: Scalar ops whose derivative under JAX is NaN where PyTensor's symbolic one is finite, by
#: class name. ``Erfcx`` is what PyMC's normal log-CDF and log-survival function are written
#: with (``pymc.distributions.dist_math.normal_lcdf``: a switch between an ``erfcx`` branch and
#: a ``log1p(-erfc)`` one): JAX differentiates both branches, the one not taken is infinite in
#: the tails, and the switch's zero cotangent times it is NaN (pymc-devs/pymc#7980). A censored
#: normal regression's NumPyro chains started in such a tail never moved on 2 of 4 seeds
#: (docs/benchmarks.md, "A third set of families").
NAN_JAX_GRADIENT_OPS = ("Erfcx",)


def ops_without_jax(outputs: Iterable[Any]) -> list[str]:
    """The ops of the graph of ``outputs`` that PyTensor's JAX linker cannot convert.

    Parameters
    ----------
    outputs : iterable of Variable
        A model's log density (the graph a JAX backend jaxifies).

    Returns
    -------
    list of str
        Each such op's class as ``module.QualName``, sorted; empty when the graph converts.
    """
    return jax_findings(outputs)[0]


def jax_findings(outputs: Iterable[Any]) -> tuple[list[str], list[str]]:
    """:func:`ops_without_jax`, and the ops of :data:`NAN_JAX_GRADIENT_OPS` the graph holds
    (their class names, sorted), from one walk of the graph."""
    without, nan_prone, _ = jax_findings_with_derivatives(outputs)
    return without, nan_prone


#: Scalar ops whose JAX conversion has no derivative with respect to some inputs, by class
#: name: the positions of those inputs, and what the op is in a PyMC model. JAX's
#: ``betainc`` raises "Betainc gradient with respect to a and b not supported" when it is
#: differentiated in ``a`` or ``b``: a censored Student-t with free degrees of freedom (its
#: log-CDF) failed inside JAX under every JAX sampler (``bench/sweep_user_models.py``'s
#: ``censored_student_t``, 2026-12-01). JAX's other special functions that PyTensor converts
#: (gammainc, gammaincc, hyp2f1, zeta, polygamma, i0e, i1e, betaln, xlogy) each differentiate
#: in every floating input (``tests/test_jax_support.py`` checks each).
NO_JAX_DERIVATIVE_INPUTS = {
    "BetaInc": ((0, 1), "the regularized incomplete beta function, as in a Student-t's, a "
                        "beta's or a negative binomial's CDF"),
}


def _reads_a_parameter(var: Any) -> bool:
    """Whether ``var`` depends on a root that is neither a constant nor a shared variable: a
    value variable (or another input the caller differentiates in), not data."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import ancestors

    return any(v.owner is None and not isinstance(v, (Constant, SharedVariable))
               for v in ancestors([var]))


def jax_findings_with_derivatives(
        outputs: Iterable[Any]) -> tuple[list[str], list[str], list[str]]:
    """:func:`jax_findings`, and the ops of :data:`NO_JAX_DERIVATIVE_INPUTS` whose inputs
    without a JAX derivative read a parameter (their class names, sorted), from one walk.

    The op is looked for where the log density applies it elementwise, as PyMC writes it; one
    inside an inner graph (a Scan's step) is not looked at, and JAX's own error stays."""
    from pytensor.graph.traversal import apply_ancestors
    from pytensor.tensor.elemwise import Elemwise

    foreign: dict[str, type] = {}
    nan_prone: set[str] = set()
    underivable: set[str] = set()
    seen: set[int] = set()
    for node in apply_ancestors(list(outputs)):
        if isinstance(node.op, Elemwise):
            name = type(node.op.scalar_op).__name__
            positions = NO_JAX_DERIVATIVE_INPUTS.get(name, ((), ""))[0]
            if name not in underivable and any(
                    i < len(node.inputs) and _reads_a_parameter(node.inputs[i])
                    for i in positions):
                underivable.add(name)
        if id(node.op) in seen:
            continue
        seen.add(id(node.op))
        for op in _inner_ops(node.op):
            cls = type(op)
            if cls.__name__ in NAN_JAX_GRADIENT_OPS:
                nan_prone.add(cls.__name__)
            name = _qualified_name(cls)
            if (not cls.__module__.startswith(_CONVERTED_MODULES) or name in _LOOKED_UP
                    or cls.__module__.startswith(_LOOKED_UP_MODULES)):
                foreign[name] = cls
    without = sorted(name for name, cls in foreign.items() if not _converts(cls))
    return without, sorted(nan_prone), sorted(underivable)


#: PyMC's random variables whose log density is a switch between the density and its log-CDF or
#: log-survival function, by op class name: JAX differentiates the branch not taken too, which
#: is infinite where the data lie beyond it, and the switch's zero cotangent times it is NaN.
#: A censored Weibull regression's NumPyro chains never moved on 4 seeds of 4, a censored normal
#: one's on 2 of 4 (docs/benchmarks.md, "A third set of families" and "A fourth set").
SWITCHED_LOG_DENSITY_OPS = ("CensoredRV", "TruncatedRV")


def switched_log_densities(model: Any) -> list[str]:
    """Names of the model's variables of :data:`SWITCHED_LOG_DENSITY_OPS` (``pm.Censored``,
    ``pm.Truncated``), free or observed, in the model's order."""
    return [rv.name for rv in (*model.free_RVs, *model.observed_RVs)
            if type(rv.owner.op).__name__ in SWITCHED_LOG_DENSITY_OPS]


def _at_or_below_zero(x: Any) -> Any:
    """Where a root's, a logarithm's or a power's under 1 derivative is infinite or its value
    NaN: at or below 0."""
    return x <= 0


#: Scalar ops whose value and derivative are NaN for an argument outside their domain, by
#: class name: the test of an argument outside it. Where a log density takes one inside a
#: switch's branch, as a threshold regression's ``pt.switch(x > c, b * pt.sqrt(x - c), 0)``
#: does, the switch keeps the NaN values out of the log density, and PyTensor's gradient,
#: which applies the switch to the derivative, stays finite; JAX differentiates the branch not
#: taken too, and its zero cotangent times the NaN derivative is NaN. NumPyro's, BlackJAX's and
#: DEER-MALA's chains never left their start on that model (``bench/sweep_user_models.py``'s
#: ``threshold_sqrt``, 2026-12-01), where PyMC's and nutpie's ran. A power with a constant
#: exponent that is not an integer (``x ** 0.5``) is one too, for a negative base, and for a
#: base of 0 where the exponent is under 1. So is a root of 0, whose derivative is infinite
#: (``pt.switch(dose > 0, pt.sqrt(dose * k), 0)``, 2026-12-02).
NAN_OUTSIDE_DOMAIN = {
    "Sqrt": _at_or_below_zero,
    "ArcSin": lambda x: abs(x) > 1,
    "ArcCos": lambda x: abs(x) > 1,
    "ArcCosh": lambda x: x < 1,
    "ArcTanh": lambda x: abs(x) > 1,
}
#: Logarithms, whose derivative is infinite at 0: PyMC's Poisson log density switches to 0
#: where the rate and the count are both 0, and its branch not taken is ``0 * log(0)``, so a
#: proportional hazards model by the Poisson trick, whose rates are 0 where a subject was no
#: longer at risk, left every JAX sampler's chains at their start (the sweep's
#: ``piecewise_exponential_hazards``, 2026-12-02). PyMC's log densities take logarithms inside
#: the switches that bound their supports almost everywhere, so one is looked at only where its
#: argument is a product by data holding a zero (:func:`_zero_from_data`), as such rates are:
#: the initial point is evaluated for those models alone.
NAN_AT_ZERO_FROM_DATA = {
    "Log": _at_or_below_zero,
    "Log2": _at_or_below_zero,
    "Log10": _at_or_below_zero,
}
#: Ops whose output holds a zero where their first input does: data broadcast, indexed,
#: reshaped (a product by data holding a zero is zero there too: :func:`_zero_from_data`).
_ZERO_KEEPING_OPS = frozenset({"DimShuffle", "Subtensor", "AdvancedSubtensor",
                               "AdvancedSubtensor1", "Reshape", "SpecifyShape"})


def _zero_from_data(node: Any, holding: set, constants: dict) -> bool:
    """Whether ``node``'s output holds an exact zero by the data, whatever the parameters: a
    product (``Mul``) with a constant holding a zero or with a variable in ``holding``, or one
    of :data:`_ZERO_KEEPING_OPS` applied to such a constant or variable. ``constants`` keeps
    each constant's answer, by ``id``, for the walk (data of a million rows is read once)."""
    import numpy as np
    from pytensor.graph.basic import Constant
    from pytensor.tensor.elemwise import Elemwise

    def holds(var: Any) -> bool:
        if var in holding:
            return True
        if not isinstance(var, Constant):
            return False
        if id(var) not in constants:
            constants[id(var)] = bool(np.any(np.asarray(var.data) == 0))
        return constants[id(var)]

    op = node.op
    if isinstance(op, Elemwise):
        return type(op.scalar_op).__name__ == "Mul" and any(holds(i) for i in node.inputs)
    return type(op).__name__ in _ZERO_KEEPING_OPS and bool(node.inputs) and holds(node.inputs[0])


#: How :func:`switched_nan_branches` names what it finds, in ``nan_jax_gradient_ops``
SWITCHED_BRANCH_SUFFIX = " in a switch's branch"


def _non_integer_constant(var: Any) -> Any:
    """``var``'s values where it is a constant, or a constant broadcast, with an element that
    is not an integer; ``None`` otherwise."""
    import numpy as np
    from pytensor.graph.basic import Constant

    while var.owner is not None and type(var.owner.op).__name__ == "DimShuffle":
        var = var.owner.inputs[0]
    if not isinstance(var, Constant):
        return None
    data = np.asarray(var.data)
    if np.issubdtype(data.dtype, np.floating) and np.any(data != np.round(data)):
        return data
    return None


def _negative_base(x: Any) -> Any:
    """Where a power's base lies outside its domain for a non-integer exponent (one under 1 is
    judged at 0 too, :func:`_at_or_below_zero`: ``pt.switch(dose > 0, (dose * k) ** 0.3, 0)``
    gave JAX a NaN gradient in ``k`` at every start, 2026-12-02)."""
    return x < 0


def _switched_domain_arguments(outputs: list[Any], params: list[Any]
                               ) -> list[tuple[str, Any, Callable]]:
    """The arguments, reading a parameter, of the :data:`NAN_OUTSIDE_DOMAIN` ops (of powers
    with a constant exponent that is not an integer, as ``"Pow"``, and of the
    :data:`NAN_AT_ZERO_FROM_DATA` ops where the argument holds a zero by the data) from which a
    value reaches a branch of a switch: where JAX's derivative can be NaN if the argument lies
    outside the domain. One walk of the graph in order."""
    from pytensor.graph.traversal import io_toposort
    from pytensor.tensor.elemwise import Elemwise

    varying = set(params)
    zeroed: set = set()  # variables holding a zero by the data (_zero_from_data)
    constants: dict[int, bool] = {}
    # variable -> the ops' arguments behind it, each with the test of its domain
    reaching: dict[Any, list[tuple[str, Any, Callable]]] = {}
    found: list[tuple[str, Any, Callable]] = []
    for node in io_toposort(list(params), list(outputs)):
        inputs = node.inputs
        if any(i in varying for i in inputs):
            varying.update(node.outputs)
        if _zero_from_data(node, zeroed, constants):
            zeroed.update(node.outputs)
        behind = [a for i in inputs for a in reaching.get(i, ())]
        if isinstance(node.op, Elemwise):
            name = type(node.op.scalar_op).__name__
            if name == "Switch":
                found += [a for i in inputs[1:] for a in reaching.get(i, ())]
                behind = []
            elif inputs and inputs[0] in varying:
                exponent = (_non_integer_constant(inputs[1])
                            if name == "Pow" and len(inputs) == 2 else None)
                if name in NAN_OUTSIDE_DOMAIN:
                    behind.append((name, inputs[0], NAN_OUTSIDE_DOMAIN[name]))
                elif name in NAN_AT_ZERO_FROM_DATA and inputs[0] in zeroed:
                    behind.append((name, inputs[0], NAN_AT_ZERO_FROM_DATA[name]))
                elif exponent is not None:  # under 1, the derivative is infinite at 0 too
                    behind.append((name, inputs[0], _at_or_below_zero
                                   if exponent.min() < 1 else _negative_base))
        if behind:
            for out in node.outputs:
                reaching[out] = behind
    return list({id(a): (name, a, test) for name, a, test in found}.values())


def switched_nan_branches(outputs: list[Any], params: list[Any],
                          points: Callable[[], list[dict]]) -> list[str]:
    """The ops of :data:`NAN_OUTSIDE_DOMAIN` (non-integer powers, and the logarithms of
    :data:`NAN_AT_ZERO_FROM_DATA`) inside a switch's branch whose argument lies outside their
    domain at every one of ``points``, each named with
    :data:`SWITCHED_BRANCH_SUFFIX`, sorted: JAX's derivative of the log density is NaN there,
    where PyTensor's is finite.

    A switch's branch found by the graph alone is not enough: PyMC's own log densities take
    square roots inside the switches that bound their support (an LKJ prior's), of values
    that are never negative. So each argument found is evaluated at the points
    (:class:`pymc_accel.graph_building.Evaluator`, no compile); only a model with such a switch
    pays for it. The profile hands the model's initial point and a copy jittered as PyMC
    jitters a chain's start: an argument outside the domain at both lies outside it wherever a
    chain starts (a Poisson rate that is 0 by the data), where one outside it at the initial
    point alone (a gamma prior on a vector's length, 0 at the unjittered start) is not, and
    the JAX samplers' chains, started jittered, ran on it (the sweep's ``norm_at_the_start``).

    Parameters
    ----------
    outputs : list of Variable
        The log density.
    params : list of Variable
        Its value variables.
    points : callable
        Returns the points (value variables' names to values); called only where a switch's
        branch is found.
    """
    import numpy as np

    from pymc_accel.graph_building import Evaluator

    found = _switched_domain_arguments(outputs, params)
    if not found:
        return []
    evaluate = Evaluator(list(params), [a for _, a, _ in found])
    outside = None
    for values in points():
        arguments = evaluate(*[values[p.name] for p in params])
        here = set()
        for (name, _, test), value in zip(found, arguments, strict=True):
            if np.any(test(np.asarray(value))):
                here.add(name + SWITCHED_BRANCH_SUFFIX)
        outside = here if outside is None else outside & here
        if not outside:  # nothing outside at this point: the further points cannot name any
            break
    return sorted(outside or ())


def nan_gradient_reason(ops: list[str], variables: list[str] = ()) -> str:
    """The refusal, in ``auto``, of a JAX candidate for a log density with the ops ``ops``
    (:data:`NAN_JAX_GRADIENT_OPS`, and those :func:`switched_nan_branches` names) or the
    censored or truncated ``variables``."""
    what = []
    if variables:
        what.append(f"censored or truncated variables ({', '.join(variables)}), whose log "
                    "density switches to a log-CDF or log-survival function")
    switched = [op for op in ops if op.endswith(SWITCHED_BRANCH_SUFFIX)]
    named = [op for op in ops if op not in switched]
    if named:
        what.append(f"{', '.join(named)} (PyMC's normal log-CDF)")
    if switched:
        what.append(f"{', '.join(switched)} not taken, whose argument is outside the function's "
                    "domain at the initial point and at a jittered start")
    return (f"the log density has {' and '.join(what)}: JAX differentiates the branch not "
            "taken too, and its derivative is NaN where that branch is infinite or NaN and "
            "PyTensor's gradient is finite (pymc-devs/pymc#7980), so a chain started there "
            "never moves. Name the sampler (nuts_sampler=...) to run it anyway")


def still_without_jax(names: Iterable[str]) -> list[str]:
    """Those of ``names`` (from :func:`ops_without_jax`, kept with a profile) that still have
    no JAX conversion: one may have been registered since the profile was made. A class that
    cannot be found is taken as still without one."""
    left = []
    for name in names:
        module, _, qualname = name.rpartition(".")
        try:
            cls: Any = importlib.import_module(module)
            for part in qualname.split("."):
                cls = getattr(cls, part)
            if _converts(cls):
                continue
        except Exception:  # a class defined in a function, or a module gone: not convertible
            pass
        left.append(name)
    return left


def no_derivative_reason(names: list[str]) -> str:
    """The refusal of a JAX candidate for a log density with the ops ``names``
    (:data:`NO_JAX_DERIVATIVE_INPUTS`) applied to a parameter where JAX has no derivative."""
    listed = "; ".join(f"{name} ({NO_JAX_DERIVATIVE_INPUTS[name][1]})"
                       if name in NO_JAX_DERIVATIVE_INPUTS else name for name in names)
    return (f"the log density applies {listed} to a parameter where JAX has no derivative of "
            "it (jax.scipy.special.betainc is not differentiable in a or b), and every JAX "
            "sampler needs that gradient: use nuts_sampler='numba' (PyMC's NUTS or nutpie, "
            "whose gradient is PyTensor's own)")


def refusal_reason(names: list[str]) -> str:
    """The refusal of a JAX candidate for a log density with the ops ``names``."""
    listed = ", ".join(name.rpartition(".")[2] for name in names)
    return (f"the log density has op(s) with no JAX conversion ({listed}), which every JAX "
            "sampler needs: register one with pytensor.link.jax.dispatch.jax_funcify.register, "
            "or use nuts_sampler='numba' (it runs such ops in numba's object mode)")
