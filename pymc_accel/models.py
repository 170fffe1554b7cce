"""Reference models used by the demo, the tests and the benchmarks, with their known answers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm

# Eight schools (Rubin 1981): effects and standard errors.
EIGHT_SCHOOLS_Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
EIGHT_SCHOOLS_SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools() -> pm.Model:
    """Eight schools, non-centred: mu ~ N(0, 5), tau ~ HalfCauchy(5), theta = mu + tau * z."""
    with pm.Model(coords={"school": np.arange(8)}) as model:
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        z = pm.Normal("theta_t", 0.0, 1.0, dims="school")
        pm.Deterministic("theta", mu + tau * z, dims="school")
        pm.Normal("y", mu + tau * z, EIGHT_SCHOOLS_SIGMA, observed=EIGHT_SCHOOLS_Y, dims="school")
    return model


@dataclass(frozen=True)
class ConjugateNormal:
    """y_i ~ N(mu, sigma) with sigma known and mu ~ N(m0, s0): the posterior is normal."""

    model: pm.Model
    post_mean: float
    post_sd: float


def conjugate_normal(n: int = 20, sigma: float = 2.0, m0: float = 0.0, s0: float = 3.0,
                     seed: int = 0) -> ConjugateNormal:
    """Build the conjugate normal-normal model and its analytic posterior."""
    y = np.random.default_rng(seed).normal(1.5, sigma, size=n)
    precision = 1 / s0**2 + n / sigma**2
    post_mean = (m0 / s0**2 + y.sum() / sigma**2) / precision
    with pm.Model(coords={"obs": np.arange(n)}) as model:
        mu = pm.Normal("mu", m0, s0)
        pm.Normal("y", mu, sigma, observed=y, dims="obs")
    return ConjugateNormal(model, float(post_mean), float(precision**-0.5))


@dataclass(frozen=True)
class SeedModel:
    """The seed blog's hierarchical logistic regression and the truth it was simulated from."""

    model: pm.Model
    alpha: float
    beta: np.ndarray
    sigma_alpha: float
    sigma_gamma: np.ndarray


def hierarchical_logistic(
    rows: int = 1_000_000, groups: int = 100_000, covariates: int = 20, seed: int = 827,
    dtype: str = "float64",
) -> SeedModel:
    """The hierarchical logistic regression of the GPU blog post (random intercepts and slopes,
    non-centred), on data simulated as the post does. Free dimension
    ``2 + 2 * covariates + groups * (covariates + 1)``."""
    rng = np.random.default_rng(seed)
    group_idx = rng.integers(0, groups, size=rows)
    X = rng.normal(size=(rows, covariates)).astype(dtype)
    alpha = -1.0
    beta = rng.normal(0.0, 0.45, size=covariates)
    sigma_alpha = 0.8
    sigma_gamma = rng.uniform(0.15, 0.35, size=covariates)
    alpha_g = rng.normal(0.0, sigma_alpha, size=groups)
    gamma_g = rng.normal(0.0, sigma_gamma, size=(groups, covariates))
    eta = alpha + alpha_g[group_idx] + np.sum(X * (beta + gamma_g[group_idx]), axis=1)
    y = rng.binomial(1, 1.0 / (1.0 + np.exp(-eta)))
    f = np.dtype(dtype).type
    coords = {"obs": np.arange(rows), "group": np.arange(groups), "covariate": np.arange(covariates)}
    with pm.Model(coords=coords) as model:
        X_data = pm.Data("X", X, dims=("obs", "covariate"))
        a = pm.Normal("α", f(0.0), f(1.5))
        b = pm.Normal("β", f(0.0), f(1.0), dims="covariate")
        s_a = pm.HalfNormal("σ_α", f(1.0))
        s_g = pm.HalfNormal("σ_γ", f(0.5), dims="covariate")
        z_a = pm.Normal("z_α", f(0.0), f(1.0), dims="group")
        z_g = pm.Normal("z_γ", f(0.0), f(1.0), dims=("group", "covariate"))
        eta_ = a + (s_a * z_a)[group_idx] + pm.math.sum(X_data * (b + (s_g * z_g)[group_idx]), axis=1)
        pm.Bernoulli("Y", logit_p=eta_, observed=y, dims="obs")
    return SeedModel(model, alpha, beta, sigma_alpha, sigma_gamma)


