"""The cost model (pymc_accel/costmodel.py) and the estimates the built-in backends make from it,
on figures made by hand (tests/figures.py) and profiles of small models."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pymc_accel import Candidate, costmodel, machine
from pymc_accel.devices import Devices
from pymc_accel.machine import DeviceFigures
from pymc_accel.models import eight_schools, hierarchical_logistic
from pymc_accel.profile import profile_model
from tests.figures import hand_made_machine as _machine


def _marginal_gp(n: int):
    """A marginal GP on ``n`` points: a Cholesky of n x n in every gradient."""
    import pymc as pm
    import pytensor.tensor as pt

    x = np.linspace(0, 10, n)
    with pm.Model() as gp:
        ls = pm.Gamma("ls", 2, 1)
        cov = pt.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ls**2) + 0.1 * pt.eye(n)
        pm.MvNormal("y", mu=np.zeros(n), cov=cov, observed=np.sin(x))
    return gp


def test_gpu_estimate_uses_calibrated_launch_latency():
    profile = profile_model(eight_schools())
    gpu = DeviceFigures("gpu", "G", {"float32": 1e13, "float64": 1e12},
                        {"float32": 1e12, "float64": 1e12}, {"float32": 1e14, "float64": 1e13},
                        launch_seconds=1e-5, call_seconds=1e-4)
    slow = replace(gpu, launch_seconds=1e-4)
    fast_fig = costmodel.gpu_gradient_seconds(profile, "float32", _machine(accelerators={"gpu": gpu}))
    slow_fig = costmodel.gpu_gradient_seconds(profile, "float32", _machine(accelerators={"gpu": slow}))
    # a tiny model is all launches: ten times the latency, about ten times the time
    assert 9 < slow_fig.value / fast_fig.value <= 10
    assert "calibrated G" in fast_fig.note


def test_driver_overhead_scales_with_the_measured_call_overhead():
    profile = profile_model(hierarchical_logistic(500, 20, 2).model)
    rt = costmodel.NUMBA_PYMC
    ref = costmodel.driver_seconds(profile, _machine(cpu_call_seconds=costmodel.REFERENCE_CALL_SECONDS), rt)
    slow = costmodel.driver_seconds(profile, _machine(cpu_call_seconds=3 * costmodel.REFERENCE_CALL_SECONDS), rt)
    assert slow == pytest.approx(3 * ref)
    assert ref == pytest.approx(rt.per_gradient_seconds + rt.per_dimension_seconds * profile.n_free)


def test_nutpies_rust_driver_costs_the_same_at_any_dimension_and_its_kernels_less_than_pymcs():
    """nutpie's leapfrog timed inside its sampler (bench/fit_nutpie_leapfrog.py) cost 1.4 µs on
    eight schools and 12 µs on 503 varying intercepts, where a driver priced like PyMC's Python
    one, per dimension and per kernel, charged 10 and 46 µs: its Rust driver's work does not
    grow measurably with the dimension, and its kernels cost less than through PyMC's Python
    call. The kernels' arithmetic is the same compiled code under both drivers."""
    small = profile_model(hierarchical_logistic(500, 20, 2).model)
    large = profile_model(hierarchical_logistic(2000, 500, 5).model)
    m = _machine()
    nutpie, pymc = costmodel.NUMBA_NUTPIE, costmodel.NUMBA_PYMC
    assert large.n_free > 10 * small.n_free
    assert (costmodel.driver_seconds(large, m, nutpie)
            == pytest.approx(costmodel.driver_seconds(small, m, nutpie)))
    assert costmodel.driver_seconds(large, m, pymc) > costmodel.driver_seconds(small, m, pymc)
    assert costmodel.driver_seconds(small, m, nutpie) < costmodel.driver_seconds(small, m, pymc)
    no_kernel_work = replace(nutpie, per_kernel_seconds=0.0)
    c = small.census
    counted = c.kernels - c.kernels_by_category["elementwise"]
    kernels = (costmodel._cpu_roofline(small, m, "float64", nutpie, 1)
               - costmodel._cpu_roofline(small, m, "float64", no_kernel_work, 1))
    assert kernels == pytest.approx(counted * costmodel.NUTPIE_KERNEL_SECONDS
                                    * costmodel._machine_scale(m))
    assert costmodel.NUTPIE_KERNEL_SECONDS < costmodel.NUMBA_KERNEL_SECONDS
    assert nutpie.flops_factor == pymc.flops_factor == costmodel.NUMBA_FLOPS_FACTOR
    assert (nutpie.transcendental_factor == pymc.transcendental_factor
            == costmodel.NUMBA_TRANSCENDENTAL_FACTOR)


def test_chains_share_bandwidth_only_when_their_working_sets_spill_out_of_cache():
    profile = profile_model(hierarchical_logistic(500, 20, 2).model)
    ws = profile.working_set_bytes
    assert profile.data_bytes < ws < profile.census.bytes  # data + a few arrays, not all traffic
    roomy = _machine(cpu_cache_bytes=4 * ws)
    tight = _machine(cpu_cache_bytes=1.5 * ws)
    numba = costmodel.NUMBA_NUTPIE
    assert costmodel.bandwidth_sharing(profile, roomy, numba, 2) == 1
    assert costmodel.bandwidth_sharing(profile, tight, numba, 2) == 2
    # XLA's CPU runtime threads its ops over every core: chains always share them
    assert costmodel.bandwidth_sharing(profile, roomy, costmodel.JAX_CPU, 2) == 2
    one = costmodel.cpu_gradient_seconds(profile, roomy, "float64", numba, parallel_chains=1)
    two_fit = costmodel.cpu_gradient_seconds(profile, roomy, "float64", numba, parallel_chains=2)
    two_spill = costmodel.cpu_gradient_seconds(profile, tight, "float64", numba, parallel_chains=2)
    assert two_fit.value == pytest.approx(one.value)
    assert two_spill.value > one.value


