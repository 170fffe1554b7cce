"""The run history: what an earlier run of the same model observed replaces modelled figures."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

import pymc_accel
from pymc_accel import history
from pymc_accel.backend import Candidate, Estimate, Figure, SampleRequest
from pymc_accel.models import eight_schools, hierarchical_logistic
from pymc_accel.profile import profile_model
from pymc_accel.report import SelectionReport

PYMC_NUTS = Candidate("numba", "cpu", "float64", (("driver", "pymc"),))
NUMPYRO = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))


class _Result:
    """The part of an InferenceData the ledger reads."""

    def __init__(self, leapfrogs: float):
        self.sample_stats = xr.Dataset({"n_steps": (("chain", "draw"), np.full((2, 50), leapfrogs))})


def _estimate() -> Estimate:
    return Estimate(Figure(1e-4), Figure(20.0), Figure(3.0), chain_parallelism=2,
                    extra_gradients=Figure(500.0), draw_start_gradients=Figure(1.0))


def _compiling() -> Estimate:
    """``_estimate()`` of a model's first run with a numba candidate: it is charged the first
    compile of the model's kernels, which PyTensor keeps in its disk cache for later runs."""
    from dataclasses import replace

    return replace(_estimate(), cold_compile_seconds=Figure(5.0))


def test_the_ledger_follows_the_cache_directory_and_home_it_is_read_under(monkeypatch, tmp_path):
    """The ledger's path is kept between reads, and built again when the setting changes."""
    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path / "a"))
    first = history.ledger_path()
    assert first.parent == tmp_path / "a" and history.ledger_path() is first
    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path / "b"))
    assert history.ledger_path().parent == tmp_path / "b"
    monkeypatch.delenv("PYMC_ACCEL_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert history.ledger_path().parent == tmp_path / "home" / ".cache" / "pymc-accel"


def test_the_key_is_the_models_structure_not_the_python_object():
    a = profile_model(eight_schools())
    b = profile_model(eight_schools())
    c = profile_model(hierarchical_logistic(500, 20, 2).model)
    assert history.model_key(a) == history.model_key(b) != history.model_key(c)


def test_a_recorded_run_replaces_leapfrogs_and_fixed_seconds(ledger):
    profile = profile_model(eight_schools())
    request = SampleRequest(draws=100, tune=100, chains=2)
    assert history.apply(_estimate(), profile, PYMC_NUTS) == _estimate()  # nothing recorded yet
    history.record(profile, PYMC_NUTS, _compiling(), request, 9.0, _Result(7.0))
    assert list(ledger.glob("history-*.json"))
    seen = history.apply(_estimate(), profile, PYMC_NUTS)
    assert seen.gradients_per_draw == Figure(7.0, "observed", seen.gradients_per_draw.note)
    # the first run compiled: its fixed seconds are not what the next run pays
    assert seen.fixed_seconds == _estimate().fixed_seconds
    history.record(profile, PYMC_NUTS, _estimate(), request, 2.5, _Result(7.0))
    seen = history.apply(_estimate(), profile, PYMC_NUTS)
    assert seen.fixed_seconds.source == "observed"
    # the run's wall time, split as the estimate (with the observed leapfrogs) splits it: 3.0 s
    # fixed against 200 steps x 8 gradients + 500 at 0.1 ms
    gradients = (200 * 8.0 + 500) * 1e-4
    assert seen.fixed_seconds.value == pytest.approx(2.5 * 3.0 / (3.0 + gradients))
    # other lengths add the modelled seconds per gradient (7 leapfrogs and the draw's start)
    assert (seen.total_seconds(2 * request.steps, 2) - seen.total_seconds(request.steps, 2)
            == pytest.approx(200 * 8.0 * 1e-4))
    # another candidate, or another model, has no history
    other = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    assert history.apply(_estimate(), profile, other) == _estimate()


def _nuts(profile, adaptation: str) -> Estimate:
    from dataclasses import replace

    from pymc_accel import costmodel

    return replace(_estimate(), **costmodel.nuts_trajectory(profile, adaptation))


def test_other_nuts_samplers_take_the_observed_trees_weighed_and_mala_does_not(ledger):
    from dataclasses import replace

    from pymc_accel import costmodel

    profile = profile_model(eight_schools())
    modelled = costmodel.nuts_gradients_per_draw(profile).value
    pymc_scale = costmodel.NUTS_TRAJECTORY_SCALE["pymc"]
    history.record(profile, PYMC_NUTS, _nuts(profile, "pymc"),
                   SampleRequest(draws=100, tune=100, chains=2), 2.0, _Result(22.0))
    nutpie = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    seen = history.apply(_nuts(profile, "nutpie"), profile, nutpie)
    # PyMC's 22 leapfrogs are 22 / 1.16 of nutpie's trees, weighed halfway with the modelled
    reference = (22.0 / pymc_scale) ** 0.5 * modelled**0.5
    assert seen.gradients_per_draw.value == pytest.approx(reference)
    assert seen.gradients_per_draw.source == "observed"
    assert PYMC_NUTS.label in seen.gradients_per_draw.note
    assert seen.relative_efficiency.value == pytest.approx(1.0)
    assert seen.fixed_seconds == _estimate().fixed_seconds  # its own compile is not known
    # the sampler that ran keeps its own trees, and the effective draws they buy
    own = history.apply(_nuts(profile, "pymc"), profile, PYMC_NUTS)
    assert own.gradients_per_draw.value == 22.0
    assert own.relative_efficiency.value == pytest.approx(22.0 / reference)
    # Stan's adaptation: the same reference, its own scale
    numpyro = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    stan = history.apply(_nuts(profile, "stan"), profile, numpyro)
    assert stan.gradients_per_draw.value == pytest.approx(
        reference * costmodel.NUTS_TRAJECTORY_SCALE["stan"])
    # ... and the effective draws its adaptation's gradients buy against nutpie's
    assert stan.relative_efficiency.value == pytest.approx(
        costmodel.NUTS_TRAJECTORY_SCALE["stan"] * costmodel.NUTS_GRADIENT_EFFICIENCY["stan"])
    mala = replace(_estimate(), gradients_per_draw=Figure(1.0, "modelled", "one per step"))
    assert history.apply(mala, profile, Candidate("deer_mala", "cpu", "float64")) == mala
    # a sampler that is not NUTS does not lend its steps either
    history.clear()
    history.record(profile, Candidate("deer_mala", "cpu", "float64"), mala,
                   SampleRequest(draws=100, tune=100, chains=2), 2.0, _Result(1.0))
    assert history.apply(_nuts(profile, "nutpie"), profile, nutpie) == _nuts(profile, "nutpie")


def test_a_nuts_run_with_deeper_trees_than_its_scale_is_credited_their_effective_draws(ledger):
    """seed_mid: PyMC's NUTS adapts 1.8x nutpie's trees there (1.16x modelled). Its observed
    leapfrogs must not count as gradient work that buys nothing: it is credited the effective
    draws they buy, and nutpie is not made as deep."""
    from pymc_accel import costmodel

    profile = profile_model(hierarchical_logistic(2000, 100, 5).model)
    modelled = costmodel.nuts_gradients_per_draw(profile).value
    observed = 1.8 * modelled
    history.record(profile, PYMC_NUTS, _nuts(profile, "pymc"),
                   SampleRequest(draws=500, tune=500, chains=2), 7.0, _Result(observed))
    nutpie = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    lent = history.apply(_nuts(profile, "nutpie"), profile, nutpie)
    own = history.apply(_nuts(profile, "pymc"), profile, PYMC_NUTS)
    assert modelled < lent.gradients_per_draw.value < observed / 1.16
    assert own.relative_efficiency.value > costmodel.NUTS_TRAJECTORY_SCALE["pymc"]
    # gradient work per effective draw stays level between the two
    assert (own.gradients_per_draw.value / own.relative_efficiency.value
            == pytest.approx(lent.gradients_per_draw.value / lent.relative_efficiency.value))


def test_the_history_can_be_switched_off(ledger, monkeypatch):
    profile = profile_model(eight_schools())
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    history.record(profile, PYMC_NUTS, _estimate(), SampleRequest(draws=10, tune=10, chains=2),
                   1.0, _Result(5.0))
    assert not list(ledger.glob("history-*.json"))
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "on")
    assert history.lookup(profile, PYMC_NUTS) is None


