"""Side-by-side ESS/s of every pymc-accel candidate and of pm.sample()'s default.

For each model (eight schools; the demo's hierarchical logistic regression) and each candidate
runnable on this machine, sample with the same draws, chains and seed, ``--repeats`` times, and
record wall time (compilation included), minimum bulk ESS over all parameters, ESS/s, mean
leapfrog steps per draw, and what ``auto`` chose with its estimate. The first repeat of each
candidate is cold for that process (JAX and numba in-memory caches empty; numba's on-disk cache
may be warm from earlier runs), later repeats are warm; the medians are reported.

    python bench/bench_pipeline.py --out docs/benchmarks-pipeline.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from importlib.metadata import version

import arviz as az
import numpy as np
import pymc as pm

import pymc_accel
from pymc_accel.backend import SampleRequest
from pymc_accel.devices import cpu_cores
from pymc_accel.models import eight_schools, hierarchical_logistic
from pymc_accel.registry import get_registry

warnings.filterwarnings("ignore")


def min_ess(idata) -> float:
    ess = az.ess(idata.posterior.to_dataset(), method="bulk")
    return float(min(float(ess[v].min()) for v in ess.data_vars))


def mean_steps(idata) -> float:
    stats = idata.sample_stats
    return float(stats["n_steps"].mean()) if "n_steps" in stats else float("nan")


def run_candidate(model_fn, candidate, request):
    model = model_fn()
    backend = get_registry().backends[candidate.backend]
    start = time.perf_counter()
    idata = backend.sample(model, candidate, request)
    return time.perf_counter() - start, idata


def run_pm_default(model_fn, request):
    model = model_fn()
    start = time.perf_counter()
    idata = pm.sample(request.draws, tune=request.tune, chains=request.chains,
                      random_seed=request.random_seed, progressbar=False, model=model,
                      compute_convergence_checks=False)
    return time.perf_counter() - start, idata


def bench_model(name, model_fn, draws, tune, chains, repeats, seed):
    request = SampleRequest(draws=draws, tune=tune, chains=chains, cores=min(4, cpu_cores()),
                            random_seed=seed, progressbar=False, quiet=True,
                            compute_convergence_checks=False)
    profile = pymc_accel.profile_model(model_fn())
    report = pymc_accel.select(profile=profile, draws=draws, tune=tune, chains=chains)
    rows = []
    runs = [(r.label, r) for r in report.rows if r.status != "refused"]
    candidates = {c.label: c for c in _candidates(profile)}
    for label, row in runs + [("pm.sample() default", None)]:
        walls, ess, steps = [], None, None
        for _ in range(repeats):
            if row is None:
                wall, idata = run_pm_default(model_fn, request)
            else:
                wall, idata = run_candidate(model_fn, candidates[label], request)
            walls.append(wall)
            ess, steps = min_ess(idata), mean_steps(idata)
        med = statistics.median(walls)
        rows.append({
            "candidate": label, "estimated_seconds": row.total_seconds if row else None,
            "wall_seconds": walls, "median_wall": med, "cold_wall": walls[0],
            "min_bulk_ess": ess, "ess_per_s_median": ess / med,
            "ess_per_s_range": [ess / max(walls), ess / min(walls)], "mean_leapfrog_steps": steps,
        })
        print(f"{name:10s} {label:45s} wall {med:7.1f}s (runs {', '.join(f'{w:.1f}' for w in walls)})"
              f" ess {ess:7.0f} ess/s {ess / med:7.1f} steps {steps:5.1f}", flush=True)
    best = max(r["ess_per_s_median"] for r in rows)
    chosen = next(r for r in rows if r["candidate"] == report.chosen)
    return {
        "model": name, "draws": draws, "tune": tune, "chains": chains, "repeats": repeats,
        "auto_chose": report.chosen, "selection_seconds": report.selection_seconds,
        "regret": best / chosen["ess_per_s_median"], "rows": rows,
        "profile": report.profile,
    }


def _candidates(profile):
    # The report holds labels; rebuild the Candidate objects from the backends' own answers
    # for the profile the selection used.
    from pymc_accel.devices import discover

    out = []
    for backend in get_registry().backends.values():
        out += [c for c in backend.candidates(profile, discover())
                if isinstance(c, pymc_accel.Candidate)]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--models", default="eight_schools,demo")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    # a blind first selection, as bench_regret.py makes: no run history of earlier runs on this
    # machine (and so no first compile charged, which the warm rows here do not pay)
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    zoo = {
        "eight_schools": eight_schools,
        "demo": lambda: hierarchical_logistic(5000, 500, 10).model,
    }
    results = {
        "command": "python bench/bench_pipeline.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{platform.machine()}, {cpu_cores()} cores, {platform.python_version()}",
        "versions": {p: version(p) for p in ("pymc", "pytensor", "nutpie", "numpyro", "jax", "numba")},
        "models": [bench_model(m, zoo[m], args.draws, args.tune, args.chains, args.repeats, 1)
                   for m in args.models.split(",")],
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
