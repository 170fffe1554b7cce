"""BlackJAX's NUTS against NumPyro's, priced apart: the data for the BlackJAX plugin's
``LEAPFROG_FACTOR`` and ``FIXED_FACTOR``.

Three methods (``--method``), each one JSON line a model and precision:

``compiled_loop`` (the default, since 2026-11-29): the leapfrog. NumPyro's NUTS is tuned and
timed as ``fit_numpyro_leapfrog.py`` times it (:func:`fit_numpyro_leapfrog.time_leapfrogs`);
BlackJAX's is tuned by its own ``window_adaptation`` (as PyMC's BlackJAX path tunes it), then
its ``nuts`` kernel's ``step`` runs from the tuned state inside one compiled loop whose length
is an argument, ``jax.pmap`` over two chains on two XLA CPU devices as PyMC maps them, at two
lengths, each repeated (:func:`time_blackjax_leapfrogs`). One program serves every run, so

    per leapfrog (two chains side by side) = (median wall(long) - median wall(short))
                                             / (leapfrogs(long) - leapfrogs(short))

(:func:`fit_numpyro_leapfrog.per_leapfrog`), and the line's ``ratio`` is BlackJAX's over
NumPyro's, on the same log density (the one pymc-accel's CPU runs jaxify) and start.

``tuning``: each sampler's tuning leapfrogs (``--warmup`` draws, two chains, seeds 1 and 2),
NumPyro's from ``MCMC.warmup(collect_warmup=True)``, BlackJAX's from ``window_adaptation``'s
info (PyMC's BlackJAX path filters it away, so the count is taken here).

``fixed``: what a run costs besides its leapfrogs, warm: each candidate run through pymc-accel's
backend with 10 tuning draws and 10 draws (a few hundred leapfrogs: milliseconds), once to warm
JAX's compile cache, then ``--repeats`` times; the line's ``ratio`` is BlackJAX's median wall
over NumPyro's.

``two_runs``, this script's method until 2026-11-29: whole runs through the backends at two
numbers of draws with the same seed and tuning, the extra draws' seconds over their leapfrogs.
Each whole run loads its program and traces it again, and their walls spread by tenths of a
second: the figure moved from 0.5x NumPyro's after 300 tuning draws to 1.1-1.8x after 50
(docs/benchmarks.md, 2026-11-29), where the compiled loop gives 0.76-1.15x.

    M=eight_schools,glm_poisson,seed_small,seed_mid,logistic_101,groups_503
    JAX_PLATFORMS=cpu python bench/fit_blackjax_leapfrog.py --models $M --lengths 500,3000 \\
        > docs/results/fit-blackjax-leapfrog-cpu-2026-11-29-compiled-loop.jsonl
    JAX_PLATFORMS=cpu python bench/fit_blackjax_leapfrog.py --method tuning --warmup 1000 \\
        --models $M > docs/results/fit-blackjax-tuning-cpu-2026-11-29.jsonl
    JAX_PLATFORMS=cpu python bench/fit_blackjax_leapfrog.py --method fixed --models $M \\
        > docs/results/fit-blackjax-fixed-cpu-2026-11-29.jsonl

The last line sets each model's BlackJAX figure against NumPyro's (median over precisions).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

CANDIDATES = ("numpyro[cpu,float64,chain_method=parallel]",
              "blackjax_nuts[cpu,float64,chain_method=parallel]")


def _window_adaptation(logdensity, warmup: int):
    """A function of ``(key, start)`` that tunes BlackJAX's NUTS on ``logdensity`` with its
    window adaptation over ``warmup`` draws, as PyMC's BlackJAX path does, and returns the
    tuned state, the tuned parameters and the leapfrogs the tuning took."""
    import blackjax

    def tune(key, x):
        adapt = blackjax.window_adaptation(blackjax.nuts, logdensity, target_acceptance_rate=0.8)
        (state, params), info = adapt.run(key, x, num_steps=warmup)
        return state, params, info.info.num_integration_steps.sum()
    return tune


def time_blackjax_leapfrogs(logdensity, init, lengths: tuple[int, int], warmup: int,
                            repeats: int, seed: int = 0) -> dict:
    """Tune BlackJAX's NUTS on ``logdensity`` (+log p of a flat vector) from ``init`` (a
    ``(chains, d)`` array, a chain per XLA CPU device) with its window adaptation, then time
    its kernel in one compiled loop at each of ``lengths`` draws, ``repeats`` times. Returns,
    per length, the walls and the leapfrogs (the larger chain's count, every repeat's), and
    ``"tuning_leapfrogs"``: each chain's leapfrogs in its adaptation."""
    import blackjax
    import jax
    import jax.numpy as jnp
    import numpy as np

    keys = jax.random.split(jax.random.PRNGKey(seed), init.shape[0])
    state, params, tuning = jax.pmap(_window_adaptation(logdensity, warmup))(keys, init)

    def draws(state, params, key, n):  # n draws from the tuned state; the leapfrogs they took
        step = blackjax.nuts(logdensity, **params).step

        def one(i, carry):
            state, leapfrogs = carry
            state, info = step(jax.random.fold_in(key, i), state)
            return state, leapfrogs + info.num_integration_steps
        return jax.lax.fori_loop(0, n, one, (state, jnp.zeros((), jnp.int64)))[1]

    run = jax.pmap(draws, in_axes=(0, 0, 0, None))  # a chain per XLA CPU device
    jax.block_until_ready(run(state, params, keys, 1))  # the one compile
    timed = {}
    for n in lengths:
        walls, steps = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            per_chain = np.asarray(jax.block_until_ready(run(state, params, keys, n)))
            walls.append(time.perf_counter() - t)
            steps.append(float(per_chain.max()))
        timed[n] = {"walls": walls, "leapfrogs_all": steps}
    return {"runs": timed, "tuning_leapfrogs": np.asarray(tuning).tolist()}


