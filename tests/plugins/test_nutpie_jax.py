"""The pymc-accel-nutpie-jax plugin, installed from plugins/ as a third party's package: found
through its entry point with its distribution and version, and passing the conformance suite."""

from __future__ import annotations

import pytest

pytest.importorskip("pymc_accel_nutpie_jax")

from pymc_accel.backend import Candidate  # noqa: E402
from pymc_accel.registry import build_registry  # noqa: E402
from pymc_accel.testing import BackendConformance  # noqa: E402
from pymc_accel_nutpie_jax import NutpieJaxBackend  # noqa: E402


def test_discovered_with_its_distribution():
    from importlib.metadata import version

    reg = build_registry()
    assert reg.origins["nutpie_jax"] == f"pymc-accel-nutpie-jax {version('pymc-accel-nutpie-jax')}"


def test_samples_with_nutpies_own_adaptation_and_a_jax_gradient_on_its_device(monkeypatch):
    """nutpie's default (diagonal) adaptation, which the estimate prices, unless the user asks
    for another: low-rank adaptation took 4-6x as long on the demo model, and with one seed did
    not mix."""
    import nutpie

    from pymc_accel.testing import reference_model

    seen = {}
    compile_, sample_ = nutpie.compile_pymc_model, nutpie.sample

    def spy_compile(model, **kw):
        seen["compile"] = kw
        return compile_(model, **kw)

    def spy_sample(compiled, **kw):
        import jax

        seen["sample"], seen["device"] = kw, jax.config.jax_default_device
        return sample_(compiled, **kw)

    monkeypatch.setattr(nutpie, "compile_pymc_model", spy_compile)
    monkeypatch.setattr(nutpie, "sample", spy_sample)
    backend = NutpieJaxBackend()
    (candidate,) = [c for c in backend.candidates(_profile(), _cpu()) if isinstance(c, Candidate)]
    backend.sample(reference_model(), candidate, TestNutpieJax().request_for(draws=20, tune=20))
    assert seen["compile"]["backend"] == "jax" and seen["compile"]["gradient_backend"] == "jax"
    assert "adaptation" not in seen["sample"]  # nutpie's default: "diag"
    # the process-wide default device (nutpie's Rust threads call the gradient) is the
    # candidate's while sampling, and restored afterwards
    import jax

    assert seen["device"] == jax.devices("cpu")[0]
    assert jax.config.jax_default_device is None
    # the user's choice reaches nutpie
    backend.sample(reference_model(), candidate, TestNutpieJax().request_for(
        draws=20, tune=20, backend_kwargs={"adaptation": "low_rank"}))
    assert seen["sample"]["adaptation"] == "low_rank"
    # a compile mode the caller gave is passed as given, not beside the plugin's own (pm.sample
    # raised "Can only define one of `backend` or `compile_kwargs['mode']`")
    backend.sample(reference_model(), candidate, TestNutpieJax().request_for(
        draws=20, tune=20, pymc_kwargs={"compile_kwargs": {"mode": "JAX"}}))
    assert seen["compile"]["backend"] == "jax"


def _profile():
    from pymc_accel.profile import profile_model
    from pymc_accel.testing import reference_model

    return profile_model(reference_model())


def _cpu():
    from pymc_accel.testing import CPU_ONLY

    return CPU_ONLY


class TestNutpieJax(BackendConformance):
    backend = NutpieJaxBackend()
    required_stats = ("diverging", "lp", "acceptance_rate", "step_size", "tree_depth", "n_steps")


def test_measured_gradient_keeps_nutpies_callback_on_top_of_the_timed_jax_call():
    from pymc_accel import Candidate
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel_nutpie_jax.backend import CALLBACK_SECONDS

    model = eight_schools()
    profile = profile_model(model)
    candidate = Candidate("nutpie_jax", "cpu", profile.float_dtype)
    measured = NutpieJaxBackend().measure(candidate, model, profile, machine_figures(), 5.0)
    assert measured is not None and measured.seconds_per_gradient.source == "measured"
    assert measured.seconds_per_gradient.value >= CALLBACK_SECONDS
    assert "callback" in measured.seconds_per_gradient.note


def test_per_chain_initvals_refuse_it_before_its_sampler_would_raise():
    from pymc_accel import select
    from pymc_accel.devices import Devices
    from pymc_accel.models import eight_schools

    report = select(eight_schools(), registry=build_registry(), chains=2,
                    devices=Devices(cpu_cores=2, jax_installed=True, note="test: no GPU"),
                    initvals=[{"mu": 0.1}, {"mu": -0.1}])
    rows = [r for r in report.rows if r.backend == "nutpie_jax" and r.precision == "float64"]
    assert rows and all(r.status == "refused" and "per chain" in r.reason for r in rows)


def test_its_chains_run_side_by_side_whatever_jaxs_cpu_device_count(monkeypatch):
    """nutpie runs its chains in threads of its own that share one jitted gradient: JAX's one
    CPU device (JAX started early) does not put them in turn, as it does NumPyro's."""
    from pymc_accel.backends import numpyro_nuts
    from pymc_accel.devices import cpu_cores
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    monkeypatch.setattr(numpyro_nuts, "jax_cpu_devices", lambda: 1)
    profile = profile_model(eight_schools())
    nutpie = NutpieJaxBackend().estimate(Candidate("nutpie_jax", "cpu", "float64"), profile,
                                         machine_figures())
    numpyro = build_registry(autoload=False).backends["numpyro"].estimate(
        Candidate("numpyro", "cpu", "float64"), profile, machine_figures())
    assert nutpie.chain_parallelism == cpu_cores()
    assert numpyro.chain_parallelism == 1


