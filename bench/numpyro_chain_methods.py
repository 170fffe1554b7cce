"""NumPyro's own NUTS on a model's potential, chains laid out each way NumPyro lays them, and the
gradient each run's last state carries beside JAX's gradient at the same point compiled on its
own.

pymc-accel's gradient check (:mod:`pymc_accel.backends.last_gradients`) found the latent
Student-t process's NumPyro run carrying a gradient off by a relative 8,000 to 34,000 where
JAX's own compiled gradient at the same draws was right. This takes pymc-accel's sampling path
out of it: the potential is the run's jaxified log density
(:func:`pymc_accel.backends.run_logp.jaxified_logp`) on one flat position, sampled by NumPyro's
``MCMC`` directly, two chains from the model's initial point jittered by U(-0.5, 0.5), with
``chain_method`` ``parallel`` (``pmap`` over XLA's CPU devices, pymc-accel's layout on a CPU),
``vectorized`` and ``sequential``, for each of ``--seeds``. One JSON line per run: per chain,
the last state's gradient against ``jax.jit(jax.grad(potential))`` there (``|g - g_ref| /
max(|g_ref|, 1)``) and the adapted step size::

    JAX_PLATFORMS=cpu python bench/numpyro_chain_methods.py --model student_t_process \\
        [--seeds 3] [--draws 100] [--tune 100]

A model name is one of ``compare_evaluator.models()``. With ``--leapfrogs 1,2,5`` it leaves
NumPyro out too: from two points (the initial point, and it plus 0.1), a fixed-step leapfrog
integration of the potential (step 1e-3, momentum 0.1) in a ``jax.lax.fori_loop`` of that many
steps, under ``jax.pmap`` beside ``jax.jit(jax.vmap(...))``, and the same steps unrolled in
Python under ``pmap``; one JSON line per length, the largest difference of the final gradients
from the ``vmap`` ones (``nan`` where ``pmap``'s are not finite).

``--unheld`` builds the potential with the coinciding-distance rewrite off
(:data:`pymc_accel.backends.run_logp.ZERO_COINCIDENT_DISTANCES`): student_t_process's loop
under ``pmap`` is wrong without it (its kernel's diagonal;
:mod:`pymc_accel.rewrites.coincident_distances`); each line says which (``held``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="student_t_process")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--tune", type=int, default=100)
    parser.add_argument("--methods", default="parallel,vectorized,sequential")
    parser.add_argument("--leapfrogs", default="",
                        help="comma-separated loop lengths: time no NUTS, integrate instead")
    parser.add_argument("--unheld", action="store_true",
                        help="the coinciding-distance rewrite off")
    args = parser.parse_args()

    import pymc_accel  # noqa: F401  (its XLA flags: several CPU devices, as its runs have)

    import jax
    import jax.numpy as jnp
    import numpy as np
    from compare_evaluator import models
    from jax.flatten_util import ravel_pytree
    from numpyro.infer import MCMC, NUTS

    from pymc_accel.backends import run_logp
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jaxified_logp

    run_logp.ZERO_COINCIDENT_DISTANCES = not args.unheld

    with jax_precision("float64"):
        model = models()[args.model]()
        logp = jaxified_logp(model, device="cpu")
        start = model.initial_point()
        values = [jnp.asarray(start[v.name]) for v in model.value_vars]
        z0, unravel = ravel_pytree(values)

        def potential(z):
            return -logp(unravel(z))

        reference = jax.jit(jax.grad(potential))
        if args.leapfrogs:
            _leapfrogs(jax.grad(potential), z0, [int(n) for n in args.leapfrogs.split(",")],
                       args.model, not args.unheld)
            return
        for method in args.methods.split(","):
            for seed in range(args.seeds):
                jitter = jax.random.uniform(jax.random.PRNGKey(100 + seed), (2, *z0.shape),
                                            minval=-0.5, maxval=0.5)
                mcmc = MCMC(NUTS(potential_fn=potential), num_warmup=args.tune,
                            num_samples=args.draws, num_chains=2, chain_method=method,
                            progress_bar=False)
                keys = (jax.random.PRNGKey(seed) if method == "sequential"
                        else jax.random.split(jax.random.PRNGKey(seed), 2))
                mcmc.run(keys, init_params=z0 + jitter)
                state = mcmc.last_state
                errors, steps = [], []
                for c in range(2):
                    right = np.asarray(reference(state.z[c]))
                    carried = np.asarray(state.z_grad[c])
                    errors.append(float(np.linalg.norm(carried - right)
                                        / max(float(np.linalg.norm(right)), 1.0)))
                    steps.append(float(state.adapt_state.step_size[c]))
                print(json.dumps({"model": args.model, "held": not args.unheld,
                                  "chain_method": method, "seed": seed,
                                  "devices": len(jax.devices()), "grad_rel_errors": errors,
                                  "step_sizes": steps}), flush=True)


def _leapfrogs(gradient, z0, lengths: list[int], name: str, held: bool) -> None:
    """The ``--leapfrogs`` comparison (see the module docstring)."""
    import jax
    import jax.numpy as jnp

    def integrate(z, steps: int, unrolled: bool = False):
        def step(carry):
            z, p, g = carry
            p = p - 0.5e-3 * g
            z = z + 1e-3 * p
            g = gradient(z)
            return z, p - 0.5e-3 * g, g

        carry = (z, jnp.full_like(z, 0.1), gradient(z))
        if unrolled:
            for _ in range(steps):
                carry = step(carry)
            return carry[2]
        return jax.lax.fori_loop(0, steps, lambda i, c: step(c), carry)[2]

    points = jnp.stack([z0, z0 + 0.1])
    for steps in lengths:
        mapped = jax.jit(jax.vmap(lambda z, n=steps: integrate(z, n)))(points)
        looped = jax.pmap(lambda z, n=steps: integrate(z, n))(points)
        unrolled = jax.pmap(lambda z, n=steps: integrate(z, n, unrolled=True))(points)

        def largest(values):
            return (float(jnp.max(jnp.abs(values - mapped)))
                    if bool(jnp.all(jnp.isfinite(values))) else float("nan"))

        print(json.dumps({"model": name, "held": held, "leapfrogs": steps,
                          "devices": len(jax.devices()),
                          "pmap_loop_vs_vmap": largest(looped),
                          "pmap_unrolled_vs_vmap": largest(unrolled)}), flush=True)


if __name__ == "__main__":
    main()
