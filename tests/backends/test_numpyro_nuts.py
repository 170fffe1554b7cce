from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pymc_accel.backends.numpyro_nuts import runnable_chain_method


def test_parallel_needs_a_device_per_chain():
    assert runnable_chain_method("parallel", n_devices=1, chains=2) == "vectorized"
    # a CPU runs them one after another: vmapped NUTS chains ran 1.9x slower there
    assert runnable_chain_method("parallel", n_devices=1, chains=2, platform="cpu") == \
        "sequential"
    assert runnable_chain_method("vectorized", n_devices=1, chains=2, platform="cpu") == \
        "vectorized"  # asked for: kept
    assert runnable_chain_method("parallel", n_devices=4, chains=2) == "parallel"
    assert runnable_chain_method("parallel", n_devices=1, chains=1) == "parallel"
    assert runnable_chain_method("vectorized", n_devices=8, chains=4) == "vectorized"


def test_device_discovery_gives_jax_a_cpu_device_per_core():
    # A fresh process where pymc-accel, not pymc.sampling.jax, starts JAX first.
    code = ("import pymc_accel, jax; pymc_accel.discover_devices(); "
            "print(len(jax.devices('cpu')))")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) >= 2


def test_importing_pymc_accel_gives_jax_a_cpu_device_per_core():
    # What the one-device warning and report note advise: import pymc_accel before anything
    # starts JAX, with no selection yet.
    code = "import pymc_accel, jax; print(len(jax.devices('cpu')))"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) >= 2


def test_gpu_estimate_counts_nuts_bookkeeping_per_dimension():
    # Measured on an H100: at 2.1M parameters NUTS's own vector work per leapfrog (0.27 ms)
    # was comparable to the gradient (0.35 ms); the estimate must carry it.
    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import NUTS_GPU_SECONDS_PER_DIMENSION
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import hierarchical_logistic
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import build_registry

    profile = profile_model(hierarchical_logistic(20_000, 2_000, 5).model)
    backend = build_registry(autoload=False).backends["numpyro"]
    machine = machine_figures()
    for precision in ("float32", "float64"):
        est = backend.estimate(Candidate("numpyro", "gpu", precision), profile, machine)
        gradient = costmodel.gpu_nuts_leapfrog_seconds(profile, precision, machine).value
        extra = est.seconds_per_gradient.value - gradient
        assert extra == pytest.approx(NUTS_GPU_SECONDS_PER_DIMENSION[precision] * profile.n_free)
        assert "NUTS steps" in est.seconds_per_gradient.note


def _gpu_machine(launch_seconds: float = 6.6e-6):
    """This machine's CPU figures with a calibrated GPU whose loop iteration takes
    ``launch_seconds`` (the third H200 lease's 6.6 µs by default)."""
    from dataclasses import replace

    from pymc_accel.machine import DeviceFigures, machine_figures

    gpu = DeviceFigures("gpu", "Test GPU", {"float32": 4e11, "float64": 7e11},
                        {"float32": 3e12, "float64": 3.6e12}, {"float32": 1.6e14, "float64": 4.7e13},
                        launch_seconds=launch_seconds, call_seconds=5.7e-5)
    return replace(machine_figures(), accelerators={"gpu": gpu})


