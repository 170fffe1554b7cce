"""How many more leapfrogs vectorized chains pay than they use: the data for pricing NumPyro's
``"vectorized"`` chains (one GPU runs its chains that way).

Under ``jax.vmap`` NUTS's tree-building while loops run until every chain's tree is finished,
with the finished chains' states held by selects: each draw of a group of vectorized chains
costs the largest of their trees, not their mean. The chains' trees do not depend on how they
are laid out (the same seeds draw the same trees under pmap, vmap or one after another), so a
CPU run's ``n_steps`` per chain and draw gives the factor for any device:

    vectorized factor = sum over draws of max over chains of n_steps
                        / sum over draws of mean over chains of n_steps

Tuning's trees are not kept by PyMC's ``sample_jax_nuts``: the factor is the sampling draws'.
One JSON line per model and seed (``--chains`` chains of NumPyro on the CPU, pymc-accel's
backend), then a summary with ``--summary FILES``:

    JAX_PLATFORMS=cpu python bench/fit_vectorized_trees.py --models eight_schools,seed_mid \\
        --chains 4 > docs/results/fit-vectorized-trees-cpu.jsonl
    python bench/fit_vectorized_trees.py --summary docs/results/fit-vectorized-trees-cpu.jsonl
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

CANDIDATE = "numpyro[cpu,float64,chain_method=parallel]"


def vectorized_factor(n_steps) -> float:
    """Leapfrogs a vmapped group of the chains pays over those its chains use:
    ``n_steps`` is (chains, draws)."""
    import numpy as np

    steps = np.asarray(n_steps, dtype=float)
    return float(steps.max(axis=0).sum() / steps.mean(axis=0).sum())


def measure(name: str, chains: int, draws: int, seed: int) -> dict:
    """One NumPyro run of ``name``: its chains' trees and their vectorized factor."""
    from bench_regret import offered_candidates
    from fit_numpyro_tuning import _factory
    from pymc_accel.backend import SampleRequest
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry

    factory = _factory(name)
    profile = profile_model(factory())
    candidate = offered_candidates(profile)[CANDIDATE]
    backend = get_registry().backends[candidate.backend]
    idata = backend.sample(factory(), candidate, SampleRequest(
        draws=draws, tune=draws, chains=chains, cores=chains, random_seed=seed,
        progressbar=False, compute_convergence_checks=False))
    steps = idata.sample_stats["n_steps"].values  # (chain, draw)
    return {"model": name, "n_free": profile.n_free, "chains": chains, "draws": draws,
            "seed": seed, "mean_leapfrogs_per_draw": float(steps.mean()),
            "vectorized_factor": vectorized_factor(steps)}


def summary(paths: list[str]) -> list[str]:
    """A Markdown table: each model's factor (the geometric mean over its seeds) by chains."""
    lines = [json.loads(x) for p in paths for x in Path(p).read_text().splitlines() if x.strip()]
    by = {}
    for x in lines:
        by.setdefault((x["model"], x["n_free"], x["chains"]), []).append(x)
    out = ["| model | free dim | chains | leapfrogs per draw (mean) | vectorized factor |",
           "|---|---|---|---|---|"]
    factors = []
    for (model, n_free, chains), runs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        f = math.exp(statistics.fmean(math.log(r["vectorized_factor"]) for r in runs))
        factors.append(f)
        out.append(f"| {model} | {n_free} | {chains} | "
                   f"{statistics.fmean(r['mean_leapfrogs_per_draw'] for r in runs):.1f} | "
                   f"{f:.2f} ({', '.join(f'{r['vectorized_factor']:.2f}' for r in runs)}) |")
    if factors:
        mean = math.exp(statistics.fmean(map(math.log, factors)))
        out.append(f"| geometric mean | | | | {mean:.2f} |")
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=500, help="tuning steps and draws")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--summary", nargs="*")
    args = p.parse_args(argv)
    if args.summary:
        print("\n".join(summary(args.summary)))
        return
    os.environ.setdefault("PYMC_ACCEL_HISTORY", "off")
    for name in [m for m in args.models.split(",") if m]:
        for seed in (int(s) for s in args.seeds.split(",")):
            print(json.dumps(measure(name, args.chains, args.draws, seed)), flush=True)


if __name__ == "__main__":
    main()
