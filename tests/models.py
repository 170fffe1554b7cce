"""Small models for tests (reference models with known answers live in pymc_accel.models)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op


def discrete_model() -> pm.Model:
    with pm.Model() as model:
        n = pm.Poisson("n", 3.0)
        pm.Normal("y", n, 1.0, observed=[2.0, 3.0])
    return model


def dense_model(n: int = 30) -> pm.Model:
    x = np.linspace(0, 1, n)
    cov = np.exp(-((x[:, None] - x[None]) ** 2) / 0.1) + 1e-6 * np.eye(n)
    with pm.Model() as model:
        s = pm.HalfNormal("s", 1.0)
        f = pm.MvNormal("f", mu=np.zeros(n), cov=cov)
        pm.Normal("y", f, s, observed=np.sin(6 * x))
    return model


def squared_exponential_gp() -> pm.Model:
    """A marginal GP with PyMC's squared exponential kernel over 20 inputs: its kernel's 20
    diagonal distances coincide (pymc_accel.rewrites.coincident_distances holds them)."""
    with pm.Model() as model:
        cov = pm.gp.cov.ExpQuad(1, ls=pm.Gamma("ls", 2, 2))
        gp = pm.gp.Marginal(cov_func=cov)
        x = np.linspace(0, 5, 20)[:, None]
        gp.marginal_likelihood("y", X=x, y=np.sin(x[:, 0]), sigma=0.2)
    return model


def scan_model(steps: int = 25) -> pm.Model:
    import pytensor

    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        out = pytensor.scan(lambda prev, r: r * prev, outputs_info=[pt.as_tensor(np.float64(1.0))],
                               non_sequences=[rho], n_steps=steps, return_updates=False)
        pm.Normal("y", out, 1.0, observed=np.zeros(steps))
    return model


def invalid_start_model() -> pm.Model:
    with pm.Model() as model:
        s = pm.HalfNormal("s", 1.0)
        pm.Exponential("y", s, observed=[-1.0, 2.0])  # -1 is outside the support
    return model


def infinite_before_jitter_model() -> pm.Model:
    """A prior on a vector's length: its log density is -inf at PyMC's initial point, the zero
    vector (a Gamma's density at 0), and finite at every start PyMC's jitter draws from it,
    which is where PyMC's samplers, NumPyro and nutpie start (the sweep's
    ``norm_at_the_start``)."""
    rng = np.random.default_rng(5)
    with pm.Model() as model:
        v = pm.Normal("v", 0.0, 3.0, shape=3)
        pm.Potential("length", pm.logp(pm.Gamma.dist(2.0, 2.0), pt.linalg.norm(v)))
        pm.Normal("y", v, 0.5, observed=rng.normal([1.0, -0.5, 0.3], 0.5, (40, 3)))
    return model


def threshold_root_model(power=None) -> pm.Model:
    """A mean that grows past a free threshold ``c`` as a square root (or ``power``) of the
    distance, zero below it, through a switch (the sweep's ``threshold_sqrt``, smaller): the
    branch not taken is the root of a negative number, and JAX's derivative is NaN there."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0.0, 10.0, 40)
    y = 1.0 + np.where(x > 4.0, np.sqrt(np.clip(x - 4.0, 0, None)), 0.0)
    y = y + 0.3 * rng.normal(size=40)
    with pm.Model() as model:
        c = pm.Uniform("c", 0.0, 10.0)
        b = pm.HalfNormal("b", 3.0)
        dist = pt.as_tensor(x) - c
        grow = pt.sqrt(dist) if power is None else dist**power
        pm.Normal("y", 1.0 + pt.switch(pt.as_tensor(x) > c, b * grow, 0.0), 0.3, observed=y)
    return model


def zero_exposure_poisson_model(at_risk_throughout: bool = False) -> pm.Model:
    """Proportional hazards by the Poisson trick (the sweep's ``piecewise_exponential_hazards``,
    smaller): each subject's deaths in each of 4 intervals Poisson with its time at risk there
    times the interval's hazard, and that time 0 after the subject's last interval, so the
    rate is 0 there (``at_risk_throughout``: every subject at risk in every interval). PyMC's
    Poisson log density is 0 where the rate and the count are 0, and its branch not taken,
    ``0 * log(0)``, has an infinite derivative: JAX's gradient is NaN there."""
    rng = np.random.default_rng(3)
    last = rng.integers(0, 4, 30)
    exposure = (np.arange(4)[None, :] <= last[:, None]).astype(float)
    if at_risk_throughout:
        exposure = np.ones_like(exposure)
    deaths = np.zeros((30, 4))
    deaths[np.arange(30), last] = rng.uniform(size=30) < 0.7
    x = rng.integers(0, 2, 30).astype(float)
    with pm.Model() as model:
        hazard = pm.Gamma("hazard", 1.0, 1.0, shape=4)
        beta = pm.Normal("beta", 0.0, 1.0)
        pm.Poisson("deaths", exposure * pt.outer(pt.exp(beta * x), hazard), observed=deaths)
    return model


def dose_root_model() -> pm.Model:
    """A response growing as the square root of the dose times a free potency, written with a
    switch for the zero doses (``pt.switch(dose > 0, pt.sqrt(dose * k), 0)``): the branch not
    taken is ``sqrt(0)`` at every start, whose derivative is infinite, and JAX's gradient in
    the potency is NaN where PyTensor's is finite."""
    rng = np.random.default_rng(0)
    dose = np.repeat([0.0, 1.0, 2.0, 4.0], 10)
    y = 1.0 + np.sqrt(0.5 * dose) + 0.2 * rng.normal(size=40)
    with pm.Model() as model:
        k = pm.HalfNormal("k", 1.0)
        a = pm.Normal("a", 0.0, 2.0)
        pm.Normal("y", a + pt.switch(dose > 0, pt.sqrt(dose * k), 0.0), 0.2, observed=y)
    return model


def dose_power_model(exponent: float) -> pm.Model:
    """:func:`dose_root_model` with a power of the dose times the potency for its root
    (``pt.switch(dose > 0, (dose * k) ** exponent, 0)``): under 1 the branch not taken has an
    infinite derivative at every start, as the root's; over 1 a finite one."""
    rng = np.random.default_rng(0)
    dose = np.repeat([0.0, 1.0, 2.0, 4.0], 10)
    y = 1.0 + (0.5 * dose) ** exponent + 0.2 * rng.normal(size=40)
    with pm.Model() as model:
        k = pm.HalfNormal("k", 1.0)
        a = pm.Normal("a", 0.0, 2.0)
        pm.Normal("y", a + pt.switch(dose > 0, (dose * k) ** exponent, 0.0), 0.2, observed=y)
    return model


def interval_gamma_model() -> pm.Model:
    """Waiting times known only to whole units (``bench/zoo.py``'s ``interval_gamma``,
    smaller): each likelihood a difference of incomplete gamma functions, the first interval's
    lower bound 0. Its gradient in the rate is NaN where the shape is under 1 (the derivative
    of ``gammainc`` in ``x`` is infinite at ``x = 0``, times the bound 0) and finite where the
    posterior is (shape near 2.5); started at ``initvals={"shape": 0.8}``, PyMC's jitter alone
    keeps starts whose gradient is NaN for about three chains in five, and chains started there
    never leave them (:mod:`pymc_accel.backends.finite_starts` draws them again)."""
    t = np.random.default_rng(0).gamma(3.0, 0.5, 40)
    low = np.floor(t)
    with pm.Model() as model:
        shape = pm.Gamma("shape", 2, 1)
        rate = pm.Gamma("rate", 2, 1)
        p = pt.gammainc(shape, rate * (low + 1)) - pt.gammainc(shape, rate * low)
        pm.Potential("intervals", pt.log(pt.maximum(p, 1e-300)).sum())
    return model


def large_offset_model(n: int = 200) -> pm.Model:
    """Data at 1e5 with noise of 0.01: float32's spacing at 1e5 (0.0078) erases the noise, so
    its log density and gradient are wrong (float32 known to fail)."""
    y = 1e5 + np.random.default_rng(0).normal(0.0, 0.01, n)
    with pm.Model() as model:
        mu = pm.Normal("mu", 1e5, 1.0)
        s = pm.HalfNormal("s", 0.05)
        pm.Normal("y", mu, s, observed=y)
    return model


def float32_overflow_model() -> pm.Model:
    """Observations of 1e30: their squares overflow float32, so its initial logp is -inf."""
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("y", mu, 1.0, observed=np.array([1e30, -1e30]))
    return model


class BlackBoxLogLikeNoGradient(Op):
    """A black-box likelihood, ``-0.5 * sum((mu - 1)**2)``, as users write one: a PyTensor op
    with a Python ``perform``, no gradient and no JAX conversion; ``pm.sample`` gives its
    variables slice sampling."""

    def make_node(self, mu):
        mu = pt.as_tensor_variable(mu)
        return Apply(self, [mu], [pt.dscalar()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = np.asarray(-0.5 * np.sum((inputs[0] - 1.0) ** 2))


class BlackBoxLogLike(BlackBoxLogLikeNoGradient):
    """The same likelihood with its gradient (its ``pullback``)."""

    def pullback(self, inputs, outputs, cotangents):
        return [cotangents[0] * (1.0 - inputs[0])]


def blackbox_model(gradient: bool = True) -> pm.Model:
    """Three standard normals times the black-box likelihood (:class:`BlackBoxLogLike`, or
    without ``gradient`` :class:`BlackBoxLogLikeNoGradient`): the posterior of each is
    Normal(0.5, sqrt(0.5))."""
    op = BlackBoxLogLike() if gradient else BlackBoxLogLikeNoGradient()
    with pm.Model() as model:
        mu = pm.Normal("mu", shape=3)
        pm.Potential("loglike", op(mu))
    return model
