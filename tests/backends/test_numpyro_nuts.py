from __future__ import annotations

import os
import subprocess
import sys

from pymc_accel.backends.numpyro_nuts import runnable_chain_method


def test_parallel_needs_a_device_per_chain():
    assert runnable_chain_method("parallel", n_devices=1, chains=2) == "vectorized"
    assert runnable_chain_method("parallel", n_devices=4, chains=2) == "parallel"
    assert runnable_chain_method("parallel", n_devices=1, chains=1) == "parallel"
    assert runnable_chain_method("vectorized", n_devices=8, chains=4) == "vectorized"


def test_device_discovery_gives_jax_a_cpu_device_per_core():
    # A fresh process where pymc-accel, not pymc.sampling.jax, starts JAX first.
    code = ("import pymc_accel, jax; pymc_accel.discover_devices(); "
            "print(len(jax.devices('cpu')))")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) >= 2
