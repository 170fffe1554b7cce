"""A user's sweep: ``explain`` and ``sample`` on model kinds and ``pm.sample`` arguments the
zoo does not hold, each in a new process, reporting what ran and what raised.

Not a benchmark of speed: a check that what PyMC users write gets a result or a clear error
(one of pymc-accel's, naming the fix), not a traceback from inside PyMC, PyTensor or JAX. Each
case prints ``OK`` with the candidate that ran, or ``ERR`` with the exception and where it was
raised; a case marked ``expect`` names the pymc-accel error it should raise. ``--sampler``
runs every case with one sampler instead of ``auto``; a case it refuses with a pymc-accel
error (a step method for NumPyro, say) prints ``REF``, but a start refused as not finite where
PyMC's own log density is finite there prints ``ERR``. A result whose chains never left their
start (:func:`pymc_accel.stuck_chains.stuck_chains`: pymc-accel warned, the draws are the
starts), or that barely moved (:func:`pymc_accel.stuck_chains.frozen_chains`), prints ``STK``;
an ``OK`` after a fallback re-run shows the report's note.

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/sweep_user_models.py \
        [--cases a,b] [--sampler numpyro | numba,driver=nutpie | ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import traceback
import warnings

import numpy as np

FAST = dict(draws=200, tune=200, chains=2, progressbar=False, random_seed=1)
#: ``--sampler``'s backend and options, given to every case that names no sampler of its own
SAMPLER: dict = {}


def _rng():
    return np.random.default_rng(0)


# ---- model kinds --------------------------------------------------------------------------

def missing_observations(pm):
    y = _rng().normal(size=50)
    y[[3, 10, 20]] = np.nan
    with pm.Model() as m:
        pm.Normal("y", pm.Normal("mu"), pm.HalfNormal("s"), observed=y)
    return m


def normal_mixture(pm):
    rng = _rng()
    y = np.concatenate([rng.normal(-2, 1, 100), rng.normal(2, 1, 100)])
    with pm.Model() as m:
        w = pm.Dirichlet("w", np.ones(2))
        mu = pm.Normal("mu", [-1, 1], 2, shape=2,
                       transform=pm.distributions.transforms.ordered)
        pm.NormalMixture("y", w, mu, sigma=1, observed=y)
    return m


def censored(pm):
    y = np.clip(_rng().normal(1, 2, 100), -1, 3)
    with pm.Model() as m:
        dist = pm.Normal.dist(pm.Normal("mu"), pm.HalfNormal("s"))
        pm.Censored("y", dist, lower=-1, upper=3, observed=y)
    return m


def truncated(pm):
    y = _rng().normal(1, 2, 200)
    with pm.Model() as m:
        dist = pm.Normal.dist(pm.Normal("mu"), pm.HalfNormal("s"))
        pm.Truncated("y", dist, lower=0, observed=y[y > 0])
    return m


def zero_sum_with_coords(pm):
    rng = _rng()
    with pm.Model(coords={"g": range(5), "obs": range(100)}) as m:
        a = pm.ZeroSumNormal("a", dims="g")
        index = pm.Data("index", rng.integers(0, 5, 100), dims="obs")
        pm.Normal("y", a[index], 1, observed=rng.normal(size=100), dims="obs")
    return m


def random_walk(pm):
    with pm.Model() as m:
        x = pm.GaussianRandomWalk("x", sigma=pm.HalfNormal("s"),
                                  init_dist=pm.Normal.dist(), steps=50)
        pm.Normal("y", x, 0.5, observed=np.cumsum(_rng().normal(size=51)))
    return m


def autoregressive(pm):
    with pm.Model() as m:
        pm.AR("y", rho=[pm.Uniform("rho", -1, 1)], sigma=pm.HalfNormal("s"),
              init_dist=pm.Normal.dist(), observed=_rng().normal(size=100))
    return m


def potential_and_deterministic(pm):
    with pm.Model() as m:
        a, b = pm.Normal("a"), pm.Normal("b")
        pm.Potential("p", -0.5 * (a - b) ** 2)
        pm.Deterministic("c", a + b)
    return m


def custom_dist(pm):
    with pm.Model() as m:
        pm.CustomDist("y", pm.Normal("mu"), logp=lambda value, mu: -0.5 * (value - mu) ** 2,
                      observed=_rng().normal(size=20))
    return m


def lkj_mvnormal(pm):
    with pm.Model() as m:
        chol, _, _ = pm.LKJCholeskyCov("c", n=3, eta=2, sd_dist=pm.Exponential.dist(1))
        pm.MvNormal("y", pm.Normal("mu", shape=3), chol=chol,
                    observed=_rng().normal(size=(50, 3)))
    return m


def flat_prior(pm):
    with pm.Model() as m:
        pm.Normal("y", pm.Flat("a"), 1, observed=_rng().normal(size=10))
    return m


def discrete_free_variable(pm):
    with pm.Model() as m:
        pm.Normal("y", pm.Poisson("k", 3), 1, observed=[1.0, 2.0])
    return m


def binomial_regression(pm):
    rng = _rng()
    x = rng.normal(size=(300, 4))
    with pm.Model() as m:
        b = pm.Normal("b", shape=4)
        pm.Binomial("y", 10, pm.math.invlogit(x @ b), observed=rng.integers(0, 10, 300))
    return m


def large_offset(pm):
    rng = _rng()
    with pm.Model() as m:
        pm.Normal("y", pm.Normal("mu", 1e6, 10), 0.01,
                  observed=1e6 + rng.normal(size=20) * 0.01)
    return m


def multinomial(pm):
    with pm.Model() as m:
        p = pm.Dirichlet("p", np.ones(4))
        pm.Multinomial("y", 20, p,
                       observed=_rng().multinomial(20, [0.1, 0.2, 0.3, 0.4], size=30))
    return m


def scan_recurrence(pm):
    import pytensor
    import pytensor.tensor as pt

    y = _rng().normal(size=40)
    with pm.Model() as m:
        a = pm.Normal("a", 0, 0.5)
        out = pytensor.scan(lambda x, prev, a: a * prev + x, sequences=[pt.as_tensor(y[:-1])],
                            outputs_info=[pt.as_tensor(np.float64(0.0))], non_sequences=[a],
                            return_updates=False)
        pm.Normal("obs", out, 1, observed=y[1:])
    return m


def student_t_free_nu(pm):
    with pm.Model() as m:
        pm.StudentT("y", nu=pm.Gamma("nu", 2, 0.1), mu=pm.Normal("mu"), sigma=1,
                    observed=_rng().standard_t(4, 100))
    return m


def zero_inflated(pm):
    rng = _rng()
    with pm.Model() as m:
        pm.ZeroInflatedPoisson("y", pm.Beta("psi", 2, 2), pm.Exponential("mu", 1),
                               observed=rng.poisson(2, 100) * rng.integers(0, 2, 100))
    return m


def _black_box(pm, gradient: bool):
    """A likelihood written as a PyTensor op with a Python ``perform`` (no JAX conversion),
    with or without its gradient."""
    import pytensor.tensor as pt
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op

    class LogLike(Op):
        def make_node(self, mu):
            mu = pt.as_tensor_variable(mu)
            return Apply(self, [mu], [pt.dscalar()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = np.asarray(-0.5 * np.sum((inputs[0] - 1.0) ** 2))

    class WithGradient(LogLike):
        def pullback(self, inputs, outputs, cotangents):
            return [cotangents[0] * (1.0 - inputs[0])]

    with pm.Model() as m:
        op = WithGradient() if gradient else LogLike()
        pm.Potential("loglike", op(pm.Normal("mu", shape=3)))
    return m


def black_box_op(pm):
    return _black_box(pm, gradient=True)


def black_box_op_without_gradient(pm):
    """``pm.sample`` gives the op's variable slice sampling."""
    return _black_box(pm, gradient=False)


def simulator(pm):
    """A simulator's parameter has no gradient; the other variable has one (a compound step)."""
    def simulate(rng, a, size=None):
        return rng.normal(a, 1.0, size=size)

    rng = _rng()
    with pm.Model() as m:
        pm.Simulator("s", simulate, pm.Normal("a"), observed=rng.normal(size=20))
        pm.Normal("y", pm.Normal("b"), 1.0, observed=rng.normal(2.0, 1.0, 30))
    return m


def named_model(pm):
    """A model with a name: PyMC prefixes its variables ("sub::a")."""
    rng = _rng()
    with pm.Model(name="sub", coords={"obs": range(30)}) as m:
        pm.Normal("y", pm.Normal("a"), pm.HalfNormal("s"), observed=rng.normal(size=30),
                  dims="obs")
    return m


def deterministic_with_dims(pm):
    rng = _rng()
    with pm.Model(coords={"g": ["x", "y", "z"]}) as m:
        a = pm.Normal("a", dims="g")
        pm.Deterministic("a_exp", pm.math.exp(a), dims="g")
        pm.Normal("obs", a, 1, observed=rng.normal(size=(10, 3)))
    return m


def many_scalars(pm):
    """A hundred scalar variables, as a loop writes them: the profile walks each."""
    rng = _rng()
    with pm.Model() as m:
        xs = [pm.Normal(f"x{i}") for i in range(100)]
        pm.Normal("y", pm.math.stack(xs), 1, observed=rng.normal(size=100))
    return m


def pandas_data(pm):
    """Observed data and a covariate from a DataFrame, coords from its index."""
    import pandas as pd

    rng = _rng()
    df = pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40)},
                      index=pd.Index([f"r{i}" for i in range(40)], name="row"))
    with pm.Model(coords={"row": df.index}) as m:
        x = pm.Data("x", df["x"], dims="row")
        pm.Normal("y", pm.Normal("a") + pm.Normal("b") * x, pm.HalfNormal("s"),
                  observed=df["y"], dims="row")
    return m


def gp_marginal(pm):
    """A Gaussian process regression through ``pm.gp.Marginal`` (a Cholesky)."""
    rng = _rng()
    X = np.linspace(0, 10, 60)[:, None]
    with pm.Model() as m:
        cov = pm.HalfNormal("eta") ** 2 * pm.gp.cov.ExpQuad(1, ls=pm.Gamma("ls", 2, 1))
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=np.sin(X[:, 0]) + 0.3 * rng.normal(size=60),
                               sigma=pm.HalfNormal("sigma"))
    return m


def hsgp(pm):
    """A Hilbert-space GP approximation (``pm.gp.HSGP``): basis functions, no Cholesky."""
    rng = _rng()
    X = np.linspace(0, 10, 100)[:, None]
    with pm.Model() as m:
        cov = pm.gp.cov.Matern52(1, ls=pm.Gamma("ls", 2, 1))
        f = pm.gp.HSGP(m=[20], c=1.5, cov_func=cov).prior("f", X=X)
        pm.Normal("y", f, pm.HalfNormal("sigma"), observed=np.sin(X[:, 0]) + 0.3 * rng.normal(
            size=100))
    return m


# A sixth set, added 2026-11-30 (evening): families whose log densities call special functions
# (Bessel, erfc, beta and gamma functions), ops written in Python (an interpolated density),
# sequential ones (stochastic differential equations, GARCH) and matrix-variate ones, where a
# JAX or numba conversion, or float32, might fail.

def rice(pm):
    """A Rice likelihood: its log density calls the scaled Bessel function ``i0e``."""
    y = np.abs(_rng().normal(2.0, 1.0, 200))
    with pm.Model() as m:
        pm.Rice("y", nu=pm.HalfNormal("nu", 3), sigma=pm.HalfNormal("sigma"), observed=y)
    return m


def ex_gaussian(pm):
    """An exponentially modified Gaussian (response times): ``erfc`` of the parameters."""
    rng = _rng()
    y = rng.normal(0.5, 0.1, 300) + rng.exponential(0.3, 300)
    with pm.Model() as m:
        pm.ExGaussian("y", mu=pm.Normal("mu", 0.5, 1), sigma=pm.HalfNormal("sigma", 1),
                      nu=pm.HalfNormal("nu", 1), observed=y)
    return m


def wald(pm):
    """An inverse Gaussian (Wald) likelihood."""
    y = _rng().wald(1.5, 3.0, 300)
    with pm.Model() as m:
        pm.Wald("y", mu=pm.HalfNormal("mu", 3), lam=pm.HalfNormal("lam", 5), observed=y)
    return m


def kumaraswamy(pm):
    """A Kumaraswamy likelihood on (0, 1)."""
    y = np.clip(_rng().beta(2, 5, 300), 1e-3, 1 - 1e-3)
    with pm.Model() as m:
        pm.Kumaraswamy("y", a=pm.HalfNormal("a", 3), b=pm.HalfNormal("b", 3), observed=y)
    return m


