from __future__ import annotations

import dataclasses

import pytest

from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.devices import Devices, Gpu
from pymc_accel.errors import DeviceOutOfMemoryError
from pymc_accel.memory import (
    GIB,
    MAX_TREE_DEPTH,
    NUTS_STATE_VECTORS,
    USABLE_FRACTION,
    is_out_of_memory,
    kept_dimension,
    nuts_memory,
    out_of_memory_error,
    plan_chains,
)
from pymc_accel.models import hierarchical_logistic
from pymc_accel.profile import profile_model
from pymc_accel.registry import build_registry
from pymc_accel.selection import select


@pytest.fixture(scope="module")
def seed():
    model = hierarchical_logistic(4000, 400, 5).model
    return model, profile_model(model)


def test_profile_counts_the_data_the_density_reads(seed):
    model, profile = seed
    x = model["X"].get_value()
    # X plus the group index and the observations, all 4000 rows long
    assert profile.data_bytes >= x.nbytes + 2 * 4000 * 4
    assert profile.data_bytes < 2 * x.nbytes + 3 * 4000 * 8


def test_memory_parts_scale_with_the_run(seed):
    _, p = seed
    one = nuts_memory(p, "float64", draws=100, chains_at_once=1, chains_stored=1)
    assert one.state_bytes == (NUTS_STATE_VECTORS + 2 * MAX_TREE_DEPTH) * p.n_free * 8
    assert one.data_bytes == p.data_bytes and one.intermediate_bytes == p.census.bytes
    more = nuts_memory(p, "float64", draws=300, chains_at_once=4, chains_stored=4)
    assert more.draws_bytes == pytest.approx(12 * one.draws_bytes)
    assert more.total_bytes - more.draws_bytes - more.transformed_bytes == pytest.approx(
        one.data_bytes + 4 * (one.intermediate_bytes + one.state_bytes))
    half = nuts_memory(p, "float32", draws=100, chains_at_once=1, chains_stored=1)
    assert half.state_bytes * 2 == one.state_bytes and half.data_bytes * 2 == one.data_bytes
    assert half.total_bytes < 0.55 * one.total_bytes


def test_var_names_shrink_only_the_transformed_draws(seed):
    _, p = seed
    fixed = kept_dimension(p, ["α", "β", "σ_γ"])  # σ_γ's value variable is σ_γ_log__
    assert fixed == 1 + 5 + 5
    everything = nuts_memory(p, "float32", draws=100, chains_at_once=2, chains_stored=2)
    kept = nuts_memory(p, "float32", draws=100, chains_at_once=2, chains_stored=2,
                       transformed_dim=fixed)
    assert kept.draws_bytes == everything.draws_bytes  # raw draws of every variable stay
    assert kept.transformed_bytes == pytest.approx(everything.transformed_bytes * fixed / p.n_free)


def test_all_chains_at_once_when_they_fit(seed):
    _, p = seed
    plan = plan_chains(p, "float32", draws=1000, chains=4, limit_bytes=80 * GIB)
    assert plan.fits and plan.chain_method == "vectorized" and plan.chains_at_once == 4
    assert plan.memory.total_bytes < USABLE_FRACTION * 80 * GIB
    assert "4 chains vectorized" in plan.describe()
    unknown = plan_chains(p, "float32", draws=1000, chains=4, limit_bytes=None)
    assert unknown.fits and unknown.chain_method == "vectorized"


def test_fewer_chains_at_once_then_draws_to_host_when_memory_is_short(seed):
    _, p = seed
    everything = plan_chains(p, "float64", draws=1000, chains=4, limit_bytes=None).memory
    # Room for the working set of every chain, not for every chain's draws twice over
    limit = (everything.total_bytes - everything.transformed_bytes) / USABLE_FRACTION
    plan = plan_chains(p, "float64", draws=1000, chains=4, limit_bytes=limit)
    assert plan.fits and plan.memory.total_bytes <= USABLE_FRACTION * limit
    assert (plan.chains_at_once, plan.draws_to_host) != (4, False)
    # Only one chain's working set and draws: one chain at a time, draws streamed back
    one = nuts_memory(p, "float64", draws=1000, chains_at_once=1, chains_stored=1,
                      transform_on_device=False)
    tight = plan_chains(p, "float64", draws=1000, chains=4,
                        limit_bytes=1.01 * one.total_bytes / USABLE_FRACTION)
    assert tight.fits and tight.chain_method == "sequential"
    assert tight.chains_at_once == 1 and tight.draws_to_host