def test_pymc_nuts_pays_for_its_early_tuning_and_nutpie_does_not():
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numba_cpu import NumbaBackend

    small = profile_model(eight_schools())
    large = profile_model(hierarchical_logistic(500, 20, 2).model)
    assert costmodel.pymc_tuning_extra_gradients(small).value == 1000  # the floor
    assert costmodel.pymc_tuning_extra_gradients(large).value > 3000
    backend, m = NumbaBackend(), _machine()
    pymc = backend.estimate(Candidate("numba", "cpu", "float64", (("driver", "pymc"),)), large, m)
    nutpie = backend.estimate(Candidate("numba", "cpu", "float64", (("driver", "nutpie"),)), large, m)
    assert pymc.extra_gradients.value > 3000 and nutpie.extra_gradients.value == 0
    # the extra gradients are paid once, whatever the run's length
    rounds = -(-2 // max(1, pymc.chain_parallelism))
    longer = pymc.sampling_seconds(2000, 2) - pymc.sampling_seconds(1000, 2)
    per_draw = pymc.gradients_per_draw.value + pymc.draw_start_gradients.value
    assert longer == pytest.approx(rounds * 1000 * per_draw * pymc.seconds_per_gradient.value)
    assert pymc.sampling_seconds(1000, 2) > longer


def test_numpyro_and_blackjax_pay_for_their_early_tuning_once():
    """NumPyro's early tuning took 5,905 leapfrogs a chain beyond its sampling rate on the
    612-parameter seed model and a few hundred at d <= 23 (bench/fit_numpyro_tuning.py);
    BlackJAX's window adaptation, Stan's too, took 0.94-1.06x NumPyro's tuning leapfrogs
    (bench/fit_blackjax_leapfrog.py --method tuning), and was charged none until 2026-11-29."""
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend

    small = profile_model(eight_schools())  # d = 10
    large = profile_model(hierarchical_logistic(500, 20, 2).model)
    assert costmodel.stan_tuning_extra_gradients(small).value == 0
    assert costmodel.stan_tuning_extra_gradients(large).value == pytest.approx(
        costmodel.STAN_TUNING_EXTRA_PER_LOG_DIMENSION * np.log(large.n_free / 10))
    m = _machine()
    candidate = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    numpyro = JaxNutsBackend().estimate(candidate, large, m)
    blackjax = JaxNutsBackend("blackjax_nuts", "blackjax").estimate(
        Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),)), large, m)
    assert numpyro.extra_gradients.value == costmodel.stan_tuning_extra_gradients(large).value
    assert blackjax.extra_gradients == numpyro.extra_gradients
    # paid once, whatever the run's length
    longer = numpyro.sampling_seconds(2000, 2) - numpyro.sampling_seconds(1000, 2)
    assert numpyro.sampling_seconds(1000, 2) - longer == pytest.approx(
        numpyro.extra_gradients.value * numpyro.seconds_per_gradient.value
        * -(-2 // max(1, numpyro.chain_parallelism)))


def test_numpyros_early_tuning_follows_the_scale_spread_where_it_was_evaluated():
    """On the non-centred group models NumPyro's early tuning took 12,000-37,000 leapfrogs a
    chain, in proportion to the spread of the variables' scales (31-64), where the dimension's
    law priced 3,000-7,000 (bench/fit_numpyro_tuning.py --fit-spread)."""
    profile = profile_model(hierarchical_logistic(500, 20, 2).model)
    by_dimension = costmodel.stan_tuning_extra_gradients(profile)
    spread = costmodel.stan_tuning_extra_gradients(replace(profile, scale_spread=64.0))
    assert spread.value == pytest.approx(costmodel.STAN_TUNING_EXTRA_PER_SPREAD * 64.0)
    assert spread.value > 4 * by_dimension.value
    assert "scale spread 64" in spread.note and "ln(d/10)" in by_dimension.note
    # variables alike still pay the window's few hundred, where the dimension's law gives none
    small = profile_model(eight_schools())
    assert costmodel.stan_tuning_extra_gradients(small).value == 0
    assert costmodel.stan_tuning_extra_gradients(
        replace(small, scale_spread=1.0)).value == costmodel.STAN_TUNING_EXTRA_PER_SPREAD
    # at most every draw of the identity-mass window at the tree-depth limit
    most = costmodel.stan_tuning_extra_gradients(replace(profile, scale_spread=1e6))
    assert most.value == costmodel.STAN_IDENTITY_WINDOW_MOST_LEAPFROGS == 100 * 1023


def test_numpyros_arithmetic_charges_ten_flops_only_for_functions_it_evaluates():
    """A non-centred group model's squares (``x ** 2`` in each Normal's log density and its
    gradient) are ops named like a transcendental function that XLA computes as
    multiplications: NumPyro's arithmetic charges them one flop each, the numba runtimes (fitted
    on the census's flops) ten."""
    import pymc as pm

    from pymc_accel.census import TRANSCENDENTAL_FLOPS

    rng = np.random.default_rng(0)
    group = rng.integers(0, 50, size=1000)
    with pm.Model() as model:
        sigma = pm.HalfNormal("sigma", 1.0)
        z = pm.Normal("z", 0, 1, shape=50)
        pm.Normal("y", sigma * z[group], 1.0, observed=rng.normal(size=1000))
    profile = profile_model(model)
    c = profile.census
    evaluated = sum(c.transcendentals_by_function.values())
    assert c.transcendental_flops > 9 * evaluated + 9 * 1000  # the likelihood's squares at least
    jax = costmodel.arithmetic_flops(profile, costmodel.JAX_CPU_SAMPLER)
    assert jax == pytest.approx(c.flops - c.transcendental_flops
                                + (TRANSCENDENTAL_FLOPS - 1) * evaluated)
    assert costmodel.arithmetic_flops(profile, costmodel.NUMBA_NUTPIE) == c.flops
    # a gradient priced on fewer flops: NumPyro's leapfrog is cheaper than the census's flops
    # say, on a machine whose arithmetic bounds it
    m = replace(_machine(), cpu_flops={"float32": 1e8, "float64": 1e8})
    as_census = replace(costmodel.JAX_CPU_SAMPLER, arithmetic_by_evaluation=False)

    def seconds(runtime):
        return costmodel.cpu_gradient_seconds(profile, m, "float64", runtime, 2).value

    assert seconds(costmodel.JAX_CPU_SAMPLER) < seconds(as_census)


def test_pymc_nuts_evaluates_each_draws_start_again_and_nutpie_does_not():
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numba_cpu import NumbaBackend

    profile, backend, m = profile_model(eight_schools()), NumbaBackend(), _machine()
    pymc = backend.estimate(Candidate("numba", "cpu", "float64", (("driver", "pymc"),)), profile, m)
    nutpie = backend.estimate(Candidate("numba", "cpu", "float64", (("driver", "nutpie"),)),
                              profile, m)
    assert pymc.draw_start_gradients.value == 1.0 and nutpie.draw_start_gradients.value == 0.0
    assert pymc.gradients_per_chain(100) == pytest.approx(
        100 * (pymc.gradients_per_draw.value + 1) + pymc.extra_gradients.value)


def test_modelled_leapfrogs_per_draw_follow_the_fitted_fourth_root():
    # nutpie's marginal leapfrogs per draw measured on the zoo (docs/results/fit-tuning-cpu.jsonl)
    for n_free, seen in [(3, 4.7), (66, 10.0), (612, 15.6), (5522, 29.6)]:
        profile = profile_model(eight_schools())
        profile.n_free = n_free
        assert costmodel.nuts_gradients_per_draw(profile).value == pytest.approx(seen, rel=0.25)


def test_nuts_implementations_differ_in_trees_not_in_effective_draws_per_gradient():
    from pymc_accel.backends.numba_cpu import NumbaBackend
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend

    profile, m = profile_model(eight_schools()), _machine()
    numba, numpyro = NumbaBackend(), JaxNutsBackend()
    estimates = {
        "nutpie": numba.estimate(Candidate("numba", "cpu", "float64", (("driver", "nutpie"),)),
                                 profile, m),
        "pymc": numba.estimate(Candidate("numba", "cpu", "float64", (("driver", "pymc"),)),
                               profile, m),
        "stan": numpyro.estimate(Candidate("numpyro", "cpu", "float64",
                                           (("chain_method", "parallel"),)), profile, m),
    }
    reference = costmodel.nuts_gradients_per_draw(profile).value
    for adaptation, est in estimates.items():
        scale = costmodel.NUTS_TRAJECTORY_SCALE[adaptation]
        assert est.gradients_per_draw.value == pytest.approx(reference * scale)
        # longer trees buy more effective draws, as many as the adaptation's gradients buy
        per_gradient = costmodel.NUTS_GRADIENT_EFFICIENCY[adaptation]
        assert est.relative_efficiency.value / est.gradients_per_draw.value == pytest.approx(
            per_gradient / reference)
    assert estimates["nutpie"].relative_efficiency.value == 1.0
    assert 1.0 < costmodel.NUTS_TRAJECTORY_SCALE["pymc"] < costmodel.NUTS_TRAJECTORY_SCALE["stan"]
    # Stan's adaptation's longer trees buy less than nutpie's per gradient (regret runs: 0.84)
    assert costmodel.NUTS_GRADIENT_EFFICIENCY["stan"] < costmodel.NUTS_GRADIENT_EFFICIENCY["pymc"]


def test_every_nuts_gets_nutpies_trees_on_a_centred_hierarchy():
    from dataclasses import replace

    profile = replace(profile_model(eight_schools()), centred_hierarchies=["x"])
    for adaptation in costmodel.NUTS_TRAJECTORY_SCALE:
        fields = costmodel.nuts_trajectory(profile, adaptation)
        assert fields["trajectory_scale"] == 1.0
        assert fields["relative_efficiency"].value == 1.0
        assert fields["gradients_per_draw"] == costmodel.nuts_gradients_per_draw(profile)


def test_a_correlated_posterior_lengthens_each_nuts_trees_by_its_adaptation():
    """Above the knee, the spread of the posterior's correlation scales lengthens the priced
    trees by (spread / knee)^c, c by adaptation;
    the effective draws a draw are kept (the longer trees are priced as gradients only)."""
    from dataclasses import replace

    profile = profile_model(eight_schools())
    knee = costmodel.CONDITIONING_KNEE
    for adaptation, c in costmodel.CONDITIONING_EXPONENT.items():
        plain = costmodel.nuts_trajectory(profile, adaptation)
        for cond, factor in ((None, 1.0), (knee / 2, 1.0), (knee, 1.0),
                             (100 * knee, 100.0 ** c)):
            at = replace(profile, posterior_conditioning=cond)
            assert costmodel.conditioning_factor(at, adaptation) == pytest.approx(factor)
            fields = costmodel.nuts_trajectory(at, adaptation)
            assert fields["gradients_per_draw"].value == pytest.approx(
                plain["gradients_per_draw"].value * factor)
            assert fields["relative_efficiency"] == plain["relative_efficiency"]
        assert f"posterior conditioning {100 * knee:.3g}" in costmodel.nuts_trajectory(
            replace(profile, posterior_conditioning=100 * knee), adaptation
        )["gradients_per_draw"].note
    # a centred hierarchy's mode is its funnel's neck: no longer trees priced from it
    centred = replace(profile, centred_hierarchies=["x"], posterior_conditioning=1e6)
    assert costmodel.conditioning_factor(centred, "stan") == 1.0
    # NumPyro's and PyMC's adaptations lengthen theirs more than nutpie's (the fit's order)
    e = costmodel.CONDITIONING_EXPONENT
    assert e["nutpie"] < e["pymc"] < e["stan"]
    # at most NUTS's 1,023 leapfrogs (tree depth 10)
    assert costmodel.nuts_trajectory(replace(profile, posterior_conditioning=1e300), "stan")[
        "gradients_per_draw"].value == 1023.0


def test_longer_trees_share_fixed_costs_over_more_effective_draws():
    from pymc_accel.backend import Estimate, Figure

    def nuts(fixed, steps, efficiency):
        return Estimate(seconds_per_gradient=Figure(1e-4), gradients_per_draw=Figure(steps),
                        fixed_seconds=Figure(fixed), relative_efficiency=Figure(efficiency))

    # equal gradient cost: 4 s of compile against 1.4 s; the second's trees 1.8x longer
    short, long = nuts(4.0, 15.0, 1.0), nuts(1.4, 27.0, 1.8)
    assert short.total_seconds(1000, 2) < long.total_seconds(1000, 2) * 1.5
    assert (long.seconds_per_effective_draw(1000, 500, 2)
            < short.seconds_per_effective_draw(1000, 500, 2))
    # with no fixed costs, trees' length does not change the cost of an effective draw
    assert nuts(0.0, 27.0, 1.8).seconds_per_effective_draw(1000, 500, 2) == pytest.approx(
        nuts(0.0, 15.0, 1.0).seconds_per_effective_draw(1000, 500, 2))


def test_dense_linear_algebra_runs_below_matmul_speed_and_slower_under_jax_than_numba():
    profile, m = profile_model(_marginal_gp(200)), _machine()
    dense = profile.census.flops_by_category["dense_linalg"]
    at_matmul_speed = dense / m.cpu_matmul_flops["float64"]
    numba = costmodel._cpu_roofline(profile, m, "float64", costmodel.NUMBA_PYMC, 1)
    jax = costmodel._cpu_roofline(profile, m, "float64", costmodel.JAX_CPU, 1)
    assert numba >= at_matmul_speed / costmodel.NUMBA_DENSE_EFFICIENCY
    assert jax > numba


def test_a_timed_xla_gradient_is_shared_by_the_chains_side_by_side_and_numbas_is_not():
    profile, m = profile_model(eight_schools()), _machine()
    kernel = 1e-3
    jax = costmodel.measured_cpu_gradient_seconds(kernel, profile, m, "float64",
                                                  costmodel.JAX_CPU, parallel_chains=2)
    numba = costmodel.measured_cpu_gradient_seconds(kernel, profile, m, "float64",
                                                    costmodel.NUMBA_NUTPIE, parallel_chains=2)
    assert jax.value >= 2 * kernel
    assert numba.value < 1.5 * kernel


def test_kernels_cost_work_of_their_own_and_fused_elementwise_ones_do_not_under_numba():
    from tests.models import scan_model

    profile, m = profile_model(scan_model(100)), _machine()
    c = profile.census
    assert c.kernels_by_category["scan"] > 100  # the step's kernels, once per step
    assert sum(c.kernels_by_category.values()) == c.kernels
    no_kernel_work = replace(costmodel.NUMBA_PYMC, per_kernel_seconds=0.0)
    base = costmodel._cpu_roofline(profile, m, "float64", no_kernel_work, 1)
    with_kernels = costmodel._cpu_roofline(profile, m, "float64", costmodel.NUMBA_PYMC, 1)
    counted = c.kernels - c.kernels_by_category["elementwise"]
    scale = costmodel._machine_scale(m)
    assert with_kernels - base == pytest.approx(counted * costmodel.NUMBA_KERNEL_SECONDS * scale)
    jax_base = costmodel._cpu_roofline(profile, m, "float64",
                                       replace(costmodel.JAX_CPU, per_kernel_seconds=0.0), 1)
    jax = costmodel._cpu_roofline(profile, m, "float64", costmodel.JAX_CPU, 1)
    assert jax - jax_base == pytest.approx(c.kernels * costmodel.JAX_CPU_KERNEL_SECONDS * scale)


def test_a_scans_steps_add_launches_but_no_compiled_code():
    """A Scan's step is compiled (or traced) once and launched once a step: compile and
    start-up figures follow the compiled kernels, per-gradient ones every launch. Priced by
    every launch, a GARCH(1, 1) model's 299 steps (2,348 kernels, 262 compiled) put NumPyro's
    fixed seconds at 3.2x its runs' whole wall time, and auto chose nutpie at a regret of 5.6."""
    from tests.models import scan_model

    short, long = profile_model(scan_model(10)), profile_model(scan_model(200))
    assert long.census.kernels > short.census.kernels + 150
    assert long.census.compiled_kernels == short.census.compiled_kernels
    assert short.census.compiled_kernels < short.census.kernels
    assert long.summary()["compiled kernels"] == long.census.compiled_kernels  # in explain()
    assert "compiled kernels" not in profile_model(eight_schools()).summary()  # no Scan
    figures = [
        lambda p: costmodel.compile_seconds(p, costmodel.JAX_CPU_SAMPLER).value,
        lambda p: costmodel.cold_compile_seconds(p, costmodel.JAX_CPU_SAMPLER).value,
        lambda p: costmodel.cold_compile_seconds(p, costmodel.NUMBA_NUTPIE).value,
        lambda p: costmodel.gpu_cold_compile_seconds(p).value,
        lambda p: costmodel.gradient_compile_seconds(p, costmodel.JAX_CPU),
    ]
    for figure in figures:
        assert figure(long) == pytest.approx(figure(short))
    m = _machine()  # a gradient launches the step's kernels once a step
    assert (costmodel.cpu_gradient_seconds(long, m, "float64", costmodel.NUMBA_PYMC).value
            > costmodel.cpu_gradient_seconds(short, m, "float64", costmodel.NUMBA_PYMC).value)


def test_float32_streams_no_faster_than_float64_under_xla_on_the_cpu_but_does_under_numba():
    profile = profile_model(hierarchical_logistic(2000, 100, 5).model)
    m = _machine()
    jax32 = costmodel._cpu_roofline(profile, m, "float32", costmodel.JAX_CPU, 1)
    jax64 = costmodel._cpu_roofline(profile, m, "float64", costmodel.JAX_CPU, 1)
    assert jax32 == pytest.approx(jax64)  # no dense linear algebra here
    numba32 = costmodel._cpu_roofline(profile, m, "float32", costmodel.NUMBA_PYMC, 1)
    numba64 = costmodel._cpu_roofline(profile, m, "float64", costmodel.NUMBA_PYMC, 1)
    assert numba32 < numba64


def test_numpyros_compiled_sampler_pays_no_kernel_dispatch_and_its_chains_do_not_take_turns():
    """Timed at two run lengths, NumPyro's leapfrog cost 18-118 µs where a standalone jitted
    gradient's kernel dispatch and a shared thread pool modelled 201-614 µs. Its chains' dense
    linear algebra runs in one BLAS thread each (backends.blas_threads): the GP's gradient took
    2.1 ms on each of two devices and 2.0 ms on one (6.2 ms each when they took turns)."""
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from tests.models import scan_model

    m = _machine()
    scan = profile_model(scan_model(100))
    sampler = costmodel.JAX_CPU_SAMPLER
    one = costmodel._cpu_roofline(scan, m, "float64", sampler, 1)
    assert costmodel._cpu_roofline(scan, m, "float64", sampler, 2) == pytest.approx(one)
    assert one < costmodel._cpu_roofline(scan, m, "float64", costmodel.JAX_CPU, 1) / 2

    dense = profile_model(_marginal_gp(100))
    alone = costmodel._cpu_roofline(dense, m, "float64", sampler, 1)
    dense_seconds = costmodel.compute_bound_dense_flops(dense) / (
        sampler.dense_efficiency * m.cpu_matmul_flops["float64"])
    assert dense_seconds > alone / 2  # the GP's gradient is mostly its dense work
    assert costmodel._cpu_roofline(dense, m, "float64", sampler, 2) == pytest.approx(alone)

    # NumPyro's CPU candidates are costed with it
    candidate = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    est = JaxNutsBackend().estimate(candidate, scan, m)
    assert est.fixed_seconds == costmodel.compile_seconds(scan, sampler)
    assert est.seconds_per_gradient.value == pytest.approx(costmodel.cpu_gradient_seconds(
        scan, m, "float64", sampler, parallel_chains=est.chain_parallelism).value)


def test_numpyros_gradient_is_timed_in_a_compiled_loop_with_its_chains_side_by_side():
    """Measured mode times the gradient of a sampler compiled whole (NumPyro's) inside one
    compiled loop with the run's chains side by side, and adds the modelled driver: no dispatch
    is modelled and taken off. A runtime that calls its gradient from outside XLA keeps the
    standalone call's timing (threaded: the chains take turns)."""
    from dataclasses import replace as dc_replace

    from pymc_accel.backends import _measure
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from tests.models import scan_model

    m = _machine()
    profile = profile_model(scan_model(100))
    candidate = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    modelled = JaxNutsBackend().estimate(candidate, profile, m)

    class Timed:  # a model whose gradients were timed already: 1 ms a call, 0.3 ms in the loop
        pass

    model, kernel, in_loop = Timed(), 1e-3, 3e-4
    _measure._store(model, ("jax", "cpu", "float64"), (0.5, kernel, 10))
    _measure._store(model, ("jax-loop", "cpu", "float64", 2), (0.5, in_loop, 1000, 2))
    standalone = _measure.jax_measure(candidate, model, profile, m, 5.0, modelled, 2)
    sampler = _measure.jax_measure(candidate, model, profile, m, 5.0, modelled, 2,
                                   runtime=costmodel.JAX_CPU_SAMPLER)
    driver = costmodel.driver_seconds(profile, m, costmodel.JAX_CPU_SAMPLER)
    assert standalone.seconds_per_gradient.value >= 2 * kernel  # threaded: chains take turns
    assert sampler.seconds_per_gradient.value == pytest.approx(in_loop + driver)
    assert "compiled loop" in sampler.seconds_per_gradient.note
    assert dc_replace(sampler, seconds_per_gradient=modelled.seconds_per_gradient) == modelled


def test_a_runtimes_float32_arithmetic_factor_divides_its_arithmetic_only():
    """``float32_flops_factor`` (bench/fit_float32_compute.py's knob) speeds up a float32
    gradient's arithmetic by that factor where float32 is not a full gain; NumPyro's sampler
    runs its float32 arithmetic 1.3x float64's (costmodel.JAX_CPU_SAMPLER_FLOAT32_FLOPS_FACTOR,
    fitted on the recorded runs of both precisions)."""
    from dataclasses import replace as dc_replace

    from pymc_accel.models import hierarchical_logistic

    sampler = costmodel.JAX_CPU_SAMPLER
    assert sampler.float32_flops_factor == costmodel.JAX_CPU_SAMPLER_FLOAT32_FLOPS_FACTOR == 1.3
    assert not sampler.float32_gain
    # its transcendental functions apart (the next test): one factor for all of it here
    sampler = dc_replace(sampler, float32_transcendental_factor=None)
    # bandwidth to spare: the gradient is its arithmetic
    m = _machine(cpu_bandwidth={"float32": 1e13, "float64": 1e13})
    profile = profile_model(hierarchical_logistic(2000, 20, 50).model)
    f64 = costmodel._cpu_roofline(profile, m, "float64", sampler, 1)
    assert f64 / costmodel._cpu_roofline(profile, m, "float32", sampler, 1) == pytest.approx(1.3)
    flat = dc_replace(sampler, float32_flops_factor=1.0)
    assert costmodel._cpu_roofline(profile, m, "float64", flat, 1) == pytest.approx(f64)
    assert costmodel._cpu_roofline(profile, m, "float32", flat, 1) == pytest.approx(f64)
    # a runtime with the full float32 gain (numba's) is not divided again
    full = dc_replace(sampler, float32_gain=True)
    assert costmodel._cpu_roofline(profile, m, "float32", full, 1) == pytest.approx(
        costmodel._cpu_roofline(profile, m, "float32",
                                dc_replace(full, float32_flops_factor=5.0), 1))


def test_numpyros_float32_transcendental_functions_gain_by_their_evaluations_not_their_names():
    """NumPyro's float32 leapfrog ran 1.55x-2.45x faster than float64's on models with
    softplus, sigmoid or log-gamma terms and under 1x on the GLMs: its transcendental functions'
    evaluations run at 2.5x float64's rate in float32 and the rest at 1.3x
    (bench/fit_float32_compute.py --transcendental). A non-centred Normal group model, whose
    census charges its squares as transcendental flops but evaluates no such function, gains
    the 1.3x of plain arithmetic only."""
    import pymc as pm

    from pymc_accel.models import hierarchical_logistic

    sampler = costmodel.JAX_CPU_SAMPLER
    assert sampler.float32_transcendental_factor == 2.5
    m = _machine(cpu_bandwidth={"float32": 1e13, "float64": 1e13})  # arithmetic decides

    def gain(profile):
        return (costmodel._cpu_roofline(profile, m, "float64", sampler, 1)
                / costmodel._cpu_roofline(profile, m, "float32", sampler, 1))

    logistic = profile_model(hierarchical_logistic(2000, 20, 2).model)
    c = logistic.census
    share = min(1.0, costmodel.TRANSCENDENTAL_FLOPS * c.transcendentals
                / (costmodel.arithmetic_flops(logistic, sampler)
                   - c.flops_by_category["dense_linalg"]))
    assert 0.2 < share < 1.0  # softplus and sigmoid on every row
    assert gain(logistic) == pytest.approx(1 / ((1 - share) / 1.3 + share / 2.5))
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 50, 1000)
    with pm.Model() as groups:
        mu = pm.Normal("mu", 0, 1)
        sd = pm.HalfNormal("sd", 1)
        z = pm.Normal("z", 0, 1, shape=50)
        pm.Normal("y", mu + sd * z[idx], 1.0, observed=rng.normal(size=1000))
    normal = profile_model(groups)
    assert normal.census.transcendental_flops > 0.2 * normal.census.flops  # its squares
    assert gain(normal) == pytest.approx(1.3, rel=0.01)


def test_measured_mode_prices_numpyros_float32_from_its_float64_gradient():
    """A float32 JAX gradient timed alone on the CPU is no faster than float64's, though
    NumPyro's two chains run faster in float32 (halved bytes): measured mode takes the float64
    timing and the sampler's modelled float32/float64 ratio, and times nothing in float32."""
    from pymc_accel.backends import _measure
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.models import hierarchical_logistic

    m = _machine()
    profile = profile_model(hierarchical_logistic(2000, 20, 50).model)
    f64 = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    f32 = Candidate("numpyro", "cpu", "float32", (("chain_method", "parallel"),))
    sampler = costmodel.JAX_CPU_SAMPLER

    class Timed:  # a model whose float64 gradient was timed already: 1 ms a call
        pass

    model = Timed()
    _measure._store(model, ("jax-loop", "cpu", "float64", 2), (0.5, 1e-3, 10, 2))
    est64 = _measure.jax_measure(f64, model, profile, m, 5.0,
                                 JaxNutsBackend().estimate(f64, profile, m), 2, runtime=sampler)
    est32 = _measure.jax_measure(f32, model, profile, m, 5.0,
                                 JaxNutsBackend().estimate(f32, profile, m), 2, runtime=sampler)
    ratio = (costmodel.cpu_gradient_seconds(profile, m, "float32", sampler, 2).value
             / costmodel.cpu_gradient_seconds(profile, m, "float64", sampler, 2).value)
    assert ratio < 0.9  # data-heavy: float32's halved bytes tell
    assert est32.seconds_per_gradient.source == "measured"
    assert est32.seconds_per_gradient.value == pytest.approx(
        est64.seconds_per_gradient.value * ratio)
    assert "float64" in est32.seconds_per_gradient.note
    assert not any(key[2] == "float32" for key in _measure._TIMINGS[model])  # none in float32
    # a runtime without the bytes gain times float32 as it is (no float32 timing kept: budget out)
    assert _measure.jax_measure(f32, model, profile, m, 0.0,
                                JaxNutsBackend().estimate(f32, profile, m), 2,
                                runtime=costmodel.JAX_CPU) is None


def test_matrix_vector_products_take_the_time_of_their_bytes_not_the_dense_rate():
    """A GLM's X @ beta and X.T @ r are bound by memory: their bytes are streamed, and charging
    their flops at the dense rate too had NumPyro's Poisson GLM at 383 µs a leapfrog (84 run).
    A Cholesky is bound by arithmetic and keeps its dense rate."""
    import pymc as pm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 20))
    with pm.Model() as glm:
        b = pm.Normal("b", 0, 1, shape=20)
        pm.Poisson("y", pm.math.exp(pm.math.dot(X, b) / 5), observed=rng.poisson(2, 2000))
    profile = profile_model(glm)
    assert profile.census.flops_by_category["dense_linalg"] > 0
    assert costmodel.compute_bound_dense_flops(profile) == 0

    dense = profile_model(_marginal_gp(100))
    assert costmodel.compute_bound_dense_flops(dense) > 0.5 * (
        dense.census.flops_by_category["dense_linalg"])