def skew_student_t(pm):
    """A skewed Student-t likelihood (Jones and Faddy): log-beta terms."""
    y = _rng().standard_t(5, 300) + 0.5
    with pm.Model() as m:
        pm.SkewStudentT("y", a=pm.HalfNormal("a", 5) + 1, b=pm.HalfNormal("b", 5) + 1,
                        mu=pm.Normal("mu"), sigma=pm.HalfNormal("sigma"), observed=y)
    return m


def asymmetric_laplace(pm):
    """A quantile regression's asymmetric Laplace likelihood (the 0.9 quantile)."""
    rng = _rng()
    x = rng.normal(size=200)
    y = 1 + 2 * x + rng.normal(size=200)
    with pm.Model() as m:
        mu = pm.Normal("a") + pm.Normal("b") * x
        pm.AsymmetricLaplace("y", mu=mu, b=pm.HalfNormal("s"), q=0.9, observed=y)
    return m


def beta_binomial(pm):
    """A beta-binomial likelihood over counts: log-beta functions of the free parameters."""
    rng = _rng()
    n = rng.integers(10, 30, 100)
    y = rng.binomial(n, rng.beta(2, 3, 100))
    with pm.Model() as m:
        pm.BetaBinomial("y", alpha=pm.HalfNormal("alpha", 5), beta=pm.HalfNormal("beta", 5),
                        n=n, observed=y)
    return m


def dirichlet_multinomial(pm):
    """Overdispersed category counts (``pm.DirichletMultinomial``)."""
    rng = _rng()
    y = np.stack([rng.multinomial(20, rng.dirichlet([2, 3, 5])) for _ in range(50)])
    with pm.Model() as m:
        pm.DirichletMultinomial("y", n=20, a=pm.HalfNormal("a", 5, shape=3), observed=y)
    return m


def hurdle_poisson(pm):
    """A hurdle Poisson: zeros from a Bernoulli, positives from a truncated Poisson."""
    rng = _rng()
    y = np.where(rng.uniform(size=300) < 0.4, 0, rng.poisson(3.0, 300))
    with pm.Model() as m:
        pm.HurdlePoisson("y", psi=pm.Beta("psi", 1, 1), mu=pm.HalfNormal("mu", 5), observed=y)
    return m


def interpolated_prior(pm):
    """A prior given as a density on a grid (``pm.Interpolated``): its log density is an op
    written in Python (a spline), with no JAX conversion."""
    grid = np.linspace(-4, 4, 100)
    with pm.Model() as m:
        a = pm.Interpolated("a", grid, np.exp(-grid**2 / 2))
        pm.Normal("y", a, 1, observed=_rng().normal(0.5, 1, 50))
    return m


def euler_maruyama(pm):
    """A stochastic differential equation, discretised (``pm.EulerMaruyama``: a Scan)."""
    rng = _rng()
    x = np.cumsum(rng.normal(0, 0.1, 60))

    def drift_diffusion(x, theta):
        return -theta * x, 0.1

    with pm.Model() as m:
        theta = pm.HalfNormal("theta", 1)
        pm.EulerMaruyama("x", dt=0.1, sde_fn=drift_diffusion, sde_pars=(theta,),
                         init_dist=pm.Normal.dist(0, 1), steps=59, observed=x)
    return m


def garch11(pm):
    """A GARCH(1, 1) volatility model (``pm.GARCH11``: a Scan over the series)."""
    y = _rng().normal(0, 1, 100)
    with pm.Model() as m:
        pm.GARCH11("y", omega=pm.HalfNormal("omega", 1), alpha_1=pm.Beta("alpha_1", 1, 3),
                   beta_1=pm.Beta("beta_1", 1, 3), initial_vol=1.0, observed=y, shape=100)
    return m


def matrix_normal(pm):
    """A matrix-variate normal with Kronecker-structured covariances (``pm.MatrixNormal``)."""
    rng = _rng()
    y = rng.normal(size=(10, 3))
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 1, shape=(10, 3))
        pm.MatrixNormal("y", mu=mu, rowcov=np.eye(10), colcov=np.eye(3) * 2.0, observed=y)
    return m


def mv_student_t(pm):
    """A multivariate Student-t likelihood with a Cholesky factor from an LKJ prior."""
    rng = _rng()
    y = rng.standard_t(5, size=(100, 3))
    with pm.Model() as m:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=3, eta=2.0,
                                        sd_dist=pm.HalfNormal.dist(1.0, shape=3))
        pm.MvStudentT("y", nu=5, mu=pm.Normal("mu", 0, 1, shape=3), chol=chol,
                      observed=y)
    return m


# A seventh set, added 2026-11-30 (evening): ways of writing a model the sets above do not:
# integer indices held in pm.Data, a distribution given by its random graph (CustomDist's
# dist=), discrete likelihoods truncated or censored, mixtures of multivariate components,
# bounds that depend on another variable, a large simplex, a precision matrix.

def indexed_groups(pm):
    """Varying intercepts through an integer index held in ``pm.Data``, with dims."""
    rng = _rng()
    group = rng.integers(0, 8, 200)
    y = rng.normal(0.3 * group, 1.0)
    with pm.Model(coords={"group": range(8), "obs": range(200)}) as m:
        idx = pm.Data("group_idx", group, dims="obs")
        mu = pm.Normal("mu", 0, 2)
        tau = pm.HalfNormal("tau", 1)
        z = pm.Normal("z", 0, 1, dims="group")
        pm.Normal("y", mu + tau * z[idx], pm.HalfNormal("sigma"), observed=y, dims="obs")
    return m


def custom_dist_from_graph(pm):
    """A distribution given by its random graph (``pm.CustomDist(dist=...)``): PyMC derives
    its log density (here a log-normal written as the exponential of a normal)."""
    y = np.exp(_rng().normal(0.5, 0.4, 100))

    def dist(mu, sigma, size):
        return pm.math.exp(pm.Normal.dist(mu, sigma, size=size))

    with pm.Model() as m:
        pm.CustomDist("y", pm.Normal("mu"), pm.HalfNormal("sigma"), dist=dist, observed=y)
    return m


def truncated_poisson(pm):
    """Counts that cannot be zero: a Poisson truncated below at 1."""
    y = _rng().poisson(2.5, 400)
    with pm.Model() as m:
        pm.Truncated("y", pm.Poisson.dist(pm.HalfNormal("mu", 5)), lower=1, observed=y[y >= 1])
    return m


def censored_poisson(pm):
    """Counts recorded up to a cap of 6 (``pm.Censored`` of a discrete distribution)."""
    y = np.minimum(_rng().poisson(4.0, 300), 6)
    with pm.Model() as m:
        pm.Censored("y", pm.Poisson.dist(pm.HalfNormal("mu", 5)), lower=None, upper=6,
                    observed=y)
    return m


def zero_inflated_negative_binomial(pm):
    """Overdispersed counts with extra zeros."""
    rng = _rng()
    y = np.where(rng.uniform(size=300) < 0.3, 0, rng.negative_binomial(3, 0.4, 300))
    with pm.Model() as m:
        pm.ZeroInflatedNegativeBinomial("y", psi=pm.Beta("psi", 2, 2),
                                        mu=pm.HalfNormal("mu", 10),
                                        alpha=pm.HalfNormal("alpha", 5), observed=y)
    return m


def mvnormal_mixture(pm):
    """A mixture of two bivariate normals (``pm.Mixture`` of multivariate components)."""
    rng = _rng()
    y = np.concatenate([rng.normal(-2, 1, (100, 2)), rng.normal(2, 1, (100, 2))])
    with pm.Model() as m:
        w = pm.Dirichlet("w", np.ones(2))
        mu = pm.Normal("mu", np.array([[-1.0, -1.0], [1.0, 1.0]]), 3, shape=(2, 2))
        pm.Mixture("y", w, [pm.MvNormal.dist(mu[0], np.eye(2)),
                            pm.MvNormal.dist(mu[1], np.eye(2))], observed=y)
    return m


def categorical_logits(pm):
    """A categorical likelihood on logits (``logit_p``), the first category's fixed at zero."""
    rng = _rng()
    x = rng.normal(size=300)
    y = rng.integers(0, 3, 300)
    with pm.Model() as m:
        b = pm.Normal("b", 0, 1, shape=2)
        logits = pm.math.stack([pm.math.zeros_like(x), b[0] * x, b[1] * x], axis=1)
        pm.Categorical("y", logit_p=logits, observed=y)
    return m


def bounds_from_another_variable(pm):
    """A uniform prior whose bounds are another free variable: its interval transform
    depends on that variable."""
    with pm.Model() as m:
        a = pm.Normal("a", 0, 1)
        b = pm.Uniform("b", lower=a, upper=a + 5)
        pm.Normal("y", b, 1, observed=_rng().normal(1.5, 1, 50))
    return m


def large_simplex(pm):
    """A 50-category simplex (``pm.Dirichlet``: the simplex transform) under a multinomial."""
    rng = _rng()
    counts = rng.multinomial(2000, rng.dirichlet(np.ones(50)))
    with pm.Model() as m:
        p = pm.Dirichlet("p", np.ones(50))
        pm.Multinomial("y", n=2000, p=p, observed=counts)
    return m


def mvnormal_precision(pm):
    """A multivariate normal given its precision matrix (``tau=``)."""
    y = _rng().normal(size=(100, 4))
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 1, shape=4)
        pm.MvNormal("y", mu=mu, tau=np.eye(4) * 1.5, observed=y)
    return m


def logsumexp_potential(pm):
    """A two-component mixture written by hand: a ``pm.Potential`` of a log-sum-exp."""
    rng = _rng()
    y = np.concatenate([rng.normal(-2, 1, 100), rng.normal(2, 1, 100)])
    with pm.Model() as m:
        mu = pm.Normal("mu", [-1, 1], 3, shape=2,
                       transform=pm.distributions.transforms.ordered)
        comp = pm.logp(pm.Normal.dist(mu, 1), y[:, None]) + np.log(0.5)
        pm.Potential("mix", pm.math.logsumexp(comp, axis=1).sum())
    return m


def car_spatial(pm):
    """A conditional autoregressive (CAR) spatial effect on a ring of 30 areas, its adjacency
    given as a dense matrix, under a Poisson likelihood."""
    n = 30
    w = np.zeros((n, n))
    for i in range(n):
        w[i, (i + 1) % n] = w[(i + 1) % n, i] = 1
    y = _rng().poisson(np.exp(np.sin(np.arange(n) / 5)))
    with pm.Model() as m:
        phi = pm.CAR("phi", mu=np.zeros(n), W=w, alpha=0.9, tau=pm.Gamma("tau", 2, 2))
        pm.Poisson("y", np.exp(pm.Normal("b0") + phi), observed=y)
    return m


def icar_spatial(pm):
    """An intrinsic CAR effect (``pm.ICAR``, a sum-to-zero soft constraint) over a chain of 20
    areas, with a free scale."""
    n = 20
    w = np.zeros((n, n))
    for i in range(n - 1):
        w[i, i + 1] = w[i + 1, i] = 1
    y = _rng().normal(np.linspace(-1, 1, n), 0.5)
    with pm.Model() as m:
        phi = pm.ICAR("phi", W=w)
        pm.Normal("y", pm.HalfNormal("s_phi") * phi, 0.5, observed=y)
    return m


def stick_breaking_mixture(pm):
    """A truncated Dirichlet-process mixture: stick-breaking weights over eight normal
    components (``pm.StickBreakingWeights`` with a free concentration)."""
    rng = _rng()
    y = np.concatenate([rng.normal(-3, 1, 80), rng.normal(2, 1, 120)])
    with pm.Model() as m:
        w = pm.StickBreakingWeights("w", alpha=pm.Gamma("alpha", 2, 1), K=7)
        mu = pm.Normal("mu", np.linspace(-4, 4, 8), 2, shape=8)
        pm.NormalMixture("y", w, mu, sigma=1, observed=y)
    return m


def gp_latent(pm):
    """A latent Gaussian process (``pm.gp.Latent``: a Cholesky of the covariance and its
    whitened values) under a Poisson likelihood."""
    x = np.linspace(0, 10, 40)[:, None]
    y = _rng().poisson(np.exp(np.sin(x[:, 0])))
    with pm.Model() as m:
        ell = pm.Gamma("ell", 4, 2)
        gp = pm.gp.Latent(cov_func=pm.gp.cov.ExpQuad(1, ls=ell))
        f = gp.prior("f", X=x)
        pm.Poisson("y", np.exp(f), observed=y)
    return m


