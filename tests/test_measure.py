from __future__ import annotations

import os
import threading

import pytest

import pymc_accel
from pymc_accel import measure
from pymc_accel.backend import Candidate, Estimate, Figure
from pymc_accel.devices import Devices
from pymc_accel.measure import time_calls
from pymc_accel.models import conjugate_normal, eight_schools
from pymc_accel.registry import build_registry
from tests.figures import hand_made_machine
from pymc_accel.selection import select

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


#: Fixed seconds of the fake backends' runs: long enough that the cap on what a measurement is
#: offered (the best candidate's estimated run) never binds, except where a test shortens them.
LONG_RUN = 100.0


class _Timed:
    """A backend with four candidates whose measure() takes two (fake) seconds each and
    reports a gradient four times faster than modelled."""

    name = "timed"
    description = "fake measured backend"
    fixed_seconds = LONG_RUN

    def __init__(self, clock):
        self.clock = clock
        self.budgets: list[float] = []

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", "float64", (("n", i),)) for i in range(4)]

    def estimate(self, candidate, profile, machine):
        return Estimate(Figure(1e-5 * (1 + candidate.option("n"))), Figure(10.0),
                        Figure(self.fixed_seconds))

    def measure(self, candidate, model, profile, machine, budget_seconds):
        self.budgets.append(budget_seconds)
        if budget_seconds < 2.0:  # as the built-in backends do: no compile that cannot fit
            return None
        self.clock.now += 2.0
        modelled = self.estimate(candidate, profile, machine)
        return Estimate(Figure(modelled.seconds_per_gradient.value / 4, "measured"),
                        modelled.gradients_per_draw, modelled.fixed_seconds)


class _Unmeasurable(_Timed):
    name = "plain"
    measure = None  # a third-party backend without the optional method


def _registry(*backends):
    reg = build_registry(autoload=False, builtins=False)
    for b in backends:
        reg.backends[b.name] = b
        reg.origins[b.name] = "test"
    return reg


def _select_on_a_fake_clock(monkeypatch, backend_cls, **kwargs):
    """select(measure=True) over one ``backend_cls`` backend timed by a fake clock."""
    clock = _Clock()
    monkeypatch.setattr(measure, "_clock", clock)
    backend = backend_cls(clock)
    # start-up pace 1 (hand-made figures): the live machine's, timed slower under load, moved
    # the modelled totals the budgets are compared with
    kwargs.setdefault("machine", hand_made_machine())
    report = select(conjugate_normal().model, registry=_registry(backend), devices=CPU_ONLY,
                    measure=True, **kwargs)
    return backend, report


def test_measurement_stops_when_the_budget_is_spent(monkeypatch):
    backend, report = _select_on_a_fake_clock(monkeypatch, _Timed, measure_budget=5.0)
    # each candidate is offered what is left: 5, 3, then 1 second, too little for a 2 s
    # compile, so the last two decline and the 5 s budget is never exceeded
    assert backend.budgets == [5.0, 3.0, 1.0, 1.0]
    m = report.measurement
    assert m["budget_seconds"] == 5.0 and m["spent_seconds"] == 4.0
    assert m["spent_before_seconds"] + m["spent_seconds"] <= m["budget_seconds"]
    assert m["overran_seconds"] == 0
    assert len(m["measured"]) == 2
    assert all("would not fit" in n["why"] for n in m["not_measured"])
    by_label = {r.label: r for r in report.rows}
    assert "s/grad measured" in by_label["timed[cpu,float64,n=0]"].sources
    assert by_label["timed[cpu,float64,n=0]"].seconds_per_gradient == pytest.approx(1e-5 / 4)
    assert "s/grad modelled" in by_label["timed[cpu,float64,n=3]"].sources
    assert "would not fit" in by_label["timed[cpu,float64,n=3]"].reason
    assert "2 measured, 2 modelled" in str(report)


class _ShortRuns(_Timed):
    """As :class:`_Timed`, with runs of about a second (0.5 s fixed, at the machine's start-up
    pace, and 0.8 s sampling) where measuring a candidate compiles for two."""

    fixed_seconds = 0.5


