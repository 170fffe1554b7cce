"""The model zoo of the selection-regret benchmark: one model per regime a sampler choice
depends on.

Each entry builds a fresh ``pm.Model`` (a benchmark run must not reuse another's compiled
functions through the model object). ``QUICK`` sizes keep a whole ``--quick`` run within
minutes on two CPU cores (GP at N = 200 only: at N = 500 one gradient took 16 ms under numba and
23 ms under JAX here, about a minute per run of 200 + 200 draws); ``FULL`` sizes are the issue's
(GP at N = 200, 1000 and 2000, seed model up to 105k parameters).

========================  ================================================================
regime                    models
========================  ================================================================
tiny                      ``eight_schools``
mid-size GLMs             ``glm_linear``, ``glm_poisson``
seed hierarchical logit   ``seed_small``, ``seed_mid``, ``seed_large``
dense linear algebra      ``gp_N`` (marginal GP: a Cholesky of N x N per gradient)
long sequential Scan      ``pk_scan`` (the pharmacokinetic recurrence c_t = K c_{t-1})
funnel geometry           ``funnel`` (Neal's funnel, centred)
========================  ================================================================
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt

from pymc_accel.models import conjugate_normal, eight_schools, hierarchical_logistic


def glm_linear(n: int = 2000, p: int = 10, seed: int = 1) -> pm.Model:
    """Linear regression with ``p`` covariates and ``n`` rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ rng.normal(size=p) + 0.5 + rng.normal(0, 1.0, n)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 5)
        b = pm.Normal("b", 0, 1, shape=p)
        s = pm.HalfNormal("s", 2)
        pm.Normal("y", a + pm.math.dot(X, b), s, observed=y)
    return model


def glm_poisson(n: int = 5000, p: int = 20, seed: int = 2) -> pm.Model:
    """Poisson regression with a log link."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) / np.sqrt(p)
    y = rng.poisson(np.exp(1.0 + X @ rng.normal(0, 0.5, p)))
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 1, shape=p)
        pm.Poisson("y", pm.math.exp(a + pm.math.dot(X, b)), observed=y)
    return model


def gp_marginal(n: int = 200, seed: int = 3) -> pm.Model:
    """Marginal GP regression: y ~ MvNormal(0, eta^2 k_ls(x, x) + sigma^2 I); every gradient
    factorises the N x N covariance."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 10, n))
    y = np.sin(x) + rng.normal(0, 0.3, n)
    d2 = (x[:, None] - x[None, :]) ** 2
    with pm.Model() as model:
        ls = pm.Gamma("ls", 2, 1)
        eta = pm.HalfNormal("eta", 1)
        sigma = pm.HalfNormal("sigma", 1)
        cov = eta**2 * pt.exp(-0.5 * d2 / ls**2) + (sigma**2 + 1e-6) * pt.eye(n)
        pm.MvNormal("y", mu=np.zeros(n), cov=cov, observed=y)
    return model


def pk_scan(subjects: int = 4, steps: int = 100, seed: int = 4) -> pm.Model:
    """Three-compartment pharmacokinetics as a discretised linear ODE, c_t = K c_{t-1} per
    subject (``../shared/seeds/pk-scan-parallelization-thread.txt``): a sequential Scan of
    ``steps`` steps; the central compartment is observed with log-normal noise."""
    rng = np.random.default_rng(seed)

    def transition(k01, k12, k21, u):
        zeros = pt.zeros_like(k01)
        rows = [
            pt.stack([1 - k01, k01, zeros], axis=-1),
            pt.stack([zeros, 1 - k12 - u, k12], axis=-1),
            pt.stack([zeros, k21, 1 - k21], axis=-1),
        ]
        return pt.stack(rows, axis=-2)  # (subjects, 3, 3)

    def simulate(K, c0):
        def step(c, K):
            return pt.sum(K * c[:, None, :], axis=-1)

        return pytensor.scan(step, outputs_info=[c0], non_sequences=[K], n_steps=steps,
                             return_updates=False)

    true = [rng.uniform(0.05, 0.2, subjects) for _ in range(3)] + [rng.uniform(0.01, 0.05, subjects)]
    c0 = np.tile([10.0, 0.0, 0.0], (subjects, 1))
    K_true = pytensor.function([], transition(*[pt.as_tensor(t) for t in true]))()
    c = c0.copy()
    central = []
    for _ in range(steps):
        c = np.einsum("sij,sj->si", K_true, c)
        central.append(c[:, 1])
    y = np.log(np.array(central) + 1e-3) + rng.normal(0, 0.1, (steps, subjects))
    with pm.Model() as model:
        k01 = pm.Beta("k01", 2, 10, shape=subjects)
        k12 = pm.Beta("k12", 2, 10, shape=subjects)
        k21 = pm.Beta("k21", 2, 10, shape=subjects)
        u = pm.Beta("u", 1, 30, shape=subjects)
        s = pm.HalfNormal("s", 0.5)
        traj = simulate(transition(k01, k12, k21, u), pt.as_tensor(c0))
        pm.Normal("y", pt.log(traj[:, :, 1] + 1e-3), s, observed=y)
    return model


def funnel(dim: int = 9) -> pm.Model:
    """Neal's funnel, centred: v ~ N(0, 3), x_i ~ N(0, exp(v / 2)). No data; hard geometry."""
    with pm.Model() as model:
        v = pm.Normal("v", 0, 3)
        pm.Normal("x", 0, pm.math.exp(v / 2), shape=dim)
    return model


def _seed(rows: int, groups: int, covariates: int) -> Callable[[], pm.Model]:
    return lambda: hierarchical_logistic(rows, groups, covariates).model


def zoo(quick: bool = False) -> dict[str, Callable[[], pm.Model]]:
    """Name -> model factory, at quick or full sizes."""
    models: dict[str, Callable[[], pm.Model]] = {
        "eight_schools": eight_schools,
        "glm_linear": glm_linear,
        "glm_poisson": glm_poisson,
        "funnel": funnel,
        "pk_scan": lambda: pk_scan(4, 60 if quick else 200),
    }
    if quick:
        models |= {
            "seed_small": _seed(500, 20, 2),
            "seed_mid": _seed(2000, 100, 5),
            "seed_large": _seed(5000, 500, 10),
            "gp_200": lambda: gp_marginal(200),
        }
    else:
        models |= {
            "seed_small": _seed(2000, 100, 5),
            "seed_mid": _seed(5000, 500, 10),
            "seed_large": _seed(50_000, 5_000, 20),
            "gp_200": lambda: gp_marginal(200),
            "gp_1000": lambda: gp_marginal(1000),
            "gp_2000": lambda: gp_marginal(2000),
        }
    return models


# Model shapes beyond the zoo's regimes, for fitting what a numba compile costs
# (bench/fit_fixed.py): its time follows the kernels' loop ranks and the Scans, not the kernel
# count, and the zoo alone has too few shapes to tell them apart.


def many_scalars(k: int = 15) -> pm.Model:
    """``k`` scalar free variables: many small kernels, no loops over arrays to speak of."""
    y = np.random.default_rng(0).normal(size=50)
    with pm.Model() as model:
        xs = [pm.Normal(f"x{i}", 0, 1) for i in range(k)]
        pm.Normal("y", sum(xs), 1, observed=y)
    return model


