"""Timing a candidate's compiled gradient for measured mode (``Backend.measure``).

Each function compiles the model's logp and gradient the way the backend will, times it at the
initial point (call overhead removed), and turns the timing into an :class:`Estimate` whose
``seconds_per_gradient`` is labelled ``measured``. Compilations are kept per model, so candidates
sharing a gradient (numba's two drivers) are compiled and timed once.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pymc_accel import costmodel
from pymc_accel.backend import Estimate, Figure
from pymc_accel.measure import TIMING_SECONDS, time_calls

if TYPE_CHECKING:
    from pymc_accel.backend import Candidate
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile

# model -> {(kind, device, precision): (compile_seconds, kernel_seconds, calls)}
_TIMINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Measurement declines when the modelled compile times this margin exceeds the budget left.
COMPILE_MARGIN = 1.0


def _cached(model: Any, key: tuple) -> tuple[float, float, int] | None:
    return _TIMINGS.get(model, {}).get(key)


def _store(model: Any, key: tuple, value: tuple[float, float, int]) -> None:
    _TIMINGS.setdefault(model, {})[key] = value


def _initial_args(model: Any) -> list[Any]:
    point = model.initial_point()
    return [point[v.name] for v in model.value_vars]


def time_numba_gradient(model: Any, budget_seconds: float, machine: MachineFigures
                        ) -> tuple[float, float, int] | None:
    """Compile logp and gradient with PyTensor's numba linker and time it.

    Returns ``(compile_seconds, kernel_seconds, calls)``, or ``None`` without compiling when
    the modelled compile would not fit in ``budget_seconds``.
    """
    import pytensor

    key = ("numba", "cpu", "model")
    hit = _cached(model, key)
    if hit is not None:
        return hit
    start = time.perf_counter()
    logp = model.logp()
    grads = pytensor.grad(logp, model.value_vars)
    fn = pytensor.function(model.value_vars, [logp, *grads], mode="NUMBA", trust_input=True,
                           on_unused_input="ignore")
    args = _initial_args(model)
    fn(*args)
    compiled = time.perf_counter() - start
    left = max(0.05, min(TIMING_SECONDS, budget_seconds - compiled))
    call, calls = time_calls(lambda: fn(*args), left)
    kernel = max(call - machine.cpu_call_seconds, 0.1 * call)
    _store(model, key, (compiled, kernel, calls))
    return compiled, kernel, calls


def numba_measure(
    candidate: Candidate, model: Any, profile: ModelProfile, machine: MachineFigures,
    budget_seconds: float, modelled: Estimate, runtime: costmodel.Runtime, parallel_chains: int,
) -> Estimate | None:
    """Measured estimate for a numba candidate (any driver), or ``None`` if over budget."""
    if _cached(model, ("numba", "cpu", "model")) is None and (
        COMPILE_MARGIN * costmodel.gradient_compile_seconds(profile, runtime) > budget_seconds
    ):
        return None
    compiled, kernel, calls = time_numba_gradient(model, budget_seconds, machine)
    grad = costmodel.measured_cpu_gradient_seconds(
        kernel, profile, machine, candidate.precision, runtime, parallel_chains,
        note=f"numba gradient timed: {kernel * 1e6:.1f} µs median of {calls} calls "
             f"(compiled in {compiled:.2f} s) + {runtime.name} driver (modelled)",
    )
    return replace(modelled, seconds_per_gradient=grad)


def time_jax_gradient(model: Any, device: str, precision: str, budget_seconds: float
                      ) -> tuple[float, float, int]:
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
    from pymc.sampling.jax import get_jaxified_logp

    dev = jax.devices(device)[0]
    with jax.enable_x64(precision == "float64"), jax.default_device(dev):
        start = time.perf_counter()
        vg = jax.jit(jax.value_and_grad(get_jaxified_logp(model)))
        args = [jnp.asarray(a) for a in _initial_args(model)]
        jax.block_until_ready(vg(args))
        compiled = time.perf_counter() - start
        left = max(0.05, min(TIMING_SECONDS, budget_seconds - compiled))
        call, calls = time_calls(lambda: jax.block_until_ready(vg(args)), left * 0.8)
        trivial = jax.jit(lambda xs: xs[0])
        jax.block_until_ready(trivial(args))
        dispatch, _ = time_calls(lambda: jax.block_until_ready(trivial(args)), left * 0.2)
    kernel = max(call - dispatch, 0.1 * call)
    _store(model, key, (compiled, kernel, calls))
    return compiled, kernel, calls


def jax_measure(
    candidate: Candidate, model: Any, profile: ModelProfile, machine: MachineFigures,
    budget_seconds: float, modelled: Estimate, parallel_chains: int,
) -> Estimate | None:
    """Measured estimate for a JAX candidate, or ``None`` if its compile is over budget."""
    key = ("jax", candidate.device, candidate.precision)
    if _cached(model, key) is None and (
        COMPILE_MARGIN * costmodel.gradient_compile_seconds(profile, costmodel.JAX_CPU)
        > budget_seconds
    ):
        return None
    compiled, kernel, calls = time_jax_gradient(
        model, candidate.device, candidate.precision, budget_seconds
    )
    note = (f"JAX gradient timed on {candidate.device}: {kernel * 1e6:.1f} µs median of {calls} "
            f"calls (compiled in {compiled:.2f} s)")
    if candidate.device == "cpu":
        grad = costmodel.measured_cpu_gradient_seconds(
            kernel, profile, machine, candidate.precision, costmodel.JAX_CPU, parallel_chains,
            note=note + " + driver (modelled)",
        )
    else:
        grad = Figure(kernel, "measured", note)
    return replace(modelled, seconds_per_gradient=grad)