def mv_random_walk(pm):
    """A bivariate Gaussian random walk over 50 steps with an LKJ Cholesky innovation
    (``pm.MvGaussianRandomWalk``)."""
    y = np.cumsum(_rng().normal(size=(50, 2)), axis=0)
    with pm.Model() as m:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=2, eta=2, sd_dist=pm.Exponential.dist(1),
                                       compute_corr=True)
        walk = pm.MvGaussianRandomWalk("walk", mu=np.zeros(2), chol=chol,
                                       init_dist=pm.MvNormal.dist(np.zeros(2), np.eye(2)),
                                       shape=(50, 2))
        pm.Normal("y", walk, 0.5, observed=y)
    return m


def ode_logistic_growth(pm):
    """A logistic growth curve solved by ``pm.ode.DifferentialEquation`` (SciPy's ``odeint``
    inside a PyTensor op, with forward sensitivities for the gradient and no JAX conversion)."""
    t = np.linspace(0.5, 10, 15)
    y = 10 / (1 + 9 * np.exp(-0.8 * t)) + _rng().normal(0, 0.3, t.size)

    def growth(state, t, theta):
        return [theta[0] * state[0] * (1 - state[0] / theta[1])]

    ode = pm.ode.DifferentialEquation(func=growth, times=t, n_states=1, n_theta=2, t0=0)
    with pm.Model() as m:
        r = pm.LogNormal("r", np.log(0.8), 0.3)
        k = pm.LogNormal("k", np.log(10), 0.3)
        curve = ode(y0=[1.0], theta=[r, k])
        pm.Normal("y", curve[:, 0], pm.HalfNormal("s", 1), observed=y)
    return m


def einsum_regression(pm):
    """A two-way interaction written with ``pt.einsum`` over a (rows, 3, 4) covariate array."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=(200, 3, 4))
    y = np.einsum("nij,i,j->n", x, [1.0, -0.5, 0.2], [0.3, 0.1, -0.4, 1.0]) + rng.normal(0, 0.5,
                                                                                        200)
    with pm.Model() as m:
        a = pm.Normal("a", 0, 1, shape=3)
        b = pm.Normal("b", 0, 1, shape=4)
        mu = pt.einsum("nij,i,j->n", pt.as_tensor(x), a, b)
        pm.Normal("y", mu, pm.HalfNormal("s"), observed=y)
    return m


def sorted_cumsum(pm):
    """Ordered cut-points written by hand: a cumulative sum of positive increments, and a
    ``pt.sort`` of free values in the likelihood's location."""
    import pytensor.tensor as pt

    rng = _rng()
    y = np.concatenate([rng.normal(-1, 0.3, 30), rng.normal(0.5, 0.3, 30), rng.normal(2, 0.3, 30)])
    with pm.Model() as m:
        steps = pm.Exponential("steps", 1, shape=3)
        levels = pm.Deterministic("levels", pt.cumsum(steps) - 2)
        loose = pm.Normal("loose", 0, 2, shape=3)
        mu = 0.5 * (levels + pt.sort(loose))
        pm.Normal("y", mu[np.repeat(np.arange(3), 30)], 0.3, observed=y)
    return m


def piecewise_searchsorted(pm):
    """A piecewise-constant rate over ten bins found by ``pt.searchsorted`` (an integer op in
    the log density)."""
    import pytensor.tensor as pt

    rng = _rng()
    t = np.sort(rng.uniform(0, 10, 300))
    edges = np.linspace(0, 10, 11)[1:-1]
    with pm.Model() as m:
        rates = pm.Gamma("rates", 2, 2, shape=10)
        which = pt.searchsorted(pt.as_tensor(edges), pt.as_tensor(t))
        pm.Exponential("y", rates[which], observed=rng.exponential(1, 300))
    return m


def linear_solve_likelihood(pm):
    """A likelihood through ``pt.linalg.solve`` of a parameter-dependent 5 x 5 system."""
    import pytensor.tensor as pt

    rng = _rng()
    base = rng.normal(size=(5, 5)) + 5 * np.eye(5)
    y = np.linalg.solve(base + np.eye(5), np.ones(5)) + rng.normal(0, 0.05, 5)
    with pm.Model() as m:
        d = pm.HalfNormal("d", 2)
        x = pt.linalg.solve(pt.as_tensor(base) + d * pt.eye(5), pt.ones(5))
        pm.Normal("y", x, 0.05, observed=y)
    return m


def extreme_value_families(pm):
    """Gumbel, log-normal, logistic and Moyal likelihoods sharing one location, each with a
    free scale."""
    rng = _rng()
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 2)
        pm.Gumbel("g", mu, pm.HalfNormal("sg"), observed=rng.gumbel(0.5, 1, 100))
        pm.LogNormal("ln", mu, pm.HalfNormal("sl"), observed=rng.lognormal(0.5, 1, 100))
        pm.Logistic("lo", mu, pm.HalfNormal("so"), observed=rng.logistic(0.5, 1, 100))
        pm.Moyal("mo", mu, pm.HalfNormal("sm"), observed=rng.gumbel(0.5, 1, 100))
    return m


def half_student_t_hierarchy(pm):
    """Twelve groups with a half-Student-t group scale and a triangular prior on a shift,
    non-centred."""
    rng = _rng()
    g = np.repeat(np.arange(12), 10)
    y = rng.normal(rng.normal(0, 1, 12)[g], 1)
    with pm.Model() as m:
        tau = pm.HalfStudentT("tau", nu=3, sigma=1)
        z = pm.Normal("z", 0, 1, shape=12)
        shift = pm.Triangular("shift", lower=-1, c=0, upper=1)
        pm.Normal("y", shift + tau * z[g], 1, observed=y)
    return m



def censored_gamma(pm):
    """Waiting times recorded up to a cap of 4 (``pm.Censored`` of a gamma): the log survival
    is the regularized upper incomplete gamma, whose gradient in the shape is a series loop
    (PyTensor's ``ScalarLoop``)."""
    y = np.minimum(_rng().gamma(2.0, 1.0, 80), 4.0)
    with pm.Model() as m:
        alpha = pm.Gamma("alpha", 2, 1)
        beta = pm.Gamma("beta", 2, 2)
        pm.Censored("y", pm.Gamma.dist(alpha, beta), lower=None, upper=4.0, observed=y)
    return m


def censored_student_t(pm):
    """A heavy-tailed regression censored below at -1.5 (``pm.Censored`` of a Student-t): its
    log-CDF is an incomplete beta function of the free degrees of freedom."""
    rng = _rng()
    x = rng.normal(size=60)
    y = np.maximum(0.5 * x + rng.standard_t(4, 60), -1.5)
    with pm.Model() as m:
        nu = pm.Gamma("nu", 4, 0.5)
        mu = pm.Normal("b", 0, 2) * x
        pm.Censored("y", pm.StudentT.dist(nu, mu=mu, sigma=1), lower=-1.5, upper=None, observed=y)
    return m


def truncated_gamma(pm):
    """Sizes observed only between 0.5 and 8 (``pm.Truncated`` of a gamma): the normalizing
    constant is a difference of incomplete gamma functions."""
    y = _rng().gamma(3.0, 1.0, 200)
    y = y[(y > 0.5) & (y < 8.0)][:100]
    with pm.Model() as m:
        alpha = pm.Gamma("alpha", 2, 0.5)
        beta = pm.Gamma("beta", 2, 2)
        pm.Truncated("y", pm.Gamma.dist(alpha, beta), lower=0.5, upper=8.0, observed=y)
    return m


def lazy_ifelse(pm):
    """A likelihood scale chosen by a data flag through PyTensor's lazy ``ifelse`` (only the
    branch taken is computed)."""
    from pytensor.conditional.op import ifelse

    y = _rng().normal(1.0, 2.0, 40)
    with pm.Model() as m:
        robust = pm.Data("robust", 1)
        mu = pm.Normal("mu", 0, 5)
        s = pm.HalfNormal("s", 3)
        scale = ifelse(pm.math.gt(robust, 0), 2.0 * s, s)
        pm.Normal("y", mu, scale, observed=y)
    return m


def sparse_design(pm):
    """A regression on a sparse design matrix (SciPy CSR, one-hot groups plus a covariate)
    through ``pytensor.sparse.structured_dot``."""
    import pytensor.sparse as psparse
    import scipy.sparse as sp

    rng = _rng()
    n, k = 120, 6
    g = rng.integers(0, k - 1, n)
    dense = np.zeros((n, k))
    dense[np.arange(n), g] = 1.0
    dense[:, -1] = rng.normal(size=n)
    x = sp.csr_matrix(dense)
    y = dense @ np.array([0.5, -0.3, 1.0, 0.0, 0.2, 0.8]) + rng.normal(0, 0.5, n)
    with pm.Model() as m:
        beta = pm.Normal("beta", 0, 2, shape=k)
        mu = psparse.structured_dot(psparse.as_sparse_variable(x), beta[:, None])[:, 0]
        pm.Normal("y", mu, pm.HalfNormal("s"), observed=y)
    return m


def hand_written_mvnormal(pm):
    """A multivariate normal log density written by hand: ``slogdet`` and ``solve`` of a
    covariance built from a free correlation and two free scales, summed over 50 pairs."""
    import pytensor.tensor as pt

    rng = _rng()
    y = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.6], [0.6, 2.0]], 50)
    with pm.Model() as m:
        rho = pm.Uniform("rho", -1, 1)
        sd = pm.HalfNormal("sd", 2, shape=2)
        cov = pt.stack([pt.stack([sd[0] ** 2, rho * sd[0] * sd[1]]),
                        pt.stack([rho * sd[0] * sd[1], sd[1] ** 2])])
        _, logdet = pt.linalg.slogdet(cov)
        quad = (y.T * pt.linalg.solve(cov, y.T)).sum()
        pm.Potential("mvn", -0.5 * (50 * logdet + quad))
    return m