def one_vector(k: int = 15) -> pm.Model:
    """:func:`many_scalars` with its ``k`` scalars as one vector variable: the same posterior
    and work, one value variable where that model has ``k``."""
    y = np.random.default_rng(0).normal(size=50)
    with pm.Model() as model:
        x = pm.Normal("x", 0, 1, shape=k)
        pm.Normal("y", x.sum(), 1, observed=y)
    return model


def separate_terms(k: int = 15) -> pm.Model:
    """:func:`one_vector`'s ``k`` dimensions each with its own observed term, as
    :func:`many_scalars` has them, on one value variable: as many kernels as that model,
    one leaf in the sampler's position."""
    y = np.random.default_rng(0).normal(size=(k, 5))
    with pm.Model() as model:
        x = pm.Normal("x", 0, 1, shape=k)
        for i in range(k):
            pm.Normal(f"y{i}", x[i], 1, observed=y[i])
    return model


def value_variable_shapes() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of models of one dimension split over 1 to 60 value variables: what a
    sampler's cost per leapfrog owes to their count (``bench/fit_numpyro_leapfrog.py``; NumPyro
    and BlackJAX under PyMC's ``sample_jax_nuts`` carry the position as one array a variable)."""
    return {
        "scalars_60": lambda: many_scalars(60), "vector_60": lambda: one_vector(60),
        "scalars_30": lambda: many_scalars(30), "vector_30": lambda: one_vector(30),
        "scalars_120": lambda: many_scalars(120), "vector_120": lambda: one_vector(120),
        "terms_30": lambda: separate_terms(30), "terms_60": lambda: separate_terms(60),
    }


def markov_chain_intervals(n: int = 16, seed: int = 7) -> pm.Model:
    """A two-state continuous-time Markov chain seen at ``n`` unequal intervals: each
    interval's transition matrix is ``pt.linalg.expm`` of the free rate matrix times its length
    (the user sweep's ``ctmc_matrix_exponential`` at n = 60). JAX lowers each matrix
    exponential to a program of its own (Pade approximants chosen by a switch, squarings in a
    loop), which XLA compiles apart: a small gradient, and a compile that grows with ``n``."""
    rng = np.random.default_rng(seed)
    dt = rng.uniform(0.2, 2.0, n)
    states = [0]
    for t in dt:
        stay = np.exp(-0.7 * t) if states[-1] == 0 else np.exp(-0.4 * t)
        states.append(states[-1] if rng.random() < stay else 1 - states[-1])
    states = np.array(states)
    with pm.Model() as model:
        a, b = pm.Gamma("a", 2, 2), pm.Gamma("b", 2, 2)
        q = pt.stack([pt.stack([-a, a]), pt.stack([b, -b])])
        p = pt.stack([pt.linalg.expm(q * t) for t in dt])
        pm.Potential("transitions", pt.log(p[np.arange(n), states[:-1], states[1:]]).sum())
    return model


def program_size_shapes() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of models whose JAX programs grow with an op JAX lowers to a program of
    its own (``pt.linalg.expm``), for fitting what XLA's compile charges such an op
    (``bench/fit_numpyro_fixed.py``)."""
    return {f"ctmc_{n}": (lambda n=n: markov_chain_intervals(n)) for n in (2, 8, 16, 32, 60)}


def logistic(n: int = 2000, p: int = 8) -> pm.Model:
    """Logistic regression through a matrix-vector product."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, p))
    y = rng.binomial(1, 1 / (1 + np.exp(-X @ rng.normal(size=p))))
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        a = pm.Normal("a", 0, 2)
        pm.Bernoulli("y", logit_p=a + pm.math.dot(X, b), observed=y)
    return model


def student_t(n: int = 1000, p: int = 5) -> pm.Model:
    """Robust regression: Student-t noise with its degrees of freedom free."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, p))
    y = X @ rng.normal(size=p) + rng.standard_t(3, n)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        s = pm.HalfNormal("s", 1)
        nu = pm.Gamma("nu", 2, 0.1)
        pm.StudentT("y", nu=nu, mu=pm.math.dot(X, b), sigma=s, observed=y)
    return model


def varying_intercept(n: int = 1000, groups: int = 20) -> pm.Model:
    """Non-centred varying intercepts indexed by group: a gather and its scatter."""
    rng = np.random.default_rng(3)
    idx = rng.integers(0, groups, n)
    y = rng.normal(size=n)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        sd = pm.HalfNormal("sd", 1)
        z = pm.Normal("z", 0, 1, shape=groups)
        s = pm.HalfNormal("s", 1)
        pm.Normal("y", mu + sd * z[idx], s, observed=y)
    return model


def mixture(n: int = 500) -> pm.Model:
    """Two-component normal mixture: loops over (observations x components)."""
    rng = np.random.default_rng(4)
    y = np.r_[rng.normal(-2, 1, n // 2), rng.normal(2, 1, n // 2)]
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.ones(2))
        mu = pm.Normal("mu", 0, 5, shape=2, transform=pm.distributions.transforms.ordered,
                       initval=[-1.0, 1.0])
        s = pm.HalfNormal("s", 2, shape=2)
        pm.NormalMixture("y", w, mu, s, observed=y)
    return model


def many_deterministics(k: int = 10) -> pm.Model:
    """Two free variables and ``k`` deterministics (which nutpie's expand function computes)."""
    y = np.random.default_rng(5).normal(size=100)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        s = pm.HalfNormal("s", 1)
        for i in range(k):
            pm.Deterministic(f"d{i}", a * i + s)
        pm.Normal("y", a, s, observed=y)
    return model


def ar1(steps: int = 100) -> pm.Model:
    """An AR(1) likelihood (PyMC's vectorised ``AR``, no Scan)."""
    y = np.cumsum(np.random.default_rng(6).normal(size=steps))
    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        s = pm.HalfNormal("s", 1)
        pm.AR("y", rho=[rho], sigma=s, init_dist=pm.Normal.dist(0, 10), observed=y)
    return model


def shapes() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of the model shapes the compile-cost fits add to the quick zoo."""
    return {
        # the tests' conjugate normal: one scalar mean, 20 observations
        "conjugate": lambda: conjugate_normal().model,
        "many_scalars": many_scalars, "logistic": logistic,
        "student_t": student_t, "varying_intercept": varying_intercept, "mixture": mixture,
        "many_deterministics": many_deterministics, "ar1": ar1,
        "pk_short": lambda: pk_scan(2, 30),
    }


def poisson_groups(n: int = 3000, groups: int = 300) -> pm.Model:
    """Poisson counts with non-centred group effects and one covariate."""
    rng = np.random.default_rng(8)
    idx = rng.integers(0, groups, n)
    x = rng.normal(size=n)
    y = rng.poisson(np.exp(0.5 + 0.3 * x + 0.4 * rng.normal(size=groups)[idx]))
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1)
        sd = pm.HalfNormal("sd", 1)
        z = pm.Normal("z", 0, 1, shape=groups)
        pm.Poisson("y", pm.math.exp(a + b * x + sd * z[idx]), observed=y)
    return model


def wide_regression(n: int = 1000, p: int = 200) -> pm.Model:
    """Linear regression on ``p`` independent covariates."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, p))
    y = X @ rng.normal(0, 0.5, p) + rng.normal(size=n)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        a = pm.Normal("a", 0, 2)
        s = pm.HalfNormal("s", 1)
        pm.Normal("y", a + pm.math.dot(X, b), s, observed=y)
    return model


# Families no model of the zoo, of the fits or of the held-out set above belongs to, added
# 2026-11-27 (evening) to test the selector on likelihoods and structures it has never seen:
# a latent random walk, a dense covariance, a likelihood of log-gamma terms, ordered cutpoints.


def stochastic_volatility(steps: int = 400) -> pm.Model:
    """Log-variance as a Gaussian random walk under Student-t returns: ``steps`` correlated
    latent values, non-centred (the walk built from standard normal innovations by a cumulative
    sum, no Scan). The centred form (``pm.GaussianRandomWalk`` under its scale) is a funnel:
    every sampler got 4-19 effective draws in 2,000 (docs/benchmarks.md)."""
    rng = np.random.default_rng(11)
    h = np.cumsum(rng.normal(0, 0.1, steps))
    returns = rng.normal(0, np.exp(h / 2))
    with pm.Model() as model:
        step = pm.Exponential("step", 10.0)
        innovations = pm.Normal("innovations", 0, 1, shape=steps)
        h = pm.Deterministic("h", pm.math.cumsum(step * innovations))
        nu = pm.Exponential("nu", 0.1)
        pm.StudentT("r", nu=nu, sigma=pm.math.exp(h / 2), observed=returns)
    return model


def lkj_mvnormal(dim: int = 5, n: int = 500) -> pm.Model:
    """A multivariate normal with an LKJ prior on its Cholesky factor: small dense linear
    algebra (triangular solves, a log-determinant) over ``n`` observations."""
    rng = np.random.default_rng(12)
    a = rng.normal(size=(dim, dim))
    y = rng.multivariate_normal(np.zeros(dim), a @ a.T / dim + np.eye(dim), size=n)
    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=dim, eta=2.0,
                                       sd_dist=pm.Exponential.dist(1.0, shape=dim))
        mu = pm.Normal("mu", 0, 5, shape=dim)
        pm.MvNormal("y", mu=mu, chol=chol, observed=y)
    return model


