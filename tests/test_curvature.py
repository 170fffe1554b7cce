"""The scale spread: each variable's curvature at the initial point from one gradient apiece."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pymc_accel import curvature
from pymc_accel.graph_building import initial_point
from pymc_accel.profile import profile_and_logp


def _spread(model):
    _, graph = profile_and_logp(model)
    return curvature.scale_spread(graph, initial_point(model)), graph


def test_the_spread_is_the_ratio_of_the_widest_scale_to_the_narrowest():
    with pm.Model() as model:
        pm.Normal("wide", 0, 1, shape=5)
        pm.Normal("narrow", 0, 0.01, shape=3)
        pm.Normal("middle", 0, 0.1)
    spread, _ = _spread(model)
    # -log p is quadratic: curvatures 1, 1e4 and 100, exactly as finite differences see them
    assert spread.curvatures["wide"] == pytest.approx(1.0, rel=1e-6)
    assert spread.curvatures["narrow"] == pytest.approx(1e4, rel=1e-6)
    assert spread.curvatures["middle"] == pytest.approx(100.0, rel=1e-6)
    assert spread.value == pytest.approx(100.0, rel=1e-6)
    assert "narrow 1e+04" in spread.describe() and "wide 1" in spread.describe()


def test_variables_alike_have_a_spread_of_one_and_so_does_a_single_variable():
    with pm.Model() as alike:
        pm.Normal("a", 0, 2, shape=4)
        pm.Normal("b", 0, 2)
    with pm.Model() as single:
        pm.Normal("x", 0, 0.001, shape=10)
    assert _spread(alike)[0].value == pytest.approx(1.0, rel=1e-6)
    assert _spread(single)[0].value == pytest.approx(1.0)


def test_off_diagonal_terms_within_a_variable_leave_its_median_curvature_near_the_diagonal():
    """A correlated regression: its coefficients' curvatures are X'X's diagonal, about rows
    each; the probe's random signs add the off-diagonal terms, which the median averages out."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 30))
    with pm.Model() as model:
        b = pm.Normal("b", 0, 10, shape=30)
        pm.Normal("y", X @ b, 1.0, observed=rng.normal(size=400))
        pm.Normal("c", 0, 1)
    spread, _ = _spread(model)
    diagonal = np.median((X**2).sum(axis=0) + 0.01)
    assert spread.curvatures["b"] == pytest.approx(diagonal, rel=0.25)
    assert spread.value == pytest.approx(np.sqrt(diagonal), rel=0.15)


def test_more_variables_than_probes_share_them():
    with pm.Model() as model:
        for i in range(curvature.MAX_PROBES + 4):
            pm.Normal(f"v{i}", 0, 10.0 ** -(i % 3))
    spread, _ = _spread(model)
    assert len(spread.curvatures) == curvature.MAX_PROBES + 4
    assert spread.value == pytest.approx(100.0, rel=1e-3)


def test_the_evaluator_is_kept_for_the_float32_check(monkeypatch):
    from pymc_accel import graph_building
    from pymc_accel.models import eight_schools
    from pymc_accel.precision import check_float32

    model = eight_schools()
    spread, graph = _spread(model)
    assert graph.evaluate is not None and spread.value > 1
    built = []
    real = graph_building.Evaluator.__init__

    def counted(self, *args, **kwargs):
        built.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(graph_building.Evaluator, "__init__", counted)
    assert check_float32(model, logp_graph=graph).safe
    with_kept = len(built)
    built.clear()
    assert check_float32(model, logp_graph=profile_and_logp(model)[1]).safe
    assert with_kept == len(built) - 1  # float64's function was not compiled again


def test_a_model_it_cannot_evaluate_has_no_spread(monkeypatch):
    with pm.Model() as model:
        pm.Normal("x", 0, 1)
        pm.Normal("y", 0, 2)
    _, graph = profile_and_logp(model)
    monkeypatch.setattr(curvature, "MAX_DATA_BYTES", -1)  # as a model with too much data
    assert curvature.scale_spread(graph, initial_point(model)) is None
    monkeypatch.undo()
    assert curvature.scale_spread(graph, {"x": np.array(np.inf), "y": np.array(0.0)}) is None
    assert curvature.scale_spread(graph, {"x": np.array(0.0)}) is None  # a variable missing
