"""The pymc-accel-blackjax plugin, installed from plugins/ as a third party's package: found
through its entry point with its distribution and version, and passing the conformance suite."""

from __future__ import annotations

import pytest

pytest.importorskip("pymc_accel_blackjax")

from pymc_accel.registry import build_registry  # noqa: E402
from pymc_accel.testing import BackendConformance  # noqa: E402
from pymc_accel_blackjax import BlackJaxMclmcBackend, BlackJaxNutsBackend  # noqa: E402


def test_both_backends_are_discovered_with_their_distribution():
    from importlib.metadata import version

    reg = build_registry()
    expected = f"pymc-accel-blackjax {version('pymc-accel-blackjax')}"
    assert reg.origins["blackjax_nuts"] == expected
    assert reg.origins["blackjax_mclmc"] == expected


def test_mclmc_refuses_one_dimensional_models_naming_an_alternative():
    import pymc as pm

    from pymc_accel.profile import profile_model
    from pymc_accel.testing import CPU_ONLY

    with pm.Model() as model:
        pm.Normal("a")
    (refusal,) = BlackJaxMclmcBackend().candidates(profile_model(model), CPU_ONLY)
    assert "2 free dimensions" in refusal.reason and "blackjax_nuts" in refusal.reason


def test_blackjax_nuts_refuses_tune_0_naming_the_fix_instead_of_failing_in_blackjax():
    """BlackJAX's window adaptation raised "iteration over a 0-d array" on zero steps, which
    pymc-accel reported as the plugin's bug."""
    import pymc_accel
    from pymc_accel.models import eight_schools

    with pytest.raises(pymc_accel.UnsupportedArgumentError, match="tune >= 1"):
        pymc_accel.sample(model=eight_schools(), nuts_sampler="blackjax_nuts", tune=0, draws=10,
                          chains=2, progressbar=False)


def test_blackjax_nuts_refuses_sequential_chains_before_sampling():
    """PyMC's BlackJAX path raised "Only supporting the following methods to draw chains" at
    the run, which pymc-accel reported as the plugin's failure; auto leaves it out."""
    import pymc_accel
    from pymc_accel.models import eight_schools

    with pytest.raises(pymc_accel.UnsupportedArgumentError, match="'parallel' or 'vectorized'"):
        pymc_accel.explain(eight_schools(), nuts_sampler="blackjax_nuts", chains=2,
                           nuts={"chain_method": "sequential"})
    report = pymc_accel.explain(eight_schools(), chains=2, nuts={"chain_method": "sequential"})
    assert not report.chosen.startswith("blackjax_nuts")
    assert any(r.backend == "blackjax_nuts" and "side by side only" in r.reason
               for r in report.rows if r.status == "refused")


def test_blackjax_nuts_samples_without_its_progress_bar_where_fastprogress_is_missing():
    """BlackJAX draws its bar with fastprogress, which it does not depend on: with a progress
    bar asked for, the run failed inside a JAX callback (`make demo`, 2026-11-27)."""
    import importlib.util

    import pymc_accel
    from pymc_accel.models import eight_schools

    if importlib.util.find_spec("fastprogress") is not None:
        pytest.skip("fastprogress is installed here: BlackJAX draws its bar")
    with pytest.warns(UserWarning, match="fastprogress, which is not installed"):
        idata = pymc_accel.sample(model=eight_schools(), nuts_sampler="blackjax_nuts",
                                  draws=50, tune=50, chains=2, progressbar=True,
                                  compute_convergence_checks=False)
    assert idata.posterior.sizes["draw"] == 50


def test_pymc_s_max_treedepth_reaches_blackjax_as_max_num_doublings():
    import pymc_accel
    from pymc_accel.models import eight_schools

    idata = pymc_accel.sample(model=eight_schools(), nuts_sampler="blackjax_nuts",
                              nuts={"max_treedepth": 2}, draws=100, tune=100, chains=2,
                              progressbar=False, compute_convergence_checks=False)
    assert int(idata.sample_stats["tree_depth"].max()) <= 2


class TestBlackJaxNuts(BackendConformance):
    backend = BlackJaxNutsBackend()