def _inputs(name: str, precision: str):
    """The log density pymc-accel's CPU runs jaxify (+log p of a list holding the flat
    position) and two chains' start, for model ``name``; call inside ``jax_precision``."""
    import jax.numpy as jnp
    from fit_numpyro_leapfrog import _factory
    from fit_numpyro_tuning import numpyro_inputs

    logp, x0 = numpyro_inputs(_factory(name)(), precision)
    return logp, [jnp.stack([x] * 2) for x in x0]


def measure_loop(name: str, precision: str, lengths: tuple[int, int], warmup: int,
                 repeats: int) -> dict:
    """One model's ``compiled_loop`` line in ``precision``."""
    from fit_numpyro_leapfrog import per_leapfrog, time_leapfrogs

    from pymc_accel.backends.jax_model import jax_precision

    with jax_precision(precision):
        logp, init = _inputs(name, precision)
        numpyro = time_leapfrogs(lambda xs: -logp(xs), init, lengths, warmup, repeats)
        blackjax = time_blackjax_leapfrogs(lambda x: logp([x]), init[0], lengths, warmup,
                                           repeats)
    numpyro_seconds = per_leapfrog({"runs": numpyro})
    blackjax_seconds = per_leapfrog(blackjax)
    return {"model": name, "precision": precision, "method": "compiled_loop", "warmup": warmup,
            "numpyro": {"runs": numpyro, "per_leapfrog_seconds": numpyro_seconds},
            "blackjax": blackjax | {"per_leapfrog_seconds": blackjax_seconds},
            "ratio": blackjax_seconds / numpyro_seconds}


def count_tuning(name: str, precision: str, warmup: int, seeds=(1, 2)) -> dict:
    """One model's ``tuning`` line: each sampler's leapfrogs per chain over ``warmup`` tuning
    draws, a list per seed."""
    import jax
    import numpy as np
    from numpyro.infer import MCMC, NUTS

    from pymc_accel.backends.jax_model import jax_precision

    counts = {"numpyro": [], "blackjax": []}
    with jax_precision(precision):
        logp, init = _inputs(name, precision)
        tune = jax.pmap(_window_adaptation(lambda y: logp([y]), warmup))
        for seed in seeds:
            mcmc = MCMC(NUTS(potential_fn=lambda xs: -logp(xs), target_accept_prob=0.8),
                        num_warmup=warmup, num_samples=1, num_chains=2,
                        chain_method="parallel", progress_bar=False)
            mcmc.warmup(jax.random.PRNGKey(seed), init_params=init, extra_fields=("num_steps",),
                        collect_warmup=True)
            steps = mcmc.get_extra_fields(group_by_chain=True)["num_steps"]
            counts["numpyro"].append(np.asarray(steps).sum(axis=1).tolist())
            keys = jax.random.split(jax.random.PRNGKey(seed), 2)
            counts["blackjax"].append(np.asarray(tune(keys, init[0])[2]).tolist())
    totals = {k: statistics.median(x for seed in v for x in seed) for k, v in counts.items()}
    return {"model": name, "precision": precision, "method": "tuning", "warmup": warmup,
            "leapfrogs": counts, "ratio": totals["blackjax"] / totals["numpyro"]}


@functools.cache
def _candidate(name: str, label: str):
    """The candidate called ``label`` among those offered for model ``name`` (looked up once:
    it takes a profile of the model)."""
    import pymc_accel
    from fit_numpyro_leapfrog import _factory

    from bench_regret import offered_candidates

    return offered_candidates(pymc_accel.profile_model(_factory(name)()))[label]


