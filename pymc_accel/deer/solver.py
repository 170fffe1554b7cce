"""DEER: solve a window of T MALA steps at once, by Newton's method over the whole trajectory.

With the randomness of the window fixed, step ``t`` is a deterministic map
``s_t = f_t(s_{t-1})`` (:func:`build_step`). Given a guess of the trajectory, every
``f_t(s_{t-1})`` and its Jacobian ``J_t`` are evaluated in parallel (``vmap`` over t) and the
linearised recurrence ``s_t = J_t s_{t-1} + (f_t(s_{t-1}) - J_t s_{t-1})`` is solved with
``jax.lax.associative_scan`` in depth O(log T). At the fixed point the trajectory *is* the
sequential chain. See ``shared/design/deer.md`` and Zoltowski et al., "Parallelizing MCMC Across
the Sequence Length" (NeurIPS 2025).

Written by hand because no maintained Python library implements DEER for MCMC; the scan is
JAX's own.
"""

from __future__ import annotations

from typing import Callable, Literal, NamedTuple

import jax
import jax.numpy as jnp

from pymc_accel.deer.mala import LogDensityAndGrad, acceptance_probability, transition

Array = jax.Array
JacobianMode = Literal["full", "diag", "stoch_diag"]
JACOBIAN_MODES: tuple[str, ...] = ("full", "diag", "stoch_diag")


class StepInfo(NamedTuple):
    """Per-step record of a window, the same whether DEER or sequential MALA produced it.

    Attributes
    ----------
    acceptance_rate : Array
        Metropolis acceptance probability of each step's proposal.
    is_accepted : Array of bool
    diverging : Array of bool
        Non-finite proposal (rejected).
    logdensity : Array
        Log density at each new state.
    """

    acceptance_rate: Array
    is_accepted: Array
    diverging: Array
    logdensity: Array


class WindowInfo(NamedTuple):
    """How DEER solved one window.

    Attributes
    ----------
    newton_iterations : Array of int
        Newton iterations run (each one evaluates all T steps in parallel).
    sequential_steps : Array of int
        Steps finished one after another because Newton stopped short (iteration cap reached
        or a non-finite iterate); 0 when Newton converged.
    """

    newton_iterations: Array
    sequential_steps: Array


@jax.custom_jvp
def accept_indicator(log_accept_ratio: Array, log_uniform: Array) -> Array:
    """``1.0`` where ``log u < log a`` else ``0.0``, with a straight-through derivative.

    The forward value is the exact Metropolis decision (so the fixed point is the sequential
    chain); the derivative is that of ``sigmoid(log a - log u)``, which gives Newton a useful
    direction where the true derivative is zero almost everywhere.
    """
    return (log_uniform < log_accept_ratio).astype(log_accept_ratio.dtype)


@accept_indicator.defjvp
def _accept_indicator_jvp(primals, tangents):
    log_ratio, log_uniform = primals
    d_ratio, d_uniform = tangents
    value = accept_indicator(log_ratio, log_uniform)
    sig = jax.nn.sigmoid(log_ratio - log_uniform)
    slope = sig * (1.0 - sig)
    # log a = -inf (a rejected non-finite proposal) has slope 0 and a meaningless tangent.
    tangent = jnp.where(slope > 0, slope * (d_ratio - d_uniform), 0.0)
    return value, tangent.astype(value.dtype)


def build_step(
    logdensity_and_grad: LogDensityAndGrad, step_size: Array, inverse_mass: Array
) -> Callable[[Array, Array, Array], tuple[Array, StepInfo]]:
    """The MALA step as a function of the previous position alone: ``f_t(s) -> (s_t, info)``.

    Parameters
    ----------
    logdensity_and_grad : callable
        ``x -> (log p(x), grad log p(x))``; see :func:`pymc_accel.deer.mala.value_and_grad_fn`.
    step_size : Array, shape ()
    inverse_mass : Array, shape (d,)

    Returns
    -------
    callable
        ``step(previous, noise, log_uniform) -> (position, StepInfo)``, differentiable in
        ``previous`` with the straight-through accept derivative.
    """

    def step(previous, noise, log_uniform):
        logp, grad = logdensity_and_grad(previous)
        t = transition(
            logdensity_and_grad, previous, logp, grad, noise, step_size, inverse_mass
        )
        accepted = accept_indicator(t.log_accept_ratio, log_uniform)
        # g * x' + (1 - g) * s with g exactly 0 or 1 is exactly x' or s: the same float as
        # the sequential kernel's where(accept, x', s).
        position = accepted * t.proposal + (1.0 - accepted) * previous
        is_accepted = accepted > 0.5
        info = StepInfo(
            acceptance_probability(t.log_accept_ratio),
            is_accepted,
            t.diverging,
            jnp.where(is_accepted, t.proposal_logdensity, logp),
        )
        return position, info

    return step