def test_no_candidate_but_the_leader_is_offered_more_than_the_leaders_run(monkeypatch):
    backend, report = _select_on_a_fake_clock(monkeypatch, _ShortRuns, measure_budget=5.0)
    rows = {r.label: r for r in report.rows}
    first = rows["timed[cpu,float64,n=0]"]
    # the leader's compile is part of its own run: it is offered all the budget; it is then
    # measured 4x faster, and no 2 s compile can pay for itself against its shorter run
    assert backend.budgets[0] == 5.0
    assert "s/grad measured" in first.sources
    assert backend.budgets[1:] == [pytest.approx(first.total_seconds)] * 3
    assert first.total_seconds < 2.0 and len(backend.budgets) == 4
    m = report.measurement
    assert m["spent_seconds"] == 2.0 and len(m["measured"]) == 1
    whys = [n["why"] for n in m["not_measured"]]
    assert whys == [f"its compile would take longer than the whole run of timed[cpu,float64,n=0] "
                    f"({first.total_seconds:.2f} s estimated): measuring it could not pay for "
                    "itself"] * 3
    assert "could not pay for itself" in rows["timed[cpu,float64,n=3]"].reason


class _FirstCompiles(_Timed):
    """Two candidates charged a first compile of 3 s: n=0's is its backend's kernels (a cache
    the measurement's compile fills), n=1's a whole program (JAX's cache: the sampler's
    program, which a gradient's timing does not compile)."""

    def candidates(self, profile, devices):
        return super().candidates(profile, devices)[:2]

    def estimate(self, candidate, profile, machine):
        from dataclasses import replace

        return replace(super().estimate(candidate, profile, machine),
                       cold_compile_seconds=Figure(3.0),
                       whole_program_cached=candidate.option("n") == 1)


def test_a_measurement_takes_off_a_first_compile_of_kernels_not_of_a_whole_program(
        monkeypatch, ledger):
    backend, report = _select_on_a_fake_clock(monkeypatch, _FirstCompiles, measure_budget=5.0)
    modelled = select(conjugate_normal().model, registry=_registry(backend), devices=CPU_ONLY,
                      machine=hand_made_machine())
    first_compile = {r.label: r.cold_compile_seconds for r in modelled.rows}
    assert first_compile["timed[cpu,float64,n=1]"] > 2.0  # 3 s at a start-up pace of 1
    rows = {r.label: r for r in report.rows}
    assert len(report.measurement["measured"]) == 2
    assert rows["timed[cpu,float64,n=0]"].cold_compile_seconds == 0.0
    assert rows["timed[cpu,float64,n=1]"].cold_compile_seconds == pytest.approx(
        first_compile["timed[cpu,float64,n=1]"])


class _Unresolved(_Timed):
    """Compiles (1.5 fake seconds) and then cannot time the gradient in what is left."""

    def measure(self, candidate, model, profile, machine, budget_seconds):
        self.budgets.append(budget_seconds)
        self.clock.now += 1.5
        return None


def test_a_gradient_compiled_but_not_timed_is_not_called_a_compile_that_did_not_fit(monkeypatch):
    _, report = _select_on_a_fake_clock(monkeypatch, _Unresolved, measure_budget=5.0)
    m = report.measurement
    assert not m["measured"]
    whys = [n["why"] for n in m["not_measured"]]
    assert whys[0] == ("its gradient compiled, but the 5.0 s left of the budget (1.5 s taken) "
                       "were too few to time it")
    assert not any("would not fit" in why for why in whys[:3])


class _SlowEstimates(_Timed):
    """Estimating each candidate takes half a (fake) second: selection before measuring."""

    def estimate(self, candidate, profile, machine):
        self.clock.now += 0.5
        return super().estimate(candidate, profile, machine)

    def measure(self, candidate, model, profile, machine, budget_seconds):
        self.budgets.append(budget_seconds)
        if budget_seconds < 2.0:
            return None
        self.clock.now += 2.0
        return Estimate(Figure(1e-6, "measured"), Figure(10.0), Figure(LONG_RUN))


def test_the_budget_covers_the_selection_before_measuring(monkeypatch):
    backend, report = _select_on_a_fake_clock(monkeypatch, _SlowEstimates, measure_budget=5.0)
    m = report.measurement
    # four estimates took 2 s of the 5: measuring is offered 3, enough for one 2 s compile
    assert m["spent_before_seconds"] == 2.0 and m["measuring_budget_seconds"] == 3.0
    assert backend.budgets[0] == 3.0 and len(m["measured"]) == 1
    assert m["spent_before_seconds"] + m["spent_seconds"] <= 5.0