def test_a_corrupt_ledger_is_ignored_and_replaced(ledger):
    profile = profile_model(eight_schools())
    history.record(profile, PYMC_NUTS, _estimate(), SampleRequest(draws=10, tune=10, chains=2),
                   1.0, _Result(5.0))
    path = next(ledger.glob("history-*.json"))
    path.write_text("{not json")
    assert history.lookup(profile, PYMC_NUTS) is None
    history.record(profile, PYMC_NUTS, _estimate(), SampleRequest(draws=10, tune=10, chains=2),
                   1.0, _Result(5.0))
    assert history.lookup(profile, PYMC_NUTS)["leapfrogs_per_draw"] == 5.0


def test_a_second_sample_of_the_same_model_is_selected_with_what_the_first_observed(ledger):
    kwargs = dict(nuts_sampler="numba", driver="pymc", draws=60, tune=60, chains=2,
                  random_seed=1, progressbar=False, quiet=True, compute_convergence_checks=False)
    first = SelectionReport.from_idata(pymc_accel.sample(model=eight_schools(), **kwargs))
    assert "observed" not in first.rows[0].sources
    second = SelectionReport.from_idata(pymc_accel.sample(model=eight_schools(), **kwargs))
    chosen = next(r for r in second.rows if r.status == "chosen")
    # the model is rebuilt (a new Python object); its first run's compile is not reused
    assert "grads/draw observed" in chosen.sources and "compile modelled" in chosen.sources
    idata = pymc_accel.sample(model=eight_schools(), **kwargs)
    third = SelectionReport.from_idata(idata)
    chosen = next(r for r in third.rows if r.status == "chosen")
    assert "grads/draw observed" in chosen.sources and "compile observed" in chosen.sources
    assert "observed:" in chosen.reason
    assert chosen.gradients_per_draw == pytest.approx(float(idata.sample_stats["n_steps"].mean()),
                                                      rel=0.5)


def test_a_run_slower_than_estimated_is_not_all_start_up(ledger):
    """A run in a slow hour took twice its estimate: half of its gradient share must not turn
    into start-up seconds that make the sampler look slow at every length after."""
    profile = profile_model(eight_schools())
    request = SampleRequest(draws=500, tune=500, chains=2)
    est = Estimate(Figure(2e-3), Figure(7.0), Figure(4.0), chain_parallelism=2)  # 4 s + 14 s
    for wall in (30.0, 36.0):  # the first run compiled; the second is the one used
        history.record(profile, PYMC_NUTS, est, request, wall, _Result(7.0))
    seen = history.apply(est, profile, PYMC_NUTS)
    assert seen.fixed_seconds.value == pytest.approx(36.0 * 4.0 / 18.0)  # 8 s, not 22 s
    assert "fixed share" in seen.fixed_seconds.note


def _fixed_ratio_of_wall(wall: float, request: SampleRequest) -> float:
    """The observed fixed over the modelled fixed of a run of ``_estimate()`` taking ``wall``."""
    gradients = (request.steps * 8.0 + 500) * 1e-4  # 7 leapfrogs + the draw's start, observed
    return wall / (3.0 + gradients)


def test_a_samplers_cached_runs_of_other_models_set_its_machine_pace(ledger):
    schools = profile_model(eight_schools())
    logistic = profile_model(hierarchical_logistic(500, 20, 2).model)
    request = SampleRequest(draws=100, tune=100, chains=2)
    # one run of another model: it compiled, so it says nothing of this machine's pace yet
    history.record(schools, PYMC_NUTS, _compiling(), request, 9.0, _Result(7.0))
    assert history.machine_pace(logistic, PYMC_NUTS) is None
    assert history.apply(_estimate(), logistic, PYMC_NUTS).fixed_seconds == _estimate().fixed_seconds
    # its second, cached run took half its estimate: this machine compiles at half the pace
    history.record(schools, PYMC_NUTS, _estimate(), request, 1.6, _Result(7.0))
    # one model's pace, shrunk towards the cost model's as if one more had run at its pace
    ratio = _fixed_ratio_of_wall(1.6, request) ** (1 / (1 + history.PACE_PRIOR_MODELS))
    assert history.machine_pace(logistic, PYMC_NUTS) == (pytest.approx(ratio), 1)
    seen = history.apply(_estimate(), logistic, PYMC_NUTS)
    assert seen.fixed_seconds.source == "observed"
    assert seen.fixed_seconds.value == pytest.approx(3.0 * ratio)
    assert "pace" in seen.fixed_seconds.note and seen.modelled_fixed_seconds == 3.0
    # gradients, leapfrogs and effective draws of a model that has not run stay modelled
    assert seen.gradients_per_draw == _estimate().gradients_per_draw
    assert seen.seconds_per_gradient == _estimate().seconds_per_gradient
    # another sampler compiles differently: no pace from PyMC's NUTS
    nutpie = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    assert history.apply(_estimate(), logistic, nutpie) == _estimate()
    # the model's own cached runs, where it has them, are what count for it
    assert history.machine_pace(schools, PYMC_NUTS) is None


