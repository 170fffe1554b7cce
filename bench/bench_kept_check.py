"""What a kept float32 check saves a selection (``pymc_accel.check_store``).

Selects ``precision="float32"`` for a hierarchical logistic regression (50,000 rows, 5,000
groups, 20 covariates by default): its float32 check takes about 3 s. Three selections, each
of a model built afresh: the first (check run), the second in the same process (check read from
the process), then one in a new process (check read from disk). A private cache directory holds
this machine's figures and nothing else.

    JAX_PLATFORMS=cpu python bench/bench_kept_check.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _select_once(rows: int, groups: int, covariates: int) -> dict:
    import warnings

    warnings.filterwarnings("ignore")
    import pymc_accel
    from pymc_accel.models import hierarchical_logistic

    model = hierarchical_logistic(rows, groups, covariates).model
    start = time.perf_counter()
    report = pymc_accel.select(model, precision="float32", draws=1000, tune=1000, chains=2)
    return {"selection_seconds": time.perf_counter() - start,
            "check_kept": bool(report.precision_check.get("kept")),
            "check_seconds": report.precision_check["seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--groups", type=int, default=5_000)
    parser.add_argument("--covariates", type=int, default=20)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # the new process
    args = parser.parse_args()
    size = (args.rows, args.groups, args.covariates)
    if args.one:
        print(json.dumps(_select_once(*size)))
        return
    import shutil

    from pymc_accel.machine import cache_dir

    private = tempfile.mkdtemp(prefix="pymc-accel-kept-check-")
    for figures in cache_dir().glob("machine-*.json"):
        shutil.copy(figures, private)
    os.environ["PYMC_ACCEL_CACHE_DIR"] = private
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "on"
    results = {"model": dict(zip(("rows", "groups", "covariates"), size)),
               "first": _select_once(*size), "same_process": _select_once(*size)}
    out = subprocess.run([sys.executable, __file__, "--one", "--rows", str(args.rows),
                          "--groups", str(args.groups), "--covariates", str(args.covariates)],
                         capture_output=True, text=True, check=True, env=os.environ)
    results["new_process"] = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(results, indent=1))
    for key in ("first", "same_process", "new_process"):
        r = results[key]
        print(f"{key:12s}: selection {r['selection_seconds']:.2f} s "
              f"({'check read' if r['check_kept'] else 'check run'}: {r['check_seconds']:.2f} s)")
    shutil.rmtree(Path(private), ignore_errors=True)


if __name__ == "__main__":
    main()
