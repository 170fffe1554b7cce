"""Ops without a JAX conversion are found in a log density, inner graphs included."""

from __future__ import annotations

import numpy as np
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.compile.builders import OpFromGraph
from pytensor.tensor.elemwise import Elemwise

from pymc_accel.jax_support import ops_without_jax, refusal_reason, still_without_jax
from pymc_accel.models import eight_schools
from tests.models import (
    BlackBoxLogLike,
    blackbox_model,
    dose_power_model,
    dose_root_model,
    threshold_root_model,
    zero_exposure_poisson_model,
)

BLACK_BOX = "tests.models.BlackBoxLogLike"


class _Cube(ps.UnaryScalarOp):
    """A scalar op of a user's, without ``nfunc_spec``: PyTensor's generic JAX conversion
    needs one."""

    def impl(self, x):
        return x**3


class _NamedCube(_Cube):
    nfunc_spec = ("power", 2, 1)  # not the cube, but a NumPy function the conversion can find


class _Registered(BlackBoxLogLike):
    pass


def test_a_pymc_log_density_converts():
    model = eight_schools()
    assert ops_without_jax([model.logp()]) == []


def test_a_black_box_op_is_found_by_its_qualified_name():
    model = blackbox_model()
    assert ops_without_jax([model.logp()]) == [BLACK_BOX]


def test_an_op_inside_an_inner_graph_is_found():
    x = pt.dvector("x")
    inner = OpFromGraph([x], [BlackBoxLogLike()(x)])
    assert ops_without_jax([inner(pt.dvector("y")) * 2.0]) == [BLACK_BOX]


def test_a_scalar_op_converts_only_with_its_numpy_function_named():
    x = pt.dvector("x")
    assert ops_without_jax([Elemwise(_Cube(ps.upgrade_to_float))(x).sum()]) == [
        f"{__name__}._Cube"]
    assert ops_without_jax([Elemwise(_NamedCube(ps.upgrade_to_float))(x).sum()]) == []


def test_a_registered_conversion_is_seen_then_and_later():
    from pytensor.link.jax.dispatch import jax_funcify

    name = f"{__name__}._Registered"
    assert ops_without_jax([_Registered()(pt.dvector("x"))]) == [name]
    assert still_without_jax([name, BLACK_BOX]) == [name, BLACK_BOX]

    @jax_funcify.register(_Registered)
    def _(op, **kwargs):
        return lambda mu: -0.5 * ((mu - 1.0) ** 2).sum()

    assert ops_without_jax([_Registered()(pt.dvector("x"))]) == []
    assert still_without_jax([name, BLACK_BOX]) == [BLACK_BOX]


def test_a_class_that_cannot_be_found_is_taken_as_still_without():
    assert still_without_jax(["no_such_module.Op", "tests.models.NoSuchOp"]) == [
        "no_such_module.Op", "tests.models.NoSuchOp"]


def test_the_refusal_names_the_op_and_both_fixes():
    reason = refusal_reason([BLACK_BOX])
    assert "(BlackBoxLogLike)" in reason
    assert "jax_funcify.register" in reason and "nuts_sampler='numba'" in reason


def _censored_normal():
    """A normal regression censored above: PyMC writes its log-survival function with erfcx."""
    import numpy as np
    import pymc as pm

    y = np.minimum(np.random.default_rng(0).normal(size=50), 1.0)
    with pm.Model() as model:
        mu = pm.Normal("mu")
        pm.Censored("y", pm.Normal.dist(mu, 1.0), lower=None, upper=1.0, observed=y)
    return model


def test_erfcx_is_found_where_jaxs_derivative_is_nan_and_nowhere_else():
    from pymc_accel.jax_support import NAN_JAX_GRADIENT_OPS, jax_findings

    assert jax_findings([_censored_normal().logp()]) == ([], ["Erfcx"])
    assert jax_findings([eight_schools().logp()]) == ([], [])
    assert set(NAN_JAX_GRADIENT_OPS) == {"Erfcx"}


