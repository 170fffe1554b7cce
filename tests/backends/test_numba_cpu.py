"""The numba backend's chain processes share the CPU with BLAS limited to their share."""

from __future__ import annotations

import pytest

from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.backends.numba_cpu import NumbaBackend
from tests.models import dense_model


@pytest.mark.parametrize(("kwargs", "limited"),
                         [({}, 1), ({"blas_cores": 4}, 2), ({"blas_cores": None}, None)])
def test_pm_sample_runs_under_each_chains_share_of_blas_cores(monkeypatch, kwargs, limited):
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


@pytest.mark.parametrize("driver, converted", [("pymc", True), ("nutpie", False)])
def test_an_arithmetic_error_at_a_proposal_under_pymcs_driver_names_the_fix(
        monkeypatch, driver, converted):
    """PyTensor's numba matrix exponential raised OverflowError at a proposal far out in the
    tails of a Markov-chain model, and PyMC's driver ended the chain with its
    ``ParallelSamplingError`` (the user sweep's ``ctmc_matrix_exponential``); nutpie and the JAX
    samplers count such a step as divergent."""
    import pymc as pm
    from pymc.sampling.parallel import ParallelSamplingError

    def fake_pm_sample(model, driver, request, pm_kwargs):
        try:
            raise OverflowError
        except OverflowError as inner:
            raise ParallelSamplingError("Chain 0 failed with: ", 0) from inner

    monkeypatch.setattr(NumbaBackend, "_pm_sample", staticmethod(fake_pm_sample))
    request = SampleRequest(draws=10, tune=10, chains=2, cores=2)
    candidate = Candidate("numba", "cpu", "float64", (("driver", driver),))
    expected = pm.exceptions.SamplingError if converted else ParallelSamplingError
    with pytest.raises(expected) as raised:
        NumbaBackend().sample(dense_model(3), candidate, request)
    if converted:
        assert "driver='nutpie'" in str(raised.value) and "OverflowError" in str(raised.value)


def test_nutpies_threads_keep_the_limit_whatever_pm_samples_start_method(monkeypatch):
    """nutpie's chains are threads of this process: where pm.sample's start method is not fork
    (Windows, an Intel Mac, a user's mp_ctx) it set blas_cores for each call inside the
    backend's limit, a thread a core for each chain again."""
    import nutpie
    from threadpoolctl import threadpool_info

    from pymc_accel.models import eight_schools

    seen, real = [], nutpie.sample
    monkeypatch.setattr(nutpie, "sample", lambda *a, **k: seen.append(
        {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
        or real(*a, **k))
    request = SampleRequest(draws=10, tune=10, chains=2, cores=2, progressbar=False,
                            quiet=True, compute_convergence_checks=False,
                            pymc_kwargs={"mp_ctx": "forkserver"})
    NumbaBackend().sample(eight_schools(), Candidate("numba", "cpu", "float64",
                                                     (("driver", "nutpie"),)), request)
    assert seen == [{1}]
