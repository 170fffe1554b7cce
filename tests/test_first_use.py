"""First use: a sampler's start-up paid once per Python process, in estimates and choices."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
import xarray as xr

import pymc_accel
from pymc_accel import first_use, history
from pymc_accel.backend import Candidate, Estimate, Figure, SampleRequest
from pymc_accel.models import eight_schools
from pymc_accel.profile import profile_model
from pymc_accel.report import SelectionReport

PYMC_NUTS = "numba[cpu,float64,driver=pymc]"
NUTPIE = "numba[cpu,float64,driver=nutpie]"


@pytest.fixture
def new_process(monkeypatch):
    """First use charged, in a process that has run no sampler; restored afterwards."""
    monkeypatch.setenv("PYMC_ACCEL_FIRST_USE", "on")
    ran = first_use.used()
    first_use.forget()
    yield
    first_use.forget()
    first_use.mark_used(ran)


def _funnel() -> pm.Model:
    """Neal's funnel, as the zoo's: nine x's and their log scale, no data."""
    with pm.Model() as model:
        v = pm.Normal("v", 0, 3)
        pm.Normal("x", 0, pm.math.exp(v / 2), shape=9)
    return model


def _rows(report) -> dict:
    return {r.label: r for r in report.rows if r.total_seconds is not None}


def test_only_the_parts_not_run_in_this_process_are_charged(new_process):
    both = first_use.first_use_figures("numba", "nutpie-numba")
    assert both["first_use"] == ("numba", "nutpie-numba")
    assert both["first_use_seconds"].value == pytest.approx(0.55 + 4.1)
    assert "first run in this process of numba" in both["first_use_seconds"].note
    first_use.mark_used(("numba",))
    assert first_use.first_use_figures("numba", "nutpie-numba")["first_use_seconds"].value == (
        pytest.approx(4.1))
    first_use.mark_used(("nutpie-numba",))
    assert first_use.first_use_figures("numba", "nutpie-numba")["first_use_seconds"].value == 0
    # a part with no figure costs nothing, but is still marked when it runs
    assert first_use.first_use_figures("my-sampler")["first_use_seconds"].value == 0


def test_a_plugin_brings_the_figure_of_its_own_runtime(new_process, monkeypatch):
    """A third party's runtime is charged what the plugin measured, without a change to this
    package; it cannot change the built-in figures."""
    monkeypatch.setattr(first_use, "FIRST_USE_SECONDS", dict(first_use.FIRST_USE_SECONDS))
    figures = first_use.first_use_figures("jax", "their-sampler",
                                          seconds={"their-sampler": 0.8, "jax": 99.0})
    assert figures["first_use_seconds"].value == pytest.approx(1.3 + 0.8)
    # later estimates of the process (measured mode recomputes them from the parts) keep it
    assert first_use.first_use_figures("their-sampler")["first_use_seconds"].value == 0.8