class TestBlackJaxMclmc(BackendConformance):
    backend = BlackJaxMclmcBackend()
    # One integrator step per draw: more draws for the same Monte Carlo error as NUTS.
    draws = 4000
    tune = 1000
    required_stats = ("diverging", "lp", "step_size", "n_steps")


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_blackjax_nuts_prices_numpyros_leapfrogs_and_more_fixed_seconds(precision):
    """BlackJAX's kernel, timed in one compiled loop, costs NumPyro's a leapfrog (0.76-1.15x),
    and its window adaptation takes as many leapfrogs as NumPyro's: its sampling and tuning are
    priced as NumPyro's, and its fixed seconds (one larger program to load and trace) at
    ``FIXED_FACTOR`` of the precision times NumPyro's (bench/fit_blackjax_leapfrog.py)."""
    import pymc_accel_blackjax

    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.machine import MachineFigures
    from pymc_accel.models import hierarchical_logistic
    from pymc_accel.profile import profile_model

    machine = MachineFigures({"float32": 1e10, "float64": 1e10}, {"float32": 1e10, "float64": 1e10},
                             {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)
    profile = profile_model(hierarchical_logistic(500, 20, 2).model)  # 66 dimensions
    candidate = Candidate("blackjax_nuts", "cpu", precision, (("chain_method", "parallel"),))
    numpyro = JaxNutsBackend().estimate(candidate, profile, machine)
    blackjax = BlackJaxNutsBackend().estimate(candidate, profile, machine)
    factor = pymc_accel_blackjax.FIXED_FACTOR[precision]
    assert pymc_accel_blackjax.LEAPFROG_FACTOR == 1.0
    assert blackjax.seconds_per_gradient.value == pytest.approx(numpyro.seconds_per_gradient.value)
    assert blackjax.gradients_per_draw.value == numpyro.gradients_per_draw.value
    # its early tuning's extra leapfrogs too (dropped until 2026-11-29), and the rest
    assert numpyro.extra_gradients.value > 0
    assert blackjax.extra_gradients == numpyro.extra_gradients
    assert blackjax.start_up_pace == numpyro.start_up_pace
    assert blackjax.relative_efficiency == numpyro.relative_efficiency
    # NumPyro's runs of a model correct its seconds per gradient where it has none of its own
    assert blackjax.gradient_kin == "numpyro" and numpyro.gradient_kin is None
    assert 1.0 < factor < 2.0
    assert blackjax.fixed_seconds.value == pytest.approx(factor * numpyro.fixed_seconds.value)
    assert blackjax.cold_compile_seconds.value == pytest.approx(
        factor * numpyro.cold_compile_seconds.value)
    assert "BlackJAX's warm fixed seconds" in blackjax.fixed_seconds.note


def test_blackjax_nuts_pays_its_own_start_in_a_new_process(monkeypatch):
    """BlackJAX's first run in a process took 2.45 s beyond its second against NumPyro's 1.68 s
    (bench/fit_first_use.py): its part is priced (FIRST_USE_SECONDS) where NumPyro's is 0.35 s.
    Without it a new process chose BlackJAX's float32 on eight schools for a start it pays."""
    import pymc_accel_blackjax

    from pymc_accel import first_use
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.machine import MachineFigures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    monkeypatch.setenv("PYMC_ACCEL_FIRST_USE", "on")
    monkeypatch.setattr(first_use, "_used", set())  # a new process
    machine = MachineFigures({"float32": 1e10, "float64": 1e10}, {"float32": 1e10, "float64": 1e10},
                             {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)
    profile = profile_model(eight_schools())
    candidate = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    numpyro = JaxNutsBackend().estimate(candidate, profile, machine).first_use_seconds.value
    blackjax = BlackJaxNutsBackend().estimate(
        Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),)),
        profile, machine)
    assert blackjax.first_use == ("jax", "blackjax")
    assert blackjax.first_use_seconds.value == pytest.approx(
        numpyro - first_use.FIRST_USE_SECONDS["numpyro"] + pymc_accel_blackjax.FIRST_USE_SECONDS)
    assert blackjax.first_use_seconds.value > numpyro


