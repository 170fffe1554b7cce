"""Building PyTensor graphs the selector throws away, fast.

The profile (:mod:`pymc_accel.profile`) and the float32 guard (:mod:`pymc_accel.precision`)
build a model's log density and gradient to read or evaluate them once; these helpers switch
off what PyTensor and Python spend on graphs meant to live long.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterator
from typing import Any

import pytensor


def _without_traces(fn):
    """Run ``fn`` with PyTensor's stack traces off: PyTensor records a Python stack trace for
    every variable it creates (``config.traceback__limit``), which was 85% of profiling eight
    schools (0.33 s against 0.05 s); the selector's graph copies need none."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with pytensor.config.change_flags(traceback__limit=0):
            return fn(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while graphs are built: building a logp and gradient
    graph allocates thousands of small objects, which set off collections of the whole heap
    (a full one walks every object a PyMC session holds). Timed on the quick zoo, 8 first
    selections each: medians 0-30% lower, the slowest 2-4x faster (eight schools 246 ms ->
    81 ms; bench/bench_regret.py once saw a 1.3 s profile of pk_scan). The collector is
    left as it was found (on, unless the caller had switched it off) and collects later as
    usual: the garbage is a few megabytes of graph."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def quietly(fn):
    """:func:`_without_traces`, with the collector paused (:func:`_collector_paused`)."""

    traced = _without_traces(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _collector_paused():
            return traced(*args, **kwargs)

    return wrapper


def evaluating_mode() -> Any:
    """PyTensor's Python linker with no rewrites: each op's ``perform`` on NumPy arrays.

    For a graph evaluated a handful of times, compiling is where the time would go: the float32
    check (:func:`pymc_accel.precision.check_float32`) compiled two functions with
    ``FAST_COMPILE`` and the stabilizing rewrites, 0.1-0.3 s each on the quick zoo (1.2 s for the
    pharmacokinetic Scan model's pair), against 0.05-0.4 s for the whole check in this mode
    (docs/benchmarks.md, "The float32 check's cost"). Callers apply the stabilizing rewrites
    every backend applies themselves, once, where they matter (``rewrite_graph(...,
    include=("canonicalize", "stabilize"))``).
    """
    from pytensor.compile.mode import Mode

    return Mode(linker="py", optimizer=None)


@contextlib.contextmanager
def evaluating() -> Iterator[Any]:
    """:func:`evaluating_mode`, with PyTensor's C compiler off while functions are built in it.

    The Python linker covers the outer graph only: a ``Scan`` links its step's inner function
    itself, with PyTensor's VM and C thunks, so a check of a Scan model started ``gcc`` (a
    0.12 s probe of its flags in each new process, and a compile per new step graph). With no
    compiler the step runs op by op in Python too: the pharmacokinetic Scan model's float32
    check took 0.26 s in a new process, where it took 0.43 s (docs/benchmarks.md)."""
    with pytensor.config.change_flags(cxx=""):
        yield evaluating_mode()