def negative_binomial(n: int = 3000, p: int = 10) -> pm.Model:
    """Over-dispersed counts: a log-gamma term per observation."""
    rng = np.random.default_rng(13)
    x = rng.normal(size=(n, p))
    mu = np.exp(0.5 + x @ rng.normal(0, 0.3, p))
    y = rng.negative_binomial(5, 5 / (5 + mu))
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1, shape=p)
        alpha = pm.Exponential("alpha", 1.0)
        pm.NegativeBinomial("y", mu=pm.math.exp(a + x @ b), alpha=alpha, observed=y)
    return model


def ordinal(n: int = 2000, p: int = 5, categories: int = 5) -> pm.Model:
    """Ordered logistic regression: cutpoints under PyMC's ordered transform."""
    rng = np.random.default_rng(14)
    x = rng.normal(size=(n, p))
    eta = x @ rng.normal(0, 1, p)
    cuts = np.linspace(-2, 2, categories - 1)
    y = (eta[:, None] + rng.logistic(size=n)[:, None] > cuts).sum(axis=1)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        c = pm.Normal("c", 0, 5, shape=categories - 1,
                      transform=pm.distributions.transforms.ordered,
                      initval=np.linspace(-1, 1, categories - 1))
        pm.OrderedLogistic("y", eta=pm.math.dot(x, b), cutpoints=c, observed=y)
    return model


# A third set of families, added 2026-11-30: again new to every fit, to the held-out set and to
# the two sets above: basis-function GP regression, a zero-inflated likelihood, censoring (the
# normal's log CDF) and a softmax over categories.


def hsgp_regression(n: int = 300, basis: int = 30) -> pm.Model:
    """A Hilbert-space GP approximation (``pm.gp.HSGP``) under a normal likelihood: a dense
    ``n x basis`` product of basis functions a gradient, its length scale and amplitude free."""
    rng = np.random.default_rng(15)
    X = np.sort(rng.uniform(0, 10, n))[:, None]
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=n)
    with pm.Model() as model:
        ell = pm.Gamma("ell", 2.0, 1.0)
        eta = pm.HalfNormal("eta", 1.0)
        cov = eta**2 * pm.gp.cov.ExpQuad(1, ls=ell)
        f = pm.gp.HSGP(m=[basis], c=1.5, cov_func=cov).prior("f", X=X)
        pm.Normal("y", f, pm.HalfNormal("sigma", 1.0), observed=y)
    return model


def zero_inflated_poisson(n: int = 3000, p: int = 5) -> pm.Model:
    """Counts with structural zeros: a two-component mixture per observation (a log-sum-exp of
    a point mass and a Poisson regression)."""
    rng = np.random.default_rng(16)
    x = rng.normal(size=(n, p))
    counts = rng.poisson(np.exp(0.8 + x @ rng.normal(0, 0.3, p)))
    y = np.where(rng.uniform(size=n) < 0.3, 0, counts)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1, shape=p)
        psi = pm.Beta("psi", 2, 2)
        pm.ZeroInflatedPoisson("y", psi, pm.math.exp(a + x @ b), observed=y)
    return model


def censored_regression(n: int = 2000, p: int = 4) -> pm.Model:
    """A linear regression whose responses above a limit are censored (``pm.Censored``): the
    normal's log density below it and its log survival function at it (erfc terms)."""
    rng = np.random.default_rng(17)
    x = rng.normal(size=(n, p))
    y = np.minimum(0.5 + x @ rng.normal(0, 1, p) + rng.normal(size=n), 1.5)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 1, shape=p)
        s = pm.HalfNormal("s", 1.0)
        pm.Censored("y", pm.Normal.dist(a + x @ b, s), lower=None, upper=1.5, observed=y)
    return model


def softmax_regression(n: int = 2000, p: int = 4, categories: int = 4) -> pm.Model:
    """Multinomial logistic regression: a categorical likelihood over the softmax of
    ``categories - 1`` free linear predictors (the first category's fixed at zero)."""
    rng = np.random.default_rng(18)
    x = rng.normal(size=(n, p))
    logits = np.column_stack([np.zeros(n), x @ rng.normal(0, 1, (p, categories - 1))])
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(n, 1)) > probs.cumsum(axis=1)).sum(axis=1)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2, shape=categories - 1)
        b = pm.Normal("b", 0, 1, shape=(p, categories - 1))
        eta = pt.concatenate([pt.zeros((n, 1)), a + pt.dot(x, b)], axis=1)
        pm.Categorical("y", p=pm.math.softmax(eta, axis=1), observed=y)
    return model


# A fourth set, added 2026-11-30 (afternoon) after the third found samplers whose chains never
# moved: likelihoods written with the normal CDF, log-gamma terms and censoring other than the
# normal's, where a JAX derivative or float32 might fail as they did there.


def probit_regression(n: int = 2000, p: int = 5) -> pm.Model:
    """Binary outcomes through the normal CDF (``pm.math.invprobit``, written with ``erfc``)."""
    rng = np.random.default_rng(19)
    x = rng.normal(size=(n, p))
    y = (x @ rng.normal(0, 1, p) + rng.normal(size=n) > 0).astype(int)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1, shape=p)
        pm.Bernoulli("y", p=pm.math.invprobit(a + x @ b), observed=y)
    return model


