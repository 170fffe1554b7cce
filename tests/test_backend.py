"""The backend contract's helpers for plugin authors."""

from __future__ import annotations

import inspect

import pymc as pm
import pytest

import pymc_accel
from pymc_accel.backend import SampleRequest


def test_pm_sample_kwargs_are_pm_sample_arguments_and_carry_the_request():
    request = SampleRequest(draws=7, tune=3, chains=2, cores=1, random_seed=5, var_names=["x"],
                            quiet=True, discard_tuned_samples=False,
                            backend_kwargs={"max_treedepth": 5}, pymc_kwargs={"init": "adapt_diag"})
    kwargs = request.pm_sample_kwargs()
    assert set(kwargs) <= set(inspect.signature(pm.sample).parameters)
    assert (kwargs["draws"], kwargs["tune"], kwargs["chains"], kwargs["random_seed"]) == (7, 3, 2, 5)
    assert kwargs["var_names"] == ["x"] and kwargs["discard_tuned_samples"] is False
    # the sampler's own settings are the backend's to pass, in its driver's terms
    assert not {"nuts_sampler", "nuts", "target_accept", "max_treedepth", "init"} & set(kwargs)


def test_jax_device_names_the_backend_and_the_fix_when_the_platform_is_missing():
    assert pymc_accel.jax_device("mine", "cpu").platform == "cpu"
    with pytest.raises(pymc_accel.DeviceUnavailableError, match="mine was asked to run on gpu"):
        pymc_accel.jax_device("mine", "gpu")


def test_vectorized_trees_count_only_for_chains_side_by_side_on_a_device():
    from pymc_accel.backend import Estimate, Figure

    est = Estimate(seconds_per_gradient=Figure(1e-3), gradients_per_draw=Figure(10.0),
                   fixed_seconds=Figure(0.0), chain_parallelism=4,
                   vectorized_trees=Figure(1.5))
    assert est.sampling_seconds(100, 4) == pytest.approx(1.5)  # one round, largest trees
    assert est.sampling_seconds(100, 8) == pytest.approx(3.0)  # two rounds
    assert est.sampling_seconds(100, 1) == pytest.approx(1.0)  # one chain: nothing batched
    alone = Estimate(seconds_per_gradient=Figure(1e-3), gradients_per_draw=Figure(10.0),
                     fixed_seconds=Figure(0.0), chain_parallelism=1,
                     vectorized_trees=Figure(1.5))
    assert alone.sampling_seconds(100, 4) == pytest.approx(4.0)  # one after another