def _linearize(step, mode: str, num_probes: int):
    """``(previous, noise, log_u, key) -> (f(previous), A, info)`` with A the Jacobian (full)
    or its diagonal (diag: exact; stoch_diag: Hutchinson with Rademacher probes)."""

    def with_value(previous, noise, log_uniform):
        position, info = step(previous, noise, log_uniform)
        return position, (position, info)

    if mode in ("full", "diag"):

        def linearize(previous, noise, log_uniform, key):
            del key
            jac, (position, info) = jax.jacfwd(with_value, has_aux=True)(
                previous, noise, log_uniform
            )
            return position, (jac if mode == "full" else jnp.diagonal(jac)), info

        return linearize

    def linearize(previous, noise, log_uniform, key):
        probes = jax.random.rademacher(key, (num_probes, previous.shape[-1]), previous.dtype)

        def push(probe):
            return jax.jvp(
                lambda s: step(s, noise, log_uniform), (previous,), (probe,), has_aux=True
            )

        position, jz, info = jax.vmap(push, out_axes=(None, 0, None))(probes)
        return position, jnp.mean(probes * jz, axis=0), info

    return linearize


def _combine_diag(earlier, later):
    a1, b1 = earlier
    a2, b2 = later
    return a2 * a1, a2 * b1 + b2


def _combine_full(earlier, later):
    a1, b1 = earlier
    a2, b2 = later
    return a2 @ a1, jnp.einsum("...ij,...j->...i", a2, b1) + b2


def solve_linear_recurrence(a: Array, b: Array) -> Array:
    """Solve ``s_t = A_t s_{t-1} + b_t`` for t = 1..T with ``s_0 = 0``, in parallel.

    Parameters
    ----------
    a : Array, shape (T, d) or (T, d, d)
        Diagonal or dense transition of each step.
    b : Array, shape (T, d)

    Returns
    -------
    Array, shape (T, d)
        The trajectory ``s_1..s_T``.
    """
    combine = _combine_full if a.ndim == 3 else _combine_diag
    _, trajectory = jax.lax.associative_scan(combine, (a, b))
    return trajectory


def default_tolerance(dtype) -> float:
    """Newton's stopping tolerance (absolute and relative) for a floating dtype."""
    return 1e-9 if jnp.dtype(dtype) == jnp.float64 else 1e-5