def beta_regression(n: int = 2000, p: int = 4) -> pm.Model:
    """Proportions under a Beta likelihood with a logit mean and a free precision."""
    rng = np.random.default_rng(20)
    x = rng.normal(size=(n, p))
    mu = 1 / (1 + np.exp(-(0.3 + x @ rng.normal(0, 0.5, p))))
    y = np.clip(rng.beta(mu * 20, (1 - mu) * 20), 1e-4, 1 - 1e-4)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1, shape=p)
        kappa = pm.Gamma("kappa", 2.0, 0.1)
        m = pm.math.invlogit(a + x @ b)
        pm.Beta("y", alpha=m * kappa, beta=(1 - m) * kappa, observed=y)
    return model


def weibull_survival(n: int = 2000, p: int = 3) -> pm.Model:
    """Survival times under a Weibull likelihood, right-censored at a fixed follow-up
    (``pm.Censored`` of a Weibull: its log-survival function, no normal CDF)."""
    rng = np.random.default_rng(21)
    x = rng.normal(size=(n, p))
    scale = np.exp(1.0 + x @ rng.normal(0, 0.3, p))
    t = np.minimum(scale * rng.weibull(1.5, size=n), 4.0)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 1, shape=p)
        k = pm.Gamma("k", 2.0, 1.0)
        pm.Censored("t", pm.Weibull.dist(alpha=k, beta=pm.math.exp(a + x @ b)), lower=None,
                    upper=4.0, observed=t)
    return model


def gamma_regression(n: int = 3000, p: int = 5) -> pm.Model:
    """Positive responses under a Gamma likelihood with a log link and a free shape."""
    rng = np.random.default_rng(22)
    x = rng.normal(size=(n, p))
    mu = np.exp(0.5 + x @ rng.normal(0, 0.3, p))
    y = rng.gamma(3.0, mu / 3.0)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1, shape=p)
        shape = pm.Gamma("shape", 2.0, 0.5)
        pm.Gamma("y", alpha=shape, beta=shape / pm.math.exp(a + x @ b), observed=y)
    return model


# A fifth set, added 2026-11-30 (afternoon): a circular likelihood (a Bessel function), a skewed
# one (the normal CDF inside the density), a mixture of counts, and heavy tails.


def von_mises_regression(n: int = 1000, p: int = 2) -> pm.Model:
    """Angles under a von Mises likelihood whose mean direction is a tangent link of a linear
    predictor (its log density holds the log of a Bessel function)."""
    rng = np.random.default_rng(23)
    x = rng.normal(size=(n, p))
    mu = 2 * np.arctan(x @ rng.normal(0, 0.5, p))
    y = rng.vonmises(mu, 4.0)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        kappa = pm.Gamma("kappa", 2.0, 0.5)
        pm.VonMises("y", mu=2 * pm.math.arctan(x @ b), kappa=kappa, observed=y)
    return model


def skew_normal_regression(n: int = 2000, p: int = 3) -> pm.Model:
    """A linear regression with skew-normal errors (``pm.SkewNormal``: the normal CDF of the
    scaled residual inside the density)."""
    rng = np.random.default_rng(24)
    x = rng.normal(size=(n, p))
    noise = np.abs(rng.normal(size=n)) * 0.8 + rng.normal(0, 0.4, size=n)
    y = 0.5 + x @ rng.normal(0, 1, p) + noise
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 1, shape=p)
        s = pm.HalfNormal("s", 1.0)
        alpha = pm.Normal("alpha", 0, 3)
        pm.SkewNormal("y", mu=a + x @ b, sigma=s, alpha=alpha, observed=y)
    return model


def poisson_mixture(n: int = 2000) -> pm.Model:
    """Counts from two Poisson components with free rates and weights (``pm.Mixture``: a
    log-sum-exp over components per observation), the rates ordered."""
    rng = np.random.default_rng(25)
    y = np.where(rng.uniform(size=n) < 0.3, rng.poisson(2.0, n), rng.poisson(9.0, n))
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.ones(2))
        lam = pm.Gamma("lam", 2.0, 0.3, shape=2, transform=pm.distributions.transforms.ordered,
                       initval=np.array([2.0, 8.0]))
        pm.Mixture("y", w=w, comp_dists=pm.Poisson.dist(lam), observed=y)
    return model


def student_t_heavy(n: int = 1000, p: int = 3) -> pm.Model:
    """A regression with Cauchy-like errors (Student-t, its degrees of freedom free and small):
    heavy tails, outliers in the data."""
    rng = np.random.default_rng(26)
    x = rng.normal(size=(n, p))
    y = x @ rng.normal(0, 1, p) + rng.standard_t(1.5, size=n)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        s = pm.HalfNormal("s", 1.0)
        nu = pm.Gamma("nu", 2.0, 1.0)
        pm.StudentT("y", nu=nu, mu=x @ b, sigma=s, observed=y)
    return model


# A sixth set, added 2026-11-30 (evening) from the user sweep's sixth and seventh sets, larger:
# a Scan over a volatility series, log-beta and log-gamma likelihoods, a mixture of
# multivariate normals, a Bessel-function likelihood, and group indices held in pm.Data.


def garch_series(steps: int = 300) -> pm.Model:
    """A GARCH(1, 1) volatility model (``pm.GARCH11``: a Scan over the series)."""
    rng = np.random.default_rng(27)
    vol, y = 0.5, np.empty(steps)
    for t in range(steps):
        y[t] = rng.normal(0, np.sqrt(vol))
        vol = 0.1 + 0.2 * y[t] ** 2 + 0.7 * vol
    with pm.Model() as model:
        pm.GARCH11("y", omega=pm.HalfNormal("omega", 1), alpha_1=pm.Beta("alpha_1", 2, 5),
                   beta_1=pm.Beta("beta_1", 5, 2), initial_vol=0.5, observed=y, shape=steps)
    return model


def skew_t_regression(n: int = 1000, p: int = 3) -> pm.Model:
    """A regression with skewed Student-t errors (Jones and Faddy: log-beta terms)."""
    rng = np.random.default_rng(28)
    x = rng.normal(size=(n, p))
    y = 0.5 + x @ rng.normal(0, 1, p) + rng.gamma(2.0, 0.5, n) - 1.0
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        pm.SkewStudentT("y", a=pm.Gamma("a", 4, 1), b=pm.Gamma("b_tail", 4, 1),
                        mu=pm.Normal("c", 0, 2) + x @ b, sigma=pm.HalfNormal("sigma"),
                        observed=y)
    return model


def zero_inflated_negative_binomial(n: int = 2000, p: int = 4) -> pm.Model:
    """Overdispersed counts with extra zeros, log-linear in four covariates (log-gamma terms)."""
    rng = np.random.default_rng(29)
    x = rng.normal(size=(n, p))
    mu = np.exp(1.0 + x @ rng.normal(0, 0.4, p))
    y = np.where(rng.uniform(size=n) < 0.25, 0, rng.negative_binomial(3, 3 / (3 + mu)))
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=p)
        pm.ZeroInflatedNegativeBinomial("y", psi=pm.Beta("psi", 2, 2),
                                        mu=pm.math.exp(pm.Normal("a", 0, 2) + x @ b),
                                        alpha=pm.HalfNormal("alpha", 5), observed=y)
    return model


