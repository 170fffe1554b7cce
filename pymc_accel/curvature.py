"""How differently scaled a model's variables are where sampling starts: the scale spread.

NUTS under Stan's windowed adaptation (NumPyro's) runs its first window, 75 + 25 tuning draws,
with an identity mass matrix. Its step size is then set by the stiffest direction and its trees
must still cross the widest one, so those draws take about as many leapfrogs as the ratio of
the widest scale to the narrowest: on the non-centred group models, 12,000-37,000 leapfrogs a
chain beyond the sampling rate where the model's dimension predicts 3,000-7,000
(``bench/fit_numpyro_tuning.py --fit-spread`` on
``docs/results/fit-numpyro-tuning-cpu-2026-11-27-fourteen.jsonl`` and
``...-2026-11-28-new-families.jsonl``). nutpie starts its mass matrix from the gradient and
PyMC adapts its diagonal from the first draws; neither pays it.

The spread is ``sqrt(largest / smallest curvature)`` of ``-log p`` across the value variables at
the initial point. Each variable's curvature is the median over its entries of a Hutchinson
estimate of the Hessian's diagonal, ``v * (g(x) - g(x + h v)) / h`` with ``v`` of random signs
on that variable alone, so one gradient per variable besides the one at ``x``: within a
variable the off-diagonal terms average out in the median, and between variables there are
none. Evaluated op by op in Python (:class:`~pymc_accel.graph_building.Evaluator`), as the
float32 check evaluates the same gradient, and sharing its evaluator.

Written by hand: no library estimates a Hessian's diagonal from a PyTensor gradient without
compiling a Hessian-vector product, which costs more than the rest of a selection.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pymc_accel.profile import LogpGraph

#: The finite-difference step on the unconstrained scale, by the model's precision (float32's
#: gradients differ in their seventh digit).
STEP = {"float64": 1e-4, "float32": 1e-2}
#: At most this many gradients besides the one at the initial point: variables beyond it share
#: a probe (round-robin), and their off-diagonal terms then add to each other's estimates.
MAX_PROBES = 8
#: Models whose log density reads more data than this are not evaluated (one gradient of the
#: seed blog's full model, 176 MB of data, takes seconds): their spread stays unknown.
MAX_DATA_BYTES = 10_000_000


@dataclass(frozen=True)
class ScaleSpread:
    """The scale spread of a model at its initial point.

    Attributes
    ----------
    value : float
        ``sqrt(largest / smallest)`` of the variables' curvatures (1 for one variable).
    curvatures : dict of str to float
        Each value variable's median curvature of ``-log p`` (variables whose median is not
        positive, where ``log p`` is flat or convex there, are left out).
    seconds : float
        Time the evaluation took.
    """

    value: float
    curvatures: dict[str, float]
    seconds: float

    def describe(self) -> str:
        """One line for a report."""
        if not self.curvatures:
            return f"{self.value:.3g}"
        widest = min(self.curvatures, key=self.curvatures.get)
        stiffest = max(self.curvatures, key=self.curvatures.get)
        return (f"{self.value:.3g} (curvature of -log p at the initial point, median per variable: "
                f"{stiffest} {self.curvatures[stiffest]:.3g}, {widest} "
                f"{self.curvatures[widest]:.3g})")


def gradient_function(logp_graph: LogpGraph) -> Any:
    """The function of the value variables' values giving ``[logp, *gradients]`` as the profile
    built them (a :class:`~pymc_accel.graph_building.Evaluator`; the log density with a GP
    kernel's coinciding distances held where the profile held them,
    :attr:`~pymc_accel.profile.LogpGraph.differentiated_logp`), built once per graph and kept
    on it (the float32 check's first stage evaluates the same function)."""
    from pymc_accel.graph_building import Evaluator

    if logp_graph.evaluate is None:
        logp_graph.evaluate = Evaluator(list(logp_graph.value_vars),
                                        [logp_graph.differentiated_logp, *logp_graph.grads])
    return logp_graph.evaluate


def scale_spread(logp_graph: LogpGraph, point: dict[str, Any], seed: int = 0) -> ScaleSpread | None:
    """The scale spread of a model's log density at ``point`` (see the module docstring).

    Parameters
    ----------
    logp_graph : pymc_accel.profile.LogpGraph
        The log density and gradient its profile built (``grads`` must be set).
    point : dict
        Values of the value variables, by name (the initial point).
    seed : int, default 0
        Seed of the probes' random signs.

    Returns
    -------
    ScaleSpread or None
        ``None`` where it cannot be evaluated: no gradient graph, more data than
        :data:`MAX_DATA_BYTES`, a gradient that raises or is not finite.
    """
    start = time.perf_counter()
    if logp_graph.grads is None or (logp_graph.data_bytes or 0) > MAX_DATA_BYTES:
        return None
    names = [v.name for v in logp_graph.value_vars]
    try:
        x = [np.asarray(point[n], dtype=v.dtype) for n, v in zip(names, logp_graph.value_vars)]
    except KeyError:
        return None
    floats = [i for i, v in enumerate(logp_graph.value_vars) if "float" in v.dtype and x[i].size]
    if not floats:
        return None
    try:
        f = gradient_function(logp_graph)
        g0 = f(*x)[1:]
    except Exception:
        return None
    if not all(np.all(np.isfinite(g)) for g in g0):
        return None
    step = [STEP.get(str(xi.dtype), STEP["float32"]) for xi in x]
    rng = np.random.default_rng(seed)
    probes = [floats[i::MAX_PROBES] for i in range(min(MAX_PROBES, len(floats)))]
    curvatures: dict[str, float] = {}
    for members in probes:
        signs = {i: rng.choice([-1.0, 1.0], size=x[i].shape) for i in members}
        moved = [(xi + step[i] * signs[i]).astype(xi.dtype) if i in signs else xi
                 for i, xi in enumerate(x)]
        try:
            g = f(*moved)[1:]
        except Exception:
            return None
        for i in members:
            diag = np.ravel(signs[i] * (np.asarray(g0[i], dtype="float64")
                                        - np.asarray(g[i], dtype="float64")) / step[i])
            if not np.all(np.isfinite(diag)):
                return None
            median = float(np.median(diag))
            if median > 0:
                curvatures[names[i]] = median
    value = (math.sqrt(max(curvatures.values()) / min(curvatures.values()))
             if curvatures else 1.0)
    return ScaleSpread(value, curvatures, time.perf_counter() - start)