def test_a_paced_run_records_its_ratio_against_the_modelled_fixed_seconds(ledger):
    schools = profile_model(eight_schools())
    logistic = profile_model(hierarchical_logistic(500, 20, 2).model)
    request = SampleRequest(draws=100, tune=100, chains=2)
    for wall in (9.0, 1.6):
        history.record(schools, PYMC_NUTS, _estimate(), request, wall, _Result(7.0))
    paced = history.apply(_estimate(), logistic, PYMC_NUTS)
    for wall in (9.0, 1.6):
        history.record(logistic, PYMC_NUTS, paced, request, wall, _Result(7.0))
    entry = history.lookup(logistic, PYMC_NUTS)
    # the ratio is taken against the modelled 3.0 s, not the paced figure: paces do not compound
    assert entry["modelled_fixed_seconds"] == 3.0
    assert entry["fixed_ratio"] == pytest.approx(entry["fixed_seconds"] / 3.0)


def test_a_machine_pace_is_bounded(ledger):
    schools = profile_model(eight_schools())
    logistic = profile_model(hierarchical_logistic(500, 20, 2).model)
    request = SampleRequest(draws=100, tune=100, chains=2)
    for wall in (900.0, 900.0):  # an odd, very slow hour of the machine
        history.record(schools, PYMC_NUTS, _estimate(), request, wall, _Result(7.0))
    assert history.machine_pace(logistic, PYMC_NUTS) == (history.PACE_BOUNDS[1], 1)


def test_measured_figures_serve_later_selections_and_are_not_runs(ledger):
    from dataclasses import replace

    profile = profile_model(eight_schools())
    measured = replace(_estimate(), seconds_per_gradient=Figure(2e-5, "measured", "timed"),
                       fixed_seconds=Figure(0.15, "measured", "kept"), precompiled_seconds=1.2)
    history.record_measured(profile, PYMC_NUTS, measured)
    seen = history.apply(_estimate(), profile, PYMC_NUTS)
    assert seen.seconds_per_gradient.value == 2e-5
    assert seen.seconds_per_gradient.source == "measured"
    # a run that compiles pays the compile measured mode timed, and the start-up left
    assert seen.fixed_seconds.source == "measured"
    assert seen.fixed_seconds.value == pytest.approx(1.35)
    assert seen.modelled_fixed_seconds == 3.0
    # measuring is not a run: the model's first run is still its first, and keeps them
    request = SampleRequest(draws=100, tune=100, chains=2)
    history.record(profile, PYMC_NUTS, _compiling(), request, 9.0, _Result(7.0))
    entry = history.lookup(profile, PYMC_NUTS)
    assert entry["runs"] == 1 and entry["measured"]["seconds_per_gradient"] == 2e-5
    assert history.apply(_estimate(), profile, PYMC_NUTS).fixed_seconds.source == "measured"
    # figures the backend did not measure are not kept
    history.record_measured(profile, PYMC_NUTS, _estimate())
    assert history.lookup(profile, PYMC_NUTS)["measured"]["seconds_per_gradient"] == 2e-5


def test_a_candidate_takes_its_twins_run_in_the_other_precision(ledger):
    """A float32 candidate that has not run the model is not priced as a stranger beside its
    float64 twin that has: it takes the twin's trees and the twin's fixed seconds' ratio to the
    modelled ones (before, the float32 twin looked cheaper by the machine's pace alone and was
    chosen, its accuracy check paid, on models where float32 gains nothing)."""
    from dataclasses import replace

    schools = profile_model(eight_schools())
    logistic = profile_model(hierarchical_logistic(500, 20, 2).model)
    request = SampleRequest(draws=100, tune=100, chains=2)
    f64 = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    f32 = replace(f64, precision="float32")
    assert history.other_precision(f32) == f64 and history.other_precision(f64) == f32
    est = _nuts(schools, "stan")
    assert history.apply(est, schools, f32) == est  # nothing recorded yet
    for wall in (9.0, 1.6):  # a compiling run, then a cached one
        history.record(schools, f64, est, request, wall, _Result(7.0))
    twin = history.apply(est, schools, f64)
    seen = history.apply(est, schools, f32)
    assert seen.gradients_per_draw.value == twin.gradients_per_draw.value == 7.0
    assert "float64" in seen.gradients_per_draw.note
    assert seen.relative_efficiency.value == pytest.approx(twin.relative_efficiency.value)
    # the twin's fixed seconds against its modelled ones, applied to this candidate's modelled
    cheaper = replace(est, fixed_seconds=Figure(1.5))
    lent = history.apply(cheaper, schools, f32)
    ratio = history.lookup(schools, f64)["fixed_ratio"]
    assert lent.fixed_seconds.value == pytest.approx(1.5 * ratio)
    assert lent.fixed_seconds.source == "observed" and "float64" in lent.fixed_seconds.note
    # and on another model, the twin's runs set the machine pace as the candidate's own would
    assert history.machine_pace(logistic, f32) == history.machine_pace(logistic, f64) is not None
    # a sampler of another backend lends nothing
    blackjax = Candidate("blackjax_nuts", "cpu", "float32", (("chain_method", "parallel"),))
    assert history.machine_pace(logistic, blackjax) is None


