"""The posterior's conditioning at its mode: the spread of its correlation matrix's scales."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pymc_accel import conditioning
from pymc_accel.graph_building import initial_point
from pymc_accel.profile import profile_and_logp


def _conditioning(model, budget=float("inf")):
    _, graph = profile_and_logp(model)
    return conditioning.posterior_conditioning(graph, initial_point(model), budget)


def _correlated(rho: float, scales=(1.0, 100.0)):
    """A bivariate normal of correlation ``rho``, its variables on scales 1 and 100: R's
    eigenvalues are 1 + rho and 1 - rho whatever the scales (the mass matrix takes them out)."""
    sd = np.array(scales)
    cov = np.outer(sd, sd) * np.array([[1.0, rho], [rho, 1.0]])
    with pm.Model() as model:
        pm.MvNormal("x", mu=np.array([3.0, -2.0]), cov=cov)
    return model


@pytest.mark.parametrize("rho", [0.0, 0.9, 0.99])
def test_the_conditioning_is_that_of_the_posteriors_correlation_matrix(rho):
    found = _conditioning(_correlated(rho))
    cond = (1 + rho) / (1 - rho)
    assert found.condition_number == pytest.approx(cond, rel=1e-3)
    # the mean over the two directions of each one's width over the narrowest's
    assert found.value == pytest.approx((1 + np.sqrt(cond)) / 2, rel=1e-3)
    assert found.evaluations > 2  # the search's and the Hessian's (d)
    assert "spread of the posterior's correlation scales" in found.describe()


def _equicorrelated(rho: float, d: int = 20):
    with pm.Model() as model:
        pm.MvNormal("x", mu=np.zeros(d), cov=(1 - rho) * np.eye(d) + rho * np.ones((d, d)))
    return model


def test_one_narrow_direction_spreads_the_scales_where_one_wide_one_does_not():
    """One wide direction and the rest alike (a non-centred hierarchy's intercept shared by its
    group effects) leaves NUTS's trees short, one narrow one (a spline's coefficients against
    its intercept) lengthens them: on 20-d Gaussians nutpie ran 9.4 leapfrogs a draw at
    cond(R) 3,981 and 30.3 at 105 (docs/results/spread-gaussians-cpu-2026-12-02.txt). The
    spread orders them as the trees do; the condition number the other way."""
    wide = _conditioning(_equicorrelated(0.995))
    narrow = _conditioning(_equicorrelated(-0.99 / 19))
    assert wide.condition_number == pytest.approx(3981, rel=1e-2)
    assert narrow.condition_number == pytest.approx(105.2, rel=1e-2)
    assert wide.value == pytest.approx(4.10, rel=1e-2)
    assert narrow.value == pytest.approx(9.79, rel=1e-2)


def test_it_is_found_at_the_mode_not_at_the_start():
    """A logistic regression on two collinear predictors: at the initial point (all zeros) the
    Hessian is X'WX at p = 1/2; at the mode, where most predictions are sure, it is not. The
    conditioning is the mode's, as the posterior's correlation there sets the trees."""
    rng = np.random.default_rng(1)
    x1 = rng.normal(size=400)
    x2 = x1 + 0.05 * rng.normal(size=400)
    y = rng.random(400) < 1 / (1 + np.exp(-(2 * x1)))
    with pm.Model() as model:
        b = pm.Normal("b", 0, 10, shape=2)
        pm.Bernoulli("y", logit_p=b[0] * x1 + b[1] * x2, observed=y)
    found = _conditioning(model)
    # collinear predictors: their coefficients' correlation near -1
    assert found.condition_number > 100 and found.value > (1 + np.sqrt(100)) / 2


def test_no_figure_where_it_cannot_be_had():
    # a budget too small for the search
    assert _conditioning(_correlated(0.9), budget=0.0) is None
    # a log density without a mode: it grows without bound, so the search does not converge
    with pm.Model() as unbounded:
        x = pm.Normal("x", 0, 1, shape=2)
        pm.Potential("up", (x**2).sum())
    assert _conditioning(unbounded) is None
    # more dimensions than the Hessian's d gradients are allowed
    with pm.Model() as wide:
        pm.Normal("x", 0, 1, shape=conditioning.MAX_DIM + 1)
    assert _conditioning(wide) is None