def test_blackjax_nuts_keeps_its_leapfrog_factor_when_measured(monkeypatch):
    """Measured mode times the JAX gradient NumPyro and BlackJAX share; BlackJAX's row is
    that timing times its leapfrog factor, not NumPyro's figure (at a factor of 2, measured
    mode took NumPyro's and chose BlackJAX on seed_mid; the factor is set to 2 here so that
    the test still fails where the factor is dropped)."""
    import pymc_accel_blackjax

    from pymc_accel.backend import Candidate
    from pymc_accel.backends import _measure

    monkeypatch.setattr(pymc_accel_blackjax, "LEAPFROG_FACTOR", 2.0)
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.machine import MachineFigures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    machine = MachineFigures({"float32": 1e10, "float64": 1e10}, {"float32": 1e10, "float64": 1e10},
                             {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)
    model = eight_schools()
    profile = profile_model(model)
    _measure._store(model, ("jax-loop", "cpu", "float64", 2), (0.5, 1e-4, 100, 2))  # timed
    numpyro = JaxNutsBackend().measure(
        Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),)),
        model, profile, machine, 5.0).seconds_per_gradient
    blackjax = BlackJaxNutsBackend().measure(
        Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),)),
        model, profile, machine, 5.0).seconds_per_gradient
    assert numpyro.source == blackjax.source == "measured"
    assert blackjax.value == pytest.approx(pymc_accel_blackjax.LEAPFROG_FACTOR * numpyro.value)
    assert blackjax.measured_share == pytest.approx(
        numpyro.measured_share / pymc_accel_blackjax.LEAPFROG_FACTOR)
    assert "BlackJAX's leapfrog" in blackjax.note


@pytest.mark.parametrize("backend", ["blackjax_nuts", "blackjax_mclmc"])
def test_blackjax_runs_check_their_start_in_pymc_not_twice(backend, start_checks):
    """PyMC's JAX path evaluates the jittered start before BlackJAX runs, so pymc-accel's own
    check (a log density built and evaluated, ~0.1-0.2 s) runs only after a failure, to name
    the variable; a good start is checked once, by PyMC."""
    import pymc as pm

    import pymc_accel
    from pymc_accel.errors import NonFiniteInitialPointError

    def two_dimensional(observed):  # MCLMC refuses one dimension
        with pm.Model() as model:
            s = pm.HalfNormal("s", 1.0)
            pm.Normal("a", 0.0, 1.0)
            pm.Exponential("y", s, observed=observed)
        return model

    calls = start_checks
    run = dict(draws=50, tune=50, chains=2, progressbar=False, random_seed=3,
               compute_convergence_checks=False)
    idata = pymc_accel.sample(model=two_dimensional([1.0, 2.0]), nuts_sampler=backend, **run)
    assert idata.attrs["pymc_accel_candidate"].startswith(backend) and calls == []
    with pytest.raises(NonFiniteInitialPointError, match="y .*initvals"):
        # -1 lies outside the exponential's support
        pymc_accel.sample(model=two_dimensional([-1.0, 2.0]), nuts_sampler=backend, **run)
    assert calls == [1]


def test_mclmc_seeds_as_the_jax_samplers_and_warns_that_it_ignores_target_accept():
    """A list of seeds gave the draws of its first seed, and a Generator other draws than its
    int; target_accept changed nothing without a word. A list, one seed a chain as
    ``pm.sample`` takes it, gives the same draws each time."""
    import numpy as np

    import pymc_accel
    from pymc_accel.models import eight_schools

    run = dict(nuts_sampler="blackjax_mclmc", tune=50, draws=20, chains=2, progressbar=False,
               compute_convergence_checks=False)

    def mu(seed, **kw):
        return pymc_accel.sample(model=eight_schools(), random_seed=seed, **run, **kw
                                 ).posterior["mu"].to_numpy()

    listed = mu([7, 8])
    assert listed.shape[0] == 2
    np.testing.assert_array_equal(listed, mu([7, 8]))
    np.testing.assert_array_equal(mu(7), mu(np.random.default_rng(7)))
    assert not np.array_equal(mu(7), listed)
    with pytest.warns(UserWarning, match="target_accept is ignored by blackjax_mclmc"):
        mu(7, target_accept=0.95)