def test_jaxs_derivative_of_pymcs_normal_log_cdf_is_nan_in_the_tail_where_pytensors_is_not():
    """The reason the op is listed: if a JAX release or PyMC mends it, this fails and the
    entry can go (pymc-devs/pymc#7980)."""
    import jax
    import numpy as np
    import pymc as pm
    import pytensor

    from pymc_accel.backends.jax_model import jax_precision

    x = pt.dscalar("x")
    logcdf = pm.logcdf(pm.Normal.dist(0.0, 1.0), x)
    symbolic = pytensor.function([x], pytensor.grad(logcdf, x))
    with jax_precision("float64"):
        from pymc.sampling.jax import get_jaxified_graph

        jaxed = get_jaxified_graph(inputs=[x], outputs=[logcdf])
        derivative = jax.grad(lambda v: jaxed(v)[0])
        assert np.isnan(float(derivative(np.float64(-10.0))))
    assert np.isfinite(symbolic(-10.0))


def test_auto_leaves_jax_out_of_such_a_model_and_a_named_jax_sampler_runs_it():
    from pymc_accel.selection import select

    model = _censored_normal()
    report = select(model, chains=2)
    assert "numpyro" not in report.chosen
    refused = [r for r in report.rows if r.label.startswith("numpyro[cpu")]
    assert refused and all(r.status == "refused" and "pymc-devs/pymc#7980" in r.reason
                           for r in refused)
    assert select(model, backend="numpyro", chains=2).chosen.startswith("numpyro[cpu")


def test_censored_and_truncated_variables_are_found_and_auto_leaves_jax_out():
    """A censored Weibull has no erfcx, and its NumPyro chains never moved on any seed: the
    switch to the log-survival function is what JAX differentiates into NaN."""
    import numpy as np
    import pymc as pm

    from pymc_accel.jax_support import jax_findings, switched_log_densities
    from pymc_accel.selection import select

    t = np.minimum(np.random.default_rng(1).weibull(1.5, size=60) * 2.0, 3.0)
    with pm.Model() as weibull:
        k = pm.Gamma("k", 2.0, 1.0)
        pm.Censored("t", pm.Weibull.dist(alpha=k, beta=2.0), lower=None, upper=3.0, observed=t)
    with pm.Model() as truncated:
        lam = pm.Gamma("lam", 2.0, 1.0)
        pm.Truncated("y", pm.Exponential.dist(lam), upper=3.0, observed=t)
    with pm.Model() as truncated_normal:  # PyMC's TruncatedNormal: the normal log-CDF's erfcx
        mu = pm.Normal("mu")
        pm.Truncated("y", pm.Normal.dist(mu, 1.0), lower=0.0, observed=t)
    assert switched_log_densities(weibull) == ["t"]
    assert switched_log_densities(truncated) == ["y"]
    assert switched_log_densities(eight_schools()) == []
    assert jax_findings([truncated_normal.logp()]) == ([], ["Erfcx"])
    report = select(weibull, chains=2)
    assert report.profile["NaN JAX derivatives"] == "t"
    refused = [r for r in report.rows if r.label.startswith("numpyro[cpu")]
    assert refused and all(r.status == "refused" and "censored or truncated variables (t)"
                           in r.reason for r in refused)



def _betainc_potential(a_is_free: bool):
    """A log density with ``betainc(a, 2, x)``, its ``a`` a free variable or a constant."""
    import pymc as pm

    x = np.array([0.2, 0.5, 0.7])
    with pm.Model() as model:
        b = pm.Gamma("b", 2.0, 1.0)
        a = pm.Gamma("a", 2.0, 1.0) if a_is_free else 3.0
        pm.Potential("p", pt.log(pt.betainc(a, 2.0, x)).sum() - b)
    return model


