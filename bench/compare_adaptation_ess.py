"""Each free variable's smallest bulk ESS under NumPyro's NUTS (Stan's windowed adaptation)
and nutpie's (its gradient-based mass matrix), at the tuning lengths given: which variable
sets a run's minimum, and whether NumPyro's gap to nutpie closes with longer tuning, or with
nutpie's mass-matrix estimator in Stan's windows (``--samplers numpyro_gradient``), and how
BlackJAX's window adaptation compares (``--samplers numpyro,blackjax``). Each run's
tuned step size and mean acceptance are printed with it.

The cost model credits NumPyro with 0.85x nutpie's effective draws a gradient on every model
(``costmodel.NUTS_GRADIENT_EFFICIENCY``); on the non-centred group models its runs got from
0.5x to 1.0x, which the graph does not show (docs/benchmarks.md, "Three misses looked into on
the CPU"). One line a run, 2 chains, float64:

    JAX_PLATFORMS=cpu python bench/compare_adaptation_ess.py --model groups_503 \\
        --tunes 1000,3000 --seeds 1,2,3
    PYMC_ACCEL_HISTORY=off JAX_PLATFORMS=cpu python bench/compare_adaptation_ess.py \\
        --model groups_503 --tunes 1000 --seeds 1,2,3 --samplers numpyro,numpyro_gradient
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: The samplers compared, as ``pymc_accel.sample`` keywords. ``numpyro_gradient`` is NumPyro
#: with its diagonal mass matrix estimated as nutpie estimates its own (:func:`gradient_adapter`).
SAMPLERS = {
    "nutpie": {"nuts_sampler": "numba", "driver": "nutpie"},
    "numpyro": {"nuts_sampler": "numpyro", "precision": "float64"},
    "numpyro_gradient": {"nuts_sampler": "numpyro", "precision": "float64"},
    # BlackJAX's window adaptation (the plugin), Stan's schedule as NumPyro's
    "blackjax": {"nuts_sampler": "blackjax_nuts", "precision": "float64"},
}


def gradient_adapter(original):
    """NumPyro's ``warmup_adapter`` with Stan's windows and step-size adaptation, but each
    window's diagonal inverse mass matrix estimated as nutpie estimates it, from the draws'
    and the gradients' variances: ``sqrt(var(z) / var(grad))`` (where NumPyro takes
    ``var(z)``, shrunk towards 1e-3 as Stan does). A dense mass matrix is left to NumPyro's.
    Written for this comparison: NumPyro has no estimator of this kind, and its adapter's update
    is given the position alone."""
    import jax
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree
    from numpyro.infer.hmc_util import HMCAdaptState, build_adaptation_schedule, dual_averaging

    def adapter(num_adapt_steps, find_reasonable_step_size=None, adapt_step_size=True,
                adapt_mass_matrix=True, dense_mass=False, target_accept_prob=0.8,
                regularize_mass_matrix=True):
        if dense_mass or not adapt_mass_matrix:
            return original(num_adapt_steps, find_reasonable_step_size, adapt_step_size,
                            adapt_mass_matrix, dense_mass, target_accept_prob,
                            regularize_mass_matrix)
        if find_reasonable_step_size is None:  # NumPyro's default: the step size as it is
            def find_reasonable_step_size(step_size, *_):
                return step_size
        ss_init, ss_update = dual_averaging()
        schedule = jnp.asarray(build_adaptation_schedule(num_adapt_steps))
        last_window = len(schedule) - 1

        def moments_init(like):
            zero = jnp.zeros_like(like)
            return zero, zero, zero, zero, jnp.zeros((), like.dtype)

        def moments_update(z, g, moments):
            mz, sz, mg, sg, n = moments
            n = n + 1
            dz, dg = z - mz, g - mg
            mz, mg = mz + dz / n, mg + dg / n
            return mz, sz + dz * (z - mz), mg, sg + dg * (g - mg), n

        def sqrt_parts(inverse):  # a diagonal inverse mass matrix and its two square roots
            return inverse, 1.0 / jnp.sqrt(inverse), jnp.sqrt(inverse)

        def init_fn(z_info, rng_key, step_size=1.0, inverse_mass_matrix=None,
                    mass_matrix_size=None):
            flat = ravel_pytree(z_info[0])[0]
            if inverse_mass_matrix is None:
                inverse_mass_matrix = jnp.ones_like(flat)
            rng_key, rng_key_ss = jax.random.split(rng_key)
            if adapt_step_size:
                step_size = find_reasonable_step_size(step_size, inverse_mass_matrix, z_info,
                                                      rng_key_ss)
            return HMCAdaptState(step_size, *sqrt_parts(inverse_mass_matrix),
                                 ss_init(jnp.log(10 * step_size)), moments_init(flat),
                                 jnp.array(0), rng_key)

        def at_window_end(z_info, rng_key_ss, state):
            mz, sz, mg, sg, n = state.mm_state
            inverse = jnp.clip(jnp.sqrt(sz / sg), 1e-10, 1e10)
            inverse = jnp.where(jnp.isfinite(inverse) & (n >= 3), inverse,
                                state.inverse_mass_matrix)
            step_size = find_reasonable_step_size(state.step_size, inverse, z_info, rng_key_ss)
            inverse, sqrt, sqrt_inv = sqrt_parts(inverse)
            return state._replace(
                step_size=step_size, inverse_mass_matrix=inverse, mass_matrix_sqrt=sqrt,
                mass_matrix_sqrt_inv=sqrt_inv, ss_state=ss_init(jnp.log(10) + jnp.log(step_size)),
                mm_state=moments_init(mz))

        def update_fn(t, accept_prob, z_info, state):
            rng_key, rng_key_ss = jax.random.split(state.rng_key)
            ss_state = ss_update(target_accept_prob - accept_prob, state.ss_state)
            log_step, log_step_avg, *_ = ss_state
            step_size = jnp.where(t == num_adapt_steps - 1, jnp.exp(log_step_avg),
                                  jnp.exp(log_step))
            finfo = jnp.finfo(jnp.result_type(step_size))
            step_size = jnp.clip(step_size, finfo.tiny, finfo.max)
            window = state.window_idx
            middle = (window > 0) & (window < last_window)
            z = ravel_pytree(z_info[0])[0]
            g = ravel_pytree(z_info[3])[0]
            moments = jax.lax.cond(middle, lambda m: moments_update(z, g, m), lambda m: m,
                                   state.mm_state)
            ends = t == schedule[window, 1]
            state = state._replace(step_size=step_size, ss_state=ss_state, mm_state=moments,
                                   window_idx=jnp.where(ends, window + 1, window),
                                   rng_key=rng_key)
            return jax.lax.cond(ends & middle, lambda s: at_window_end(z_info, rng_key_ss, s),
                                lambda s: s, state)

        return init_fn, update_fn

    return adapter


def run_once(name: str, sampler: str, tune: int, draws: int, seed: int,
             target_accept: float = 0.8) -> dict:
    """One run's wall, leapfrogs a draw, step size, acceptance and each variable's smallest
    bulk ESS; ``target_accept`` is NumPyro's (nutpie runs at 0.8 whatever it is)."""
    import arviz as az
    import numpy as np

    import pymc_accel
    from fit_numpyro_tuning import _factory
    from pymc_accel.backends.swaps import swapped

    hmc = importlib.import_module("numpyro.infer.hmc")  # the package's name is not the module
    swap = (swapped(hmc, "warmup_adapter", gradient_adapter)
            if sampler == "numpyro_gradient" else contextlib.nullcontext())
    start = time.perf_counter()
    with swap:
        idata = pymc_accel.sample(model=_factory(name)(), draws=draws, tune=tune, chains=2,
                                  random_seed=seed, progressbar=False,
                                  compute_convergence_checks=False,
                                  target_accept=0.8 if sampler == "nutpie" else target_accept,
                                  **SAMPLERS[sampler])
    wall = time.perf_counter() - start
    ess = az.ess(idata.posterior.to_dataset(), method="bulk")
    per_variable = {k: float(np.min(v.values)) for k, v in ess.data_vars.items()}
    stats = idata.sample_stats
    return {"sampler": sampler, "tune": tune, "seed": seed, "wall": wall,
            "leapfrogs_per_draw": float(stats["n_steps"].mean()),
            # the tuned step size (each chain's, averaged) and the draws' mean acceptance
            # (PyMC's BlackJAX path does not keep its step size)
            "step_size": (float(stats["step_size"].isel(draw=-1).mean())
                          if "step_size" in stats else float("nan")),
            "acceptance": float(stats["acceptance_rate"].mean()),
            "ess": per_variable}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="groups_503")
    p.add_argument("--tunes", default="1000,3000", help="NumPyro's tuning lengths")
    p.add_argument("--nutpie-tune", type=int, default=1000)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--target-accept", type=float, default=0.8,
                   help="NumPyro's target acceptance (nutpie's stays 0.8)")
    p.add_argument("--samplers", default="numpyro",
                   help="NumPyro's variants to run at each tuning length: numpyro (its own "
                        "adaptation), numpyro_gradient (nutpie's mass-matrix estimator); or "
                        "blackjax (BlackJAX's window adaptation, the plugin)")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    plan = [("nutpie", args.nutpie_tune)] + [(s, int(t)) for s in args.samplers.split(",")
                                              for t in args.tunes.split(",")]
    rows = []
    for sampler, tune in plan:
        for seed in seeds:
            row = run_once(args.model, sampler, tune, args.draws, seed, args.target_accept)
            rows.append(row)
            worst = min(row["ess"], key=row["ess"].get)
            print(f"{sampler} tune {tune} seed {seed}: wall {row['wall']:.1f} s, "
                  f"{row['leapfrogs_per_draw']:.1f} leapfrogs a draw, step size "
                  f"{row['step_size']:.3f}, acceptance {row['acceptance']:.2f}, "
                  f"smallest ESS {worst} "
                  f"{row['ess'][worst]:.0f}; " + ", ".join(
                      f"{k} {v:.0f}" for k, v in row["ess"].items()), flush=True)
    reference = [r for r in rows if r["sampler"] == "nutpie"]
    print("| sampler | tune | variable | median smallest bulk ESS | against nutpie's "
          "| median leapfrogs a draw | median step size | median acceptance |")
    print("|---|---|---|---|---|---|---|---|")
    for sampler, tune in plan:
        mine = [r for r in rows if r["sampler"] == sampler and r["tune"] == tune]
        lf, step, accept = (statistics.median(r[k] for r in mine)
                            for k in ("leapfrogs_per_draw", "step_size", "acceptance"))
        for var in mine[0]["ess"]:
            ess = statistics.median(r["ess"][var] for r in mine)
            ref = statistics.median(r["ess"][var] for r in reference)
            print(f"| {sampler} | {tune} | {var} | {ess:.0f} | {ess / ref:.2f} | {lf:.1f} "
                  f"| {step:.3f} | {accept:.2f} |")
    return rows


if __name__ == "__main__":
    main()
