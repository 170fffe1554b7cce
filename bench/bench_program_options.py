"""Sampler options and JAX's compiled programs: is a run with another ``target_accept`` priced
as the compile it pays?

NumPyro compiles ``target_accept``, its keyword arguments and the kept variables into its
program, so a run that changes one of them compiles anew even though the model, data and run
length are the ones cached (``pymc_accel.history.program_options_key``). This script runs
NumPyro on eight schools through ``pymc_accel.sample`` five times in one process, with the run
history and JAX's compile cache in a new directory: the default, the default again,
``target_accept=0.95`` twice, and the default once more. Each line gives the run's wall time,
the selection's estimate of it, and the first compile the estimate charged.

    JAX_PLATFORMS=cpu python bench/bench_program_options.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings
from pathlib import Path


def main() -> None:
    """Run the sequence; print one line a run."""
    os.environ["PYMC_ACCEL_CACHE_DIR"] = tempfile.mkdtemp(prefix="pymc-accel-options-")
    os.environ["PYMC_ACCEL_HISTORY"] = "on"
    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(Path(__file__).parent))
    import pymc_accel
    from zoo import zoo

    factory = zoo(quick=True)["eight_schools"]
    run = dict(nuts_sampler="numpyro", device="cpu", precision="float64", draws=200, tune=200,
               chains=2)
    print("| run | options | estimated (s) | first compile charged (s) | wall (s) |")
    print("|---|---|---|---|---|")
    for i, options in enumerate([{}, {}, {"target_accept": 0.95}, {"target_accept": 0.95}, {}]):
        model = factory()
        report = pymc_accel.explain(model, **run, **options)
        start = time.perf_counter()
        pymc_accel.sample(model=model, progressbar=False, random_seed=1, **run, **options)
        wall = time.perf_counter() - start
        print(f"| {i + 1} | {options or 'defaults'} | "
              f"{report.estimate.total_seconds(400, 2):.2f} | "
              f"{report.estimate.cold_compile_seconds.value:.2f} | {wall:.2f} |", flush=True)


if __name__ == "__main__":
    main()