def test_a_parameter_in_betaincs_a_or_b_is_found_and_data_there_is_not():
    from pymc_accel.jax_support import NO_JAX_DERIVATIVE_INPUTS, jax_findings_with_derivatives

    found = jax_findings_with_derivatives([_betainc_potential(True).logp()])
    assert found == ([], [], ["BetaInc"])
    assert jax_findings_with_derivatives([_betainc_potential(False).logp()]) == ([], [], [])
    assert jax_findings_with_derivatives([eight_schools().logp()]) == ([], [], [])
    assert set(NO_JAX_DERIVATIVE_INPUTS) == {"BetaInc"}


def test_jax_has_no_derivative_of_betainc_in_a_or_b():
    """The reason the op is listed: if a JAX release adds the derivative, this fails and the
    entry can go."""
    import jax
    import jax.scipy.special as jsp

    with pytest.raises(ValueError, match="Betainc gradient"):
        jax.grad(lambda a: jsp.betainc(a, 2.0, 0.4))(2.0)
    assert np.isfinite(float(jax.grad(lambda x: jsp.betainc(2.0, 3.0, x))(0.4)))
    # the other special functions PyTensor converts differentiate in every input (the list's
    # comment says so): if one stops, it belongs in NO_JAX_DERIVATIVE_INPUTS
    others = [(jsp.gammainc, (2.0, 1.5)), (jsp.gammaincc, (2.0, 1.5)),
              (jsp.hyp2f1, (1.0, 2.0, 3.0, 0.4)), (jsp.zeta, (2.5, 1.5)),
              (jsp.betaln, (2.0, 3.0)), (jsp.xlogy, (2.0, 1.5)), (jsp.i0e, (1.5,)),
              (jsp.i1e, (1.5,)), (lambda x: jsp.polygamma(1, x), (2.0,))]
    for function, args in others:
        for i in range(len(args)):
            assert np.isfinite(float(jax.grad(function, argnums=i)(*args))), (function, i)


def test_every_jax_sampler_is_refused_such_a_log_density_with_the_fix_named():
    """A censored Student-t with free degrees of freedom failed inside JAX ("Betainc gradient
    with respect to a and b not supported") under every JAX sampler named, and ``auto`` could
    choose one for a log density with ``betainc`` of a parameter outside a censored
    variable."""
    import pymc_accel
    from pymc_accel.errors import NoCandidateError
    from pymc_accel.selection import select

    model = _betainc_potential(True)
    report = select(model, chains=2)
    assert report.profile["no JAX derivative"] == "BetaInc"
    refused = [r for r in report.rows if r.label.startswith("numpyro[cpu")]
    assert refused and all(r.status == "refused" and "nuts_sampler='numba'" in r.reason
                           for r in refused)
    assert not report.chosen.startswith(("numpyro", "deer_mala"))
    with pytest.raises(NoCandidateError, match="no derivative of it"):
        pymc_accel.sample(model=model, nuts_sampler="numpyro", draws=10, tune=10, chains=1,
                          progressbar=False)
    assert "no JAX derivative" not in select(_betainc_potential(False), chains=2).profile


def _interpolated_model():
    import pymc as pm

    grid = np.linspace(-4, 4, 50)
    with pm.Model() as model:
        a = pm.Interpolated("a", grid, np.exp(-grid**2 / 2))
        pm.Normal("y", a, 1, observed=np.array([0.2, 0.9, -0.1]))
    return model


def test_pymcs_interpolated_density_is_found_without_a_conversion():
    """``pm.Interpolated``'s spline is an op of PyMC's with no JAX conversion. Taken to convert,
    as every op of PyMC's was, ``nuts_sampler="numpyro"`` failed inside PyTensor's JAX
    linker; now the JAX candidates are refused with the fix named."""
    import pymc_accel
    from pymc_accel.errors import NoCandidateError

    model = _interpolated_model()
    assert ops_without_jax([model.logp()]) == ["pymc.distributions.dist_math.SplineWrapper"]
    with pytest.raises(NoCandidateError, match=r"no JAX conversion \(SplineWrapper\)"):
        pymc_accel.sample(model=model, nuts_sampler="numpyro", draws=10, tune=10, chains=1,
                          progressbar=False)


