"""Timing a candidate's compiled gradient for measured mode (``Backend.measure``).

Each function compiles the model's logp and gradient the way the backend will, times it at the
initial point (call overhead removed), and turns the timing into an :class:`Estimate` whose
``seconds_per_gradient`` is labelled ``measured``. Compilations are kept per model, so candidates
sharing a gradient (numba's two drivers) are compiled and timed once.
"""

from __future__ import annotations

import math
import os
import statistics
import time
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pymc_accel import costmodel, first_use
from pymc_accel.backend import Estimate, Figure
from pymc_accel.backends import pymc_compiled
from pymc_accel.backends.blas_threads import limit_blas
from pymc_accel.devices import cpu_cores
from pymc_accel.measure import TIMING_SECONDS, time_calls

if TYPE_CHECKING:
    from pymc_accel.backend import Candidate
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile

# model -> {(kind, device, precision): (compile_seconds, kernel_seconds, calls)}
_TIMINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Safety margin on a modelled compile time before one is started: measured on the 2-core
#: machine, numba compiles took 1.1 to 3x their modelled time and JAX ones up to 4x under load
#: (the quick regret run's measurement logs); the load factor and the learned ratio below
#: cover most of that, the margin the rest.
COMPILE_MARGIN = 1.5
#: Seconds kept after a compile for timing calls; a compile is started only if it leaves this.
MIN_TIMING_SECONDS = 0.05
# kind ("numba", "jax") -> the latest (actual compile / (modelled compile x load factor)) seen in
# this process: a machine slower to compile than modelled is predicted slower next time.
_COMPILE_RATIO: dict[str, float] = {}