def mvnormal_mixture(n: int = 600) -> pm.Model:
    """A mixture of two bivariate normals with free means and weights (a log-sum-exp over
    multivariate components)."""
    rng = np.random.default_rng(30)
    y = np.where(rng.uniform(size=(n, 1)) < 0.4, rng.normal(-2, 1, (n, 2)),
                 rng.normal(2, 1, (n, 2)))
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.ones(2))
        mu = pm.Normal("mu", 0, 3, shape=(2, 2), initval=np.array([[-1.0, -1.0], [1.0, 1.0]]))
        pm.Mixture("y", w, [pm.MvNormal.dist(mu[0], np.eye(2)),
                            pm.MvNormal.dist(mu[1], np.eye(2))], observed=y)
    return model


def rice_amplitudes(n: int = 2000) -> pm.Model:
    """Noisy amplitudes (``pm.Rice``: the scaled Bessel function ``i0e`` per observation)."""
    rng = np.random.default_rng(31)
    y = np.hypot(2.0 + rng.normal(0, 1, n), rng.normal(0, 1, n))
    with pm.Model() as model:
        pm.Rice("y", nu=pm.HalfNormal("nu", 3), sigma=pm.HalfNormal("sigma"), observed=y)
    return model


def data_indexed_groups(n: int = 3000, groups: int = 30) -> pm.Model:
    """Non-centred varying intercepts through an integer index held in ``pm.Data``, with
    coords and dims (frozen before the profile)."""
    rng = np.random.default_rng(32)
    group = rng.integers(0, groups, n)
    y = rng.normal(0.5 + rng.normal(0, 0.7, groups)[group], 1.0)
    with pm.Model(coords={"group": range(groups), "obs": range(n)}) as model:
        idx = pm.Data("group_idx", group, dims="obs")
        z = pm.Normal("z", 0, 1, dims="group")
        mu = pm.Normal("mu", 0, 2) + pm.HalfNormal("tau", 1) * z[idx]
        pm.Normal("y", mu, pm.HalfNormal("sigma"), observed=y, dims="obs")
    return model


# A seventh set (2026-11-30, night): models applied work writes often that no set above has:
# shrinkage, a local-level time series, sum-to-zero effects, a spline basis, grouped binomials.


def horseshoe_regression(n: int = 200, p: int = 25) -> pm.Model:
    """A sparse regression under a horseshoe prior (global and local half-Cauchy scales,
    non-centred): five of ``p`` coefficients are not zero."""
    rng = np.random.default_rng(33)
    x = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[:5] = rng.normal(0, 2, 5)
    y = 1.0 + x @ beta + rng.normal(0, 1, n)
    with pm.Model() as model:
        tau = pm.HalfCauchy("tau", 0.1)
        lam = pm.HalfCauchy("lam", 1.0, shape=p)
        z = pm.Normal("z", 0, 1, shape=p)
        b = pm.Deterministic("b", z * lam * tau)
        pm.Normal("y", pm.Normal("a", 0, 5) + x @ b, pm.HalfNormal("sigma", 2), observed=y)
    return model


def local_level(steps: int = 200) -> pm.Model:
    """A local-level time series: a latent Gaussian random walk (``pm.GaussianRandomWalk``,
    centred) seen through observation noise."""
    rng = np.random.default_rng(34)
    level = np.cumsum(rng.normal(0, 0.3, steps))
    y = level + rng.normal(0, 0.5, steps)
    with pm.Model() as model:
        walk = pm.GaussianRandomWalk("level", sigma=pm.HalfNormal("step", 1.0),
                                     init_dist=pm.Normal.dist(0, 2), steps=steps - 1)
        pm.Normal("y", walk, pm.HalfNormal("noise", 1.0), observed=y)
    return model


def zero_sum_crossed(n: int = 2000, rows: int = 20, cols: int = 20) -> pm.Model:
    """Two crossed factors as sum-to-zero effects (``pm.ZeroSumNormal`` with dims) on a normal
    outcome."""
    rng = np.random.default_rng(35)
    r, c = rng.integers(0, rows, n), rng.integers(0, cols, n)
    re, ce = rng.normal(0, 0.5, rows), rng.normal(0, 0.8, cols)
    y = 2.0 + (re - re.mean())[r] + (ce - ce.mean())[c] + rng.normal(0, 1, n)
    with pm.Model(coords={"row": range(rows), "col": range(cols)}) as model:
        a = pm.ZeroSumNormal("row_effect", sigma=pm.HalfNormal("row_sd", 1), dims="row")
        b = pm.ZeroSumNormal("col_effect", sigma=pm.HalfNormal("col_sd", 1), dims="col")
        pm.Normal("y", pm.Normal("mu", 0, 5) + a[r] + b[c], pm.HalfNormal("sigma", 2),
                  observed=y)
    return model


def spline_regression(n: int = 1000, knots: int = 16) -> pm.Model:
    """A cubic B-spline regression: a dense ``n`` x ``knots + 3`` basis (scipy's design
    matrix) times normal coefficients."""
    from scipy.interpolate import BSpline

    rng = np.random.default_rng(36)
    x = np.sort(rng.uniform(0, 10, n))
    inner = np.linspace(0, 10, knots)
    t = np.r_[[0.0] * 3, inner, [10.0] * 3]
    basis = BSpline.design_matrix(x, t, 3).toarray()
    y = np.sin(x) + 0.3 * x + rng.normal(0, 0.4, n)
    with pm.Model() as model:
        w = pm.Normal("w", 0, 2, shape=basis.shape[1])
        pm.Normal("y", pm.Normal("a", 0, 5) + pm.math.dot(basis, w), pm.HalfNormal("sigma"),
                  observed=y)
    return model


def binomial_groups(groups: int = 70) -> pm.Model:
    """Successes out of trials per group (the rats or baseball data's form): logits drawn from
    a normal population, non-centred, under a binomial likelihood."""
    rng = np.random.default_rng(37)
    trials = rng.integers(10, 60, groups)
    p = 1 / (1 + np.exp(-rng.normal(-1.0, 0.6, groups)))
    hits = rng.binomial(trials, p)
    with pm.Model() as model:
        z = pm.Normal("z", 0, 1, shape=groups)
        logit = pm.Normal("mu", 0, 2) + pm.HalfNormal("tau", 1) * z
        pm.Binomial("y", n=trials, logit_p=logit, observed=hits)
    return model



# An eighth set (2026-12-01), from the user sweep's ninth set, at sizes applied work has: a
# sparse GP, a hurdle model, a trimmed likelihood and a truncated regression. Left out, for a
# bench of 16 runs a candidate: a Kronecker GP on a 30 x 20 grid, whose first candidates' runs
# of 1000 + 1000 draws took minutes each and barely mixed, and a latent Student-t process, 6-14 s
# a sampler for 200 + 200 draws of 25 points in the user sweep
# (docs/results/sweep-user-models-cpu-2026-12-01-ninth-set-at-3f3ed66.txt).


