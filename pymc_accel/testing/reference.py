"""The conformance suite's reference model: three independent blocks with exact posteriors.

One model holds all three so a backend compiles and samples once per candidate:

- ``mu``: a conjugate normal mean (``y_i ~ N(mu, 2)``, ``mu ~ N(0, 3)``), posterior normal;
- ``x``: a correlated bivariate Gaussian with no data (correlation 0.9, scales 1 and 2), dims
  ``("coef",)``: the posterior is the prior, a test of mass-matrix adaptation;
- ``s2``: a constrained scale parameter, a variance with an inverse-gamma prior and normal data
  of known mean, posterior inverse-gamma (skewed, log-transformed by PyMC), and a
  Deterministic ``sigma = sqrt(s2)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm

CONJ_SIGMA, CONJ_M0, CONJ_S0 = 2.0, 0.0, 3.0
CORR_MEAN = np.array([1.0, -2.0])
CORR_SD = np.array([1.0, 2.0])
CORR_RHO = 0.9
IG_ALPHA, IG_BETA = 3.0, 2.0


@dataclass(frozen=True)
class ReferenceAnswers:
    """Exact posterior moments of :func:`reference_model`."""

    mu_mean: float
    mu_sd: float
    x_mean: np.ndarray
    x_sd: np.ndarray
    x_rho: float
    s2_mean: float
    s2_sd: float


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(1.5, CONJ_SIGMA, size=20), rng.normal(0.0, 1.5, size=12)


def reference_model() -> pm.Model:
    """Build the reference model (a new ``pm.Model`` on every call).

    Returns
    -------
    pm.Model
        Free variables ``mu``, ``x`` (dims ``coef``) and ``s2``; Deterministic ``sigma``;
        observed ``y`` (dims ``obs``) and ``z`` (dims ``obs_scale``).
    """
    y, z = _data()
    cov = np.outer(CORR_SD, CORR_SD) * np.array([[1.0, CORR_RHO], [CORR_RHO, 1.0]])
    coords = {"obs": np.arange(y.size), "coef": ["a", "b"], "obs_scale": np.arange(z.size)}
    with pm.Model(coords=coords) as model:
        mu = pm.Normal("mu", CONJ_M0, CONJ_S0)
        pm.Normal("y", mu, CONJ_SIGMA, observed=y, dims="obs")
        pm.MvNormal("x", mu=CORR_MEAN, cov=cov, dims="coef")
        s2 = pm.InverseGamma("s2", alpha=IG_ALPHA, beta=IG_BETA)
        pm.Deterministic("sigma", pm.math.sqrt(s2))
        pm.Normal("z", 0.0, pm.math.sqrt(s2), observed=z, dims="obs_scale")
    return model


def reference_answers() -> ReferenceAnswers:
    """The exact posterior moments of :func:`reference_model`, computed analytically."""
    y, z = _data()
    precision = 1 / CONJ_S0**2 + y.size / CONJ_SIGMA**2
    mu_mean = (CONJ_M0 / CONJ_S0**2 + y.sum() / CONJ_SIGMA**2) / precision
    a, b = IG_ALPHA + z.size / 2, IG_BETA + float(np.sum(z**2)) / 2
    return ReferenceAnswers(
        mu_mean=float(mu_mean),
        mu_sd=float(precision**-0.5),
        x_mean=CORR_MEAN,
        x_sd=CORR_SD,
        x_rho=CORR_RHO,
        s2_mean=b / (a - 1),
        s2_sd=b / ((a - 1) * np.sqrt(a - 2)),
    )


def discrete_model() -> pm.Model:
    """A model with a discrete free variable, which gradient-based samplers must refuse."""
    with pm.Model() as model:
        n = pm.Poisson("n", 3.0)
        pm.Normal("y", n, 1.0, observed=[2.0, 3.0])
    return model


def invalid_start_model() -> pm.Model:
    """A model whose log density is not finite at the initial point (data outside support)."""
    with pm.Model() as model:
        s = pm.HalfNormal("s", 1.0, shape=2)
        pm.Exponential("w", s[0] + s[1], observed=[-1.0, 2.0])
    return model