#: PyMC's ops that never reach a log density: the intermediate forms of its log-probability
#: rewrites (valued and mixture variables, a point mass), a minibatch's random variable, and the
#: markers of its model graphs (random variables are left out by class).
_NOT_IN_A_LOG_DENSITY = ("pymc.model.fgraph.", "pymc.model.transform.", "pymc.logprob.abstract.",
                         "pymc.logprob.transform_value.TransformedValue",
                         "pymc.logprob.mixture.MixtureRV", "pymc.logprob.utils.DiracDelta",
                         "pymc.variational.minibatch_rv.MinibatchRandomVariable")


def _op_classes(package, skip=()):
    """``(qualified name, class)`` of every op class defined in ``package``'s modules (those
    under ``skip`` left out), as the modules import."""
    import importlib
    import inspect
    import pkgutil

    from pytensor.graph.op import Op

    from pymc_accel.jax_support import _qualified_name

    prefix = package.__name__ + "."
    for info in pkgutil.walk_packages(package.__path__, prefix):
        if info.name.startswith(tuple(skip)):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # an optional dependency missing: its ops cannot be in a model here
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Op) and cls.__module__.startswith(prefix):
                yield _qualified_name(cls), cls


def test_every_op_of_pymcs_without_a_jax_conversion_is_listed():
    """The list of PyMC's ops without a conversion is written by hand; a PyMC release that
    adds one fails here until the list has it."""
    import pymc
    import pymc.sampling.jax  # noqa: F401  PyMC's own conversions, registered on import
    from pytensor.tensor.random.op import RandomVariable

    from pymc_accel.jax_support import PYMC_OPS_WITHOUT_JAX, _converts

    missing = {name for name, cls in _op_classes(pymc)
               if not (issubclass(cls, RandomVariable) or "Measurable" in cls.__name__
                       or name.startswith(_NOT_IN_A_LOG_DENSITY)) and not _converts(cls)}
    assert missing <= PYMC_OPS_WITHOUT_JAX, sorted(missing - PYMC_OPS_WITHOUT_JAX)
    assert "pymc.distributions.dist_math.SplineWrapper" in missing  # the walk reaches them


def _spectral_smoothing_model():
    """A smoothing prior written in the frequency domain (the sweep's ``spectral_smoothing``,
    smaller)."""
    import pymc as pm
    from pytensor.tensor.fft import rfft

    with pm.Model() as model:
        f = pm.Normal("f", 0.0, 2.0, shape=16)
        power = (rfft(f[None, :])[0] ** 2).sum(axis=-1)
        pm.Potential("smooth", -0.5 * (np.arange(9.0) ** 2 * power).sum())
        pm.Normal("y", f, 0.3, observed=np.sin(np.linspace(0, 6, 16)))
    return model


def test_pytensors_real_fft_is_found_and_auto_leaves_jax_out():
    """An op of PyTensor's with no JAX conversion: taken to convert, as every op of PyTensor's
    was until 2026-12-01, ``auto`` chose NumPyro for this model and the run failed inside
    PyTensor's JAX linker ("No JAX conversion for the given `Op`: RFFTOp")."""
    import pymc_accel
    from pymc_accel.errors import NoCandidateError
    from pymc_accel.selection import select

    model = _spectral_smoothing_model()
    assert ops_without_jax([model.logp()]) == ["pytensor.tensor.fft.RFFTOp"]
    report = select(model, chains=2)
    assert report.chosen.startswith("numba[")
    refused = [r for r in report.rows if r.label.startswith("numpyro[cpu")]
    assert refused and all(r.status == "refused" and "(RFFTOp)" in r.reason for r in refused)
    with pytest.raises(NoCandidateError, match=r"no JAX conversion \(RFFTOp\)"):
        pymc_accel.sample(model=model, nuts_sampler="numpyro", draws=10, tune=10, chains=1,
                          progressbar=False)