def test_a_gpu_leapfrog_is_priced_by_its_loops_not_a_launch_a_kernel():
    """The H200's warm runs took 163 µs a leapfrog on seed_mid (216 kernels) where a third of
    the kernels at a loop iteration each priced 476 µs: a leapfrog is the sampler's loop
    iterations plus each kernel at a share of one (bench/fit_gpu_leapfrog.py)."""
    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import NUTS_GPU_SECONDS_PER_DIMENSION
    from pymc_accel.models import hierarchical_logistic
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import build_registry

    profile = profile_model(hierarchical_logistic(2_000, 200, 3).model)
    kernels = profile.census.kernels
    machine = _gpu_machine()
    backend = build_registry(autoload=False).backends["numpyro"]
    est = backend.estimate(Candidate("numpyro", "gpu", "float64",
                                     (("chain_method", "vectorized"),)), profile, machine)
    launch = 6.6e-6
    loops = launch * (costmodel.NUTS_GPU_LOOP_ITERATIONS
                      + costmodel.GPU_KERNEL_IN_LOOP_SHARE * kernels)
    standalone = costmodel.gpu_gradient_seconds(profile, "float64", machine).value
    roofline = standalone - max(1, kernels // 3) * launch
    per_dim = NUTS_GPU_SECONDS_PER_DIMENSION["float64"] * profile.n_free
    assert est.seconds_per_gradient.value == pytest.approx(loops + roofline + per_dim)
    assert kernels > 150 and est.seconds_per_gradient.value < 0.6 * standalone
    assert "loop iterations" in est.seconds_per_gradient.note
    # the iteration's latency scales it: a GPU twice as slow to iterate, about twice the leapfrog
    slow = backend.estimate(Candidate("numpyro", "gpu", "float64"), profile, _gpu_machine(13.2e-6))
    assert slow.seconds_per_gradient.value == pytest.approx(
        2 * loops + roofline + per_dim)


def test_measured_gpu_gradient_pays_the_samplers_loop_iterations(monkeypatch):
    """Measured mode times a GPU gradient as a standalone call (seed_mid: 67 µs), which the
    sampler runs inside its while loops (about 163 µs a leapfrog): the loops' iterations are
    added, so measured mode no longer takes the GPU for 2.7x faster than it runs."""
    from dataclasses import replace

    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate, Figure
    from pymc_accel.backends import _measure
    from pymc_accel.backends.numpyro_nuts import NUTS_GPU_SECONDS_PER_DIMENSION
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import build_registry

    timed = 67e-6

    def fake_jax_measure(candidate, model, profile, machine, budget, modelled, parallel, runtime):
        return replace(modelled, seconds_per_gradient=Figure(timed, "measured", "timed"))

    monkeypatch.setattr(_measure, "jax_measure", fake_jax_measure)
    model = eight_schools()
    profile = profile_model(model)
    machine = _gpu_machine()
    backend = build_registry(autoload=False).backends["numpyro"]
    gpu = backend.measure(Candidate("numpyro", "gpu", "float64",
                                    (("chain_method", "vectorized"),)), model, profile, machine, 5.0)
    loop = costmodel.NUTS_GPU_LOOP_ITERATIONS * 6.6e-6
    per_dim = NUTS_GPU_SECONDS_PER_DIMENSION["float64"] * profile.n_free
    grad = gpu.seconds_per_gradient
    assert grad.value == pytest.approx(timed + loop + per_dim)
    assert grad.source == "measured" and grad.measured_share == pytest.approx(
        timed / (timed + loop), rel=1e-3)
    assert "loop iterations" in grad.note
    cpu = backend.measure(Candidate("numpyro", "cpu", "float64"), model, profile, machine, 5.0)
    assert cpu.seconds_per_gradient.value == pytest.approx(timed)  # the CPU's is timed in a loop


def test_vectorized_gpu_chains_pay_their_largest_tree_and_a_batched_trace():
    """One GPU runs NumPyro's chains under vmap: each draw costs the largest of their trees
    and the sampler is traced batched; chains one at a time (memory short) pay neither."""
    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import build_registry

    profile = profile_model(eight_schools())
    backend = build_registry(autoload=False).backends["numpyro"]
    machine = machine_figures()
    cpu = backend.estimate(Candidate("numpyro", "cpu", "float64",
                                     (("chain_method", "parallel"),)), profile, machine)
    gpu = backend.estimate(Candidate("numpyro", "gpu", "float64",
                                     (("chain_method", "vectorized"),)), profile, machine)
    one = backend.estimate(Candidate("numpyro", "gpu", "float64", (
        ("chain_method", "sequential"), ("chains_at_once", 1))), profile, machine)
    several = backend.estimate(Candidate("numpyro", "gpu", "float64",
                                         (("chain_method", "parallel"),)), profile, machine)
    assert cpu.vectorized_trees.value == 1.0 and one.vectorized_trees.value == 1.0
    assert several.vectorized_trees.value == 1.0  # a chain a GPU: nothing batched
    assert several.fixed_seconds.value == pytest.approx(one.fixed_seconds.value)
    assert gpu.vectorized_trees.value == costmodel.VECTORIZED_TREE_FACTOR > 1.0
    assert gpu.fixed_seconds.value == pytest.approx(
        one.fixed_seconds.value + costmodel.VMAP_TRACE_SECONDS)
    assert one.fixed_seconds.value == pytest.approx(   # its programs loaded onto the GPU
        cpu.fixed_seconds.value + costmodel.GPU_PROGRAM_LOAD_SECONDS)
    per_chain = gpu.gradients_per_chain(400) * gpu.seconds_per_gradient.value
    assert gpu.sampling_seconds(400, 4) == pytest.approx(per_chain * gpu.vectorized_trees.value)
    assert gpu.sampling_seconds(400, 1) == pytest.approx(per_chain)  # one chain: no vmap


def test_one_jax_cpu_device_prices_the_chains_in_turn(monkeypatch):
    """Where JAX started before pymc-accel could ask for a CPU device a core, NumPyro's chains
    run one after another (runnable_chain_method): the estimate takes them in rounds, not side
    by side, and says why. seed_mid's runs took 1.34x, glm_poisson's 1.72x those with a device
    a chain (bench/bench_one_device_estimate.py), which the estimate had put equal."""
    from pymc_accel.backend import Candidate
    from pymc_accel.backends import numpyro_nuts
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import build_registry

    profile = profile_model(eight_schools())
    backend = build_registry(autoload=False).backends["numpyro"]
    candidate = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    monkeypatch.setattr(numpyro_nuts, "cpu_cores", lambda: 2)
    monkeypatch.setattr(numpyro_nuts, "jax_cpu_devices", lambda: 4)
    spread = backend.estimate(candidate, profile, machine_figures())
    monkeypatch.setattr(numpyro_nuts, "jax_cpu_devices", lambda: 1)
    in_turn = backend.estimate(candidate, profile, machine_figures())
    assert spread.chain_parallelism == 2 and in_turn.chain_parallelism == 1
    assert "1 CPU device" in in_turn.seconds_per_gradient.note
    assert "CPU device" not in spread.seconds_per_gradient.note
    assert in_turn.sampling_seconds(1000, 2) == pytest.approx(
        2 * spread.sampling_seconds(1000, 2))
    assert in_turn.sampling_seconds(1000, 1) == pytest.approx(spread.sampling_seconds(1000, 1))


def _blackjax_layout(monkeypatch, devices: int, chains: int, backend=None,
                     options=(("chain_method", "parallel"),)):
    """The BlackJAX CPU candidate as the selection lays it out for ``chains`` chains where JAX
    has ``devices`` CPU devices, with its estimate."""
    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.backends import numpyro_nuts
    from pymc_accel.devices import Devices
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    backend = backend or numpyro_nuts.JaxNutsBackend("blackjax_nuts", "blackjax")
    monkeypatch.setattr(numpyro_nuts, "cpu_cores", lambda: 2)
    monkeypatch.setattr(numpyro_nuts, "jax_cpu_devices", lambda: devices)
    profile = profile_model(eight_schools())
    laid_out, memory = backend.fit_memory(
        Candidate(backend.name, "cpu", "float64", options), profile,
        Devices(cpu_cores=2, jax_installed=True, note="test: no GPU"),
        SampleRequest(draws=500, tune=500, chains=chains))
    assert memory is None
    return laid_out, backend.estimate(laid_out, profile, machine_figures())


def test_blackjax_on_fewer_jax_cpu_devices_than_chains_is_priced_vectorized(monkeypatch):
    """PyMC's BlackJAX path maps chains with pmap (a device each) or vmap, so with fewer JAX CPU
    devices than chains sample() vectorizes them on one device: the candidate says so, and its
    estimate prices the batch (chains in turn times CPU_VECTORIZED_FACTOR, plus the batched
    trace). Priced in turn, one device against two had been estimated at 1.06-1.81x, where the
    runs took 2.02-2.64x (bench/bench_one_device_estimate.py --backend blackjax_nuts)."""
    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate

    spread, side_by_side = _blackjax_layout(monkeypatch, devices=4, chains=2)
    assert spread.option("chain_method") == "parallel"
    one_chain, _ = _blackjax_layout(monkeypatch, devices=1, chains=1)
    assert one_chain.option("chain_method") == "parallel"
    batched, vectorized = _blackjax_layout(monkeypatch, devices=1, chains=2)
    assert batched.option("chain_method") == "vectorized"
    assert batched.label == "blackjax_nuts[cpu,float64,chain_method=vectorized]"
    # the same candidate left to run in turn on that one device, as it was priced before
    unlaid = Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),))
    from pymc_accel.backends import numpyro_nuts
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    in_turn = numpyro_nuts.JaxNutsBackend("blackjax_nuts", "blackjax").estimate(
        unlaid, profile_model(eight_schools()), machine_figures())

    factor = costmodel.CPU_VECTORIZED_FACTOR["blackjax"]
    assert factor > 1.0
    assert vectorized.chain_parallelism == in_turn.chain_parallelism == 1
    assert side_by_side.chain_parallelism == 2
    assert vectorized.seconds_per_gradient.value == pytest.approx(
        factor * in_turn.seconds_per_gradient.value)
    assert "vectorized on one CPU device" in vectorized.seconds_per_gradient.note
    assert vectorized.fixed_seconds.value == pytest.approx(
        in_turn.fixed_seconds.value + costmodel.VMAP_TRACE_SECONDS)
    assert vectorized.sampling_seconds(1000, 2) == pytest.approx(
        factor * in_turn.sampling_seconds(1000, 2))
    assert vectorized.total_seconds(1000, 2) > in_turn.total_seconds(1000, 2)