def test_a_run_slower_than_estimated_in_sampling_corrects_its_seconds_per_gradient(ledger):
    """The demo model's NumPyro runs took twice their estimate, nearly all of it sampling; with
    only trees and fixed seconds corrected, the next selection still priced it at 420 µs a
    gradient and chose it again. The run's wall time over its estimate now scales the seconds
    per gradient, so the next estimate of the same run is close to what it took."""
    profile = profile_model(eight_schools())
    request = SampleRequest(draws=500, tune=500, chains=2)
    est = Estimate(Figure(2e-3), Figure(7.0), Figure(4.0), chain_parallelism=2)  # 4 s + 14 s
    history.record(profile, NUMPYRO, est, request, 36.0, _Result(7.0))
    seen = history.apply(est, profile, NUMPYRO)
    factor = 2.0 ** history.OBSERVED_GRADIENT_WEIGHT
    assert seen.seconds_per_gradient.source == "observed"
    assert seen.seconds_per_gradient.value == pytest.approx(2e-3 * factor)
    assert "2.00x its estimate" in seen.seconds_per_gradient.note
    assert seen.seconds_per_gradient_before_runs == 2e-3
    # the first run compiled: its fixed seconds wait for a second run, its sampling does not
    assert seen.fixed_seconds == est.fixed_seconds
    history.record(profile, NUMPYRO, seen, request, 36.0, _Result(7.0))
    again = history.apply(est, profile, NUMPYRO)
    # the run split as before the correction: the fixed share is 4/18 of it, not less
    assert again.fixed_seconds.value == pytest.approx(8.0)
    assert again.seconds_per_gradient.value == pytest.approx(2e-3 * factor)  # not compounded
    assert again.total_seconds(request.steps, 2) == pytest.approx(36.0, rel=0.05)
    # the ratio is kept against the figure before runs, whatever estimate the run was priced by
    assert history.lookup(profile, NUMPYRO)["gradient_ratio"] == pytest.approx(2.0)
    assert history.lookup(profile, NUMPYRO)["fixed_ratio"] == pytest.approx(2.0)
    # a third run, priced with the second's fixed seconds as well, is split as the first two:
    # split by the corrected 8 s, its ratio came out 36 / 22 = 1.64 and its fixed ratio 3.3
    history.record(profile, NUMPYRO, again, request, 36.0, _Result(7.0))
    assert history.lookup(profile, NUMPYRO)["gradient_ratio"] == pytest.approx(2.0)
    assert history.lookup(profile, NUMPYRO)["fixed_ratio"] == pytest.approx(2.0)


def test_a_run_mostly_spent_compiling_leaves_the_seconds_per_gradient_modelled(ledger):
    profile = profile_model(eight_schools())
    request = SampleRequest(draws=100, tune=100, chains=2)
    est = Estimate(Figure(1e-4), Figure(7.0), Figure(3.0), chain_parallelism=2,
                   cold_compile_seconds=Figure(5.0))
    history.record(profile, PYMC_NUTS, est, request, 16.0, _Result(7.0))  # 2x its 8.2 s
    seen = history.apply(est, profile, PYMC_NUTS)
    assert seen.seconds_per_gradient == est.seconds_per_gradient
    assert "gradient_ratio" not in history.lookup(profile, PYMC_NUTS)


def test_a_candidate_takes_its_twins_gradient_ratio_and_keeps_its_own_timing(ledger):
    from dataclasses import replace

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=500, tune=500, chains=2)
    f64 = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    f32 = replace(f64, precision="float32")
    est = Estimate(Figure(2e-3), Figure(7.0), Figure(4.0), chain_parallelism=2)
    history.record(profile, f64, est, request, 27.0, _Result(7.0))  # 1.5x its 18 s
    cheaper = replace(est, seconds_per_gradient=Figure(1e-3))  # float32's modelled gradient
    lent = history.apply(cheaper, profile, f32)
    assert lent.seconds_per_gradient.value == pytest.approx(
        1e-3 * 1.5 ** history.OBSERVED_GRADIENT_WEIGHT)
    assert "float64" in lent.seconds_per_gradient.note
    # a gradient measure=True timed for the candidate itself is not replaced by its twin's run
    timed = replace(cheaper, seconds_per_gradient=Figure(8e-4, "measured", "timed"))
    history.record_measured(profile, f32, timed)
    assert history.apply(cheaper, profile, f32).seconds_per_gradient.value == 8e-4
    # other backends lend nothing
    blackjax = Candidate("blackjax_nuts", "cpu", "float32", (("chain_method", "parallel"),))
    assert history.apply(cheaper, profile, blackjax).seconds_per_gradient == Figure(1e-3)



def test_a_candidate_without_runs_takes_its_gradient_kins_ratio(ledger):
    """BlackJAX's NUTS runs NumPyro's gradient at NumPyro's cost a leapfrog
    (``Estimate.gradient_kin``): where neither it nor its twin has run the model, NumPyro's run
    corrects its seconds per gradient as it corrects NumPyro's. Without it, on the demo model
    NumPyro's run (1.5x its estimate a gradient) corrected NumPyro alone, and BlackJAX was
    chosen at its modelled figure and took 47 s where nutpie takes 22-27 s."""
    from dataclasses import replace

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=500, tune=500, chains=2)
    est = Estimate(Figure(2e-3), Figure(7.0), Figure(4.0), chain_parallelism=2)
    history.record(profile, NUMPYRO, est, request, 27.0, _Result(7.0))  # 1.5x its 18 s
    kin = replace(est, gradient_kin="numpyro")
    factor = 1.5 ** history.OBSERVED_GRADIENT_WEIGHT
    for precision in ("float64", "float32"):  # the kin's run in either precision
        blackjax = Candidate("blackjax_nuts", "cpu", precision, (("chain_method", "parallel"),))
        lent = history.apply(kin, profile, blackjax)
        assert lent.seconds_per_gradient.value == pytest.approx(2e-3 * factor)
        assert lent.seconds_per_gradient.source == "observed"
        assert NUMPYRO.label in lent.seconds_per_gradient.note
    # a timing of its own is not replaced by the kin's run
    timed = replace(kin, seconds_per_gradient=Figure(8e-4, "measured", "timed"))
    assert history.apply(timed, profile, blackjax).seconds_per_gradient == Figure(
        8e-4, "measured", "timed")
    # and its own run, once it has one, is what corrects it
    blackjax = Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),))
    history.record(profile, blackjax, kin, request, 18.0, _Result(7.0))  # as estimated
    assert history.apply(kin, profile, blackjax).seconds_per_gradient.value == pytest.approx(2e-3)



