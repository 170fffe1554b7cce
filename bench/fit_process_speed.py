"""Does a new Python process on this machine run at one of two speeds?

NumPyro's leapfrogs on glm_poisson and seed_small ran at one of two speeds 2x apart, differing
by process (docs/benchmarks.md), and the calibration's call overhead came out 3.5 or 6.5 µs on
a quiet machine. Here each of ``--processes`` fresh processes, one after another, times the
calibration's call overhead (``machine.call_overhead_seconds``: a compiled PyTensor function
called from Python) three times, NumPy's ``exp`` over 1M doubles, and a pure-Python loop, and
says which CPU it last ran on; ``--pin`` pins each process to one CPU in turn (``os.sched_setaffinity``).

    python bench/fit_process_speed.py --processes 8 --out docs/results/fit-process-speed-cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = r"""
import json, os, time
import numpy as np
from pymc_accel.machine import _best_of, call_overhead_seconds

calls = [call_overhead_seconds() for _ in range(3)]
a, out = np.random.default_rng(0).random(1 << 20), np.empty(1 << 20)
best = _best_of(lambda: np.exp(a, out=out), repeats=20)
t = time.perf_counter()
total = 0
for i in range(1_000_000):
    total += i
loop = time.perf_counter() - t
with open("/proc/self/stat") as f:  # field 39: the CPU the process last ran on
    last_cpu = int(f.read().rsplit(")", 1)[1].split()[36])
print(json.dumps({"allowed_cpus": sorted(os.sched_getaffinity(0)), "last_cpu": last_cpu,
                  "call_us": [round(c * 1e6, 2) for c in calls],
                  "exp_ms": round(best * 1e3, 3), "python_loop_ms": round(loop * 1e3, 1)}))
"""


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--processes", type=int, default=8)
    p.add_argument("--pin", action="store_true", help="pin process i to CPU i mod cores")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    rows = []
    for i in range(args.processes):
        cmd = [sys.executable, "-c", _CHILD]
        if args.pin:
            cpu = cores[i % len(cores)]
            cmd = [sys.executable, "-c",
                   f"import os; os.sched_setaffinity(0, {{{cpu}}}); exec({_CHILD!r})"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(row, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"command": " ".join(["python", *sys.argv]), "rows": rows}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
