"""NumPyro's NUTS started from nutpie's gradient-scaled mass matrix against its own identity start:
leapfrogs in tuning and sampling, and the smallest bulk ESS, per model and seed.

NumPyro runs Stan's windowed adaptation, which keeps the identity mass matrix for the first 100
tuning draws (a 75-draw buffer and a 25-draw window). On the non-centred group models its early
tuning takes 3.4-5.5x the leapfrogs the cost model prices (docs/benchmarks.md, "NumPyro's early
tuning priced by the scale spread"). nutpie starts its adaptation from ``diag(1 / |grad U(x0)|)``
at each chain's start. This script asks whether NumPyro's runs would gain from that start, as
pymc-accel's NumPyro backend could give it: the start is computed inside NumPyro's own compiled
initialisation (a subclass of ``numpyro.infer.NUTS`` whose ``init`` sets the starting inverse
mass matrix from each chain's gradient), so no second program is compiled (the one program
grows, which ``--short-runs`` times). Its entries are
``1 / |g|`` clipped to ``[1e-10, cap]``, with 1 (NumPyro's start) where the gradient is zero or
not finite; ``--starts`` names the caps to run (``identity`` is NumPyro's own start).
``shared:<cap>`` gives every chain one start instead, from the chains' mean ``|g|`` (computed
before the run, so it costs a compile of its own that a product would have to avoid), and
``local:<points>:<cap>`` each chain's own start from the mean ``|g|`` over its position and
``points`` more jittered from it by uniform(-1, 1), inside NumPyro's initialisation.

Each model runs as the fitting scripts run NumPyro (``fit_numpyro_tuning.numpyro_inputs``:
pymc-accel's jaxified log density on one flat position, two chains ``chain_method="parallel"``),
from the initial point jittered by uniform(-1, 1) per chain as PyMC jitters it, ``--draws``
tuning and sampling draws, ``MCMC.warmup(collect_warmup=True)`` keeping the tuning draws'
``num_steps``. Leapfrog counts and ESS are deterministic for a seed, and no time is measured,
except with ``--short-runs N``: N runs of 10 + 10 draws per model and start, compile included,
the starts alternated, for what a start adds to NumPyro's compiled program.

    JAX_PLATFORMS=cpu python bench/compare_mass_start.py --models groups_503,glm_linear \\
        > docs/results/mass-start-cpu.jsonl
    python bench/compare_mass_start.py --summarize docs/results/mass-start-cpu.jsonl
    JAX_PLATFORMS=cpu python bench/compare_mass_start.py --models glm_poisson \\
        --starts identity,local:3:1e10 --short-runs 3
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def bounded_inverse(scale, cap: float):
    """``1 / scale`` clipped to ``[1e-10, cap]``; 1 (NumPyro's start) where ``scale`` is zero
    or not finite."""
    import jax.numpy as jnp

    usable = jnp.isfinite(scale) & (scale > 0)
    inverse = jnp.clip(1.0 / jnp.where(usable, scale, 1.0), 1e-10, cap)
    return jnp.where(usable, inverse, 1.0).astype(scale.dtype)


def gradient_inverse_mass(potential_fn, position, cap: float):
    """``1 / |grad U(position)|`` raveled, clipped to ``[1e-10, cap]``; 1 where the gradient
    is zero or not finite."""
    import jax
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree

    scale = jnp.abs(ravel_pytree(jax.grad(potential_fn)(position))[0])
    return bounded_inverse(scale, cap)


def local_inverse_mass(potential_fn, position, cap: float, points: int, rng_key):
    """``1 / mean |grad U|`` over ``position`` and ``points`` more points jittered from it
    by uniform(-1, 1), as PyMC jitters chain starts, clipped to ``[1e-10, cap]``; 1 where the
    mean is zero or not finite. The key is folded from the chain's, which NumPyro then uses
    unchanged."""
    import jax
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree

    flat, unravel = ravel_pytree(position)
    noise = jax.random.uniform(jax.random.fold_in(rng_key, 7919), (points, flat.size),
                               flat.dtype, -1.0, 1.0)
    grads = jax.vmap(lambda x: ravel_pytree(jax.grad(potential_fn)(unravel(x)))[0])(
        jnp.concatenate([flat[None], flat[None] + noise]))
    scale = jnp.mean(jnp.abs(grads), axis=0)
    return bounded_inverse(scale, cap)


def gradient_started_nuts(cap: float, points: int = 0):
    """A ``numpyro.infer.NUTS`` subclass whose ``init`` starts the mass-matrix adaptation
    from :func:`gradient_inverse_mass` at each chain's position (chains mapped over devices
    each call ``init`` on their own position, inside NumPyro's compiled program), or with
    ``points`` from :func:`local_inverse_mass` over the position and as many jittered ones."""
    from numpyro.infer import NUTS

    class GradientStartedNUTS(NUTS):
        def init(self, rng_key, num_warmup, init_params=None, model_args=(), model_kwargs={}):
            position = getattr(init_params, "z", init_params)
            self._inverse_mass_matrix = (
                local_inverse_mass(self._potential_fn, position, cap, points, rng_key) if points
                else gradient_inverse_mass(self._potential_fn, position, cap))
            try:
                return super().init(rng_key, num_warmup, init_params, model_args, model_kwargs)
            finally:
                self._inverse_mass_matrix = None

    return GradientStartedNUTS


def kernel_for(start: str, potential, starts):
    """NumPyro's NUTS for ``start`` (see ``--starts``) on ``potential``, ``starts`` being
    every chain's flat starting position."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer import NUTS

    if start == "identity":
        kernel = NUTS(potential_fn=potential, target_accept_prob=0.8)
    elif start.startswith("shared:"):  # one start for every chain, from their mean |g|
        cap = float(start.split(":", 1)[1])
        inverse = jax.vmap(lambda x: 1.0 / gradient_inverse_mass(potential, [x], math.inf))(
            starts)  # |g| per chain (zero or non-finite entries give 1)
        scale = jnp.mean(inverse, axis=0)
        kernel = NUTS(potential_fn=potential, target_accept_prob=0.8,
                      inverse_mass_matrix=jnp.clip(1.0 / scale, 1e-10, cap))
    elif start.startswith("local:"):  # each chain's start and jittered points around it
        points, cap = start.split(":")[1:]
        kernel = gradient_started_nuts(float(cap), int(points))(potential_fn=potential,
                                                                target_accept_prob=0.8)
    else:
        kernel = gradient_started_nuts(float(start))(potential_fn=potential,
                                                     target_accept_prob=0.8)
    return kernel


def chain_starts(x0, seed: int, chains: int, jitter: bool = True):
    """Every chain's flat start: the initial point jittered by uniform(-1, 1) per chain as PyMC
    jitters it (``seed``'s NumPy generator), or the point itself without ``jitter``."""
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(seed)
    return jnp.stack([x0 + (rng.uniform(-1.0, 1.0, x0.shape) if jitter else 0.0)
                      for _ in range(chains)])


def short_run_seconds(name: str, start: str, repeats: int, chains: int = 2) -> dict:
    """Walls of ``repeats`` runs of 10 + 10 draws, each with a kernel and log density built
    anew, as ``sample_jax_nuts`` runs NumPyro (one ``MCMC.run``, compile included): what a
    start adds to the compiled program's cost, where ``run`` counts no time."""
    import time

    import jax
    from numpyro.infer import MCMC

    from fit_numpyro_tuning import _factory, numpyro_inputs
    from pymc_accel.backends.jax_model import jax_precision

    walls = []
    for _ in range(repeats):
        model = _factory(name)()
        with jax_precision("float64"):
            logp, x0 = numpyro_inputs(model, "float64")
            starts = chain_starts(x0[0], 1, chains)
            kernel = kernel_for(start, lambda xs, logp=logp: -logp(xs), starts)
            mcmc = MCMC(kernel, num_warmup=10, num_samples=10, num_chains=chains,
                        chain_method="parallel", progress_bar=False)
            t = time.perf_counter()
            mcmc.run(jax.random.PRNGKey(1), init_params=[starts])
            jax.block_until_ready(mcmc.get_samples())
            walls.append(time.perf_counter() - t)
    return {"model": name, "start": start, "short_run_walls": walls}


def run(name: str, start: str, seed: int, draws: int, chains: int = 2,
        jitter: bool = True) -> dict:
    """One run of ``draws`` + ``draws``: its tuning and sampling leapfrogs a chain and the
    smallest and median bulk ESS over the flat position's entries. Without ``jitter`` every
    chain starts at the initial point itself."""
    import arviz as az
    import jax
    import numpy as np
    from numpyro.infer import MCMC

    from fit_numpyro_tuning import _factory, numpyro_inputs
    from pymc_accel.backends.jax_model import jax_precision

    model = _factory(name)()
    with jax_precision("float64"):
        logp, x0 = numpyro_inputs(model, "float64")
        starts = chain_starts(x0[0], seed, chains, jitter)
        kernel = kernel_for(start, lambda xs: -logp(xs), starts)
        mcmc = MCMC(kernel, num_warmup=draws, num_samples=draws, num_chains=chains,
                    chain_method="parallel", progress_bar=False)
        mcmc.warmup(jax.random.PRNGKey(seed), init_params=[starts], extra_fields=("num_steps",),
                    collect_warmup=True)
        tuning = float(np.asarray(mcmc.get_extra_fields()["num_steps"]).sum()) / chains
        mcmc.run(jax.random.PRNGKey(seed + 100), extra_fields=("num_steps",))
        sampling = float(np.asarray(mcmc.get_extra_fields()["num_steps"]).sum()) / chains
        samples = np.asarray(mcmc.get_samples(group_by_chain=True)[0])
    ess = az.ess(az.convert_to_dataset({"x": samples}), method="bulk")["x"].values
    return {"model": name, "start": start, "seed": seed, "draws": draws, "jitter": jitter,
            "n_free": int(x0[0].size),
            "tuning_leapfrogs": tuning, "sampling_leapfrogs": sampling,
            "min_bulk_ess": float(ess.min()), "median_bulk_ess": float(np.median(ess))}


def summarize(paths: list[str]) -> None:
    """Per model and start, against the identity start of the same seeds: total leapfrogs a
    chain (geometric mean over seeds of the ratio) and the smallest ESS per leapfrog."""
    rows = [json.loads(x) for p in paths for x in Path(p).read_text().splitlines() if x.strip()]
    by = {(r["model"], r["start"], r["seed"]): r for r in rows}
    models = list(dict.fromkeys(r["model"] for r in rows))
    starts = [s for s in dict.fromkeys(r["start"] for r in rows) if s != "identity"]
    print("| model | d | identity: tuning / sampling leapfrogs a chain | "
          + " | ".join(f"cap {s}: tuning / sampling | cap {s}: all leapfrogs, x identity | "
                       f"cap {s}: min ESS a leapfrog, x identity" for s in starts) + " |")
    print("|---|---|---|" + "---|---|---|" * len(starts))
    for model in models:
        seeds = sorted({r["seed"] for r in rows if r["model"] == model})
        base = [by[(model, "identity", s)] for s in seeds if (model, "identity", s) in by]
        cells = [model, str(base[0]["n_free"]),
                 " / ".join(f"{statistics.median(r[k] for r in base):.0f}"
                            for k in ("tuning_leapfrogs", "sampling_leapfrogs"))]
        for start in starts:
            pairs = [(by[(model, start, s)], by[(model, "identity", s)]) for s in seeds
                     if (model, start, s) in by and (model, "identity", s) in by]
            total = [(a["tuning_leapfrogs"] + a["sampling_leapfrogs"])
                     / (b["tuning_leapfrogs"] + b["sampling_leapfrogs"]) for a, b in pairs]
            efficiency = [(a["min_bulk_ess"] / a["sampling_leapfrogs"])
                          / (b["min_bulk_ess"] / b["sampling_leapfrogs"]) for a, b in pairs]
            cells += [" / ".join(f"{statistics.median(a[k] for a, _ in pairs):.0f}"
                                 for k in ("tuning_leapfrogs", "sampling_leapfrogs")),
                      ", ".join(f"{x:.2f}" for x in total),
                      ", ".join(f"{x:.2f}" for x in efficiency)]
        print("| " + " | ".join(cells) + " |")
    for start in starts:
        ratios = [
            (by[(m, start, s)]["tuning_leapfrogs"] + by[(m, start, s)]["sampling_leapfrogs"])
            / (by[(m, "identity", s)]["tuning_leapfrogs"]
               + by[(m, "identity", s)]["sampling_leapfrogs"])
            for (m, st, s) in by if st == start and (m, "identity", s) in by]
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\ncap {start}: all leapfrogs x identity, geometric mean {geo:.3f} over "
              f"{len(ratios)} (model, seed) pairs; range {min(ratios):.2f}-{max(ratios):.2f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="groups_503,glm_linear")
    p.add_argument("--starts", default="identity,1e10,1",
                   help="'identity' (NumPyro's start), caps of each chain's gradient start, "
                        "'shared:<cap>' for one start from the chains' mean gradient, and "
                        "'local:<points>:<cap>' for each chain's mean over jittered points")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--draws", type=int, default=1000, help="tuning draws, and as many kept")
    p.add_argument("--short-runs", type=int, default=0,
                   help="time this many 10 + 10-draw runs (compile included) per model and "
                        "start, alternating the starts, instead of counting leapfrogs")
    p.add_argument("--no-jitter", action="store_true",
                   help="start every chain at the initial point itself (PyMC jitters it)")
    p.add_argument("--summarize", nargs="*", help="result files to summarize instead of running")
    args = p.parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
        return
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    if args.short_runs:
        for name in filter(None, args.models.split(",")):
            for _ in range(args.short_runs):  # alternated, so a slow moment hits every start
                for start in args.starts.split(","):
                    print(json.dumps(short_run_seconds(name, start, 1)), flush=True)
        return
    for name in filter(None, args.models.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            for start in args.starts.split(","):
                print(json.dumps(run(name, start, seed, args.draws,
                                     jitter=not args.no_jitter)), flush=True)


if __name__ == "__main__":
    main()
