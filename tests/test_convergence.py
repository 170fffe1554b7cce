"""PyMC's convergence checks on a result with a variable whose dims repeat a name."""

from __future__ import annotations

import arviz as az
import numpy as np
import pymc as pm
import pytest
from arviz_stats.base import array_stats

import pymc_accel
from pymc_accel import convergence

FAST = dict(draws=100, tune=100, chains=2, progressbar=False, random_seed=3)


def square_weights(n: int = 3) -> pm.Model:
    """A square matrix of weights on one dim twice, as a neural network's hidden layer is
    written: standard normal weights, each column's sum seen 20 times with unit noise."""
    rng = np.random.default_rng(0)
    with pm.Model(coords={"k": range(n)}) as model:
        w = pm.Normal("w", 0.0, 1.0, dims=("k", "k"))
        pm.Normal("y", w.sum(axis=0), 1.0, observed=rng.normal(size=(20, n)))
    return model


def test_repeated_dims_are_read_from_the_model_and_from_idata_kwargs():
    assert convergence.repeated_dims(square_weights()) == {"w": ("k", "k")}
    with pm.Model(coords={"k": range(2), "j": range(2)}) as distinct:
        pm.Normal("a", dims=("k", "j"))
    assert convergence.repeated_dims(distinct) == {}
    assert convergence.repeated_dims(distinct, {"dims": {"a": ["u", "u"]}}) == {"a": ("u", "u")}
    # idata_kwargs' dims override the model's
    assert convergence.repeated_dims(square_weights(), {"dims": {"w": ["r", "c"]}}) == {}


def test_the_view_lays_a_repeated_dims_variable_on_one_axis_with_the_same_ess():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(2, 50, 3, 3)).cumsum(axis=1)  # series that mix at different rates
    b = rng.normal(size=(2, 50))
    idata = az.from_dict({"posterior": {"w": w, "b": b}}, dims={"w": ["k", "k"]})
    view = convergence.distinct_dims_view(idata)
    assert view["posterior"]["w"].dims == ("chain", "draw", "w_flat")
    assert idata["posterior"]["w"].dims == ("chain", "draw", "k", "k")  # the result kept
    expected = array_stats.ess(w.reshape(2, 50, 9), chain_axis=0, draw_axis=1)
    got = az.ess(view, var_names=["w"])["w"].values
    np.testing.assert_allclose(got, expected)
    np.testing.assert_array_equal(view["posterior"]["b"].values, b)
    plain = az.from_dict({"posterior": {"b": b}})
    assert convergence.distinct_dims_view(plain) is plain


def test_the_checks_log_as_pm_sample_does_unless_quiet(monkeypatch):
    import pymc.stats.convergence as pymc_convergence

    idata = az.from_dict({"posterior": {"w": np.random.default_rng(2).normal(size=(2, 200, 2, 2))}},
                         dims={"w": ["k", "k"]})
    logged = []
    monkeypatch.setattr(pymc_convergence, "log_warnings", logged.extend)
    model = square_weights(2)
    warns = convergence.run_convergence_checks(idata, model)
    assert any("at least 4 chains" in w.message for w in warns)
    assert logged == warns
    logged.clear()
    assert convergence.run_convergence_checks(idata, model, quiet=True) == warns and not logged


@pytest.mark.parametrize("backend", ["numpyro", "numba"])
def test_a_model_with_repeated_dims_samples_and_is_checked(backend, monkeypatch):
    # PyMC's checks after NumPyro's and PyMC's NUTS raised from xarray once the run had finished
    import pymc.stats.convergence as pymc_convergence

    logged = []
    monkeypatch.setattr(pymc_convergence, "log_warnings", logged.extend)
    idata = pymc_accel.sample(nuts_sampler=backend, model=square_weights(), **FAST)
    assert idata.posterior["w"].dims == ("chain", "draw", "k", "k")
    assert any("at least 4 chains" in w.message for w in logged)  # the checks ran, once
    assert sum("at least 4 chains" in w.message for w in logged) == 1
    # the draws find the posterior: each column's sum of weights, N(0, 3) a priori, seen 20
    # times with unit noise, is normal with precision 1/3 + 20 around 20 / (1/3 + 20) times
    # the column's mean
    column_means = np.random.default_rng(0).normal(size=(20, 3)).mean(axis=0)
    precision = 1 / 3 + 20
    sums = idata.posterior["w"].values.sum(axis=2)  # chain, draw, column
    sd = precision ** -0.5
    np.testing.assert_allclose(sums.mean(axis=(0, 1)), 20 * column_means / precision,
                               atol=4 * sd / np.sqrt(100))
    np.testing.assert_allclose(sums.std(axis=(0, 1)), sd, rtol=0.25)


def test_no_checks_asked_for_none_run(monkeypatch):
    import pymc.sampling.jax as pymc_jax

    ran = []

    def checks(*args, **kwargs):
        ran.append(1)
        return []

    monkeypatch.setattr(convergence, "run_convergence_checks", checks)
    monkeypatch.setattr(pymc_jax, "run_convergence_checks", checks)  # NumPyro's, in PyMC
    pymc_accel.sample(nuts_sampler="numpyro", model=square_weights(),
                      compute_convergence_checks=False, **FAST)
    assert not ran
    pymc_accel.sample(nuts_sampler="numpyro", model=square_weights(), **FAST)
    assert ran == [1]  # asked for, they run once