def test_numpyro_is_not_vectorized_on_one_cpu_device_unless_asked(monkeypatch):
    """NumPyro runs a CPU device's chains in turn (runnable_chain_method), so its layout is
    left alone; asked for chain_method="vectorized" on the CPU, it is priced as a batch with
    NumPyro's own factor (1.69-1.83x its chains in turn, bench/bench_cpu_chain_layout.py)."""
    from pymc_accel import costmodel
    from pymc_accel.backends import numpyro_nuts

    numpyro = numpyro_nuts.NumpyroBackend()
    kept, in_turn = _blackjax_layout(monkeypatch, devices=1, chains=2, backend=numpyro)
    assert kept.option("chain_method") == "parallel"
    asked, vectorized = _blackjax_layout(monkeypatch, devices=1, chains=2, backend=numpyro,
                                         options=(("chain_method", "vectorized"),))
    assert asked.option("chain_method") == "vectorized"
    assert vectorized.seconds_per_gradient.value == pytest.approx(
        costmodel.CPU_VECTORIZED_FACTOR["numpyro"] * in_turn.seconds_per_gradient.value)
    assert vectorized.fixed_seconds.value == pytest.approx(
        in_turn.fixed_seconds.value + costmodel.VMAP_TRACE_SECONDS)


def test_a_gpus_first_compile_is_priced_by_its_own_fit():
    """XLA's first compile of the sampler for a GPU took 10-52 s on the leased H200 where the
    CPU's figure gives 2-4 s: a GPU candidate's cold compile is the GPU fit's."""
    from pymc_accel import costmodel, jax_cache
    from pymc_accel.backend import Candidate
    from pymc_accel.machine import machine_figures
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import build_registry

    profile = profile_model(eight_schools())
    backend = build_registry(autoload=False).backends["numpyro"]
    cpu = backend.estimate(Candidate("numpyro", "cpu", "float64"), profile, machine_figures())
    gpu = backend.estimate(Candidate("numpyro", "gpu", "float64"), profile, machine_figures())
    expected = costmodel.GPU_COLD_SECONDS + costmodel.GPU_COLD_SECONDS_PER_KERNEL * \
        profile.census.kernels
    if jax_cache.will_cache():
        assert gpu.cold_compile_seconds.value == pytest.approx(expected)
        assert cpu.cold_compile_seconds.value < gpu.cold_compile_seconds.value / 3
    else:  # every run compiles: the compile is in the fixed seconds
        assert gpu.fixed_seconds.value > expected


