"""DEER's central promise: the DEER chain is the sequential MALA chain.

Same key, same kernel: positions agree to 1e-6 relative error in float64, for every Jacobian
mode, over chains spanning several windows (the last one cut short), when Newton needs many
iterations, when it is capped and the window is finished sequentially, and with a user HVP.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pymc_accel import deer
from tests.deer.targets import logistic_regression

jax.config.update("jax_enable_x64", True)

TARGET = logistic_regression(d=10, n=200)
NUM_STEPS = 200  # 7 windows of 32, the last one cut to 8 steps


@pytest.fixture(scope="module")
def kernel():
    """A tuned kernel and the point tuning ended at, shared by the exactness tests."""
    tuned = jax.jit(lambda k, x: deer.tune(k, x, TARGET.logdensity, 300))(
        jax.random.key(0), jnp.zeros(10)
    )
    return tuned.state.position, tuned.step_size, tuned.inverse_mass


def _run(kernel, *, chains=2, seed=1, num_steps=NUM_STEPS, step_scale=1.0, **options):
    position, step_size, inverse_mass = kernel
    sampler = deer.build_sampler(TARGET.logdensity, num_steps=num_steps, **options)
    return sampler(
        jax.random.split(jax.random.key(seed), chains),
        jnp.stack([position] * chains),
        jnp.full(chains, step_size * step_scale),
        jnp.stack([inverse_mass] * chains),
    )


def _relative_error(a, b):
    return float(jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(a)))


@pytest.mark.parametrize("jacobian", deer.JACOBIAN_MODES)
def test_deer_chain_equals_sequential_chain(kernel, jacobian):
    seq = _run(kernel, window=32, method="sequential")
    par = _run(kernel, window=32, method="deer", jacobian=jacobian)
    assert par.positions.shape == (2, NUM_STEPS, 10)
    assert _relative_error(seq.positions, par.positions) <= 1e-6
    np.testing.assert_array_equal(seq.info.is_accepted, par.info.is_accepted)
    np.testing.assert_allclose(seq.info.logdensity, par.info.logdensity, rtol=1e-6)
    np.testing.assert_allclose(seq.info.acceptance_rate, par.info.acceptance_rate, atol=1e-6)
    # Newton ran in every window, and it is not trivially one step per iteration
    assert par.newton_iterations.shape == (2, 7)
    assert int(par.newton_iterations.min()) >= 2
    # the chain moves: it is a sampler, not a fixed point at the start
    assert 0.2 < float(par.info.is_accepted.mean()) < 0.95


# The full Jacobian (the backend's choice on a CPU) in the default run; the other modes are
# exact at many iterations too, checked in the slow run (each compiles its own sampler, about
# 10 s on a 2-core machine; every mode's exactness over several windows is checked above).
@pytest.mark.parametrize("jacobian", [
    pytest.param(mode, marks=() if mode == "full" else pytest.mark.slow)
    for mode in deer.JACOBIAN_MODES])
def test_exact_when_newton_needs_many_iterations(kernel, jacobian):
    # Long windows and a step size twice the tuned one: many accept/reject flips to resolve.
    seq = _run(kernel, window=128, method="sequential", step_scale=2.0, num_steps=256)
    par = _run(kernel, window=128, jacobian=jacobian, step_scale=2.0, num_steps=256)
    assert int(par.newton_iterations.max()) >= 15
    assert _relative_error(seq.positions, par.positions) <= 1e-6


def test_capped_newton_finishes_the_window_sequentially(kernel):
    seq = _run(kernel, window=64, method="sequential")
    par = _run(kernel, window=64, jacobian="stoch_diag", max_iterations=3)
    assert int(par.newton_iterations.max()) == 3
    assert int(par.sequential_steps.min()) > 0  # the fallback ran in every window
    assert _relative_error(seq.positions, par.positions) <= 1e-6


def test_damping_keeps_the_fixed_point(kernel):
    seq = _run(kernel, window=32, method="sequential")
    par = _run(kernel, window=32, jacobian="diag", damping=0.5)
    assert _relative_error(seq.positions, par.positions) <= 1e-6


def test_user_hvp_is_used_and_exact(kernel):
    calls = []

    def hvp(beta, v):
        calls.append(1)  # counted when traced: proves DEER's Jacobians go through it
        return TARGET.hvp(beta, v)

    seq = _run(kernel, window=32, method="sequential")
    par = _run(kernel, window=32, jacobian="stoch_diag", hvp_fn=hvp)
    assert calls
    assert _relative_error(seq.positions, par.positions) <= 1e-6


def test_analytic_hvp_matches_autodiff():
    beta = jnp.linspace(-1, 1, 10)
    v = jnp.cos(jnp.arange(10.0))
    auto = jax.jvp(jax.grad(TARGET.logdensity), (beta,), (v,))[1]
    np.testing.assert_allclose(TARGET.hvp(beta, v), auto, rtol=1e-10)


@pytest.mark.parametrize("shape", [(50, 3), (50, 3, 3)])
def test_parallel_linear_recurrence_matches_a_loop(shape):
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.uniform(-0.9, 0.9, shape) / (shape[-1] if len(shape) == 3 else 1))
    b = jnp.asarray(rng.normal(size=shape[:2]))
    s, expected = jnp.zeros(shape[1]), []
    for t in range(shape[0]):
        s = (a[t] @ s if a.ndim == 3 else a[t] * s) + b[t]
        expected.append(s)
    np.testing.assert_allclose(deer.solve_linear_recurrence(a, b), np.stack(expected), rtol=1e-10)


def test_same_key_same_chain_other_key_other_chain(kernel):
    a = _run(kernel, window=32, seed=5)
    b = _run(kernel, window=32, seed=5)
    c = _run(kernel, window=32, seed=6)
    np.testing.assert_array_equal(a.positions, b.positions)
    assert not np.allclose(a.positions, c.positions)


def test_unknown_jacobian_mode_is_named():
    with pytest.raises(ValueError, match="jacobian must be one of"):
        _run((jnp.zeros(10), 0.1, jnp.ones(10)), window=8, num_steps=8, jacobian="dense")
