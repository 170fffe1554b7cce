"""Leapfrogs and wall time of the numba backend's two drivers, tuning included: the data the
cost model's per-leapfrog driver costs and PyMC's early-tuning gradients were fitted to
(``pymc_accel.costmodel``: ``NUMBA_NUTPIE``, ``NUMBA_PYMC``, ``pymc_tuning_extra_gradients``).

For each zoo model and each run length ``n`` (``n`` tune + ``n`` draws, 2 chains, seed 1) it
runs nutpie and PyMC's NUTS on the numba gradient, keeps the tuning draws, and prints one JSON
line per run: wall time and leapfrogs per chain (tuning and draws). Two lengths separate a
driver's fixed cost from its cost per leapfrog; the first run of a model is cold.

    JAX_PLATFORMS=cpu python bench/fit_tuning.py --models seed_large --lengths 100,800
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="eight_schools,glm_poisson,seed_small,seed_mid,seed_large")
    p.add_argument("--lengths", default="100,400", help="comma-separated n (n tune + n draws)")
    p.add_argument("--drivers", default="nutpie,pymc")
    args = p.parse_args(argv)

    import zoo

    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.registry import get_registry

    numba = get_registry().backends["numba"]
    for name in args.models.split(","):
        for driver in args.drivers.split(","):
            candidate = Candidate("numba", "cpu", "float64", (("driver", driver),))
            for n in map(int, args.lengths.split(",")):
                request = SampleRequest(draws=n, tune=n, chains=2, cores=2, random_seed=1,
                                        progressbar=False, quiet=True,
                                        compute_convergence_checks=False,
                                        discard_tuned_samples=False)
                model = zoo.zoo(quick=True)[name]()
                start = time.perf_counter()
                idata = numba.sample(model, candidate, request)
                wall = time.perf_counter() - start
                leapfrogs = float(idata.warmup_sample_stats["n_steps"].sum()
                                  + idata.sample_stats["n_steps"].sum()) / request.chains
                print(json.dumps({"model": name, "candidate": candidate.label, "n": n,
                                  "wall": round(wall, 2), "leapfrogs_per_chain": leapfrogs}),
                      flush=True)


if __name__ == "__main__":
    main()