def _listed_class(name):
    import importlib

    module, _, qualname = name.rpartition(".")
    return getattr(importlib.import_module(module), qualname)


@pytest.mark.parametrize("name", sorted(
    __import__("pymc_accel.jax_support", fromlist=["x"]).PYTENSOR_OPS_WITHOUT_JAX))
def test_each_listed_op_of_pytensors_is_there_and_has_no_conversion(name):
    """A name left behind by a PyTensor release that moved or converted the op fails here."""
    from pymc_accel.jax_support import _converts

    assert not _converts(_listed_class(name))


def _jax_mode_graphs():
    """A small graph with each listed op that a user can write in a line or two, as a user
    writes it: the op's name -> (inputs, output, input values)."""
    import pytensor.tensor.optimize as optimize
    from pytensor.printing import Print
    from pytensor.tensor.fft import irfft, rfft
    from pytensor.tensor.signal import convolve2d

    x, a, z = pt.dvector("x"), pt.dmatrix("a"), pt.dscalar("z")
    vector, matrix = np.arange(1.0, 9.0), np.eye(3) * 2.0 + 0.1
    return {
        "RFFTOp": ([x], rfft(x[None, :]).sum(), [vector]),
        "IRFFTOp": ([x], irfft(pt.stack([x[:4], x[4:]], axis=-1)[None]).sum(), [vector]),
        "Lstsq": ([a, x], pt.linalg.lstsq(a, x[:3], pt.constant(-1.0))[0].sum(),
                  [matrix, vector]),
        "TensorSolve": ([a, x], pt.linalg.tensorsolve(a, x[:3]).sum(), [matrix, vector]),
        "TensorInv": ([a], pt.linalg.tensorinv(a).sum(), [matrix]),
        "QZ": ([a], pt.linalg.qz(a, a.T)[0].sum(), [matrix]),
        "LUFactorTridiagonal": ([a, x], pt.linalg.tridiagonal_lu_solve(
            pt.linalg.tridiagonal_lu_factor(a), x[:3], b_ndim=1).sum(), [matrix, vector]),
        "PermuteRowElements": ([x], pt.permute_row_elements(x, pt.as_tensor([2, 0, 1])).sum(),
                               [np.ones(3)]),
        "Convolve2d": ([a], convolve2d(a, a).sum(), [matrix]),
        "CpuContiguous": ([x], pt.extra_ops.cpu_contiguous(x).sum(), [vector]),
        "MinimizeOp": ([x, z], optimize.minimize((z - x[0]) ** 2, z)[0], [vector, 0.5]),
        "MinimizeScalarOp": ([x, z], optimize.minimize_scalar((z - x[0]) ** 2, z)[0],
                             [vector, 0.5]),
        "RootOp": ([x, z], optimize.root(z - x[0], z)[0], [vector, 0.5]),
        "RootScalarOp": ([x, z], optimize.root_scalar(z - x[0], z)[0], [vector, 0.5]),
        "FromFunctionOp": ([x], _as_op_log_likelihood(x), [vector]),
        "Print": ([x], Print("x")(x).sum(), [vector]),
        "complex": ([x], pt.abs(pt.complex(x, x)).sum(), [vector]),
        "RoundHalfAwayFromZero": ([x], pt.round(x, mode="half_away_from_zero").sum(),
                                  [vector]),
    }


def _as_op_log_likelihood(x):
    """A black-box log likelihood as PyMC's documentation writes one, with ``as_op``."""
    from pytensor.compile.ops import as_op

    @as_op(itypes=[pt.dvector], otypes=[pt.dscalar])
    def log_likelihood(values):
        return np.asarray(-0.5 * (values**2).sum())

    return log_likelihood(x)


