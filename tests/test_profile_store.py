"""Profiles kept on disk: a model profiled in an earlier process is not profiled again."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pymc_accel import profile_store, selection
from pymc_accel.models import eight_schools
from pymc_accel.profile import ModelProfile, profile_model, structure_key
from tests.models import dense_model, scan_model


@pytest.fixture
def store_on(monkeypatch, tmp_path):
    """The store switched on, in a directory of this test's own, with nothing kept in memory
    (as in a new process)."""
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "on")
    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    return tmp_path


@pytest.mark.parametrize("build", [lambda: scan_model(25), lambda: dense_model(30)],
                         ids=["scan", "dense"])
def test_a_profile_survives_its_plain_data_form(build):
    p = profile_model(build())
    again = ModelProfile.from_dict(json.loads(json.dumps(p.to_dict())))
    assert again == p  # scans, dense operands and shapes come back as they were
    assert again.summary() == p.summary()


def test_a_model_profiled_in_an_earlier_process_is_read_from_disk(store_on, monkeypatch):
    first = selection.cached_profile(scan_model(25))
    assert list((store_on / "profiles").glob("*.json"))
    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})  # a new process: nothing in memory
    calls = []
    monkeypatch.setattr(selection, "profile_and_logp", lambda m: calls.append(m))
    again = selection.cached_profile(scan_model(25))
    assert not calls
    assert again.census == first.census and again.free_vars == first.free_vars
    assert "profiled in an earlier process" in again.note
    assert again.profile_seconds < first.profile_seconds


def test_another_structure_or_the_store_off_profiles_again(store_on, monkeypatch):
    selection.cached_profile(scan_model(25))
    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    calls = []
    real = selection.profile_and_logp
    monkeypatch.setattr(selection, "profile_and_logp", lambda m: calls.append(m) or real(m))
    selection.cached_profile(scan_model(26))  # another length: another key
    assert len(calls) == 1
    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "off")
    selection.cached_profile(scan_model(25))
    assert len(calls) == 2


def test_an_unreadable_file_is_profiled_again(store_on, monkeypatch):
    model = eight_schools()
    selection.cached_profile(model)
    for path in (store_on / "profiles").glob("*.json"):
        path.write_text("{not json")
    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    again = selection.cached_profile(eight_schools())
    assert "reused" not in again.note and again.n_free == 10
    assert profile_store.load(structure_key(eight_schools())) is not None  # written anew


def test_the_key_is_the_same_in_another_process(store_on):
    """What a new Python process computes for the same model finds the file this one wrote."""
    selection.cached_profile(eight_schools())
    code = ("from pymc_accel import profile_store; from pymc_accel.models import eight_schools;"
            "from pymc_accel.profile import structure_key;"
            "print(profile_store.load(structure_key(eight_schools())) is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip().endswith("True"), out.stderr[-2000:]
