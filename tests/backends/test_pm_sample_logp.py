"""The selection's log density handed to ``pm.sample`` in a numba run."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from pymc.model.core import Model
from pytensor.graph.basic import equal_computations

import pymc_accel
from pymc_accel.backends.pm_sample_logp import handed_over, pm_sample_uses
from pymc_accel.profile import log_density_graph


def _regression() -> pm.Model:
    """NumPy data, no dims: nothing to freeze, so the profile builds on the model itself."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 3))
    y = x @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=200)
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=3)
        s = pm.HalfNormal("s", 1.0)
        pm.Normal("y", x @ b, s, observed=y)
    return model


def _with_data() -> pm.Model:
    """A data container: the profile builds on a frozen copy, with value variables of its own."""
    with pm.Model(coords={"i": range(20)}) as model:
        x = pm.Data("x", np.linspace(0, 1, 20), dims="i")
        b = pm.Normal("b", 0, 1)
        pm.Normal("y", b * x, 1.0, observed=np.zeros(20), dims="i")
    return model


def _default_builds(monkeypatch) -> list:
    """Calls of ``Model.logp`` with its defaults (every variable, Jacobian, summed), counted."""
    calls, real = [], Model.logp

    def counting(self, vars=None, jacobian=True, sum=True):  # noqa: A002
        if vars is None and jacobian and sum:
            calls.append(self)
        return real(self, vars, jacobian, sum)

    monkeypatch.setattr(Model, "logp", counting)
    return calls


def test_only_the_models_own_log_density_is_handed_over():
    model = _regression()
    graph, _ = log_density_graph(model)
    assert handed_over(model, graph)
    assert not handed_over(_regression(), graph)  # another model of the same structure
    assert not handed_over(model, None)
    frozen = _with_data()
    assert not handed_over(frozen, log_density_graph(frozen)[0])  # a frozen copy's


def test_inside_the_block_model_logp_returns_a_copy_and_other_calls_build_their_own():
    model = _regression()
    graph, _ = log_density_graph(model)
    with pm_sample_uses(model, graph) as used:
        assert used
        copy = model.logp()
        assert copy is not graph.logp and equal_computations([copy], [graph.logp])
        assert model.logp(jacobian=True, sum=True) is not copy  # a copy each call
        terms = model.logp(sum=False)  # any other call: PyMC's own
        assert isinstance(terms, list) and len(terms) == 3  # b, s and y
    assert "logp" not in vars(model)  # the method again after the block
    with pm_sample_uses(_with_data(), log_density_graph(_with_data())[0]) as used:
        assert not used


def test_rewriting_the_copy_leaves_the_profiles_graph_as_it_was():
    """PyMC rewrites the graph it is given in place before differentiating it."""
    from pymc.pytensorf import rewrite_pregrad

    model = _regression()
    graph, _ = log_density_graph(model)
    before = graph.logp.owner.inputs[:]
    with pm_sample_uses(model, graph):
        rewrite_pregrad(model.logp())
    assert graph.logp.owner.inputs == before
    fresh, _ = log_density_graph(model)
    assert equal_computations([graph.logp], [fresh.logp])


@pytest.mark.parametrize("driver", ["pymc", "nutpie"])
def test_a_numba_run_builds_no_log_density_and_draws_what_pm_sample_draws(monkeypatch,
                                                                           driver):
    """pm.sample built the model's log density twice (assign_step_methods, the sampler's
    function): 47 ms for the two on censored_6, against a 55 ms first selection
    (docs/results/regret-cpu-1000-2026-11-30-handed-numba.md). The selection's profile builds
    it once, and the run's pm.sample takes copies of it; the draws are pm.sample's own, bit for
    bit."""
    from pymc_accel.selection import forget_profiles

    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "off")
    forget_profiles()  # an earlier test's model of this structure: its profile is kept
    kwargs = dict(draws=30, tune=30, chains=2, random_seed=3, progressbar=False,
                  compute_convergence_checks=False)
    expected = pm.sample(model=_regression(), nuts_sampler=driver, backend="numba", **kwargs)
    calls = _default_builds(monkeypatch)
    model = _regression()
    got = pymc_accel.sample(model=model, nuts_sampler="numba", driver=driver,
                            precision="float64", quiet=True, **kwargs)
    assert calls == [model]  # the profile's build, and none in the run
    for name in ("b", "s"):
        np.testing.assert_array_equal(got.posterior[name].values,
                                      expected.posterior[name].values)
