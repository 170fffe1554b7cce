"""Measured figures of this machine, used by the cost model; cached on disk.

A short calibration (well under a second on a CPU) times NumPy kernels: a transcendental
elementwise op (compute throughput), an addition over arrays larger than cache (bandwidth) and
a matrix product (dense throughput), in float32 and float64. Results are cached per host, CPU and
library versions in ``$PYMC_ACCEL_CACHE_DIR`` (default ``~/.cache/pymc-accel``).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

PRECISIONS = ("float32", "float64")


@dataclass
class MachineFigures:
    """Throughput of this machine's CPU per precision, and how they were obtained.

    Attributes
    ----------
    cpu_flops : dict
        Elementwise flops per second of one core (a transcendental op counted as 10 flops).
    cpu_bandwidth : dict
        Bytes per second streamed by one core.
    cpu_matmul_flops : dict
        Dense matrix product flops per second (BLAS, all cores it uses).
    source : str
        ``measured`` (with the date) or ``cached``.
    """

    cpu_flops: dict[str, float]
    cpu_bandwidth: dict[str, float]
    cpu_matmul_flops: dict[str, float]
    source: str = "measured"
    key: str = ""
    calibration_seconds: float = 0.0


def _best_of(fn, repeats: int = 5) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def calibrate() -> MachineFigures:
    """Time NumPy kernels on this CPU (about 0.3 s) and return the figures."""
    start = time.perf_counter()
    flops, bandwidth, matmul = {}, {}, {}
    rng = np.random.default_rng(0)
    for precision in PRECISIONS:
        dtype = np.dtype(precision)
        a = rng.random(1 << 20).astype(dtype)
        out = np.empty_like(a)
        flops[precision] = 10 * a.size / _best_of(lambda: np.exp(a, out=out))
        big = rng.random(1 << 23).astype(dtype)  # 32-64 MiB: larger than cache
        big_out = np.empty_like(big)
        bandwidth[precision] = 3 * big.nbytes / _best_of(lambda: np.add(big, big, out=big_out), 3)
        m = rng.random((384, 384)).astype(dtype)
        matmul[precision] = 2 * 384**3 / _best_of(lambda: m @ m)
    return MachineFigures(
        cpu_flops=flops,
        cpu_bandwidth=bandwidth,
        cpu_matmul_flops=matmul,
        source=f"measured {time.strftime('%Y-%m-%d')}",
        key=machine_key(),
        calibration_seconds=time.perf_counter() - start,
    )


def machine_key() -> str:
    """Identify this machine and the libraries that shape its figures."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if "model name" in line), cpu)
    except OSError:
        pass
    text = f"{platform.node()}|{cpu}|{os.cpu_count()}|numpy {np.__version__}"
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def cache_dir() -> Path:
    """Where machine figures are cached."""
    return Path(os.environ.get("PYMC_ACCEL_CACHE_DIR", Path.home() / ".cache" / "pymc-accel"))


_FIGURES: MachineFigures | None = None


def machine_figures(*, refresh: bool = False) -> MachineFigures:
    """Return this machine's figures: from memory, from the disk cache, or freshly measured.

    Parameters
    ----------
    refresh : bool, default False
        Measure again and overwrite the cache.
    """
    global _FIGURES
    if _FIGURES is not None and not refresh:
        return _FIGURES
    path = cache_dir() / f"machine-{machine_key()}.json"
    if path.exists() and not refresh:
        try:
            _FIGURES = MachineFigures(**{**json.loads(path.read_text()), "source": "cached"})
            return _FIGURES
        except (TypeError, ValueError):
            pass  # a cache from another version: measure again
    _FIGURES = calibrate()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(_FIGURES)))
    except OSError:
        pass  # a read-only home still gets figures, just not cached
    return _FIGURES
