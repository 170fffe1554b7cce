"""The JAX backends run affine scans as parallel prefixes where that pays off, can be told not
to, say so in the report, and still recover the pharmacokinetic model's rates."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_accel.backend import Candidate
from pymc_accel.devices import Devices, Gpu
from pymc_accel.models import PK_RATES, pharmacokinetic
from pymc_accel.profile import profile_model
from pymc_accel.registry import build_registry
from pymc_accel.rewrites.apply import (
    ENV_VAR,
    parallel_scans_mode,
    planned_rewrites,
    rewrite_model,
)
from pymc_accel.selection import select

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")
ONE_GPU = Devices(cpu_cores=2, gpus=(Gpu(0, "H100", 80 * 2**30),), jax_installed=True)


def _scan_ops(model):
    from pytensor.graph.traversal import applys_between, graph_inputs

    out = [model.logp()]
    return sorted(type(n.op).__name__ for n in applys_between(list(graph_inputs(out)), out)
                  if "Scan" in type(n.op).__name__)


@pytest.fixture(scope="module")
def pk_profile():
    return profile_model(pharmacokinetic(4, 300).model)


def test_policy_comes_from_the_environment_and_bad_values_are_refused(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert parallel_scans_mode() == "auto"
    # an empty value (a variable cleared in a shell) is the default, not an error
    for raw, mode in (("off", "off"), ("0", "off"), ("ON", "on"), ("true", "on"), ("", "auto"),
                      ("auto", "auto")):
        monkeypatch.setenv(ENV_VAR, raw)
        assert parallel_scans_mode() == mode
    monkeypatch.setenv(ENV_VAR, "sometimes")
    with pytest.raises(ValueError, match="PYMC_ACCEL_PARALLEL_SCANS='sometimes'.*'auto'"):
        parallel_scans_mode()
    with pytest.raises(ValueError, match="device must be 'cpu' or 'gpu'"):
        rewrite_model(pharmacokinetic(2, 20).model, "tpu", mode="on")


def test_auto_rewrites_on_a_gpu_only_and_off_never(pk_profile):
    assert [s.n_steps for s in planned_rewrites(pk_profile, "gpu", "auto")] == [300]
    assert planned_rewrites(pk_profile, "cpu", "auto") == []
    assert [s.n_steps for s in planned_rewrites(pk_profile, "cpu", "on")] == [300]
    assert planned_rewrites(pk_profile, "gpu", "off") == []
    model = pharmacokinetic(3, 40).model
    assert rewrite_model(model, "cpu", "auto") == (model, [])
    rewritten, done = rewrite_model(model, "gpu", "auto")
    assert _scan_ops(model) == ["Scan"] and _scan_ops(rewritten) == ["AffineScan"]
    assert [(d.n_steps, d.state_shape) for d in done] == [(40, (3, 3))]
    assert sorted(rewritten.named_vars) == sorted(model.named_vars)


def test_report_lists_the_rewritten_scans(monkeypatch, pk_profile):
    reg = build_registry(autoload=False)
    monkeypatch.delenv(ENV_VAR, raising=False)
    gpu = select(profile=pk_profile, backend="numpyro", device="gpu", devices=ONE_GPU, registry=reg)
    assert any("parallel scans (gpu): 300 steps, state 4x3, affine (matrix) -> parallel prefix of "
               "depth 9" in n for n in gpu.notes)
    assert "parallel scans (gpu)" in str(gpu)
    cpu = select(profile=pk_profile, backend="numpyro", device="cpu", devices=CPU_ONLY, registry=reg)
    assert cpu.notes == ["affine scans kept sequential on cpu (sequential is faster on a CPU)"]
    monkeypatch.setenv(ENV_VAR, "off")
    off = select(profile=pk_profile, backend="numpyro", device="gpu", devices=ONE_GPU, registry=reg)
    assert off.notes == [f"affine scans kept sequential on gpu ({ENV_VAR}=off)"]
    numba = select(profile=pk_profile, backend="numba", devices=CPU_ONLY, registry=reg)
    assert not any("scans" in n for n in numba.notes)  # the numba backend does not rewrite


def test_sequential_scan_steps_leave_out_what_is_rewritten(pk_profile):
    """A GPU runs each sequential scan step as a loop iteration of its own: the forward scan's
    300 steps and its reverse scan's, none of either once the forward scan is a parallel prefix."""
    from pymc_accel.rewrites.apply import sequential_scan_steps

    scans = pk_profile.census.scans
    assert [s.n_steps for s in scans if not s.gradient] == [300]
    assert any(s.gradient for s in scans)  # the reverse scan, of a length the graph leaves open
    assert sequential_scan_steps(pk_profile, "gpu", "off") == 600
    assert sequential_scan_steps(pk_profile, "cpu", "auto") == 600
    assert sequential_scan_steps(pk_profile, "gpu", "auto") == 0


