"""The option names each of PyMC's samplers takes, read from the samplers themselves."""

from __future__ import annotations

import pytest

from pymc_accel.sampler_options import sampler_options


@pytest.mark.parametrize("sampler, takes, sets_itself", [
    # PyMC's NUTS: pm.NUTS's and BaseHMC's arguments; pm.sample gives the potential and model
    ("pymc", {"max_treedepth", "early_max_treedepth", "step_scale", "target_accept"},
     {"potential", "model", "vars"}),
    # nutpie: nutpie.sample's arguments and the settings its **kwargs update
    ("nutpie", {"maxdepth", "adaptation", "low_rank_modified_mass_matrix", "max_treedepth",
                "store_gradient", "target_accept"},
     {"compiled_model", "seed", "draws", "dense_mass", "store_unconstrained", "num_tune"}),
    # NumPyro's NUTS through PyMC's JAX path, which passes the log density and acceptance
    ("numpyro", {"dense_mass", "max_tree_depth", "max_treedepth", "chain_method",
                 "target_accept"},
     {"potential_fn", "target_accept_prob", "model", "adaptation"}),
    # BlackJAX: window adaptation's arguments and the NUTS step's
    ("blackjax", {"is_mass_matrix_diagonal", "max_num_doublings", "max_treedepth", "algorithm"},
     {"logdensity_fn", "target_acceptance_rate", "dense_mass"}),
])
def test_each_sampler_takes_its_own_options_and_not_what_pymc_sets(sampler, takes, sets_itself):
    names = sampler_options(sampler)
    assert takes <= names, takes - names
    assert not sets_itself & names


def test_a_sampler_pymc_does_not_drive_has_no_list():
    assert sampler_options("stan") is None


def test_the_options_every_sampler_takes_are_answered_without_reading_the_sampler():
    """Reading NumPyro's options imports JAX: a selection given only max_treedepth took 1.3 s
    where it takes 0.1 s without options."""
    from pymc_accel.sampler_options import SamplerOptions

    def read():
        raise AssertionError("read")

    never_read = SamplerOptions(read)
    assert "max_treedepth" in never_read and "target_accept" in never_read
    # a sampler whose options cannot be read takes any name: its sampler reports the unknown
    assert "dense_mass" in never_read
    listed = SamplerOptions(lambda: frozenset({"max_treedepth", "dense_mass"}))
    assert "dense_mass" in listed and "adaptation" not in listed
    assert set(listed) == {"max_treedepth", "dense_mass"}
