"""Whole chains, window by window: by DEER or by sequential MALA, from the same randomness.

A chain of ``num_steps`` steps is cut into windows of ``window`` steps. Window ``w`` draws its
randomness from ``fold_in(rng_key, w)``, whichever method runs it, so a DEER chain and a
sequential chain started from the same key and point are the same chain (up to rounding, and to
DEER's stopping tolerance). Several chains: ``jax.vmap`` over keys and starting points
(:func:`build_sampler` does it).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Callable, Literal, NamedTuple

import jax
import jax.numpy as jnp

from pymc_accel.deer import mala
from pymc_accel.deer.solver import JacobianMode, StepInfo, build_step, solve_window

Array = jax.Array
Method = Literal["deer", "sequential"]


class ChainResult(NamedTuple):
    """Draws of one chain and what produced them.

    Attributes
    ----------
    positions : Array, shape (num_steps, d)
    info : StepInfo
        Per-step acceptance rate, decision, divergence, log density.
    newton_iterations : Array of int, shape (num_windows,)
        Newton iterations of each window (0 for sequential MALA).
    sequential_steps : Array of int, shape (num_windows,)
        Steps of each window run one after another (all of them for sequential MALA).
    """

    positions: Array
    info: StepInfo
    newton_iterations: Array
    sequential_steps: Array


def _window_keys(rng_key: Array, index: Array) -> tuple[Array, Array]:
    return tuple(jax.random.split(jax.random.fold_in(rng_key, index)))


def sample_chain(
    rng_key: Array,
    initial_position: Array,
    logdensity_fn: Callable[[Array], Array],
    *,
    num_steps: int,
    step_size: Array,
    inverse_mass: Array,
    window: int = 64,
    method: Method = "deer",
    jacobian: JacobianMode = "stoch_diag",
    hvp_fn: Callable[[Array, Array], Array] | None = None,
    **solver_options,
) -> ChainResult:
    """Sample one MALA chain of ``num_steps`` steps.

    Parameters
    ----------
    rng_key : jax.random key
    initial_position : Array, shape (d,)
    logdensity_fn : callable
        ``x -> log p(x)`` for flat ``x``.
    num_steps : int
        Steps to return; the last window is cut short when ``window`` does not divide it.
    step_size : Array, shape ()
    inverse_mass : Array, shape (d,)
        Diagonal preconditioner.
    window : int, default 64
        Steps solved together by DEER; also fixes how the randomness is drawn.
    method : {"deer", "sequential"}
        ``deer``: Newton over each window; ``sequential``: plain MALA, the reference.
    jacobian : {"full", "diag", "stoch_diag"}
        DEER's Jacobian mode (see :func:`pymc_accel.deer.solver.solve_window`).
    hvp_fn : callable, optional
        ``(x, v) -> H(x) v`` to use instead of JAX's forward-over-reverse.
    **solver_options
        ``num_probes``, ``damping``, ``jacobian_clip``, ``tol_abs``, ``tol_rel``,
        ``max_iterations`` of :func:`~pymc_accel.deer.solver.solve_window`.

    Returns
    -------
    ChainResult
    """
    num_windows = math.ceil(num_steps / window)
    dtype = initial_position.dtype
    dim = initial_position.shape[-1]
    logdensity_and_grad = mala.value_and_grad_fn(logdensity_fn, hvp_fn)

    if method == "deer":
        step = build_step(logdensity_and_grad, step_size, inverse_mass)

        def run_window(position, index):
            noise_key, probe_key = _window_keys(rng_key, index)
            noise, log_u = mala.draw_noise(noise_key, window, dim, dtype)
            trajectory, info, window_info = solve_window(
                step, position, noise, log_u, probe_key, jacobian=jacobian, **solver_options
            )
            return trajectory[-1], (trajectory, info, *window_info)

    elif method == "sequential":
        kernel = mala.build_kernel(logdensity_fn)

        def one_step(state, randomness):
            state, info = kernel(state, *randomness, step_size, inverse_mass)
            record = StepInfo(
                info.acceptance_rate, info.is_accepted, info.diverging, state.logdensity
            )
            return state, (state.position, record)

        def run_window(state, index):
            noise_key, _ = _window_keys(rng_key, index)
            noise, log_u = mala.draw_noise(noise_key, window, dim, dtype)
            state, (trajectory, info) = jax.lax.scan(one_step, state, (noise, log_u))
            return state, (trajectory, info, jnp.array(0), jnp.array(window))

    else:
        raise ValueError(f"method must be 'deer' or 'sequential', not {method!r}")

    start = (
        initial_position if method == "deer" else mala.init(initial_position, logdensity_fn)
    )
    _, (trajectories, info, iterations, seq_steps) = jax.lax.scan(
        run_window, start, jnp.arange(num_windows)
    )

    def flat(x):
        return x.reshape(num_windows * window, *x.shape[2:])[:num_steps]

    return ChainResult(flat(trajectories), jax.tree.map(flat, info), iterations, seq_steps)


def build_sampler(
    logdensity_fn: Callable[[Array], Array],
    *,
    num_steps: int,
    window: int = 64,
    method: Method = "deer",
    jacobian: JacobianMode = "stoch_diag",
    hvp_fn: Callable[[Array, Array], Array] | None = None,
    **solver_options,
) -> Callable[[Array, Array, Array, Array], ChainResult]:
    """A jitted sampler of several chains at once (``vmap`` over chains).

    Parameters
    ----------
    logdensity_fn : callable
        ``x -> log p(x)`` for flat ``x``.
    num_steps, window, method, jacobian, hvp_fn, **solver_options
        As for :func:`sample_chain`.

    Returns
    -------
    callable
        ``sampler(rng_keys, positions, step_sizes, inverse_masses) -> ChainResult`` with a
        leading chain axis on every argument and output.
    """
    one = partial(
        sample_chain,
        logdensity_fn=logdensity_fn,
        num_steps=num_steps,
        window=window,
        method=method,
        jacobian=jacobian,
        hvp_fn=hvp_fn,
        **solver_options,
    )

    def chains(keys, positions, step_sizes, inverse_masses):
        return jax.vmap(
            lambda k, p, s, m: one(k, p, step_size=s, inverse_mass=m)
        )(keys, positions, step_sizes, inverse_masses)

    return jax.jit(chains)