def test_the_report_says_blackjax_vectorizes_its_chains_on_one_jax_cpu_device(monkeypatch):
    """JAX started before pymc-accel (one CPU device): the report says NumPyro's chains are
    priced to run in turn and BlackJAX's vectorized on the device, as each will run, and names
    the fix once."""
    from pymc_accel import selection
    from pymc_accel.backends import numpyro_nuts
    from pymc_accel.devices import Devices
    from pymc_accel.models import eight_schools

    monkeypatch.setattr(numpyro_nuts, "cpu_cores", lambda: 2)
    monkeypatch.setattr(numpyro_nuts, "jax_cpu_devices", lambda: 1)
    monkeypatch.setattr(selection, "jax_cpu_devices", lambda: 1)
    report = selection.select(eight_schools(), registry=build_registry(),
                              devices=Devices(cpu_cores=2, jax_installed=True, note="test"),
                              chains=2)
    labels = {r.label for r in report.rows if r.status != "refused"}
    assert "blackjax_nuts[cpu,float64,chain_method=vectorized]" in labels
    assert "numpyro[cpu,float64,chain_method=parallel]" in labels
    [note] = [n for n in report.notes if "CPU device" in n]
    assert "chains of numpyro" in note and "run 1 at a time" in note
    assert "blackjax_nuts" in note and "on one CPU device, and are priced so" in note
    assert note.count("xla_force_host_platform_device_count=2") == 1


def test_mclmc_spreads_its_chains_over_the_devices_in_order():
    """A CPU device runs its program on one core: MCLMC's chains go one a device where the
    devices divide them (pmap), a group vectorized on each where there are more chains, and all
    vectorized on one device where no layout divides them; every layout keeps the chains'
    order. Two chains on two devices ran seed_mid's later runs in 1.86 s, where vectorized on
    the one device they took 2.80 s (bench/bench_one_device_estimate.py)."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import json, jax, jax.numpy as jnp
        from pymc_accel_blackjax.mclmc import map_chains
        def run(key, x):  # one chain: a value that names the chain and the device it ran on
            return x * 2.0, {"sum": jnp.sum(x)}
        out = {}
        for chains, devices in ((2, 4), (4, 4), (6, 4), (3, 2), (2, 1), (1, 4)):
            xs = jnp.arange(chains * 3, dtype=jnp.float32).reshape(chains, 3)
            keys = jax.random.split(jax.random.PRNGKey(0), chains)
            pos, stats = map_chains(run, keys, xs, jax.devices("cpu")[:devices])
            out[f"{chains}/{devices}"] = {
                "same": bool(jnp.array_equal(pos, xs * 2.0))
                        and bool(jnp.array_equal(stats["sum"], xs.sum(axis=1))),
                "devices": len(pos.sharding.device_set)}
        print(json.dumps(out))
    """)
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(r["same"] for r in result.values()), result
    assert {k: r["devices"] for k, r in result.items()} == {
        "2/4": 2, "4/4": 4, "6/4": 3, "3/2": 1, "2/1": 1, "1/4": 1}


def test_mclmc_keeps_its_programs_in_the_jax_compile_cache(monkeypatch):
    """MCLMC sets up pymc-accel's JAX compile cache itself, as NumPyro's and BlackJAX NUTS's
    runs do: called outside pymc_accel.sample (which sets it up too), every run compiled its
    sampler anew, and eight schools' later runs took 5.3 s where they take about 1 s."""
    import pymc_accel
    from pymc_accel.models import eight_schools

    calls = []
    monkeypatch.setattr(pymc_accel, "enable_jax_cache", lambda: calls.append(1))
    pymc_accel.sample(model=eight_schools(), nuts_sampler="blackjax_mclmc", tune=20, draws=10,
                      chains=2, progressbar=False, compute_convergence_checks=False)
    assert calls == [1]


