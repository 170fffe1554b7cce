"""The census's count of transcendental functions (``OpCensus.transcendentals``)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

from pymc_accel.census import TRANSCENDENTAL_EXP_EQUIVALENTS as EXP, census_of
from pymc_accel.models import hierarchical_logistic
from pymc_accel.profile import profile_model


def _census(build):
    x = pt.dvector("x")
    x.tag.test_value = np.zeros(100)
    x = pt.specify_shape(x, (100,))
    return census_of([x], [pt.sum(build(x))]).transcendentals


def test_each_function_counts_its_cost_in_exps_per_element():
    assert _census(pt.exp) == pytest.approx(100 * EXP["Exp"])
    assert _census(pt.softplus) == pytest.approx(100 * EXP["Softplus"])
    assert _census(lambda x: pt.tanh(x) + pt.exp(x)) == pytest.approx(100 * (EXP["Tanh"] + 1))


def test_what_the_compiled_function_does_not_compute_is_not_counted():
    # powers PyTensor turns into products, the same exp twice, the log of log(exp(x))
    assert _census(lambda x: x**2 + x ** (3 - 1)) == 0
    assert _census(lambda x: pt.exp(x) + pt.exp(x)) == pytest.approx(100 * EXP["Exp"])
    assert _census(lambda x: pt.log(pt.exp(x))) == pytest.approx(100 * EXP["Exp"])
    # a function of data alone is folded before the function runs
    data = pt.constant(np.arange(1.0, 101.0))
    assert _census(lambda x: x * pt.gammaln(data)) == 0


def test_a_log_of_a_sigmoid_counts_as_the_softplus_it_is_rewritten_to():
    assert _census(lambda x: pt.log(pt.sigmoid(x))) == pytest.approx(
        100 * (EXP["Sigmoid"] + EXP["Softplus"]))
    assert _census(lambda x: pt.log(1 - pt.sigmoid(x))) == pytest.approx(
        100 * (EXP["Sigmoid"] + EXP["Softplus"]))


def test_a_logistic_likelihood_and_its_gradient_cost_about_seven_exps_a_row():
    # what the stabilized, merged graph numba compiles evaluates (counted there: 14,266 for
    # 2,000 rows, 3,568 for 500)
    for rows, groups in ((500, 20), (2000, 100)):
        census = profile_model(hierarchical_logistic(rows, groups, 2).model).census
        assert 6.5 * rows < census.transcendentals < 7.5 * rows


def test_a_linear_regression_has_next_to_none():
    rng = np.random.default_rng(0)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=3)
        s = pm.HalfNormal("s", 1)
        pm.Normal("y", pytensor.tensor.dot(rng.normal(size=(500, 3)), b), s,
                  observed=rng.normal(size=500))
    assert profile_model(model).census.transcendentals < 10


def test_each_function_is_also_counted_by_name_unweighted():
    """For a runtime whose functions cost other multiples of an exp than numba's (XLA's
    vectorised exp and log): the same evaluations by function, and the exp-equivalents are
    their weighted sum."""
    x = pt.dvector("x")
    x = pt.specify_shape(x, (100,))
    census = census_of([x], [pt.sum(pt.exp(x) + pt.log(pt.sigmoid(x)) + x**2)])
    assert census.transcendentals_by_function == pytest.approx(
        {"Exp": 100.0, "Sigmoid": 100.0, "Softplus": 100.0})
    assert census.transcendentals == pytest.approx(
        sum(n * EXP[f] for f, n in census.transcendentals_by_function.items()))
    from pymc_accel.census import OpCensus
    from dataclasses import asdict

    assert OpCensus.from_dict(asdict(census)).transcendentals_by_function == (
        census.transcendentals_by_function)
    old = {k: v for k, v in asdict(census).items() if k != "transcendentals_by_function"}
    assert OpCensus.from_dict(old).transcendentals_by_function == {}  # a stored older census


def test_logsumexp_and_its_gradient_are_counted_inside_the_ops_pytensor_writes_them_as():
    """PyTensor writes logsumexp (and softmax) as ops defined by a graph; counted as one opaque
    op, a Poisson mixture's exponentials and logarithms went uncounted."""
    x = pt.matrix("x", shape=(2000, 2))
    lse = pt.logsumexp(x, axis=1)
    assert type(lse.owner.op).__name__ == "LogSumExp"
    forward = census_of([x], [lse.sum()])
    assert forward.transcendentals_by_function.get("Exp", 0) >= 4000  # one a row and component
    assert forward.transcendentals_by_function.get("Log", 0) >= 2000  # one a row
    assert forward.flops_by_category["other"] == 0  # nothing left opaque
    both = census_of([x], [lse.sum(), pytensor.grad(lse.sum(), x)])
    assert both.flops > forward.flops  # the gradient's own work


def test_the_derivative_of_logsumexp_reuses_the_forwards_exponentials():
    """The derivative's inner graph recomputes exp(x - max(x)); the compiled program computes
    it once (PyTensor's merge rewrite, XLA's common subexpressions), so the census counts it
    once: counted twice, zip_7's gradient in NumPyro was priced at 1.82x its timing."""
    x = pt.matrix("x", shape=(2000, 2))
    lse = pt.logsumexp(x, axis=1).sum()
    forward = census_of([x], [lse])
    both = census_of([x], [lse, pytensor.grad(lse, x)])
    assert both.transcendentals_by_function == forward.transcendentals_by_function