def trimmed_likelihood(pm):
    """A trimmed-residual likelihood: the 54 smallest of 60 squared residuals, found by
    ``pt.sort`` (whose gradient scatters back through the sort's order)."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=60)
    y = 1.0 + 2.0 * x + rng.normal(0, 0.5, 60)
    y[:6] += 8.0
    with pm.Model() as m:
        a, b = pm.Normal("a", 0, 5), pm.Normal("b", 0, 5)
        s = pm.HalfNormal("s", 2)
        r2 = pt.sort(((y - a - b * x) / s) ** 2)[:54]
        pm.Potential("trimmed", -0.5 * r2.sum() - 54 * pt.log(s))
    return m


def student_t_process(pm):
    """A latent Student-t process (``pm.gp.TP``, free degrees of freedom) under a normal
    likelihood."""
    x = np.linspace(0, 5, 25)[:, None]
    y = np.sin(x[:, 0]) + _rng().normal(0, 0.3, 25)
    with pm.Model() as m:
        ell = pm.Gamma("ell", 4, 2)
        tp = pm.gp.TP(scale_func=pm.gp.cov.ExpQuad(1, ls=ell), nu=pm.Gamma("nu", 4, 0.5))
        f = tp.prior("f", X=x)
        pm.Normal("y", f, 0.3, observed=y)
    return m


def sparse_gp(pm):
    """A sparse GP regression (``pm.gp.MarginalApprox``, FITC) with 10 inducing points under
    150 observations."""
    x = np.linspace(0, 10, 150)[:, None]
    y = np.sin(x[:, 0]) + _rng().normal(0, 0.3, 150)
    with pm.Model() as m:
        ell = pm.Gamma("ell", 4, 2)
        eta = pm.HalfNormal("eta", 2)
        gp = pm.gp.MarginalApprox(cov_func=eta ** 2 * pm.gp.cov.Matern52(1, ls=ell),
                                  approx="FITC")
        gp.marginal_likelihood("y", X=x, Xu=np.linspace(0, 10, 10)[:, None], y=y,
                               sigma=pm.HalfNormal("sigma", 1))
    return m


def _hand_guarded_sparse_gp(pm, guard: str):
    """:func:`sparse_gp` with a Matern 5/2 kernel a user subclassed from PyMC's, copying
    ``Stationary.square_dist``'s expanded squared distance ``-2 a.b + (|a|^2 + |b|^2)`` and
    keeping it from going negative with ``guard`` ("maximum", "abs" or "switch") where PyMC
    clips it, or not at all ("none": ``sqrt(sqd + 1e-12)``)."""
    import pytensor.tensor as pt

    class GuardedMatern52(pm.gp.cov.Matern52):
        def square_dist(self, X, Xs=None):
            X = pt.mul(X, 1.0 / self.ls)
            Xs = X if Xs is None else pt.mul(Xs, 1.0 / self.ls)
            sqd = -2.0 * pt.dot(X, pt.transpose(Xs)) + (
                pt.reshape(pt.sum(pt.square(X), 1), (-1, 1))
                + pt.reshape(pt.sum(pt.square(Xs), 1), (1, -1)))
            if guard == "maximum":
                return pt.maximum(sqd, 0.0)
            if guard == "abs":
                return pt.abs(sqd)
            if guard == "none":
                return sqd
            return pt.switch(sqd > 0.0, sqd, 0.0)

    x = np.linspace(0, 10, 150)[:, None]
    y = np.sin(x[:, 0]) + _rng().normal(0, 0.3, 150)
    with pm.Model() as m:
        ell = pm.Gamma("ell", 4, 2)
        eta = pm.HalfNormal("eta", 2)
        gp = pm.gp.MarginalApprox(cov_func=eta ** 2 * GuardedMatern52(1, ls=ell),
                                  approx="FITC")
        gp.marginal_likelihood("y", X=x, Xu=np.linspace(0, 10, 10)[:, None], y=y,
                               sigma=pm.HalfNormal("sigma", 1))
    return m


def sparse_gp_maximum_kernel(pm):
    """:func:`sparse_gp` with a hand-written Matern 5/2 kernel whose squared distance is
    guarded by ``maximum(sqd, 0)``."""
    return _hand_guarded_sparse_gp(pm, "maximum")


def sparse_gp_abs_kernel(pm):
    """:func:`sparse_gp` with a hand-written Matern 5/2 kernel whose squared distance is
    guarded by ``abs(sqd)``."""
    return _hand_guarded_sparse_gp(pm, "abs")


def sparse_gp_switch_kernel(pm):
    """:func:`sparse_gp` with a hand-written Matern 5/2 kernel whose squared distance is
    guarded by ``switch(sqd > 0, sqd, 0)``."""
    return _hand_guarded_sparse_gp(pm, "switch")


def sparse_gp_unguarded_kernel(pm):
    """:func:`sparse_gp` with a hand-written Matern 5/2 kernel whose squared distance is not
    guarded: ``sqrt(sqd + 1e-12)`` of the expanded sum as it is."""
    return _hand_guarded_sparse_gp(pm, "none")


def gp_repeated_inputs(pm):
    """Repeated measurements: a marginal GP (``pm.gp.Marginal``) with an exponential kernel
    over 40 inputs measured twice each, so ``K(X, X)`` has coinciding inputs off its diagonal
    too."""
    x = np.repeat(np.linspace(0, 10, 40), 2)[:, None]
    y = np.sin(x[:, 0]) + _rng().normal(0, 0.3, 80)
    with pm.Model() as m:
        ell = pm.Gamma("ell", 4, 2)
        eta = pm.HalfNormal("eta", 2)
        gp = pm.gp.Marginal(cov_func=eta ** 2 * pm.gp.cov.Exponential(1, ls=ell))
        gp.marginal_likelihood("y", X=x, y=y, sigma=pm.HalfNormal("sigma", 1))
    return m


def gp_vfe_matern32(pm):
    """A sparse GP by the variational free energy (``pm.gp.MarginalApprox``, ``approx="VFE"``),
    Matern 3/2, its 12 inducing points a subset of the 120 data inputs."""
    x = np.sort(_rng().uniform(0, 10, 120))[:, None]
    y = np.cos(x[:, 0]) + _rng().normal(0, 0.3, 120)
    with pm.Model() as m:
        ell = pm.Gamma("ell", 4, 2)
        eta = pm.HalfNormal("eta", 2)
        gp = pm.gp.MarginalApprox(cov_func=eta ** 2 * pm.gp.cov.Matern32(1, ls=ell),
                                  approx="VFE")
        gp.marginal_likelihood("y", X=x, Xu=x[::10], y=y, sigma=pm.HalfNormal("sigma", 1))
    return m


def gp_latent_spatial_counts(pm):
    """Spatial counts: a latent GP (``pm.gp.Latent``) over 30 sites in two dimensions with an
    ARD Matern 5/2 kernel (a length scale per axis), under a Poisson likelihood."""
    rng = _rng()
    sites = rng.uniform(0, 5, (30, 2))
    counts = rng.poisson(np.exp(1 + np.sin(sites[:, 0]) * np.cos(sites[:, 1])))
    with pm.Model() as m:
        ls = pm.Gamma("ls", 4, 2, shape=2)
        eta = pm.HalfNormal("eta", 1)
        gp = pm.gp.Latent(cov_func=eta ** 2 * pm.gp.cov.Matern52(2, ls=ls))
        f = gp.prior("f", X=sites)
        pm.Poisson("counts", pm.math.exp(pm.Normal("b0", 1, 1) + f), observed=counts)
    return m


def gp_seasonal_product(pm):
    """A seasonal signal: a marginal GP whose kernel is a squared-exponential trend plus an
    exponential kernel times a periodic one (``cov1 + cov2 * cov3``), over monthly inputs
    measured twice each."""
    t = np.repeat(np.arange(36.0), 2)[:, None]
    y = 0.05 * t[:, 0] + np.sin(2 * np.pi * t[:, 0] / 12) + _rng().normal(0, 0.3, 72)
    with pm.Model() as m:
        trend = pm.HalfNormal("eta_trend", 1) ** 2 * pm.gp.cov.ExpQuad(
            1, ls=pm.Gamma("ls_trend", 10, 0.5))
        season = (pm.HalfNormal("eta_season", 1) ** 2
                  * pm.gp.cov.Exponential(1, ls=pm.Gamma("ls_decay", 10, 0.5))
                  * pm.gp.cov.Periodic(1, period=12.0, ls=pm.Gamma("ls_period", 4, 4)))
        gp = pm.gp.Marginal(cov_func=trend + season)
        gp.marginal_likelihood("y", X=t, y=y, sigma=pm.HalfNormal("sigma", 1))
    return m


def kronecker_normal(pm):
    """A 12 x 8 grid of observations whose covariance is the Kronecker product of two
    squared-exponential kernels (``pm.KroneckerNormal``: eigendecompositions, no dense
    Cholesky of the whole)."""
    x1 = np.linspace(0, 3, 12)[:, None]
    x2 = np.linspace(0, 2, 8)[:, None]
    y = (np.sin(x1) * np.cos(x2.T)).ravel() + _rng().normal(0, 0.2, 96)
    with pm.Model() as m:
        ls1 = pm.Gamma("ls1", 4, 4)
        ls2 = pm.Gamma("ls2", 4, 4)
        covs = [pm.gp.cov.ExpQuad(1, ls=ls1)(x1), pm.gp.cov.ExpQuad(1, ls=ls2)(x2)]
        pm.KroneckerNormal("y", mu=np.zeros(96), covs=covs, sigma=pm.HalfNormal("sigma", 1),
                           observed=y)
    return m


def lkj_correlation(pm):
    """A 3 x 3 correlation matrix with an LKJ prior (``pm.LKJCorr``), under a multivariate
    normal with fixed scales."""
    rng = _rng()
    corr = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, -0.3], [0.2, -0.3, 1.0]])
    y = rng.multivariate_normal(np.zeros(3), corr, 80)
    with pm.Model() as m:
        c = pm.LKJCorr("corr", n=3, eta=2.0)
        pm.MvNormal("y", np.zeros(3), cov=c, observed=y)
    return m


def hurdle_gamma(pm):
    """Rainfall-like amounts: zeros from a Bernoulli, positives from a gamma
    (``pm.HurdleGamma``)."""
    rng = _rng()
    y = np.where(rng.random(100) < 0.3, 0.0, rng.gamma(2.0, 1.5, 100))
    with pm.Model() as m:
        psi = pm.Beta("psi", 2, 2)
        pm.HurdleGamma("y", psi=psi, alpha=pm.Gamma("alpha", 2, 1), beta=pm.Gamma("beta", 2, 2),
                       observed=y)
    return m



def ctmc_matrix_exponential(pm):
    """A two-state continuous-time Markov chain seen at 60 unequal intervals: the transition
    matrices are ``pt.linalg.expm`` of the free rate matrix times each interval (the regret
    zoo's ``ctmc_N`` shapes at n = 60, with this sweep's data seed)."""
    import zoo

    return zoo.markov_chain_intervals(60, seed=0)


def eigenvalue_likelihood(pm):
    """Observed eigenvalues of a symmetric 3 x 3 matrix built from free entries
    (``pt.linalg.eigh``: its gradient goes through the eigenvectors)."""
    import pytensor.tensor as pt

    y = np.array([0.6, 1.9, 3.4])
    with pm.Model() as m:
        d = pm.Normal("d", 2.0, 1.0, shape=3)
        off = pm.Normal("off", 0.0, 0.5, shape=3)
        mat = pt.stack([pt.stack([d[0], off[0], off[1]]), pt.stack([off[0], d[1], off[2]]),
                        pt.stack([off[1], off[2], d[2]])])
        pm.Normal("y", pt.linalg.eigh(mat)[0], 0.1, observed=y)
    return m


def censored_negative_binomial(pm):
    """Overdispersed counts recorded up to a cap of 10 (``pm.Censored`` of a negative binomial:
    its log survival is an incomplete beta function of the free dispersion)."""
    y = np.minimum(_rng().negative_binomial(3, 0.4, 80), 10)
    with pm.Model() as m:
        mu, alpha = pm.Gamma("mu", 2, 0.5), pm.Gamma("alpha", 2, 1)
        pm.Censored("y", pm.NegativeBinomial.dist(mu=mu, alpha=alpha), lower=None, upper=10,
                    observed=y)
    return m


def discrete_weibull(pm):
    """Counts from a discrete Weibull (``pm.DiscreteWeibull``), both parameters free."""
    y = np.floor(_rng().weibull(1.3, 100) * 4).astype(int)
    with pm.Model() as m:
        pm.DiscreteWeibull("y", q=pm.Beta("q", 2, 2), beta=pm.Gamma("beta", 2, 2), observed=y)
    return m


def mixture_of_families(pm):
    """A mixture of a normal and a Student-t component with their own locations
    (``pm.Mixture`` of two families)."""
    rng = _rng()
    y = np.concatenate([rng.normal(-1.0, 0.5, 70), rng.standard_t(3, 50) + 2.0])
    with pm.Model() as m:
        w = pm.Dirichlet("w", np.ones(2))
        mu = pm.Normal("mu", [-1.0, 2.0], 2.0, shape=2,
                       transform=pm.distributions.transforms.ordered)
        comps = [pm.Normal.dist(mu[0], pm.HalfNormal("s0", 1)),
                 pm.StudentT.dist(nu=3, mu=mu[1], sigma=pm.HalfNormal("s1", 1))]
        pm.Mixture("y", w=w, comp_dists=comps, observed=y)
    return m


def matrix_inverse_quadratic(pm):
    """A quadratic form in the inverse of a parameter-dependent 4 x 4 matrix
    (``pt.linalg.inv``) and its log-determinant (``pt.linalg.det``)."""
    import pytensor.tensor as pt

    rng = _rng()
    y = rng.multivariate_normal(np.zeros(4), np.eye(4) + 0.5, 40)
    with pm.Model() as m:
        s = pm.HalfNormal("s", 2.0)
        r = pm.Beta("r", 2, 2)
        cov = s ** 2 * ((1 - r) * pt.eye(4) + r * pt.ones((4, 4)))
        quad = (y @ pt.linalg.inv(cov) * y).sum()
        pm.Potential("mvn", -0.5 * (40 * pt.log(pt.linalg.det(cov)) + quad))
    return m


def ordered_probit(pm):
    """Ordinal responses through ``pm.OrderedProbit``: free cutpoints (ordered transform) and a
    slope; its log likelihood is differences of normal CDFs."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=150)
    latent = 0.8 * x + rng.normal(size=150)
    y = np.digitize(latent, [-1.0, 0.0, 1.2])
    with pm.Model() as m:
        beta = pm.Normal("beta", 0.0, 1.0)
        cuts = pm.Normal("cuts", 0.0, 2.0, shape=3,
                         transform=pm.distributions.transforms.ordered,
                         initval=np.array([-1.0, 0.0, 1.0]))
        pm.OrderedProbit("y", eta=beta * pt.as_tensor(x), cutpoints=cuts, observed=y)
    return m