def load_factor() -> float:
    """How much slower a CPU-bound compile runs than on an idle machine: the one-minute load
    average per core, at least 1 (other processes' work shares the cores)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return 1.0
    return max(1.0, load / max(1, cpu_cores()))


def predicted_compile_seconds(kind: str, modelled: float) -> float:
    """Seconds a compile of modelled ``modelled`` seconds is predicted to take here, now."""
    return modelled * max(COMPILE_MARGIN, _COMPILE_RATIO.get(kind, 0.0)) * load_factor()


def fits(kind: str, modelled: float, budget_seconds: float, call_seconds: float = 0.0) -> bool:
    """Whether a compile and the shortest timing after it (at least ``MIN_TIMING_SECONDS``,
    and the two calls ``time_calls`` always makes, each of about ``call_seconds``, predicted
    like the compile) fit in ``budget_seconds``."""
    timing = max(MIN_TIMING_SECONDS, 2 * call_seconds * max(COMPILE_MARGIN, 1.0) * load_factor())
    return predicted_compile_seconds(kind, modelled) + timing <= budget_seconds


def record_compile(kind: str, modelled: float, actual: float, load: float = 1.0) -> None:
    """Learn from a compile that took ``actual`` seconds against ``modelled`` at load ``load``."""
    if modelled > 0:
        _COMPILE_RATIO[kind] = actual / (modelled * max(1.0, load))


def kernel_seconds(call_seconds: float, machine: MachineFigures) -> float:
    """A timed Python call of a compiled function less the machine's call overhead, at least a
    tenth of the call."""
    return max(call_seconds - machine.cpu_call_seconds, 0.1 * call_seconds)


def numba_gradient_compile_seconds(model: Any) -> float | None:
    """Seconds the numba gradient compile of ``model`` took in this process (measured mode's
    timing, :func:`time_numba_gradient`), or ``None`` if it has not been compiled."""
    hit = _cached(model, ("numba", "cpu", "model"))
    return hit[0] if hit is not None else None


def _timing_seconds(budget_seconds: float, compiled: float) -> float:
    """Seconds left for timing calls after a compile: none when the compile used the budget
    (``time_calls`` still makes its minimum number of calls)."""
    return max(0.0, min(TIMING_SECONDS, budget_seconds - compiled))


def _cached(model: Any, key: tuple) -> tuple[float, float, int] | None:
    return _TIMINGS.get(model, {}).get(key)


def _store(model: Any, key: tuple, value: tuple[float, float, int]) -> None:
    _TIMINGS.setdefault(model, {})[key] = value


#: Spread of the uniform jitter added to the initial point before timing a gradient: PyMC's
#: default start (``init="jitter+adapt_diag"``) jitters each unconstrained value by U(-1, 1).
TIMING_JITTER = 1.0


def _start_point(model: Any, jitter: bool) -> dict[str, Any]:
    """The initial point, with PyMC's start jitter on its continuous variables (fixed seed)
    when ``jitter``: where gradients are timed.

    At the initial point itself the data's linear predictor is often zero everywhere, where
    libm's ``exp`` and ``log1p`` take their short paths: numba's gradient of the logistic seed
    model (2,000 rows) took 79 µs there and 99 µs a jitter away, and 132 µs per leapfrog in
    nutpie's run; a Student-t regression's, whose data are not at zero, took the same at both.
    """
    import numpy as np

    point = model.initial_point()
    if jitter:
        rng = np.random.default_rng(0)
        for v in model.continuous_value_vars:
            value = np.asarray(point[v.name])
            point[v.name] = (value + rng.uniform(-TIMING_JITTER, TIMING_JITTER, value.shape)
                             ).astype(value.dtype)
    return point


def _initial_args(model: Any, jitter: bool = False) -> list[Any]:
    point = _start_point(model, jitter)
    return [point[v.name] for v in model.value_vars]


def pymc_gradient_function(model: Any) -> Any:
    """PyMC's own compiled logp-and-gradient of ``model`` under PyTensor's numba linker: the
    ``ValueGradFunction`` that ``pm.sample(nuts_sampler="pymc", backend="numba")`` compiles
    (``init_nuts``: free variables raveled into one vector), called as its NUTS calls it.

    Measured mode compiles this function rather than one of its own so that its compile is
    the one the run needs: the kernels it puts in PyTensor's cache are the run's, and a model
    whose run has compiled them compiles it from the cache. A function of the unraveled
    variables shares most kernels, not all: after two runs of PyMC's NUTS on glm_linear in an
    empty compile directory it took 0.52 s to compile against 0.29 s once its own kernels
    were cached, which priced nutpie's compile over measured mode's budget there."""
    from pytensor.compile.mode import get_mode

    fn = model.logp_dlogp_function(ravel_inputs=True, mode=get_mode("NUMBA"))
    fn.trust_input = True
    return fn


def _raveled_initial_point(model: Any, jitter: bool = False) -> Any:
    """The initial point (``jitter``: :func:`_start_point`'s) as :func:`pymc_gradient_function`
    takes it: the continuous free variables (``logp_dlogp_function``'s default ``grad_vars``)
    raveled in the model's order."""
    from pymc.blocking import DictToArrayBijection

    point = _start_point(model, jitter)
    return DictToArrayBijection.map({v.name: point[v.name]
                                     for v in model.continuous_value_vars}).data


def time_numba_gradient(model: Any, budget_seconds: float, machine: MachineFigures,
                        modelled_compile: float = 0.0) -> tuple[float, float, int]:
    """Compile PyMC's logp and gradient with PyTensor's numba linker
    (:func:`pymc_gradient_function`) and time it.

    Returns ``(compile_seconds, kernel_seconds, calls)``. ``compile_seconds`` leaves out
    numba's start in the process (:mod:`pymc_accel.first_use`) when this compile paid it: a
    process's first numba compile took 0.97 s on glm_linear against 0.27 s for the next,
    and what a later compile of the model (nutpie's) is predicted from is the latter.
    """
    key = ("numba", "cpu", "model")
    hit = _cached(model, key)
    if hit is not None:
        return hit
    unpaid = first_use.first_use_figures("numba")["first_use_seconds"].value
    load = load_factor()
    start = time.perf_counter()
    fn = pymc_gradient_function(model)
    q = _raveled_initial_point(model, jitter=True)
    if not math.isfinite(fn(q)[0]):  # the jitter left the support: the initial point
        q = _raveled_initial_point(model)
        fn(q)
    wall = time.perf_counter() - start
    first_use.mark_used(("numba",))  # numba has started: the run will not pay it again
    record_compile("numba", modelled_compile + unpaid, wall, load)
    compiled = max(wall - unpaid, 0.5 * wall) if unpaid else wall
    pymc_compiled.keep(model, fn, compiled)  # PyMC's NUTS run uses it (pymc_compiled)
    call, calls = time_calls(lambda: fn(q), _timing_seconds(budget_seconds, wall), min_calls=2)
    kernel = kernel_seconds(call, machine)
    _store(model, key, (compiled, kernel, calls))
    return compiled, kernel, calls


def numba_measure(
    candidate: Candidate, model: Any, profile: ModelProfile, machine: MachineFigures,
    budget_seconds: float, modelled: Estimate, runtime: costmodel.Runtime, parallel_chains: int,
    cold_seconds: float | None = None,
) -> Estimate | None:
    """Measured estimate for a numba candidate (any driver), or ``None`` if over budget.
    ``cold_seconds``: what compiling the model's kernels not yet cached adds to the compile
    (``None``: not known, all of ``modelled.cold_compile_seconds``)."""
    if cold_seconds is None:
        cold_seconds = modelled.cold_compile_seconds.value
    modelled_compile = costmodel.gradient_compile_seconds(profile, runtime, cold_seconds)
    unpaid = first_use.first_use_figures("numba")["first_use_seconds"].value
    if _cached(model, ("numba", "cpu", "model")) is None and not fits(
        "numba", modelled_compile + unpaid, budget_seconds, modelled.seconds_per_gradient.value
    ):
        return None
    compiled, kernel, calls = time_numba_gradient(model, budget_seconds, machine,
                                                  modelled_compile)
    grad = costmodel.measured_cpu_gradient_seconds(
        kernel, profile, machine, candidate.precision, runtime, parallel_chains,
        note=f"numba gradient timed: {kernel * 1e6:.1f} µs median of {calls} calls "
             f"(compiled in {compiled:.2f} s), {runtime.name}",
    )
    return replace(modelled, seconds_per_gradient=grad)


def time_jax_gradient(model: Any, device: str, precision: str, budget_seconds: float,
                      modelled_compile: float = 0.0) -> tuple[float, float, int]:
    """jit-compile PyMC's JAX logp and gradient on ``device`` in ``precision`` and time it.

    Returns ``(compile_seconds, kernel_seconds, calls)``; the dispatch overhead of a trivial
    jitted call is subtracted, since the sampler's whole loop runs inside XLA.
    """
    key = ("jax", device, precision)
    hit = _cached(model, key)
    if hit is not None:
        return hit
    import jax
    import jax.numpy as jnp
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jaxified_logp

    dev = jax.devices(device)[0]
    load = load_factor()
    with jax_precision(precision, process_wide=False), jax.default_device(dev):
        start = time.perf_counter()
        # the log density the run jaxifies (run_logp): a tall matrix's products transposed
        vg = jax.jit(jax.value_and_grad(jaxified_logp(model, device=device)))
        args = [jnp.asarray(a) for a in _initial_args(model, jitter=True)]
        value_and_grad = vg(args)
        if not math.isfinite(value_and_grad[0]):  # the jitter left the support: initial point
            args = [jnp.asarray(a) for a in _initial_args(model)]
            value_and_grad = vg(args)
        jax.block_until_ready(value_and_grad)
        compiled = time.perf_counter() - start
        first_use.mark_used(("jax",))  # XLA's client has started: the run will not pay it again
        record_compile("jax", modelled_compile, compiled, load)
        left = _timing_seconds(budget_seconds, compiled)
        call, calls = time_calls(lambda: jax.block_until_ready(vg(args)), left * 0.8,
                                 min_calls=2)
        trivial = jax.jit(lambda xs: xs[0])
        jax.block_until_ready(trivial(args))
        dispatch, _ = time_calls(lambda: jax.block_until_ready(trivial(args)), left * 0.2,
                                 min_calls=2)
    kernel = max(call - dispatch, 0.1 * call)
    _store(model, key, (compiled, kernel, calls))
    return compiled, kernel, calls


def time_jax_sampler_gradient(model: Any, precision: str, chains: int, budget_seconds: float,
                              modelled_compile: float = 0.0
                              ) -> tuple[float, float, int, int] | None:
    """Time the JAX gradient on the CPU the way a sampler compiled whole runs it: inside one
    compiled loop, on the flat position (:mod:`pymc_accel.backends.flat_position`), with
    ``chains`` copies side by side on the XLA CPU devices (``jax.pmap``, as NumPyro's
    ``chain_method="parallel"`` runs its chains; at most one a device).

    Each pass of the loop is a leapfrog's gradient work: the value and gradient at the
    position, a momentum and a position update by a step size that is zero at run time (so the
    position stays where it starts, and XLA cannot hoist the gradient out of the loop). The loop
    is run for 1 and for ``n`` passes, ``n`` grown until a run takes a measurable time, and the
    difference over ``n - 1`` is the seconds per gradient with the chains sharing the cores:
    no call dispatch is in it, so none has to be modelled and taken off, as a standalone
    jitted call's had to be (:func:`jax_measure`).
    Written by hand: JAX has no timing of a function inside a compiled loop.

    Returns
    -------
    tuple or None
        ``(compile_seconds, seconds_per_gradient, passes, chains_side_by_side)``; ``None``
        when the budget left after compiling could not resolve a pass (:func:`seconds_per_pass`).
    """
    key = ("jax-loop", "cpu", precision, chains)
    hit = _cached(model, key)
    if hit is not None:
        return hit
    import jax
    import jax.numpy as jnp
    from pymc_accel.backends.flat_position import flatten_points
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jaxified_logp

    devices = jax.devices("cpu")[:_side_by_side(chains)]
    load = load_factor()
    # the run's BLAS threads (numpyro_nuts): a chain's share of the cores
    blas = limit_blas("auto", cpu_cores(), len(devices))
    with jax_precision(precision, process_wide=False), blas:
        start = time.perf_counter()
        logp = jaxified_logp(model, device="cpu")  # as the run jaxifies it (run_logp)
        flat, leaves = flatten_points(_initial_args(model, jitter=True), 1, precision)
        value_and_grad = jax.value_and_grad(lambda x: logp(leaves.unravel(x)))

        def passes(x, step, n):
            def one(_, carry):
                x, p, total = carry
                value, grad = value_and_grad(x)
                p = p + step * grad
                return x + step * p, p, total + value
            zero = jnp.zeros((), x.dtype)
            return jax.lax.fori_loop(0, n, one, (x, jnp.zeros_like(x), zero))[2]

        def side_by_side(flat):  # one copy of the position a device
            return jnp.stack([jnp.asarray(flat).reshape(-1)] * len(devices))

        run = jax.pmap(passes, in_axes=(0, None, None), devices=devices)
        xs = side_by_side(flat)
        step = jnp.asarray(0.0, xs.dtype)
        if not bool(jnp.all(jnp.isfinite(run(xs, step, 1)))):  # jitter left the support
            xs = side_by_side(flatten_points(_initial_args(model), 1, precision)[0])
            jax.block_until_ready(run(xs, step, 1))
        compiled = time.perf_counter() - start
        first_use.mark_used(("jax",))  # XLA's client has started: the run will not pay it again
        record_compile("jax", modelled_compile, compiled, load)

        def wall(n: int) -> float:
            began = time.perf_counter()
            jax.block_until_ready(run(xs, step, n))
            return time.perf_counter() - began

        left = _timing_seconds(budget_seconds, compiled)
        deadline = time.perf_counter() + left
        one = min(wall(1) for _ in range(3))
        # grow the loop until a run is 20x a single pass's call and at least LOOP_SECONDS
        n, took = 4, wall(4)
        while (took < max(LOOP_SECONDS, 20 * one) and n < MAX_LOOP_PASSES
               and time.perf_counter() + 4 * took < deadline):
            n *= 4
            took = wall(n)
        runs = [took] + [wall(n) for _ in range(2) if time.perf_counter() + took < deadline]
        per = seconds_per_pass(runs, one, n)
    if per is None:  # not kept: a later call with more budget times it again
        return None
    _store(model, key, (compiled, per, n, len(devices)))
    return compiled, per, n, len(devices)


def seconds_per_pass(runs: list[float], one: float, passes: int) -> float | None:
    """Seconds a pass of :func:`time_jax_sampler_gradient`'s loop takes: the median run of
    ``passes`` passes less the run of one, over ``passes - 1``; ``None`` when the runs were no
    longer than one pass's (the gradient unresolved: a budget spent compiling leaves the loop
    at its first length, and a busy machine's noise is then larger than the passes).

    Such a timing had been kept as 0 s a gradient, which priced the candidate at its modelled
    driver alone.
    """
    gain = statistics.median(runs) - one
    return gain / (passes - 1) if gain > 0 and passes > 1 else None


def _side_by_side(parallel_chains: int) -> int:
    """How many chains a JAX sampler runs side by side on the CPU: one an XLA CPU device, at
    most as many as there are devices (:func:`pymc_accel.devices.ask_for_host_devices`)."""
    import jax

    return max(1, min(parallel_chains, len(jax.devices("cpu"))))


#: Seconds a timed run of the loop in :func:`time_jax_sampler_gradient` should last, so that
#: the clock's and the call's noise are small against it.
LOOP_SECONDS = 0.03
#: Most passes of that loop (a gradient of a few flops takes tens of nanoseconds in it).
MAX_LOOP_PASSES = 1 << 16


def jax_measure(
    candidate: Candidate, model: Any, profile: ModelProfile, machine: MachineFigures,
    budget_seconds: float, modelled: Estimate, parallel_chains: int,
    runtime: costmodel.Runtime = costmodel.JAX_CPU,
) -> Estimate | None:
    """Measured estimate for a JAX candidate, or ``None`` if its compile is over budget or the
    budget left after it could not resolve the gradient (:func:`seconds_per_pass`).

    On the CPU, a ``runtime`` that compiles the sampler whole (no per-kernel dispatch,
    :data:`~pymc_accel.costmodel.JAX_CPU_SAMPLER`: NumPyro's, BlackJAX's) has its gradient
    timed as that sampler runs it, inside one compiled loop with ``parallel_chains`` chains side
    by side (:func:`time_jax_sampler_gradient`), and the runtime's modelled driver added. Until
    2026-11-26 it was timed as a standalone jitted call less a modelled dispatch per kernel,
    which left most of seed_mid's 245 µs call to the model (140 µs taken off) and gave 29 to
    181 µs in four runs of the same model, where the loop gave 147 to 163 µs against 118 to
    166 µs a leapfrog in NumPyro's sampler (``bench/fit_jax_gradient_timing.py``,
    docs/benchmarks.md). Elsewhere (the GPU; a runtime that calls the gradient from outside
    XLA) the standalone call is what a step pays, and is timed.

    A float32 candidate of a ``runtime`` whose float32 gain is its halved bytes
    (``float32_bytes_gain``: the sampler's chains side by side, sharing the memory) is priced
    from the float64 gradient's timing times the runtime's modelled float32/float64 ratio: a
    float32 gradient timed alone on the CPU shows no such gain (on a 101-parameter logistic
    regression it took 179 µs against float64's 139, where NumPyro's two chains ran 1.4x faster
    in float32), and ranking on it chose a sampler 2.6x slower (docs/benchmarks.md)."""
    precision = candidate.precision
    from_float64 = (candidate.device == "cpu" and precision == "float32"
                    and runtime.float32_bytes_gain)
    timed = "float64" if from_float64 else precision
    in_loop = candidate.device == "cpu" and runtime.per_kernel_seconds < \
        costmodel.JAX_CPU.per_kernel_seconds
    # the chains asked for, not yet those the devices seat: counting the devices starts JAX,
    # which a compile that does not fit must not pay
    key = (("jax-loop", "cpu", timed, parallel_chains) if in_loop
           else ("jax", candidate.device, timed))
    modelled_compile = costmodel.gradient_compile_seconds(profile, costmodel.JAX_CPU)
    if _cached(model, key) is None and not fits(
        "jax", modelled_compile, budget_seconds, modelled.seconds_per_gradient.value
    ):
        return None
    in_float64 = " in float64" if from_float64 else ""
    if in_loop:
        looped = time_jax_sampler_gradient(
            model, timed, parallel_chains, budget_seconds, modelled_compile)
        if looped is None:  # unresolved in the budget: the modelled figures stay
            return None
        compiled, seconds, passes, chains = looped
        # the chains were timed side by side already: nothing is scaled for them (1)
        grad = costmodel.measured_cpu_gradient_seconds(
            seconds, profile, machine, timed, runtime, 1,
            note=f"JAX gradient timed on cpu{in_float64} in a compiled loop, {chains} "
                 f"chain{'s' if chains > 1 else ''} side by side over {passes} passes "
                 f"(compiled in {compiled:.2f} s)")
    else:
        compiled, kernel, calls = time_jax_gradient(
            model, candidate.device, timed, budget_seconds, modelled_compile
        )
        note = (f"JAX gradient timed on {candidate.device}{in_float64}: "
                f"{kernel * 1e6:.1f} µs median of {calls} calls (compiled in {compiled:.2f} s)")
        if candidate.device == "cpu":
            grad = costmodel.measured_cpu_gradient_seconds(
                kernel, profile, machine, timed, runtime, parallel_chains, note=note)
        else:
            grad = Figure(kernel, "measured", note)
    if from_float64:
        ratio = (costmodel.cpu_gradient_seconds(profile, machine, precision, runtime,
                                                parallel_chains).value
                 / max(1e-12, costmodel.cpu_gradient_seconds(
                     profile, machine, "float64", runtime, parallel_chains).value))
        grad = Figure(grad.value * ratio, "measured",
                      f"{grad.note}, x {ratio:.2f}: the sampler's modelled float32/float64 "
                      "ratio (halved bytes; float32 timed alone is no faster)",
                      measured_share=grad.measured_share)
    return replace(modelled, seconds_per_gradient=grad)
