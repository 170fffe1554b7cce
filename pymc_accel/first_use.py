"""First use: what a sampler's runtime pays the first time it runs in a Python process.

A user who runs a script starts a new Python process every time, and part of a sampler's
start-up is paid once per process whatever the model: numba compiles nutpie's wrapper machinery
(kept in memory, not on disk), JAX starts its XLA client. The cost model's fixed costs are those
of a process that has run the sampler before (:func:`pymc_accel.costmodel.compile_seconds`);
:func:`first_use_figures` adds, for the runtimes a candidate starts, those this process has not
run yet, and :func:`pymc_accel.sample` marks them run once its run succeeds
(:func:`mark_used`).

Measured on the 2-core machine with PyTensor's disk cache warm, 10 + 10 draws x 2 chains, the
first run of a sampler in a new process less its second run of the same model (median of three
processes; ``bench/fit_first_use.py``, ``docs/results/fit-first-use-cpu.jsonl``):

==========================================  =========  =======================================
sampler (what ran before it in the process)  first use  parts
==========================================  =========  =======================================
PyMC's NUTS on the numba gradient            0.55 s     ``numba``
nutpie on the numba gradient                 5.0 s      ``numba`` + ``nutpie-numba``
nutpie, after PyMC's NUTS                    4.1 s      ``nutpie-numba``
NumPyro on JAX                               1.65 s     ``jax`` + ``numpyro``
nutpie on a JAX gradient                     2.7 s      ``jax`` + ``nutpie-jax``
nutpie on a JAX gradient, after NumPyro      1.35 s     ``nutpie-jax`` (the plugin's figure)
==========================================  =========  =======================================

The parts are the direct differences (``nutpie-numba`` after PyMC's NUTS, ``numpyro`` as NumPyro's
first use less ``jax``, what nutpie on a JAX gradient paid beyond NumPyro's); nutpie alone is
modelled at 4.65 s against the 5.0 s measured. A new model in a process that has run the
sampler costs up to 0.5 s (nutpie) more than a model run before, which is not modelled;
NumPyro's is in the first compile of its program (``costmodel.JAX_CPU_SAMPLER_COLD_SECONDS``). Runs outside pymc-accel (a ``pm.sample`` call of the user's own) are not seen:
their first use is still charged. ``PYMC_ACCEL_FIRST_USE=off`` charges nothing (the estimates
of a warm process). A plugin's own part costs what the plugin says it measured
(:func:`first_use_figures`'s ``seconds``), or nothing.

Written by hand: no library tracks what a process has started.
"""

from __future__ import annotations

from typing import Any

from pymc_accel.backend import Figure
from pymc_accel.switches import switched_on

#: Seconds each runtime pays the first time it runs in a process (the table above). A plugin
#: adds its own parts' figures through :func:`first_use_figures`'s ``seconds``; a part with no
#: figure costs nothing.
FIRST_USE_SECONDS = {
    "numba": 0.55,
    "nutpie-numba": 4.1,
    "jax": 1.3,
    "numpyro": 0.35,
}

_used: set[str] = set()


def enabled() -> bool:
    """Whether first use is charged (``PYMC_ACCEL_FIRST_USE`` is not ``off``)."""
    return switched_on("PYMC_ACCEL_FIRST_USE")


def first_use_figures(*parts: str, seconds: dict[str, float] | None = None) -> dict[str, Any]:
    """The first-use fields of an :class:`~pymc_accel.Estimate` for a candidate that starts
    ``parts``: the seconds of those not run in this process yet, and the parts to mark run.

    Parameters
    ----------
    *parts : str
        Runtimes the candidate starts, e.g. ``"numba", "nutpie-numba"`` or ``"jax"``.
    seconds : dict of str to float, optional
        Measured first use of parts this package has no figure for (a plugin's own runtime),
        kept for the process's later estimates. Figures already known are not replaced.

    Returns
    -------
    dict
        ``first_use_seconds`` (a :class:`~pymc_accel.Figure`) and ``first_use`` (the parts), to
        pass to ``Estimate(...)``.

    Examples
    --------
    >>> Estimate(seconds_per_gradient=..., gradients_per_draw=..., fixed_seconds=...,
    ...          **first_use_figures("jax", "my-sampler", seconds={"my-sampler": 0.8})
    ... )  # doctest: +SKIP
    """
    for part, figure in (seconds or {}).items():
        FIRST_USE_SECONDS.setdefault(part, float(figure))
    unpaid = [p for p in parts if p not in _used] if enabled() else []
    seconds = sum(FIRST_USE_SECONDS.get(p, 0.0) for p in unpaid)
    if seconds:
        note = "first run in this process of " + ", ".join(
            f"{p} ({FIRST_USE_SECONDS[p]:g} s)" for p in unpaid if FIRST_USE_SECONDS.get(p))
    elif enabled():
        note = "run in this process before" if parts else ""
    else:
        note = "not charged (PYMC_ACCEL_FIRST_USE=off)"
    return {"first_use_seconds": Figure(seconds, "modelled", note), "first_use": tuple(parts)}


def mark_used(parts) -> None:
    """Record that ``parts`` have run in this process (after a run that started them)."""
    _used.update(parts)


def used() -> frozenset[str]:
    """The runtimes this process has run."""
    return frozenset(_used)


def forget() -> None:
    """Forget what this process has run (tests and benchmarks that judge a new process)."""
    _used.clear()
