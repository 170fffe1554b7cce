"""The numba backend's chain processes share the CPU with BLAS limited to their share."""

from __future__ import annotations

import pytest

from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.backends.numba_cpu import NumbaBackend, blas_threads_per_chain
from tests.models import dense_model


def test_blas_threads_are_the_cores_shared_among_the_chains_running_at_once():
    assert blas_threads_per_chain(2, 2) == 1  # the 2-core machine: one thread per chain
    assert blas_threads_per_chain(4, 2) == 2
    assert blas_threads_per_chain(2, 4) == 1  # more chains than cores: still one each
    assert blas_threads_per_chain(8, 1) == 8
    assert blas_threads_per_chain(None, 2) == 1


@pytest.mark.parametrize(("kwargs", "limited"), [({}, 1), ({"blas_cores": 2}, None)])
def test_pm_sample_runs_under_the_limit_unless_the_user_sets_blas_cores(monkeypatch, kwargs,
                                                                         limited):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    limits, inside = [], []
    real = threadpoolctl.threadpool_limits

    def recording(limits_arg=None, user_api=None):
        limits.append(limits_arg)
        return real(limits_arg, user_api=user_api)

    def fake_pm_sample(model, driver, request, pm_kwargs):
        inside.append(list(limits))  # the limit is in force while pm.sample forks its chains
        return type("Idata", (), {"children": {}})()

    monkeypatch.setattr(threadpoolctl, "threadpool_limits", recording)
    monkeypatch.setattr(NumbaBackend, "_pm_sample", staticmethod(fake_pm_sample))
    request = SampleRequest(draws=10, tune=10, chains=2, cores=2, pymc_kwargs=kwargs)
    NumbaBackend().sample(dense_model(3), Candidate("numba", "cpu", "float64",
                                                    (("driver", "pymc"),)), request)
    assert inside == ([[limited]] if limited else [[]])


@pytest.mark.parametrize("driver", ["pymc", "nutpie"])
def test_a_run_starts_after_a_measurement_left_running_in_the_background(
        monkeypatch, driver, measurement_left_running):
    """A measured-mode compile still running holds numba's compiler lock, and PyMC's NUTS
    forks its chains: the run waits for it first."""
    from pymc_accel import measure

    order = measurement_left_running

    def fake_pm_sample(model, driver, request, pm_kwargs):
        order.append("run")
        return type("Idata", (), {"children": {}, "sample_stats": None})()

    monkeypatch.setattr(NumbaBackend, "_pm_sample", staticmethod(fake_pm_sample))
    monkeypatch.setattr("pymc_accel.backends.numba_cpu.rename_nutpie_stats", lambda idata: None)
    request = SampleRequest(draws=10, tune=10, chains=2, cores=2)
    NumbaBackend().sample(dense_model(3), Candidate("numba", "cpu", "float64",
                                                    (("driver", driver),)), request)
    assert order == ["measurement ended", "run"]
    assert not measure._BACKGROUND
