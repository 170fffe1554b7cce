"""nutpie's compiled model, built once by measured mode and used again by the run.

Most of a warm nutpie run's fixed cost is ``nutpie.compile_pymc_model`` (1.2 of 1.5 s on eight
schools, 3.2 of 3.1-3.3 s on the 66-parameter seed model: ``bench/fit_measured_compiles.py``), which
``pm.sample(nuts_sampler="nutpie")`` calls on every run. Measured mode compiles it to time it
(:func:`compile_for_run`); the run then passes the same compiled model to ``pm.sample``'s nutpie
path (:func:`reused_by_pm_sample`) instead of compiling again, so the time measuring took is
not paid twice.

A kept model is used only while the PyMC model is unchanged: the same variables, initial
values, precision and data arrays (``pm.set_data`` replaces an array, which makes the kept
model stale), and only for the call PyMC makes with its defaults (no ``var_names``, no
initial values, the numba backend). Any other call compiles as usual. Written by hand: neither
PyMC nor nutpie keeps compiled models between ``pm.sample`` calls.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from pymc_accel.backends.kept import KeptPerModel

_KEPT = KeptPerModel()


def compile_for_run(model: Any) -> float:
    """Compile ``model`` for nutpie's numba backend, as ``pm.sample(nuts_sampler="nutpie")``
    does, keep it for the run and return the seconds it took.

    Parameters
    ----------
    model : pm.Model

    Returns
    -------
    float
        Wall seconds of ``nutpie.compile_pymc_model``.
    """
    import nutpie

    start = time.perf_counter()
    compiled = nutpie.compile_pymc_model(model, backend="numba")
    seconds = time.perf_counter() - start
    _KEPT.put(model, compiled, seconds)
    return seconds


def time_gradient(model: Any, seconds: float) -> tuple[float, int] | None:
    """Time the log density and gradient function of the compiled model kept for ``model``
    (what nutpie's sampler calls each leapfrog, from its start point) for about ``seconds``:
    ``(median seconds per call, calls)``, or ``None`` when no model is kept or nutpie's
    compiled model does not expose the function as expected. The call goes through Python,
    whose overhead the caller subtracts.

    nutpie's function takes the free variables joined in one vector and returns the gradient
    joined too; on the hierarchical seed models it took 1.5x the time of the gradient compiled
    from ``model.logp()`` alone (107 against 71 µs on the 612-parameter one), so timing the
    latter misjudges nutpie there."""
    from pymc_accel.measure import time_calls

    compiled = kept(model)
    try:
        point = compiled.initial_point_func(0)
        fn = compiled.logp_func
        fn(point)
    except Exception:  # no kept model, or a nutpie whose compiled model differs
        return None
    return time_calls(lambda: fn(point), seconds, min_calls=2)


#: The compiled model kept for a model, or ``None`` if there is none or the model changed since
#: it was compiled; the seconds its compile took (0 when none is kept); dropping it.
kept = _KEPT.get
compile_seconds = _KEPT.seconds
forget = _KEPT.forget


@contextlib.contextmanager
def reused_by_pm_sample(model: Any):
    """Within the block, ``pm.sample``'s call ``nutpie.compile_pymc_model(model, var_names=None,
    backend="numba")`` returns the model kept for ``model`` (if any) instead of compiling;
    every other call compiles as before. Yields whether a kept model is in place."""
    compiled = kept(model)
    if compiled is None:
        yield False
        return
    import nutpie

    original = nutpie.compile_pymc_model

    def compile_pymc_model(m, *args, **kwargs):
        plain = not args and kwargs.get("var_names") is None and kwargs.get("backend") == "numba"
        if m is model and plain and set(kwargs) <= {"var_names", "backend"}:
            return compiled
        return original(m, *args, **kwargs)

    nutpie.compile_pymc_model = compile_pymc_model
    try:
        yield True
    finally:
        nutpie.compile_pymc_model = original