def matern_free_smoothness(pm):
    """A Matern covariance with free smoothness written with the modified Bessel function of
    the second kind (``pt.kv``) over 25 points, in a marginal multivariate normal."""
    import pytensor.tensor as pt

    rng = _rng()
    xs = np.linspace(0.1, 5.0, 25)
    d = np.abs(xs[:, None] - xs[None, :]) + np.eye(25)  # no zero distance on the diagonal
    y = np.sin(xs) + 0.2 * rng.normal(size=25)
    with pm.Model() as m:
        nu = pm.Gamma("nu", 4, 2)
        ls = pm.Gamma("ls", 4, 4)
        r = pt.sqrt(2 * nu) * d / ls
        k = (2 ** (1 - nu) / pt.gamma(nu)) * r ** nu * pt.kv(nu, r)
        cov = pt.switch(pt.eq(pt.as_tensor(np.eye(25)), 1), 1.0, k) + 0.05 * pt.eye(25)
        pm.MvNormal("y", mu=np.zeros(25), cov=cov, observed=y)
    return m


def gammainc_free_shape(pm):
    """Interval-censored waiting times: each observed between two bounds, its likelihood a
    difference of regularized incomplete gamma functions (``pt.gammainc``) of the free shape
    and rate."""
    import pytensor.tensor as pt

    rng = _rng()
    t = rng.gamma(3.0, 1 / 1.5, 80)
    lo, hi = np.floor(t), np.floor(t) + 1.0
    with pm.Model() as m:
        shape = pm.Gamma("shape", 2, 1)
        rate = pm.Gamma("rate", 2, 1)
        p = pt.gammainc(shape, rate * hi) - pt.gammainc(shape, rate * lo)
        pm.Potential("intervals", pt.log(pt.maximum(p, 1e-300)).sum())
    return m


def half_flat_scale(pm):
    """A regression with improper priors: ``pm.Flat`` coefficients and a ``pm.HalfFlat``
    noise scale, whose initial point is 0 and 1 on the unconstrained space."""
    rng = _rng()
    x = rng.normal(size=(120, 2))
    y = x @ np.array([1.0, -0.5]) + 0.3 + 0.7 * rng.normal(size=120)
    with pm.Model() as m:
        b = pm.Flat("b", shape=2)
        a = pm.Flat("a")
        s = pm.HalfFlat("s")
        pm.Normal("y", a + pm.math.dot(x, b), s, observed=y)
    return m


def triangular_bounds(pm):
    """Observations from a triangular distribution whose mode is free and whose bounds are
    fixed beyond the data, with a logit-normal proportion and a Moyal noise term beside it."""
    rng = _rng()
    y = rng.triangular(0.0, 3.0, 10.0, 60)
    props = 1 / (1 + np.exp(-rng.normal(0.5, 0.7, 40)))
    z = rng.gumbel(1.0, 0.5, 50)
    with pm.Model() as m:
        c = pm.Uniform("c", 0.5, 9.5)
        pm.Triangular("y", lower=-0.5, c=c, upper=10.5, observed=y)
        mu = pm.Normal("mu", 0.0, 1.0)
        sg = pm.HalfNormal("sg", 1.0)
        pm.LogitNormal("props", mu=mu, sigma=sg, observed=props)
        loc = pm.Normal("loc", 0.0, 2.0)
        pm.Moyal("z", mu=loc, sigma=0.5, observed=z)
    return m


def expm1_survival(pm):
    """A Gompertz survival model written by hand: hazard ``b exp(c t)``, its cumulative hazard
    ``b / c expm1(c t)``, with right-censored times (``pt.expm1``, ``pt.log``)."""
    import pytensor.tensor as pt

    rng = _rng()
    t = rng.weibull(2.0, 100) * 5
    event = (t < 6.0).astype(float)
    t = np.minimum(t, 6.0)
    with pm.Model() as m:
        b = pm.Gamma("b", 2, 10)
        c = pm.Normal("c", 0.3, 0.3)
        cum = b / c * pt.expm1(c * t)
        pm.Potential("gompertz", (event * (pt.log(b) + c * t) - cum).sum())
    return m


def geometric_adstock(pm):
    """A marketing-mix regression: weekly spend carried over by a geometric adstock of free
    decay, written as a convolution (``pytensor.tensor.signal.convolve1d``), then saturated
    by a logistic curve of free steepness."""
    import pytensor.tensor as pt
    from pytensor.tensor.signal import convolve1d

    rng = _rng()
    spend = rng.gamma(2.0, 1.0, 104)
    lags = np.arange(8)
    carried = np.convolve(spend, 0.6 ** lags)[:104]
    sales = 2.0 + 3.0 * (1 - np.exp(-0.4 * carried)) / (1 + np.exp(-0.4 * carried))
    sales = sales + 0.3 * rng.normal(size=104)
    with pm.Model() as m:
        decay = pm.Beta("decay", 2, 2)
        lam = pm.Gamma("lam", 2, 4)
        beta = pm.HalfNormal("beta", 3.0)
        base = pm.Normal("base", 0.0, 5.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        kernel = decay ** pt.as_tensor(lags.astype(float))
        adstock = convolve1d(pt.as_tensor(spend), kernel, mode="full")[:104]
        saturated = (1 - pt.exp(-lam * adstock)) / (1 + pt.exp(-lam * adstock))
        pm.Normal("sales", base + beta * saturated, sigma, observed=sales)
    return m


def spectral_smoothing(pm):
    """A latent curve on 64 points under a smoothness prior written in the frequency domain:
    the squared moduli of its real FFT (``pytensor.tensor.fft.rfft``), weighted by frequency,
    as a ``pm.Potential``; noisy observations of the curve."""
    import pytensor.tensor as pt
    from pytensor.tensor.fft import rfft

    rng = _rng()
    grid = np.linspace(0.0, 2 * np.pi, 64, endpoint=False)
    y = np.sin(grid) + 0.5 * np.cos(3 * grid) + 0.3 * rng.normal(size=64)
    weights = np.arange(33, dtype=float) ** 2 / 64.0
    with pm.Model() as m:
        tau = pm.HalfNormal("tau", 1.0)
        f = pm.Normal("f", 0.0, 2.0, shape=64)
        spectrum = rfft(f[None, :])[0]
        power = (spectrum ** 2).sum(axis=-1)
        pm.Potential("smooth", -0.5 * (weights * power).sum() / tau ** 2 - 32 * pt.log(tau))
        pm.Normal("y", f, 0.3, observed=y)
    return m


def von_mises_directions(pm):
    """Wind directions: a von Mises likelihood whose mean direction is itself a free von Mises
    variable (PyMC's circular transform) and whose concentration is free (the log of Bessel's
    ``i0e`` in the log density)."""
    rng = _rng()
    angles = rng.vonmises(0.8, 3.0, 120)
    with pm.Model() as m:
        mu = pm.VonMises("mu", mu=0.0, kappa=0.5)
        kappa = pm.Gamma("kappa", 2, 0.5)
        pm.VonMises("y", mu=mu, kappa=kappa, observed=angles)
    return m


def cumprod_survival(pm):
    """A discrete-time survival model over 12 periods: a logistic hazard in time, survival as
    the cumulative product of one minus the hazard (``pt.cumprod``), an event's likelihood
    its hazard times the survival before it, a censored time's its survival."""
    import pytensor.tensor as pt

    rng = _rng()
    periods = np.arange(12, dtype=float)
    true_hazard = 1 / (1 + np.exp(-(-2.0 + 0.15 * periods)))
    times, events = [], []
    for _ in range(150):
        t = int(np.argmax(rng.uniform(size=12) < true_hazard)) if (
            rng.uniform(size=12) < true_hazard).any() else 11
        event = rng.uniform() < 0.8
        times.append(t)
        events.append(event)
    times, events = np.array(times), np.array(events, dtype=float)
    with pm.Model() as m:
        a = pm.Normal("a", -2.0, 1.0)
        b = pm.Normal("b", 0.0, 0.5)
        hazard = pm.math.invlogit(a + b * pt.as_tensor(periods))
        survival = pt.cumprod(1 - hazard)
        before = pt.concatenate([pt.ones(1), survival[:-1]])
        loglik = (events * (pt.log(hazard[times]) + pt.log(before[times]))
                  + (1 - events) * pt.log(survival[times]))
        pm.Potential("survival", loglik.sum())
    return m


def sar_spatial(pm):
    """A simultaneous autoregressive (SAR) regression on a 7 x 7 lattice: ``(I - rho W) y``
    is normal around the covariates' effect, its log density carrying the log determinant of
    ``I - rho W`` (``pt.linalg.slogdet``) of the free spatial correlation (the regret zoo's
    ``sar_lattice`` at side 7, with this sweep's data seed)."""
    import zoo

    return zoo.sar_lattice(7, seed=0)


def kalman_ar2(pm):
    """An AR(2) process seen with noise, its likelihood a Kalman filter written with
    ``pytensor.scan`` over 60 observations (2 x 2 state covariances), started from the
    stationary covariance (``pt.linalg.solve_discrete_lyapunov``); the AR coefficients from
    free partial autocorrelations, so stationary (the regret zoo's ``kalman_ar2`` at 60
    steps, with this sweep's data seed)."""
    import zoo

    return zoo.kalman_ar2(60, seed=0)


def as_op_likelihood(pm):
    """A black-box log likelihood as PyMC's documentation writes one, a Python function made an
    op with ``pytensor.compile.ops.as_op`` (no gradient, no JAX conversion)."""
    import pytensor.tensor as pt
    from pytensor.compile.ops import as_op

    rng = _rng()
    y = rng.normal(1.0, 0.5, 30)

    @as_op(itypes=[pt.dscalar, pt.dscalar], otypes=[pt.dscalar])
    def log_likelihood(mu, sigma):
        return np.asarray(-0.5 * (((y - mu) / sigma) ** 2).sum() - y.size * np.log(sigma))

    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 2.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Potential("likelihood", log_likelihood(mu, sigma))
    return m


def inner_optimization(pm):
    """A likelihood around the minimizer of an inner objective of the free parameters
    (``pytensor.tensor.optimize.minimize_scalar``: its gradient by the implicit function
    theorem), a shrunk location estimated inside the model."""
    import pytensor.tensor as pt
    from pytensor.graph.replace import graph_replace
    from pytensor.tensor.optimize import minimize_scalar

    rng = _rng()
    y = rng.normal(1.5, 1.0, 40)
    with pm.Model() as m:
        lam = pm.HalfNormal("lam", 2.0)
        sigma = pm.HalfNormal("sigma", 2.0)
        loc = pt.scalar("loc")
        shrunk, _ = minimize_scalar(((pt.as_tensor(y) - loc) ** 2).sum() + lam * loc**2, loc,
                                    method="brent")
        # the inner search starts from 0: its start is an input of the op's, given a value here
        shrunk = graph_replace(shrunk, {loc: pt.as_tensor(np.asarray(0.0, dtype=loc.dtype))})
        pm.Normal("y", shrunk, sigma, observed=y)
    return m


def nuclear_norm_prior(pm):
    """A low-rank matrix seen with noise under a nuclear-norm prior: the sum of the singular
    values of the free 6 x 5 matrix (``pt.linalg.svd(compute_uv=False)``) in a
    ``pm.Potential``."""
    import pytensor.tensor as pt

    rng = _rng()
    y = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 5)) + 0.3 * rng.normal(size=(6, 5))
    with pm.Model() as m:
        mat = pm.Normal("mat", 0.0, 3.0, shape=(6, 5))
        pm.Potential("nuclear", -pt.linalg.svd(mat, compute_uv=False).sum())
        pm.Normal("y", mat, 0.3, observed=y)
    return m


def qr_loadings(pm):
    """A factor model whose loadings are orthonormal: the Q of a free 8 x 2 matrix's QR
    decomposition (``pt.linalg.qr``, its gradient through the decomposition)."""
    import pytensor.tensor as pt

    rng = _rng()
    q, _ = np.linalg.qr(rng.normal(size=(8, 2)))
    y = rng.normal(size=(50, 2)) * np.array([2.0, 1.0]) @ q.T + 0.3 * rng.normal(size=(50, 8))
    with pm.Model() as m:
        raw = pm.Normal("raw", 0.0, 1.0, shape=(8, 2), initval=rng.normal(size=(8, 2)))
        scale = pm.HalfNormal("scale", 3.0, shape=2)
        sigma = pm.HalfNormal("sigma", 1.0)
        loadings = pt.linalg.qr(raw, mode="economic")[0] * scale
        cov = pt.dot(loadings, loadings.T) + sigma**2 * pt.eye(8)
        pm.MvNormal("y", np.zeros(8), cov=cov, observed=y)
    return m


def vector_potential(pm):
    """A ``pm.Potential`` of a vector, one term an observation (PyMC sums it), beside an
    ordinary likelihood."""
    rng = _rng()
    y = rng.normal(2.0, 1.0, 30)
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 5.0)
        s = pm.HalfNormal("s", 2.0)
        pm.Potential("robust", -pm.math.log1p(((y - mu) / s) ** 2) - pm.math.log(s))
    return m