def test_mclmc_prices_its_tracing_on_top_of_numpyros_fixed_seconds():
    """MCLMC traces the log density for each tuning stage and its sampling loop: 8.9-13 ms a
    kernel at the fit machine's pace beyond NumPyro's fixed seconds, which had left its runs
    at 2-4x their estimate."""
    import pymc_accel_blackjax

    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    profile = profile_model(eight_schools())
    candidate = Candidate("blackjax_mclmc", "cpu", "float64")
    numpyro = JaxNutsBackend().estimate(candidate, profile, machine_figures())
    mclmc = BlackJaxMclmcBackend().estimate(candidate, profile, machine_figures())
    extra = pymc_accel_blackjax.TRACE_PER_KERNEL * profile.census.kernels
    assert 0.5 < extra < 3.0
    assert mclmc.fixed_seconds.value == pytest.approx(numpyro.fixed_seconds.value + extra)
    assert "tracing the log density" in mclmc.fixed_seconds.note


def test_mclmc_on_a_gpu_pays_its_scan_step_not_nuts_loops(monkeypatch):
    """A GPU NUTS leapfrog pays about 18 while-loop iterations (costmodel.NUTS_GPU_LOOP_ITERATIONS);
    MCLMC's step is one iteration of its sampling scan for two gradients, and pays that, modelled
    and measured alike."""
    from dataclasses import replace

    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate, Figure
    from pymc_accel.backends import _measure
    from pymc_accel.machine import DeviceFigures, machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    launch = 6.6e-6
    gpu = DeviceFigures("gpu", "Test GPU", {"float32": 4e11, "float64": 7e11},
                        {"float32": 3e12, "float64": 3.6e12}, {"float32": 1.6e14, "float64": 4.7e13},
                        launch_seconds=launch, call_seconds=5.7e-5)
    machine = replace(machine_figures(), accelerators={"gpu": gpu})
    model = eight_schools()
    profile = profile_model(model)
    mclmc = BlackJaxMclmcBackend().estimate(Candidate("blackjax_mclmc", "gpu", "float64"),
                                             profile, machine).seconds_per_gradient.value
    nuts = BlackJaxNutsBackend().estimate(Candidate("blackjax_nuts", "gpu", "float64"),
                                          profile, machine).seconds_per_gradient.value
    import pymc_accel_blackjax

    # BlackJAX's NUTS leapfrog is NumPyro's times its factor; MCLMC's gradient is NumPyro's
    assert nuts / pymc_accel_blackjax.LEAPFROG_FACTOR - mclmc == pytest.approx(
        launch * (costmodel.NUTS_GPU_LOOP_ITERATIONS - 0.5), rel=0.05)

    def timed(candidate, model, profile, machine, budget, modelled, parallel, runtime):
        return replace(modelled, seconds_per_gradient=Figure(30e-6, "measured", "timed"))

    monkeypatch.setattr(_measure, "jax_measure", timed)
    measured = BlackJaxMclmcBackend().measure(
        Candidate("blackjax_mclmc", "gpu", "float64"), model, profile, machine, 5.0)
    extra = measured.seconds_per_gradient.value - 30e-6
    assert extra == pytest.approx(0.5 * launch, rel=0.05)


