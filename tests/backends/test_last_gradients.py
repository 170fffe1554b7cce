from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pymc as pm
import pytest

import pymc_accel
from pymc_accel.backends import last_gradients, run_logp
from pymc_accel.backends.last_gradients import (
    LastGradients,
    check_last_gradients,
    recording_last_states,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import sweep_user_models  # noqa: E402

# a correlated Gaussian's potential energy, in two value variables (a scalar and a 2-vector)
_PRECISION = np.array([[2.0, 0.6, 0.0], [0.6, 1.5, -0.4], [0.0, -0.4, 3.0]])
SHAPES = [(), (2,)]


def _potential(arrays):
    x = np.concatenate([np.ravel(a) for a in arrays]).astype("float64")
    return 0.5 * x @ _PRECISION @ x + 0.25 * np.sum(x ** 4)


def _gradient(x):
    return _PRECISION @ x + x ** 3


def _state(z, grad=_gradient, inverse_mass=None):
    z = np.asarray(z, dtype="float64")
    return {"z": z, "z_grad": np.stack([grad(row) for row in z]),
            "potential_energy": np.array([_potential([row]) for row in z]),
            "inverse_mass_matrix": inverse_mass, "chains": len(z)}


STARTS = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.7], [-0.4, 0.9, 2.0]])


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_a_gradient_that_is_the_potentials_derivative_agrees(precision):
    check = check_last_gradients(_state(STARTS), _potential, SHAPES, precision)
    assert check.agrees and check.chains == [0, 1, 2] and not check.skipped
    assert max(check.grad_rel_errors) < 1e-6


def test_the_posterior_scales_set_the_steps_and_a_dense_matrix_gives_its_diagonal():
    scales = np.array([1e-4, 1e2, 1.0])  # steps far off any one variable's scale
    dense = np.stack([np.diag(scales)] * 3)
    for inverse_mass in (np.stack([scales] * 3), dense):
        check = check_last_gradients(_state(STARTS, inverse_mass=inverse_mass), _potential,
                                     SHAPES)
        assert check.agrees, check


@pytest.mark.parametrize("wrong", [
    lambda x: 2.0 * _gradient(x),  # scaled
    lambda x: _gradient(x) + np.array([0.0, 0.0, 5.0]),  # one component off
    lambda x: _gradient(x)[::-1],  # the components of another variable
])
def test_a_gradient_that_is_not_the_derivative_disagrees_and_says_where(wrong):
    check = check_last_gradients(_state(STARTS, grad=wrong), _potential, SHAPES)
    assert not check.agrees
    assert min(check.grad_rel_errors) > check.grad_rtol
    assert "chains 0, 1, 2 of 3 compared" in check.describe()


def test_one_chain_whose_gradient_is_off_is_enough():
    def wrong_at_the_second(x):
        return _gradient(x) * (3.0 if np.allclose(x, STARTS[1]) else 1.0)

    check = check_last_gradients(_state(STARTS, grad=wrong_at_the_second), _potential, SHAPES)
    assert not check.agrees
    assert "chain 1 of 3 compared" in check.describe()


def test_a_log_density_rounded_coarser_than_its_precision_is_not_taken_for_a_wrong_gradient():
    # float32's Cholesky factor of an ill-conditioned kernel: a latent GP's float32 log density
    # was rounded far above eps times its value, and its differences were off by 140 times the
    # gradient, which was within 0.07 of float64's
    def rounded(arrays):  # a rounding that jumps with the position, 0.05 at most
        x = np.concatenate([np.ravel(a) for a in arrays]).astype("float64")
        return _potential(arrays) + 0.05 * np.sin(1e7 * x.sum())

    check = check_last_gradients(_state(STARTS), rounded, SHAPES, "float32")
    assert check.agrees and check.chains == [0, 1, 2]


