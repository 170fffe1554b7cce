"""float32 checks kept between selections of a model with the same structure and data."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pymc_accel import check_store, selection
from pymc_accel.models import conjugate_normal
from pymc_accel.precision import POINTS_CHECKED, check_float32
from pymc_accel.profile import data_digest
from pymc_accel.selection import select
from tests.models import large_offset_model
from tests.test_precision import CPU_ONLY, _registry, _TwoPrecisions


@pytest.fixture
def counted_checks(monkeypatch):
    """The float32 checks the selection runs (not those it reads)."""
    calls = []

    def counted(model, **kwargs):
        calls.append(model)
        return check_float32(model, **kwargs)

    monkeypatch.setattr(selection, "check_float32", counted)
    return calls


def _select(model, **kwargs):
    return select(model, registry=_registry(_TwoPrecisions()), devices=CPU_ONLY, **kwargs)


def test_the_data_digest_follows_the_values_not_the_model_object():
    assert data_digest(conjugate_normal().model) == data_digest(conjugate_normal().model)
    assert data_digest(conjugate_normal().model) != data_digest(conjugate_normal(seed=1).model)
    with pm.Model() as a:
        x = pm.Data("x", np.arange(100.0))
        pm.Normal("y", pm.Normal("b", 0, 1) * x, 1.0, observed=np.zeros(100))
    before = data_digest(a)
    pm.set_data({"x": np.arange(100.0) + 1}, model=a)  # same shape, new values
    assert data_digest(a) != before


def test_a_model_built_again_reads_its_check_and_is_not_charged_for_it(counted_checks):
    first = _select(conjugate_normal().model)
    assert first.candidate.precision == "float32" and len(counted_checks) == 1
    assert not first.precision_check["kept"]
    again = _select(conjugate_normal().model)  # a notebook cell run again: a new model object
    assert again.candidate.precision == "float32" and len(counted_checks) == 1
    assert again.precision_check["kept"] and "kept: same model structure and data" in str(again)
    f32 = next(r for r in again.rows if r.precision == "float32")
    assert "float32 check's" not in f32.reason  # reading it costs nothing
    # new data of the same shapes: checked again
    _select(conjugate_normal(seed=1).model)
    assert len(counted_checks) == 2
    # other initial values: checked again
    _select(conjugate_normal().model, initvals={"mu": 0.5})
    assert len(counted_checks) == 3


def test_a_failed_check_is_kept_and_refuses_float32_without_running(counted_checks):
    first = _select(large_offset_model())
    assert first.candidate.precision == "float64" and len(counted_checks) == 1
    again = _select(large_offset_model())
    assert again.candidate.precision == "float64" and len(counted_checks) == 1
    refused = next(r for r in again.rows if r.precision == "float32")
    assert refused.status == "refused" and "float32 unsafe" in refused.reason
    assert "kept: same model structure and data" in refused.reason


def test_a_check_cut_short_is_not_kept_when_it_passed():
    model = conjugate_normal().model
    key = check_store.check_key(model)
    short = check_float32(model, budget_seconds=0.0)  # the initial point only
    assert short.safe and short.points == 1
    check_store.save(key, short)
    assert check_store.load(key) is None
    check_store.save(key, check_float32(model))
    assert check_store.load(key).points == POINTS_CHECKED


def test_a_new_process_reads_the_check_from_disk(tmp_path, monkeypatch, counted_checks):
    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "on")
    _select(conjugate_normal().model)
    assert len(list((tmp_path / "checks").glob("*.json"))) == 1
    check_store.forget()  # what a new process starts with
    again = _select(conjugate_normal().model)
    assert len(counted_checks) == 1 and again.precision_check["kept"]
    # with the store off, nothing is read from disk
    check_store.forget()
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "off")
    _select(conjugate_normal().model)
    assert len(counted_checks) == 2


def test_an_explicit_float32_is_checked_once_and_still_warned_about(counted_checks):
    from pymc_accel.errors import PrecisionWarning

    for _ in range(2):
        with pytest.warns(PrecisionWarning, match="float32 unsafe"):
            _select(large_offset_model(), precision="float32")
    assert len(counted_checks) == 1


def test_a_passed_start_check_is_kept_and_a_failed_one_raises_every_time(monkeypatch, tmp_path):
    """The start check before a plugin's sampler runs once per model structure, data and
    initial values, in the process and (after :func:`check_store.forget`) from the disk; a
    model with other data is checked again, and a non-finite start raises each time."""
    from pymc_accel import integration
    from pymc_accel.errors import NonFiniteInitialPointError
    from tests.models import invalid_start_model

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "on")
    calls = []
    real = integration.check_initial_point

    def counted(model, initvals=None):
        calls.append(model)
        return real(model, initvals)

    monkeypatch.setattr(integration, "check_initial_point", counted)
    for _ in range(2):
        integration._check_start(conjugate_normal().model, None, kept=True)
    assert len(calls) == 1
    check_store.forget()  # a new process: read from the disk
    integration._check_start(conjugate_normal().model, None, kept=True)
    assert len(calls) == 1
    integration._check_start(conjugate_normal(seed=1).model, None, kept=True)  # other data
    integration._check_start(conjugate_normal().model, {"mu": 0.5}, kept=True)  # another start
    assert len(calls) == 3
    for _ in range(2):
        with pytest.raises(NonFiniteInitialPointError):
            integration._check_start(invalid_start_model(), None, kept=True)
    assert len(calls) == 5
    # after a sampler's own failure the check always runs, to name the variables
    integration._check_start(conjugate_normal().model, None)
    assert len(calls) == 6
