"""A model's first compile on a machine: charged to backends with a compile cache on disk
until the model has run here (run history) or measured mode compiled it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import xarray as xr

import pymc_accel
from pymc_accel import costmodel, history
from pymc_accel.backend import Candidate, Estimate, Figure, SampleRequest
from pymc_accel.backends.numba_cpu import NumbaBackend
from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
from pymc_accel.machine import MachineFigures
from pymc_accel.models import eight_schools, hierarchical_logistic
from pymc_accel.profile import profile_model
from pymc_accel.report import SelectionReport

PYMC_NUTS = Candidate("numba", "cpu", "float64", (("driver", "pymc"),))
NUTPIE = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
NUMPYRO = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))


def _machine() -> MachineFigures:
    return MachineFigures({"float32": 1e10, "float64": 1e10}, {"float32": 1e10, "float64": 1e10},
                          {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)


def _bench_zoo():
    """bench/zoo.py, whose model shapes the cold-compile fits used."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "bench" / "zoo.py"
    spec = importlib.util.spec_from_file_location("bench_zoo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Result:
    sample_stats = xr.Dataset({"n_steps": (("chain", "draw"), np.full((2, 50), 7.0))})


def test_numpyros_program_is_cached_only_for_the_sampler_options_it_ran_with(ledger,
                                                                              monkeypatch):
    """NumPyro compiles target_accept and its keyword arguments into the program: eight
    schools at target_accept=0.95 took 3.6-4.2 s after 0.9 s runs at the default, where the
    history had counted its program cached. Going back to an earlier setting loads its
    program, which JAX's cache kept."""
    monkeypatch.setenv("PYMC_ACCEL_JAX_CACHE", "on")
    profile, m = profile_model(eight_schools()), _machine()
    est = JaxNutsBackend().estimate(NUMPYRO, profile, m)
    default = history.program_options_key(0.8)
    strict = history.program_options_key(0.95)
    run, request = (100, 100, 2), SampleRequest(draws=100, tune=100, chains=2)

    def cold(options):
        return history.apply(est, profile, NUMPYRO, run=run, data=lambda: "d",
                             options=options).cold_compile_seconds.value

    history.record(profile, NUMPYRO, est, request, 5.0, _Result(), data="d", options=default)
    assert cold(default) == 0 and cold(strict) > 0
    history.record(profile, NUMPYRO, est, request, 5.0, _Result(), data="d", options=strict)
    assert cold(strict) == 0 and cold(default) == 0  # both programs are on disk
    assert cold(history.program_options_key(0.8, {"dense_mass": True})) > 0
    assert cold(None) == 0  # a caller that does not know the options does not compare them
    # the list keeps each program once, and the last PROGRAMS_KEPT of them
    for accept in np.linspace(0.81, 0.9, history.PROGRAMS_KEPT):
        history.record(profile, NUMPYRO, est, request, 5.0, _Result(), data="d",
                       options=history.program_options_key(accept))
    programs = history.lookup(profile, NUMPYRO)["programs"]
    assert len(programs) == history.PROGRAMS_KEPT and cold(default) > 0


def test_program_options_key_is_stable_and_tells_options_apart():
    key = history.program_options_key
    assert key(0.8) == key(0.8, {}, None) == key(0.8, None, [])
    assert key(0.8, {"a": 1, "b": 2}) == key(0.8, {"b": 2, "a": 1})  # order of the keywords
    assert len({key(0.8), key(0.9), key(0.8, {"dense_mass": True}), key(0.8, None, ["mu"]),
                key(0.8, None, ["mu", "tau"])}) == 5
    # large arrays differing where NumPy's repr elides them are other options
    a, b = np.ones(5000), np.ones(5000)
    b[2500] = 2.0
    assert repr(a) == repr(b) and key(0.8, {"m": a}) != key(0.8, {"m": b})
    assert key(0.8, {"m": a}) == key(0.8, {"m": a.copy()})
    import os
    import subprocess
    import sys

    code = "from pymc_accel.history import program_options_key as k; print(k(0.9, {'x': (1, 2)}))"
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
            for seed in ("1", "2")}
    assert seen == {key(0.9, {"x": (1, 2)})}  # the same in any process