def test_refusal_gives_the_figures_and_a_fix_that_fits(seed):
    _, p = seed
    one = nuts_memory(p, "float64", draws=1000, chains_at_once=1, chains_stored=1,
                      transform_on_device=False)
    limit = (one.total_bytes - 0.5 * one.draws_bytes) / USABLE_FRACTION
    plan = plan_chains(p, "float64", draws=1000, chains=4, limit_bytes=limit)
    assert not plan.fits
    assert "needs" in plan.reason and "usable" in plan.reason
    assert "precision='float32'" in plan.reason and "device='cpu'" in plan.reason
    draws = int(plan.reason.split("draws=")[1].split()[0])
    assert 0 < draws < 1000
    assert plan_chains(p, "float64", draws=draws, chains=4, limit_bytes=limit).fits
    assert not plan_chains(p, "float64", draws=draws + 10, chains=4, limit_bytes=limit).fits


def test_several_devices_share_the_chains(seed):
    _, p = seed
    plan = plan_chains(p, "float32", draws=100, chains=8, limit_bytes=80 * GIB, devices=4)
    assert plan.chain_method == "parallel" and plan.devices == 4 and plan.chains_at_once == 2
    assert plan_chains(p, "float32", draws=100, chains=2, limit_bytes=None, devices=4).devices == 2


def test_numpyro_gpu_candidate_refused_with_the_figure_when_it_cannot_fit(seed):
    model, p = seed
    reg = build_registry(autoload=False)
    small = Devices(cpu_cores=2, gpus=(Gpu(0, "tiny GPU", 2**20),), jax_installed=True)
    report = select(model, profile=p, devices=small, registry=reg, draws=500, tune=500, chains=4)
    refused = [r for r in report.rows if r.backend == "numpyro" and r.device == "gpu"]
    assert refused and all(r.status == "refused" and "MiB" in r.reason for r in refused)
    big = Devices(cpu_cores=2, gpus=(Gpu(0, "H100", 80 * GIB),), jax_installed=True)
    report = select(model, profile=p, devices=big, registry=reg, draws=500, tune=500, chains=4,
                    precision="float32", device="gpu", backend="numpyro")
    row = next(r for r in report.rows if r.status == "chosen")
    assert report.candidate.option("chain_method") == "vectorized"
    expected = plan_chains(p, "float32", draws=500, chains=4, limit_bytes=80 * GIB)
    assert row.memory_bytes == pytest.approx(expected.memory.total_bytes)
    assert report.estimate.memory_bytes.value == row.memory_bytes
    assert "device memory" in str(report) and "80.00 GiB available" in str(report)


def test_out_of_memory_is_recognised_and_explained():
    import jax

    xla = jax.errors.JaxRuntimeError(
        "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 9663676416 bytes.")
    c = Candidate("numpyro", "gpu", "float64", (("chain_method", "vectorized"),))
    err = out_of_memory_error(xla, "numpyro", c, SampleRequest(draws=1000, chains=4))
    assert isinstance(err, DeviceOutOfMemoryError)
    text = str(err)
    assert "9663676416 bytes" in text and "precision='float32'" in text
    assert "sequential" in text and "device='cpu'" in text
    assert is_out_of_memory(MemoryError("out of memory"))
    assert out_of_memory_error(ValueError("shapes do not match"), "numpyro", c,
                               SampleRequest()) is None
    assert out_of_memory_error(err, "numpyro", c, SampleRequest()) is None  # not wrapped twice


def test_plan_rejects_nonsense(seed):
    _, p = seed
    with pytest.raises(ValueError, match="chains must be >= 1"):
        plan_chains(p, "float32", draws=10, chains=0, limit_bytes=None)