def sparse_gp(n: int = 500, inducing: int = 20) -> pm.Model:
    """A sparse GP regression (``pm.gp.MarginalApprox``, FITC, a Matern 5/2 kernel) with
    ``inducing`` points under ``n`` observations: its length scale, amplitude and noise free."""
    rng = np.random.default_rng(38)
    x = np.sort(rng.uniform(0, 10, n))[:, None]
    y = np.sin(x[:, 0]) + 0.3 * np.cos(3 * x[:, 0]) + rng.normal(0, 0.3, n)
    with pm.Model() as model:
        ell = pm.Gamma("ell", 4, 2)
        eta = pm.HalfNormal("eta", 2)
        gp = pm.gp.MarginalApprox(cov_func=eta ** 2 * pm.gp.cov.Matern52(1, ls=ell),
                                  approx="FITC")
        gp.marginal_likelihood("y", X=x, Xu=np.linspace(0, 10, inducing)[:, None], y=y,
                               sigma=pm.HalfNormal("sigma", 1))
    return model


def hurdle_gamma_regression(n: int = 3000, k: int = 4) -> pm.Model:
    """Amounts that are zero or positive (rainfall, spending): a logistic regression for the
    zeros and a log-linear gamma regression for the positives (``pm.HurdleGamma``)."""
    rng = np.random.default_rng(40)
    x = rng.normal(size=(n, k))
    nonzero = rng.random(n) < 1 / (1 + np.exp(-(0.5 + x @ rng.normal(0, 0.5, k))))
    mean = np.exp(1.0 + x @ rng.normal(0, 0.3, k))
    y = np.where(nonzero, rng.gamma(2.0, mean / 2.0), 0.0)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1, shape=k + 1)
        b = pm.Normal("b", 0, 1, shape=k + 1)
        psi = pm.math.sigmoid(a[0] + x @ a[1:])
        pm.HurdleGamma("y", psi=psi, mu=pm.math.exp(b[0] + x @ b[1:]),
                       sigma=pm.HalfNormal("sigma", 2), observed=y)
    return model


def trimmed_regression(n: int = 2000, kept: float = 0.95) -> pm.Model:
    """A robust line fit by a trimmed likelihood: the smallest ``kept`` share of the squared
    residuals, found by ``pt.sort``, with a free scale; 5% of the points are outliers."""
    import pytensor.tensor as pt

    rng = np.random.default_rng(42)
    x = rng.normal(size=n)
    y = 1.0 + 2.0 * x + rng.normal(0, 0.5, n)
    y[: n // 20] += rng.normal(8, 2, n // 20)
    m = int(kept * n)
    with pm.Model() as model:
        a, b = pm.Normal("a", 0, 5), pm.Normal("b", 0, 5)
        s = pm.HalfNormal("s", 2)
        r2 = pt.sort(((y - a - b * x) / s) ** 2)[:m]
        pm.Potential("trimmed", -0.5 * r2.sum() - m * pt.log(s))
    return model


def truncated_gamma_regression(n: int = 1500, k: int = 4) -> pm.Model:
    """Sizes recorded only between 0.5 and 20 (``pm.Truncated`` of a gamma regression): the
    normalizing constant is a difference of incomplete gamma functions of the free shape."""
    rng = np.random.default_rng(43)
    x = rng.normal(size=(n * 2, k))
    y = rng.gamma(3.0, np.exp(0.5 + x @ rng.normal(0, 0.3, k)) / 3.0)
    keep = (y > 0.5) & (y < 20.0)
    x, y = x[keep][:n], y[keep][:n]
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=k)
        alpha = pm.Gamma("alpha", 2, 0.5)
        mu = pm.math.exp(pm.Normal("b0", 0, 2) + x @ b)
        pm.Truncated("y", pm.Gamma.dist(alpha=alpha, beta=alpha / mu), lower=0.5, upper=20.0,
                     observed=y)
    return model


