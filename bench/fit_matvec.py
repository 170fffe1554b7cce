"""Matrix-vector products' bandwidth under numba, and NumPyro's cost per leapfrog on models whose
gradient is mostly matrix-vector products: the figures behind
``pymc_accel.costmodel.NUMBA_MATVEC_BANDWIDTH_FACTOR`` (docs/benchmarks.md, "Matrix-vector
products").

``numba`` lines: a PyTensor function (numba mode) of ``X @ b`` and ``X.T @ r`` alone for a
constant ``X`` of each shape, one BLAS thread, median of 7 x 200 calls; its bytes (``X`` twice,
the vectors) per second as a multiple of NumPy's bandwidth as machine calibration measured it.

``numpyro`` lines (``--numpyro MODELS``): for each zoo or held-out model in float64, the
gradient timed inside one jitted ``fori_loop`` (what XLA runs when a loop is compiled whole),
and NumPyro's NUTS at two lengths (200 and 1200 tune + draws, two chains side by side on two XLA
CPU devices) with *every* leapfrog counted, tuning included: the longer run less the shorter
over the leapfrogs between them is NumPyro's cost per leapfrog; ``modelled`` is what
``costmodel.JAX_CPU_SAMPLER`` gives for it.

    JAX_PLATFORMS=cpu python bench/fit_matvec.py --numpyro logistic_101,wide_202,glm_poisson \\
        > docs/results/fit-matvec-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SHAPES = ((3000, 100), (1000, 200), (5000, 20), (2000, 30), (2000, 10), (20000, 20),
          (100000, 20))


def numba_matvec(n: int, p: int, bandwidth: float) -> dict:
    """One ``numba`` line: seconds of ``X @ b`` and ``X.T @ r`` for an ``n x p`` ``X``."""
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from threadpoolctl import threadpool_limits

    X = pt.constant(np.random.default_rng(0).normal(size=(n, p)))
    b, r = pt.vector("b"), pt.vector("r")
    fn = pytensor.function([b, r], [pt.dot(X, b), pt.dot(X.T, r)], mode="NUMBA")
    fn.trust_input = True
    bv, rv = np.ones(p), np.ones(n)
    with threadpool_limits(1, user_api="blas"):
        fn(bv, rv)
        times = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(200):
                fn(bv, rv)
            times.append((time.perf_counter() - start) / 200)
    seconds = float(np.median(times))
    nbytes = 8.0 * 2 * (n * p + n + p)
    return {"kind": "numba", "shape": [n, p], "seconds": seconds, "bytes": nbytes,
            "bandwidth_factor": nbytes / seconds / bandwidth}


def numpyro_per_leapfrog(name: str, machine) -> dict:
    """One ``numpyro`` line for a zoo or held-out model (float64)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from numpyro.infer import MCMC, NUTS
    from pymc.sampling.jax import get_jaxified_logp

    import zoo
    from pymc_accel import costmodel
    from pymc_accel.profile import profile_model

    jax.config.update("jax_enable_x64", True)
    factory = zoo.held_out().get(name) or zoo.zoo(quick=True).get(name) or zoo.shapes()[name]
    model = factory()
    logp = get_jaxified_logp(model)
    start = model.initial_point()
    x0 = [jnp.asarray(start[v.name], dtype="float64") for v in model.value_vars]

    def potential(xs):
        return -logp(xs)

    @jax.jit
    def loop(xs):
        def body(_, c):
            g = jax.grad(potential)(c)
            return [ci - 1e-6 * gi for ci, gi in zip(c, g)]
        return jax.lax.fori_loop(0, 500, body, xs)

    jax.block_until_ready(loop(x0))
    in_loop = []
    for _ in range(5):
        t = time.perf_counter()
        jax.block_until_ready(loop(x0))
        in_loop.append((time.perf_counter() - t) / 500)

    chains = 2
    init = [jnp.stack([a] * chains) for a in x0]
    kernel = NUTS(potential_fn=potential, target_accept_prob=0.8)
    runs = {}
    for n in (200, 200, 1200):  # the first 200 traces the model: its second run is kept
        mcmc = MCMC(kernel, num_warmup=n, num_samples=n, num_chains=chains,
                    chain_method="parallel", progress_bar=False)
        t = time.perf_counter()
        mcmc.warmup(jax.random.PRNGKey(1), init_params=init, extra_fields=("num_steps",),
                    collect_warmup=True)
        steps = np.asarray(mcmc.get_extra_fields()["num_steps"]).sum() / chains
        mcmc.run(jax.random.PRNGKey(2), extra_fields=("num_steps",))
        jax.block_until_ready(mcmc.get_samples())
        wall = time.perf_counter() - t
        steps += np.asarray(mcmc.get_extra_fields()["num_steps"]).sum() / chains
        runs[n] = (wall, float(steps))
    (w0, s0), (w1, s1) = runs[200], runs[1200]
    profile = profile_model(model)
    modelled = costmodel.cpu_gradient_seconds(profile, machine, "float64",
                                              costmodel.JAX_CPU_SAMPLER, chains).value
    return {"kind": "numpyro", "model": name, "in_loop_gradient_seconds": min(in_loop),
            "leapfrogs_per_chain": [s0, s1], "walls": [w0, w1],
            "per_leapfrog_seconds": (w1 - w0) / (s1 - s0),
            "modelled_per_leapfrog_seconds": modelled,
            "matvec_bytes": costmodel.memory_bound_dense_bytes(profile)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--numpyro", default="", help="comma-separated model names (float64)")
    args = p.parse_args(argv)
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    from pymc_accel.machine import machine_figures

    machine = machine_figures()
    for n, q in SHAPES:
        print(json.dumps(numba_matvec(n, q, machine.cpu_bandwidth["float64"])), flush=True)
    for name in filter(None, args.numpyro.split(",")):
        print(json.dumps(numpyro_per_leapfrog(name, machine)), flush=True)


if __name__ == "__main__":
    main()
