"""A model's first run against its second, each in a fresh cache directory, beside NumPyro's
estimate: what the cost model charges a first run (its cold compile and its runtime's first use)
and what the run took beyond a cached one.

For each model (the user sweep's, by function name, or the zoo's), in a new process whose
``PYMC_ACCEL_CACHE_DIR`` is a new empty directory (so JAX's compile cache, PyTensor's
kernels kept by pymc-accel and the run history start empty): ``select`` restricted to the
``--sampler`` (NumPyro's float64 by default; ``pymc`` and ``nutpie``, the numba backend's
drivers) prints the estimate, its fixed seconds, its cold compile and its first use; then the
model is sampled twice (1000 + 1000 draws, 2 chains, seed 1) and each run's wall time printed.

    JAX_PLATFORMS=cpu python bench/time_first_runs.py --models gaussian_copula,wald_regression
    JAX_PLATFORMS=cpu python bench/time_first_runs.py --models intervals_2 --sampler pymc \
        --cold-pytensor
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _model(name: str):
    import pymc as pm

    import sweep_user_models
    import zoo

    found = {f.__name__: f for f in sweep_user_models.MODELS}
    if name in found:
        return found[name](pm)
    return {**zoo.zoo(quick=True), **zoo.named()}[name]()


#: ``--sampler`` names: the backend and its options (``pymc_accel.sample``'s keywords).
SAMPLERS = {"numpyro": ("numpyro", {}), "pymc": ("numba", {"driver": "pymc"}),
            "nutpie": ("numba", {"driver": "nutpie"})}


def one(name: str, sampler: str = "numpyro") -> None:
    """Run one model in this process (a worker): print its estimate and its two runs."""
    warnings.filterwarnings("ignore")
    import pymc_accel
    from pymc_accel.selection import select

    backend, options = SAMPLERS[sampler]
    report = select(_model(name), backend=backend, precision="float64", chains=2,
                    draws=1000, tune=1000, options=options)
    row = next(r for r in report.rows if r.status == "chosen")
    cold, first_use = row.cold_compile_seconds or 0.0, row.first_use_seconds or 0.0
    print(f"{name}: estimated {row.total_seconds:.2f} s (fixed {row.fixed_seconds:.2f}, cold "
          f"compile {cold:.2f}, first use {first_use:.2f})", flush=True)
    walls = []
    for _ in range(2):
        start = time.perf_counter()
        pymc_accel.sample(model=_model(name), nuts_sampler=backend, precision="float64",
                          draws=1000, tune=1000, chains=2, progressbar=False, quiet=True,
                          random_seed=1, **options)
        walls.append(time.perf_counter() - start)
    print(f"{name}: first run {walls[0]:.2f} s, second {walls[1]:.2f} s, first beyond second "
          f"{walls[0] - walls[1]:.2f} s; charged beyond the estimate's warm run "
          f"{cold + first_use:.2f} s", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", required=True)
    p.add_argument("--sampler", choices=sorted(SAMPLERS), default="numpyro",
                   help="the sampler whose first run is timed (default: NumPyro's float64)")
    p.add_argument("--cold-pytensor", action="store_true",
                   help="give each model's process a new empty PyTensor compile directory too "
                        "(its C and numba caches: a numba run's first compile is then cold)")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        one(args.one, args.sampler)
        return 0
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "PYMC_ACCEL_CACHE_DIR": cache}
            if args.cold_pytensor:  # PyTensor's numba cache is base_compiledir/numba
                flags = env.get("PYTENSOR_FLAGS", "")
                env["PYTENSOR_FLAGS"] = f"{flags},base_compiledir={cache}/pytensor".strip(",")
            done = subprocess.run([sys.executable, __file__, "--models", name, "--one", name,
                                   "--sampler", args.sampler],
                                  env=env, capture_output=True, text=True, timeout=1800)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith(f"{name}:")]
            print("\n".join(lines) or f"{name}: failed: {done.stderr[-300:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