def _run(name: str, label: str, tune: int, draws: int, seed: int) -> tuple[float, float]:
    """One run's wall and the slower chain's leapfrogs over its draws."""
    from fit_numpyro_leapfrog import _factory
    from pymc_accel.backend import SampleRequest
    from pymc_accel.registry import get_registry

    model = _factory(name)()
    candidate = _candidate(name, label)
    backend = get_registry().backends[candidate.backend]
    request = SampleRequest(draws=draws, tune=tune, chains=2, cores=2, random_seed=seed,
                            progressbar=False, compute_convergence_checks=False)
    start = time.perf_counter()
    idata = backend.sample(model, candidate, request)
    wall = time.perf_counter() - start
    leapfrogs = float(idata.sample_stats["n_steps"].sum("draw").max())
    return wall, leapfrogs


def _in_precision(label: str, precision: str) -> str:
    return label.replace("float64", precision)


def measure_fixed(name: str, precision: str, repeats: int, seed: int) -> dict:
    """One model's ``fixed`` line: each candidate's warm walls of 10 tuning draws and 10
    draws, after one run that warms JAX's compile cache."""
    walls = {}
    for label in CANDIDATES:
        label = _in_precision(label, precision)
        _run(name, label, 10, 10, seed)
        walls[label] = [_run(name, label, 10, 10, seed)[0] for _ in range(repeats)]
    numpyro, blackjax = (statistics.median(w) for w in walls.values())
    return {"model": name, "precision": precision, "method": "fixed", "walls": walls,
            "ratio": blackjax / numpyro}


def measure(name: str, label: str, tune: int, lengths: tuple[int, int], repeats: int,
            seed: int) -> dict:
    """One model's ``two_runs`` line for candidate ``label``."""
    runs = {}
    for draws in lengths:
        _run(name, label, tune, draws, seed)  # compiles (a length is a program of its own)
        walls, leapfrogs = [], set()
        for _ in range(repeats):
            wall, steps = _run(name, label, tune, draws, seed)
            walls.append(wall)
            leapfrogs.add(steps)
        runs[draws] = {"walls": walls, "leapfrogs": sorted(leapfrogs)}
    short, long = lengths
    extra = runs[long]["leapfrogs"][0] - runs[short]["leapfrogs"][0]
    seconds = statistics.median(runs[long]["walls"]) - statistics.median(runs[short]["walls"])
    return {"model": name, "candidate": label, "tune": tune, "seed": seed, "runs": runs,
            "per_leapfrog_seconds": seconds / extra if extra > 0 else None,
            # a seed's draws are deterministic: one leapfrog count a length, or the timing is off
            "deterministic": all(len(r["leapfrogs"]) == 1 for r in runs.values())}


def _two_runs(args, lengths, models) -> list[dict]:
    """The ``two_runs`` lines, a model and candidate each, and the ratio line."""
    lines = []
    for name in models:
        for label in CANDIDATES:
            line = measure(name, label, args.tune, lengths, args.repeats, args.seed)
            lines.append(line)
            print(json.dumps(line), flush=True)
    ratios = {}
    for name in models:
        numpyro, blackjax = (next(x["per_leapfrog_seconds"] for x in lines
                                  if x["model"] == name and x["candidate"] == c)
                             for c in CANDIDATES)
        if numpyro and blackjax:
            ratios[name] = blackjax / numpyro
    print(json.dumps({"blackjax_over_numpyro_per_leapfrog": ratios}), flush=True)
    return lines


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--method", choices=["compiled_loop", "tuning", "fixed", "two_runs"],
                   default="compiled_loop")
    p.add_argument("--models", default="glm_poisson,seed_small,seed_mid")
    p.add_argument("--precisions", default="float32,float64")
    p.add_argument("--warmup", type=int, default=300,
                   help="tuning draws before the compiled loop (compiled_loop, tuning)")
    p.add_argument("--tune", type=int, default=300, help="tuning draws of two_runs' runs")
    p.add_argument("--lengths", default="200,1000", help="the two numbers of draws")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    lengths = tuple(int(x) for x in args.lengths.split(","))
    if len(lengths) != 2 or lengths[0] >= lengths[1]:
        p.error("--lengths takes two numbers of draws, the shorter first")
    os.environ.setdefault("PYMC_ACCEL_HISTORY", "off")
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    models = args.models.split(",")
    if args.method == "two_runs":
        return _two_runs(args, lengths, models)
    lines = []
    for name in models:
        for precision in args.precisions.split(","):
            if args.method == "compiled_loop":
                line = measure_loop(name, precision, lengths, args.warmup, args.repeats)
            elif args.method == "tuning":
                line = count_tuning(name, precision, args.warmup)
            else:
                line = measure_fixed(name, precision, args.repeats, args.seed)
            lines.append(line)
            print(json.dumps(line), flush=True)
    ratios = {name: statistics.median(x["ratio"] for x in lines if x["model"] == name)
              for name in models}
    print(json.dumps({f"blackjax_over_numpyro_{args.method}": ratios,
                      "median": statistics.median(x["ratio"] for x in lines)}), flush=True)
    return lines


if __name__ == "__main__":
    main()
