"""The first selection in a new process, as a script or notebook meets it: PyMC and ArviZ
imported first (``import arviz`` registers ``jax`` and ``numpyro`` lazily), the model's profile
already stored on disk from an earlier process, and the machine's figures cached. Times
``pymc_accel.select`` in fresh processes and says whether it imported JAX.

    JAX_PLATFORMS=cpu python bench/bench_first_selection.py --models eight_schools,seed_large --repeats 3
    JAX_PLATFORMS=cpu python bench/bench_first_selection.py --checkout /path/to/other/worktree ...
    JAX_PLATFORMS=cpu python bench/bench_first_selection.py --options '{"max_treedepth": 12}' ...

``--checkout`` puts another source tree first on the import path (an earlier commit in a
``git worktree``), for a side-by-side comparison on one environment and cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_WORKER = """
import sys, time
sys.path.insert(0, {bench!r})
import arviz, pymc  # what a notebook imports first
import pymc_accel, zoo
assert pymc_accel.__file__.startswith({checkout!r}), pymc_accel.__file__
model = zoo.zoo(quick=True)[{model!r}]()
start = time.perf_counter()
report = pymc_accel.select(model, draws=1000, tune=1000, chains=2, options={options!r})
took = time.perf_counter() - start
print({{"seconds": took, "jax_imported": "jax.numpy" in sys.modules, "chosen": report.chosen}})
"""


def first_selection(model: str, checkout: Path, options: dict | None = None) -> dict:
    """One new process's first selection of ``model`` with ``checkout``'s pymc_accel, given
    the sampler ``options`` (``nuts={...}``)."""
    code = _WORKER.format(bench=str(HERE), checkout=str(checkout), model=model,
                          options=options or None)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=str(checkout)).stdout.strip().splitlines()[-1]
    import ast

    return ast.literal_eval(out)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="eight_schools,seed_large")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--checkout", default=str(HERE.parent))
    p.add_argument("--options", default=None,
                   help='sampler options as JSON, as nuts={...} gives them: \'{"max_treedepth": 12}\'')
    p.add_argument("--out", default=None, help="JSON file for the results")
    args = p.parse_args(argv)
    checkout = Path(args.checkout).resolve()
    options = json.loads(args.options) if args.options else None
    results = []
    for model in args.models.split(","):
        first_selection(model, checkout, options)  # stores the profile: later processes read it
        runs = [first_selection(model, checkout, options) for _ in range(args.repeats)]
        row = {"model": model, "checkout": str(checkout), "options": options,
               "median_seconds": statistics.median(r["seconds"] for r in runs), "runs": runs}
        results.append(row)
        print(json.dumps(row))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