def test_numba_prices_a_matrix_vector_product_as_a_blas_call_of_its_own():
    """Under numba, X @ b and X.T @ r are BLAS calls, not fused loops: their bytes stream at
    NUMBA_MATVEC_BANDWIDTH_FACTOR of NumPy's bandwidth and add to the rest of the gradient
    instead of hiding under its arithmetic (logistic_101: modelled 131 µs, ran 175 µs)."""
    import pymc as pm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 100))
    with pm.Model() as logistic:
        b = pm.Normal("b", 0, 1, shape=100)
        pm.Bernoulli("y", logit_p=pm.math.dot(X, b), observed=rng.binomial(1, 0.5, 3000))
    profile, m = profile_model(logistic), _machine()
    matvec = costmodel.memory_bound_dense_bytes(profile)
    assert matvec == pytest.approx(8.0 * 2 * (3000 * 100 + 3000 + 100))
    assert costmodel.memory_bound_dense_bytes(profile, "float32") == pytest.approx(matvec / 2)
    gp = profile_model(_marginal_gp(100)).census  # its Cholesky and solves are not counted
    every_op = sum(8.0 * sum(np.prod(s) for s in (*op.operands, op.output))
                   for op in gp.dense_linalg_operands)
    assert costmodel.memory_bound_dense_bytes(profile_model(_marginal_gp(100))) < every_op / 2

    runtime = costmodel.NUMBA_NUTPIE
    assert runtime.matvec_bandwidth_factor == costmodel.NUMBA_MATVEC_BANDWIDTH_FACTOR
    fused = replace(runtime, matvec_bandwidth_factor=0.0)  # the former pricing
    seconds = costmodel._cpu_roofline(profile, m, "float64", runtime, 1)
    expected = matvec / (runtime.matvec_bandwidth_factor * m.cpu_bandwidth["float64"])
    # the rest of the gradient: its matrix-vector products made free, their bytes out of it
    rest = costmodel._cpu_roofline(profile, m, "float64",
                                   replace(runtime, matvec_bandwidth_factor=1e12), 1)
    stream_of_rest = (profile.census.bytes - matvec) / (
        runtime.bandwidth_factor * m.cpu_bandwidth["float64"])
    assert rest >= stream_of_rest
    assert seconds == pytest.approx(rest + expected)
    assert seconds > costmodel._cpu_roofline(profile, m, "float64", fused, 1)
    # a runtime without the term (XLA's compiled sampler) streams them with the rest
    assert costmodel.JAX_CPU_SAMPLER.matvec_bandwidth_factor == 0.0