def test_selection_charges_the_compile_of_a_run_with_other_sampler_options(ledger, monkeypatch):
    """What ``pm.sample(target_accept=0.95)`` is estimated at after runs at the default."""
    from pymc_accel.profile import data_digest

    monkeypatch.setenv("PYMC_ACCEL_JAX_CACHE", "on")
    model = eight_schools()
    profile = profile_model(model)
    est = JaxNutsBackend().estimate(NUMPYRO, profile, _machine())
    history.record(profile, NUMPYRO, est, SampleRequest(draws=100, tune=100, chains=2), 5.0,
                   _Result(), data=data_digest(model), options=history.program_options_key(0.8))

    def charged(**kwargs):
        report = pymc_accel.explain(model, nuts_sampler="numpyro", device="cpu",
                                    precision="float64", draws=100, tune=100, chains=2, **kwargs)
        return report.estimate.cold_compile_seconds.value

    assert charged() == 0
    assert charged(target_accept=0.95) > 0
    assert charged(nuts={"max_treedepth": 8}) > 0


def test_numba_candidates_are_charged_a_first_compile():
    profile, m = profile_model(eight_schools()), _machine()
    for candidate in (NUTPIE, PYMC_NUTS):
        est = NumbaBackend().estimate(candidate, profile, m)
        runtime = (costmodel.NUMBA_PYMC if candidate.option("driver") == "pymc"
                   else costmodel.NUMBA_NUTPIE)
        assert est.cold_compile_seconds == costmodel.cold_compile_seconds(profile, runtime)
        assert est.cold_compile_seconds.value > 0
        assert est.total_seconds(2000, 2) == pytest.approx(
            est.fixed_seconds.value + est.first_use_seconds.value
            + est.cold_compile_seconds.value + est.sampling_seconds(2000, 2))
    # more kernels, more to compile
    larger = profile_model(hierarchical_logistic(500, 20, 2).model)
    assert (costmodel.cold_compile_seconds(larger, costmodel.NUMBA_NUTPIE).value
            > costmodel.cold_compile_seconds(profile, costmodel.NUMBA_NUTPIE).value)


def test_numpyros_program_compile_is_charged_until_the_same_run_has_run_here(ledger, monkeypatch):
    """JAX's disk cache (pymc_accel.jax_cache) holds a run's whole program, which its tuning
    steps, draws, chains and data values fix: another length or other data compiles anew."""
    monkeypatch.setenv("PYMC_ACCEL_JAX_CACHE", "on")
    profile, m = profile_model(eight_schools()), _machine()
    est = JaxNutsBackend().estimate(NUMPYRO, profile, m)
    assert est.whole_program_cached
    assert est.cold_compile_seconds.value == costmodel.cold_compile_seconds(
        profile, costmodel.JAX_CPU_SAMPLER).value
    assert est.cold_compile_seconds.value > est.fixed_seconds.value > 0
    data = lambda: "digest-a"  # noqa: E731  (the model's data values)

    def cold(run, candidate=NUMPYRO, data=data):
        return history.apply(est, profile, candidate, run=run, data=data).cold_compile_seconds

    assert cold((100, 100, 2)).value > 0
    history.record(profile, NUMPYRO, est, SampleRequest(draws=100, tune=100, chains=2), 5.0,
                   _Result(), data="digest-a")
    assert cold((100, 100, 2)).value == 0 and "program is cached" in cold((100, 100, 2)).note
    for other in [(100, 200, 2), (200, 100, 2), (100, 100, 4)]:  # another program
        assert cold(other) == est.cold_compile_seconds
    # other data of the same shapes are other constants of the program
    assert cold((100, 100, 2), data=lambda: "digest-b") == est.cold_compile_seconds
    # nor does the float32 twin's program hold this one's
    assert cold((100, 100, 2), candidate=history.other_precision(NUMPYRO)).value > 0
    # without a cache on disk every run compiles: in the fixed seconds, nothing cold
    monkeypatch.setenv("PYMC_ACCEL_JAX_CACHE", "off")
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    import sys

    jax = sys.modules.get("jax")
    own = jax.config.jax_compilation_cache_dir if jax is not None else None
    if own:
        jax.config.update("jax_compilation_cache_dir", None)
    try:
        uncached = JaxNutsBackend().estimate(NUMPYRO, profile, m)
    finally:
        if own:
            jax.config.update("jax_compilation_cache_dir", own)
    assert uncached.cold_compile_seconds.value == 0
    assert uncached.fixed_seconds.value == pytest.approx(
        est.fixed_seconds.value + est.cold_compile_seconds.value)


