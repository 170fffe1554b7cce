"""The on/off environment switches read alike."""

from __future__ import annotations

import pytest

from pymc_accel.switches import switched_on


@pytest.mark.parametrize("value", ["off", "0", "no", "false", "FALSE", " Off "])
def test_every_off_spelling_turns_a_switch_off(monkeypatch, value):
    """PYMC_ACCEL_HISTORY=false and PYMC_ACCEL_PROFILE_CACHE=false left them on."""
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", value)
    assert not switched_on("PYMC_ACCEL_HISTORY")


@pytest.mark.parametrize("value", ["on", "1", "yes", "true", ""])
def test_on_spellings_and_unset_keep_it_on(monkeypatch, value):
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", value)
    assert switched_on("PYMC_ACCEL_HISTORY")
    monkeypatch.delenv("PYMC_ACCEL_HISTORY")
    assert switched_on("PYMC_ACCEL_HISTORY")


def test_a_value_that_is_no_switch_value_is_warned_about_and_left_on(monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "disabled")
    with pytest.warns(UserWarning, match="PYMC_ACCEL_PROFILE_CACHE='disabled'.*off"):
        assert switched_on("PYMC_ACCEL_PROFILE_CACHE")


def test_the_history_and_profile_store_read_their_switch_so(monkeypatch):
    from pymc_accel import first_use, history, profile_store

    for name in ("PYMC_ACCEL_HISTORY", "PYMC_ACCEL_PROFILE_CACHE", "PYMC_ACCEL_FIRST_USE"):
        monkeypatch.setenv(name, "false")
    assert not history.enabled() and not profile_store.enabled() and not first_use.enabled()