def test_a_sampler_compiled_whole_keeps_elementwise_intermediates_out_of_memory():
    profile, m = profile_model(hierarchical_logistic(2000, 100, 5).model), _machine()
    c = profile.census
    sampler = costmodel.JAX_CPU_SAMPLER
    streaming = replace(sampler, streams_elementwise=True, flops_factor=1e6)
    fused = replace(sampler, flops_factor=1e6)  # compute made free: the stream decides
    share = 1 - c.bytes_by_category["elementwise"] / c.bytes
    assert costmodel._cpu_roofline(profile, m, "float64", fused, 1) == pytest.approx(
        share * costmodel._cpu_roofline(profile, m, "float64", streaming, 1), rel=1e-3)
    assert not sampler.streams_elementwise and costmodel.NUMBA_NUTPIE.streams_elementwise


def test_numpyros_sampler_streams_half_the_bytes_in_float32_at_float64s_arithmetic():
    """NumPyro in float32 ran 1.2x-1.65x faster than in float64 on models with megabytes of
    data a gradient: float32 halves the sampler's bytes, and its arithmetic runs at the
    runtime's float32 factor of float64's rate, not twice it."""
    import pymc as pm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 100))
    with pm.Model() as logistic:
        b = pm.Normal("b", 0, 1, shape=100)
        pm.Bernoulli("y", logit_p=pm.math.dot(X, b), observed=rng.binomial(1, 0.5, 3000))
    profile = profile_model(logistic)
    sampler = costmodel.JAX_CPU_SAMPLER
    assert sampler.float32_bytes_gain and not sampler.float32_gain
    free_compute = replace(sampler, flops_factor=1e6)  # the stream decides
    single = costmodel._cpu_roofline(profile, _machine(), "float32", free_compute, 2)
    double = costmodel._cpu_roofline(profile, _machine(), "float64", free_compute, 2)
    assert single == pytest.approx(double / 2, rel=0.02)
    # where arithmetic decides, float32 gains the runtime's float32 factor only
    free_stream = replace(sampler, bandwidth_factor=1e6, float32_transcendental_factor=None)
    assert costmodel._cpu_roofline(profile, _machine(), "float32", free_stream, 2) == \
        pytest.approx(costmodel._cpu_roofline(profile, _machine(), "float64", free_stream, 2)
                      / sampler.float32_flops_factor)
    # a runtime without the gain streams float64's bytes in float32 too
    without = replace(free_compute, float32_bytes_gain=False)
    assert costmodel._cpu_roofline(profile, _machine(), "float32", without, 2) == \
        pytest.approx(double)