def test_gpu_estimate_costs_the_parallel_prefix(monkeypatch, pk_profile):
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend
    from pymc_accel.machine import machine_figures

    machine = machine_figures(devices=CPU_ONLY)
    gpu = Candidate("numpyro", "gpu", "float64", (("chain_method", "vectorized"),))
    monkeypatch.setenv(ENV_VAR, "off")
    sequential = NumpyroBackend().estimate(gpu, pk_profile, machine).seconds_per_gradient.value
    monkeypatch.setenv(ENV_VAR, "auto")
    parallel = NumpyroBackend().estimate(gpu, pk_profile, machine).seconds_per_gradient.value
    assert parallel < sequential / 2  # 300 steps of launches become 9 rounds


def test_numpyro_backend_samples_the_rewritten_graph(monkeypatch):
    import pymc.sampling.jax as pmjax

    import pymc_accel

    seen = []

    def spy(*args, model, **kwargs):
        seen.append(_scan_ops(model))
        raise RuntimeError("stop after seeing the model")

    monkeypatch.setattr(pmjax, "sample_jax_nuts", spy)
    model = pharmacokinetic(2, 30).model
    for mode in ("on", "off"):
        monkeypatch.setenv(ENV_VAR, mode)
        with pytest.raises(RuntimeError, match="stop after"):
            pymc_accel.sample(model=model, nuts_sampler="numpyro", device="cpu", chains=1,
                              draws=5, tune=5, progressbar=False)
    assert seen == [["AffineScan"], ["Scan"]]


def test_deer_mala_backend_flattens_the_rewritten_graph(monkeypatch):
    import pymc_accel.backends.jax_model as jax_model
    from pymc_accel.backend import SampleRequest
    from pymc_accel.backends.deer_mala import DeerMalaBackend

    seen = []

    def spy(model, **kwargs):
        seen.append(_scan_ops(model))
        raise RuntimeError("stop after seeing the model")

    monkeypatch.setattr(jax_model, "flatten_model", spy)
    monkeypatch.setenv(ENV_VAR, "on")
    cand = Candidate("deer_mala", "cpu", "float64", (("jacobian", "stoch_diag"), ("window", 8)))
    with pytest.raises(RuntimeError, match="stop after"):
        DeerMalaBackend().sample(pharmacokinetic(2, 30).model, cand, SampleRequest(chains=1))
    assert seen == [["AffineScan"]]


def test_numpyro_recovers_pharmacokinetic_rates_through_the_rewrite(monkeypatch):
    import pymc_accel

    monkeypatch.setenv(ENV_VAR, "on")
    pk = pharmacokinetic(3, 60, dose_every=30, seed=1)
    idata = pymc_accel.sample(model=pk.model, nuts_sampler="numpyro", device="cpu", chains=2,
                              draws=150, tune=200, random_seed=3, progressbar=False, quiet=True)
    report = pymc_accel.SelectionReport.from_idata(idata)
    assert any(n.startswith("parallel scans (cpu): 60 steps") for n in report.notes)
    post = idata.posterior
    for name, rate in PK_RATES.items():
        draws = np.asarray(post[f"log_{name}"]).ravel()
        # within 3 posterior sd (plus a little) of the rate the data were simulated with
        assert abs(draws.mean() - np.log(rate)) < 3 * draws.std() + 0.05, (name, draws.mean())
    assert float(np.asarray(idata.sample_stats["diverging"]).mean()) < 0.05


def test_a_subclass_that_samples_its_own_way_does_not_claim_the_rewrite():
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend, NumpyroBackend

    class OwnSampler(JaxNutsBackend):
        def sample(self, model, candidate, request):
            raise NotImplementedError

    assert NumpyroBackend().parallel_scans and not OwnSampler("own").parallel_scans


def test_a_model_that_cannot_be_rewritten_samples_sequentially_with_a_warning(monkeypatch):
    import pymc.model.fgraph as pm_fgraph

    def broken(*args, **kwargs):
        raise NotImplementedError("an unusual model")

    monkeypatch.setattr(pm_fgraph, "fgraph_from_model", broken)
    model = pharmacokinetic(2, 20).model
    with pytest.warns(RuntimeWarning, match="an unusual model.*run sequentially"):
        assert rewrite_model(model, "gpu") == (model, [])


def test_measured_mode_times_the_rewritten_gradient(monkeypatch):
    import pymc_accel.backends._measure as measure_module
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend
    from pymc_accel.machine import machine_figures

    seen = []
    monkeypatch.setattr(measure_module, "jax_measure",
                        lambda candidate, model, *args, **kw: seen.append(_scan_ops(model)))
    model = pharmacokinetic(2, 30).model
    profile = profile_model(model)
    machine = machine_figures(devices=CPU_ONLY)
    cpu = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    for mode in ("on", "auto"):
        monkeypatch.setenv(ENV_VAR, mode)
        NumpyroBackend().measure(cpu, model, profile, machine, 5.0)
    assert seen == [["AffineScan"], ["Scan"]]  # auto keeps the CPU's scan sequential
