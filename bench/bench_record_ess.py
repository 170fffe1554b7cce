"""The run record's effective draws: does its screen find the smallest bulk ESS, and what
does it cost against computing every element's?

``pymc_accel.history.observed_ess_per_draw`` takes up to ``ESS_ELEMENTS_PER_VARIABLE``
elements of each posterior variable, screens them by ArviZ's ESS of the mean and computes the
bulk ESS of the ``ESS_SCREENED_SERIES`` slowest. For each model and sampler this samples one
run (``--draws`` + ``--draws`` x 2 chains, ``--seed``) and sets the record's figure beside the
smallest bulk ESS over every element taken, computed as the record did before the screen
(ArviZ's ``ess`` on an xarray Dataset of them all), with the median time of each over
``--repeats`` calls:

    JAX_PLATFORMS=cpu python bench/bench_record_ess.py --out docs/results/record-ess-cpu-2026-11-27.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

MODELS = ("eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid,seed_large,"
          "student_t_7,logistic_31,groups_53,logistic_101,wide_202,poisson_groups_303,groups_503")


def every_element(idata) -> float:
    """The smallest bulk ESS over every element the record takes, as it computed it before the
    screen: ArviZ on an xarray Dataset of them all."""
    import numpy as np
    import xarray as xr
    from arviz_stats import ess

    from pymc_accel.history import ESS_ELEMENTS_PER_VARIABLE

    taken = {}
    for name, var in idata.posterior.data_vars.items():
        values = np.asarray(var.values).reshape(var.shape[0], var.shape[1], -1)
        if values.shape[2] > ESS_ELEMENTS_PER_VARIABLE:
            picks = np.linspace(0, values.shape[2] - 1, ESS_ELEMENTS_PER_VARIABLE).round()
            values = values[:, :, picks.astype(int)]
        taken[str(name)] = (("chain", "draw", f"{name}_element"), values)
    result = ess(xr.Dataset(taken), method="bulk")
    return min(float(np.nanmin(result[name].values)) for name in taken)


def timed(fn, idata, repeats: int) -> tuple[float, float]:
    """``fn(idata)`` and its median seconds over ``repeats`` calls after a first."""
    value = fn(idata)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(idata)
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=MODELS)
    p.add_argument("--samplers", default="numpyro,numba")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--out", default=None, help="also append the rows here, as JSON lines")
    args = p.parse_args(argv)
    import arviz_stats  # noqa: F401  (loaded, as PyMC's convergence checks load it)

    import pymc_accel
    from pymc_accel import history
    from zoo import held_out, zoo

    models = zoo(quick=True) | held_out()
    print("| model | sampler | elements taken | smallest bulk ESS, every element | the record's | "
          "every element (ms) | the record (ms) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        for sampler in args.samplers.split(","):
            idata = pymc_accel.sample(
                model=models[name](), nuts_sampler=sampler, draws=args.draws, tune=args.draws,
                chains=2, progressbar=False, random_seed=args.seed,
                compute_convergence_checks=False)
            full, full_seconds = timed(every_element, idata, args.repeats)
            per_draw, seconds = timed(history.observed_ess_per_draw, idata, args.repeats)
            record = None if per_draw is None else per_draw * 2 * args.draws
            taken = sum(min(v.size // (2 * args.draws), history.ESS_ELEMENTS_PER_VARIABLE)
                        for v in idata.posterior.data_vars.values())
            row = {"model": name, "sampler": sampler, "elements": taken, "every_element": full,
                   "record": record, "every_element_ms": full_seconds * 1e3,
                   "record_ms": seconds * 1e3}
            shown = "under the minimum" if record is None else f"{record:.1f}"
            print(f"| {name} | {sampler} | {taken} | {full:.1f} | {shown} | "
                  f"{full_seconds * 1e3:.1f} | {seconds * 1e3:.1f} |", flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