def norm_at_the_start(pm):
    """A prior on a vector's length (``pt.linalg.norm``): its gradient at the vector's initial
    point, zero, is 0 / 0, so every start PyMC jitters near it is finite and any at zero is
    not."""
    import pytensor.tensor as pt

    rng = _rng()
    y = rng.normal([1.0, -0.5, 0.3], 0.5, (40, 3))
    with pm.Model() as m:
        v = pm.Normal("v", 0.0, 3.0, shape=3)
        pm.Potential("length", pm.logp(pm.Gamma.dist(2.0, 2.0), pt.linalg.norm(v)))
        pm.Normal("y", v, 0.5, observed=y)
    return m


def threshold_sqrt(pm, n: int = 120):
    """A threshold regression: the mean grows as the square root of the distance past a free
    threshold, written ``pt.switch(x > c, b * pt.sqrt(x - c), 0)``, whose branch not taken is
    the square root of a negative number below the threshold."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.uniform(0.0, 10.0, n)
    y = 1.0 + np.where(x > 4.0, 1.5 * np.sqrt(np.clip(x - 4.0, 0, None)), 0.0)
    y = y + 0.3 * rng.normal(size=n)
    with pm.Model() as m:
        c = pm.Uniform("c", 0.0, 10.0)
        a = pm.Normal("a", 0.0, 5.0)
        b = pm.HalfNormal("b", 3.0)
        s = pm.HalfNormal("s", 1.0)
        xs = pt.as_tensor(x)
        mu = a + pt.switch(xs > c, b * pt.sqrt(xs - c), 0.0)
        pm.Normal("y", mu, s, observed=y)
    return m


def threshold_sqrt_rows(pm):
    """:func:`threshold_sqrt` with 20,000 observations: ``auto`` ranks PyMC's NUTS first, and
    ``measure=True`` NumPyro's (before 0f23a14)."""
    return threshold_sqrt(pm, n=20_000)


def hard_constraint_potential(pm):
    """An order constraint written as a ``pm.Potential`` of 0 or -inf
    (``pt.switch(lo < hi, 0, -inf)``): -inf at PyMC's initial point, where both are 0, and at
    half the starts its jitter draws."""
    import pytensor.tensor as pt

    rng = _rng()
    y = np.concatenate([rng.normal(-1.0, 0.5, 30), rng.normal(2.0, 0.5, 30)])
    with pm.Model() as m:
        lo = pm.Normal("lo", 0.0, 3.0)
        hi = pm.Normal("hi", 0.0, 3.0)
        pm.Potential("order", pt.switch(lo < hi, 0.0, -np.inf))
        w = pm.Beta("w", 2, 2)
        pm.Mixture("y", w=pt.stack([w, 1 - w]),
                   comp_dists=[pm.Normal.dist(lo, 0.5), pm.Normal.dist(hi, 0.5)], observed=y)
    return m


def pareto_tail(pm):
    """Exceedances over a free Pareto scale: ``pm.Pareto`` whose support starts at its free
    ``m``, bounded above by the smallest observation through ``pm.Uniform``'s upper bound."""
    rng = _rng()
    y = (rng.pareto(2.5, 80) + 1.0) * 2.0
    with pm.Model() as m:
        scale = pm.Uniform("scale", 0.1, float(y.min()))
        alpha = pm.Gamma("alpha", 2, 1)
        pm.Pareto("y", alpha=alpha, m=scale, observed=y)
    return m


