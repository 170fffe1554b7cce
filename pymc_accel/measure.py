"""Measured mode: time the candidates' compiled gradients within a budget.

:func:`measure_candidates` asks each candidate's backend, best modelled candidate first, to
compile and time its gradient (the optional ``Backend.measure`` method), giving it the seconds
left of the budget, and any candidate but the best so far no more than the best one's estimated
run (below). A backend declines (returns ``None``) when its compile would not fit in what it is
given, or when what was left after compiling was too little to time the gradient; a candidate
not measured keeps its modelled figures, and the report says which is which.

Each ``measure`` call runs in a worker thread, and the selector waits for it only until the
budget is spent. A compile cannot be interrupted once started, and a prediction of its time can
be wrong (numba's gradient compile of the quick zoo's seed_mid took 3.3 s where 0.9 s was
predicted and 2.2 s were left, in a process that had compiled many models), so the deadline is
kept by not waiting: a measurement still running when the budget runs out is left to finish in
the background (its compile lands in the backend's disk cache, which a later run of that backend
reads), its candidate keeps its modelled figures, and no further candidate is offered anything.
The log records it under ``abandoned``, with the seconds it went on for once it ends.

No candidate but the best so far is offered more than the best one's estimated run (its wall
time, compile and first use included): a compile longer than that run costs more than choosing
the candidate could save, since even a candidate that then sampled in no time would take longer
in all. The best candidate itself is offered all that is left: its compile is part of its own
run (the numba backends keep it for the run). In the quick regret run of 2026-11-29
(13:06-13:19, on the 2-core machine, the kernels cached), measured mode compiled and timed
nutpie on eight schools and glm_linear, runs of about a second, and their selections' medians
went from 1.35 s to 2.7 and 2.55 s.

The budget is the whole of ``select(measure=True)``: the selector passes what profiling and
estimating already took (``spent_before``) and what it keeps for the float32 guard after
measuring (``reserve``), so measuring gets only the rest. The built-in backends start a
compile only when its predicted time (modelled, times the larger of a safety margin and the
worst ratio of actual to modelled compile seen in this process, times the CPU's current load)
fits in what is left, so that few are left running. A ``measure`` that returns after what it
was offered (as ``_clock`` sees it) ends measurement too, and the log records the overrun.
"""

from __future__ import annotations

import concurrent.futures
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pymc_accel import costmodel
from pymc_accel.backend import Figure
from pymc_accel.first_use import first_use_figures

#: Default seconds measured mode may spend in all.
DEFAULT_BUDGET_SECONDS = 5.0
#: Most seconds spent timing one candidate's calls (after its compile).
TIMING_SECONDS = 0.5
#: A candidate is offered measurement only when at least this much of the budget is left.
MIN_OFFER_SECONDS = 0.05

# Replaced by tests to check the budget mechanism without depending on machine speed.
_clock: Callable[[], float] = time.perf_counter


def time_calls(
    fn: Callable[[], Any], budget_seconds: float, *, max_calls: int = 200, min_calls: int = 3
) -> tuple[float, int]:
    """Median seconds of ``fn()`` over as many calls as fit in ``budget_seconds``.

    Parameters
    ----------
    fn : callable
        Called with no arguments; must block until its work is done.
    budget_seconds : float
        Time to spend; at least ``min_calls`` calls are made whatever it is.
    max_calls, min_calls : int

    Returns
    -------
    median_seconds : float
    calls : int
    """
    times: list[float] = []
    deadline = time.perf_counter() + budget_seconds
    while len(times) < max_calls and (len(times) < min_calls or time.perf_counter() < deadline):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(times)


_FIGURES = ("seconds_per_gradient", "gradients_per_draw", "fixed_seconds", "memory_bytes",
            "relative_efficiency", "extra_gradients", "draw_start_gradients",
            "cold_compile_seconds")


def measured_over(selected: Any, measured: Any) -> Any:
    """The selection's estimate with the figures a backend's ``measure`` labelled ``measured``
    put over it. A backend measures from its own modelled estimate; the selection's may hold
    what the run history observed of the model (leapfrogs per draw, fixed seconds, seconds
    per gradient), which a timing does not replace: a run's wall time holds everything a
    step costs, a timing the gradient alone and a modelled step. A measured fixed cost brings
    the compile it paid for the run (``precompiled_seconds``) with it."""
    out = selected
    ran = selected.seconds_per_gradient.source == "observed"  # corrected by the model's runs
    for name in _FIGURES:
        figure = getattr(measured, name)
        if figure.source == "measured" and not (ran and name == "seconds_per_gradient"):
            out = replace(out, **{name: figure})
    if measured.fixed_seconds.source == "measured":
        out = replace(out, precompiled_seconds=measured.precompiled_seconds,
                      modelled_fixed_seconds=measured.modelled_fixed_seconds)
    return out


