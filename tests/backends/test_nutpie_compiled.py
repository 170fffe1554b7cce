"""nutpie's compiled model kept from measured mode and used again by the run."""

from __future__ import annotations

import arviz as az
import numpy as np
import pymc as pm
import pytest

pytest.importorskip("nutpie")
import nutpie  # noqa: E402

import pymc_accel  # noqa: E402
from pymc_accel import history  # noqa: E402
from pymc_accel.backend import Candidate, Estimate, Figure, SampleRequest  # noqa: E402
from pymc_accel.backends import _measure, numba_cpu, nutpie_compiled  # noqa: E402
from pymc_accel.devices import Devices  # noqa: E402
from pymc_accel.models import conjugate_normal  # noqa: E402
from pymc_accel.profile import profile_model  # noqa: E402
from pymc_accel.registry import build_registry  # noqa: E402

CPU_ONLY = Devices(cpu_cores=2, gpus=(), jax_installed=True)
NUTPIE = "numba[cpu,float64,driver=nutpie]"


@pytest.fixture
def compiles(monkeypatch):
    """Count the calls that reach nutpie's own compile."""
    calls = []
    original = nutpie.compile_pymc_model

    def counting(model, *args, **kwargs):
        calls.append(kwargs)
        return original(model, *args, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counting)
    return calls


def _sample(model, **kwargs):
    return pm.sample(draws=500, tune=500, chains=2, cores=1, random_seed=3, model=model,
                     nuts_sampler="nutpie", progressbar=False, compute_convergence_checks=False,
                     **kwargs)


def test_the_run_uses_the_kept_model_and_samples_the_posterior(compiles):
    ref = conjugate_normal()
    nutpie_compiled.compile_for_run(ref.model)
    assert len(compiles) == 1
    with nutpie_compiled.reused_by_pm_sample(ref.model) as reused:
        idata = _sample(ref.model)
    assert reused and len(compiles) == 1  # pm.sample did not compile again
    mu = idata.posterior["mu"].values.ravel()
    ess = float(az.ess(idata, var_names=["mu"])["mu"])
    assert abs(mu.mean() - ref.post_mean) < 4 * ref.post_sd / np.sqrt(ess)
    assert mu.std() == pytest.approx(ref.post_sd, rel=0.15)
    # outside the block pm.sample compiles as before, and draws the same chains: a seeded run
    # does not depend on whether measured mode compiled the model first
    again = _sample(ref.model)
    assert len(compiles) == 2
    np.testing.assert_array_equal(again.posterior["mu"].values, idata.posterior["mu"].values)


def test_other_calls_and_other_models_compile_as_usual(compiles):
    ref, other = conjugate_normal(), conjugate_normal(seed=1)
    nutpie_compiled.compile_for_run(ref.model)
    with nutpie_compiled.reused_by_pm_sample(ref.model):
        _sample(ref.model, var_names=["mu"])  # a different compile: its own
        _sample(other.model)
    assert len(compiles) == 3
    with nutpie_compiled.reused_by_pm_sample(other.model) as reused:  # nothing kept for it
        assert not reused


def test_a_kept_model_is_dropped_when_the_data_change():
    with pm.Model() as model:
        x = pm.Data("x", np.arange(5.0))
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("y", mu + x, 1, observed=np.arange(5.0))
    nutpie_compiled.compile_for_run(model)
    assert nutpie_compiled.kept(model) is not None
    with model:
        pm.set_data({"x": np.ones(5)})  # same shape, new values: the kept model is stale
    assert nutpie_compiled.kept(model) is None
    assert nutpie_compiled.compile_seconds(model) == 0.0


def test_measured_mode_compiles_nutpie_for_the_run_once_the_kernels_are_cached(ledger,
                                                                             monkeypatch):
    ref = conjugate_normal()
    monkeypatch.setattr(_measure, "load_factor", lambda: 1.0)
    registry = build_registry(autoload=False)
    # the model has run here with nutpie: its kernels are cached, measured mode may compile
    pymc_accel.sample(20, tune=20, chains=2, model=conjugate_normal().model, progressbar=False,
                      quiet=True, nuts_sampler="numba", compute_convergence_checks=False)
    # a run long enough that compiling for it in measured mode can pay for itself
    report = pymc_accel.select(ref.model, registry=registry, devices=CPU_ONLY, chains=2,
                               draws=50_000, backend="numba", measure=True,
                               measure_budget=30.0)
    row = next(r for r in report.rows if r.label == NUTPIE)
    assert "compile measured" in row.sources
    assert nutpie_compiled.kept(ref.model) is not None
    # and its gradient is timed as nutpie runs it, not as PyTensor compiles model.logp() alone
    note = next(e["note"] for e in report.measurement["measured"] if e["candidate"] == NUTPIE)
    assert note.startswith("nutpie's own gradient function timed")
    assert row.fixed_seconds == pytest.approx(numba_cpu.NUTPIE_KEPT_MODEL_RUN_SECONDS)


def test_the_kept_models_gradient_is_timed_only_when_there_is_one():
    ref = conjugate_normal()
    assert nutpie_compiled.time_gradient(ref.model, 0.05) is None
    nutpie_compiled.compile_for_run(ref.model)
    seconds, calls = nutpie_compiled.time_gradient(ref.model, 0.05)
    assert calls >= 2 and 0 < seconds < 0.05


def test_a_kept_compile_too_long_for_the_budget_is_not_started(monkeypatch):
    ref = conjugate_normal()
    est = Estimate(seconds_per_gradient=Figure(1e-5), gradients_per_draw=Figure(5.0),
                   fixed_seconds=Figure(1.0))
    monkeypatch.setattr(_measure, "load_factor", lambda: 1.0)
    monkeypatch.setattr(_measure, "numba_gradient_compile_seconds", lambda model: 0.5)
    # 7 x 0.5 s predicted: not started in 3 s, started in 4 s
    assert numba_cpu._with_nutpie_compiled(ref.model, est, 0.0, 3.0) is est
    assert nutpie_compiled.kept(ref.model) is None
    kept = numba_cpu._with_nutpie_compiled(ref.model, est, 0.0, 4.0)
    assert kept.precompiled_seconds > 0 and kept.modelled_fixed_seconds == 1.0
    assert kept.fixed_seconds.value == numba_cpu.NUTPIE_KEPT_MODEL_RUN_SECONDS


def test_the_run_history_counts_the_kept_compile_as_a_fixed_cost(ledger):
    ref = conjugate_normal()
    profile = profile_model(ref.model)
    candidate = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    request = SampleRequest(draws=100, tune=100, chains=2)
    plain = Estimate(seconds_per_gradient=Figure(1e-5), gradients_per_draw=Figure(5.0),
                     fixed_seconds=Figure(2.0))
    kept = Estimate(seconds_per_gradient=Figure(1e-5), gradients_per_draw=Figure(5.0),
                    fixed_seconds=Figure(0.15), precompiled_seconds=1.85,
                    modelled_fixed_seconds=2.0)
    # a run that used a compile of 1.85 s paid before it took 0.2 s: what a run that compiles
    # takes is about 2.05 s, nearly all of it fixed
    history.record(profile, candidate, kept, request, 0.2, None)
    history.record(profile, candidate, kept, request, 0.2, None)
    seen = history.apply(plain, profile, candidate)
    assert seen.fixed_seconds.source == "observed"
    assert seen.fixed_seconds.value == pytest.approx(2.05 * 2.0 / (2.0 + 0.02), rel=0.02)