def test_switched_off_nothing_is_charged(new_process, monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_FIRST_USE", "off")
    figures = first_use.first_use_figures("jax", "numpyro")
    assert figures["first_use_seconds"].value == 0
    assert "PYMC_ACCEL_FIRST_USE=off" in figures["first_use_seconds"].note
    report = pymc_accel.select(eight_schools(), draws=1000, tune=1000, chains=2)
    assert all(not r.first_use_seconds for r in _rows(report).values())


def _pace() -> float:
    """The start-up pace the selection puts on first use on this machine."""
    from pymc_accel.costmodel import start_up_pace
    from pymc_accel.machine import machine_figures

    return start_up_pace(machine_figures())


def test_estimates_of_a_new_process_add_each_samplers_first_use(new_process):
    profile = profile_model(eight_schools())
    cold = _rows(pymc_accel.select(profile=profile, draws=1000, tune=1000, chains=2))
    pace = _pace()
    assert cold[NUTPIE].first_use_seconds == pytest.approx(4.65 * pace)
    assert cold[PYMC_NUTS].first_use_seconds == pytest.approx(0.55 * pace)
    assert cold["numpyro[cpu,float64,chain_method=parallel]"].first_use_seconds == (
        pytest.approx(1.65 * pace))
    assert cold["nutpie_jax[cpu,float64]"].first_use_seconds == pytest.approx(2.65 * pace)
    first_use.mark_used(("numba", "nutpie-numba", "jax", "numpyro", "nutpie-jax"))
    warm = _rows(pymc_accel.select(profile=profile, draws=1000, tune=1000, chains=2))
    for label in (NUTPIE, PYMC_NUTS, "nutpie_jax[cpu,float64]"):
        assert warm[label].first_use_seconds == 0
        assert cold[label].total_seconds - warm[label].total_seconds == pytest.approx(
            cold[label].first_use_seconds)


def test_a_new_process_chooses_the_sampler_that_starts_quickly(new_process):
    """The funnel at pm.sample's length, 2 chains: in a process that has run nutpie, its
    estimates are the cheapest; a new process would pay nutpie's 5 s start-up first, where
    PyMC's NUTS samples the whole run in 3.6 s (bench/bench_fresh_process.py).

    On the fit machine's figures: PyMC's NUTS's driver is priced from the machine's call
    overhead, and a calibration that measured 1.8 µs (a quiet machine, 2026-11-27) put PyMC's
    NUTS under nutpie even after nutpie's start-up was paid, failing this test."""
    from pymc_accel.machine import MachineFigures

    machine = MachineFigures({"float32": 6e9, "float64": 2e9}, {"float32": 3e10, "float64": 3e10},
                             {"float32": 9e10, "float64": 4.5e10}, cpu_call_seconds=2.5e-6,
                             cpu_cache_bytes=32 * 2**20)
    profile = profile_model(_funnel())
    cold = pymc_accel.select(profile=profile, draws=1000, tune=1000, chains=2,
                             backend="numba", machine=machine)
    assert cold.chosen == PYMC_NUTS
    first_use.mark_used(("numba", "nutpie-numba"))
    warm = pymc_accel.select(profile=profile, draws=1000, tune=1000, chains=2, backend="numba",
                             machine=machine)
    assert warm.chosen == NUTPIE


def test_the_report_says_what_this_process_has_run(new_process):
    report = pymc_accel.select(eight_schools(), draws=1000, tune=1000, chains=2)
    text = str(report)
    assert "1st use" in text
    assert "no sampler has run in this process yet" in text
    assert SelectionReport.from_dict(report.to_dict()).process == report.process
    first_use.mark_used(("numba",))
    later = pymc_accel.select(eight_schools(), draws=1000, tune=1000, chains=2)
    assert "already run here: numba" in later.process


def test_a_run_marks_its_runtimes_as_started(new_process):
    model = eight_schools()
    idata = pymc_accel.sample(model=model, nuts_sampler="numba", driver="pymc", draws=30,
                              tune=30, chains=1, random_seed=1, progressbar=False)
    assert "posterior" in idata.children
    assert "numba" in first_use.used()
    assert "nutpie-numba" not in first_use.used()
    after = _rows(pymc_accel.select(model, draws=1000, tune=1000, chains=2))
    assert after[PYMC_NUTS].first_use_seconds == 0
    assert after[NUTPIE].first_use_seconds == pytest.approx(4.1 * _pace())


class _Result:
    def __init__(self, leapfrogs: float):
        self.sample_stats = xr.Dataset({"n_steps": (("chain", "draw"), np.full((2, 50), leapfrogs))})


def test_the_history_does_not_take_a_first_use_for_a_fixed_cost(tmp_path, monkeypatch):
    """A run that was its sampler's first in a new process paid the first use on top of its
    fixed costs: the history's fixed seconds for later runs leave that share out."""
    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PYMC_ACCEL_HISTORY", raising=False)
    profile = profile_model(eight_schools())
    candidate = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    request = SampleRequest(draws=500, tune=500, chains=2)
    base = dict(seconds_per_gradient=Figure(1e-3), gradients_per_draw=Figure(5.0),
                fixed_seconds=Figure(2.0), chain_parallelism=2)  # 2 s fixed + 5 s sampling
    first = Estimate(**base, first_use_seconds=Figure(4.5), first_use=("numba", "nutpie-numba"))
    warm = Estimate(**base, first_use=("numba", "nutpie-numba"))
    for est, wall in ((first, 11.5), (first, 11.5)):  # two script runs, each a new process
        history.record(profile, candidate, est, request, wall, _Result(5.0))
    seen = history.apply(warm, profile, candidate)
    assert seen.fixed_seconds.source == "observed"
    assert seen.fixed_seconds.value == pytest.approx(2.0)  # not 2.0 + 4.5


def test_measured_mode_knows_the_runtimes_its_timing_started(new_process):
    """Timing a numba gradient starts numba, timing a JAX gradient starts JAX: the run that
    follows does not pay those again, so the measured estimates leave them out."""
    report = pymc_accel.select(eight_schools(), draws=1000, tune=1000, chains=2, measure=True)
    measured = {m["candidate"] for m in report.measurement["measured"]}
    rows = _rows(report)
    if PYMC_NUTS in measured:
        assert "numba" in first_use.used()
        assert rows[PYMC_NUTS].first_use_seconds == 0
        assert rows[NUTPIE].first_use_seconds == pytest.approx(4.1 * _pace())
    if "numpyro[cpu,float64,chain_method=parallel]" in measured:
        assert "jax" in first_use.used()
        assert rows["numpyro[cpu,float64,chain_method=parallel]"].first_use_seconds == (
            pytest.approx(0.35 * _pace()))
    assert measured  # at least the leading candidate was timed within the budget


def test_measured_mode_keeps_a_first_use_that_names_no_parts(new_process):
    """An estimate that set its first use without naming the parts (a plugin written before
    first_use_figures) keeps it through measured mode's recount."""
    from types import SimpleNamespace

    from pymc_accel.measure import measure_candidates
    from pymc_accel.selection import _Scored

    theirs = Estimate(Figure(1e-4), Figure(5.0), Figure(1.0), first_use_seconds=Figure(2.0))
    ours = Estimate(Figure(1e-4), Figure(5.0), Figure(1.0), **first_use.first_use_figures("jax"))
    scored = [_Scored(Candidate("theirs", "cpu", "float64"), theirs, 0.0, 0.0),
              _Scored(Candidate("ours", "cpu", "float64"), ours, 0.0, 0.0)]
    registry = SimpleNamespace(backends={"theirs": object(), "ours": object()})
    first_use.mark_used(("jax",))  # as a measurement that started JAX would
    measure_candidates(scored, None, None, None, registry, budget=5.0, steps=2000, draws=1000,
                       chains=2)
    assert scored[0].estimate.first_use_seconds.value == 2.0
    assert scored[1].estimate.first_use_seconds.value == 0.0