def test_numba_fixed_cost_follows_the_loop_ranks_it_compiles_not_the_kernel_count():
    import pymc as pm

    with pm.Model() as scalars:  # 15 scalar variables: many kernels, nothing loops over arrays
        xs = [pm.Normal(f"x{i}", 0, 1) for i in range(15)]
        pm.Normal("y", sum(xs), 1, observed=np.zeros(5))
    many = profile_model(scalars)
    nests = profile_model(hierarchical_logistic(300, 15, 2).model)  # loops over matrices
    assert many.census.kernels > nests.census.kernels
    # nutpie compiled 342 such kernels in 2.0 s and the seed model's 216 in 3.7-4.1 s
    assert (costmodel.compile_seconds(many, costmodel.NUMBA_NUTPIE).value
            < costmodel.compile_seconds(nests, costmodel.NUMBA_NUTPIE).value)
    for runtime in (costmodel.NUMBA_NUTPIE, costmodel.NUMBA_PYMC):
        fixed = costmodel.compile_seconds(many, runtime)
        assert "loop ranks" in fixed.note
        ranks = many.census.compiled_kernels_by_rank
        assert fixed.value == pytest.approx(runtime.compile_seconds + sum(
            w * ranks[r] for w, r in zip(runtime.compile_seconds_by_rank, ("0", "1", "2+"))))
    # a census without ranks (stored by an older release) charges every kernel as a vector loop
    old = replace(many, census=replace(many.census, compiled_kernels_by_rank={}))
    fallback = costmodel.compile_seconds(old, costmodel.NUMBA_NUTPIE)
    assert fallback.value == pytest.approx(
        costmodel.NUMBA_NUTPIE.compile_seconds
        + costmodel.NUMBA_NUTPIE.compile_seconds_per_kernel * many.census.kernels)
    # a runtime without rank figures (JAX, a plugin's) keeps the per-kernel form
    assert "per-kernel" in costmodel.compile_seconds(many, costmodel.JAX_CPU_SAMPLER).note


