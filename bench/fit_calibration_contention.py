"""The machine's calibration alone and with other work on its cores: what it measures, and
whether the share of a core it got tells the two apart.

The calibration (``pymc_accel.machine.calibrate``) keeps each figure's best round over 2 s, which
rides out a short slow stretch; work that keeps the cores busy for the whole 2 s (a test run, a
compile, another sampler) still lowers every figure, and the figures are cached until
``pymc-accel calibrate``. Here: calibrate with the machine idle, then with ``--busy`` processes
spinning, then idle again, and print each calibration's figures and its CPU share (process
CPU time over wall time: about 1 for the single-threaded calibration on a core of its own).

    python bench/fit_calibration_contention.py --busy 2 --out docs/results/fit-calibration-contention-cpu.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time


def _spin(stop):
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def _calibrate() -> dict:
    from pymc_accel import machine

    cpu, wall = time.process_time(), time.perf_counter()
    figures = machine.calibrate()
    share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return {"exp_flops_float64": figures.cpu_flops["float64"],
            "bandwidth_float64": figures.cpu_bandwidth["float64"],
            "matmul_float64": figures.cpu_matmul_flops["float64"],
            "call_seconds": figures.cpu_call_seconds,
            "cpu_share_timed_here": share,
            "cpu_share": getattr(figures, "cpu_share", None)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--busy", type=int, default=2, help="spinning processes during the middle run")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    _calibrate()  # imports and first compiles out of the way
    out = {"idle_before": _calibrate()}
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(args.busy)]
    for w in workers:
        w.start()
    time.sleep(1.0)
    try:
        out[f"busy_{args.busy}"] = _calibrate()
    finally:
        stop.set()
        for w in workers:
            w.join()
    time.sleep(1.0)
    out["idle_after"] = _calibrate()
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