def test_mclmc_prices_its_chains_batched_on_one_device(monkeypatch):
    """Where a device runs two or more of MCLMC's chains under vmap (a JAX that started with one
    CPU device), the sampler is traced batched: those runs took 1.15-1.59x the two-device runs,
    where the estimate gave 1.00-1.14x. The candidate says so, and its estimate adds the
    batched share of the tracing; a single chain is not batched."""
    import pymc_accel_blackjax
    from pymc_accel_blackjax.mclmc import chain_layout, chains_vectorized

    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel.testing import CPU_ONLY

    assert [chain_layout(c, d) for c, d in ((2, 4), (6, 4), (3, 2), (2, 1), (1, 4))] == [
        (2, 1), (3, 2), (1, 3), (1, 2), (1, 1)]
    assert [chains_vectorized(c, d) for c, d in ((2, 2), (4, 2), (3, 2), (1, 1))] == [
        False, True, True, False]
    backend = BlackJaxMclmcBackend()
    profile = profile_model(eight_schools())
    candidate = Candidate("blackjax_mclmc", "cpu", "float64")
    run = SampleRequest(draws=500, tune=500, chains=2)
    monkeypatch.setattr(pymc_accel_blackjax, "jax_cpu_devices", lambda: 2)
    spread, _ = backend.fit_memory(candidate, profile, CPU_ONLY, run)
    monkeypatch.setattr(pymc_accel_blackjax, "jax_cpu_devices", lambda: 1)
    batched, _ = backend.fit_memory(candidate, profile, CPU_ONLY, run)
    alone, _ = backend.fit_memory(candidate, profile, CPU_ONLY,
                                  SampleRequest(draws=500, tune=500, chains=1))
    assert spread == candidate and alone == candidate
    assert batched.option("chains_vectorized") is True
    machine = machine_figures()
    trace = pymc_accel_blackjax.TRACE_PER_KERNEL * profile.census.kernels
    extra = (backend.estimate(batched, profile, machine).fixed_seconds.value
             - backend.estimate(candidate, profile, machine).fixed_seconds.value)
    assert extra == pytest.approx(pymc_accel_blackjax.VMAP_TRACE_SHARE * trace)


def test_a_named_blackjax_run_whose_gradient_is_wrong_warns_with_the_fix(monkeypatch):
    # the VFE sparse GP as it was before its coinciding distances were held: BlackJAX's
    # gradient is wrong there as NumPyro's is (bench/check_last_gradients.py --sampler
    # blackjax_nuts --unheld), and PyMC's BlackJAX loop drops the state that would show it
    import sys
    from pathlib import Path

    import pymc as pm

    import pymc_accel
    from pymc_accel.backends import run_logp
    from pymc_accel.backends.last_gradients import LastGradients

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import sweep_user_models

    run = dict(draws=30, tune=30, chains=2, random_seed=1, progressbar=False, quiet=True,
               compute_convergence_checks=False, max_treedepth=5)
    held = pymc_accel.sample(model=sweep_user_models.gp_vfe_matern32(pm),
                             nuts_sampler="blackjax_nuts", **run)
    assert LastGradients.from_idata(held).agrees
    assert "pymc_accel_last_state" not in held.sample_stats
    monkeypatch.setattr(run_logp, "ZERO_COINCIDENT_DISTANCES", False)
    with pytest.warns(pymc_accel.GradientMismatchWarning,
                      match="not the derivative of its log density.*nuts_sampler='numba'"):
        idata = pymc_accel.sample(model=sweep_user_models.gp_vfe_matern32(pm),
                                  nuts_sampler="blackjax_nuts", **run)
    assert not LastGradients.from_idata(idata).agrees


def test_mclmc_shares_blas_among_the_chains_on_the_cpu_devices(monkeypatch):
    """Its chains on XLA's CPU devices call LAPACK at the same time: two chains of a sparse GP
    took 1.47x one chain's wall with a BLAS thread a core each, 1.07x with one thread a chain
    (docs/results/chains-side-by-side-cpu-2026-12-02-plugins-at-*-1.md)."""
    from threadpoolctl import threadpool_info

    import pymc_accel
    import pymc_accel_blackjax
    from pymc_accel.models import eight_schools

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    seen, real = [], pymc_accel_blackjax.sample_mclmc
    monkeypatch.setattr(pymc_accel_blackjax, "sample_mclmc",
                        lambda *a, **k: seen.append(blas_threads()) or real(*a, **k))
    before = blas_threads()
    run = dict(model=eight_schools(), nuts_sampler="blackjax_mclmc", tune=20, draws=10,
               progressbar=False, compute_convergence_checks=False)
    pymc_accel.sample(chains=2, **run)
    import jax

    side_by_side = min(2, len(jax.devices("cpu")))  # one device a chain where there are two
    assert seen[-1] == {max(1, pymc_accel.discover_devices().cpu_cores // side_by_side)}
    assert blas_threads() == before
    pymc_accel.sample(chains=2, blas_cores=None, **run)
    assert seen[-1] == before