# Measurements left running past their deadline, until they end.
_BACKGROUND: set[concurrent.futures.Future] = set()
_THREAD_PREFIX = "pymc-accel-measure"


def _start_measuring(fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
    """``fn(*args)`` started in a worker thread of its own, so that the selector can stop
    waiting for it at its deadline (``concurrent.futures``: an abandoned call finishes in the
    background, and the interpreter waits for it at exit rather than killing a compile)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=_THREAD_PREFIX)
    try:
        return pool.submit(fn, *args)
    finally:
        pool.shutdown(wait=False)  # the thread ends with its call


def wait_for_background(timeout: float | None = None) -> float:
    """Wait for measurements left running in the background by an earlier selection
    (:func:`measure_candidates`) to end; the seconds waited.

    A backend whose run compiles with numba calls this first: a compile in the background holds
    numba's compiler lock, which the run's own compile would wait on anyway (and a measurement
    of PyMC's gradient function compiles the very function PyMC's NUTS then reuses). Every fork
    of the process waits here too (:func:`_before_fork`).
    """
    began = time.perf_counter()
    concurrent.futures.wait(list(_BACKGROUND), timeout=timeout)
    return time.perf_counter() - began


def _before_fork() -> None:
    """Wait out measurements left running before this process forks (``os.fork``,
    ``multiprocessing``'s fork start method: PyMC's NUTS's chains, whoever starts them): a child
    gets a copy of every lock held at the fork, and a lock a measurement's compile held (numba's
    compiler lock) would never be released there. Not from a measurement's own thread, which
    would wait for itself."""
    if not threading.current_thread().name.startswith(_THREAD_PREFIX):
        wait_for_background()


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork
    os.register_at_fork(before=_before_fork)


def _abandon(log: dict[str, Any], label: str, offered: float, future: Any) -> None:
    """Record a measurement still running at the deadline, and, once it ends, how long it went
    on past the selection that left it (``None`` until then)."""
    entry = {"candidate": label, "offered_seconds": offered, "ran_on_seconds": None}
    log["abandoned"].append(entry)
    left_at = time.perf_counter()
    _BACKGROUND.add(future)

    def ended(_: Any) -> None:
        entry["ran_on_seconds"] = time.perf_counter() - left_at
        _BACKGROUND.discard(future)

    future.add_done_callback(ended)


#: Seconds under which a backend's ``measure`` returning ``None`` declined without compiling
#: (it compares its modelled compile with the budget); over them, it compiled and could not time
#: the gradient in what was left.
DECLINE_SECONDS = 0.05


def measure_candidates(
    scored: list[Any],
    model: Any,
    profile: Any,
    machine: Any,
    registry: Any,
    *,
    budget: float,
    steps: int,
    draws: int,
    chains: int,
    spent_before: float = 0.0,
    reserve: float = 0.0,
) -> dict[str, Any]:
    """Replace modelled estimates with measured ones, within ``budget`` seconds.

    Parameters
    ----------
    scored : list
        The selector's scored candidates, best first; each has ``candidate``, ``estimate``,
        ``measure_note`` and ``rescore(steps, draws, chains)``. Updated in place.
    model : pm.Model or None
        Needed to compile anything; with ``None`` nothing is measured.
    profile, machine, registry
        As for selection.
    budget : float
        Seconds the whole measured selection may take.
    steps, draws, chains : int
        The run being estimated, to rescore measured candidates.
    spent_before : float, default 0
        Seconds of the budget already spent (profiling, estimating).
    reserve : float, default 0
        Seconds of the budget kept for work after measuring (the float32 guard).

    Returns
    -------
    dict
        ``budget_seconds``, ``spent_before_seconds``, ``reserved_seconds``,
        ``measuring_budget_seconds`` (what measuring itself was given), ``spent_seconds``
        (what measuring took), ``measured`` (label, seconds taken, measured seconds per
        gradient), ``not_measured`` (label, why), ``overran_seconds`` (how far a backend's
        ``measure`` that returned went past what it was offered, as ``_clock`` saw it; 0 when
        none did) and ``abandoned`` (label, seconds offered, and ``ran_on_seconds``: how long
        a ``measure`` still running at the deadline went on after it, ``None`` until it ends).
    """
    start = _clock()
    available = max(0.0, budget - spent_before - reserve)
    log: dict[str, Any] = {"budget_seconds": budget, "spent_before_seconds": spent_before,
                           "reserved_seconds": reserve, "measuring_budget_seconds": available,
                           "spent_seconds": 0.0, "overran_seconds": 0.0, "measured": [],
                           "not_measured": [], "abandoned": []}

    def skip(s: Any, why: str) -> None:
        log["not_measured"].append({"candidate": s.candidate.label, "why": why})
        s.measure_note = f"not measured: {why}"

    compiled: set[str] = set()  # backends whose measurement compiled the model's gradient
    for s in scored:
        backend = registry.backends[s.candidate.backend]
        fn = getattr(backend, "measure", None)
        left = available - (_clock() - start)
        leader = min(scored, key=lambda x: x.key)  # as measured so far
        offer = left if s is leader else min(left, leader.total)
        capped = (f"its compile would take longer than the whole run of "
                  f"{leader.candidate.label} ({leader.total:.2f} s estimated): measuring it "
                  "could not pay for itself")
        if model is None:
            skip(s, "select() was given a profile without its model")
        elif fn is None:
            skip(s, f"backend {s.candidate.backend!r} has no measure()")
        elif log["overran_seconds"] > 0 or log["abandoned"]:
            skip(s, "an earlier measurement overran the budget")
        elif left < MIN_OFFER_SECONDS:
            skip(s, f"the {budget:g} s measurement budget was spent")
        elif offer < MIN_OFFER_SECONDS:
            skip(s, capped)
        else:
            began = _clock()
            running = _start_measuring(fn, s.candidate, model, profile, machine, offer)
            concurrent.futures.wait([running], timeout=left)  # the deadline is the budget's
            if not running.done():
                _abandon(log, s.candidate.label, offer, running)
                skip(s, f"its measurement was still running when the {left:.1f} s left of the "
                        "budget were spent; it finishes in the background")
                continue
            try:
                est = running.result()
            except Exception as exc:  # a backend's failure to measure is not a failure to run
                skip(s, f"measure() raised {type(exc).__name__}: {exc}")
                continue
            took = _clock() - began
            if took > left:
                log["overran_seconds"] = took - left
            if est is None and took >= DECLINE_SECONDS:  # compiled, then left too little
                given = (f"{left:.1f} s left of the budget" if offer == left else
                         f"{offer:.1f} s offered (the estimated run of {leader.candidate.label})")
                skip(s, f"its gradient compiled, but the {given} ({took:.1f} s taken) were too "
                        "few to time it")
                continue
            if est is None:
                skip(s, capped if offer < left else
                     f"its compile would not fit in the {left:.1f} s left of the budget")
                continue
            s.estimate = measured_over(s.estimate, est)  # the memory plan and history kept
            s.rescore(steps, draws, chains)
            compiled.add(s.candidate.backend)
            # a gradient another candidate's measurement compiled and timed is read back
            s.measure_note = (f"measured in {took:.2f} s" if took >= 0.005 else
                              "measured: the same gradient's timing, taken for another row")
            log["measured"].append({
                "candidate": s.candidate.label, "seconds": took,
                "seconds_per_gradient": est.seconds_per_gradient.value,
                "note": est.seconds_per_gradient.note,
            })
    for s in scored:  # measuring started runtimes (numba, JAX) whose first use no run pays now
        if s.estimate.first_use:  # an estimate that names no parts keeps its own figure
            first = first_use_figures(*s.estimate.first_use)["first_use_seconds"]
            s.estimate = replace(s.estimate, first_use_seconds=costmodel.paced(
                first, s.estimate.start_up_pace))  # at the machine's pace, as selected
            s.rescore(steps, draws, chains)
        # and compiled the model's kernels, which its backend's disk cache now holds; a cache of
        # whole programs (JAX's) holds the run's program only after a run: the timing compiled
        # a loop of its own, and the run's compile is still to pay (until 2026-11-29 it was
        # taken off: a new glm_linear's NumPyro run estimated at 1.1 s, 3.4 s with it kept)
        if (s.candidate.backend in compiled and s.estimate.cold_compile_seconds.value > 0
                and not s.estimate.whole_program_cached):
            s.estimate = replace(s.estimate, cold_compile_seconds=Figure(
                0.0, "measured", "compiled by measured mode's timing: its kernels are cached"))
            s.rescore(steps, draws, chains)
    log["spent_seconds"] = _clock() - start
    return log