def test_the_first_compile_is_charged_until_the_model_has_run_here(ledger):
    profile, m = profile_model(eight_schools()), _machine()
    other = profile_model(hierarchical_logistic(500, 20, 2).model)
    nutpie = NumbaBackend().estimate(NUTPIE, profile, m)
    assert history.compiled_here(profile, NUTPIE) is None
    assert history.apply(nutpie, profile, NUTPIE).cold_compile_seconds.value > 0
    pymc = NumbaBackend().estimate(PYMC_NUTS, profile, m)
    history.record(profile, PYMC_NUTS, pymc, SampleRequest(draws=100, tune=100, chains=2), 9.0,
                   _Result())
    assert history.compiled_here(profile, PYMC_NUTS) == PYMC_NUTS.label
    own = history.apply(pymc, profile, PYMC_NUTS)
    assert own.cold_compile_seconds.value == 0
    assert own.cold_compile_seconds.source == "observed" and "cached" in own.cold_compile_seconds.note
    # PyMC's NUTS compiled the model with PyTensor's numba linker: nutpie finds most of its
    # kernels cached, not all
    assert history.compiled_here(profile, NUTPIE) == PYMC_NUTS.label
    lent = history.apply(nutpie, profile, NUTPIE)
    assert lent.cold_compile_seconds.value == pytest.approx(
        nutpie.cold_compile_seconds.value * history.SHARED_COMPILE_LEFT)
    assert PYMC_NUTS.label in lent.cold_compile_seconds.note
    # another model has not run here
    assert history.apply(NumbaBackend().estimate(NUTPIE, other, m), other,
                         NUTPIE).cold_compile_seconds.value > 0


def test_measured_mode_predicts_its_compile_from_what_a_pymc_driver_run_cached(ledger,
                                                                               monkeypatch):
    """Measured mode times PyMC's own gradient function for both numba drivers. After a nutpie
    run of the model only part of that function's kernels are cached: predicting none left
    (nutpie's own view) made it compile for 10.5 s of a 4.2 s budget on the demo model."""
    from pymc_accel.backends import _measure
    from pymc_accel.backends.numba_cpu import _cold_compile_left

    model = eight_schools()
    profile, m, backend = profile_model(model), _machine(), NumbaBackend()
    nutpie, pymc = backend.estimate(NUTPIE, profile, m), backend.estimate(PYMC_NUTS, profile, m)
    predicted = []  # the cold compile left that measured mode's compile is predicted with

    def over_budget(*args, cold_seconds=None, **kwargs):
        predicted.append(args[-1] if cold_seconds is None else cold_seconds)
        return None  # as if the compile would not fit: nothing is compiled

    monkeypatch.setattr(_measure, "numba_measure", over_budget)
    history.record(profile, NUTPIE, nutpie, SampleRequest(draws=100, tune=100, chains=2),
                   9.0, _Result())
    assert _cold_compile_left(nutpie, profile, NUTPIE) == 0  # nutpie's compile is cached
    for candidate in (NUTPIE, PYMC_NUTS):
        assert backend.measure(candidate, model, profile, m, 5.0) is None
    assert predicted == pytest.approx(
        [pymc.cold_compile_seconds.value * history.SHARED_COMPILE_LEFT] * 2)
    history.record(profile, PYMC_NUTS, pymc, SampleRequest(draws=100, tune=100, chains=2),
                   9.0, _Result())
    backend.measure(NUTPIE, model, profile, m, 5.0)
    assert predicted[-1] == 0  # PyMC's function's kernels are cached now


