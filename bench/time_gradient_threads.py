"""One chain's value-and-gradient under XLA on the CPU, in float64 and float32, with XLA's
intra-op threads on (JAX's default) and off.

NumPyro's chains on a CPU run one a core (``chain_method="parallel"``), so a run of as many
chains as cores leaves XLA's intra-op threads no core of their own. A gradient that leans on
them runs faster alone than beside another chain. Each setting runs in a new process
(XLA reads its flags once, when it starts). The gradient is timed as measured mode times it,
inside one compiled loop (``_measure.time_jax_sampler_gradient``, one chain), in microseconds
a gradient:

    JAX_PLATFORMS=cpu python bench/time_gradient_threads.py --models seed_mid,glm_poisson
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: XLA's flags for one intra-op thread, the setting "off".
NO_THREADS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def time_gradient(name: str, precision: str, budget: float) -> float:
    """Seconds of one value-and-gradient of zoo model ``name`` in ``precision``, one chain,
    inside a compiled loop, as measured mode times it (the log density pymc-accel's CPU runs
    jaxify)."""
    from fit_numpyro_tuning import _factory

    from pymc_accel.backends import _measure

    timed = _measure.time_jax_sampler_gradient(_factory(name)(), precision, 1, budget)
    if timed is None:
        raise RuntimeError(f"{name}'s {precision} gradient was not resolved in {budget} s")
    return timed[1]


def in_new_process(name: str, threads: bool, budget: float) -> dict:
    """Both precisions' gradient seconds of ``name`` in a new process, XLA's intra-op threads
    on or off."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if threads:
        env.pop("XLA_FLAGS", None)
    else:
        env["XLA_FLAGS"] = NO_THREADS
    out = subprocess.run([sys.executable, __file__, "--one", name, "--budget", str(budget)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seed_mid,seed_small,glm_poisson")
    p.add_argument("--budget", type=float, default=10.0,
                   help="seconds for each precision's compile and timing")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a worker's model
    args = p.parse_args(argv)
    if args.one:
        sys.path.insert(0, str(HERE))
        print(json.dumps({precision: time_gradient(args.one, precision, args.budget)
                          for precision in ("float64", "float32")}))
        return []
    rows = []
    print("| model | threads | float64 (µs) | float32 (µs) | float64 / float32 |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        for threads in (True, False):
            got = in_new_process(name, threads, args.budget)
            rows.append({"model": name, "threads": threads, **got})
            print(f"| {name} | {'on' if threads else 'off'} | {got['float64'] * 1e6:.1f} | "
                  f"{got['float32'] * 1e6:.1f} | {got['float64'] / got['float32']:.2f} |",
                  flush=True)
    return rows


if __name__ == "__main__":
    main()