def test_out_of_memory_while_sampling_names_the_estimate(seed, monkeypatch):
    """An out-of-memory error from the sampler reaches the user as DeviceOutOfMemoryError,
    with what to change and the selection's memory estimate (simulated: CPU memory does not
    run out in a test)."""
    import jax
    import pymc.sampling.jax as pmjax

    from pymc_accel import integration
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend

    model, p = seed

    def exhausted(**kwargs):
        raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 123 bytes")

    monkeypatch.setattr(pmjax, "sample_jax_nuts", exhausted)
    backend = NumpyroBackend()
    c = Candidate("numpyro", "cpu", "float64", (("chain_method", "vectorized"),))
    request = SampleRequest(draws=50, tune=50, chains=2, progressbar=False)
    with pytest.raises(DeviceOutOfMemoryError, match="fewer draws"):
        backend.sample(model, c, request)

    reg = build_registry(autoload=False)
    big = Devices(cpu_cores=2, gpus=(Gpu(0, "H100", 80 * GIB),), jax_installed=True)
    report = select(model, profile=p, devices=big, registry=reg, precision="float32",
                    device="gpu", backend="numpyro")
    # Run the GPU plan's report on the CPU device: the backend raises as it would on a GPU
    report.candidate = dataclasses.replace(report.candidate, device="cpu")
    with pytest.raises(DeviceOutOfMemoryError, match="estimated this run's peak at .*GiB"):
        integration._run_backend(model, report, request, reg)


def _gpu_or_skip():
    import jax

    try:
        return jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("needs a GPU visible to JAX (run with JAX_PLATFORMS=cuda,cpu)")


def _too_big_for(limit: float, draws: int):
    import pymc as pm

    n = int(2 * limit / (draws * 4))  # float32 draws alone: twice the device's memory
    with pm.Model() as model:
        pm.Normal("x", 0.0, 1.0, shape=n)
    return model


@pytest.mark.gpu
def test_gpu_out_of_memory_is_caught_and_explained():
    """A run whose draws cannot fit, forced past selection: XLA's out-of-memory error reaches
    the user as DeviceOutOfMemoryError naming what to change."""
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend

    gpu = _gpu_or_skip()
    limit = (gpu.memory_stats() or {}).get("bytes_limit") or 80 * GIB
    model = _too_big_for(limit, draws=1000)
    c = Candidate("numpyro", "gpu", "float32", (("chain_method", "vectorized"),))
    with pytest.raises(DeviceOutOfMemoryError, match="fewer draws"):
        NumpyroBackend().sample(model, c, SampleRequest(draws=1000, tune=10, chains=1,
                                                        progressbar=False, quiet=True))


@pytest.mark.gpu
def test_gpu_selection_refuses_what_the_gpu_cannot_hold():
    from pymc_accel.devices import discover

    gpu = _gpu_or_skip()
    limit = (gpu.memory_stats() or {}).get("bytes_limit") or 80 * GIB
    model = _too_big_for(limit, draws=1000)
    report = select(model, devices=discover(), registry=build_registry(autoload=False),
                    draws=1000, tune=10, chains=1, precision="float32")
    # float32 was requested: the float64 row is refused for that, the float32 one for memory
    rows = [r for r in report.rows
            if r.backend == "numpyro" and r.device == "gpu" and r.precision == "float32"]
    assert rows and all(r.status == "refused" and "GiB" in r.reason for r in rows)


def test_measured_mode_keeps_the_memory_plan(seed, monkeypatch):
    from pymc_accel.backend import Estimate, Figure
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend

    model, p = seed

    def timed(self, candidate, model, profile, machine, budget_seconds):
        return Estimate(Figure(1e-4, "measured"), Figure(10.0), Figure(1.0))

    monkeypatch.setattr(NumpyroBackend, "measure", timed)
    big = Devices(cpu_cores=2, gpus=(Gpu(0, "H100", 80 * GIB),), jax_installed=True)
    report = select(model, profile=p, devices=big, registry=build_registry(autoload=False),
                    precision="float32", device="gpu", backend="numpyro", measure=True)
    row = next(r for r in report.rows if r.status == "chosen")
    assert report.estimate.seconds_per_gradient.source == "measured"
    assert row.memory_bytes == pytest.approx(
        plan_chains(p, "float32", draws=1000, chains=4, limit_bytes=80 * GIB).memory.total_bytes)
