"""Each free variable's smallest bulk ESS under NumPyro's NUTS (Stan's windowed adaptation)
and nutpie's (its gradient-based mass matrix), at the tuning lengths given: which variable
sets a run's minimum, and whether NumPyro's gap to nutpie closes with longer tuning.

The cost model credits NumPyro with 0.85x nutpie's effective draws a gradient on every model
(``costmodel.NUTS_GRADIENT_EFFICIENCY``); on the non-centred group models its runs got from
0.5x to 1.0x, which the graph does not show (docs/benchmarks.md, "Three misses looked into on
the CPU"). One line a run, 2 chains, float64:

    JAX_PLATFORMS=cpu python bench/compare_adaptation_ess.py --model groups_503 \\
        --tunes 1000,3000 --seeds 1,2,3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: The samplers compared, as ``pymc_accel.sample`` keywords.
SAMPLERS = {
    "nutpie": {"nuts_sampler": "numba", "driver": "nutpie"},
    "numpyro": {"nuts_sampler": "numpyro", "precision": "float64"},
}


def run_once(name: str, sampler: str, tune: int, draws: int, seed: int) -> dict:
    """One run's wall, leapfrogs a draw and each variable's smallest bulk ESS."""
    import arviz as az
    import numpy as np

    import pymc_accel
    from fit_numpyro_tuning import _factory

    start = time.perf_counter()
    idata = pymc_accel.sample(model=_factory(name)(), draws=draws, tune=tune, chains=2,
                              random_seed=seed, progressbar=False,
                              compute_convergence_checks=False, **SAMPLERS[sampler])
    wall = time.perf_counter() - start
    ess = az.ess(idata.posterior.to_dataset(), method="bulk")
    per_variable = {k: float(np.min(v.values)) for k, v in ess.data_vars.items()}
    return {"sampler": sampler, "tune": tune, "seed": seed, "wall": wall,
            "leapfrogs_per_draw": float(idata.sample_stats["n_steps"].mean()),
            "ess": per_variable}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="groups_503")
    p.add_argument("--tunes", default="1000,3000", help="NumPyro's tuning lengths")
    p.add_argument("--nutpie-tune", type=int, default=1000)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seeds", default="1,2,3")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    plan = [("nutpie", args.nutpie_tune)] + [("numpyro", int(t)) for t in args.tunes.split(",")]
    rows = []
    for sampler, tune in plan:
        for seed in seeds:
            row = run_once(args.model, sampler, tune, args.draws, seed)
            rows.append(row)
            worst = min(row["ess"], key=row["ess"].get)
            print(f"{sampler} tune {tune} seed {seed}: wall {row['wall']:.1f} s, "
                  f"{row['leapfrogs_per_draw']:.1f} leapfrogs a draw, smallest ESS {worst} "
                  f"{row['ess'][worst]:.0f}; " + ", ".join(
                      f"{k} {v:.0f}" for k, v in row["ess"].items()), flush=True)
    reference = [r for r in rows if r["sampler"] == "nutpie"]
    print("| sampler | tune | variable | median smallest bulk ESS | against nutpie's "
          "| median leapfrogs a draw |")
    print("|---|---|---|---|---|---|")
    for sampler, tune in plan:
        mine = [r for r in rows if r["sampler"] == sampler and r["tune"] == tune]
        lf = statistics.median(r["leapfrogs_per_draw"] for r in mine)
        for var in mine[0]["ess"]:
            ess = statistics.median(r["ess"][var] for r in mine)
            ref = statistics.median(r["ess"][var] for r in reference)
            print(f"| {sampler} | {tune} | {var} | {ess:.0f} | {ess / ref:.2f} | {lf:.1f} |")
    return rows


if __name__ == "__main__":
    main()
