"""BlackJAX's NUTS leapfrog against NumPyro's, both run as pymc-accel runs them: the data for
the BlackJAX plugin's ``LEAPFROG_FACTOR``.

That factor (2.0) came on 2026-11-25 from whole runs less an assumed compile. Here each
candidate runs the same model with the same seed and the same tuning at two numbers of draws,
so the tuning and everything fixed is the same in both, and only the extra draws differ:

    per leapfrog = (median wall(long) - median wall(short))
                   / (leapfrogs(long) - leapfrogs(short))

with the leapfrogs those of the slower chain's draws (the chains run side by side). The extra
draws' seconds must stand well out of the walls' spread between repeats: after 300 tuning draws
they did not, and the figure moved from 0.5x NumPyro's to 1.1-1.8x after 50, whose long trees
add far more leapfrogs (docs/benchmarks.md, 2026-11-29). Each
length is run ``--repeats`` times after one run of its own that warms JAX's compile cache on
disk (each length is a program of its own; a repeat loads it instead of compiling it). One JSON
line a model and candidate; the last line sets each model's BlackJAX figure against NumPyro's:

    JAX_PLATFORMS=cpu python bench/fit_blackjax_leapfrog.py --models glm_poisson,seed_small,seed_mid
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


@functools.cache
def _candidate(name: str, label: str):
    """The candidate called ``label`` among those offered for model ``name`` (looked up once:
    it takes a profile of the model)."""
    import pymc_accel
    from fit_numpyro_tuning import _factory

    from bench_regret import offered_candidates

    return offered_candidates(pymc_accel.profile_model(_factory(name)()))[label]


def _run(name: str, label: str, tune: int, draws: int, seed: int) -> tuple[float, float]:
    """One run's wall and the slower chain's leapfrogs over its draws."""
    from fit_numpyro_tuning import _factory
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


def measure(name: str, label: str, tune: int, lengths: tuple[int, int], repeats: int,
            seed: int) -> dict:
    """One model's line for candidate ``label``."""
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


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="glm_poisson,seed_small,seed_mid")
    p.add_argument("--tune", type=int, default=300)
    p.add_argument("--lengths", default="200,1000", help="the two numbers of draws")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    lengths = tuple(int(x) for x in args.lengths.split(","))
    if len(lengths) != 2 or lengths[0] >= lengths[1]:
        p.error("--lengths takes two numbers of draws, the shorter first")
    os.environ.setdefault("PYMC_ACCEL_HISTORY", "off")
    lines = []
    for name in args.models.split(","):
        for label in CANDIDATES:
            line = measure(name, label, args.tune, lengths, args.repeats, args.seed)
            lines.append(line)
            print(json.dumps(line), flush=True)
    ratios = {}
    for name in args.models.split(","):
        numpyro, blackjax = (next(x["per_leapfrog_seconds"] for x in lines
                                  if x["model"] == name and x["candidate"] == c)
                             for c in CANDIDATES)
        if numpyro and blackjax:
            ratios[name] = blackjax / numpyro
    print(json.dumps({"blackjax_over_numpyro_per_leapfrog": ratios}), flush=True)
    return lines


if __name__ == "__main__":
    main()
