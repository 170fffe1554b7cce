"""NumPyro's chains on fewer CPU devices than chains: vectorized, or one after another?

JAX has one CPU device when it started before pymc-accel could ask XLA for one per core, and
``pm.sample(chains=8)`` on a 2-core machine has more chains than its four devices. NumPyro's
``"vectorized"`` (and pymc-accel's chain map, until 2026-11-27) vmapped the chains a device
could not seat alone. Each layout here runs in a fresh process with XLA's host device count
set, ``--repeats`` runs of ``--draws`` + ``--draws`` draws of NumPyro on the CPU; the table
gives each layout's first (compiling) run and the median of the later ones:

    JAX_PLATFORMS=cpu python bench/bench_cpu_chain_layout.py --models seed_mid,eight_schools
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

# (CPU devices, chains, layout name, candidate options)
LAYOUTS = (
    (1, 2, "vectorized", (("chain_method", "vectorized"),)),
    (1, 2, "one after another", (("chain_method", "sequential"),)),
    (2, 4, "vectorized pairs", (("chain_method", "parallel"), ("chains_at_once", 2))),
    (2, 4, "rounds of one a device", (("chain_method", "parallel"), ("chains_at_once", 1))),
)

_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, "bench")
os.environ["PYMC_ACCEL_HISTORY"] = "off"
from zoo import zoo
from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.registry import get_registry
name, chains, draws, repeats, options = json.loads(sys.argv[1])
factory = (zoo(quick=True) | __import__("zoo").held_out())[name]
candidate = Candidate("numpyro", "cpu", "float64", tuple(map(tuple, options)))
backend = get_registry().backends["numpyro"]
walls = []
for i in range(repeats):
    t = time.perf_counter()
    backend.sample(factory(), candidate, SampleRequest(draws=draws, tune=draws, chains=chains,
                   cores=chains, random_seed=i + 1, progressbar=False))
    walls.append(time.perf_counter() - t)
print(json.dumps(walls))
"""


def run_with_cpu_devices(code: str, arguments: list, devices: int):
    """Run ``code`` in a fresh Python process whose JAX has ``devices`` CPU devices, with
    ``arguments`` as JSON in ``sys.argv[1]``; the JSON its last line prints."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(arguments)],
        capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1],
        timeout=1800)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_layout(name: str, devices: int, chains: int, options, draws: int, repeats: int) -> list:
    """Walls of ``repeats`` runs in one fresh process with ``devices`` CPU devices."""
    return run_with_cpu_devices(_CHILD, [name, chains, draws, repeats, options], devices)


def table(rows: list[dict]) -> list[str]:
    """A Markdown table of the layouts' walls, with each layout's later runs against the
    vectorized layout's on the same devices."""
    out = ["| model | CPU devices | chains | layout | first run (s) | later runs, median (s) | "
           "vectorized / this |", "|---|---|---|---|---|---|---|"]
    base = {}
    for r in rows:
        later = statistics.median(r["walls"][1:])
        if "vectorized" in r["layout"]:
            base[(r["model"], r["devices"])] = later
        ratio = base.get((r["model"], r["devices"]), later) / later
        out.append(f"| {r['model']} | {r['devices']} | {r['chains']} | {r['layout']} | "
                   f"{r['walls'][0]:.2f} | {later:.2f} | {ratio:.2f} |")
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="seed_mid,eight_schools")
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        for devices, chains, layout, options in LAYOUTS:
            walls = run_layout(name, devices, chains, options, args.draws, args.repeats)
            rows.append({"model": name, "devices": devices, "chains": chains,
                         "layout": layout, "walls": walls})
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
