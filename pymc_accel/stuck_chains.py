"""Chains that never left their start (a sampler whose gradient was not finite there), and
chains that barely moved (a step size that collapsed in tuning: :func:`frozen_chains`).

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
#: A frozen chain (:func:`frozen_chains`) reached the maximum tree depth on at least this share
#: of its kept draws...
FROZEN_MAX_DEPTH_SHARE = 0.9
#: ...and spread some variable over less than this fraction of the run's spread of it.
FROZEN_SPREAD_RATIO = 0.01
#: NUTS's maximum tree depth unless told otherwise (NumPyro's, BlackJAX's, PyMC's, nutpie's).
DEFAULT_MAX_TREE_DEPTH = 10


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


def frozen_chains(idata: Any) -> list[int]:
    """Indices of the chains that moved, but barely: NUTS whose step size collapsed in tuning.

    Such a chain takes the maximum tree depth at every draw and still moves by a hair: a latent
    Student-t process's NumPyro and BlackJAX chains (``bench/sweep_user_models.py``'s
    ``student_t_process``) each sat in a corner of the posterior at the maximum tree depth, with
    R-hat 4.2 and a min bulk ESS of 4, where PyMC's NUTS and nutpie sample the model
    (``docs/results/backend-posteriors-cpu-2026-12-01-ninth-set.md``). Their gradient was wrong
    (its kernel's coinciding distances, held since by
    :mod:`pymc_accel.rewrites.coincident_distances`), and both sample it now
    (``docs/results/backend-posteriors-cpu-2026-12-02-expquad.md``); a wrong gradient the
    rewrite does not know, or a step size collapsed for another reason, looks the same.
    :func:`stuck_chains` does not see them (no two draws are equal). A chain is frozen here when
    it reached the maximum tree depth on at least :data:`FROZEN_MAX_DEPTH_SHARE` of its kept
    draws and some posterior element's standard deviation within it is under
    :data:`FROZEN_SPREAD_RATIO` of that element's over every chain's draws. A slow chain of a
    hard geometry (a funnel's, a mixture's between modes) spreads far more than that; one chain
    alone is never frozen.

    Parameters
    ----------
    idata : DataTree or InferenceData
        A sampling result.

    Returns
    -------
    list of int
        Empty when no chain is frozen, or when the result has fewer than two chains, fewer
        than :data:`MIN_DRAWS` draws, or no tree depth statistic (``reached_max_treedepth``
        or ``tree_depth``).
    """
    at_max = _at_max_depth(idata)
    if at_max is None or at_max.shape[0] < 2 or at_max.shape[1] < MIN_DRAWS:
        return []
    suspects = np.flatnonzero(at_max.mean(axis=1) >= FROZEN_MAX_DEPTH_SHARE)
    if not suspects.size:  # the usual case, decided by the tree depths alone
        return []
    frozen = np.zeros(at_max.shape[0], dtype=bool)
    for values in _per_chain_series(idata):
        if not np.issubdtype(values.dtype, np.floating) or values.shape[:2] != at_max.shape:
            continue
        flat = values.reshape(values.shape[0], values.shape[1], -1)
        with np.errstate(invalid="ignore"):
            pooled = flat.std(axis=(0, 1))
            within = flat[suspects].std(axis=1)
            small = (within < FROZEN_SPREAD_RATIO * pooled) & (pooled > 0)
        frozen[suspects] |= small.any(axis=1)
    return [int(c) for c in np.flatnonzero(frozen)]


def _at_max_depth(idata: Any) -> np.ndarray | None:
    """Whether each (chain, draw) reached the maximum tree depth: PyMC's and nutpie's
    ``reached_max_treedepth``, else a ``tree_depth`` equal to the run's largest, where that is
    at least :data:`DEFAULT_MAX_TREE_DEPTH` (NumPyro and BlackJAX record the depth only);
    ``None`` without either."""
    children = getattr(idata, "children", None) or {}
    if "sample_stats" not in children:
        return None
    stats = idata["sample_stats"]
    if "reached_max_treedepth" in stats:
        return np.asarray(stats["reached_max_treedepth"], dtype=bool)
    if "tree_depth" in stats:
        depth = np.asarray(stats["tree_depth"])
        if not depth.size:
            return None
        # the run's deepest tree, but never under NUTS's default limit: a healthy run whose
        # every tree has the same shallow depth is not at a maximum
        return depth >= max(int(depth.max()), DEFAULT_MAX_TREE_DEPTH)
    return None


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