def test_each_use_of_an_op_defined_by_a_graph_counts_its_own_work():
    """Every use of one such op shares its inner graph's variables: two uses on different
    inputs are two computations, on the same input one."""
    x = pt.matrix("x", shape=(2000, 2))
    y = pt.matrix("y", shape=(2000, 2))
    lse = pt.logsumexp(x, axis=1)
    again = lse.owner.op(y)  # the same op, another input
    assert again.owner.op is lse.owner.op
    one = census_of([x], [lse.sum()]).transcendentals_by_function["Exp"]
    two = census_of([x, y], [lse.sum() + again.sum()]).transcendentals_by_function["Exp"]
    assert two == 2 * one
    same = census_of([x], [lse.sum() + lse.owner.op(x).sum()]).transcendentals_by_function["Exp"]
    assert same == one


def test_a_mixtures_log_density_counts_its_log_sum_exp():
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.ones(2))
        lam = pm.Gamma("lam", 2.0, 0.3, shape=2)
        pm.Mixture("y", w=w, comp_dists=pm.Poisson.dist(lam), observed=np.arange(500) % 7)
    census = profile_model(model).census
    assert census.transcendentals_by_function.get("Exp", 0) >= 1000


def test_series_functions_are_counted_with_the_derivatives_a_jax_gradient_takes():
    """JAX differentiates the log density itself: the incomplete gamma function of a free shape
    costs it the value and ``igamma_grad_a`` for every element, of a fixed shape only the value
    (its derivative in ``x`` is a few ordinary functions)."""
    from pymc_accel.census import series_evaluations, series_function_nodes

    def evaluations(inputs, output):
        return series_evaluations(series_function_nodes(inputs, output))

    shape, rate = pt.dscalar("shape"), pt.dscalar("rate")
    data = np.linspace(0.5, 5.0, 40)
    free = pt.sum(pt.log(pt.gammainc(shape, rate * data)))
    assert evaluations([shape, rate], free) == {
        "GammaInc": 40.0, "GammaInc'0": 40.0, "GammaInc'1": 40.0, "GammaInc nodes": 1.0}
    fixed = pt.sum(pt.log(pt.gammaincc(3.0, rate * data)))
    assert evaluations([rate], fixed) == {
        "GammaIncC": 40.0, "GammaIncC'1": 40.0, "GammaIncC nodes": 1.0}
    # on data alone the function is folded before the run; other functions are not counted
    folded = rate * pt.sum(pt.gammainc(2.0, data)) + pt.sum(pt.gammaln(rate * data))
    assert evaluations([rate], folded) == {}


def test_a_models_profile_counts_the_series_functions_of_its_log_density():
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2, 0.5)
        pm.Censored("y", pm.Gamma.dist(alpha=alpha, beta=1.0), lower=None, upper=2.5,
                    observed=np.minimum(np.linspace(0.1, 4.0, 30), 2.5))
    evaluations = profile_model(model).census.series_evaluations
    assert evaluations["GammaInc'0"] == 30.0 and evaluations["GammaInc"] == 30.0


def _convolution(signal_length: int = 50, lags: int = 6, channels: int = 2):
    """``channels`` signals convolved with a free geometric kernel (an adstock), in full mode:
    PyTensor gives the convolution's output no static length."""
    from pytensor.tensor.signal import convolve1d

    x = pt.vector("x", shape=(channels,))
    signal = np.random.default_rng(0).gamma(2.0, 1.0, (channels, signal_length))
    kernel = x[:, None] ** pt.as_tensor(np.arange(lags, dtype=float))[None, :]
    out = convolve1d(pt.as_tensor(signal), kernel, mode="full")[:, :signal_length]
    return x, pt.tanh(out).sum()


def test_shapes_pytensor_leaves_unknown_are_inferred_and_a_convolution_counts_its_products():
    """An adstock regression's census counted each unknown length as 1 (48 of them), and a
    convolution by its output's length: its whole gradient came to fewer flops than its two
    convolutions' multiply-adds. Inferred, the forward convolution counts 2 n k flops a signal
    and the shapes after it their lengths."""
    from pymc_accel.census import _convolution_flops, _known_shape, inferred_shapes
    from pytensor.graph.traversal import io_toposort

    x, logp = _convolution()
    assert any(s is None for n in io_toposort([x], [logp]) for v in n.outputs
               for s in (getattr(v.type, "shape", None) or ()))
    census = census_of([x], [logp])
    assert census.unknown_shapes == 0
    forward = next(n for n in io_toposort([x], [logp])
                   if type(getattr(n.op, "core_op", n.op)).__name__ == "Convolve1d")
    assert _known_shape(forward.outputs[0], census) == (2, 50 + 6 - 1)
    assert _convolution_flops(forward, census) == 2.0 * 2 * 50 * 6
    assert census.flops >= 2.0 * 2 * 50 * 6
    # with its gradient: the derivative in the kernel is a valid-mode convolution whose mode
    # the graph computes, its length unknown, taken as valid (6 lags of 50 products a signal)
    grads = pytensor.grad(logp, x)
    with_gradient = census_of([x], [logp, grads])
    assert with_gradient.flops < 2.0 * 2 * 55 * 50  # what that one convolution made as full
    assert inferred_shapes(io_toposort([x], [x * 2])) == {}  # all static