def test_steps_a_float32_position_cannot_place_are_not_compared():
    # a float32 position near 1e6 moves in steps of 0.06: no step of a posterior scale of
    # 0.002 can be taken there, and the differences would all be zero
    far = STARTS + np.array([1e6, 0.0, 0.0])

    def offset(arrays):
        x = np.concatenate([np.ravel(a) for a in arrays]).astype("float64")
        return _potential([x - np.array([1e6, 0.0, 0.0])])

    state = _state(STARTS, inverse_mass=np.full((3, 3), 0.002 ** 2))
    state["z"] = np.asarray(far, dtype="float32").astype("float64")
    check = check_last_gradients(state, offset, SHAPES, "float32")
    assert check.agrees and not check.chains and check.skipped == [0, 1, 2]
    # in float64 the same steps are placed, and the gradient compared
    state["z"] = far
    assert check_last_gradients(state, offset, SHAPES, "float64").chains == [0, 1, 2]


def test_chains_whose_figures_are_not_finite_are_skipped_not_failed():
    state = _state(STARTS)
    state["z_grad"][0, 1] = np.nan
    state["potential_energy"][2] = np.inf
    check = check_last_gradients(state, _potential, SHAPES)
    assert check.agrees and check.chains == [1] and check.skipped == [0, 2]

    def raises(arrays):
        raise ValueError("a parameter check")

    check = check_last_gradients(_state(STARTS), raises, SHAPES)
    assert check.agrees and not check.chains and check.skipped == [0, 1, 2]


def test_a_single_chains_state_and_a_position_of_another_size():
    one = _state(STARTS[:1])
    one = {**one, "z": one["z"][0], "z_grad": one["z_grad"][0],
           "potential_energy": one["potential_energy"][0], "chains": 1}
    assert check_last_gradients(one, _potential, SHAPES).chains == [0]
    assert check_last_gradients(_state(STARTS), _potential, [(), (3,)]) is None


def test_the_check_travels_in_the_results_attributes():
    check = check_last_gradients(_state(STARTS, grad=lambda x: 2 * _gradient(x)), _potential,
                                 SHAPES)

    class Result:
        attrs = {last_gradients.ATTRS_KEY: check.to_json()}

    assert LastGradients.from_idata(Result()) == check
    assert LastGradients.from_idata(type("Empty", (), {"attrs": {}})()) is None


def test_the_recording_block_keeps_numpyros_last_state_and_passes_other_calls_through():
    import pymc.sampling.jax as pmjax

    original = pmjax._numpyro_stats_to_dict
    with pm.Model() as model:
        pm.Normal("x", 0, 1, shape=2)
    with recording_last_states() as states:
        assert pmjax._numpyro_stats_to_dict is not original
        pm.sample(nuts_sampler="numpyro", draws=20, tune=20, chains=2, model=model,
                  progressbar=False, random_seed=1, compute_convergence_checks=False)
    assert pmjax._numpyro_stats_to_dict is original
    (state,) = states
    assert state["chains"] == 2 and state["potential_energy"].shape == (2,)
    assert state["inverse_mass_matrix"] is not None


def test_the_blackjax_loop_keeps_its_last_state_and_draws_what_pymcs_draws():
    jax = pytest.importorskip("jax")
    pytest.importorskip("blackjax")
    import jax.numpy as jnp
    import pymc.sampling.jax as pmjax

    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.last_gradients import (
        BLACKJAX_LAST_STATE,
        _keeping_blackjax_last_state,
    )

    def logp(position):  # one flat leaf, as pymc-accel's runs hand BlackJAX the position
        x = position[0]
        return -0.5 * (x[0] ** 2 + ((x[1] - x[0]) / 0.5) ** 2) - 0.1 * x[1] ** 4

    with jax_precision("float64"):
        args = (jax.random.PRNGKey(3), [jnp.array([0.1, -0.2])], logp, 40, 40, 0.8)
        pymcs = pmjax._blackjax_inference_loop
        samples, stats = pymcs(*args)
        kept = _keeping_blackjax_last_state(pymcs)
        _, outside = kept(*args)  # no recording block: PyMC's own loop
        with recording_last_states():
            kept_samples, kept_stats = kept(*args)
        last = kept_stats.pop(BLACKJAX_LAST_STATE)
        np.testing.assert_array_equal(np.asarray(kept_samples[0]), np.asarray(samples[0]))
        assert set(kept_stats) == set(stats) and BLACKJAX_LAST_STATE not in outside
        for name in stats:
            np.testing.assert_array_equal(np.asarray(kept_stats[name]), np.asarray(stats[name]))
        np.testing.assert_array_equal(np.asarray(last["position"][0]), np.asarray(samples[0][-1]))
        np.testing.assert_allclose(np.asarray(last["logdensity_grad"][0]),
                                   np.asarray(jax.grad(logp)([samples[0][-1]])[0]), rtol=1e-12)
        assert np.asarray(last["inverse_mass_matrix"]).shape == (2,)


