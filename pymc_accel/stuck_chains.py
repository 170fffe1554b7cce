"""Chains that never left their start: a sampler whose gradient was not finite there.

A NUTS chain whose every leapfrog step from its start is divergent shrinks its step size to the
smallest normal number during tuning and then keeps its start for every draw: the run returns,
with the start repeated, and ESS of 1 to 3. Geometry does not do that (a funnel's chains
diverge often and still move), a gradient that is NaN or infinite at the start does. Seen on the
zoo (docs/benchmarks.md, "A third set of families"): NumPyro's float64 runs of a censored
normal regression, where JAX's derivative of PyMC's normal log-CDF is NaN in the far tail while
PyTensor's own gradient is finite (pymc-devs/pymc#7980), and its float32 runs of an HSGP
regression, where the spectral density underflows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Fewer kept draws than this say nothing about a chain having moved.
MIN_DRAWS = 10


def stuck_chains(idata: Any) -> list[int]:
    """Indices of the chains whose kept draws never moved.

    Read from every posterior variable, else from ``sample_stats.lp`` (the log density of each
    draw): a chain is stuck when each draw equals its first. A healthy NUTS chain repeats a
    draw only when a transition is rejected outright, never for all of a run. The draws come
    first: a log density that is the same everywhere (flat priors and no likelihood) leaves
    ``lp`` constant along a chain that moves.

    Parameters
    ----------
    idata : DataTree or InferenceData
        A sampling result.

    Returns
    -------
    list of int
        Empty when no chain is stuck, or when the result has fewer than :data:`MIN_DRAWS`
        draws or neither group.
    """
    series = _per_chain_series(idata)
    if not series or series[0].shape[1] < MIN_DRAWS:
        return []
    flats = [values.reshape(values.shape[0], values.shape[1], -1) for values in series]
    # a chain whose last draw is not its first moved: one draw's comparison clears it, so the
    # whole run is read only for a chain that may be stuck (a 105,000-dimensional model's 2,000
    # draws are 210 million values)
    stuck = np.ones(flats[0].shape[0], dtype=bool)
    for flat in flats:
        stuck &= _same(flat[:, -1:], flat[:, :1]).all(axis=(1, 2))
    for flat in flats:
        if not stuck.any():
            break
        suspects = np.flatnonzero(stuck)
        stuck[suspects] = _same(flat[suspects], flat[suspects, :1]).all(axis=(1, 2))
    return [int(c) for c in np.flatnonzero(stuck)]


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equality in which NaN equals NaN (a start whose log density is NaN,
    repeated); integer draws (a discrete variable's) have no NaN."""
    same = a == b
    if np.issubdtype(a.dtype, np.inexact):
        same |= np.isnan(a) & np.isnan(b)
    return same


def _per_chain_series(idata: Any) -> list[np.ndarray]:
    """Each posterior variable's (chain, draw, ...) array, else ``lp`` of ``sample_stats`` as
    one (chain, draw) array; an empty list when the result has neither."""
    children = getattr(idata, "children", None) or {}
    if "posterior" in children and idata["posterior"].data_vars:
        return [np.asarray(idata["posterior"][name]) for name in idata["posterior"].data_vars]
    if "sample_stats" in children and "lp" in idata["sample_stats"]:
        return [np.asarray(idata["sample_stats"]["lp"])]
    return []
