"""A JAX candidate's XLA program against the process's limit on memory maps
(pymc_accel/memory_maps.py)."""

from __future__ import annotations

import pytest

from pymc_accel import memory_maps
from pymc_accel.models import eight_schools
from pymc_accel.profile import profile_model
from tests.test_costmodel import _matrix_exponentials


@pytest.fixture(scope="module")
def four_intervals():
    """A model with 8 ``Expm`` in the census (4 intervals, each and its gradient's)."""
    return _matrix_exponentials(4)


@pytest.fixture
def small_limit(monkeypatch):
    """A system allowing 20,000 maps, of which this process holds 5,000."""
    monkeypatch.setattr(memory_maps, "map_limit", lambda: 20_000)
    monkeypatch.setattr(memory_maps, "maps_in_use", lambda: 5_000)


def test_maps_are_counted_by_the_ops_jax_compiles_as_programs_of_their_own(four_intervals):
    profile = profile_model(four_intervals)
    for backend, per_op in memory_maps.MAPS_PER_PROGRAM_OP.items():
        assert memory_maps.maps_needed(profile, backend) == memory_maps.MAPS_PER_RUN + 8 * per_op
    # a plugin's backend not measured is charged the most of those measured
    assert memory_maps.maps_needed(profile, "someone_elses") == (
        memory_maps.MAPS_PER_RUN + 8 * max(memory_maps.MAPS_PER_PROGRAM_OP.values()))
    assert memory_maps.maps_needed(profile_model(eight_schools()), "deer_mala") == 0


def test_a_run_past_the_limit_is_refused_with_the_figures_and_the_fix(four_intervals,
                                                                     small_limit, monkeypatch):
    profile = profile_model(four_intervals)
    # 5,000 in use + 1,200 + 590 x 8 = 10,920 past 45% of 20,000 (9,000): refused
    reason = memory_maps.refusal_reason(profile, "deer_mala")
    assert reason.startswith("its XLA program would map about 5,920 more memory regions "
                             "(8 Expm in the log density")
    assert "this process has 5,000 and the system allows 20,000 (vm.max_map_count)" in reason
    assert "nuts_sampler='numba'" in reason and "sysctl -w vm.max_map_count" in reason
    # nutpie's one jitted gradient: 5,000 + 1,200 + 105 x 8 = 7,040, within 9,000
    assert memory_maps.refusal_reason(profile, "nutpie_jax") is None
    assert memory_maps.refusal_reason(profile, "numpyro") is None  # 5,000 + 3,120
    # a second run's programs in the process: 6,000 in use
    monkeypatch.setattr(memory_maps, "maps_in_use", lambda: 6_000)
    assert "3,120 more" in memory_maps.refusal_reason(profile, "numpyro")


def test_nothing_is_refused_where_the_limit_or_the_maps_cannot_be_read(monkeypatch,
                                                                     four_intervals):
    profile = profile_model(four_intervals)
    monkeypatch.setattr(memory_maps, "LIMIT_FILE", "/nonexistent/max_map_count")
    assert memory_maps.map_limit() is None
    assert memory_maps.refusal_reason(profile, "deer_mala") is None
    monkeypatch.setattr(memory_maps, "MAPS_FILE", "/nonexistent/maps")
    assert memory_maps.maps_in_use() is None


def test_the_limit_and_the_maps_in_use_are_read_on_linux():
    limit, used = memory_maps.map_limit(), memory_maps.maps_in_use()
    if limit is None:
        pytest.skip("no /proc/sys/vm/max_map_count here")
    assert limit > 0 and used > 0


def test_the_selector_refuses_the_jax_candidates_whose_run_would_end_the_process(
        four_intervals, small_limit):
    """The user sweep's Markov chain of 60 matrix exponentials ended DEER-MALA's and BlackJAX's
    processes inside LLVM, with no error to catch; NumPyro's ended on its second run in one
    process. Refused, such a candidate is left out of ``auto`` and named, it raises the
    reason."""
    import pymc_accel
    from pymc_accel.errors import NoCandidateError

    report = pymc_accel.explain(four_intervals, chains=2)
    refused = {r.label: r.reason for r in report.rows if r.status == "refused"}
    deer = [label for label in refused if label.startswith("deer_mala[cpu")]
    assert deer and all("vm.max_map_count" in refused[label] for label in deer)
    assert not any(r.label.startswith("deer_mala[cpu") and r.status != "refused"
                   for r in report.rows)
    assert report.candidate.backend != "deer_mala"
    with pytest.raises(NoCandidateError, match="vm.max_map_count"):
        pymc_accel.explain(four_intervals, backend="deer_mala", device="cpu")