def test_an_as_op_log_likelihood_is_found():
    assert ops_without_jax([_as_op_log_likelihood(pt.dvector("x")) * 2.0]) == [
        "pytensor.compile.ops.FromFunctionOp"]


@pytest.mark.parametrize("op", sorted(_jax_mode_graphs()))
def test_a_listed_op_fails_in_pytensors_jax_mode_and_is_found(op):
    """What the list stands for: such a graph does not compile for JAX, and the check finds
    its op (all listed but ``Fourier``, ``Choose`` and ``PdbBreakpoint``, which take more
    than a line to write)."""
    import pytensor

    inputs, output, values = _jax_mode_graphs()[op]
    assert ops_without_jax([output])
    with pytest.raises(NotImplementedError, match=f"(?i)No JAX conversion.*{op}|"
                                                  f"Dispatch not implemented.*{op}"):
        pytensor.function(inputs, output, mode="JAX")(*values)


#: PyTensor's ops without a JAX conversion that never reach JAX as a log density holds them:
#: those its rewrites introduce for its C backend (BLAS, the sparse C ops) or for a gradient
#: PyTensor builds (``MulWithoutZeros``, of a product), those its rewrites replace before any
#: backend (``xtensor``'s ops, ``join_dims`` and ``split_dims``, Sylvester's solver behind
#: the Lyapunov solvers), abstract bases, random generators' constructors, and a symbolic
#: slice, which PyTensor's JAX conversion of the indexing consumes; the scalar loops of
#: PyTensor's gradients of special functions; the markers of a graph's outputs and of ops
#: without a Python implementation; the scalar ops' base classes.
_PYTENSOR_NOT_REACHING_JAX = (
    "pytensor.graph.fg.Output", "pytensor.graph.op._NoPythonOp", "pytensor.link.c.op.",
    "pytensor.scalar.loop.ScalarLoop", "pytensor.scalar.math.Grad2F1Loop",
    *(f"pytensor.scalar.basic.{base}" for base in (
        "ScalarOp", "UnaryScalarOp", "BinaryScalarOp", "LogicalComparison",
        "FixedLogicalComparison", "UnaryBitOp", "BinaryBitOp", "ScalarInnerGraphOp")),
    "pytensor.tensor.blas.", "pytensor.sparse.", "pytensor.typed_list.", "pytensor.xtensor.",
    "pytensor.tensor.math.MulWithoutZeros", "pytensor.tensor.reshape.JoinDims",
    "pytensor.tensor.reshape.SplitDims", "pytensor.tensor.linalg.solvers.linear_control.TRSYL",
    "pytensor.tensor.linalg.solvers.core.SolveBase", "pytensor.tensor.random.op.",
    "pytensor.tensor.type_other.MakeSlice")


def test_every_op_of_pytensors_without_a_jax_conversion_is_placed():
    """Each op class of PyTensor's with no conversion is listed, looked up by its module
    (sparse, typed lists), or named above as never reaching JAX; a PyTensor release that adds
    one fails here until it is placed."""
    import inspect

    import pytensor

    from pymc_accel.jax_support import PYTENSOR_OPS_WITHOUT_JAX, _converts

    # the backends' own ops and experiments: no log density holds them
    unplaced = {name for name, cls in _op_classes(
                    pytensor, skip=("pytensor.link.", "pytensor.sandbox."))
                if not (inspect.isabstract(cls) or name in PYTENSOR_OPS_WITHOUT_JAX
                        or name.startswith(_PYTENSOR_NOT_REACHING_JAX)) and not _converts(cls)}
    assert not unplaced, "\n".join(sorted(unplaced))