@dataclass(frozen=True)
class PharmacokineticModel:
    """A three-compartment pharmacokinetic model and the rates its data were simulated with."""

    model: pm.Model
    rates: dict[str, float]
    sigma: float


PK_RATES = {"ka": 0.8, "ke": 0.15, "k12": 0.1, "k21": 0.05}


def _pk_transfer(ka, ke, k12, k21, dt, xp):
    """Euler transfer matrices ``I + dt R`` (gut, central, peripheral), one per subject."""
    z = xp.zeros_like(ke)
    rows = [
        [1 - dt * ka, z, z],
        [dt * ka, 1 - dt * (ke + k12), dt * k21],
        [z, dt * k12, 1 - dt * k21],
    ]
    return xp.stack([xp.stack(r, axis=-1) for r in rows], axis=-2)


def pharmacokinetic(
    n_subjects: int = 4, n_steps: int = 100, *, dt: float = 0.25, dose_every: int = 48,
    sigma: float = 0.1, seed: int = 0,
) -> PharmacokineticModel:
    """The seed thread's model: masses c_t = K c_{t-1} + dose_t, a discretised first-order ODE.

    Three compartments (gut, central, peripheral) per subject; the transfer matrix ``K`` of
    each subject is the Euler step ``I + dt R`` of its rate matrix; a dose enters the gut every
    ``dose_every`` steps; the central compartment is observed with log-normal error from the
    second step on (it is empty at the first). The recurrence is written with
    ``pytensor.scan`` over batched matrix-vector products, as users write it. Free
    parameters: four log rates, one elimination effect per subject, and the noise scale.

    Parameters
    ----------
    n_subjects, n_steps : int
        Subjects (batched in one scan) and time steps.
    dt, dose_every, sigma, seed
        Step length, dosing interval, observation noise and the simulation's seed.

    Returns
    -------
    PharmacokineticModel
    """
    import pytensor
    import pytensor.tensor as pt

    rng = np.random.default_rng(seed)
    doses = np.zeros((n_steps, n_subjects, 3))
    doses[::dose_every, :, 0] = 100.0
    eta = rng.normal(0.0, 0.2, n_subjects)
    r = PK_RATES
    k_true = _pk_transfer(np.full(n_subjects, r["ka"]), r["ke"] * np.exp(eta),
                          np.full(n_subjects, r["k12"]), np.full(n_subjects, r["k21"]), dt, np)
    c, central = np.zeros((n_subjects, 3)), np.empty((n_steps, n_subjects))
    for t in range(n_steps):
        c = np.einsum("nij,nj->ni", k_true, c) + doses[t]
        central[t] = c[:, 1]
    # the central compartment is empty until the first dose has moved out of the gut
    y = central[1:] * np.exp(rng.normal(0.0, sigma, central[1:].shape))

    with pm.Model(coords={"subject": np.arange(n_subjects)}) as model:
        log_rates = {
            k: pm.Normal(f"log_{k}", np.log(v) + 0.2, 0.5) for k, v in PK_RATES.items()
        }
        eta_s = pm.Normal("eta", 0.0, 0.2, dims="subject")
        ones = pt.ones(n_subjects)
        K = _pk_transfer(pt.exp(log_rates["ka"]) * ones, pt.exp(log_rates["ke"] + eta_s),
                         pt.exp(log_rates["k12"]) * ones, pt.exp(log_rates["k21"]) * ones, dt, pt)
        masses = pytensor.scan(
            lambda dose, c, K: (K @ c[..., None])[..., 0] + dose,
            sequences=[pt.as_tensor(doses)],
            outputs_info=[pt.zeros((n_subjects, 3))],
            non_sequences=[K],
            return_updates=False,
        )
        s = pm.HalfNormal("sigma", 0.5)
        pm.LogNormal("y", pt.log(masses[1:, :, 1]), s, observed=y)
    return PharmacokineticModel(model, dict(PK_RATES), sigma)