def test_a_newer_run_of_the_same_gradient_corrects_a_candidates_older_one(ledger, monkeypatch):
    """On the demo model NumPyro's one slow run (1.85x its estimate a gradient) kept it priced
    at 1.7x BlackJAX's, whose later run took what was estimated; run side by side, the two take
    the same time. The newest run of the gradient, by either of them, in the candidate's
    precision, corrects both; a run in the other precision does not overrule one's own."""
    from dataclasses import replace

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=500, tune=500, chains=2)
    est = Estimate(Figure(2e-3), Figure(7.0), Figure(4.0), chain_parallelism=2)
    kin = replace(est, gradient_kin="numpyro")
    blackjax = Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),))
    clock = iter(f"2026-11-29 10:0{i}:00" for i in range(10))
    monkeypatch.setattr(history.time, "strftime", lambda *_: next(clock))
    history.record(profile, NUMPYRO, est, request, 27.0, _Result(7.0))  # 1.5x its 18 s
    slow = history.apply(est, profile, NUMPYRO).seconds_per_gradient.value
    assert slow > 2e-3
    # BlackJAX in the other precision, as estimated: NumPyro keeps its own run's ratio
    history.record(profile, history.other_precision(blackjax), kin, request, 18.0, _Result(7.0))
    assert history.apply(est, profile, NUMPYRO).seconds_per_gradient.value == pytest.approx(slow)
    # BlackJAX in NumPyro's precision, later, as estimated: NumPyro takes its ratio
    history.record(profile, blackjax, kin, request, 18.0, _Result(7.0))
    assert history.lookup(profile, blackjax)["gradient_kin"] == "numpyro"
    lent = history.apply(est, profile, NUMPYRO).seconds_per_gradient
    assert lent.value == pytest.approx(2e-3)
    assert blackjax.label in lent.note and "after this candidate's" in lent.note
    # NumPyro's own run, once the newest, is taken again, by BlackJAX too
    history.record(profile, NUMPYRO, est, request, 27.0, _Result(7.0))
    assert history.apply(est, profile, NUMPYRO).seconds_per_gradient.value == pytest.approx(slow)
    assert history.apply(kin, profile, blackjax).seconds_per_gradient.value == pytest.approx(slow)


NUTPIE = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))


class _Run(_Result):
    """A run's sample stats and a posterior whose draws mix as an AR(1) chain of coefficient
    ``rho`` (about ``(1 - rho) / (1 + rho)`` effective draws a draw)."""

    def __init__(self, leapfrogs: float, rho: float, draws: int = 1000, seed: int = 0):
        self.sample_stats = xr.Dataset(
            {"n_steps": (("chain", "draw"), np.full((2, draws), leapfrogs))})
        rng = np.random.default_rng(seed)
        noise = rng.standard_normal((2, draws, 3))
        x = np.empty_like(noise)
        x[:, 0] = noise[:, 0]
        for t in range(1, draws):
            x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * noise[:, t]
        self.posterior = xr.Dataset({"mu": (("chain", "draw"), x[:, :, 0]),
                                     "theta": (("chain", "draw", "school"), x[:, :, 1:])})


def test_a_run_records_its_smallest_effective_draws_per_draw():
    independent = history.observed_ess_per_draw(_Run(7.0, 0.0))
    assert independent == pytest.approx(1.0, abs=0.15)
    correlated = history.observed_ess_per_draw(_Run(7.0, 0.5))
    assert correlated == pytest.approx(1 / 3, rel=0.3)
    # under ESS_RECORD_MINIMUM effective draws the figure is noise, and not kept
    assert history.observed_ess_per_draw(_Run(7.0, 0.99, draws=200)) is None
    assert history.observed_ess_per_draw(_Result(7.0)) is None  # no posterior


def test_a_large_variable_is_judged_on_evenly_spaced_elements(monkeypatch):
    run = _Run(7.0, 0.0)
    wide = np.random.default_rng(1).standard_normal((2, 1000, 500))
    wide[:, :, 0] = np.cumsum(wide[:, :, 0], axis=1)  # one element that barely mixes
    run.posterior = xr.Dataset({"z": (("chain", "draw", "i"), wide)})
    assert history.observed_ess_per_draw(run) is None  # the first element is always taken
    wide[:, :, 0] = wide[:, :, 1]
    wide[:, :, 7] = np.cumsum(wide[:, :, 7], axis=1)  # between the 16 taken: not seen
    assert history.observed_ess_per_draw(run) == pytest.approx(1.0, abs=0.15)
    calls = []
    from arviz_stats.base import array_stats

    real = array_stats.ess

    def counting(values, **kwargs):
        calls.append((kwargs.get("method"), values.size))
        return real(values, **kwargs)

    monkeypatch.setattr(array_stats, "ess", counting)
    history.observed_ess_per_draw(run)
    # of the 16 elements taken, ArviZ computes the bulk ESS of the slowest few only, found by
    # their ESS of the mean
    assert calls == [("mean", 2 * 1000 * history.ESS_ELEMENTS_PER_VARIABLE),
                     ("bulk", 2 * 1000 * history.ESS_SCREENED_SERIES)]


class _Shard:
    def __init__(self, index, data):
        self.index, self.data = index, data


class _ShardedDraws:
    """A stand-in for a JAX array whose chains are split over devices (as PyMC's JAX samplers
    leave the posterior): it can be read shard by shard, and turning it whole into a NumPy
    array, the copy the record avoids, fails."""

    def __init__(self, values, splits):
        self.shape, self.dtype, self.ndim = values.shape, values.dtype, values.ndim
        bounds = [0, *splits, values.shape[0]]
        rest = (slice(None),) * (values.ndim - 1)
        self.addressable_shards = [_Shard((slice(a, b), *rest), values[a:b])
                                   for a, b in zip(bounds, bounds[1:])][::-1]  # out of order

    def __array__(self, *args, **kwargs):
        raise AssertionError("the whole array was copied")


def test_the_record_reads_only_the_elements_it_takes_from_sharded_chains():
    """A large deterministic (the ordered logistic model's 10,000 category probabilities, 80 MB)
    was copied whole into NumPy to take 16 of its elements: recording a run at pm.sample's
    defaults took 22-110 ms where it takes 7-11 ms (bench/time_run_record.py)."""
    rng = np.random.default_rng(3)
    values = rng.standard_normal((4, 1000, 50, 20))
    for t in range(1, 1000):  # the first element, always taken, mixes as an AR(1) chain
        values[:, t, 0, 0] = 0.5 * values[:, t - 1, 0, 0] + 0.87 * values[:, t, 0, 0]
    plain = _Run(7.0, 0.0)
    plain.posterior = xr.Dataset({"p": (("chain", "draw", "i", "j"), values)})
    expected = history.observed_ess_per_draw(plain)
    assert expected == pytest.approx(1 / 3, rel=0.3)
    blocks = history._chain_blocks(_ShardedDraws(values, [1, 3]))
    assert [b.shape[0] for b in blocks] == [1, 2, 1]  # in chain order, not the shards' order
    assert np.array_equal(np.concatenate(blocks), values)
    sharded = _Run(7.0, 0.0)  # a dataset's shape, around the stand-in (xarray would copy it)
    sharded.posterior = SimpleNamespace(data_vars={"p": SimpleNamespace(
        dims=("chain", "draw", "i", "j"), dtype=values.dtype, shape=values.shape,
        data=_ShardedDraws(values, [2]))})
    assert history.observed_ess_per_draw(sharded) == pytest.approx(expected)