def adstock_regression(weeks: int = 156, channels: int = 3, lags: int = 8) -> pm.Model:
    """A marketing-mix regression: each channel's weekly spend carried over by a geometric
    adstock of free decay, written as a batched convolution
    (``pytensor.tensor.signal.convolve1d``), then saturated by a logistic curve."""
    from pytensor.tensor.signal import convolve1d

    rng = np.random.default_rng(47)
    spend = rng.gamma(2.0, 1.0, (channels, weeks))
    lag = np.arange(lags, dtype=float)
    decay_true = np.linspace(0.3, 0.7, channels)
    carried = np.stack([np.convolve(spend[c], decay_true[c] ** lag)[:weeks]
                        for c in range(channels)])
    effect = np.tanh(0.25 * carried).T @ np.linspace(1.0, 2.0, channels)
    sales = 3.0 + effect + 0.3 * rng.normal(size=weeks)
    with pm.Model() as model:
        decay = pm.Beta("decay", 2, 2, shape=channels)
        lam = pm.Gamma("lam", 2, 4, shape=channels)
        beta = pm.HalfNormal("beta", 3.0, shape=channels)
        base = pm.Normal("base", 0.0, 5.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        kernel = decay[:, None] ** pt.as_tensor(lag)[None, :]
        adstock = convolve1d(pt.as_tensor(spend), kernel, mode="full")[:, :weeks]
        saturated = pt.tanh(lam[:, None] * adstock)
        pm.Normal("sales", base + (beta[:, None] * saturated).sum(axis=0), sigma,
                  observed=sales)
    return model


def kalman_ar2(steps: int = 200, seed: int = 53) -> pm.Model:
    """An AR(2) process seen with noise, its likelihood a Kalman filter written with
    ``pytensor.scan`` (2 x 2 state covariances) from the stationary covariance
    (``pt.linalg.solve_discrete_lyapunov``); the coefficients from free partial
    autocorrelations."""
    rng = np.random.default_rng(seed)
    x = np.zeros(steps + 2)
    for t in range(2, steps + 2):
        x[t] = 0.5 * x[t - 1] - 0.3 * x[t - 2] + 0.5 * rng.normal()
    y = x[2:] + 0.3 * rng.normal(size=steps)
    with pm.Model() as model:
        r1 = pm.Uniform("r1", -0.95, 0.95)
        r2 = pm.Uniform("r2", -0.95, 0.95)
        q = pm.HalfNormal("q", 1.0)
        h = pm.HalfNormal("h", 1.0)
        zero, one = pt.constant(0.0), pt.constant(1.0)
        trans = pt.stack([pt.stack([r1 * (1 - r2), r2]), pt.stack([one, zero])])
        cov = pt.stack([pt.stack([q**2, zero]), pt.stack([zero, zero])])

        def step(obs, a, p, h, trans, cov):
            f = p[0, 0] + h**2
            v = obs - a[0]
            k = p[:, 0] / f
            p_upd = p - pt.outer(k, p[0, :])
            return (pt.dot(trans, a + k * v), pt.dot(pt.dot(trans, p_upd), trans.T) + cov,
                    -0.5 * (pt.log(2 * np.pi * f) + v**2 / f))

        (_, _, terms), _ = pytensor.scan(
            step, sequences=[pt.as_tensor(y)],
            outputs_info=[pt.zeros(2), pt.linalg.solve_discrete_lyapunov(trans, cov), None],
            non_sequences=[h, trans, cov])
        pm.Potential("kalman", terms.sum())
    return model


def sar_lattice(side: int = 10, seed: int = 59) -> pm.Model:
    """A simultaneous autoregressive regression on a ``side`` x ``side`` lattice: its log
    density carries the log determinant of ``I - rho W`` (``pt.linalg.slogdet``, an LU of
    ``side**2`` x ``side**2`` a gradient) of the free spatial correlation."""
    rng = np.random.default_rng(seed)
    n = side * side
    w = np.zeros((n, n))
    for i in range(side):
        for j in range(side):
            for di, dj in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                if 0 <= i + di < side and 0 <= j + dj < side:
                    w[i * side + j, (i + di) * side + j + dj] = 1.0
    w /= w.sum(axis=1, keepdims=True)
    x = rng.normal(size=(n, 2))
    y = np.linalg.solve(np.eye(n) - 0.5 * w,
                        x @ np.array([1.0, -0.7]) + 0.5 * rng.normal(size=n))
    with pm.Model() as model:
        rho = pm.Uniform("rho", -0.95, 0.95)
        beta = pm.Normal("beta", 0.0, 2.0, shape=2)
        sigma = pm.HalfNormal("sigma", 1.0)
        a = pt.eye(n) - rho * pt.as_tensor(w)
        resid = pt.dot(a, pt.as_tensor(y)) - pt.dot(pt.as_tensor(x), beta)
        pm.Potential("sar", pt.linalg.slogdet(a)[1]
                     + pm.logp(pm.Normal.dist(0.0, sigma), resid).sum())
    return model


def discrete_survival(n: int = 1000, periods: int = 12, k: int = 3) -> pm.Model:
    """Discrete-time survival: a logistic hazard in period and covariates, survival the
    cumulative product of one minus the hazard along the periods (``pt.cumprod``); an
    event's likelihood its hazard times the survival before it, a censored time's its
    survival."""
    rng = np.random.default_rng(61)
    x = rng.normal(size=(n, k))
    t = np.arange(periods, dtype=float)
    effects = np.array([0.5, -0.3, 0.2, 0.1, -0.1])[:k]
    hazard = 1 / (1 + np.exp(-(-2.0 + 0.1 * t[None, :] + (x @ effects)[:, None])))
    happened = rng.uniform(size=(n, periods)) < hazard
    times = np.where(happened.any(axis=1), happened.argmax(axis=1), periods - 1)
    events = (happened.any(axis=1) & (rng.uniform(size=n) < 0.9)).astype(float)
    rows = np.arange(n)
    with pm.Model() as model:
        a = pm.Normal("a", -2.0, 1.0)
        b = pm.Normal("b", 0.0, 0.5)
        c = pm.Normal("c", 0.0, 1.0, shape=k)
        h = pm.math.invlogit(a + b * pt.as_tensor(t)[None, :] + pt.dot(x, c)[:, None])
        survival = pt.cumprod(1 - h, axis=1)
        before = pt.concatenate([pt.ones((n, 1)), survival[:, :-1]], axis=1)
        loglik = (events * (pt.log(h[rows, times]) + pt.log(before[rows, times]))
                  + (1 - events) * pt.log(survival[rows, times]))
        pm.Potential("survival", loglik.sum())
    return model


def gaussian_copula(n: int = 500, seed: int = 67) -> pm.Model:
    """An exponential and a gamma margin joined by a Gaussian copula of free correlation: each
    margin's CDF (``pt.gammainc`` of the free shape for the gamma's) through the normal
    quantile (``pt.erfinv``), the copula's density beside the margins' own."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], n)
    u = stats.norm.cdf(z)
    x1 = stats.expon(scale=1 / 1.5).ppf(u[:, 0])
    x2 = stats.gamma(3.0, scale=0.5).ppf(u[:, 1])
    with pm.Model() as model:
        rate = pm.Gamma("rate", 2, 1)
        shape = pm.Gamma("shape", 2, 1)
        scale = pm.Gamma("scale", 2, 2)
        rho = pm.Uniform("rho", -0.95, 0.95)
        pm.Exponential("x1", rate, observed=x1)
        pm.Gamma("x2", alpha=shape, beta=1 / scale, observed=x2)
        u1 = pt.clip(1 - pt.exp(-rate * x1), 1e-9, 1 - 1e-9)
        u2 = pt.clip(pt.gammainc(shape, x2 / scale), 1e-9, 1 - 1e-9)
        q1 = np.sqrt(2.0) * pt.erfinv(2 * u1 - 1)
        q2 = np.sqrt(2.0) * pt.erfinv(2 * u2 - 1)
        copula = (-0.5 * pt.log(1 - rho**2)
                  - (rho**2 * (q1**2 + q2**2) - 2 * rho * q1 * q2) / (2 * (1 - rho**2)))
        pm.Potential("copula", copula.sum())
    return model


def censored_gamma(n: int = 2000, free_shape: bool = True, seed: int = 71) -> pm.Model:
    """Waiting times censored at a fixed follow-up (``pm.Censored`` of a gamma regression):
    each row's log-likelihood is the gamma's survival function at the follow-up, an incomplete
    gamma function (``gammaincc``) of the shape and of the row's rate, the free shape's or a
    fixed one's (``free_shape``)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = np.minimum(rng.gamma(3.0, np.exp(0.3 + 0.4 * x) / 3.0), 2.5)
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2, 0.5) if free_shape else 3.0
        b = pm.Normal("b", 0, 1, shape=2)
        mu = pm.math.exp(b[0] + b[1] * x)
        pm.Censored("y", pm.Gamma.dist(alpha=alpha, beta=alpha / mu), lower=None, upper=2.5,
                    observed=y)
    return model


def censored_t(n: int = 2000, seed: int = 73) -> pm.Model:
    """A regression with Student-t noise of fixed degrees of freedom, censored below
    (``pm.Censored`` of a Student-t): its log-CDF is an incomplete beta function
    (``betainc``) of each row's location."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = np.maximum(0.5 * x + rng.standard_t(4, n), -1.5)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 2)
        sigma = pm.HalfNormal("sigma", 2)
        pm.Censored("y", pm.StudentT.dist(4, mu=b * x, sigma=sigma), lower=-1.5, upper=None,
                    observed=y)
    return model


def interval_gamma(groups: int = 2, n: int = 100, seed: int = 79) -> pm.Model:
    """Waiting times each known only to lie in an interval, ``groups`` clinics recording them
    to intervals of their own width: each group's likelihood a difference of two incomplete
    gamma functions of the free shape and rate (``pt.gammainc``), ``2 * groups`` nodes in
    all."""
    rng = np.random.default_rng(seed)
    with pm.Model() as model:
        shape = pm.Gamma("shape", 2, 1)
        rate = pm.Gamma("rate", 2, 1)
        total = 0.0
        for g in range(groups):
            width = 0.5 + g
            t = rng.gamma(3.0, 1 / 1.5, n)
            lo = np.floor(t / width) * width
            p = pt.gammainc(shape, rate * (lo + width)) - pt.gammainc(shape, rate * lo)
            total = total + pt.log(pt.maximum(p, 1e-300)).sum()
        pm.Potential("intervals", total)
    return model


def series_function_shapes() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of models whose log densities hold functions that JAX computes by a
    series looped to convergence for each element (``census.SERIES_FUNCTIONS``: the incomplete
    gamma and beta functions), for fitting what they cost a JAX sampler's leapfrog
    (``bench/fit_xla_series_functions.py``). The held-out ``copula_4`` and
    ``truncated_gamma_6`` are not among them."""
    return {
        "copula_150": lambda: gaussian_copula(150),
        "copula_2000": lambda: gaussian_copula(2000),
        "censored_gamma_300": lambda: censored_gamma(300),
        "censored_gamma_2000": lambda: censored_gamma(2000),
        "censored_gamma_fixed_2000": lambda: censored_gamma(2000, free_shape=False),
        "censored_t_2000": censored_t,
        "intervals_4": lambda: interval_gamma(2),
        "intervals_8": lambda: interval_gamma(4),
    }


