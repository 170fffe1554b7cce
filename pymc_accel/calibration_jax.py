"""Calibrate an accelerator (or JAX's CPU) through JAX: throughput, bandwidth, launch latency.

Imported only by :mod:`pymc_accel.machine` when a device needs calibrating (never by the
selector itself). Sizes are chosen so a datacenter GPU finishes in a few seconds, most of it
XLA compilation; ``scale`` shrinks them (tests use it on the CPU).
"""

from __future__ import annotations

import statistics
import time

from pymc_accel.machine import PRECISIONS, DeviceFigures

# Elements of the elementwise and bandwidth arrays, and the matrix side, at scale 1 (GPU).
_ELEMWISE = 1 << 24
_STREAM = 1 << 26
_MATMUL = 4096
_LOOP_STEPS = 2000


def _median_seconds(fn, repeats: int) -> float:
    fn()  # compile and warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def calibrate_jax_device(platform: str = "gpu", *, scale: float = 1.0) -> DeviceFigures:
    """Time XLA kernels on the first JAX device of ``platform``.

    Parameters
    ----------
    platform : {"gpu", "cpu"}
        JAX platform to calibrate.
    scale : float, default 1.0
        Multiplies the array sizes (and the matrix side by its square root).

    Returns
    -------
    DeviceFigures

    Raises
    ------
    RuntimeError
        When JAX has no device of that platform.
    """
    import jax
    import jax.numpy as jnp

    start = time.perf_counter()
    device = jax.devices(platform)[0]
    n_elem = max(1024, int(_ELEMWISE * scale))
    n_stream = max(1024, int(_STREAM * scale))
    side = max(32, int(_MATMUL * scale**0.5))
    flops, bandwidth, matmul = {}, {}, {}
    exp = jax.jit(jnp.exp)
    add = jax.jit(lambda a, b: a + b)
    mm = jax.jit(lambda a, b: a @ b)
    for precision in PRECISIONS:
        with jax.enable_x64(precision == "float64"), jax.default_device(device):
            dtype = jnp.dtype(precision)
            a = jnp.linspace(0.0, 1.0, n_elem, dtype=dtype)
            flops[precision] = 10 * n_elem / _median_seconds(
                lambda a=a: exp(a).block_until_ready(), 5)
            b = jnp.ones(n_stream, dtype=dtype)
            bandwidth[precision] = 3 * b.nbytes / _median_seconds(
                lambda b=b: add(b, b).block_until_ready(), 5)
            m = jnp.ones((side, side), dtype=dtype) / side
            matmul[precision] = 2 * side**3 / _median_seconds(
                lambda m=m: mm(m, m).block_until_ready(), 3)
    with jax.default_device(device):
        x = jnp.ones(8, dtype=jnp.float32)
        tiny = jax.jit(lambda v: v * 1.0001 + 1.0)
        call = _median_seconds(lambda: tiny(x).block_until_ready(), 200)
        loop = jax.jit(lambda v: jax.lax.fori_loop(0, _LOOP_STEPS, lambda i, w: w * 1.0001 + 1.0, v))
        launch = _median_seconds(lambda: loop(x).block_until_ready(), 5) / _LOOP_STEPS
    return DeviceFigures(
        platform=platform,
        kind=getattr(device, "device_kind", str(device)),
        flops=flops,
        bandwidth=bandwidth,
        matmul_flops=matmul,
        launch_seconds=launch,
        call_seconds=call,
        source=f"measured {time.strftime('%Y-%m-%d')}",
        calibration_seconds=time.perf_counter() - start,
    )