def test_chains_not_split_alone_are_copied_whole():
    values = np.arange(2 * 3 * 4.0).reshape(2, 3, 4)

    class Copied(_ShardedDraws):
        def __array__(self, *args, **kwargs):
            return values

    split_inside = Copied(values, [1])
    for shard in split_inside.addressable_shards:  # split along the draws as well
        shard.index = (shard.index[0], slice(0, 2), slice(None))
    assert np.array_equal(history._chain_blocks(split_inside)[0], values)
    replicated = _ShardedDraws(values, [])  # read in place: a whole copy would fail
    replicated.addressable_shards *= 2  # every device holds all the chains
    blocks = history._chain_blocks(replicated)
    assert len(blocks) == 1 and np.array_equal(blocks[0], values)


def test_the_record_reads_a_jax_array_sharded_over_cpu_devices():
    jax = pytest.importorskip("jax")
    devices = jax.devices("cpu")
    if len(devices) < 2:
        pytest.skip("one XLA CPU device")
    values = np.random.default_rng(4).standard_normal((2, 1000, 40)).astype(np.float32)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    sharded = jax.device_put(values, NamedSharding(Mesh(np.array(devices[:2]), ("chain",)),
                                                   PartitionSpec("chain")))
    assert len(sharded.addressable_shards) == 2
    blocks = history._chain_blocks(sharded)
    assert len(blocks) == 2 and np.array_equal(np.concatenate(blocks), values)
    run = _Run(7.0, 0.0)
    run.posterior = xr.Dataset({"x": (("chain", "draw", "i"), values)})
    on_devices = _Run(7.0, 0.0)
    on_devices.posterior = xr.Dataset({"x": (("chain", "draw", "i"), sharded)})
    assert history.observed_ess_per_draw(on_devices) == pytest.approx(
        history.observed_ess_per_draw(run))


def test_the_record_finds_the_slowest_series_without_computing_every_ess():
    """ArviZ's bulk ESS was most of recording a small model's run; its ESS of the mean, at a
    fraction of the cost, hands it the slowest few series, and the smallest ESS is the one over
    all: of autocorrelated series, and of series whose chains disagree."""
    from arviz_stats.base import array_stats

    rng = np.random.default_rng(2)
    draws = rng.standard_normal((2, 1000, 30))
    for j, rho in ((29, 0.8), (11, 0.6), (3, 0.3)):  # AR(1) series among independent ones
        for t in range(1, 1000):
            draws[:, t, j] = rho * draws[:, t - 1, j] + np.sqrt(1 - rho**2) * draws[:, t, j]

    def run_of(values):
        run = _Run(7.0, 0.0)
        run.posterior = xr.Dataset({"a": (("chain", "draw", "i"), values[:, :, :15]),
                                    "b": (("chain", "draw", "j"), values[:, :, 15:])})
        return run

    every = array_stats.ess(draws, chain_axis=0, draw_axis=1, method="bulk")
    assert every.min() >= history.ESS_RECORD_MINIMUM
    assert history.observed_ess_per_draw(run_of(draws)) == pytest.approx(every.min() / 2000)
    # an element whose two chains sit half a standard deviation apart, with no
    # autocorrelation: the smallest ESS of all, under the record's minimum, so not recorded
    apart = draws.copy()
    apart[1, :, 20] += 0.5
    every = array_stats.ess(apart, chain_axis=0, draw_axis=1, method="bulk")
    assert int(np.argmin(every)) == 20 and every.min() < history.ESS_RECORD_MINIMUM
    assert history.observed_ess_per_draw(run_of(apart)) is None


def test_two_nuts_samplers_effective_draws_are_ranked_as_observed(ledger):
    """The zoo's linear GLM: nutpie chosen, NumPyro 1.29x faster, because NumPyro got 1.5x
    nutpie's effective draws per draw where the cost model credits 1.17x. Once both have run,
    each is credited what it got."""
    import arviz_stats  # noqa: F401  (loaded, as PyMC's convergence checks load it)

    from pymc_accel import costmodel

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=1000, tune=1000, chains=2)
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0, _Run(6.0, 0.5))
    # one sampler's effective draws change nothing: the reference is read from it
    modelled_stan = history.apply(_nuts(profile, "stan"), profile, NUMPYRO)
    own = history.apply(_nuts(profile, "nutpie"), profile, NUTPIE)
    assert own.relative_efficiency.value == pytest.approx(6.0 / history._reference_leapfrogs(
        profile)[0])
    assert "as observed" in own.relative_efficiency.note
    assert modelled_stan.relative_efficiency.value == pytest.approx(
        costmodel.NUTS_TRAJECTORY_SCALE["stan"] * costmodel.NUTS_GRADIENT_EFFICIENCY["stan"])
    assert history.lookup(profile, NUTPIE)["gradient_efficiency"] == pytest.approx(1.0)
    # NumPyro runs: 7 leapfrogs a draw, nearly independent draws
    history.record(profile, NUMPYRO, modelled_stan, request, 2.0, _Run(7.0, 0.0, seed=1))
    assert history.lookup(profile, NUMPYRO)["gradient_efficiency"] == pytest.approx(
        costmodel.NUTS_GRADIENT_EFFICIENCY["stan"])
    stan = history.apply(_nuts(profile, "stan"), profile, NUMPYRO)
    nutpie = history.apply(_nuts(profile, "nutpie"), profile, NUTPIE)
    observed = {c: history.lookup(profile, c)["ess_per_draw"] for c in (NUTPIE, NUMPYRO)}
    assert observed[NUMPYRO] / observed[NUTPIE] > 2  # AR(1) at 0.5: a third of the draws
    # the two are credited the ratio of effective draws per draw they got
    assert (stan.relative_efficiency.value / nutpie.relative_efficiency.value
            == pytest.approx(observed[NUMPYRO] / observed[NUTPIE]))
    assert "as observed" in stan.relative_efficiency.note
    # a sampler that has not run keeps its adaptation's modelled efficiency per gradient
    pymc = history.apply(_nuts(profile, "pymc"), profile, PYMC_NUTS)
    assert pymc.relative_efficiency.note.startswith(
        f"effective draws per gradient {costmodel.NUTS_GRADIENT_EFFICIENCY['pymc']:.2f}x")
    # the twin in float32 is the same algorithm: it takes NumPyro's observed efficiency
    twin = history.apply(_nuts(profile, "stan"), profile, history.other_precision(NUMPYRO))
    assert twin.relative_efficiency.value == pytest.approx(stan.relative_efficiency.value)