class _Overrunning(_Timed):
    """A third-party backend that ignores its budget: every measure() takes 4 s."""

    name = "overrun"

    def measure(self, candidate, model, profile, machine, budget_seconds):
        self.budgets.append(budget_seconds)
        self.clock.now += 4.0
        return Estimate(Figure(1e-6, "measured"), Figure(10.0), Figure(LONG_RUN))


def test_an_overrun_ends_measurement_and_is_reported(monkeypatch):
    backend, report = _select_on_a_fake_clock(monkeypatch, _Overrunning, measure_budget=5.0)
    m = report.measurement
    # offered 5 s, then 1 s: the second took 4 and overran by 3; nothing more is offered
    assert backend.budgets == [5.0, 1.0]
    assert m["overran_seconds"] == 3.0
    assert [n["why"] for n in m["not_measured"]] == ["an earlier measurement overran the budget"] * 2
    assert "overran by 3.00 s" in str(report)


class _Stuck(_Timed):
    """A backend whose measure() (a compile predicted to fit) runs until the test releases it."""

    name = "stuck"

    def __init__(self, clock=None):
        super().__init__(clock)
        self.release = threading.Event()
        self.finished = threading.Event()

    def measure(self, candidate, model, profile, machine, budget_seconds):
        self.budgets.append(budget_seconds)
        self.release.wait(30)
        self.finished.set()
        return Estimate(Figure(1e-6, "measured"), Figure(10.0), Figure(LONG_RUN))


def test_a_measurement_running_past_the_budget_is_left_in_the_background():
    """The selection returns at the deadline with the candidate modelled; the measurement
    finishes afterwards, and the log says for how long it went on."""
    backend = _Stuck()
    try:
        report = select(conjugate_normal().model, registry=_registry(backend), devices=CPU_ONLY,
                        measure=True, measure_budget=2.0)
        still_running = not backend.finished.is_set()  # select() did not wait for it
    finally:
        backend.release.set()
    assert still_running
    m = report.measurement
    assert len(backend.budgets) == 1 and not m["measured"]
    (abandoned,) = m["abandoned"]
    assert abandoned["candidate"] == "stuck[cpu,float64,n=0]"
    whys = [n["why"] for n in m["not_measured"]]
    assert whys[0].startswith("its measurement was still running when the")
    assert whys[1:] == ["an earlier measurement overran the budget"] * 3
    assert "s/grad modelled" in {r.label: r for r in report.rows}["stuck[cpu,float64,n=0]"].sources
    assert "left to finish in the background" in str(report)
    measure.wait_for_background(timeout=30)
    assert backend.finished.is_set() and abandoned["ran_on_seconds"] is not None


def test_a_float32_candidate_keeps_a_share_of_the_budget_for_the_guard(monkeypatch):
    from pymc_accel import selection

    clock = _Clock()
    monkeypatch.setattr(measure, "_clock", clock)

    class _Float32(_Timed):
        def candidates(self, profile, devices):
            return [Candidate(self.name, "cpu", "float32", (("n", 0),))]

    backend = _Float32(clock)
    report = select(conjugate_normal().model, registry=_registry(backend), devices=CPU_ONLY,
                    measure=True, measure_budget=5.0)
    reserve = selection.GUARD_RESERVE * 5.0
    assert report.measurement["reserved_seconds"] == pytest.approx(reserve)
    assert backend.budgets == [pytest.approx(5.0 - reserve)]


