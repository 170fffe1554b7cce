"""How correlated a model's posterior is at its mode: what lengthens NUTS's trees.

Every NUTS here adapts a diagonal mass matrix, which takes out each variable's scale and leaves
the posterior's correlations. For a Gaussian posterior with correlation matrix ``R`` the
leapfrog's step size is held by the narrowest direction's width, ``sqrt`` of ``R``'s smallest
eigenvalue, and a tree turns back after about half a period of a typical direction, so its
trees lengthen with the *spread* of ``R``'s scales, the mean over its eigendirections of
``sqrt(lambda_i / lambda_min)`` (1 for uncorrelated variables), which the dimension alone does
not see: held-out models with correlated posteriors (a spline's neighbouring coefficients, an
adstock's carry-over against its level, a horseshoe's scales) ran 2x-16x the leapfrogs a draw
the dimension's law priced, which hid their gradient work behind the fixed costs (and
float32's gain with it).

``cond(R)``, the widest direction's over the narrowest's, was the figure first: it counts one
wide direction as if every direction were that wide. On 20-dimensional Gaussians nutpie's
trees followed the spread, not ``cond(R)``: 9.4 leapfrogs a draw where one direction was wide
(``cond(R)`` 3,981, spread 4.1), 30 where one was narrow (``cond(R)`` 105, spread 9.8), 255 at
spread 98 (``bench/compare_spread_gaussians.py``,
``docs/results/spread-gaussians-cpu-2026-12-02.txt``). A non-centred hierarchy's group effects
share its intercept, so ``R`` has one wide direction and the rest alike (data_groups_33:
``cond(R)`` 11,962, spread 9.9; binomial_72 1,150 and 5.8); the spline's one narrow direction
(its basis sums to one, against the intercept) makes every other direction wide against it
(``cond(R)`` 25,824, spread 17.9; trees 3.5x their price). Lengthening the priced trees by
``(spread / 2.5)^c`` above 2.5 took the rms log error of the leapfrogs a draw, each model left
out of its own fit, from cond's 0.46 to 0.35 (nutpie), 0.51 to 0.37 (PyMC's NUTS) and 0.57 to
0.44 (NumPyro's), PyMC's and NumPyro's exponents (0.91, 0.96) near the 1 the argument above
gives, nutpie's 0.62 (:data:`pymc_accel.costmodel.CONDITIONING_EXPONENT`;
``docs/results/fit-tree-length-cpu-2026-12-02-spread.txt``).

The Hessian of ``-log p`` is taken at the mode that L-BFGS (SciPy's) finds from the initial
point, on the unconstrained scale, by forward differences of the profile's gradient (d
gradients beyond the search's). At the initial point itself it says nothing: there the Hessian
was positive definite on 25 of 52 models, and ``log cond(R)`` added nothing to the dimension's
law on them (``bench/fit_tree_length.py --at start``); at the mode it was on 50 of 54. A
non-centred hierarchy's draws are less correlated than its mode (data_groups_33: spread 4.1
of nutpie's draws, 9.9 at the mode; ``bench/compare_spread_draws.py``), so its trees are still
overstated (priced 2.4x, ran 1.1x).

Evaluated op by op (:class:`~pymc_accel.graph_building.Evaluator`, the gradient the scale
spread and the float32 check evaluate): 10 to 348 evaluations, the Hessian's included, on the
quick zoo and the held-out models, 0.01 s to 3.8 s (kalman_4's 22). So it is evaluated only
where it could change the choice and within a budget
(:func:`pymc_accel.selection._with_conditioning`). The Hessian by differences is written by
hand: SciPy's ``scipy.differentiate.hessian`` differentiates a function, not a gradient, and
costs d times the evaluations.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pymc_accel.profile import LogpGraph

#: Models of more free dimensions are not evaluated: the Hessian takes d gradients.
MAX_DIM = 150
#: The differences' step on the unconstrained scale.
STEP = 1e-4
#: L-BFGS iterations at most; a search that has not converged by then gives no figure.
MAX_ITERATIONS = 500


class _OverBudget(Exception):
    """The evaluation has taken its budget: it stops where it is, with no figure."""


@dataclass(frozen=True)
class PosteriorConditioning:
    """The conditioning of a model's posterior at its mode.

    Attributes
    ----------
    value : float
        The spread of the posterior's scales: the mean over the eigenvalues ``lambda_i`` of
        the correlation matrix ``R`` of the inverse Hessian of ``-log p`` at the mode of
        ``sqrt(lambda_i / lambda_min)`` (1 for uncorrelated variables).
    condition_number : float
        ``cond(R)``: its largest eigenvalue over its smallest, for the record.
    evaluations : int
        Log density and gradient evaluations it took, the Hessian's included.
    seconds : float
        Time it took.
    """

    value: float
    condition_number: float
    evaluations: int
    seconds: float

    def describe(self) -> str:
        """One line for a report."""
        return (f"{self.value:.3g} (spread of the posterior's correlation scales at its mode, "
                f"cond {self.condition_number:.3g}; {self.evaluations} evaluations, "
                f"{self.seconds:.2f} s)")


def correlation_spread(eigenvalues: np.ndarray) -> float:
    """The spread of a correlation matrix's scales: the mean over its eigenvalues of
    ``sqrt(lambda_i / lambda_min)``, 1 for uncorrelated variables (see the module docstring).

    Parameters
    ----------
    eigenvalues : numpy.ndarray
        The matrix's eigenvalues in ascending order (``numpy.linalg.eigvalsh``'s), the
        smallest positive.

    Returns
    -------
    float
    """
    return float(np.mean(np.sqrt(eigenvalues / eigenvalues[0])))


def posterior_conditioning(logp_graph: LogpGraph, point: dict[str, Any],
                           budget_seconds: float = math.inf) -> PosteriorConditioning | None:
    """The conditioning of the posterior whose log density ``logp_graph`` holds, at the mode
    found from ``point`` (see the module docstring).

    Parameters
    ----------
    logp_graph : pymc_accel.profile.LogpGraph
        The log density and gradient its profile built (``grads`` must be set).
    point : dict
        Values of the value variables, by name (the initial point).
    budget_seconds : float, default inf
        Time it may take: an evaluation that would start past it stops the search, which then
        gives no figure.

    Returns
    -------
    PosteriorConditioning or None
        ``None`` where it cannot be had: no gradient graph, a discrete or empty model, more
        than :data:`MAX_DIM` dimensions, an evaluation that raises or is not finite, a search
        that does not converge within the budget, or a Hessian at the mode that is not
        positive definite.
    """
    from scipy.optimize import minimize

    from pymc_accel.curvature import gradient_function

    start = time.perf_counter()
    if logp_graph.grads is None:
        return None
    value_vars = list(logp_graph.value_vars)
    if not value_vars or any("float" not in v.dtype for v in value_vars):
        return None
    try:
        values = [np.asarray(point[v.name], dtype="float64") for v in value_vars]
    except KeyError:
        return None
    shapes = [v.shape for v in values]
    sizes = [v.size for v in values]
    x0 = np.concatenate([v.ravel() for v in values]) if values else np.zeros(0)
    dim = x0.size
    if dim == 0 or dim > MAX_DIM:
        return None
    f = gradient_function(logp_graph)
    count = 0

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        nonlocal count
        if time.perf_counter() - start > budget_seconds:
            raise _OverBudget
        count += 1
        parts, at = [], 0
        for shape, size, var in zip(shapes, sizes, value_vars):
            parts.append(x[at:at + size].reshape(shape).astype(var.dtype))
            at += size
        logp, *grads = f(*parts)
        grad = np.concatenate([np.ravel(g) for g in grads]).astype("float64")
        if not (np.isfinite(logp) and np.all(np.isfinite(grad))):
            return math.inf, np.zeros(dim)
        return -float(logp), -grad

    try:
        if not math.isfinite(negative(x0)[0]):
            return None
        found = minimize(negative, x0, jac=True, method="L-BFGS-B",
                         options={"maxiter": MAX_ITERATIONS})
        if not found.success or not math.isfinite(found.fun):
            return None
        # forward differences from the gradient the search ended on: d gradients, where
        # central ones took 2 d for the same figure (a condition number, not a Hessian to
        # sample with)
        at_mode = np.asarray(found.jac, dtype="float64")
        hessian = np.empty((dim, dim))
        for i in range(dim):
            step = np.zeros(dim)
            step[i] = STEP
            hessian[i] = (negative(found.x + step)[1] - at_mode) / STEP
    except Exception:  # over the budget, or an evaluation the evaluator cannot run: no figure
        return None
    hessian = (hessian + hessian.T) / 2
    if not np.all(np.isfinite(hessian)):
        return None
    try:
        if np.linalg.eigvalsh(hessian)[0] <= 0:
            return None
        covariance = np.linalg.inv(hessian)
        sd = np.sqrt(np.diag(covariance))
        eig = np.linalg.eigvalsh(covariance / np.outer(sd, sd))
    except np.linalg.LinAlgError:
        return None
    if eig[0] <= 0:
        return None
    return PosteriorConditioning(correlation_spread(eig), float(eig[-1] / eig[0]), count,
                                 time.perf_counter() - start)
