"""Measured figures of this machine, used by the cost model; cached on disk.

A short calibration times, per device and precision:

- CPU (about 2 s): a transcendental elementwise op in a numba-compiled loop (compute
  throughput), a NumPy addition over arrays larger than cache (bandwidth) and a matrix product
  (dense throughput), in float32 and float64; the call overhead of a compiled PyTensor
  function (numba mode); and a pure-Python loop, the pace of start-up and compile work;
- each GPU JAX can see (a few seconds, :mod:`pymc_accel.calibration_jax`): the same throughputs
  under XLA, the per-launch latency of a kernel inside a compiled loop and the per-call
  round trip from Python.

Figures are cached in ``$PYMC_ACCEL_CACHE_DIR`` (default ``~/.cache/pymc-accel``), one file per
machine and device, keyed by the host, the device and the versions of the libraries that shape
them; ``pymc-accel calibrate`` measures again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

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
    cpu_call_seconds : float
        Overhead of one call of a compiled PyTensor function (numba mode) from Python.
    cpu_cache_bytes : float
        Size of the CPU's last-level cache (read from the operating system, not timed; 0 when
        unknown).
    accelerators : dict of str to DeviceFigures
        Figures of each JAX device calibrated (``"gpu"``), absent when none was.
    versions : dict
        Library versions the CPU figures were measured with.
    cpu_share : float or None
        Share of one core the calibration got (its CPU time over its wall time): about 1 on a
        core of its own; lower where other work shared the cores, whose figures are low
        (:data:`CONTENDED_SHARE`). ``None`` where not known (figures cached by a release that
        did not record it, or made by hand).
    calibrated_at : float
        When the CPU figures were measured (seconds since the epoch; 0 when unknown).
    cpu_python_seconds : float or None
        Best time of a pure-Python loop of a million additions (:func:`python_loop_seconds`):
        the pace of one core at interpreted code, which start-up and compile work follow.
        ``None`` where not measured (figures made by hand).
    """

    cpu_flops: dict[str, float]
    cpu_bandwidth: dict[str, float]
    cpu_matmul_flops: dict[str, float]
    source: str = "measured"
    key: str = ""
    calibration_seconds: float = 0.0
    cpu_call_seconds: float = 0.0
    cpu_cache_bytes: float = 0.0
    accelerators: dict[str, DeviceFigures] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    cpu_share: float | None = None
    calibrated_at: float = 0.0
    cpu_python_seconds: float | None = None

    def contended(self) -> bool:
        """Whether other work shared the cores while the CPU figures were measured (``False``
        where that is not known)."""
        return self.cpu_share is not None and self.cpu_share < CONTENDED_SHARE

    def accelerator(self, platform: str = "gpu") -> DeviceFigures | None:
        """Calibrated figures of a JAX device platform, or ``None`` when not calibrated."""
        return self.accelerators.get(platform)

    def describe(self) -> str:
        """One line for reports: where the figures come from."""
        text = f"CPU figures {self.source}"
        if self.cpu_call_seconds:
            text += f" (call overhead {self.cpu_call_seconds * 1e6:.1f} µs"
            if self.cpu_python_seconds:
                text += f", Python loop {self.cpu_python_seconds * 1e3:.0f} ms"
            text += ")"
        if self.contended():
            text += (f", measured while other work shared the cores (the calibration got "
                     f"{self.cpu_share:.0%} of a core: the figures are low; measured again by a "
                     "later process, or now by pymc-accel calibrate)")
        for name, dev in self.accelerators.items():
            text += f"; {name} {dev.kind} figures {dev.source}"
        return text