def test_a_compile_is_started_only_when_its_predicted_time_fits(monkeypatch):
    from pymc_accel.backends import _measure

    monkeypatch.setattr(_measure, "_COMPILE_RATIO", {})
    monkeypatch.setattr(_measure, "load_factor", lambda: 1.0)
    margin = _measure.COMPILE_MARGIN
    assert _measure.fits("numba", 1.0, margin * 1.0 + _measure.MIN_TIMING_SECONDS)
    assert not _measure.fits("numba", 1.0, margin * 1.0)
    # a compile that took 3x its model here makes the next one be predicted 3x its model
    _measure.record_compile("numba", modelled=1.0, actual=3.0)
    assert _measure.predicted_compile_seconds("numba", 1.0) == pytest.approx(3.0)
    assert _measure.predicted_compile_seconds("jax", 1.0) == pytest.approx(margin)
    # on a loaded machine (4 runnable processes per core) the prediction grows with the load
    monkeypatch.setattr(_measure, "load_factor", lambda: 4.0)
    assert _measure.predicted_compile_seconds("jax", 1.0) == pytest.approx(4.0 * margin)
    # the two timed calls are part of the cost: a 1 s gradient does not fit in 3 s after a
    # compile predicted at 1.5 s
    monkeypatch.setattr(_measure, "load_factor", lambda: 1.0)
    assert _measure.fits("jax", 1.0, 3.0) and not _measure.fits("jax", 1.0, 3.0, call_seconds=1.0)
    monkeypatch.setattr(_measure, "load_factor", lambda: 4.0)
    # a compile slowed by load is not held against an idle machine
    _measure.record_compile("jax", modelled=1.0, actual=8.0, load=4.0)
    assert _measure._COMPILE_RATIO["jax"] == pytest.approx(2.0)


def test_backends_without_measure_keep_modelled_figures(monkeypatch):
    _, report = _select_on_a_fake_clock(monkeypatch, _Unmeasurable)
    assert not report.measurement["measured"]
    assert all("has no measure()" in n["why"] for n in report.measurement["not_measured"])


def test_time_calls_counts_calls_within_its_limits():
    calls = []
    median, n = time_calls(lambda: calls.append(1), 0.0, min_calls=3)
    assert n == len(calls) == 3 and median >= 0
    calls.clear()
    _, n = time_calls(lambda: calls.append(1), 60.0, max_calls=7)
    assert n == len(calls) == 7


def test_builtin_backends_measure_their_gradients():
    report = select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
                    measure=True, chains=2)
    m = report.measurement
    measured = {e["candidate"] for e in m["measured"]}
    assert any(label.startswith("numpyro[cpu") for label in measured)
    for row in report.rows:
        if row.status == "refused":
            continue
        if row.label in measured:
            assert "s/grad measured" in row.sources and row.seconds_per_gradient > 0
        else:
            assert "s/grad modelled" in row.sources and "not measured:" in row.reason
    assert all("median of" in e["note"] or "compiled loop" in e["note"] for e in m["measured"])


def test_zero_budget_measures_nothing():
    report = select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
                    measure=True, measure_budget=0.0)
    assert not report.measurement["measured"]
    assert all(r.status == "refused" or "s/grad modelled" in r.sources for r in report.rows)


def test_sample_with_measure_records_it_in_the_report():
    idata = pymc_accel.sample(50, tune=50, chains=2, model=conjugate_normal().model,
                              progressbar=False, quiet=True, measure=True, random_seed=1,
                              compute_convergence_checks=False)
    report = pymc_accel.SelectionReport.from_idata(idata)
    assert report.request["measure"] is True and report.measurement is not None


def test_sample_takes_the_measured_selections_budget():
    """sample() runs the selection select() would, so it takes its budget too (it had been
    refused by every candidate as an option they do not take)."""
    idata = pymc_accel.sample(50, tune=50, chains=2, model=conjugate_normal().model,
                              progressbar=False, quiet=True, measure=True, measure_budget=0.0,
                              random_seed=1, compute_convergence_checks=False)
    m = pymc_accel.SelectionReport.from_idata(idata).measurement
    assert m["budget_seconds"] == 0.0 and not m["measured"]
    assert all("budget was spent" in n["why"] or "has no measure" in n["why"]
               for n in m["not_measured"])


@pytest.mark.parametrize("budget", [-1.0, "5", float("nan"), True])
def test_a_budget_that_is_not_seconds_is_refused_up_front(budget):
    with pytest.raises(ValueError, match="measure_budget=.*a number of at least 0"):
        select(conjugate_normal().model, measure=True, measure_budget=budget)


def test_a_budget_without_measure_is_refused_by_sample():
    with pytest.raises(ValueError, match="pass measure=True with it"):
        pymc_accel.sample(50, tune=50, chains=2, model=conjugate_normal().model,
                          measure_budget=3.0)


