"""Target densities with known answers for the DEER tests, in plain JAX."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class LogisticRegression(NamedTuple):
    """Bayesian logistic regression with a N(0, I) prior, on simulated data (as in the
    ParallelMCMC.jl GPU example: beta_true, X ~ N(0, 1))."""

    X: jax.Array
    y: jax.Array
    beta_true: np.ndarray

    def logdensity(self, beta):
        z = self.X @ beta
        return -0.5 * jnp.sum(beta**2) + jnp.sum(self.y * z - jnp.logaddexp(0.0, z))

    def hvp(self, beta, v):
        """Closed-form Hessian-vector product: -v - X^T (p (1 - p) * X v)."""
        p = jax.nn.sigmoid(self.X @ beta)
        return -v - self.X.T @ (p * (1 - p) * (self.X @ v))


def logistic_regression(d: int, n: int, seed: int = 0, dtype=jnp.float64) -> LogisticRegression:
    rng = np.random.default_rng(seed)
    beta = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ beta))).astype(float)
    return LogisticRegression(jnp.asarray(X, dtype), jnp.asarray(y, dtype), beta)


class Gaussian(NamedTuple):
    """A correlated Gaussian with known mean and covariance."""

    mean: np.ndarray
    cov: np.ndarray

    def logdensity(self, x):
        r = x - self.mean
        return -0.5 * r @ jnp.linalg.solve(self.cov, r)


def correlated_gaussian(d: int = 4, rho: float = 0.8, seed: int = 0) -> Gaussian:
    rng = np.random.default_rng(seed)
    scales = np.exp(rng.normal(size=d) * 0.7)
    corr = rho ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    return Gaussian(rng.normal(size=d) * 2, corr * np.outer(scales, scales))