@dataclass
class DeviceFigures:
    """Measured figures of one accelerator (through JAX), per precision.

    Attributes
    ----------
    platform, kind : str
        JAX platform (``"gpu"``) and device kind (``"NVIDIA H100 80GB HBM3"``).
    flops, bandwidth, matmul_flops : dict
        Elementwise flops/s (a transcendental op counted as 10), bytes/s streamed, dense
        matrix product flops/s; keyed by precision.
    launch_seconds : float
        Latency of one small kernel inside a compiled loop (what each kernel of a gradient
        costs at least when the whole sampler runs on the device).
    call_seconds : float
        Round trip of a compiled call from Python, synchronised.
    source, key : str
        ``measured <date>`` or ``cached``; the cache key.
    calibration_seconds : float
    """

    platform: str
    kind: str
    flops: dict[str, float]
    bandwidth: dict[str, float]
    matmul_flops: dict[str, float]
    launch_seconds: float
    call_seconds: float
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


#: Changes when calibration measures something differently, so figures cached by an earlier
#: calibration are measured again (2: matmul timed in one BLAS thread; 3: the last-level cache size;
#: 4: the best of rounds over CALIBRATION_SECONDS; 5: exp timed in a
#: compiled loop, :func:`compiled_exp`). It is part of the machine's key, which the run
#: history's file is named by too, so a change forgets the history: figures cached before the
#: calibration recorded the share of a core it got (``cpu_share``) are measured again by
#: :func:`_cpu_figures` instead.
CALIBRATION_VERSION = 5
#: Share of one core (CPU time over wall time) below which a calibration is taken to have run
#: while other work shared the cores. Measured on the 2-core machine
#: (``bench/fit_calibration_contention.py``, docs/results/fit-calibration-contention-cpu.json;
#: two runs): alone, 1.00 (elementwise 1.90-1.95 GFLOP/s); with two other processes spinning,
#: 0.65-0.68 (1.08-1.22 GFLOP/s). Figures cached on this machine that morning had
#: 1.12 GFLOP/s, and were kept all day. The call overhead is no such sign: timed again and again
#: on the quiet machine it ran 3.4-3.6 µs with stray timings of 5.5-5.8 µs, and a calibration that
#: got all of its core recorded 6.9 µs (bench/fit_process_speed.py).
CONTENDED_SHARE = 0.85
#: Seconds after a contended calibration before a later process measures again (once a
#: retry: a machine that stays busy keeps whichever calibration got more of a core).
RECALIBRATE_AFTER_SECONDS = 600.0