def solve_window(
    step: Callable[[Array, Array, Array], tuple[Array, StepInfo]],
    initial_position: Array,
    noise: Array,
    log_uniforms: Array,
    probe_key: Array,
    *,
    jacobian: JacobianMode = "stoch_diag",
    num_probes: int = 1,
    damping: float = 0.0,
    jacobian_clip: float | None = 1.0,
    tol_abs: float | None = None,
    tol_rel: float | None = None,
    max_iterations: int | None = None,
    initial_guess: Array | None = None,
) -> tuple[Array, StepInfo, WindowInfo]:
    """Run the ``T = len(noise)`` steps of one window by DEER.

    Parameters
    ----------
    step : callable
        From :func:`build_step`.
    initial_position : Array, shape (d,)
        The state before the window.
    noise, log_uniforms : Array, shapes (T, d) and (T,)
        The window's fixed randomness (:func:`pymc_accel.deer.mala.draw_noise`).
    probe_key : jax.random key
        Randomness of the Hutchinson probes (``stoch_diag`` only); it changes how fast Newton
        converges, never what it converges to.
    jacobian : {"full", "diag", "stoch_diag"}
        ``full``: dense d x d Jacobians (small d). ``diag``: their exact diagonal (quasi-DEER).
        ``stoch_diag``: a Hutchinson estimate of the diagonal from ``num_probes`` Jacobian-vector
        products per step.
    num_probes : int, default 1
        Rademacher probes per step for ``stoch_diag``.
    damping : float in [0, 1), default 0.0
        The linearisation uses ``(1 - damping) * J``: smaller, more stable steps. Damping scales
        the Jacobian rather than blending iterates, so after k iterations the first k steps are
        still exact.
    jacobian_clip : float or None, default 1.0
        Clip diagonal Jacobian entries to ``[-clip, clip]`` (diagonal modes), so that products
        of many of them cannot blow up.
    tol_abs, tol_rel : float, optional
        Stop when ``max |s^(i+1) - s^(i)| <= tol_abs + tol_rel * max |s^(i+1)|``. Default
        :func:`default_tolerance` of the dtype.
    max_iterations : int, optional
        Cap on Newton iterations (default T, DEER's worst case). Steps not converged by then
        are finished sequentially, so the result is exact either way.
    initial_guess : Array, shape (T, d), optional
        Starting trajectory; default every step at ``initial_position``.

    Returns
    -------
    trajectory : Array, shape (T, d)
    info : StepInfo
        Per-step acceptance rate, decision, divergence and log density.
    window : WindowInfo
    """
    if jacobian not in JACOBIAN_MODES:
        raise ValueError(f"jacobian must be one of {JACOBIAN_MODES}, not {jacobian!r}")
    num_steps = noise.shape[0]
    dtype = initial_position.dtype
    tol_abs = default_tolerance(dtype) if tol_abs is None else tol_abs
    tol_rel = default_tolerance(dtype) if tol_rel is None else tol_rel
    max_iterations = num_steps if max_iterations is None else max_iterations
    linearize = jax.vmap(_linearize(step, jacobian, num_probes))

    def newton(trajectory, iteration):
        previous = jnp.concatenate([initial_position[None], trajectory[:-1]])
        keys = jax.random.split(jax.random.fold_in(probe_key, iteration), num_steps)
        values, a, info = linearize(previous, noise, log_uniforms, keys)
        a = (1.0 - damping) * a
        if jacobian != "full" and jacobian_clip is not None:
            a = jnp.clip(a, -jacobian_clip, jacobian_clip)
        shift = jnp.einsum("tij,tj->ti", a, previous) if a.ndim == 3 else a * previous
        # Step 1 is exact at every iteration: s_1 = f_1(s_0).
        a = a.at[0].set(0.0)
        b = (values - shift).at[0].set(values[0])
        return solve_linear_recurrence(a, b), info

    def moving(new, old):
        """Per step: did it move more than the tolerance in this iteration?"""
        tol = tol_abs + tol_rel * jnp.max(jnp.abs(new))
        return jnp.any(jnp.abs(new - old) > tol, axis=-1)

    start = (
        jnp.broadcast_to(initial_position, noise.shape).astype(dtype)
        if initial_guess is None
        else initial_guess
    )
    info_shape = jax.eval_shape(step, initial_position, noise[0], log_uniforms[0])[1]
    empty_info = jax.tree.map(lambda s: jnp.zeros((num_steps, *s.shape), s.dtype), info_shape)

    def cond(carry):
        iteration, _, _, done, _ = carry
        return (iteration < max_iterations) & ~done

    def body(carry):
        iteration, trajectory, info, _, exact = carry
        new, new_info = newton(trajectory, iteration)
        finite = jnp.all(jnp.isfinite(new))
        moved = moving(new, trajectory)
        first_moving = jnp.where(jnp.any(moved), jnp.argmax(moved), num_steps)
        # A non-finite iterate ends Newton; keep the last finite one, exact up to `exact`.
        trajectory = jnp.where(finite, new, trajectory)
        info = jax.tree.map(lambda n, o: jnp.where(finite, n, o), new_info, info)
        exact = jnp.where(finite, first_moving, exact)
        done = ~finite | (first_moving == num_steps)
        return iteration + 1, trajectory, info, done, exact

    iterations, trajectory, info, _, exact = jax.lax.while_loop(
        cond, body, (jnp.array(0), start, empty_info, jnp.array(False), jnp.array(0))
    )

    # Finish sequentially from the first step Newton had not pinned down (none when it
    # converged): the result is the sequential chain whatever Newton managed.
    def seq_cond(carry):
        return carry[0] < num_steps

    def seq_body(carry):
        t, trajectory, info = carry
        previous = jnp.where(t == 0, initial_position, trajectory[t - 1])
        position, step_info = step(previous, noise[t], log_uniforms[t])
        trajectory = trajectory.at[t].set(position)
        info = jax.tree.map(lambda all_, one: all_.at[t].set(one), info, step_info)
        return t + 1, trajectory, info

    _, trajectory, info = jax.lax.while_loop(seq_cond, seq_body, (exact, trajectory, info))
    return trajectory, info, WindowInfo(iterations, num_steps - exact)