def _jax_gradient_not_finite_where_pytensors_is(model) -> bool:
    """Whether, at ``model``'s initial point, where PyTensor's gradient is finite (asserted),
    JAX's gradient of the log density PyMC jaxifies has an element that is not."""
    import jax
    from pymc.sampling.jax import get_jaxified_logp

    point = model.initial_point()
    values = [point[v.name] for v in model.value_vars]
    assert np.isfinite(model.compile_dlogp()(point)).all()
    gradient = jax.grad(lambda *v: get_jaxified_logp(model)(v),
                        argnums=tuple(range(len(values))))(*values)
    return not all(np.isfinite(np.asarray(g)).all() for g in gradient)


def test_jaxs_derivative_through_a_switch_of_a_square_root_is_nan_where_pytensors_is_not():
    """The premise: at the start, JAX's gradient of the threshold model is NaN and PyTensor's
    finite (NumPyro's, BlackJAX's and DEER-MALA's chains never left their start on it)."""
    assert _jax_gradient_not_finite_where_pytensors_is(threshold_root_model())


def test_a_switch_over_a_root_of_a_negative_leaves_jax_out_of_auto_and_a_named_one_runs():
    from pymc_accel.profile import profile_model
    from pymc_accel.selection import select

    model = threshold_root_model()
    assert profile_model(model).nan_jax_gradient_ops == ["Sqrt in a switch's branch"]
    report = select(model, chains=2)
    refused = [r for r in report.rows if r.label.startswith("numpyro[cpu")]
    assert refused and all(r.status == "refused" and "switch's branch not taken" in r.reason
                           for r in refused)
    assert not report.chosen.startswith(("numpyro", "deer_mala"))
    assert select(model, backend="numpyro", chains=2).chosen.startswith("numpyro[cpu")
    assert profile_model(threshold_root_model(power=1.5)).nan_jax_gradient_ops == [
        "Pow in a switch's branch"]
    assert profile_model(threshold_root_model(power=2)).nan_jax_gradient_ops == []


def test_a_log_of_zero_in_a_switch_leaves_jax_out_of_auto():
    """PyMC's Poisson log density at a rate of 0: the branch not taken is ``0 * log(0)``,
    whose JAX derivative is NaN, where PyTensor's gradient is finite; every JAX sampler's
    chains never left their start on the sweep's proportional hazards model."""
    from pymc_accel.profile import profile_model
    from pymc_accel.selection import select

    model = zero_exposure_poisson_model()
    assert _jax_gradient_not_finite_where_pytensors_is(model)

    assert profile_model(model).nan_jax_gradient_ops == ["Log in a switch's branch"]
    report = select(model, chains=2)
    refused = [r for r in report.rows if r.label.startswith("numpyro[cpu")]
    assert refused and all(r.status == "refused" and "switch's branch not taken" in r.reason
                           for r in refused)
    assert report.chosen.startswith("numba")
    # every rate positive: the logarithm's argument is never 0, nothing is found
    assert profile_model(zero_exposure_poisson_model(at_risk_throughout=True)
                         ).nan_jax_gradient_ops == []


def test_a_root_of_zero_in_a_switch_leaves_jax_out_of_auto():
    """A switch that keeps the zero doses out of a square root: the root of 0 has an infinite
    derivative, and JAX's gradient is NaN there as for a negative argument."""
    from pymc_accel.profile import profile_model

    model = dose_root_model()
    assert _jax_gradient_not_finite_where_pytensors_is(model)
    assert profile_model(model).nan_jax_gradient_ops == ["Sqrt in a switch's branch"]