def test_a_machine_that_compiled_other_models_prices_a_new_ones_loops_by_rank(ledger):
    """After USED_MACHINE_MODELS other models ran with the numba backend, a new model's scalar
    kernels are mostly cached: its first compile is priced by loop rank, so a model of many
    scalar kernels costs a fraction of what it costs on an empty machine, and one of loops and
    loop nests about as much."""
    zoo = _bench_zoo()

    m = _machine()
    scalars = profile_model(zoo.many_scalars())
    nested = profile_model(zoo.mixture())
    assert nested.census.compiled_kernels_by_rank["2+"] > 0
    def cold(profile):
        return NumbaBackend().estimate(PYMC_NUTS, profile, m).cold_compile_seconds

    empty_scalars, empty_nested = cold(scalars).value, cold(nested).value
    request = SampleRequest(draws=100, tune=100, chains=2)
    others = [profile_model(hierarchical_logistic(100 + 50 * i, 5, 2).model)
              for i in range(costmodel.USED_MACHINE_MODELS)]
    for i, other in enumerate(others):
        assert history.models_run_here(scalars, "numba") == i
        history.record(other, PYMC_NUTS, NumbaBackend().estimate(PYMC_NUTS, other, m), request,
                       9.0, _Result())
    assert history.models_run_here(scalars, "numba") == costmodel.USED_MACHINE_MODELS
    assert cold(scalars).value < empty_scalars / 3
    assert cold(nested).value > 0.9 * empty_nested
    assert f"has compiled {costmodel.USED_MACHINE_MODELS} others" in cold(scalars).note
    # the model's own run is not another model
    history.record(scalars, PYMC_NUTS, NumbaBackend().estimate(PYMC_NUTS, scalars, m), request,
                   9.0, _Result())
    assert history.models_run_here(scalars, "numba") == costmodel.USED_MACHINE_MODELS


