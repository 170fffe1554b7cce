"""Metropolis-adjusted Langevin (MALA) with a diagonal preconditioner: the sequential reference.

BlackJAX-style: a :class:`MALAState`, :func:`init`, and :func:`build_kernel` returning a pure
``kernel(state, noise, log_uniform) -> (state, info)``. The randomness of a step is an argument
(a standard normal vector and the log of a uniform), not a key, so that DEER
(:mod:`pymc_accel.deer.solver`) can fix the randomness of a whole window up front and converge
to exactly this chain.

One MALA step from ``x`` with step size ``eps`` and inverse mass (diagonal covariance) ``M``::

    x' = x + eps**2 / 2 * M * grad log p(x) + eps * sqrt(M) * xi
    log a = log p(x') - log p(x) + log q(x | x') - log q(x' | x)
    accept when log u < log a

BlackJAX has a MALA kernel, but it draws its own randomness from a key and has no
preconditioner, and DEER needs the step as a deterministic function of given noise; hence this
small module.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

Array = jax.Array
#: ``logdensity_and_grad(x) -> (log p(x), grad log p(x))``
LogDensityAndGrad = Callable[[Array], tuple[Array, Array]]


class MALAState(NamedTuple):
    """State of a MALA chain.

    Attributes
    ----------
    position : Array, shape (d,)
        Current point, on the unconstrained scale.
    logdensity : Array, shape ()
        ``log p(position)``.
    logdensity_grad : Array, shape (d,)
        ``grad log p(position)``.
    """

    position: Array
    logdensity: Array
    logdensity_grad: Array


class MALAInfo(NamedTuple):
    """What one MALA step did.

    Attributes
    ----------
    acceptance_rate : Array, shape ()
        ``min(1, exp(log a))``, the Metropolis acceptance probability of the proposal.
    is_accepted : Array of bool, shape ()
        Whether the proposal was accepted.
    diverging : Array of bool, shape ()
        The proposal or its log density was not finite (it is then rejected).
    """

    acceptance_rate: Array
    is_accepted: Array
    diverging: Array


class Transition(NamedTuple):
    """A proposal and its Metropolis test, before the accept decision is applied."""

    proposal: Array  # the proposed point, replaced by the current one where not finite
    proposal_logdensity: Array
    proposal_grad: Array
    log_accept_ratio: Array  # -inf where the proposal is not finite
    diverging: Array


def value_and_grad_fn(
    logdensity_fn: Callable[[Array], Array],
    hvp_fn: Callable[[Array, Array], Array] | None = None,
) -> LogDensityAndGrad:
    """``x -> (log p(x), grad log p(x))``, optionally with a user-supplied Hessian-vector product.

    Parameters
    ----------
    logdensity_fn : callable
        ``x -> log p(x)`` for a flat position ``x``.
    hvp_fn : callable, optional
        ``(x, v) -> H(x) v``, the Hessian of ``log p`` at ``x`` times ``v``. When given, every
        forward-mode derivative of the gradient (the Jacobians DEER needs) uses it instead of
        JAX's forward-over-reverse differentiation.

    Returns
    -------
    callable
    """
    plain = jax.value_and_grad(logdensity_fn)
    if hvp_fn is None:
        return plain

    @jax.custom_jvp
    def with_hvp(x):
        return plain(x)

    @with_hvp.defjvp
    def _jvp(primals, tangents):
        (x,), (v,) = primals, tangents
        logp, grad = plain(x)
        return (logp, grad), (jnp.vdot(grad, v), hvp_fn(x, v))

    return with_hvp


def init(position: Array, logdensity_fn: Callable[[Array], Array]) -> MALAState:
    """Start a chain at ``position``.

    Parameters
    ----------
    position : Array, shape (d,)
    logdensity_fn : callable
        ``x -> log p(x)``.

    Returns
    -------
    MALAState
    """
    logp, grad = jax.value_and_grad(logdensity_fn)(position)
    return MALAState(position, logp, grad)


def draw_noise(rng_key: Array, num_steps: int, dim: int, dtype=None) -> tuple[Array, Array]:
    """The randomness of ``num_steps`` MALA steps: normals ``(num_steps, dim)`` and log-uniforms
    ``(num_steps,)``.

    Parameters
    ----------
    rng_key : jax.random key
    num_steps, dim : int
    dtype : dtype, optional
        Floating dtype of the chain (defaults to JAX's default float).

    Returns
    -------
    tuple of Array
    """
    dtype = dtype or jnp.zeros(()).dtype
    key_normal, key_uniform = jax.random.split(rng_key)
    normals = jax.random.normal(key_normal, (num_steps, dim), dtype)
    log_uniforms = jnp.log(jax.random.uniform(key_uniform, (num_steps,), dtype))
    return normals, log_uniforms


def _log_proposal_density(to, frm, grad_frm, step_size, inverse_mass):
    mean = frm + 0.5 * step_size**2 * inverse_mass * grad_frm
    return -0.5 * jnp.sum((to - mean) ** 2 / inverse_mass) / step_size**2


def transition(
    logdensity_and_grad: LogDensityAndGrad,
    position: Array,
    logdensity: Array,
    grad: Array,
    noise: Array,
    step_size: Array,
    inverse_mass: Array,
) -> Transition:
    """Propose from ``position`` with the given noise and compute the Metropolis log ratio.

    Shared by the sequential kernel and DEER so that both make exactly the same decision.

    Parameters
    ----------
    logdensity_and_grad : callable
        ``x -> (log p(x), grad log p(x))`` (see :func:`value_and_grad_fn`).
    position, logdensity, grad : Array
        The current point, its log density and gradient.
    noise : Array, shape (d,)
        Standard normal draw of this step.
    step_size : Array, shape ()
    inverse_mass : Array, shape (d,)
        Diagonal of the preconditioner (the posterior variance estimate).

    Returns
    -------
    Transition
    """
    mean = position + 0.5 * step_size**2 * inverse_mass * grad
    proposal = mean + step_size * jnp.sqrt(inverse_mass) * noise
    proposal_logp, proposal_grad = logdensity_and_grad(proposal)
    finite = (
        jnp.isfinite(proposal_logp)
        & jnp.all(jnp.isfinite(proposal))
        & jnp.all(jnp.isfinite(proposal_grad))
    )
    log_ratio = (
        proposal_logp
        - logdensity
        + _log_proposal_density(position, proposal, proposal_grad, step_size, inverse_mass)
        - _log_proposal_density(proposal, position, grad, step_size, inverse_mass)
    )
    log_ratio = jnp.where(finite & jnp.isfinite(log_ratio), log_ratio, -jnp.inf)
    return Transition(
        proposal=jnp.where(finite, proposal, position),
        proposal_logdensity=jnp.where(finite, proposal_logp, logdensity),
        proposal_grad=jnp.where(finite, proposal_grad, grad),
        log_accept_ratio=log_ratio,
        diverging=~finite,
    )


def acceptance_probability(log_accept_ratio: Array) -> Array:
    """``min(1, exp(log a))``, zero where ``log a`` is ``-inf``."""
    return jnp.exp(jnp.minimum(log_accept_ratio, 0.0))


def build_kernel(
    logdensity_fn: Callable[[Array], Array],
    hvp_fn: Callable[[Array, Array], Array] | None = None,
) -> Callable[..., tuple[MALAState, MALAInfo]]:
    """Build the sequential MALA kernel.

    Parameters
    ----------
    logdensity_fn : callable
        ``x -> log p(x)``.
    hvp_fn : callable, optional
        Unused by the sequential kernel; accepted so both samplers take the same arguments.

    Returns
    -------
    callable
        ``kernel(state, noise, log_uniform, step_size, inverse_mass) -> (MALAState, MALAInfo)``,
        pure and jit-, vmap- and scan-able.
    """
    del hvp_fn
    logdensity_and_grad = jax.value_and_grad(logdensity_fn)

    def kernel(state: MALAState, noise, log_uniform, step_size, inverse_mass):
        t = transition(
            logdensity_and_grad,
            state.position,
            state.logdensity,
            state.logdensity_grad,
            noise,
            step_size,
            inverse_mass,
        )
        accept = log_uniform < t.log_accept_ratio
        new_state = MALAState(
            jnp.where(accept, t.proposal, state.position),
            jnp.where(accept, t.proposal_logdensity, state.logdensity),
            jnp.where(accept, t.proposal_grad, state.logdensity_grad),
        )
        info = MALAInfo(acceptance_probability(t.log_accept_ratio), accept, t.diverging)
        return new_state, info

    return kernel
