"""Tuning for MALA: step size by dual averaging, diagonal preconditioner from tuning draws.

Runs the sequential kernel (tuning changes the kernel at every step, which a DEER window cannot
absorb). Schedule, as Stan's windowed adaptation in miniature: the first 15% of the steps adapt
the step size only; two slow windows (15-40%, 40-85%) also estimate the posterior variance,
which becomes the preconditioner at the end of each window (and dual averaging restarts); the
last 15% adapt the step size for the final preconditioner. The dual-averaging and Welford
estimators are NumPyro's.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from numpyro.infer.hmc_util import dual_averaging, welford_covariance

from pymc_accel.deer import mala

Array = jax.Array

#: MALA's asymptotically optimal acceptance rate (Roberts & Rosenthal, 1998).
OPTIMAL_ACCEPTANCE = 0.574


class TuningResult(NamedTuple):
    """The tuned kernel and the end of the tuning run.

    Attributes
    ----------
    state : MALAState
        Where tuning ended: the start of sampling.
    step_size : Array, shape ()
    inverse_mass : Array, shape (d,)
    positions : Array, shape (num_steps, d)
        The tuning draws (warm-up).
    acceptance_rate, step_sizes : Array, shape (num_steps,)
        Per tuning step.
    """

    state: mala.MALAState
    step_size: Array
    inverse_mass: Array
    positions: Array
    acceptance_rate: Array
    step_sizes: Array


def initial_step_size(
    rng_key: Array,
    state: mala.MALAState,
    logdensity_fn: Callable[[Array], Array],
    inverse_mass: Array,
    target_acceptance: float = OPTIMAL_ACCEPTANCE,
    max_doublings: int = 40,
) -> Array:
    """A first step size: halve (or double) 1.0 until one step's acceptance crosses the target.

    Hoffman and Gelman's heuristic (NUTS paper, Algorithm 4) for a MALA step.
    """
    kernel = mala.build_kernel(logdensity_fn)
    noise, _ = mala.draw_noise(rng_key, 1, state.position.shape[-1], state.position.dtype)

    def accept(eps):
        _, info = kernel(state, noise[0], -jnp.inf, eps, inverse_mass)
        return info.acceptance_rate

    one = jnp.ones((), state.position.dtype)
    direction = jnp.where(accept(one) > target_acceptance, 2.0, 0.5).astype(one.dtype)

    def cond(carry):
        eps, i = carry
        a = accept(eps)
        crossed = jnp.where(direction > 1, a < target_acceptance, a > target_acceptance)
        return ~crossed & (i < max_doublings)

    eps, _ = jax.lax.while_loop(cond, lambda c: (c[0] * direction, c[1] + 1), (one, 0))
    return eps


def tune(
    rng_key: Array,
    initial_position: Array,
    logdensity_fn: Callable[[Array], Array],
    num_steps: int,
    *,
    target_acceptance: float = OPTIMAL_ACCEPTANCE,
    adapt_mass: bool = True,
) -> TuningResult:
    """Tune a MALA kernel's step size and diagonal preconditioner by running it.

    Parameters
    ----------
    rng_key : jax.random key
    initial_position : Array, shape (d,)
    logdensity_fn : callable
        ``x -> log p(x)``.
    num_steps : int
        Tuning steps (at least 1).
    target_acceptance : float, default 0.574
        Dual averaging's target acceptance rate.
    adapt_mass : bool, default True
        Estimate the diagonal preconditioner (needs ``num_steps >= 50``; otherwise identity).

    Returns
    -------
    TuningResult
    """
    dtype = initial_position.dtype
    dim = initial_position.shape[-1]
    kernel = mala.build_kernel(logdensity_fn)
    da_init, da_update = dual_averaging()
    wf_init, wf_update, wf_final = welford_covariance(diagonal=True)
    adapt_mass = adapt_mass and num_steps >= 50
    slow_starts = (int(0.15 * num_steps), int(0.40 * num_steps))
    slow_ends = (slow_starts[1], int(0.85 * num_steps))

    state = mala.init(initial_position, logdensity_fn)
    inverse_mass = jnp.ones(dim, dtype)
    init_key, run_key = jax.random.split(rng_key)
    eps0 = initial_step_size(init_key, state, logdensity_fn, inverse_mass, target_acceptance)

    def restart(eps):
        return da_init(jnp.log(10.0 * eps).astype(dtype))

    def one_step(carry, index):
        state, da_state, wf_state, inverse_mass = carry
        noise, log_u = mala.draw_noise(jax.random.fold_in(run_key, index), 1, dim, dtype)
        eps = jnp.exp(da_state[0]).astype(dtype)
        state, info = kernel(state, noise[0], log_u[0], eps, inverse_mass)
        da_state = da_update(target_acceptance - info.acceptance_rate, da_state)
        if adapt_mass:
            in_slow = (index >= slow_starts[0]) & (index < slow_ends[1])
            wf_state = jax.lax.cond(
                in_slow, lambda w: wf_update(state.position, w), lambda w: w, wf_state
            )
            window_end = (index == slow_ends[0] - 1) | (index == slow_ends[1] - 1)

            def new_window(args):
                wf_state, da_state, _ = args
                variance, _, _ = wf_final(wf_state, regularize=True)
                averaged = jnp.exp(da_state[1]).astype(dtype)
                return wf_init(dim), restart(averaged), variance.astype(dtype)

            wf_state, da_state, inverse_mass = jax.lax.cond(
                window_end, new_window, lambda a: a, (wf_state, da_state, inverse_mass)
            )
        return (state, da_state, wf_state, inverse_mass), (
            state.position,
            info.acceptance_rate,
            eps,
        )

    carry = (state, restart(eps0), wf_init(dim), inverse_mass)
    (state, da_state, _, inverse_mass), (positions, acceptance, step_sizes) = jax.lax.scan(
        one_step, carry, jnp.arange(num_steps)
    )
    step_size = jnp.exp(da_state[1]).astype(dtype)
    return TuningResult(state, step_size, inverse_mass, positions, acceptance, step_sizes)
