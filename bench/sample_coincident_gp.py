"""NumPyro's NUTS on a GP whose kernel distances coincide, with and without the rewrite.

:mod:`pymc_accel.rewrites.coincident_distances` holds a GP kernel's distance between coinciding
inputs at an exact zero in the log density a JAX run compiles, because XLA rounded PyMC's
cancelling form differently in each place it computed it and JAX's gradient was wrong. This runs
one model (by default the user sweep's sparse GP) four ways, seeded alike, and prints one JSON
line each:

- ``pymc_nuts``: PyMC's own NUTS (PyTensor's gradient), the reference;
- ``pymc_numpyro``: ``pm.sample(nuts_sampler="numpyro")`` with no pymc-accel in the way, PyMC's
  jaxified log density under NumPyro;
- ``accel_numpyro``: ``pymc_accel.sample(nuts_sampler="numpyro")``, the rewrite on;
- ``accel_numpyro_unheld``: the same with
  :data:`pymc_accel.backends.run_logp.ZERO_COINCIDENT_DISTANCES` off;
- ``pymc_numpyro_held``: ``pm.sample(nuts_sampler="numpyro")`` inside
  ``pymc_accel.coincident_distances_held()``, PyMC's own NumPyro path with the distances held
  (run only when named in ``--ways``).

For each: the wall time of the call, the mean number of leapfrog steps a draw, divergences, the
largest R-hat and smallest bulk ESS over the free variables, and each variable's posterior mean
and sd::

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/sample_coincident_gp.py \\
        [--model sparse_gp] [--draws 300 --tune 300 --chains 2] [--ways a,b,...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

WAYS = ("pymc_nuts", "pymc_numpyro", "accel_numpyro", "accel_numpyro_unheld",
        "pymc_numpyro_held")


def run(way: str, model, draws: int, tune: int, chains: int, seed: int) -> dict:
    """One way's run and what it found."""
    import arviz as az
    import numpy as np
    import pymc as pm

    import pymc_accel
    from pymc_accel.backends import run_logp

    kwargs = dict(draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=False)
    start = time.perf_counter()
    if way == "pymc_nuts":
        with model:
            idata = pm.sample(**kwargs)
    elif way == "pymc_numpyro":
        with model:
            idata = pm.sample(nuts_sampler="numpyro", **kwargs)
    elif way == "pymc_numpyro_held":
        with model, pymc_accel.coincident_distances_held():
            idata = pm.sample(nuts_sampler="numpyro", **kwargs)
    else:
        run_logp.ZERO_COINCIDENT_DISTANCES = way == "accel_numpyro"
        try:
            idata = pymc_accel.sample(model=model, nuts_sampler="numpyro", **kwargs)
        finally:
            run_logp.ZERO_COINCIDENT_DISTANCES = True
    seconds = time.perf_counter() - start
    names = [rv.name for rv in model.free_RVs]
    summary = az.summary(idata, var_names=names)
    stats = idata.sample_stats
    steps = stats["n_steps"] if "n_steps" in stats else stats["tree_size"]
    return {
        "way": way, "seconds": round(seconds, 1),
        "mean_leapfrogs": round(float(np.mean(steps)), 1),
        "divergences": int(stats["diverging"].sum()),
        "max_r_hat": float(summary["r_hat"].max()),
        "min_ess_bulk": float(summary["ess_bulk"].min()),
        "posterior": {n: [float(summary.loc[n, "mean"]), float(summary.loc[n, "sd"])]
                      for n in summary.index},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="sparse_gp",
                        help="a name of compare_evaluator.models() (the zoo, held-out, sweep)")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ways", default=",".join(WAYS[:4]))
    args = parser.parse_args()
    from compare_evaluator import models

    for way in args.ways.split(","):
        if way not in WAYS:
            parser.error(f"unknown way {way!r}; one of {', '.join(WAYS)}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = run(way, models()[args.model](), args.draws, args.tune, args.chains,
                      args.seed)
        print(json.dumps({"model": args.model, **row}), flush=True)


if __name__ == "__main__":
    main()
