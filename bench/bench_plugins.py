"""The plugin backends beside the built-ins: wall time, ESS and ESS/s on two models.

Models: eight schools (non-centred, 10 dimensions) and a 50-dimensional Gaussian with AR(1)
correlation 0.95 (where a low-rank mass matrix should help and a diagonal one cannot capture the
correlation). Each CPU float64 candidate of the backends named below is sampled once with the same
draws, chains and seed; wall time includes compilation (caches warm from the test suite).

    python bench/bench_plugins.py --out docs/benchmarks-plugins.json
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import arviz as az
import numpy as np
import pymc as pm

from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.machine import machine_figures
from pymc_accel.models import eight_schools
from pymc_accel.profile import profile_model
from pymc_accel.registry import get_registry
from pymc_accel.testing import CPU_ONLY

warnings.filterwarnings("ignore")
BACKENDS = ("numba", "numpyro", "blackjax_nuts", "blackjax_mclmc", "nutpie_jax")


def correlated_gaussian(d: int = 50, rho: float = 0.95) -> pm.Model:
    """x ~ N(0, S) with S_ij = rho^|i-j|: posterior known, strongly correlated neighbours."""
    idx = np.arange(d)
    cov = rho ** np.abs(idx[:, None] - idx[None])
    with pm.Model(coords={"i": idx}) as model:
        pm.MvNormal("x", mu=np.zeros(d), cov=cov, dims="i")
    return model


def run(model_fn, candidate, request) -> dict:
    model = model_fn()
    backend = get_registry().backends[candidate.backend]
    est = backend.estimate(candidate, profile_model(model), machine_figures())
    start = time.perf_counter()
    idata = backend.sample(model, candidate, request)
    wall = time.perf_counter() - start
    post = idata.posterior.to_dataset()
    ess = az.ess(post, method="bulk")
    min_ess = float(min(float(ess[v].min()) for v in ess.data_vars))
    row = {"candidate": candidate.label, "wall_s": round(wall, 2), "min_bulk_ess": round(min_ess),
           "ess_per_s": round(min_ess / wall, 1),
           "estimate_s": round(est.total_seconds(request.steps, request.chains), 2)}
    if model_fn is correlated_gaussian:  # truth: mean 0, sd 1
        x = post["x"].values.reshape(-1, post.sizes["i"])
        row["max_abs_mean"] = round(float(np.abs(x.mean(0)).max()), 3)
        row["max_abs_sd_error"] = round(float(np.abs(x.std(0) - 1).max()), 3)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--out")
    args = parser.parse_args()
    request = SampleRequest(draws=args.draws, tune=args.draws, chains=2, cores=2,
                            random_seed=1, progressbar=False, quiet=True,
                            compute_convergence_checks=False)
    registry = get_registry()
    results = {}
    for model_fn in (eight_schools, correlated_gaussian):
        rows = []
        for name in BACKENDS:
            if name not in registry.backends:
                continue
            for c in registry.backends[name].candidates(profile_model(model_fn()), CPU_ONLY):
                if isinstance(c, Candidate) and c.device == "cpu" and c.precision == "float64":
                    rows.append(run(model_fn, c, request))
                    print(model_fn.__name__, rows[-1], flush=True)
        results[model_fn.__name__] = rows
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"draws": args.draws, "chains": 2, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