def test_without_the_history_a_first_compile_is_not_known_and_not_charged(ledger, monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    profile = profile_model(eight_schools())
    seen = history.apply(NumbaBackend().estimate(NUTPIE, profile, _machine()), profile, NUTPIE)
    assert seen.cold_compile_seconds.value == 0
    assert "not known" in seen.cold_compile_seconds.note


def test_a_cold_runs_fixed_seconds_leave_its_first_compile_out(ledger):
    profile = profile_model(eight_schools())
    estimate = Estimate(Figure(1e-4), Figure(7.0), Figure(3.0), chain_parallelism=2,
                        cold_compile_seconds=Figure(6.0))
    request = SampleRequest(draws=100, tune=100, chains=2)
    history.record(profile, NUTPIE, estimate, request, 10.4, _Result())
    entry = history.lookup(profile, NUTPIE)
    assert entry["cold_compile_seconds"] == 6.0
    # 10.4 s shared as estimated: 3 s fixed, 6 s first compile, 200 x 7 leapfrogs at 0.1 ms,
    # both chains at once
    assert entry["fixed_seconds"] == pytest.approx(10.4 * 3.0 / (3.0 + 6.0 + 0.14))


def test_measured_mode_compiles_the_kernels_its_backend_runs(ledger):
    from types import SimpleNamespace

    from pymc_accel.measure import measure_candidates
    from pymc_accel.selection import _Scored

    def est(cold: float) -> Estimate:
        return Estimate(Figure(1e-4), Figure(5.0), Figure(1.0),
                        cold_compile_seconds=Figure(cold))

    scored = [_Scored(PYMC_NUTS, est(4.0), 0.0, 0.0), _Scored(NUTPIE, est(3.0), 0.0, 0.0),
              _Scored(Candidate("other", "cpu", "float64"), est(2.0), 0.0, 0.0)]
    timed = SimpleNamespace(measure=lambda c, *a: est(4.0))  # compiles and times the gradient
    registry = SimpleNamespace(backends={"numba": timed, "other": object()})
    measure_candidates(scored[:1] + scored[2:], object(), None, None, registry, budget=5.0,
                       steps=2000, draws=1000, chains=2)
    measure_candidates(scored[1:2], object(), None, None,
                       SimpleNamespace(backends={"numba": object()}), budget=5.0, steps=2000,
                       draws=1000, chains=2)
    assert scored[0].estimate.cold_compile_seconds.value == 0
    assert scored[0].estimate.cold_compile_seconds.source == "measured"
    assert scored[1].estimate.cold_compile_seconds.value == 3.0  # not measured in its call
    assert scored[2].estimate.cold_compile_seconds.value == 2.0  # its backend did not measure


def test_the_report_shows_the_first_compile(ledger):
    report = pymc_accel.select(eight_schools(), draws=1000, tune=1000, chains=2)
    rows = {r.label: r for r in report.rows if r.total_seconds is not None}
    nutpie = rows[NUTPIE.label]
    assert nutpie.cold_compile_seconds and nutpie.cold_compile_seconds > 0
    assert "compiling this model's kernels" in nutpie.reason
    assert "cold" in str(report)
    restored = SelectionReport.from_dict(report.to_dict())
    assert {r.label: r.cold_compile_seconds for r in restored.rows} == {
        r.label: r.cold_compile_seconds for r in report.rows}


def test_a_model_that_has_run_here_shares_its_first_compile_with_the_runs_expected_later(ledger):
    """A compile PyTensor keeps on disk serves every later run of the model: charging it whole
    to one run kept the selector off nutpie on the demo model for good (15.5 s of first use
    and first compile; 15 s a run once cached, against 28-39 s for the samplers chosen)."""
    profile, m = profile_model(eight_schools()), _machine()
    nutpie = NumbaBackend().estimate(NUTPIE, profile, m)
    cold = nutpie.cold_compile_seconds.value
    numpyro = JaxNutsBackend().estimate(NUMPYRO, profile, m)
    request = SampleRequest(draws=100, tune=100, chains=2)
    # a new model: the whole compile is charged to its first run
    first = history.apply(nutpie, profile, NUTPIE)
    assert first.later_runs_sharing_compile.value == 0
    assert first.charged_seconds(2000, 2) == first.total_seconds(2000, 2)
    # run once with NumPyro (no numba kernels cached): as many later runs are expected as so far
    history.record(profile, NUMPYRO, numpyro, request, 5.0, _Result())
    assert history.model_runs_here(profile) == 1
    once = history.apply(nutpie, profile, NUTPIE)
    assert once.cold_compile_seconds.value == pytest.approx(cold)  # the run still pays it all
    assert once.later_runs_sharing_compile.value == 1
    assert once.charged_seconds(2000, 2) == pytest.approx(once.total_seconds(2000, 2) - cold / 2)
    assert once.seconds_per_effective_draw(2000, 1000, 2) == pytest.approx(
        once.charged_seconds(2000, 2) / (2000 * once.relative_efficiency.value))
    assert "1 later run is expected" in once.later_runs_sharing_compile.note
    # many runs: capped, the run is charged at least 1 / (1 + cap) of it
    for _ in range(6):
        history.record(profile, NUMPYRO, numpyro, request, 5.0, _Result())
    many = history.apply(nutpie, profile, NUTPIE)
    assert history.model_runs_here(profile) == 7
    assert many.later_runs_sharing_compile.value == history.LATER_RUNS_CAP
    assert many.compile_shared_seconds() == pytest.approx(
        cold * history.LATER_RUNS_CAP / (1 + history.LATER_RUNS_CAP))
    # a backend without a first compile has nothing to share; another model has not run here
    assert history.apply(replace(numpyro, cold_compile_seconds=Figure(0.0)), profile,
                         NUMPYRO).compile_shared_seconds() == 0
    other = profile_model(hierarchical_logistic(500, 20, 2).model)
    assert history.apply(NumbaBackend().estimate(NUTPIE, other, m), other,
                         NUTPIE).later_runs_sharing_compile.value == 0


def test_the_ranking_shares_the_compile_and_the_report_says_so(ledger):
    model = eight_schools()
    profile = profile_model(model)
    numpyro = JaxNutsBackend().estimate(NUMPYRO, profile, _machine())
    history.record(profile, NUMPYRO, numpyro, SampleRequest(draws=100, tune=100, chains=2), 5.0,
                   _Result())
    history.record(profile, NUMPYRO, numpyro, SampleRequest(draws=100, tune=100, chains=2), 5.0,
                   _Result())
    report = pymc_accel.select(model, draws=1000, tune=1000, chains=2)
    rows = {r.label: r for r in report.rows if r.total_seconds is not None}
    nutpie = rows[NUTPIE.label]
    assert nutpie.cold_compile_seconds and nutpie.cold_compile_seconds > 0
    assert "ranked with" in nutpie.reason and "2 later runs are expected" in nutpie.reason
    # the estimated total is still the run's wall time, the compile whole in it
    from pymc_accel.selection import _Scored

    est = history.apply(NumbaBackend().estimate(NUTPIE, profile, _machine()), profile, NUTPIE)
    scored = _Scored(NUTPIE, est, 0.0, 0.0)
    scored.rescore(2000, 1000, 2)
    assert scored.total == pytest.approx(est.total_seconds(2000, 2))
    assert scored.key == pytest.approx(
        est.charged_seconds(2000, 2) / (2000 * est.relative_efficiency.value))
