"""One chain's value-and-gradient under XLA on the CPU, in float64 and float32, with XLA's
intra-op threads on (JAX's default) and off.

NumPyro's chains on a CPU run one a core (``chain_method="parallel"``), so a run of as many
chains as cores leaves XLA's intra-op threads no core of their own. A gradient that leans on
them runs faster alone than beside another chain. Each setting runs in a new process
(XLA reads its flags once, when it starts). The gradient is timed inside one compiled loop of
``--passes`` passes whose position moves by a negligible step, so XLA cannot hoist it; best of
five, in microseconds a gradient:

    JAX_PLATFORMS=cpu python bench/time_gradient_threads.py --models seed_mid,glm_poisson
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: XLA's flags for one intra-op thread, the setting "off".
NO_THREADS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def time_gradient(name: str, precision: str, passes: int) -> float:
    """Seconds of one value-and-gradient of zoo model ``name`` in ``precision``, one chain,
    inside a compiled loop (the log density pymc-accel's CPU runs jaxify)."""
    import jax
    import jax.numpy as jnp
    from fit_numpyro_tuning import _factory, numpyro_inputs

    from pymc_accel.backends.jax_model import jax_precision

    with jax_precision(precision):
        logp, x0 = numpyro_inputs(_factory(name)(), precision)
        value_and_grad = jax.value_and_grad(lambda x: logp([x]))

        @jax.jit
        def loop(x):
            def one(_, carry):
                x, total = carry
                value, grad = value_and_grad(x)
                return x + 1e-30 * grad, total + value
            return jax.lax.fori_loop(0, passes, one, (x, jnp.zeros((), x.dtype)))[1]

        jax.block_until_ready(loop(x0[0]))
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            jax.block_until_ready(loop(x0[0]))
            best = min(best, time.perf_counter() - start)
    return best / passes


def in_new_process(name: str, threads: bool, passes: int) -> dict:
    """Both precisions' gradient seconds of ``name`` in a new process, XLA's intra-op threads
    on or off."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if threads:
        env.pop("XLA_FLAGS", None)
    else:
        env["XLA_FLAGS"] = NO_THREADS
    out = subprocess.run([sys.executable, __file__, "--one", name, "--passes", str(passes)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seed_mid,seed_small,glm_poisson")
    p.add_argument("--passes", type=int, default=300)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a worker's model
    args = p.parse_args(argv)
    if args.one:
        sys.path.insert(0, str(HERE))
        print(json.dumps({precision: time_gradient(args.one, precision, args.passes)
                          for precision in ("float64", "float32")}))
        return []
    rows = []
    print("| model | threads | float64 (µs) | float32 (µs) | float64 / float32 |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        for threads in (True, False):
            got = in_new_process(name, threads, args.passes)
            rows.append({"model": name, "threads": threads, **got})
            print(f"| {name} | {'on' if threads else 'off'} | {got['float64'] * 1e6:.1f} | "
                  f"{got['float32'] * 1e6:.1f} | {got['float64'] / got['float32']:.2f} |",
                  flush=True)
    return rows


if __name__ == "__main__":
    main()