def test_a_power_under_one_of_zero_in_a_switch_leaves_jax_out_of_auto():
    """``pt.switch(dose > 0, (dose * k) ** 0.3, 0)``: a power under 1 of 0 has an infinite
    derivative, as a root's, and JAX's gradient is NaN there where PyTensor's is finite; it was
    judged only for a negative base. A power over 1 of 0 has a finite derivative, and JAX's
    gradient is finite: not named."""
    from pymc_accel.profile import profile_model
    from pymc_accel.selection import select

    model = dose_power_model(0.3)
    assert _jax_gradient_not_finite_where_pytensors_is(model)
    assert profile_model(model).nan_jax_gradient_ops == ["Pow in a switch's branch"]
    report = select(model, chains=2)
    assert all(r.status == "refused" for r in report.rows if r.label.startswith("numpyro[cpu"))
    steeper = dose_power_model(1.5)
    assert not _jax_gradient_not_finite_where_pytensors_is(steeper)
    assert profile_model(steeper).nan_jax_gradient_ops == []


def test_a_log_in_a_switch_without_a_zero_in_the_data_is_not_evaluated(monkeypatch):
    """PyMC's log densities take logarithms inside the switches that bound their supports
    almost everywhere: only one whose argument is a product by data holding a zero is looked
    at, so no other model pays for the initial point there. A gamma prior on a vector's length
    (the sweep's ``norm_at_the_start``) is 0 at the unjittered start, where the JAX samplers'
    chains, started jittered, ran."""
    import pymc as pm
    import pytensor.tensor as pt

    from pymc_accel import graph_building
    from pymc_accel.jax_support import _switched_domain_arguments
    from pymc_accel.profile import log_density_graph, profile_model

    with pm.Model() as model:
        v = pm.Normal("v", 0.0, 3.0, shape=3)
        pm.Potential("length", pm.logp(pm.Gamma.dist(2.0, 2.0), pt.linalg.norm(v)))
        pm.Normal("y", v, 0.5, observed=np.ones((5, 3)))
    graph, _ = log_density_graph(model)
    found = _switched_domain_arguments([graph.logp], list(graph.value_vars))
    assert "Log" not in {name for name, _, _ in found}  # the norm's root is, judged jittered too
    assert profile_model(model).nan_jax_gradient_ops == []
    # a Poisson rate without a zero in its exposure: no point evaluated for it
    points = []
    real = graph_building.initial_point
    monkeypatch.setattr("pymc_accel.profile.initial_point",
                        lambda *a, **k: points.append(1) or real(*a, **k))
    assert profile_model(zero_exposure_poisson_model(at_risk_throughout=True)
                         ).nan_jax_gradient_ops == []
    assert not points


def test_a_root_at_zero_at_the_unjittered_start_only_is_not_found():
    """A root of 0 at the initial point but not at a copy jittered as a chain's start: the
    chains start jittered, where JAX's derivative is finite."""
    import pymc as pm
    import pytensor.tensor as pt

    from pymc_accel.jax_support import switched_nan_branches
    from pymc_accel.profile import log_density_graph, profile_model

    with pm.Model() as model:
        v = pm.Normal("v", 0.0, 1.0)
        pm.Potential("far", pt.switch(v > 10.0, -pt.sqrt(v**2), 0.0))
    graph, _ = log_density_graph(model)
    params = list(graph.value_vars)
    start = model.initial_point()
    assert switched_nan_branches([graph.logp], params, lambda: [start]) == [
        "Sqrt in a switch's branch"]
    assert profile_model(model).nan_jax_gradient_ops == []


def test_a_root_in_a_switch_whose_argument_is_never_outside_its_domain_is_not_found():
    """PyMC's LKJ prior takes square roots inside the switches that bound its support: the
    graph alone finds them, and the start's values clear them."""
    import pymc as pm

    from pymc_accel.jax_support import _switched_domain_arguments, switched_nan_branches
    from pymc_accel.profile import log_density_graph

    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0))
        pm.MvNormal("y", np.zeros(3), chol=chol, observed=np.ones((5, 3)))
    graph, _ = log_density_graph(model)
    params = list(graph.value_vars)
    assert _switched_domain_arguments([graph.logp], params)
    point = model.initial_point()
    assert switched_nan_branches([graph.logp], params, lambda: [point]) == []