def test_a_measurement_keeps_what_the_run_history_observed():
    from dataclasses import replace

    selected = Estimate(seconds_per_gradient=Figure(1e-4), gradients_per_draw=Figure(
        7.0, "observed", "a run"), fixed_seconds=Figure(2.0, "observed", "a run"))
    timed = Estimate(seconds_per_gradient=Figure(3e-5, "measured", "timed"),
                     gradients_per_draw=Figure(5.0), fixed_seconds=Figure(3.0))
    merged = measure.measured_over(selected, timed)
    assert merged.seconds_per_gradient.value == 3e-5
    assert merged.gradients_per_draw.value == 7.0 and merged.fixed_seconds.value == 2.0
    # a measured fixed cost (a compile kept for the run) comes with what it paid before
    kept = replace(timed, fixed_seconds=Figure(0.15, "measured", "kept"),
                   precompiled_seconds=1.2, modelled_fixed_seconds=3.0)
    merged = measure.measured_over(selected, kept)
    assert merged.fixed_seconds.value == 0.15 and merged.precompiled_seconds == 1.2
    # seconds per gradient a run observed hold the sampler's whole step; a timing does not
    ran = replace(selected, seconds_per_gradient=Figure(2e-4, "observed", "a run"),
                  seconds_per_gradient_before_runs=1e-4)
    merged = measure.measured_over(ran, timed)
    assert merged.seconds_per_gradient.value == 2e-4
    assert merged.seconds_per_gradient_before_runs == 1e-4


def test_a_later_selection_uses_what_measured_mode_timed(ledger):
    model = conjugate_normal().model
    first = select(model, registry=build_registry(autoload=False), devices=CPU_ONLY, chains=2,
                   backend="numpyro", measure=True)
    assert any(e["candidate"].startswith("numpyro[cpu") for e in first.measurement["measured"])
    again = select(conjugate_normal().model, registry=build_registry(autoload=False),
                   devices=CPU_ONLY, chains=2, backend="numpyro")
    rows = [r for r in again.rows if r.status != "refused" and r.label.startswith("numpyro[cpu")]
    assert rows and all("s/grad measured" in r.sources for r in rows)


def test_gradients_are_timed_a_start_jitter_away_from_the_initial_point():
    """At the initial point a logistic model's predictor is zero, where libm's exp takes its
    short path: numba's gradient of the seed model ran 79 µs there and 99 µs a jitter away."""
    import numpy as np
    import pymc as pm

    from pymc_accel.backends import _measure

    with pm.Model() as model:
        x = pm.Normal("x", 0, 1, shape=3)
        pm.Poisson("k", 2.0)
    start, timed = model.initial_point(), _measure._start_point(model, jitter=True)
    moved = np.abs(timed["x"] - start["x"])
    assert np.all((moved > 0) & (moved <= _measure.TIMING_JITTER))
    assert timed["k"] == start["k"]  # discrete variables are not jittered
    np.testing.assert_array_equal(_measure._start_point(model, jitter=True)["x"], timed["x"])  # seeded


def test_a_jitter_outside_the_support_is_timed_at_the_initial_point(monkeypatch):
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    from pymc_accel.backends import _measure
    from pymc_accel.machine import machine_figures

    def build(narrow: bool):
        with pm.Model() as model:
            x = pm.Flat("x")
            if narrow:  # finite only within 0.01 of the initial point
                pm.Potential("inside", pt.switch(pt.abs(x) < 0.01, 0.0, -np.inf))
        return model

    real = _measure._raveled_initial_point
    for narrow, expected in ((False, [True]), (True, [True, False])):
        asked = []
        monkeypatch.setattr(_measure, "_raveled_initial_point",
                            lambda m, jitter=False: asked.append(jitter) or real(m, jitter))
        _measure.time_numba_gradient(build(narrow), 0.2, machine_figures())
        assert asked == expected


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning",
                            "ignore:.*fork.*:RuntimeWarning")  # JAX's threads: the child exits
def test_a_fork_waits_for_a_measurement_left_running(measurement_left_running):
    """A child forked while a measurement's compile held numba's compiler lock would inherit
    the lock held for ever (PyMC's NUTS forks its chains, and pm.sample may be called directly
    after explain(measure=True))."""
    order = measurement_left_running
    pid = os.fork()
    if pid == 0:  # the child exits at once, without running the interpreter's exit handlers
        os._exit(0)
    order.append("forked")
    os.waitpid(pid, 0)
    assert order == ["measurement ended", "forked"]
