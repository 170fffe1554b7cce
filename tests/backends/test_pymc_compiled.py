"""PyMC's numba gradient function compiled by measured mode and used again by PyMC's NUTS."""

from __future__ import annotations

import time

import arviz as az
import numpy as np
import pymc as pm
import pytest

import pymc_accel
from pymc_accel import first_use
from pymc_accel.backend import Estimate, Figure
from pymc_accel.backends import _measure, numba_cpu, pymc_compiled
from pymc_accel.devices import Devices
from pymc_accel.machine import machine_figures
from pymc_accel.models import conjugate_normal
from pymc_accel.registry import build_registry

CPU_ONLY = Devices(cpu_cores=2, gpus=(), jax_installed=True)
PYMC = "numba[cpu,float64,driver=pymc]"


@pytest.fixture
def compiles(monkeypatch):
    """Count the calls that reach PyMC's own ``Model.logp_dlogp_function``."""
    calls = []
    original = pm.Model.logp_dlogp_function

    def counting(self, *args, **kwargs):
        calls.append(kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pm.Model, "logp_dlogp_function", counting)
    return calls


@pytest.fixture(autouse=True)
def _forget():
    _measure._TIMINGS.clear()
    yield
    pymc_compiled.forget()


def _sample(model, **kwargs):
    return pm.sample(draws=500, tune=500, chains=2, cores=1, random_seed=3, model=model,
                     backend="numba", nuts_sampler="pymc", progressbar=False,
                     compute_convergence_checks=False, **kwargs)


def _measure_gradient(model):
    return _measure.time_numba_gradient(model, 0.05, machine_figures())


def test_the_run_uses_the_kept_function_and_samples_the_posterior(compiles):
    ref = conjugate_normal()
    _measure_gradient(ref.model)
    assert pymc_compiled.kept(ref.model) is not None
    assert len(compiles) == 1  # measured mode's compile
    with pymc_compiled.reused_by_pm_sample(ref.model) as reused:
        idata = _sample(ref.model)
    assert reused and len(compiles) == 1  # PyMC's NUTS did not compile its gradient again
    mu = idata.posterior["mu"].values.ravel()
    ess = float(az.ess(idata, var_names=["mu"])["mu"])
    assert abs(mu.mean() - ref.post_mean) < 4 * ref.post_sd / np.sqrt(ess)
    assert mu.std() == pytest.approx(ref.post_sd, rel=0.15)
    # outside the block pm.sample compiles as before, and draws the same chains: the kept
    # function is the one PyMC compiles, so a seeded run does not depend on measured mode
    again = _sample(ref.model)
    assert len(compiles) == 2
    np.testing.assert_array_equal(again.posterior["mu"].values, idata.posterior["mu"].values)


def test_other_calls_and_other_models_compile_as_usual(compiles):
    ref, other = conjugate_normal(), conjugate_normal(seed=1)
    _measure_gradient(ref.model)
    with pymc_compiled.reused_by_pm_sample(ref.model):
        ref.model.logp_dlogp_function(ravel_inputs=False, mode="NUMBA")  # another function
        ref.model.logp_dlogp_function(ravel_inputs=True, mode="FAST_COMPILE")  # another mode
        _sample(other.model)
    assert len(compiles) == 4
    assert "logp_dlogp_function" not in vars(ref.model)  # the method is PyMC's again
    with pymc_compiled.reused_by_pm_sample(other.model) as reused:  # nothing kept for it
        assert not reused


def test_numbas_start_in_the_process_is_not_counted_as_the_models_compile(monkeypatch):
    """What nutpie's compile is predicted from is the model's own compile, not numba's start."""
    ref = conjugate_normal()
    monkeypatch.setenv("PYMC_ACCEL_FIRST_USE", "on")
    monkeypatch.setattr(first_use, "FIRST_USE_SECONDS", {**first_use.FIRST_USE_SECONDS,
                                                         "numba": 1e3})
    monkeypatch.setattr(first_use, "_used", set())  # a new process: numba not started
    began = time.perf_counter()
    compiled, _, _ = _measure_gradient(ref.model)
    wall = time.perf_counter() - began
    assert compiled <= 0.5 * wall + 1e-6  # all but the floor taken off as numba's start
    assert "numba" in first_use.used()
    _measure._TIMINGS.clear()
    other = conjugate_normal(seed=1)
    began = time.perf_counter()
    compiled, _, _ = _measure_gradient(other.model)  # numba started: the whole compile counts
    assert compiled > 0.5 * (time.perf_counter() - began)


def test_measured_mode_prices_the_pymc_run_without_the_kept_compile(ledger, monkeypatch):
    monkeypatch.setattr(_measure, "load_factor", lambda: 1.0)
    kwargs = dict(registry=build_registry(autoload=False), devices=CPU_ONLY, chains=2,
                  backend="numba")
    modelled = next(r for r in pymc_accel.select(conjugate_normal().model, **kwargs).rows
                    if r.label == PYMC)
    ref = conjugate_normal()
    report = pymc_accel.select(ref.model, measure=True, measure_budget=30.0, **kwargs)
    row = next(r for r in report.rows if r.label == PYMC)
    seconds = pymc_compiled.compile_seconds(ref.model)
    assert pymc_compiled.kept(ref.model) is not None and seconds > 0
    assert "compile measured" in row.sources
    # a compile measured slow (a loaded machine) is credited only up to the cap
    from pymc_accel import costmodel
    from pymc_accel.profile import profile_model

    cap = numba_cpu.PYMC_KEPT_CREDIT_LIMIT * costmodel.gradient_compile_seconds(
        profile_model(ref.model), costmodel.NUMBA_PYMC)
    assert row.fixed_seconds == pytest.approx(
        max(numba_cpu.PYMC_KEPT_FUNCTION_RUN_SECONDS,
            modelled.fixed_seconds - numba_cpu.PYMC_KEPT_FUNCTION_SAVING * min(seconds, cap)))


def test_the_kept_compile_comes_off_the_fixed_seconds_down_to_a_floor():
    ref = conjugate_normal()
    est = Estimate(seconds_per_gradient=Figure(1e-5), gradients_per_draw=Figure(5.0),
                   fixed_seconds=Figure(1.0))
    assert numba_cpu._with_pymc_function_kept(ref.model, est) is est  # nothing kept yet
    pymc_compiled.keep(ref.model, object(), 0.4)
    kept = numba_cpu._with_pymc_function_kept(ref.model, est)
    saved = numba_cpu.PYMC_KEPT_FUNCTION_SAVING * 0.4
    assert kept.fixed_seconds.value == pytest.approx(1.0 - saved)
    assert kept.fixed_seconds.source == "measured" and kept.cold_compile_seconds.value == 0.0
    assert kept.precompiled_seconds == pytest.approx(saved) and kept.modelled_fixed_seconds == 1.0
    pymc_compiled.keep(ref.model, object(), 5.0)
    floor = numba_cpu._with_pymc_function_kept(ref.model, est)
    assert floor.fixed_seconds.value == numba_cpu.PYMC_KEPT_FUNCTION_RUN_SECONDS
    assert floor.precompiled_seconds == pytest.approx(1.0 - floor.fixed_seconds.value)
    # a compile measured far slower than modelled is credited only up to the limit
    capped = numba_cpu._with_pymc_function_kept(ref.model, est, modelled_compile=0.2)
    credit = numba_cpu.PYMC_KEPT_FUNCTION_SAVING * numba_cpu.PYMC_KEPT_CREDIT_LIMIT * 0.2
    assert capped.fixed_seconds.value == pytest.approx(1.0 - credit)
