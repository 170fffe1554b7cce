"""JAX's precision around a run: set for the run, given back after it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from pymc_accel.backends.jax_model import jax_precision


@pytest.fixture
def process_wide_x64():
    """Set JAX's process-wide 64-bit flag for a test, and put it back after."""
    before = jax.config.jax_enable_x64

    def set_to(value: bool) -> None:
        jax.config.update("jax_enable_x64", value)

    yield set_to
    jax.config.update("jax_enable_x64", before)


@pytest.mark.parametrize("before", [True, False])
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_a_run_gives_back_the_process_wide_64_bit_setting(process_wide_x64, before, precision):
    """The setting read to give back was the thread-local one the context had just entered, so
    a float32 run left 64-bit types off for the rest of the process."""
    process_wide_x64(before)
    with jax_precision(precision):
        assert jnp.zeros(1).dtype == jnp.dtype(precision)
    assert jax.config.jax_enable_x64 is before
    assert jnp.zeros(1).dtype == jnp.dtype("float64" if before else "float32")


def test_inside_a_thread_local_setting_the_process_wide_one_is_given_back(process_wide_x64):
    """Not the caller's thread-local setting: that one is the caller's to give back."""
    process_wide_x64(False)
    with jax.enable_x64(True):  # a caller's own thread-local setting
        with jax_precision("float64"):
            assert jnp.zeros(1).dtype == jnp.float64
        assert jnp.zeros(1).dtype == jnp.float64  # the caller's, still in force
    assert jax.config.jax_enable_x64 is False


def test_a_thread_only_precision_leaves_the_process_wide_setting_alone(process_wide_x64):
    process_wide_x64(True)
    with jax_precision("float32", process_wide=False):
        assert jnp.zeros(1).dtype == jnp.float32
    assert jax.config.jax_enable_x64 is True