def held_out() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of models that no trajectory or regret figure was fitted on, with 7 to
    503 free dimensions: out-of-sample checks of the cost model (``bench/fit_trajectories.py``,
    ``bench/bench_regret.py --models``). ``student_t_7`` is the :func:`shapes` model
    ``student_t``, whose compile and single gradient the compile and transcendental fits
    timed; the other six are new to every fit."""
    return {
        "student_t_7": student_t,
        "logistic_31": lambda: logistic(2000, 30),
        "groups_53": lambda: varying_intercept(1000, 50),
        "logistic_101": lambda: logistic(3000, 100),
        "wide_202": wide_regression,
        "poisson_groups_303": poisson_groups,
        "groups_503": lambda: varying_intercept(4000, 500),
        # added after float32's bytes were priced in NumPyro's sampler, to check that change on
        # matrix-vector-heavy models it was not designed on
        "poisson_41": lambda: glm_poisson(8000, 40),
        "logistic_151": lambda: logistic(4000, 150),
        # families new to every fit and to the set above (2026-11-27, evening)
        "stochvol_402": stochastic_volatility,
        "lkj_20": lkj_mvnormal,
        "negbin_12": negative_binomial,
        "ordinal_9": ordinal,
        # a third set of families new to every fit (2026-11-30)
        "hsgp_33": hsgp_regression,
        "zip_7": zero_inflated_poisson,
        "censored_6": censored_regression,
        "softmax_15": softmax_regression,
        # a fourth set (2026-11-30, afternoon)
        "probit_6": probit_regression,
        "beta_6": beta_regression,
        "weibull_5": weibull_survival,
        "gamma_7": gamma_regression,
        # a fifth set (2026-11-30, afternoon)
        "vonmises_3": von_mises_regression,
        "skewnormal_6": skew_normal_regression,
        "poisson_mix_3": poisson_mixture,
        "heavy_t_5": student_t_heavy,
        # a sixth set (2026-11-30, evening), from the user sweep
        "garch_3": garch_series,
        "skewt_7": skew_t_regression,
        "zinb_7": zero_inflated_negative_binomial,
        "mvnmix_5": mvnormal_mixture,
        "rice_2": rice_amplitudes,
        "data_groups_33": data_indexed_groups,
        # a seventh set (2026-11-30, night): shrinkage, a local level, sum-to-zero effects, a
        # spline basis, grouped binomials
        "horseshoe_53": horseshoe_regression,
        "level_202": local_level,
        "zsn_42": zero_sum_crossed,
        "spline_20": spline_regression,
        "binomial_72": binomial_groups,
        # an eighth set (2026-12-01), from the user sweep's ninth set
        "sparse_gp_3": sparse_gp,
        "hurdle_gamma_11": hurdle_gamma_regression,
        "trimmed_3": trimmed_regression,
        "truncated_gamma_6": truncated_gamma_regression,
        # a ninth set (2026-12-01, morning), from the user sweep's twelfth: a convolution, a
        # Kalman filter's Scan, a log determinant, a cumulative product
        "adstock_11": adstock_regression,
        "kalman_4": kalman_ar2,
        "sar_4": sar_lattice,
        "survival_5": discrete_survival,
        # the fifteenth sweep set's copula (2026-12-01, morning): the incomplete gamma
        # function's XLA program, not priced
        "copula_4": gaussian_copula,
        # interval-censored waiting times of one clinic (2026-12-01, morning): two incomplete
        # gamma nodes, a shape the loops' and programs' fits did not see
        "intervals_2": lambda: interval_gamma(1, n=150, seed=83),
        # a tenth set (2026-12-02): the user sweep's GPs of repeated measurements, whose
        # float32 the check refused until it checked the coinciding distances held at zero
        "repeated_gp_3": lambda: _sweep_model("gp_repeated_inputs"),
        "seasonal_gp_6": lambda: _sweep_model("gp_seasonal_product"),
        # an eleventh set (2026-12-02): the sweep's models whose JAX gradient is NaN at every
        # start through a switch's branch not taken (a Poisson rate of 0, a root of 0), which
        # auto ran on NumPyro and re-ran on nutpie until 82f414b and 377c22b
        "hazards_9": lambda: _sweep_model("piecewise_exponential_hazards"),
        "dose_root_3": lambda: _sweep_model("dose_response_root"),
    }


def _sweep_model(name: str) -> pm.Model:
    """The user sweep's model ``name`` (``bench/sweep_user_models.py``)."""
    import sweep_user_models

    return getattr(sweep_user_models, name)(pm)


def leapfrog_shapes() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of larger models for fitting NumPyro's cost per leapfrog
    (``bench/fit_numpyro_leapfrog.py``): the quick zoo's and :func:`shapes`' leapfrogs are mostly
    too cheap to time against the sampler's compile. Each family also appears smaller in the
    fit's other models; none is one of :func:`held_out`'s shapes."""
    return {
        "wide_5000_50": lambda: wide_regression(5000, 50),
        "linear_20000_10": lambda: wide_regression(20000, 10),
        "student_t_20000": lambda: student_t(20000, 20),
        "groups_2000": lambda: varying_intercept(20000, 2000),
        "mixture_20000": lambda: mixture(20000),
    }


def dense_shapes() -> dict[str, Callable[[], pm.Model]]:
    """Name -> factory of models whose gradients are mostly dense linear algebra, at sizes
    besides the zoo's (gp_200) and the held-out lkj_20: what a JAX sampler's dense work costs
    with its chains side by side (``bench/fit_numpyro_leapfrog.py``)."""
    return {
        "gp_100": lambda: gp_marginal(100),
        "gp_400": lambda: gp_marginal(400),
        "lkj_3d": lambda: lkj_mvnormal(3, 500),
        "lkj_10d": lambda: lkj_mvnormal(10, 500),
    }


def fit_models() -> dict[str, Callable[[], pm.Model]]:
    """The quick zoo and :func:`shapes`: every model a fitting script can name."""
    return zoo(quick=True) | shapes()


def named() -> dict[str, Callable[[], pm.Model]]:
    """Every model a timing script can name: :func:`fit_models`, the larger leapfrog shapes, the
    held-out models, the dense shapes, the value-variable shapes, the program-size shapes and
    the series-function shapes."""
    return (fit_models() | leapfrog_shapes() | held_out() | dense_shapes()
            | value_variable_shapes() | program_size_shapes() | series_function_shapes())