def max_utility(pm):
    """A choice's value as the largest of four latent utilities (``pt.max`` over free
    variables: its gradient goes to one argument at a time), observed with noise."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=(100, 4))
    y = (x * np.array([1.0, 0.5, -0.5, 0.2])).max(axis=1)
    y = y + 0.2 * rng.normal(size=100)
    with pm.Model() as m:
        beta = pm.Normal("beta", 0.0, 1.0, shape=4)
        s = pm.HalfNormal("s", 1.0)
        pm.Normal("y", pt.max(pt.as_tensor(x) * beta, axis=1), s, observed=y)
    return m


def periodic_gp(pm):
    """A latent GP whose covariance is a squared exponential times a periodic kernel
    (``pm.gp.cov.ExpQuad * pm.gp.cov.Periodic``) over 40 points, under a Poisson likelihood."""
    rng = _rng()
    t = np.linspace(0.0, 10.0, 40)[:, None]
    counts = rng.poisson(np.exp(1.0 + 0.8 * np.sin(2 * np.pi * t[:, 0] / 3.0)))
    with pm.Model() as m:
        ls = pm.Gamma("ls", 5, 1)
        period = pm.Normal("period", 3.0, 0.3)
        eta = pm.HalfNormal("eta", 1.0)
        cov = eta**2 * pm.gp.cov.ExpQuad(1, ls=ls) * pm.gp.cov.Periodic(1, period=period,
                                                                          ls=1.0)
        gp = pm.gp.Latent(cov_func=cov)
        f = gp.prior("f", X=t, jitter=1e-5)
        pm.Poisson("counts", pm.math.exp(1.0 + f), observed=counts)
    return m


def wald_regression(pm):
    """Waiting times under an inverse Gaussian (``pm.Wald``) whose mean is a log-linear
    regression and whose shape is free: square roots of parameters inside the switch that
    bounds its support."""
    rng = _rng()
    x = rng.normal(size=100)
    mean = np.exp(0.5 + 0.3 * x)
    y = rng.wald(mean, 4.0)
    with pm.Model() as m:
        a = pm.Normal("a", 0.0, 2.0)
        b = pm.Normal("b", 0.0, 1.0)
        lam = pm.Gamma("lam", 2, 0.5)
        pm.Wald("y", mu=pm.math.exp(a + b * x), lam=lam, observed=y)
    return m


def box_cox(pm):
    """Positive data normal after a Box-Cox transform of free power, written with a switch for
    the logarithm at a power of 0 (the transform's limit), with its Jacobian."""
    import pytensor.tensor as pt

    rng = _rng()
    y = rng.lognormal(1.0, 0.4, 80)
    logy = np.log(y)
    with pm.Model() as m:
        lam = pm.Normal("lam", 0.0, 1.0)
        mu = pm.Normal("mu", 0.0, 5.0)
        s = pm.HalfNormal("s", 2.0)
        z = pt.switch(pt.abs(lam) < 1e-6, pt.as_tensor(logy),
                      (pt.exp(lam * pt.as_tensor(logy)) - 1) / lam)
        pm.Potential("box_cox", pm.logp(pm.Normal.dist(mu, s), z).sum()
                     + (lam - 1) * logy.sum())
    return m


def gaussian_copula(pm):
    """Two margins (exponential, gamma) joined by a Gaussian copula of free correlation: each
    margin's CDF through the normal quantile (``pt.erfinv``), the copula's density beside the
    margins' own (the regret zoo's ``gaussian_copula`` at 150 pairs, with this sweep's data
    seed)."""
    import zoo

    return zoo.gaussian_copula(150, seed=0)


def measurement_error(pm):
    """Errors in variables: 100 latent true covariates, each seen once with known noise, and a
    regression on them."""
    rng = _rng()
    x_true = rng.normal(0.0, 1.0, 100)
    x_obs = x_true + 0.5 * rng.normal(size=100)
    y = 1.0 + 2.0 * x_true + 0.5 * rng.normal(size=100)
    with pm.Model() as m:
        x = pm.Normal("x", 0.0, 1.0, shape=100)
        pm.Normal("x_obs", x, 0.5, observed=x_obs)
        a = pm.Normal("a", 0.0, 5.0)
        b = pm.Normal("b", 0.0, 5.0)
        s = pm.HalfNormal("s", 2.0)
        pm.Normal("y", a + b * x, s, observed=y)
    return m


def neural_network_classifier(pm):
    """A Bayesian neural network as PyMC's example writes one: two hidden layers of five
    ``tanh`` units, no biases, standard normal weights, a Bernoulli output through the
    logistic function, on 200 points of two interleaved half moons."""
    import pytensor.tensor as pt

    rng = _rng()
    t = rng.uniform(0, np.pi, 200)
    upper = rng.uniform(size=200) < 0.5
    x = np.column_stack([np.where(upper, np.cos(t), 1 - np.cos(t)),
                         np.where(upper, np.sin(t), 0.5 - np.sin(t))])
    x = (x - x.mean(0)) / x.std(0) + 0.1 * rng.normal(size=(200, 2))
    y = upper.astype(int)
    with pm.Model(coords={"hidden": range(5), "inputs": range(2)}) as m:
        w_in = pm.Normal("w_in", 0.0, 1.0, dims=("inputs", "hidden"))
        w_mid = pm.Normal("w_mid", 0.0, 1.0, dims=("hidden", "hidden"))
        w_out = pm.Normal("w_out", 0.0, 1.0, dims="hidden")
        layer = pt.tanh(pt.tanh(pt.as_tensor(x) @ w_in) @ w_mid)
        pm.Bernoulli("y", logit_p=layer @ w_out, observed=y)
    return m


def item_response_2pl(pm):
    """A two-parameter logistic item-response model: 60 students' abilities, 15 items'
    difficulties and log-normal discriminations, each answer Bernoulli in long format
    (900 rows, indexed twice)."""
    rng = _rng()
    students, items = 60, 15
    ability = rng.normal(size=students)
    difficulty = rng.normal(0, 1, items)
    discrimination = rng.lognormal(0, 0.3, items)
    s_idx = np.repeat(np.arange(students), items)
    i_idx = np.tile(np.arange(items), students)
    p = 1 / (1 + np.exp(-discrimination[i_idx] * (ability[s_idx] - difficulty[i_idx])))
    answers = (rng.uniform(size=p.size) < p).astype(int)
    with pm.Model(coords={"student": range(students), "item": range(items)}) as m:
        theta = pm.Normal("ability", 0.0, 1.0, dims="student")
        sigma_b = pm.HalfNormal("sigma_difficulty", 1.0)
        b = pm.Normal("difficulty", 0.0, sigma_b, dims="item")
        a = pm.LogNormal("discrimination", 0.0, 0.5, dims="item")
        pm.Bernoulli("answer", logit_p=a[i_idx] * (theta[s_idx] - b[i_idx]), observed=answers)
    return m


def bradley_terry(pm):
    """Pairwise comparisons: 12 teams' strengths, zero-sum with a free scale, and 200 games
    each won by the home or the away side through the logistic of their strengths' difference
    plus a home advantage."""
    rng = _rng()
    teams = 12
    strength = rng.normal(0, 0.8, teams)
    home = rng.integers(0, teams, 200)
    away = (home + rng.integers(1, teams, 200)) % teams
    p = 1 / (1 + np.exp(-(0.3 + strength[home] - strength[away])))
    won = (rng.uniform(size=200) < p).astype(int)
    with pm.Model(coords={"team": range(teams)}) as m:
        scale = pm.HalfNormal("scale", 1.0)
        s = pm.ZeroSumNormal("strength", sigma=scale, dims="team")
        advantage = pm.Normal("home_advantage", 0.0, 1.0)
        pm.Bernoulli("home_won", logit_p=advantage + s[home] - s[away], observed=won)
    return m


def hidden_markov_forward(pm):
    """A two-state Gaussian hidden Markov model, its states summed out by the forward
    algorithm written with ``pytensor.scan`` and ``logsumexp`` over 120 observations; the
    transition matrix's rows Dirichlet, the states' means ordered."""
    import pytensor
    import pytensor.tensor as pt

    rng = _rng()
    states = [0]
    for _ in range(119):
        states.append(states[-1] if rng.uniform() < 0.9 else 1 - states[-1])
    y = np.array([-1.0, 1.5])[states] + 0.6 * rng.normal(size=120)
    with pm.Model() as m:
        transition = pm.Dirichlet("transition", a=np.array([[8.0, 2.0], [2.0, 8.0]]))
        mu = pm.Normal("mu", [-1.0, 1.0], 2.0, transform=pm.distributions.transforms.ordered)
        sigma = pm.HalfNormal("sigma", 1.0)
        emission = pm.logp(pm.Normal.dist(mu, sigma), pt.as_tensor(y)[:, None])
        log_t = pt.log(transition)

        def step(emit, alpha, log_t):
            return emit + pm.math.logsumexp(alpha[:, None] + log_t, axis=0).flatten()

        alpha, _ = pytensor.scan(step, sequences=[emission[1:]],
                                 outputs_info=[emission[0] + np.log(0.5)],
                                 non_sequences=[log_t])
        pm.Potential("forward", pm.math.logsumexp(alpha[-1]))
    return m


def dirichlet_regression(pm):
    """Compositions of three parts observed for 120 units, Dirichlet with concentrations the
    exponential of a regression on two covariates times a free precision."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=(120, 2))
    beta = np.array([[0.5, -0.3, 0.0], [0.2, 0.4, 0.0]])
    mean = np.exp(x @ beta)
    mean /= mean.sum(1, keepdims=True)
    y = np.array([rng.dirichlet(30 * row) for row in mean])
    with pm.Model(coords={"part": range(3), "covariate": range(2)}) as m:
        b = pm.Normal("b", 0.0, 1.0, dims=("covariate", "part"))
        intercept = pm.Normal("intercept", 0.0, 1.0, dims="part")
        phi = pm.Gamma("precision", 2.0, 0.1)
        eta = pt.exp(intercept + pt.as_tensor(x) @ b)
        pm.Dirichlet("y", a=phi * eta / eta.sum(axis=1, keepdims=True), observed=y)
    return m


def piecewise_exponential_hazards(pm):
    """A proportional hazards model by the Poisson trick, as PyMC's survival example writes it:
    150 subjects' follow-up split at 8 interval cuts, a free baseline hazard per interval, one
    covariate's log hazard ratio, each interval's event count Poisson with the time at risk as
    exposure (a 150 x 8 matrix of rates)."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.integers(0, 2, 150).astype(float)
    follow_up = rng.exponential(1 / (0.2 * np.exp(0.7 * x)))
    event = rng.uniform(size=150) < 0.8
    cuts = np.linspace(0, np.quantile(follow_up, 0.95), 9)
    exposure = np.clip(follow_up[:, None] - cuts[None, :-1], 0, np.diff(cuts)[None, :])
    interval = np.clip(np.searchsorted(cuts, follow_up, side="right") - 1, 0, 7)
    deaths = np.zeros((150, 8))
    deaths[np.arange(150), interval] = event
    with pm.Model(coords={"interval": range(8)}) as m:
        lambda0 = pm.Gamma("lambda0", 0.01, 0.01, dims="interval")
        beta = pm.Normal("beta", 0.0, 1000.0)
        rate = pt.outer(pt.exp(beta * x), lambda0)
        pm.Poisson("deaths", exposure * rate, observed=deaths)
    return m


def weibull_censored_potential(pm):
    """A Weibull accelerated failure time model with right-censored times written as users
    did before ``pm.Censored``: the observed times' Weibull likelihood, and a ``pm.Potential``
    of the censored times' log survival (``pm.logccdf``)."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=200)
    t = rng.weibull(1.5, 200) * np.exp(1.0 + 0.5 * x)
    censor_at = rng.uniform(1, 6, 200)
    seen = t < censor_at
    with pm.Model() as m:
        alpha = pm.Gamma("alpha", 2.0, 1.0)
        a = pm.Normal("a", 0.0, 2.0)
        b = pm.Normal("b", 0.0, 1.0)
        scale = pt.exp(a + b * x)
        pm.Weibull("t", alpha, scale[seen], observed=t[seen])
        pm.Potential("censored", pm.logccdf(pm.Weibull.dist(alpha, scale[~seen]),
                                            censor_at[~seen]).sum())
    return m


def dose_response_root(pm):
    """A response growing as the square root of the dose times a free potency, the zero doses
    kept out of the root by a switch (``pt.switch(dose > 0, pt.sqrt(dose * k), 0)``), 60
    subjects at four doses, one of them 0."""
    import pytensor.tensor as pt

    rng = _rng()
    dose = np.repeat([0.0, 0.5, 1.0, 2.0], 15)
    y = 2.0 + np.sqrt(1.8 * dose) + 0.3 * rng.normal(size=60)
    with pm.Model() as m:
        k = pm.HalfNormal("potency", 2.0)
        a = pm.Normal("baseline", 0.0, 5.0)
        s = pm.HalfNormal("s", 1.0)
        pm.Normal("y", a + pt.switch(dose > 0, pt.sqrt(dose * k), 0.0), s, observed=y)
    return m

def dose_response_power(pm):
    """:func:`dose_response_root` with a power under 1 of the dose times the potency for its
    root (``pt.switch(dose > 0, (dose * k) ** 0.3, 0)``), as an allometric or a fixed-Hill
    response is written: the branch not taken is ``0 ** 0.3``, whose derivative is infinite."""
    import pytensor.tensor as pt

    rng = _rng()
    dose = np.repeat([0.0, 0.5, 1.0, 2.0], 15)
    y = 2.0 + (1.8 * dose) ** 0.3 + 0.3 * rng.normal(size=60)
    with pm.Model() as m:
        k = pm.HalfNormal("potency", 2.0)
        a = pm.Normal("baseline", 0.0, 5.0)
        s = pm.HalfNormal("s", 1.0)
        pm.Normal("y", a + pt.switch(dose > 0, (dose * k) ** 0.3, 0.0), s, observed=y)
    return m


def poisson_offset_zero_exposure(pm):
    """A Poisson regression of counts with the log of each unit's exposure as an offset, as
    GLM texts write it, where 10 of 120 units had no exposure (their count 0, their offset
    ``log(0) = -inf``, so their rate is 0 whatever the parameters)."""
    import pytensor.tensor as pt

    rng = _rng()
    x = rng.normal(size=120)
    exposure = rng.uniform(0.5, 2.0, 120)
    exposure[:10] = 0.0
    counts = rng.poisson(exposure * np.exp(0.3 + 0.5 * x))
    with np.errstate(divide="ignore"):
        offset = np.log(exposure)
    with pm.Model() as m:
        a = pm.Normal("a", 0.0, 2.0)
        b = pm.Normal("b", 0.0, 1.0)
        pm.Poisson("y", pt.exp(a + b * x + offset), observed=counts)
    return m


def binomial_zero_trials(pm):
    """Hierarchical binomial success rates for 20 groups, three of which had no trials
    (``n = 0``, ``k = 0``): a logit-normal rate per group."""
    rng = _rng()
    n = rng.integers(5, 40, 20)
    n[[3, 11, 17]] = 0
    k = rng.binomial(n, 1 / (1 + np.exp(-rng.normal(-0.5, 0.7, 20))))
    with pm.Model(coords={"group": range(20)}) as m:
        mu = pm.Normal("mu", 0.0, 1.5)
        sigma = pm.HalfNormal("sigma", 1.0)
        z = pm.Normal("z", 0.0, 1.0, dims="group")
        pm.Binomial("k", n=n, logit_p=mu + sigma * z, observed=k, dims="group")
    return m


def nonlinear_growth_mixed(pm):
    """Logistic growth curves of 12 subjects seen 10 times each, each subject's asymptote a
    random effect around a population value, a shared rate and midpoint: a nonlinear
    mixed-effects model."""
    import pytensor.tensor as pt

    rng = _rng()
    t = np.tile(np.linspace(0, 9, 10), 12)
    subject = np.repeat(np.arange(12), 10)
    asym = 10 + rng.normal(0, 1.5, 12)
    y = asym[subject] / (1 + np.exp(-(t - 4.0) * 0.9)) + 0.5 * rng.normal(size=120)
    with pm.Model(coords={"subject": range(12)}) as m:
        pop = pm.Normal("asymptote", 10.0, 5.0)
        spread = pm.HalfNormal("asymptote_sd", 3.0)
        offset = pm.Normal("offset", 0.0, 1.0, dims="subject")
        rate = pm.LogNormal("rate", 0.0, 0.5)
        mid = pm.Normal("midpoint", 5.0, 2.0)
        curve = (pop + spread * offset)[subject] / (1 + pt.exp(-(t - mid) * rate))
        pm.Normal("y", curve, pm.HalfNormal("noise", 1.0), observed=y)
    return m


def beta_at_the_bounds(pm):
    """Proportions modelled as beta where some are exactly 0 or 1, outside the beta's support:
    the log density is -inf at every point, a model error to be named, not sampled."""
    rng = _rng()
    y = rng.beta(2.0, 5.0, 50)
    y[:3] = 0.0
    y[3] = 1.0
    with pm.Model() as m:
        mu = pm.Beta("mu", 2.0, 2.0)
        nu = pm.Gamma("nu", 2.0, 0.1)
        pm.Beta("y", mu=mu, nu=nu, observed=y)
    return m

MODELS = [missing_observations, normal_mixture, censored, truncated, zero_sum_with_coords,
          random_walk, autoregressive, potential_and_deterministic, custom_dist, lkj_mvnormal,
          flat_prior, discrete_free_variable, binomial_regression, large_offset, multinomial,
          scan_recurrence, student_t_free_nu, zero_inflated, black_box_op,
          black_box_op_without_gradient, simulator, named_model,
          deterministic_with_dims, many_scalars, pandas_data, gp_marginal, hsgp,
          rice, ex_gaussian, wald, kumaraswamy, skew_student_t, asymmetric_laplace,
          beta_binomial, dirichlet_multinomial, hurdle_poisson, interpolated_prior,
          euler_maruyama, garch11, matrix_normal, mv_student_t,
          indexed_groups, custom_dist_from_graph, truncated_poisson, censored_poisson,
          zero_inflated_negative_binomial, mvnormal_mixture, categorical_logits,
          bounds_from_another_variable, large_simplex, mvnormal_precision,
          logsumexp_potential, car_spatial, icar_spatial, stick_breaking_mixture, gp_latent,
          mv_random_walk, ode_logistic_growth, einsum_regression, sorted_cumsum,
          piecewise_searchsorted, linear_solve_likelihood, extreme_value_families,
          half_student_t_hierarchy, censored_gamma, censored_student_t, truncated_gamma,
          lazy_ifelse, sparse_design, hand_written_mvnormal, trimmed_likelihood,
          student_t_process, sparse_gp, kronecker_normal, lkj_correlation, hurdle_gamma,
          ctmc_matrix_exponential, eigenvalue_likelihood, censored_negative_binomial,
          discrete_weibull, mixture_of_families, matrix_inverse_quadratic,
          # an eleventh set (2026-12-01, morning)
          ordered_probit, matern_free_smoothness, gammainc_free_shape, half_flat_scale,
          triangular_bounds, expm1_survival,
          # a twelfth set (2026-12-01, morning)
          geometric_adstock, spectral_smoothing, von_mises_directions, cumprod_survival,
          sar_spatial, kalman_ar2, as_op_likelihood,
          # a thirteenth set (2026-12-01, morning)
          inner_optimization, nuclear_norm_prior, qr_loadings, vector_potential,
          norm_at_the_start,
          # a fourteenth set (2026-12-01, morning)
          threshold_sqrt, hard_constraint_potential, pareto_tail, max_utility, periodic_gp,
          threshold_sqrt_rows,
          # a fifteenth set (2026-12-01, morning)
          wald_regression, box_cox, gaussian_copula, measurement_error,
          # a sixteenth set (2026-12-01, night): kernels written by hand
          sparse_gp_maximum_kernel, sparse_gp_abs_kernel, sparse_gp_switch_kernel,
          sparse_gp_unguarded_kernel, gp_repeated_inputs, gp_vfe_matern32,
          gp_latent_spatial_counts, gp_seasonal_product,
          # a seventeenth set (2026-12-02, morning): models from PyMC's examples and textbooks
          neural_network_classifier, item_response_2pl, bradley_terry, hidden_markov_forward,
          dirichlet_regression, piecewise_exponential_hazards, weibull_censored_potential,
          # an eighteenth set (2026-12-02, morning): a root of 0 kept out by a switch
          dose_response_root,
          # a nineteenth set (2026-12-02, morning): zeros and bounds in the data
          poisson_offset_zero_exposure, binomial_zero_trials, nonlinear_growth_mixed,
          # a twentieth set (2026-12-02, afternoon): a power under 1 of 0 kept out by a switch
          dose_response_power]


# ---- arguments and situations -------------------------------------------------------------

def _regression(pm, n=50):
    rng = _rng()
    with pm.Model(coords={"obs": range(n)}) as m:
        x = pm.Data("x", rng.normal(size=n), dims="obs")
        y = pm.Data("y_data", rng.normal(size=n), dims="obs")
        mu = pm.Normal("a") + pm.Normal("b") * x
        pm.Normal("y", mu, pm.HalfNormal("s"), observed=y, dims="obs", shape=x.shape)
    return m


def _sample(**kwargs):
    import pymc_accel

    sampler = {} if "nuts_sampler" in kwargs else SAMPLER  # a case's own sampler, as given
    return pymc_accel.sample(**{**FAST, **sampler, **kwargs})


def _case_measured_threshold(pm):
    """``measure=True`` on :func:`threshold_sqrt`: the timed JAX gradient is fast, and NaN."""
    with threshold_sqrt(pm):
        return _sample(measure=True, draws=1000, tune=1000)


def _case_set_data(pm):
    with _regression(pm):
        _sample()
        rng = _rng()
        pm.set_data({"x": rng.normal(size=80), "y_data": rng.normal(size=80)},
                    coords={"obs": range(80)})
        return _sample()


def _case_seeded_twice(pm):
    with _regression(pm):
        first, second = _sample(random_seed=3), _sample(random_seed=3)
    if not np.array_equal(first.posterior["a"].values, second.posterior["a"].values):
        raise AssertionError("two runs with random_seed=3 differ")
    return second


def _case_enable(pm):
    import pymc_accel

    with pymc_accel.enable(), _regression(pm):
        return pm.sample(nuts_sampler="auto", **FAST)


def _case_float32_built_float64_sampled(pm):
    import pytensor

    with pytensor.config.change_flags(floatX="float32"):
        with pm.Model() as m:
            pm.Normal("y", pm.Normal("a"), 1, observed=_rng().normal(size=10).astype("float32"))
    with m:
        return _sample()


def _case_metropolis(pm):
    with _regression(pm):
        return _sample(step=pm.Metropolis())


def _case_posterior_predictive(pm):
    with _regression(pm):
        idata = _sample()
        pm.sample_posterior_predictive(idata, extend_inferencedata=True, progressbar=False)
        pm.compute_log_likelihood(idata, progressbar=False)
    if "y" not in idata.posterior_predictive or "y" not in idata.log_likelihood:
        raise AssertionError("posterior_predictive or log_likelihood lacks y")
    return idata


def _case_model_argument(pm):
    return _sample(model=_regression(pm))


def _case_global_float32(pm):
    import pytensor

    with pytensor.config.change_flags(floatX="float32"):
        with _regression(pm):
            return _sample()


def _case_no_free_variables(pm):
    with pm.Model():
        pm.Normal("y", 0, 1, observed=[0.1, 0.2])
        return _sample()


def _case_pymc_name_under_enable(pm):
    import pymc_accel

    with pymc_accel.enable(), _regression(pm):
        return pm.sample(nuts_sampler="numpyro", **FAST)


def _case_deterministic_in_var_names(pm):
    with _regression(pm) as m:
        pm.Deterministic("a_plus_b", m["a"] + m["b"])
        idata = _sample(var_names=["a", "a_plus_b"])
    if set(idata.posterior.data_vars) != {"a", "a_plus_b"}:
        raise AssertionError(f"posterior holds {sorted(idata.posterior.data_vars)}")
    return idata


def _case_idata_coords_and_dims(pm):
    with pm.Model():
        a = pm.Normal("a", shape=3)
        pm.Normal("y", a, 1, observed=_rng().normal(size=(10, 3)))
        idata = _sample(idata_kwargs={"coords": {"k": ["u", "v", "w"]}, "dims": {"a": ["k"]}})
    if list(idata.posterior["a"].coords["k"].values) != ["u", "v", "w"]:
        raise AssertionError(f"a's dims are {idata.posterior['a'].dims}")
    return idata


def _case_beta_at_the_bounds(pm):
    """:func:`beta_at_the_bounds`: a start that is -inf because of the data, named."""
    with beta_at_the_bounds(pm):
        return _sample()


def _with(**kwargs):
    def case(pm):
        with _regression(pm):
            return _sample(**kwargs)
    return case


ARGUMENTS = {
    "set_data then sample again": _case_set_data,
    "measure=True on a threshold through a root": _case_measured_threshold,
    "random_seed twice": _case_seeded_twice,
    "pm.sample under enable()": _case_enable,
    "step=pm.Metropolis()": _case_metropolis,
    "chains=1": _with(chains=1),
    "chains=3": _with(chains=3),
    "cores=1, chains=4": _with(cores=1, chains=4),
    "random_seed=Generator": _with(random_seed=np.random.default_rng(2)),
    "random_seed=[1, 2]": _with(random_seed=[1, 2]),
    "initvals": _with(initvals={"a": 0.5, "s": 1.0}),
    "nuts={'max_treedepth': 5}": _with(nuts={"max_treedepth": 5}),
    "target_accept=0.95": _with(target_accept=0.95),
    "init='advi'": _with(init="advi"),
    "log_likelihood": _with(idata_kwargs={"log_likelihood": True}),
    "var_names": _with(var_names=["a"]),
    "discard_tuned_samples=False": _with(discard_tuned_samples=False),
    "measure=True": _with(measure=True),
    "nuts_sampler='deer_mala'": _with(nuts_sampler="deer_mala"),
    "nuts_sampler='blackjax_mclmc'": _with(nuts_sampler="blackjax_mclmc"),
    "nuts_sampler='nutpie_jax'": _with(nuts_sampler="nutpie_jax"),
    "posterior predictive and log likelihood after": _case_posterior_predictive,
    "model= outside the context": _case_model_argument,
    "floatX=float32 throughout": _case_global_float32,
    "nuts_sampler='numpyro' under enable()": _case_pymc_name_under_enable,
    "tune=0": _with(tune=0),
    "chains=4 cores=4": _with(chains=4, cores=4),
    "backend='numba'": _with(backend="numba"),
    "backend='jax'": _with(backend="jax"),
    "compile_kwargs mode=NUMBA": _with(compile_kwargs={"mode": "NUMBA"}),
    "init='adapt_full'": _with(init="adapt_full"),
    "init='jitter+adapt_full'": _with(init="jitter+adapt_full"),
    "compute_convergence_checks=False": _with(compute_convergence_checks=False),
    "keep_warning_stat=True": _with(keep_warning_stat=True),
    "progressbar=True": _with(progressbar=True),
    "quiet=True": _with(quiet=True),
    "callback": _with(callback=lambda trace, draw: None),
    "blas_cores=1": _with(blas_cores=1),
    "idata_kwargs log_prior": _with(idata_kwargs={"log_prior": True}),
    "nuts_sampler_kwargs": _with(nuts_sampler_kwargs={"chain_method": "sequential"}),
    "compile_kwargs": _with(compile_kwargs={"mode": "FAST_RUN"}),
    "nuts_sampler='pymc'": _with(nuts_sampler="pymc"),
    "nuts_sampler='numpyro'": _with(nuts_sampler="numpyro"),
    "nuts_sampler='nutpie'": _with(nuts_sampler="nutpie"),
    "precision='float32'": _with(precision="float32"),
    "expect SamplingError: no free variables": (_case_no_free_variables, "SamplingError"),
    "var_names with a Deterministic": _case_deterministic_in_var_names,
    "idata_kwargs coords and dims": _case_idata_coords_and_dims,
    "initvals of a transformed value": _with(initvals={"s_log__": 0.0}),
    "random_seed=np.int64": _with(random_seed=np.int64(3)),
    "chains=8": _with(chains=8),
    "expect NoCandidateError: backend='c'": (_with(backend="c"), "NoCandidateError"),
    # clear errors expected: (case, the pymc-accel error's name)
    "expect UnsupportedArgumentError: float32 model under float64": (
        _case_float32_built_float64_sampled, "UnsupportedArgumentError"),
    "expect ValueError: return_inferencedata=False": (
        _with(return_inferencedata=False), "ValueError"),
    "expect UnknownBackendError: nuts_sampler='stan'": (
        _with(nuts_sampler="stan"), "UnknownBackendError"),
    "expect DeviceUnavailableError: device='gpu'": (_with(device="gpu"),
                                                    "DeviceUnavailableError"),
    "expect NonFiniteInitialPointError: beta data at its bounds": (
        _case_beta_at_the_bounds, "NonFiniteInitialPointError"),
}


def sampler_arguments(spec: str, separator: str = ",") -> dict:
    """``pymc_accel.sample``'s arguments for a sampler written as ``name,option=value,...``
    (``--sampler numba,driver=nutpie``), or with another ``separator``."""
    name, *options = spec.split(separator)
    return {"nuts_sampler": name, **dict(o.split("=", 1) for o in options)}


def _pymc_start_is_finite(model) -> bool:
    """Whether PyMC's own compiled log density is finite at PyMC's own initial point: where it
    is, pymc-accel's start check refusing the model is a defect of the check, not of the
    model (the start check found log(0) at an ``Exponential(2)`` prior's start until
    2026-11-30)."""
    return bool(np.isfinite(model.compile_logp()(model.initial_point())))


def run_case(name: str) -> str:
    """Run one case in this process; return its line."""
    warnings.filterwarnings("ignore")
    import pymc as pm

    import pymc_accel

    by_model = {f.__name__: f for f in MODELS}
    expected = None
    start = time.perf_counter()
    try:
        if name in by_model:
            model = by_model[name](pm)
            chosen = pymc_accel.explain(model).chosen
            with model:
                idata = _sample()
            ran = idata.attrs.get("pymc_accel_candidate", chosen)
        else:
            case = ARGUMENTS[name]
            if isinstance(case, tuple):
                case, expected = case
            idata = case(pm)
            ran = idata.attrs.get("pymc_accel_candidate", "PyMC's own")
        status = "ERR expected an error, got a result" if expected else "OK"
        line = f"{status:4s} {name}: {ran} ({time.perf_counter() - start:.1f} s)"
        if expected:
            return line
        from pymc_accel.stuck_chains import frozen_chains, stuck_chains

        stuck = stuck_chains(idata)
        if stuck:  # a result, with pymc-accel's StuckChainsWarning: the draws are the starts
            return (f"STK  {name}: {ran}: chains {stuck} never left their start "
                    f"({time.perf_counter() - start:.1f} s)")
        frozen = frozen_chains(idata)
        if frozen:  # the same warning: every draw at the maximum tree depth, barely moving
            return (f"STK  {name}: {ran}: chains {frozen} barely moved "
                    f"({time.perf_counter() - start:.1f} s)")
        notes = pymc_accel.SelectionReport.from_idata(idata).notes if (
            "pymc_accel_selection" in idata.attrs) else []
        # a re-run (stuck or frozen chains, float32 diverging) or a sampler that stopped or
        # failed, and the next one run instead
        fell_back = [n for n in notes if "re-ran" in n or n.endswith(" instead")]
        return line + (f" [{fell_back[0][:160]}]" if fell_back else "")
    except Exception as exc:  # the point: report it, whatever it is
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = frame.filename.split("site-packages/")[-1]
        ours = type(exc).__module__.startswith("pymc_accel") or "pymc_accel" in where
        status = "OK" if expected == type(exc).__name__ else "ERR"
        if status == "ERR" and SAMPLER and isinstance(exc, pymc_accel.PymcAccelError):
            status = "REF"  # the sampler asked for refused the case, with pymc-accel's error
        if (isinstance(exc, pymc_accel.NonFiniteInitialPointError) and name in by_model
                and _pymc_start_is_finite(by_model[name](pm))):
            status = "ERR"  # a start PyMC's own log density finds finite: a false refusal
        return (f"{status:4s} {name}: {type(exc).__name__}{' (ours)' if ours else ''}: "
                f"{str(exc).splitlines()[0][:160]} [raised at {where}:{frame.lineno}]")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", help="comma-separated case names (default: all)")
    p.add_argument("--sampler", help="run every case with this nuts_sampler and options, "
                   "e.g. numpyro or numba,driver=nutpie (default: auto); a case this sampler "
                   "refuses with pymc-accel's error is REF, not ERR")
    p.add_argument("--one", help=argparse.SUPPRESS)  # a worker: run this case, print its line
    args = p.parse_args(argv)
    if args.sampler:
        SAMPLER.update(sampler_arguments(args.sampler))
    if args.one:
        print(run_case(args.one), flush=True)
        return 0
    names = (args.cases.split(",") if args.cases
             else [f.__name__ for f in MODELS] + list(ARGUMENTS))
    failed = stuck = 0
    for name in names:
        sampler = ["--sampler", args.sampler] if args.sampler else []
        done = subprocess.run([sys.executable, __file__, "--one", name, *sampler],
                              capture_output=True, text=True, timeout=900)
        lines = [ln for ln in done.stdout.splitlines()
                 if ln.startswith(("OK", "ERR", "REF", "STK"))]
        line = lines[-1] if lines else f"ERR  {name}: the worker died: {done.stderr[-300:]}"
        failed += line.startswith("ERR")
        stuck += line.startswith("STK")
        print(line, flush=True)
    print(f"{len(names) - failed - stuck} of {len(names)} cases as expected"
          + (f"; {stuck} returned chains that never left their start or barely moved "
             "(STK: pymc-accel warned)" if stuck else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
