"""A squared exponential kernel's gradient in JAX, wrong where XLA rounds a zero distance: a
standalone reproduction, JAX only.

The user sweep's latent Student-t process (``sweep_user_models.student_t_process``: PyMC's
``pm.gp.TP`` with an ``ExpQuad`` kernel over 25 inputs) ran NumPyro's chains with a gradient off
by a relative 8e3 to 3.4e4. This is its log density written out in JAX as PyTensor's
jaxification writes it, ``-2 x (x / l)' / l + |x / l|^2 + |x / l|^2'`` for the squared distance,
``jnp.where`` for PyMC's ``clip(sqd, 0, inf)``, then ``exp(-0.5 sqd) + 1e-6 I``, its Cholesky
factor ``L``, ``f = L w``, a normal likelihood of ``f`` and the Student-t term of ``w``. The
diagonal of the squared distance is zero only because its terms cancel; where XLA rounds one
copy of it a little below zero and another a little above, its derivative in the length scale
(exactly zero) is not, and the Cholesky factor of the near-singular kernel matrix carries that
into the gradient.

For each way of handing the position to the log density (``split``: ``lax.split``, as
``jax.flatten_util.ravel_pytree``'s unravel does; ``slice``: ``z[0]``, ``z[1]``, ``z[2:]``),
with the diagonal as written and held at an exact zero (``hold``: ``where(eye, 0, sqd)``, as
:mod:`pymc_accel.rewrites.coincident_distances` holds it), one JSON line: the derivative in
``log l`` at a point (``jax.jit(jax.grad(...))``, op by op under ``jax.disable_jit``, and a
central difference of the op-by-op log density, step 1e-4), and the largest difference, after
two fixed leapfrog steps (step 1e-3, momentum 0.1) in a ``jax.lax.fori_loop`` from two points,
of the final gradients under ``jax.jit`` and under ``jax.pmap`` (two CPU devices, NumPyro's
chains' layout on a CPU) from those under ``jax.jit(jax.vmap(...))``::

    JAX_PLATFORMS=cpu python bench/expquad_gradient_repro.py

Which programs round it the wrong way is the compiler's choice (and the machine's: this was
found on an AVX2 CPU, whose fused multiply-adds XLA uses).
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.scipy.special import gammaln  # noqa: E402

jax.config.update("jax_enable_x64", True)

X = np.linspace(0, 5, 25)[:, None]
Y = np.sin(X[:, 0]) + np.random.default_rng(0).normal(0, 0.3, 25)


def log_density(log_l, log_nu, w, hold: bool):
    """The Student-t process's log density (its priors left out) as jaxified."""
    ell = jnp.exp(log_l)
    scaled = X / ell
    norms = scaled.reshape(25) ** 2
    sqd = (-2 * X) * scaled.T / ell + norms.reshape(25, 1) + norms.reshape(1, 25)
    if hold:
        sqd = jnp.where(np.eye(25, dtype=bool), 0.0, sqd)
    sqd = jnp.where(sqd < np.float32(0), np.float32(0),
                    jnp.where(sqd > np.float32(np.inf), np.float32(np.inf), sqd))
    kernel = jnp.exp(-0.5 * sqd) + 1e-6 * np.eye(25)
    chol = jnp.tril(jax.lax.linalg.cholesky(kernel, symmetrize_input=False))
    logp = jnp.sum(-0.5 * (3.3333 * (Y - chol @ w)) ** 2)
    nu = jnp.exp(log_nu)
    return logp + jnp.sum(gammaln(0.5 * (1.0 + nu)) - 0.5 * jnp.log(nu) - gammaln(0.5 * nu)
                          - 0.5 * (1.0 + nu) * jnp.log1p(w ** 2 / nu))


def potential_of(position: str, hold: bool):
    """``-log p`` of one flat position, split or sliced into its three values."""
    def potential(z):
        if position == "split":
            log_l, log_nu, w = jax.lax.split(z, (1, 1, 25))
            return -log_density(log_l.reshape(()), log_nu.reshape(()), w, hold)
        return -log_density(z[0], z[1], z[2:], hold)
    return potential


def leapfrogs(gradient, z, steps: int = 2):
    def step(_, carry):
        z, p, g = carry
        p = p - 0.5e-3 * g
        z = z + 1e-3 * p
        g = gradient(z)
        return z, p - 0.5e-3 * g, g

    return jax.lax.fori_loop(0, steps, step, (z, jnp.full_like(z, 0.1), gradient(z)))[2]


def main() -> None:
    start = jnp.concatenate([jnp.array([np.log(2.0), np.log(8.0)]), jnp.zeros(25)])
    points = jnp.stack([start, start + 0.1])
    at = points[1]
    for position in ("split", "slice"):
        for hold in (False, True):
            potential = potential_of(position, hold)
            gradient = jax.grad(potential)
            step = np.zeros(27)
            step[0] = 1e-4
            with jax.disable_jit():
                eager = float(gradient(at)[0])
                difference = float((potential(at + step) - potential(at - step)) / 2e-4)
            mapped = jax.jit(jax.vmap(lambda z, g=gradient: leapfrogs(g, z)))(points)
            jitted = jnp.stack([jax.jit(lambda z, g=gradient: leapfrogs(g, z))(p)
                                for p in points])
            looped = jax.pmap(lambda z, g=gradient: leapfrogs(g, z))(points)
            print(json.dumps({
                "position": position, "hold": hold, "devices": len(jax.devices()),
                "dlogl_jit": float(jax.jit(gradient)(at)[0]), "dlogl_eager": eager,
                "dlogl_central_difference": difference,
                "loop_jit_vs_vmap": float(jnp.max(jnp.abs(jitted - mapped))),
                "loop_pmap_vs_vmap": float(jnp.max(jnp.abs(looped - mapped))),
            }), flush=True)


if __name__ == "__main__":
    main()
