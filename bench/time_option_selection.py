"""A selection given sampler options, in a new process: its seconds, and which samplers'
libraries it imported to read their option lists (:mod:`pymc_accel.sampler_options`).

Each repeat is a new Python process that imports PyMC and pymc-accel, builds eight schools and
times ``select(model, backend=..., options=...)`` alone (the profile kept on disk from a first
process, so that the seconds are the option handling's and the ranking's), then reports
whether nutpie, NumPyro and ArviZ were imported by it. Medians over ``--repeats`` processes:

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/time_option_selection.py \\
        --options driver=pymc --options driver=pymc,step_scale=0.3 --repeats 5

Run it from outside the checkout with ``PYTHONPATH=<a worktree>`` to time other code.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import pymc_accel
from pymc_accel.devices import Devices
from pymc_accel.models import eight_schools
backend, options = sys.argv[1], json.loads(sys.argv[2])
before = {m for m in ("nutpie", "numpyro", "arviz") if m in sys.modules}
model = eight_schools()
devices = Devices(cpu_cores=2, jax_installed=True, note="bench: no GPU")
start = time.perf_counter()
report = pymc_accel.select(model, backend=backend, devices=devices, chains=2, options=options)
seconds = time.perf_counter() - start
imported = sorted(m for m in ("nutpie", "numpyro", "arviz") if m in sys.modules and m not in before)
print(json.dumps({"seconds": seconds, "chosen": report.chosen, "imported": imported}))
"""


def _options(text: str) -> dict:
    out = {}
    for pair in text.split(","):
        key, value = pair.split("=", 1)
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="numba")
    p.add_argument("--options", action="append", required=True,
                   help="name=value,... (repeat for several option sets)")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    print("| options | chosen | selection (s), median [range] | imported by the selection |")
    print("|---|---|---|---|")
    for text in args.options:
        options = _options(text)
        runs = []
        for i in range(args.repeats + 1):  # the first keeps the profile on disk: not counted
            out = subprocess.run([sys.executable, "-c", CHILD, args.backend, json.dumps(options)],
                                 capture_output=True, text=True, check=True)
            if i:
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        seconds = [r["seconds"] for r in runs]
        imported = sorted({", ".join(r["imported"]) or "none" for r in runs})
        print(f"| `{text}` | {runs[0]['chosen']} | {statistics.median(seconds):.3f} "
              f"[{min(seconds):.3f}–{max(seconds):.3f}] | {' / '.join(imported)} |")


if __name__ == "__main__":
    main()