def test_one_samplers_runs_in_both_precisions_are_pooled(ledger):
    """The demo model's NumPyro took 31 leapfrogs a draw in a float32 run (its seed) and 63 in a
    float64 run that recorded its effective draws; float32 was priced from its own trees and
    float64's effective draws per gradient, at half float64's effective draws a draw. Both
    precisions of one sampler now take the two runs' geometric mean."""
    import arviz_stats  # noqa: F401  (loaded, as PyMC's convergence checks load it)

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=1000, tune=1000, chains=2)
    f32 = history.other_precision(NUMPYRO)
    est = _nuts(profile, "stan")
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0, _Run(6.0, 0.0))
    history.record(profile, NUMPYRO, est, request, 2.0, _Run(63.0, 0.5, seed=2))
    alone = history.apply(est, profile, NUMPYRO).seconds_per_gradient
    assert alone.source == "observed"  # corrected by its run
    history.record(profile, f32, est, request, 2.0, _Result(31.0))  # no effective draws kept
    assert "ess_per_gradient" not in history.lookup(profile, f32)
    single, double = history.apply(est, profile, f32), history.apply(est, profile, NUMPYRO)
    # a run's correction of the seconds per gradient is taken at the leapfrogs it took
    assert double.seconds_per_gradient.value == pytest.approx(alone.value)
    pooled = math.sqrt(31.0 * 63.0)
    assert single.gradients_per_draw.value == pytest.approx(pooled)
    assert double.gradients_per_draw.value == pytest.approx(pooled)
    assert "geometric mean" in single.gradients_per_draw.note
    assert single.relative_efficiency.value == pytest.approx(double.relative_efficiency.value)
    # effective draws recorded in both precisions are pooled too: summed, with their gradients
    history.record(profile, f32, est, request, 2.0, _Run(31.0, 0.0, seed=3))
    entries = [history.lookup(profile, c) for c in (f32, NUMPYRO)]
    summed = (sum(e["ess_effective_draws"] for e in entries)
              / sum(e["ess_gradients"] for e in entries))
    assert min(e["ess_per_gradient"] for e in entries) < summed < max(
        e["ess_per_gradient"] for e in entries)
    seen = history.apply(est, profile, f32)
    reference = history._reference_ess_per_gradient(profile)[0]
    assert "2 runs" in seen.relative_efficiency.note
    assert seen.relative_efficiency.value == pytest.approx(
        summed / reference * pooled / history._reference_leapfrogs(profile)[0])
    assert seen.relative_efficiency.value == pytest.approx(
        history.apply(est, profile, NUMPYRO).relative_efficiency.value)


def test_a_trial_that_did_not_finish_counts_as_tried_not_as_a_compile(ledger):
    import arviz_stats  # noqa: F401  (loaded, as PyMC's convergence checks load it)

    profile = profile_model(eight_schools())
    assert not history.ran(profile, NUTPIE)
    history.mark_tried(profile, NUTPIE)
    assert history.ran(profile, NUTPIE) and history.ran(profile, history.other_precision(NUTPIE))
    assert history.compiled_here(profile, NUTPIE) is None  # it may have failed compiling
    other = profile_model(hierarchical_logistic(500, 20, 2).model)
    assert history.models_run_here(other, "numba") == 0
    # its run, once it finishes, replaces the note
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"),
                   SampleRequest(draws=1000, tune=1000, chains=2), 2.0, _Run(6.0, 0.0))
    assert "tried" not in history.lookup(profile, NUTPIE)
    assert history.compiled_here(profile, NUTPIE) == NUTPIE.label


def test_a_run_without_arviz_loaded_records_no_effective_draws(ledger, monkeypatch):
    """PyMC's convergence checks (on by default) load ArviZ's statistics; a run without them
    must not pay their import for the record."""
    import sys

    profile = profile_model(eight_schools())
    monkeypatch.delitem(sys.modules, "arviz_stats", raising=False)  # loaded or not
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"),
                   SampleRequest(draws=1000, tune=1000, chains=2), 2.0, _Run(6.0, 0.0))
    entry = history.lookup(profile, NUTPIE)
    assert entry["leapfrogs_per_draw"] == 6.0 and "ess_per_draw" not in entry


def test_a_sampler_that_has_not_run_takes_the_observed_efficiency_of_its_adaptation(ledger):
    """A held-out logistic regression: NumPyro's runs showed Stan's adaptation at 0.65x
    nutpie's effective draws, and BlackJAX, which runs the same adaptation and had not run,
    kept the modelled 0.85x and was chosen over both."""
    import arviz_stats  # noqa: F401  (loaded, as PyMC's convergence checks load it)

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=1000, tune=1000, chains=2)
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0, _Run(6.0, 0.0))
    history.record(profile, NUMPYRO, _nuts(profile, "stan"), request, 2.0, _Run(8.0, 0.6))
    blackjax = Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),))
    numpyro = history.apply(_nuts(profile, "stan"), profile, NUMPYRO)
    lent = history.apply(_nuts(profile, "stan"), profile, blackjax)
    # the same effective draws per gradient
    assert (lent.relative_efficiency.value / lent.gradients_per_draw.value == pytest.approx(
        numpyro.relative_efficiency.value / numpyro.gradients_per_draw.value))
    assert "for its adaptation" in lent.relative_efficiency.note
    # and the same trees: NumPyro's 8 a draw, not the reference's times Stan's scale (logistic_31:
    # BlackJAX given 9 where NumPyro took 7, and chosen over it on the deeper trees' credit)
    assert lent.gradients_per_draw.value == pytest.approx(8.0)
    assert lent.relative_efficiency.value == pytest.approx(numpyro.relative_efficiency.value)
    assert "the same adaptation" in lent.gradients_per_draw.note
    assert NUMPYRO.label in lent.relative_efficiency.note
    # PyMC's NUTS runs another adaptation: it keeps its modelled efficiency per gradient
    pymc = history.apply(_nuts(profile, "pymc"), profile, PYMC_NUTS)
    assert "for its adaptation" not in pymc.relative_efficiency.note
    assert "as observed" not in pymc.relative_efficiency.note