def one_blas_thread():
    """Context in which NumPy's BLAS uses one thread (a no-op without threadpoolctl).

    Matmul throughput is calibrated per core: a multi-chain CPU run gives each chain one core
    (PyMC limits BLAS threads to match), and multi-threaded BLAS timed on a busy machine
    collapses. Measured on the 2-core machine, 384x384 float64 matmul: 5.3e10 flop/s idle and
    8.2e9 with two other busy processes multi-threaded, 4.9e10 and 4.6e10 in one thread; the
    multi-threaded figures cached by earlier calibrations ranged from 4e9 to 2e11 flop/s, and
    the 7.1e9 cached for both precisions made a GP's gradient (N = 500) modelled at 79 ms
    against 16 ms measured (numba) and 23 ms (JAX).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


#: Seconds over which the calibration's timings are repeated; each figure keeps its best round
#: (at least two). On this project's 2-core machine NumPy's exp ran at 1.85 GFLOP/s with
#: stretches of up to 1.2 s at 1.05 (the machine's cores shared with other work): a
#: calibration of 0.3-0.8 s that fell in one measured 0.94-1.48 in 4 of 12 runs started after
#: 15 s idle, against 1.81-1.98 for the others, and a calibration is cached until
#: ``pymc-accel calibrate`` (docs/benchmarks.md, "The machine's calibration").
CALIBRATION_SECONDS = 2.0


# This process's CPU time, which the calibration compares with its wall time (replaced by tests).
_cpu_clock = time.process_time


@functools.lru_cache(maxsize=1)
def compiled_exp():
    """A numba-compiled loop ``out[i] = exp(a[i])``, compiled for float32 and float64: what the
    calibration times as the CPU's elementwise throughput.

    The compiled runtimes (PyTensor's numba kernels, XLA's fused loops) do not run NumPy's
    kernels, and NumPy's ``exp`` is the wrong yardstick for them on a CPU where NumPy dispatches
    it to hand-vectorised AVX-512 code: on the 2-core fit machine NumPy's float64 ``exp`` ran at
    1.9 GFLOP/s (5.3 ns an element, the C library's scalar ``exp``, as a numba loop calls it),
    and the runtimes' factors were fitted against that; on an AVX-512 machine (2026-11-27) it
    ran at 18.7 GFLOP/s (0.57 ns) while a numba loop took 2.9 ns and the compiled gradients ran
    as fast as on the fit machine or slower (numba's seed-model gradients 0.6x-1.4x the fit
    machine's times). Priced from NumPy's figure, the seed models' gradients there came out
    1.5x-2.5x too cheap (numba) and 1.7x-2.6x (NumPyro's compiled sampler), which made fixed
    costs decide the 5,522-parameter seed model (NumPyro chosen at 10.8 s estimated against
    32-40 s runs, regret 1.33); priced from the compiled loop, 0.82x-1.05x
    (docs/benchmarks.md, "The CPU's elementwise rate timed in compiled code").

    Returns ``None`` where numba cannot compile it, or compiles nothing (``NUMBA_DISABLE_JIT``,
    where the loop would run in Python for seconds a round); the calibration then times NumPy's
    ``exp``. Written by hand: no library times a compiler's elementwise throughput.
    """
    try:
        import numba

        if numba.config.DISABLE_JIT:
            return None

        @numba.njit(["void(float64[::1], float64[::1])", "void(float32[::1], float32[::1])"],
                    cache=False)
        def exp_loop(a, out):  # pragma: no cover - compiled by numba
            for i in range(a.size):
                out[i] = np.exp(a[i])
    except Exception:
        return None
    return exp_loop


#: The loop :func:`python_loop_seconds` times, run with a fresh dict as its globals: the same
#: code, run the same way, as ``bench/fit_process_speed.py``'s processes ran it at their top
#: level, which timed it on the machine the cost model's fixed seconds were fitted on.
_PYTHON_LOOP = compile("total = 0\nfor i in range(1_000_000):\n    total += i\n",
                       "<pymc-accel python pace>", "exec")


def python_loop_seconds(rounds: int = 3) -> float:
    """Best of ``rounds`` timings of a pure-Python loop of a million additions (60 ms on an
    AMD EPYC of 2026, 120 ms on the machine the fixed seconds were fitted on).

    A sampler's fixed seconds are one core's start-up and compile work: PyMC building the log
    density, PyTensor's rewrites, loading numba's and XLA's compiled code, imports. On the AMD
    EPYC they ran at 0.51x-0.56x the cost model's figures (and first use at about 0.6x) where
    this loop ran at 0.50x the fit machine's (:func:`pymc_accel.costmodel.start_up_pace`).
    Written by hand: no library times an interpreter's pace.
    """
    def run() -> None:
        exec(_PYTHON_LOOP, {})

    return _best_of(run, rounds)


def _exp_timer(a: np.ndarray, out: np.ndarray):
    """A callable evaluating ``exp`` over ``a`` into ``out`` in compiled code
    (:func:`compiled_exp`), or with NumPy where numba is unavailable."""
    loop = compiled_exp()
    if loop is None:
        return lambda: np.exp(a, out=out)
    return lambda: loop(a, out)


def calibrate() -> MachineFigures:
    """Time compiled and NumPy kernels on this CPU (about 2 s: :data:`CALIBRATION_SECONDS`)
    and return the figures."""
    start, cpu_start = time.perf_counter(), _cpu_clock()
    flops = dict.fromkeys(PRECISIONS, 0.0)
    bandwidth, matmul = dict(flops), dict(flops)
    rng = np.random.default_rng(0)
    arrays = {}
    for precision in PRECISIONS:
        dtype = np.dtype(precision)
        a = rng.random(1 << 20).astype(dtype)
        big = rng.random(1 << 23).astype(dtype)  # 32-64 MiB: larger than cache
        arrays[precision] = (a, np.empty_like(a), big, np.empty_like(big),
                             rng.random((384, 384)).astype(dtype))
    rounds = 0
    while rounds < 2 or time.perf_counter() - start < CALIBRATION_SECONDS:
        rounds += 1
        for precision, (a, out, big, big_out, m) in arrays.items():
            flops[precision] = max(flops[precision],
                                   10 * a.size / _best_of(_exp_timer(a, out)))
            bandwidth[precision] = max(bandwidth[precision], 3 * big.nbytes / _best_of(
                lambda: np.add(big, big, out=big_out), 3))
            with one_blas_thread():
                matmul[precision] = max(matmul[precision], 2 * 384**3 / _best_of(lambda: m @ m))
    # every timing above runs in this thread, so its CPU time over the wall time is the share
    # of a core it got
    share = (_cpu_clock() - cpu_start) / max(time.perf_counter() - start, 1e-9)
    return MachineFigures(
        cpu_flops=flops,
        cpu_bandwidth=bandwidth,
        cpu_matmul_flops=matmul,
        source=f"measured {time.strftime('%Y-%m-%d')}",
        key=machine_key(),
        calibration_seconds=time.perf_counter() - start,
        cpu_call_seconds=call_overhead_seconds(),
        cpu_cache_bytes=last_level_cache_bytes(),
        versions=library_versions(_CPU_LIBRARIES),
        cpu_share=share,
        calibrated_at=time.time(),
        cpu_python_seconds=python_loop_seconds(),
    )


def last_level_cache_bytes() -> float:
    """Size in bytes of the largest CPU cache the operating system reports (Linux sysfs), or
    0.0 when it reports none."""
    sizes = []
    for path in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = path.read_text().strip().upper()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        try:
            sizes.append(float(text.rstrip("KMG")) * scale)
        except ValueError:
            continue
    return max(sizes, default=0.0)


def call_overhead_seconds(calls: int = 2000) -> float:
    """Median seconds of calling a trivial compiled PyTensor function (numba mode, inputs
    trusted) from Python: the fixed cost of every gradient a Python-driven sampler evaluates.
    Returns 0.0 when numba mode is unavailable."""
    try:
        import pytensor
        import pytensor.tensor as pt

        x = pt.dvector("x")
        f = pytensor.function([x], [pt.sum(x * 2.0)], mode="NUMBA", trust_input=True)
    except Exception:
        return 0.0
    a = np.ones(4)
    f(a)
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        f(a)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


_CPU_LIBRARIES = ("numpy", "pytensor", "numba")
_JAX_LIBRARIES = ("jax", "jaxlib")


@functools.lru_cache(maxsize=None)
def _installed_version(name: str) -> str:
    """``name``'s installed version (``"absent"``), looked up once per process: the machine,
    profile and check keys of one selection ask for the same few versions (their lookups took
    6.5-7.9 ms in a new process, 2.8-4.5 ms kept), and a library imported in this process keeps
    its version while the process lives."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def library_versions(names: tuple[str, ...]) -> dict[str, str]:
    """Installed versions of ``names`` (``"absent"`` for those not installed)."""
    return {name: _installed_version(name) for name in names}


def machine_key() -> str:
    """Identify this machine and the libraries that shape its figures."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if "model name" in line), cpu)
    except OSError:
        pass
    libs = ",".join(f"{k} {v}" for k, v in library_versions(_CPU_LIBRARIES).items())
    text = f"{platform.node()}|{cpu}|{os.cpu_count()}|{libs}|calibration {CALIBRATION_VERSION}"
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def device_key(kind: str, platform_name: str = "gpu") -> str:
    """Identify an accelerator on this host and the JAX versions that shape its figures."""
    libs = ",".join(f"{k} {v}" for k, v in library_versions(_JAX_LIBRARIES).items())
    text = f"{platform.node()}|{platform_name}|{kind}|{libs}"
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def cache_dir() -> Path:
    """Where machine figures are cached."""
    return _cache_dir(os.environ.get("PYMC_ACCEL_CACHE_DIR"), os.environ.get("HOME"))


# built once per setting: the run history reads its ledger 67 times a selection on eight
# schools, and building the path each time (Path.home() and two joins) made a selection of a
# profiled model take 3.6 ms where it takes 2.6
@functools.lru_cache(maxsize=8)
def _cache_dir(setting: str | None, home: str | None) -> Path:
    return Path(setting) if setting is not None else Path.home() / ".cache" / "pymc-accel"


_FIGURES: MachineFigures | None = None


def _read(path: Path, cls: type) -> Any:
    try:
        return cls(**{**json.loads(path.read_text()), "source": "cached"})
    except (OSError, TypeError, ValueError):
        return None  # absent, or a cache from another version: measure again


def _write(path: Path, figures: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(figures)))
    except OSError:
        pass  # a read-only home still gets figures, just not cached


def _cpu_figures(refresh: bool) -> MachineFigures:
    path = cache_dir() / f"machine-{machine_key()}.json"
    cached = None if refresh else _read(path, MachineFigures)
    if cached is not None:
        cached.accelerators = {}
        if cached.cpu_python_seconds is None:  # cached before calibrations timed it: time it
            cached.cpu_python_seconds = python_loop_seconds()
            _write(path, cached)
        unknown = cached.cpu_share is None  # cached before calibrations recorded their share
        if not (unknown or cached.contended()) or (
                time.time() - cached.calibrated_at < RECALIBRATE_AFTER_SECONDS):
            return cached
        # measured while other work shared the cores (or not known): measure again, and keep
        # whichever calibration got more of a core (the time of this one either way, so that
        # a machine that stays busy is not measured again by every process)
        fresh = calibrate()
        figures = (fresh if unknown or fresh.cpu_share > cached.cpu_share
                   else replace(cached, calibrated_at=fresh.calibrated_at))
        _write(path, figures)
        return figures
    figures = calibrate()
    _write(path, figures)
    return figures


def _gpu_figures(devices: Any, refresh: bool) -> dict[str, DeviceFigures]:
    if devices is None or not getattr(devices, "has_gpu", False):
        return {}
    kind = devices.gpus[0].kind
    path = cache_dir() / f"device-gpu-{device_key(kind)}.json"
    cached = None if refresh else _read(path, DeviceFigures)
    if cached is not None:
        return {"gpu": cached}
    from pymc_accel.calibration_jax import calibrate_jax_device

    try:
        figures = calibrate_jax_device("gpu")
    except Exception:  # a GPU JAX cannot run on keeps the modelled GPU figures
        return {}
    figures.key = device_key(kind)
    _write(path, figures)
    return {"gpu": figures}


def machine_figures(*, refresh: bool = False, devices: Any = None) -> MachineFigures:
    """Return this machine's figures: from memory, from the disk cache, or freshly measured.

    Parameters
    ----------
    refresh : bool, default False
        Measure again and overwrite the cache.
    devices : Devices, optional
        The devices present (:func:`pymc_accel.devices.discover`); each GPU among them is
        calibrated (or read from its cache) too. Without it only the CPU is.

    Returns
    -------
    MachineFigures
    """
    global _FIGURES
    if _FIGURES is None or refresh:
        _FIGURES = _cpu_figures(refresh)
    if devices is not None and devices.has_gpu and ("gpu" not in _FIGURES.accelerators or refresh):
        _FIGURES.accelerators.update(_gpu_figures(devices, refresh))
    return _FIGURES
