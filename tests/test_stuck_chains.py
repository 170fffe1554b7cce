"""Chains that never left their start, told from chains that moved."""

from __future__ import annotations

import arviz as az
import numpy as np

from pymc_accel.stuck_chains import MIN_DRAWS, stuck_chains


def _result(lp=None, posterior=None):
    groups = {}
    if lp is not None:
        groups["sample_stats"] = {"lp": np.asarray(lp)}
    if posterior is not None:
        groups["posterior"] = posterior
    return az.from_dict(groups)


def test_a_chain_whose_log_density_never_changes_is_stuck():
    rng = np.random.default_rng(0)
    lp = rng.normal(size=(3, 50))
    lp[1] = -46393.75  # NumPyro's float64 chain on the censored regression: its start, repeated
    assert stuck_chains(_result(lp=lp)) == [1]


def test_chains_that_move_or_repeat_some_draws_are_not_stuck():
    rng = np.random.default_rng(1)
    lp = rng.normal(size=(2, 50))
    lp[:, 10:40] = lp[:, 9:10]  # thirty rejected transitions in a row, then moving again
    assert stuck_chains(_result(lp=lp)) == []


def test_a_flat_log_density_along_a_chain_that_moves_is_not_stuck():
    """Flat priors and no likelihood: lp is 0 at every draw, and the draws move."""
    rng = np.random.default_rng(3)
    lp = np.zeros((2, 40))
    assert stuck_chains(_result(lp=lp, posterior={"x": rng.normal(size=(2, 40))})) == []
    assert stuck_chains(_result(lp=lp, posterior={"x": np.ones((2, 40))})) == [0, 1]


def test_every_posterior_variable_must_stay_put():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2, 30))
    b = rng.normal(size=(2, 30, 3))
    a[0], b[0] = a[0, 0], b[0, 0]  # chain 0 repeats its first draw in both variables
    a[1] = a[1, 0]  # chain 1 only in one of them: it moved
    assert stuck_chains(_result(posterior={"a": a, "b": b})) == [0]


def test_a_discrete_variables_integer_draws_are_read_too():
    rng = np.random.default_rng(4)
    k = rng.integers(0, 5, size=(2, 30))
    k[1] = 3
    x = rng.normal(size=(2, 30))
    x[1] = x[1, 0]
    assert stuck_chains(_result(posterior={"k": k, "x": x})) == [1]


def test_a_start_whose_log_density_is_nan_repeated_is_stuck():
    lp = np.full((2, 20), np.nan)
    lp[1] = np.arange(20.0)
    assert stuck_chains(_result(lp=lp)) == [0]


def test_too_few_draws_or_no_draws_say_nothing():
    assert stuck_chains(_result(lp=np.zeros((2, MIN_DRAWS - 1)))) == []
    assert stuck_chains(_result(lp=np.zeros((2, MIN_DRAWS)))) == [0, 1]
    assert stuck_chains(az.from_dict({"observed_data": {"y": np.zeros(3)}})) == []


def _stats_result(posterior, **stats):
    return az.from_dict({"posterior": posterior,
                         "sample_stats": {k: np.asarray(v) for k, v in stats.items()}})


def test_a_chain_at_the_maximum_depth_that_barely_moves_is_frozen():
    """NumPyro's chains on a latent Student-t process: every draw at 1,023 leapfrogs, each
    chain in a corner of the posterior, moving by a hair."""
    from pymc_accel.stuck_chains import frozen_chains

    rng = np.random.default_rng(0)
    x = np.stack([rng.normal(0.0, 1.0, 200), 3.0 + rng.normal(0.0, 1e-5, 200)])
    assert frozen_chains(_stats_result({"x": x}, tree_depth=np.full((2, 200), 10))) == [1]
    # PyMC's and nutpie's statistic, where it is recorded
    assert frozen_chains(_stats_result(
        {"x": x}, reached_max_treedepth=np.ones((2, 200), bool))) == [1]


def test_slow_chains_and_chains_below_the_maximum_depth_are_not_frozen():
    from pymc_accel.stuck_chains import frozen_chains

    rng = np.random.default_rng(1)
    tight = np.stack([rng.normal(0.0, 1.0, 200), 3.0 + rng.normal(0.0, 1e-5, 200)])
    slow = np.stack([rng.normal(0.0, 1.0, 200), 1.0 + rng.normal(0.0, 0.3, 200)])
    depth = np.full((2, 200), 10)
    assert frozen_chains(_stats_result({"x": slow}, tree_depth=depth)) == []  # a slow chain
    shallow = depth.copy()
    shallow[1, ::2] = 4  # at the maximum on half its draws: its step size did not collapse
    assert frozen_chains(_stats_result({"x": tight}, tree_depth=shallow)) == []
    assert frozen_chains(_stats_result({"x": tight[:1]}, tree_depth=depth[:1])) == []  # alone
    assert frozen_chains(_result(posterior={"x": tight})) == []  # no tree depths recorded
    assert stuck_chains(_stats_result({"x": tight}, tree_depth=depth)) == []  # it did move


def test_a_run_whose_every_tree_has_one_shallow_depth_is_not_at_a_maximum():
    from pymc_accel.stuck_chains import frozen_chains

    rng = np.random.default_rng(2)
    tight = np.stack([rng.normal(0.0, 1.0, 200), 3.0 + rng.normal(0.0, 1e-5, 200)])
    assert frozen_chains(_stats_result({"x": tight}, tree_depth=np.full((2, 200), 3))) == []