def test_numba_pays_for_each_transcendental_at_the_calibrated_exp_and_xla_as_flops():
    """numba evaluates exp and softplus element by element through libm (5.4 and 16.6 ns here)
    where 10 flops at its flop rate charged 1.3 ns: the logistic seed model's gradient was
    modelled at half what it took. XLA's runtimes keep their flop pricing."""
    # a bandwidth at which the data stream does not hide the compute (it races it)
    fast = {"float32": 1e12, "float64": 1e12}
    profile, m = profile_model(hierarchical_logistic(2000, 100, 5).model), _machine(
        cpu_bandwidth=fast)
    rows_in_exps = profile.census.transcendentals * 10.0 / m.cpu_flops["float64"]
    for runtime in (costmodel.NUMBA_NUTPIE, costmodel.NUMBA_PYMC):
        flops_only = replace(runtime, transcendental_factor=0.0)
        priced = costmodel._cpu_roofline(profile, m, "float64", runtime, 1)
        unpriced = costmodel._cpu_roofline(profile, m, "float64", flops_only, 1)
        assert priced > unpriced + 0.5 * rows_in_exps
    for runtime in (costmodel.JAX_CPU, costmodel.JAX_CPU_SAMPLER):
        assert runtime.transcendental_factor == 0.0


def test_start_up_pace_is_the_python_loop_against_the_fit_machines():
    """Fixed seconds are one core's start-up and compile work: on a machine whose Python loop
    ran at half the fit machine's time they ran at 0.51x-0.56x the model."""
    assert costmodel.start_up_pace(_machine()) == 1.0  # not timed (figures made by hand)
    half = _machine(cpu_python_seconds=costmodel.FIT_MACHINE_PYTHON_SECONDS / 2)
    assert costmodel.start_up_pace(half) == pytest.approx(0.5)
    low, high = costmodel.START_UP_PACE_BOUNDS
    assert costmodel.start_up_pace(_machine(cpu_python_seconds=1e-6)) == low
    assert costmodel.start_up_pace(_machine(cpu_python_seconds=100.0)) == high
    assert 0.01 < machine.python_loop_seconds(rounds=1) < 5.0