def test_float32_run_of_a_float64_model_does_not_warn_about_truncation():
    # PyTensor's JAX reductions ask for float64 accumulators; in float32 JAX truncates them,
    # which is the point, and must not warn on every run.
    import warnings

    import pymc_accel
    from pymc_accel.models import eight_schools

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pymc_accel.sample(20, tune=20, chains=1, model=eight_schools(), nuts_sampler="numpyro",
                          precision="float32", progressbar=False, quiet=True,
                          compute_convergence_checks=False)
    assert not [w for w in caught if "Explicitly requested dtype float64" in str(w.message)]


def test_a_float32_run_with_numpyros_progress_bar_completes():
    """NumPyro's progress bar is a host callback, run in a thread of JAX's: with 64-bit types
    switched off only in the sampling thread, it returned an int64 to a program compiled for
    int32 and the run failed (``make demo`` chose float32 NumPyro on 2026-11-25)."""
    import jax

    import pymc_accel
    from pymc_accel.models import eight_schools

    before = jax.config.jax_enable_x64
    idata = pymc_accel.sample(20, tune=20, chains=2, model=eight_schools(), nuts_sampler="numpyro",
                              precision="float32", progressbar=True, random_seed=1,
                              compute_convergence_checks=False)
    assert idata.posterior["mu"].dtype == np.float32
    assert jax.config.jax_enable_x64 == before  # the process-wide setting is given back