def test_a_samplers_effective_draws_are_pooled_over_its_runs(ledger):
    import arviz_stats  # noqa: F401

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=1000, tune=1000, chains=2)
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0, _Run(6.0, 0.0))
    first = history.lookup(profile, NUTPIE)["ess_per_draw"] * 2000
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0,
                   _Run(6.0, 0.5, seed=3))
    second = history.lookup(profile, NUTPIE)["ess_per_draw"] * 2000
    entry = history.lookup(profile, NUTPIE)
    assert entry["ess_runs"] == 2
    # summed: two runs' effective draws over their gradients (6 a draw, 2 x 1000 draws each)
    assert entry["ess_per_gradient"] == pytest.approx((first + second) / (2 * 6.0 * 2000))
    # a run under 100 effective draws counts too
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0,
                   _Run(6.0, 0.99, draws=200))
    third = history.lookup(profile, NUTPIE)
    low = third["ess_per_draw"] * 400
    assert low < history.ESS_RECORD_MINIMUM and third["ess_runs"] == 3
    assert third["ess_per_gradient"] == pytest.approx(
        (first + second + low) / (6.0 * (2000 + 2000 + 400)))
    # a run without effective draws (ArviZ's statistics not loaded) leaves the sums
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0, _Result(6.0))
    assert history.lookup(profile, NUTPIE)["ess_per_gradient"] == third["ess_per_gradient"]
    assert history.lookup(profile, NUTPIE)["ess_runs"] == 3


def test_runs_under_the_minimum_are_kept_until_together_they_reach_it(ledger):
    """The demo model's NumPyro runs got 57 to 111 effective draws of σ_γ and nutpie's 20 to 67;
    with runs under 100 dropped, NumPyro was credited its lucky runs' figure and nutpie none.
    Runs under the minimum are summed until together they reach it."""
    import arviz_stats  # noqa: F401

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=100, tune=100, chains=2)
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0,
                   _Run(6.0, 0.9, draws=100))
    entry = history.lookup(profile, NUTPIE)
    assert entry["ess_effective_draws"] < history.ESS_RECORD_MINIMUM
    assert "ess_per_gradient" not in entry and not history.effective_draws_recorded(
        profile, NUTPIE)
    for seed in range(1, 20):
        history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0,
                       _Run(6.0, 0.9, draws=100, seed=seed))
        entry = history.lookup(profile, NUTPIE)
        if entry["ess_effective_draws"] >= history.ESS_RECORD_MINIMUM:
            break
    assert entry["ess_per_gradient"] == pytest.approx(
        entry["ess_effective_draws"] / (6.0 * 200 * entry["ess_runs"]))
    assert history.effective_draws_recorded(profile, NUTPIE)


def test_a_ledger_from_before_the_sums_keeps_its_pooled_figure(ledger):
    """Entries written before the sums were kept hold a pooled ``ess_per_gradient`` and the
    number of runs; the next run is summed with them as that many runs of the latest's length."""
    import arviz_stats  # noqa: F401

    profile = profile_model(eight_schools())
    request = SampleRequest(draws=1000, tune=1000, chains=2)
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0, _Run(6.0, 0.0))
    data = history._load()
    key = next(k for k in data if k.endswith(NUTPIE.label))
    old = data[key]
    for name in ("ess_effective_draws", "ess_gradients"):
        del old[name]
    old["ess_per_gradient"], old["ess_runs"] = 0.05, 3
    history._write(data)
    history.record(profile, NUTPIE, _nuts(profile, "nutpie"), request, 2.0,
                   _Run(6.0, 0.5, seed=4))
    entry = history.lookup(profile, NUTPIE)
    new = entry["ess_per_draw"] * 2000
    assert entry["ess_runs"] == 4
    assert entry["ess_per_gradient"] == pytest.approx(
        (0.05 * 3 * 12000 + new) / (4 * 12000))


def test_leapfrogs_are_read_from_jax_sample_stats_without_a_jax_compile(caplog):
    # PyMC's JAX samplers leave sample_stats as JAX arrays: averaging them in JAX compiled a
    # reduction first (about 0.1 s of every recorded run, the record's largest part)
    import jax
    import jax.numpy as jnp

    steps = np.arange(1, 2 * 300 + 1, dtype=np.int64).reshape(2, 300) % 7 + 1
    run = _Result(7.0)
    run.sample_stats = xr.Dataset({"n_steps": (("chain", "draw"), jnp.asarray(steps))})
    with jax.log_compiles(True), caplog.at_level("DEBUG"):
        value = history.observed_leapfrogs_per_draw(run)
    assert value == pytest.approx(steps.mean())
    assert not [r for r in caplog.records if "Compiling" in r.getMessage()]


def test_fixed_seconds_observed_at_one_start_up_pace_are_read_at_another(ledger):
    """A run's fixed ratio is taken against the estimate's figures at the start-up pace the
    selection put on them (costmodel.start_up_pace), which its entry keeps; read against
    figures at another pace (or an entry from before the pace, which keeps none), it is
    scaled to what the same observed seconds are against those figures."""
    from dataclasses import replace

    schools = profile_model(eight_schools())
    logistic = profile_model(hierarchical_logistic(500, 20, 2).model)
    request = SampleRequest(draws=100, tune=100, chains=2)
    paced = replace(_estimate(), fixed_seconds=Figure(1.5), start_up_pace=0.5)
    for wall in (9.0, 1.6):
        history.record(schools, PYMC_NUTS, paced, request, wall, _Result(7.0))
    entry = history.lookup(schools, PYMC_NUTS)
    assert entry["start_up_pace"] == 0.5
    ratio = entry["fixed_ratio"]
    assert history.fixed_ratio_now(entry, 0.5) == pytest.approx(ratio)
    assert history.fixed_ratio_now(entry, 1.0) == pytest.approx(ratio * 0.5)
    before = {k: v for k, v in entry.items() if k != "start_up_pace"}
    assert history.fixed_ratio_now(before, 0.5) == pytest.approx(ratio * 2)
    # the other model, estimated at either pace, gets the same fixed seconds from that run
    at_half = history.apply(paced, logistic, PYMC_NUTS)
    at_fit = history.apply(_estimate(), logistic, PYMC_NUTS)
    assert at_half.fixed_seconds.source == at_fit.fixed_seconds.source == "observed"
    shrink = 1 / (1 + history.PACE_PRIOR_MODELS)  # one model's pace, shrunk towards 1
    assert at_half.fixed_seconds.value == pytest.approx(1.5 * ratio ** shrink)
    assert at_fit.fixed_seconds.value == pytest.approx(3.0 * (ratio * 0.5) ** shrink)