def test_a_cpu_candidates_modelled_start_up_runs_at_the_machines_pace():
    from pymc_accel.backend import Estimate, Figure

    half = _machine(cpu_python_seconds=costmodel.FIT_MACHINE_PYTHON_SECONDS / 2)
    est = Estimate(Figure(1e-4), Figure(10.0), Figure(2.0, "modelled", "fixed"),
                   first_use_seconds=Figure(4.0, "modelled", "first use"),
                   cold_compile_seconds=Figure(6.0, "modelled", "cold"))
    cpu = costmodel.at_start_up_pace(est, half, "cpu")
    assert (cpu.fixed_seconds.value, cpu.first_use_seconds.value,
            cpu.cold_compile_seconds.value) == pytest.approx((1.0, 2.0, 3.0))
    assert cpu.start_up_pace == pytest.approx(0.5) and "start-up pace" in cpu.fixed_seconds.note
    assert cpu.seconds_per_gradient == est.seconds_per_gradient
    # a GPU's first compile was fitted on the GPU's own host: kept
    gpu = costmodel.at_start_up_pace(est, half, "gpu")
    assert gpu.cold_compile_seconds == est.cold_compile_seconds
    assert gpu.fixed_seconds.value == pytest.approx(1.0)
    # measured and observed figures are this machine's already
    timed = replace(est, fixed_seconds=Figure(2.0, "measured"))
    assert costmodel.at_start_up_pace(timed, half, "cpu").fixed_seconds == timed.fixed_seconds
    assert costmodel.at_start_up_pace(est, _machine(), "cpu") is est


def test_the_selection_prices_start_up_at_the_machines_pace():
    from pymc_accel.registry import build_registry
    from pymc_accel.selection import select

    devices = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")
    profile = profile_model(eight_schools())

    def rows(m):
        report = select(profile=profile, registry=build_registry(autoload=False),
                        devices=devices, machine=m, draws=1000, tune=1000, chains=2)
        return {r.label: r for r in report.rows if r.total_seconds}

    fit, fast = rows(_machine()), rows(
        _machine(cpu_python_seconds=costmodel.FIT_MACHINE_PYTHON_SECONDS / 2))
    for label in fit:
        assert fast[label].fixed_seconds == pytest.approx(fit[label].fixed_seconds / 2)


def _matrix_exponentials(intervals: int):
    """A two-state rate matrix seen through ``pt.linalg.expm`` at ``intervals`` lengths."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model() as model:
        rate = pm.Gamma("rate", 2, 2, shape=2)
        q = pt.stack([pt.stack([-rate[0], rate[0]]), pt.stack([rate[1], -rate[1]])])
        pm.Potential("stays", sum(pt.log(pt.linalg.expm(q * (0.5 + i))[0, 0])
                                  for i in range(intervals)))
    return model


def test_jax_runtimes_price_each_matrix_exponential_as_the_program_xla_compiles(monkeypatch):
    """JAX lowers ``pt.linalg.expm`` to a program of its own (Pade approximants chosen by a
    switch, a loop of squarings): on a Markov chain seen at 32 intervals NumPyro's first run
    took 34 s where 2.6 s was modelled, and its leapfrog 248 µs against 5. Each
    ``Expm`` in the census is charged to the XLA runtimes' gradient, fixed seconds, first
    compile and measured mode's compile, and to the numba drivers' compiles."""
    from pymc_accel.backends._measure import fits

    profile = profile_model(_matrix_exponentials(4))
    assert costmodel.xla_program_ops(profile) == {"Expm": 8}  # each, and its gradient's
    machine_ = _machine()
    figures, op = {}, costmodel.XLA_PROGRAM_OPS["Expm"]
    for ops in ({}, dict(costmodel.XLA_PROGRAM_OPS)):
        monkeypatch.setattr(costmodel, "XLA_PROGRAM_OPS", ops)
        figures[bool(ops)] = {
            rt.name: (costmodel.cpu_gradient_seconds(profile, machine_, "float64", rt).value,
                      costmodel.compile_seconds(profile, rt).value,
                      costmodel.cold_compile_seconds(profile, rt).value,
                      costmodel.gradient_compile_seconds(profile, rt))
            for rt in (costmodel.JAX_CPU_SAMPLER, costmodel.JAX_CPU, costmodel.NUMBA_NUTPIE,
                       costmodel.NUMBA_PYMC)}
    assert min(op.leapfrog_seconds, op.cached_seconds, op.cold_seconds,
               op.gradient_compile_seconds) > 0
    added = {name: tuple(a - b for a, b in zip(figures[True][name], figures[False][name]))
             for name in figures[True]}
    leapfrog = 8 * op.leapfrog_seconds
    assert added["jax-cpu-sampler"] == pytest.approx(
        (leapfrog, 8 * op.cached_seconds, 8 * op.cold_seconds, 8 * op.gradient_compile_seconds))
    # DEER-MALA's runtime has no compile cache on disk: every run compiles the programs
    assert added["jax-cpu"] == pytest.approx(
        (leapfrog, 8 * (op.cached_seconds + op.cold_seconds), 0.0, 8 * op.gradient_compile_seconds))
    # numba: PyTensor's matrix exponential is a numba function per node, which nutpie
    # compiles again into its own function on every run and PyMC's driver loads from the cache
    for runtime in ("numba+nutpie", "numba+pymc"):
        cached, cold = costmodel.NUMBA_PROGRAM_OPS["Expm"][runtime]
        assert cold > 0
        assert added[runtime] == pytest.approx((0.0, 8 * cached, 8 * cold, 0.0))
    assert costmodel.NUMBA_PROGRAM_OPS["Expm"]["numba+nutpie"][0] > 0
    assert "8 Expm (JAX compiles each as a program of its own)" in costmodel.cold_compile_seconds(
        profile, costmodel.JAX_CPU_SAMPLER).note
    # measured mode leaves a gradient whose compile would take most of its 5 s to its model
    many = replace(profile, census=replace(profile.census, dense_linalg_operands=(
        profile.census.dense_linalg_operands * 8)))
    assert costmodel.xla_program_ops(many) == {"Expm": 64}
    assert not fits("jax", costmodel.gradient_compile_seconds(many, costmodel.JAX_CPU), 5.0)


def test_jax_runtimes_price_the_loops_jax_computes_the_incomplete_gamma_function_by(
        monkeypatch):
    """JAX computes the incomplete gamma function, and its derivative in the shape, by loops
    run to convergence over the whole batch: NumPyro's leapfrog on a 500-row Gaussian copula
    took 282 µs where 74 µs was priced. The XLA runtimes are charged the census's elements and
    loop iterations at the table's exps (at this machine's ``exp``), on the census of the
    gradient JAX takes; numba's runtimes are not, and keep PyTensor's gradient's census."""
    import pymc as pm

    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2, 0.5)
        pm.Censored("y", pm.Gamma.dist(alpha=alpha, beta=1.0), lower=None, upper=2.5,
                    observed=np.minimum(np.linspace(0.1, 4.0, 300), 2.5))
    profile = profile_model(model)
    table = costmodel.XLA_SERIES_EXP_EQUIVALENTS
    work = profile.census.series_evaluations
    assert work["igamma series"] > 300 and work["igamma_grad_a series"] > 300
    # float32's machine epsilon ends the loops sooner
    assert work["igamma series float32"] < work["igamma series"]
    machine_ = _machine()
    expected = {}
    for precision, suffix in (("float64", ""), ("float32", " float32")):
        exps = sum(work.get(key + suffix, work.get(key, 0.0)) * figure
                   for key, figure in table[precision].items())
        fixed = 300 * (table[precision]["GammaInc"] + table[precision]["GammaInc'0"])
        assert exps > fixed  # the loops on top of each element's fixed part
        expected[precision] = exps * 10 / machine_.cpu_flops[precision]
        assert costmodel.series_function_seconds(profile, machine_, precision) == (
            pytest.approx(expected[precision]))
    assert expected["float32"] < expected["float64"]
    figures = {}
    for priced in (False, True):
        monkeypatch.setattr(costmodel, "XLA_SERIES_EXP_EQUIVALENTS", table if priced else {})
        figures[priced] = {
            rt.name: costmodel.cpu_gradient_seconds(profile, machine_, "float64", rt).value
            for rt in (costmodel.JAX_CPU_SAMPLER, costmodel.JAX_CPU, costmodel.NUMBA_NUTPIE,
                       costmodel.NUMBA_PYMC)}
    for name in ("jax-cpu-sampler", "jax-cpu"):
        assert figures[True][name] - figures[False][name] == pytest.approx(expected["float64"])
    for name in ("numba+nutpie", "numba+pymc"):
        assert figures[True][name] == figures[False][name]
    # a machine twice as fast at its exp pays half
    fast = replace(machine_, cpu_flops={k: 2 * v for k, v in machine_.cpu_flops.items()})
    assert costmodel.series_function_seconds(profile, fast, "float64") == pytest.approx(
        expected["float64"] / 2)