def test_a_blackjax_the_copy_was_not_written_for_runs_pymcs_own_loop(monkeypatch):
    blackjax = pytest.importorskip("blackjax")
    import jax

    from pymc_accel.backends.last_gradients import (
        BLACKJAX_LAST_STATE,
        _keeping_blackjax_last_state,
    )

    calls = []

    def pymcs(*args, **kwargs):
        calls.append(args)
        return "draws", {"lp": 0}

    monkeypatch.delattr(blackjax.progress_bar, "gen_scan_fn")
    with recording_last_states():
        out = _keeping_blackjax_last_state(pymcs)(jax.random.PRNGKey(0), [np.zeros(2)],
                                                  lambda p: 0.0, 5, 5, 0.8)
    assert out == ("draws", {"lp": 0}) and len(calls) == 1
    assert BLACKJAX_LAST_STATE not in out[1]


def test_a_blackjax_runs_last_state_is_taken_out_of_its_statistics_as_numpyros_is_kept():
    from pymc_accel.backends.last_gradients import BLACKJAX_LAST_STATE, take_blackjax_last_state

    z = STARTS[:2]
    stats = {"lp": np.zeros((2, 5)), BLACKJAX_LAST_STATE: {
        "position": [z], "logdensity": -np.array([_potential([row]) for row in z]),
        "logdensity_grad": [-np.stack([_gradient(row) for row in z])],
        "inverse_mass_matrix": np.ones((2, 3))}}
    assert take_blackjax_last_state(dict(stats), 2).keys() == {"lp"}  # no block: dropped
    with recording_last_states() as states:
        left = take_blackjax_last_state(stats, 2)
    assert left.keys() == {"lp"} and BLACKJAX_LAST_STATE in stats  # the caller's dict as it was
    (state,) = states
    np.testing.assert_array_equal(state["z_grad"], np.stack([_gradient(row) for row in z]))
    check = check_last_gradients(state, _potential, SHAPES)
    assert check.agrees and check.chains == [0, 1]


def _vfe_gp():
    """The user sweep's VFE sparse GP (Matern 3/2, inducing points on data inputs): without
    :mod:`pymc_accel.rewrites.coincident_distances` JAX's compiled gradient of it is wrong, and
    pymc-accel's NumPyro run of it went to the tree cap and found a noise scale of 1.5 where
    the posterior's is 0.29 (docs/benchmarks.md, "GPs users write")."""
    return sweep_user_models.gp_vfe_matern32(pm)


RUN = dict(draws=30, tune=30, chains=2, random_seed=1, progressbar=False, quiet=True,
           compute_convergence_checks=False)


def test_a_numpyro_run_with_the_gradient_right_stores_an_agreeing_check():
    idata = pymc_accel.sample(model=_vfe_gp(), nuts_sampler="numpyro", **RUN)
    check = LastGradients.from_idata(idata)
    assert check.agrees and check.chains == [0, 1]
    assert max(check.grad_rel_errors) < 1e-6


def test_a_named_numpyro_run_whose_gradient_is_wrong_warns_with_the_fix(monkeypatch):
    # the run as it was before the rewrite held the GP's coinciding distances
    monkeypatch.setattr(run_logp, "ZERO_COINCIDENT_DISTANCES", False)
    with pytest.warns(pymc_accel.GradientMismatchWarning,
                      match="not the derivative of its log density.*nuts_sampler='numba'"):
        idata = pymc_accel.sample(model=_vfe_gp(), nuts_sampler="numpyro",
                                  **{**RUN, "max_treedepth": 5})
    assert not LastGradients.from_idata(idata).agrees
    report = pymc_accel.SelectionReport.from_idata(idata)
    assert report.chosen.startswith("numpyro")  # the user's choice, warned of
    assert any("its draws may not be the posterior's" in n for n in report.notes)