def test_on_a_gpu_each_gradient_is_a_call_of_its_own_not_a_nuts_leapfrog(monkeypatch):
    """nutpie calls the jitted gradient from Rust: on a GPU every kernel is a launch of its own
    (costmodel.gpu_gradient_seconds), and measured mode's timed call is not given the NUTS
    while loops that NumPyro's leapfrog pays inside XLA."""
    from dataclasses import replace

    from pymc_accel import costmodel
    from pymc_accel.backend import Figure
    from pymc_accel.backends import _measure
    from pymc_accel.machine import DeviceFigures, machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel_nutpie_jax.backend import CALLBACK_SECONDS

    gpu = DeviceFigures("gpu", "Test GPU", {"float32": 4e11, "float64": 7e11},
                        {"float32": 3e12, "float64": 3.6e12}, {"float32": 1.6e14, "float64": 4.7e13},
                        launch_seconds=6.6e-6, call_seconds=5.7e-5)
    machine = replace(machine_figures(), accelerators={"gpu": gpu})
    model = eight_schools()
    profile = profile_model(model)
    candidate = Candidate("nutpie_jax", "gpu", profile.float_dtype)
    est = NutpieJaxBackend().estimate(candidate, profile, machine).seconds_per_gradient
    standalone = costmodel.gpu_gradient_seconds(profile, profile.float_dtype, machine).value
    assert est.value == pytest.approx(standalone + CALLBACK_SECONDS, rel=0.01)

    def timed(candidate, model, profile, machine, budget, modelled, parallel, runtime):
        return replace(modelled, seconds_per_gradient=Figure(30e-6, "measured", "timed"))

    monkeypatch.setattr(_measure, "jax_measure", timed)
    measured = NutpieJaxBackend().measure(candidate, model, profile, machine, 5.0)
    assert measured.seconds_per_gradient.value == pytest.approx(30e-6 + CALLBACK_SECONDS)


def test_a_start_infinite_before_its_jitter_only_is_sampled_from_nutpies_jittered_one():
    """nutpie jitters its starts and refuses when none is finite: pymc-accel's own check of the
    start before the jitter refused this model, which nutpie samples."""
    import numpy as np

    import pymc_accel
    from tests.models import infinite_before_jitter_model

    idata = pymc_accel.sample(model=infinite_before_jitter_model(), nuts_sampler="nutpie_jax",
                              draws=50, tune=50, chains=1, random_seed=3, progressbar=False,
                              quiet=True, compute_convergence_checks=False)
    assert np.isfinite(idata.posterior["v"].values).all()


def test_a_log_density_whose_jax_derivative_is_nan_at_every_start_names_the_fix():
    """nutpie finds no start where JAX's gradient is finite ("All initialization points
    failed"): the error, the plugin's, says why and names the numba backend."""
    import pymc_accel
    from pymc_accel.errors import PluginError
    from tests.models import threshold_root_model

    with pytest.raises(PluginError, match=r"Sqrt in a switch's branch.*nuts_sampler='numba'"):
        pymc_accel.sample(model=threshold_root_model(), nuts_sampler="nutpie_jax", draws=20,
                          tune=20, chains=1, random_seed=3, progressbar=False, quiet=True)



def test_a_vfe_gps_run_finds_its_posterior():
    """nutpie jaxifies the model's log density itself; without its coinciding kernel distances
    held at zero its JAX gradient of this GP was wrong and a chain barely moved in 280 s (the
    user sweep with ``--sampler nutpie_jax``). PyMC's NUTS finds a noise scale of 0.291 (sd
    0.019; ``bench/sample_coincident_gp.py --model gp_vfe_matern32``)."""
    import sys
    from pathlib import Path

    import pymc as pm

    import pymc_accel

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import sweep_user_models

    idata = pymc_accel.sample(model=sweep_user_models.gp_vfe_matern32(pm),
                              nuts_sampler="nutpie_jax", draws=200, tune=200, chains=2,
                              random_seed=1, progressbar=False)
    assert abs(float(idata.posterior["sigma"].mean()) - 0.291) < 0.02
    assert float(idata.sample_stats["n_steps"].mean()) < 100


def test_its_chains_call_blas_with_a_thread_each(monkeypatch):
    """nutpie's chains are threads of one process calling LAPACK at once: with a BLAS thread a
    core each, two chains of a sparse GP took 2.9x one chain's wall on two cores, and as long as
    one with a thread each (docs/results/chains-side-by-side-cpu-2026-12-02*.md)."""
    import nutpie
    from threadpoolctl import threadpool_info

    from pymc_accel.testing import reference_model

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    seen = []
    sample_ = nutpie.sample

    def spy_sample(compiled, **kw):
        seen.append(blas_threads())
        return sample_(compiled, **kw)

    monkeypatch.setattr(nutpie, "sample", spy_sample)
    backend = NutpieJaxBackend()
    (candidate,) = [c for c in backend.candidates(_profile(), _cpu()) if isinstance(c, Candidate)]
    before = blas_threads()
    # a user's blas_cores is shared among the chains, as pm.sample shares it; None leaves BLAS
    for cores, blas_cores, threads in ((2, "auto", {1}), (2, 2, {1}), (2, 4, {2}),
                                       (2, None, before)):
        run = TestNutpieJax().request_for(draws=10, tune=10, chains=2, cores=cores,
                                          pymc_kwargs={"blas_cores": blas_cores})
        backend.sample(reference_model(), candidate, run)
        assert seen[-1] == threads, (cores, blas_cores)
        assert blas_threads() == before  # restored