def test_xla_runtimes_are_priced_on_the_gradient_jax_takes_not_pytensors():
    """PyTensor differentiates the incomplete gamma function in its shape through a scalar
    loop of dozens of ops an element; JAX through its own loops, priced apart. The XLA
    runtimes' gradient and compiles are priced on ``profile.xla_census``, numba's on
    ``profile.census``."""
    import pymc as pm

    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2, 0.5)
        pm.Censored("y", pm.Gamma.dist(alpha=alpha, beta=1.0), lower=None, upper=2.5,
                    observed=np.minimum(np.linspace(0.1, 4.0, 300), 2.5))
    profile = profile_model(model)
    assert profile.xla_census is not None
    assert profile.xla_census.flops < profile.census.flops / 2
    without = replace(profile, xla_census=None)
    machine_ = _machine()
    for rt in (costmodel.JAX_CPU_SAMPLER, costmodel.JAX_CPU):
        assert (costmodel.cpu_gradient_seconds(profile, machine_, "float64", rt).value
                < costmodel.cpu_gradient_seconds(without, machine_, "float64", rt).value)
        assert (costmodel.compile_seconds(profile, rt).value
                < costmodel.compile_seconds(without, rt).value)
    for rt in (costmodel.NUMBA_NUTPIE, costmodel.NUMBA_PYMC):
        assert (costmodel.cpu_gradient_seconds(profile, machine_, "float64", rt).value
                == costmodel.cpu_gradient_seconds(without, machine_, "float64", rt).value)
    assert costmodel.as_run_by(profile, costmodel.NUMBA_PYMC) is profile
    assert costmodel.as_run_by(profile).census is profile.xla_census  # a GPU runs XLA
    # a model without such functions has one census
    assert profile_model(eight_schools()).xla_census is None


def test_each_incomplete_gamma_node_is_charged_the_programs_xla_compiles_for_it(monkeypatch):
    """Each node of ``gammainc`` is while loops XLA compiles on their own: on interval-censored
    waiting times with 8 nodes NumPyro's first run took 13.9 s beyond what its kernels charge.
    The XLA runtimes' fixed seconds, first compile and measured mode's compile are charged per
    node; the memory maps a run needs are not (fitted on the matrix exponential only)."""
    import pymc as pm
    import pytensor.tensor as pt

    from pymc_accel import memory_maps

    data = np.linspace(0.5, 6.0, 50)
    with pm.Model() as model:
        shape = pm.Gamma("shape", 2, 1)
        rate = pm.Gamma("rate", 2, 1)
        p = pt.gammainc(shape, rate * (data + 1.0)) - pt.gammainc(shape, rate * data)
        pm.Potential("intervals", pt.log(p).sum())
    profile = profile_model(model)
    assert costmodel.xla_program_ops(profile) == {"igamma": 2}
    op = costmodel.XLA_PROGRAM_OPS["igamma"]
    assert op.leapfrog_seconds == 0.0  # priced by the element
    assert min(op.cached_seconds, op.cold_seconds, op.gradient_compile_seconds) > 0
    figures = {}
    for ops in ({}, dict(costmodel.XLA_PROGRAM_OPS)):
        monkeypatch.setattr(costmodel, "XLA_PROGRAM_OPS", ops)
        rt = costmodel.JAX_CPU_SAMPLER
        figures[bool(ops)] = (costmodel.compile_seconds(profile, rt).value,
                              costmodel.cold_compile_seconds(profile, rt).value,
                              costmodel.gradient_compile_seconds(profile, rt))
    added = tuple(a - b for a, b in zip(figures[True], figures[False]))
    assert added == pytest.approx(
        (2 * op.cached_seconds, 2 * op.cold_seconds, 2 * op.gradient_compile_seconds))
    assert memory_maps.maps_needed(profile, "numpyro") == 0


def test_a_first_compile_counts_the_kernels_compiled_not_the_derivative_written_out():
    """PyTensor writes the derivative of gammainc in the shape as its scalar graph made
    elementwise (about 217 kernels a node), which numba fuses back into a few loops: the
    interval model's first numba compile took 5.6-6.1 s where its whole census was charged
    29.5-31.3 s (docs/results/fit-cold-compile-series-cpu-2026-12-01.md)."""
    from tests.models import interval_gamma_model

    profile = profile_model(interval_gamma_model())
    assert profile.xla_census.kernels < profile.census.kernels / 2
    for runtime in (costmodel.NUMBA_PYMC, costmodel.NUMBA_NUTPIE):
        cold = costmodel.cold_compile_seconds(profile, runtime).value
        stand_in = (runtime.cold_seconds + runtime.cold_seconds_per_kernel
                    * profile.xla_census.compiled_kernels)
        assert cold == pytest.approx(stand_in)


@pytest.mark.parametrize(("free_shape", "passes"), [(True, 2.0), (False, 1.0)])
def test_the_float32_check_is_charged_twice_where_the_gradient_loops(free_shape, passes):
    """PyTensor writes ``gammainc``'s derivative in its shape as a scalar loop; on eight of nine
    such models the check failed as written and went on as compiled, a second pass its charge
    left out. The derivative in ``x`` alone is closed-form: one pass."""
    import pymc as pm
    import pytensor.tensor as pt

    x = np.linspace(0.5, 4.0, 50)
    with pm.Model() as model:
        k = pm.HalfNormal("k", 2.0) if free_shape else 2.0
        scale = pm.HalfNormal("scale", 1.0)
        pm.Potential("tail", pt.log(pt.gammainc(k, x / scale)).sum())
    profile = profile_model(model)
    one_pass = (costmodel.GUARD_SECONDS + costmodel.GUARD_SECONDS_PER_KERNEL
                * profile.census.kernels + costmodel.GUARD_SECONDS_PER_BYTE * profile.census.bytes)
    charged = costmodel.guard_seconds(profile)
    assert charged.value == pytest.approx(passes * one_pass)
    assert ("as written and as compiled" in charged.note) == free_shape