@pytest.mark.parametrize("before", [True, False])
def test_a_float32_run_leaves_jax_s_64_bit_setting_as_it_found_it(before):
    """A float32 run switched 64-bit types off and gave back the value it had just set, so a
    user's JAX code after it ran in float32 (and, in this suite, the DEER solver's float64
    tests failed whenever they ran after a float32 run in the same worker)."""
    import jax

    import pymc_accel
    from pymc_accel.models import eight_schools

    found = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", before)
    try:
        pymc_accel.sample(20, tune=20, chains=1, model=eight_schools(), nuts_sampler="numpyro",
                          precision="float32", progressbar=False, random_seed=1,
                          compute_convergence_checks=False)
        assert jax.config.jax_enable_x64 is before
    finally:
        jax.config.update("jax_enable_x64", found)


def test_a_jax_run_returns_once_its_draws_are_computed(monkeypatch):
    """PyMC's ``sample_jax_nuts`` returns JAX arrays whose computation may still be running
    (with BlackJAX, the whole of sampling: 10.7 s returned, 93.6 s more at first use on the
    seed model); the backend waits for every one, so a run's wall time is its sampling's."""
    import jax
    import jax.numpy as jnp
    import xarray as xr

    from pymc_accel.backends import numpyro_nuts

    waited = []
    real = jax.block_until_ready
    monkeypatch.setattr(jax, "block_until_ready", lambda x: waited.append(x) or real(x))
    draws = jnp.arange(6.0).reshape(2, 3) * 2.0
    idata = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"mu": (("chain", "draw"), draws)}),
        "observed_data": xr.Dataset({"y": ("obs", np.zeros(3))}),
    })
    assert numpyro_nuts.wait_for_draws(idata) is idata
    assert len(waited) == 1 and waited[0] is idata["posterior"]["mu"].data


@pytest.mark.parametrize("jax_sampler", ["numpyro", "blackjax"])
@pytest.mark.parametrize(("blas_cores", "limited"), [("auto", True), (None, False)])
def test_chains_on_cpu_devices_of_their_own_share_blas_threads(monkeypatch, jax_sampler,
                                                                blas_cores, limited):
    """Two chains on two XLA CPU devices call LAPACK at once: each gets its share of the
    cores' BLAS threads (a GP's gradient took 6.2 ms a device where one took 2.4 ms)."""
    import jax
    import pymc.sampling.jax as pymc_jax
    import xarray as xr
    from threadpoolctl import threadpool_info

    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.backends import numpyro_nuts
    from pymc_accel.backends.blas_threads import blas_threads_per_chain
    from tests.models import dense_model

    if len(jax.devices("cpu")) < 2:
        pytest.skip("JAX has one CPU device here: the chains do not run side by side")

    def blas_threads() -> set[int]:
        import scipy.linalg  # noqa: F401  (SciPy's OpenBLAS, which jaxlib's LAPACK calls)

        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    inside = []

    def fake_sample_jax_nuts(**kwargs):
        inside.append(blas_threads())
        draws = np.zeros((2, 3))
        return xr.DataTree.from_dict({"posterior": xr.Dataset({"mu": (("chain", "draw"),
                                                                      draws)})})

    monkeypatch.setattr(pymc_jax, "sample_jax_nuts", fake_sample_jax_nuts)
    monkeypatch.setattr(numpyro_nuts, "cpu_cores", lambda: 2)
    before = blas_threads()
    request = SampleRequest(draws=3, tune=3, chains=2, progressbar=False,
                            pymc_kwargs={"blas_cores": blas_cores})
    backend = numpyro_nuts.JaxNutsBackend(jax_sampler, jax_sampler)
    backend.sample(dense_model(3), Candidate(jax_sampler, "cpu", "float64",
                                             (("chain_method", "parallel"),)), request)
    assert inside == [{blas_threads_per_chain(2, 2)} if limited else before]
    assert blas_threads() == before
