"""The regret benchmark's zoo and arithmetic (the benchmark itself runs outside the tests)."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path

import pytest

from pymc_accel.cli import bench_script, main
from pymc_accel.profile import profile_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_regret  # noqa: E402
import zoo  # noqa: E402


def test_zoo_spans_the_regimes():
    models = zoo.zoo(quick=True)
    assert len(models) >= 8
    assert {"eight_schools", "glm_linear", "glm_poisson", "seed_small", "seed_mid", "seed_large",
            "gp_200", "pk_scan", "funnel"} <= set(models)
    full = zoo.zoo(quick=False)
    assert {"gp_200", "gp_1000", "gp_2000"} <= set(full)


def test_zoo_regime_models_have_their_structure():
    pk = profile_model(zoo.pk_scan(3, 40))
    assert pk.has_scan and pk.census.scans[0].n_steps == 40
    gp = profile_model(zoo.gp_marginal(50))
    assert any(d.op == "Cholesky" and d.operands == ((50, 50),) for d in gp.census.dense_linalg_operands)
    assert profile_model(zoo.funnel(5)).n_free == 6


def test_held_out_models_are_new_to_the_fits_and_named_by_their_dimension():
    held_out = zoo.held_out()
    assert not set(held_out) & set(zoo.fit_models())  # names the fitting scripts run
    for name, factory in held_out.items():
        assert profile_model(factory()).n_free == int(name.rsplit("_", 1)[1])


def _row(label, walls, ess):
    runs = [{"wall": w, "ess": ess, "ess_per_s": ess / w, "divergent": 0.0} for w in walls]
    return bench_regret._summarise(label, runs, type("R", (), {"rows": []})())


def test_regret_uses_warm_medians_and_reports_cold_and_the_spread():
    best = _row("a", [10.0, 2.0, 4.0, 3.0], 100.0)  # cold 10 s, warm median 3 s
    other = _row("b", [5.0, 5.0, 6.0, 4.0], 100.0)  # cold 5 s, warm median 5 s
    assert best["warm_ess_per_s"] == pytest.approx(100 / 3)
    assert best["cold_ess_per_s"] == pytest.approx(10.0)
    r = bench_regret._regret([best, other], "b", selection_seconds=0.5)
    assert r["regret_warm"] == pytest.approx(5 / 3)
    assert r["regret_cold"] == 1.0  # cold, b was the faster one
    lo, hi = r["regret_warm_range"]
    assert lo <= r["regret_warm"] <= hi
    assert r["overhead_warm"] == pytest.approx(0.1)
    assert bench_regret._regret([best, other], "a", 0.5)["regret_warm"] == 1.0


def test_measured_modes_runs_are_judged_by_their_own_walls_with_and_without_the_selection():
    """measure=True's choice is run with what its measurement kept (nutpie's compile paid
    before the run), which no candidate's warm row shows."""
    best = _row("a", [10.0, 2.0, 4.0, 3.0], 100.0)  # warm median 100 / 3 ESS/s
    result = {"rows": [best, _row("b", [5.0, 5.0, 6.0, 4.0], 100.0)], "measured_runs": [
        {"chosen": "b", "selection_seconds": 2.0, "wall": 1.0, "ess": 100.0,
         "ess_per_s": 100.0},
        {"chosen": "b", "selection_seconds": 2.0, "wall": 2.0, "ess": 100.0, "ess_per_s": 50.0},
        {"chosen": "b", "error": "RuntimeError: failed"},
    ]}
    r = bench_regret.measured_run_regret(result)
    assert r["chosen"] == ["b"]
    assert r["regret"] == pytest.approx((100 / 3) / 75)  # median of 100 and 50 ESS/s
    assert r["regret_with_selection"] == pytest.approx((100 / 3) / ((100 / 3 + 25) / 2))
    assert bench_regret.measured_run_regret({"rows": [best]}) is None


def test_pooled_regret_interval_spans_what_the_seeds_allow():
    chosen = _row("a", [9.0, 3.0, 3.0, 3.0], 100.0)  # 33.3 ESS/s in every warm run
    steady = _row("b", [9.0, 3.3, 3.3, 3.3], 100.0)  # always a little slower
    assert bench_regret.pooled_regret_interval([chosen, steady], "a") == [1.0, 1.0]
    rows = [chosen, _row("c", [9.0, 2.0, 4.0, 6.0], 100.0)]  # faster in one seed, slower in two
    lo, hi = bench_regret.pooled_regret_interval(rows, "a")
    # c's resamples of 6 s (three runs of 2 s; 1 in 27) give 1.5, those of 8 s (3 in 27) 1.125:
    # the 95th percentile is the latter
    assert lo == 1.0 and hi == pytest.approx(1.125)
    assert bench_regret.pooled_regret_interval(rows, "a") == [lo, hi]  # seeded: reproducible
    assert bench_regret.pooled_regret_interval(rows, "not run") is None


def test_hindsight_regret_is_the_noise_floor_of_choosing_from_other_seeds():
    # a steadily faster candidate: choosing it from any seeds costs nothing
    fast, slow = _row("a", [9.0, 3.0, 3.0, 3.0], 100.0), _row("b", [9.0, 4.0, 4.0, 4.0], 100.0)
    assert bench_regret.hindsight_regret([fast, slow]) == (1.0, 1.0)
    # two candidates whose order swaps with the seed: whatever one seed says, another disagrees
    a = _row("a", [9.0, 2.0, 4.0, 4.0], 100.0)  # 50, 25, 25 ESS/s
    b = _row("b", [9.0, 4.0, 2.0, 2.5], 100.0)  # 25, 50, 40 ESS/s
    median, worst = bench_regret.hindsight_regret([a, b])
    # chosen on the first and third warm seeds (a: 37.5 against 32.5), judged on the second:
    # b's 50 against a's 25
    assert worst == pytest.approx(2.0)
    assert 1.0 < median <= worst
    assert bench_regret.hindsight_regret([a]) is None  # nothing to choose between


def test_models_without_a_reliable_ess_are_flagged():
    assert bench_regret._low_ess([_row("a", [1.0, 1.0, 1.0], 40.0), _row("b", [1.0, 1.0], 90.0)])
    assert not bench_regret._low_ess([_row("a", [1.0, 1.0, 1.0], 40.0), _row("b", [1.0, 1.0], 150.0)])


def test_bench_command_finds_the_script_and_passes_its_options(capsys):
    assert bench_script() is not None and bench_script().name == "bench_regret.py"
    with pytest.raises(SystemExit) as exit_:
        bench_regret._parse(["--help"])
    assert exit_.value.code == 0
    assert "--quick" in capsys.readouterr().out
    assert main(["bench", "--models", "no_such_model_xyz", "--repeats", "0"]) != 0


def test_default_run_is_skipped_when_predicted_longer_than_its_limit():
    import pymc_accel
    from pymc_accel.models import eight_schools

    report = pymc_accel.select(eight_schools(), draws=1000, tune=1000, chains=2)
    # every candidate took 4 s for the short run's 200 + 200 draws: 20 s for pm.sample's 2000
    rows = [{"candidate": r.label, "warm_median_wall": 4.0} for r in report.rows]
    args = bench_regret._parse(["--quick", "--default-run-max-seconds", "10"])
    out = bench_regret.default_run(eight_schools, args, rows)
    assert (out["tune"], out["draws"]) == (1000, 1000) and out["chains"] >= 2
    assert out["predicted_wall"] >= 20.0 and "skipped" in out and "wall" not in out
    assert out["selection_seconds"] > 0


def test_default_run_hands_its_run_the_selections_log_density(monkeypatch):
    """As pymc_accel.sample does; the net overhead then takes the build the run skipped off."""
    from dataclasses import replace

    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.models import eight_schools

    handed, real = [], JaxNutsBackend.sample

    def short(self, model, candidate, request):  # the run itself kept short
        handed.append(request.logp_graph)
        return real(self, model, candidate, replace(request, draws=50, tune=50))

    monkeypatch.setattr(JaxNutsBackend, "sample", short)
    args = bench_regret._parse(["--quick"])
    args.backend = "numpyro"  # as bench_overhead --backend numpyro
    out = bench_regret.default_run(eight_schools, args, rows=[])
    assert len(handed) == 1 and handed[0] is not None
    assert out["saved_seconds"] > 0
    assert out["net_overhead"] < out["overhead"]


def test_a_run_that_built_its_own_graph_is_not_counted_as_handed_one():
    import pymc.sampling.jax as pmjax

    from pymc_accel.backends.run_logp import jax_runs_use
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_and_logp

    for handed in (False, True):
        model = eight_schools()
        graph = profile_and_logp(model)[1] if handed else None
        with bench_regret.handed_graphs_used([]) as seen, jax_runs_use(model, graph):
            pmjax.get_jaxified_logp(model, negative_logp=False)
        assert bench_regret.used_a_handed_graph(seen) is handed
    with bench_regret.handed_graphs_used([]) as seen:  # no JAX run at all
        pass
    assert not bench_regret.used_a_handed_graph(seen)
    # handed a graph, but the run never asked for its log density: nothing was jaxified from it
    with bench_regret.handed_graphs_used([]) as seen, jax_runs_use(model, graph):
        pass
    assert not bench_regret.used_a_handed_graph(seen)


def test_a_numba_runs_pm_sample_builds_spared_are_counted_each():
    """pm.sample builds the model's log density twice; handed the selection's, it builds it
    neither time, and the net overhead takes both builds off."""
    from pymc_accel.backends.pm_sample_logp import pm_sample_uses
    from pymc_accel.profile import log_density_graph
    from tests.backends.test_pm_sample_logp import _regression

    model = _regression()
    graph, _ = log_density_graph(model)
    with bench_regret.handed_graphs_used([]) as seen, pm_sample_uses(model, graph):
        model.logp()
        model.logp()
        model.logp(sum=False)  # not a build pm.sample was spared
    assert seen == [True, True] and bench_regret.handed_builds(seen) == 2
    with bench_regret.handed_graphs_used([]) as seen:  # no graph handed over
        model.logp()
    assert bench_regret.handed_builds(seen) == 0


def test_pooled_regret_weighs_each_seed_by_its_run():
    # a: one lucky short run among slow ones; b: steady. Median of ratios favours a, pooled b.
    a = bench_regret._summarise("a", [
        {"wall": 1.0, "ess": 10.0, "ess_per_s": 10.0, "divergent": 0.0},
        {"wall": 1.0, "ess": 60.0, "ess_per_s": 60.0, "divergent": 0.0},
        {"wall": 1.0, "ess": 50.0, "ess_per_s": 50.0, "divergent": 0.0},
        {"wall": 10.0, "ess": 5.0, "ess_per_s": 0.5, "divergent": 0.0},
    ], type("R", (), {"rows": []})())
    b = _row("b", [2.0, 2.0, 2.0, 2.0], 40.0)
    assert a["warm_pooled_ess_per_s"] == pytest.approx(115 / 12)
    r = bench_regret._regret([a, b], "b", 0.1)
    assert r["regret_warm"] == pytest.approx(50 / 20)  # median: a's lucky runs
    assert r["regret_warm_pooled"] == 1.0  # pooled: b's 20 ESS/s beat a's 9.6


def test_history_step_selects_the_second_run_with_what_the_first_observed(tmp_path, monkeypatch):
    from pymc_accel.backend import SampleRequest
    from pymc_accel.models import eight_schools

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")  # as the benchmark runs (restored after)
    args = bench_regret._parse(["--quick", "--draws", "50", "--tune", "50"])
    out = bench_regret.with_history(eight_schools, args, SampleRequest(cores=2))
    assert "error" not in out, out
    assert out["first_run"] and out["first_run_wall"] > 0
    assert "observed" in out["why"]  # the second selection used the first run's figures
    assert bench_regret.os.environ["PYMC_ACCEL_HISTORY"] == "off"  # first selections stay blind
    # the benchmark's rows are warm for every candidate: no first compile charged, and the
    # history's own function is back afterwards
    from pymc_accel import history

    assert out["charged_first_compile"] == []
    assert history.compiled_here.__name__ == "compiled_here"


def _history_step(reg, tmp_path, monkeypatch) -> dict:
    """The benchmark's history step on a conjugate normal with ``reg``'s backends, in a cache
    of its own, as the benchmark runs it (the history off outside the step); the step's
    record, checked for an error."""
    from pymc_accel.backend import SampleRequest
    from pymc_accel.models import conjugate_normal
    from pymc_accel.testing.suite import process_registry

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    args = bench_regret._parse(["--quick", "--draws", "500", "--tune", "500"])
    with process_registry(reg):
        out = bench_regret.with_history(lambda: conjugate_normal().model, args,
                                        SampleRequest(cores=2))
    assert "error" not in out, out
    return out


def test_history_step_runs_a_tried_runner_up_and_selects_a_third_time(tmp_path, monkeypatch):
    """Where the second selection tries a close call's runner-up, the step runs it and selects
    again: the third run's choice, on both samplers' observed effective draws."""
    from tests.test_selection import _two_nuts

    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=11.0)
    out = _history_step(reg, tmp_path, monkeypatch)
    assert out["first_run"] == "leader[cpu,float64]"
    assert out["chosen"] == "rival[cpu,float64]" and out["chosen_by"].endswith("runner-up once")
    assert out["third"] == "rival[cpu,float64]" and out["third_chosen_by"] == "cost model"
    assert (leader.runs, rival.runs) == (1, 1) and out["tried_wall"] > 0  # the third: selected


def test_history_step_runs_a_sampler_the_second_selection_moves_to_and_selects_again(
        tmp_path, monkeypatch):
    """Where the first run's record moves the second selection to a sampler that has not run
    the model (no trial: it now leads on the estimates), the step runs it too and selects a
    third time, as a user's third run would. Before, the second's choice was reported as every
    later run's (censored_6 and weibull_5, 2026-11-30)."""
    from tests.test_selection import _leader_and_rival_that_overtakes_it

    reg, leader, rival = _leader_and_rival_that_overtakes_it()
    out = _history_step(reg, tmp_path, monkeypatch)
    assert out["first_run"] == "leader[cpu,float64]"
    assert out["chosen"] == "rival[cpu,float64]" and out["chosen_by"] == "cost model", out
    assert (leader.runs, rival.runs) == (1, 1) and out["tried_wall"] > 0
    assert out["third"] == "leader[cpu,float64]" and "as observed" in out["third_why"], out


def test_trajectory_summary_gives_ratios_to_nutpie_and_leaves_the_funnel_out():
    import fit_trajectories

    def line(model, candidate, steps, ess_per_gradient):
        return {"model": model, "candidate": candidate, "leapfrogs_per_draw": steps,
                "ess_per_gradient": ess_per_gradient}

    nutpie, pymc = "numba[cpu,float64,driver=nutpie]", "numba[cpu,float64,driver=pymc]"
    numpyro = "numpyro[cpu,float64,chain_method=parallel]"
    lines = [line("a", nutpie, 10, 0.02), line("a", nutpie, 10, 0.02), line("a", pymc, 20, 0.01),
             line("a", pymc, 20, 0.04), line("b", nutpie, 5, 0.1), line("b", pymc, 5, 0.1),
             line("funnel", nutpie, 10, 0.01), line("funnel", pymc, 40, 0.05),
             line("a", numpyro, 30, 0.02)]
    out = fit_trajectories.summarise(lines)
    assert out["pymc"]["a"] == pytest.approx((2.0, 1.0))  # geometric means over seeds
    assert out["pymc"]["geomean"] == pytest.approx((2.0**0.5, 1.0))  # funnel left out
    assert out["stan"]["a"] == pytest.approx((3.0, 1.0)) and "nutpie" not in out


def test_replay_judges_todays_choice_against_recorded_runs(monkeypatch):
    import replay_regret

    import pymc_accel

    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    chosen = pymc_accel.select(zoo.eight_schools(), draws=100, tune=100, chains=2).chosen

    def row(label, ess_per_s):
        runs = [{"wall": 1.0, "ess": ess_per_s, "ess_per_s": ess_per_s} for _ in range(3)]
        return {"candidate": label, "runs": runs, "cold_wall": 1.0, "cold_ess_per_s": ess_per_s,
                "warm_median_wall": 1.0, "warm_ess_per_s": ess_per_s,
                "warm_range": [ess_per_s, ess_per_s], "warm_runs": 2}

    results = {"draws": 100, "tune": 100, "chains": 2, "models": [
        {"model": "eight_schools", "chosen": {"auto": "recorded[cpu]"},
         "rows": [row(chosen, 100.0), row("other[cpu]", 150.0)]},
        {"model": "not_a_zoo_model", "chosen": {"auto": "x"}, "rows": []},
    ]}
    first, missing = replay_regret.replay(results)
    assert first["replayed"] == chosen and first["recorded"] == "recorded[cpu]"
    assert first["regret_warm"] == pytest.approx(1.5)
    assert first["regret_warm_pooled"] == pytest.approx(1.5)
    assert "error" in missing
    assert "| eight_schools | recorded[cpu] |" in replay_regret.table([first, missing], "f.json")
    # every file together: the zoo's short runs counted apart, a regret of 1.5 not within 1.1
    held = dict(first, model="logistic_101", regret_warm=1.0, draws=1000)
    pooled = replay_regret.summary({"f.json": [first, missing], "g.json": [held]})
    assert "| zoo, fewer draws | 1 | 0 | 1.500 | 1.50 (eight_schools) |" in pooled
    assert "| held-out models | 1 | 1 | 1.000 |" in pooled


def test_second_run_replay_records_the_first_choices_run_and_selects_again(monkeypatch):
    import replay_regret

    import pymc_accel

    from pymc_accel import selection
    from pymc_accel.costmodel import FIT_MACHINE_PYTHON_SECONDS, REFERENCE_CALL_SECONDS
    from pymc_accel.machine import MachineFigures

    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    # figures of their own, not the calibration of the machine the tests run on: a run's wall
    # corrects the seconds per gradient only where the estimate puts half the run in sampling
    # (history.GRADIENT_SHARE), and a slow machine's start-up pace moved seed_mid under it
    fixed = MachineFigures({"float32": 6e9, "float64": 3.4e9}, {"float32": 7e10, "float64": 7e10},
                           {"float32": 1.3e11, "float64": 6.3e10},
                           cpu_call_seconds=REFERENCE_CALL_SECONDS,
                           cpu_python_seconds=FIT_MACHINE_PYTHON_SECONDS)
    monkeypatch.setattr(selection, "machine_figures", lambda devices=None: fixed)
    # a model whose estimates put most of a run in sampling, which one run corrects
    model = zoo.zoo(quick=True)["seed_mid"]
    report = pymc_accel.select(model(), draws=1000, tune=1000, chains=2)
    first = report.chosen
    others = [r.label for r in report.rows if r.status != "refused" and r.label != first]
    # the trees the estimate expects, so that the run's wall, not its trees, moves the choice
    steps = report.estimate.gradients_per_draw.value

    def row(label, wall):  # a cold run, then two warm runs whose median is ``wall``
        runs = [{"wall": w, "ess": 400.0, "ess_per_s": 400.0 / w, "leapfrogs_per_draw": steps}
                for w in (wall * 3, wall, wall * 1.1)]
        return {"candidate": label, "runs": runs, "cold_wall": wall * 3,
                "cold_ess_per_s": 400.0 / wall / 3, "warm_median_wall": wall * 1.05,
                "warm_ess_per_s": 400.0 / wall / 1.05,
                "warm_range": [400.0 / wall / 1.1, 400.0 / wall], "warm_runs": 2}

    # the first choice's run took a minute where every other sampler took a second; its other
    # precision too, since one sampler's precisions share a model's run history (a second
    # selection that tried it as a close call's runner-up would otherwise record it at a second
    # and bring the first choice back)
    sampler = first.split("[")[0]
    results = {"draws": 1000, "tune": 1000, "chains": 2, "models": [
        {"model": "seed_mid", "chosen": {"auto": first},
         "rows": [row(first, 60.0)] + [row(label, 60.0 if label.split("[")[0] == sampler
                                           else 1.0) for label in others]}]}
    line, = replay_regret.replay_second_run(results)
    assert line["recorded"] == first and line["replayed"] != first, line
    assert line["replayed"].split("[")[0] != sampler, line
    assert line["regret_first"] == pytest.approx(60.0)
    assert line["regret_warm"] == pytest.approx(1.0)
    assert f"| seed_mid | {replay_regret._short(first)} | 60.00 |" in (
        replay_regret.second_run_table([line], "f.json"))
    # the record is the warm run of median wall time, not the cold one
    assert replay_regret._median_warm_run(results["models"][0]["rows"][0])["wall"] == 60.0


def test_numpyros_fixed_cost_fit_recovers_a_known_line(tmp_path, capsys):
    import fit_numpyro_fixed

    lines = [{"model": f"m{k}", "kernels": k, "fixed_median": 3.0 + 0.005 * k,
              "compile_median": 2.0, "modelled_fixed": 2.0} for k in (60, 120, 500)]
    # a longer run's wall less the fixed cost is its sampling, set against the modelled
    lines[0]["long"] = {"draws": 1000, "sampling": 2.0, "modelled_sampling": 1.0}
    path = tmp_path / "fixed.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    a, b = fit_numpyro_fixed.fit([str(path)])
    assert (a, b) == (pytest.approx(3.0), pytest.approx(0.005))
    out = capsys.readouterr().out
    assert "fixed = 3.000 s + 5.00 ms x kernels (3 models)" in out
    assert "1000 + 1000 draws: sampling 2.00 s" in out and "1.00 s (0.50x)" in out


def test_shared_run_error_fit_splits_shared_from_own_variance():
    import random

    import fit_shared_run_error

    # every model's runs share a factor m; each sampler strays on its own by s_a, s_b, and the
    # twin precisions of one sampler by almost nothing from each other
    rng = random.Random(1)
    lines = []
    for _ in range(4000):
        m = rng.gauss(0, 0.3)
        a, b = m + rng.gauss(0, 0.1), m + rng.gauss(0, 0.2)
        lines.append({"ratios": {"a[float64]": math.exp(a), "b[float64]": math.exp(b),
                                 "b[float32]": math.exp(b + rng.gauss(0, 0.01))}})
    fit = fit_shared_run_error.fit(lines)
    # the twins' covariance is not the shared error: only a / b pairs count
    assert fit["shared_variance"] == pytest.approx(0.09, rel=0.1)
    assert fit["own_variance"]["a[float64]"] == pytest.approx(0.01, abs=0.01)
    assert fit["own_variance"]["b[float64]"] == pytest.approx(0.04, abs=0.01)
    assert fit["covariance"]["b[float32] / b[float64]"] == pytest.approx(0.13, rel=0.1)


def test_compile_pace_fit_correlates_each_timing_with_the_fixed_costs(tmp_path, capsys):
    import fit_compile_pace

    # the compiles follow the fixed costs through a slow stretch; the calibration's figure not
    rows = [{"time": f"14:{i:02d}:00", "numba_compile": 0.2 * pace, "xla_compile": 0.5 * pace,
             "calibration_exp_seconds": 0.005 * (1.0 + 0.01 * (i % 2)),
             "nutpie_fixed": 2.0 * pace, "numpyro_fixed": 3.0 * pace}
            for i, pace in enumerate((1.0, 1.1, 1.6, 1.7, 1.2, 1.0))]
    path = tmp_path / "pace.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + '\n{"error": "a failed round"}')
    fit = fit_compile_pace.fit([str(path)])
    assert fit["numba_compile"] == pytest.approx(1.0)
    assert fit["xla_compile"] == pytest.approx(1.0)
    assert abs(fit["calibration_exp_seconds"]) < 0.5
    assert "14:02:00  numba 0.320 s" in capsys.readouterr().out


def test_numpyro_tuning_fit_separates_leapfrogs_early_tuning_and_fixed_cost():
    import fit_numpyro_tuning

    # 10 s fixed, 1 ms a leapfrog, 5 leapfrogs a draw, 1000 extra leapfrogs in early tuning
    def run(n):
        tuning, sampling = 5 * n + 1000, 5 * n
        return {"n": n, "wall": 10 + 1e-3 * (tuning + sampling), "tuning_leapfrogs": tuning,
                "sampling_leapfrogs": sampling}

    line = {"model": "glm_linear", "precision": "float64", "runs": [run(200), run(2000)]}
    parts = fit_numpyro_tuning.parts(line)
    assert parts["per_leapfrog"] == pytest.approx(1e-3)
    assert parts["rate"] == pytest.approx(5) and parts["extra"] == pytest.approx(1000)
    assert parts["fixed"] == pytest.approx(10)
    assert fit_numpyro_tuning.reliable(line)
    line["runs"][1]["wall"] = line["runs"][0]["wall"] + 0.5  # within the compile's noise
    assert not fit_numpyro_tuning.reliable(line)


def test_numpyro_tuning_fit_spread_prices_early_tuning_by_the_scale_spread(tmp_path, capsys):
    """Two recorded models whose early tuning is 450 leapfrogs per unit of their scale spread:
    the fit finds 450 and an rms log error of zero, where the dimension's law misses."""
    import fit_numpyro_tuning

    lines = []
    for name, spread, n_free in (("glm_linear", 5.58, 12), ("groups_503", 64.0, 503)):
        runs = []
        for n in (200, 1000):
            sampling = 10 * n
            runs.append({"n": n, "wall": 1.0, "sampling_leapfrogs": sampling,
                         "tuning_leapfrogs": sampling + 450 * spread})
        lines.append({"model": name, "precision": "float64", "n_free": n_free, "runs": runs})
    path = tmp_path / "tuning.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    fit_numpyro_tuning.fit_spread([str(path)])
    out = capsys.readouterr().out
    assert "| groups_503 | 503 | 64.0 | 28800, 28800 |" in out  # its spread evaluated: 64.0
    best = re.search(r"(\d+) x spread (\S+);", out)
    assert best.group(1) == "450" and float(best.group(2)) < 0.01
    assert float(re.search(r"ln\(d/10\) (\S+)$", out.strip()).group(1)) > 0.1


def _run(label, ess, leapfrogs, wall=1.0):
    return {"wall": wall, "ess": ess, "ess_per_s": ess / wall, "leapfrogs_per_draw": leapfrogs}


def test_trajectory_efficiency_splits_effective_draws_into_trees_and_per_gradient():
    import json

    import fit_trajectory_efficiency as fte

    nutpie, pymc = fte.NUTPIE, fte.OTHERS["PyMC's NUTS"]
    numpyro = fte.OTHERS["NumPyro float64"]

    def record(model, rows):
        return {"model": model, "rows": [{"candidate": c, "runs": runs} for c, runs in rows]}

    results = {"draws": 500, "models": [
        record("a", [(nutpie, [_run(nutpie, 100, 10), _run(nutpie, 300, 10)]),
                     (numpyro, [_run(numpyro, 240, 20), _run(numpyro, 240, 20)]),
                     (pymc, [_run(pymc, 200, 10)])]),
        record("funnel", [(nutpie, [_run(nutpie, 5, 10)]), (pymc, [_run(pymc, 50, 10)])]),
    ]}
    short = dict(results, draws=100)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        paths = [f"{d}/long.json", f"{d}/short.json"]
        for path, data in zip(paths, (results, short)):
            Path(path).write_text(json.dumps(data))
        lines = fte.ratios(paths)
    assert len(lines) == 1  # the funnel and the short runs left out
    trees, per_draw, per_gradient = lines[0]["NumPyro float64"]
    assert (trees, per_draw, per_gradient) == pytest.approx((2.0, 1.2, 0.6))
    assert lines[0]["PyMC's NUTS"] == pytest.approx((1.0, 1.0, 1.0))


def test_numpyro_loop_fit_separates_fixed_cost_and_leapfrogs():
    import fit_numpyro_loop

    rows = [{"n": 10, "wall": 3.0, "leapfrogs_per_chain": 100.0},
            {"n": 10, "wall": 2.2, "leapfrogs_per_chain": 100.0},  # the fastest repeat counts
            {"n": 300, "wall": 3.2, "leapfrogs_per_chain": 5100.0}]
    fit = fit_numpyro_loop.per_leapfrog(rows)
    assert fit["seconds_per_leapfrog"] == pytest.approx(1.0 / 10000)
    assert fit["fixed"] == pytest.approx(2.2 - 200 * 1e-4)
    assert fit_numpyro_loop.per_leapfrog(rows[:2]) is None  # one length says nothing


def test_cold_compile_is_a_models_first_run_less_its_second():
    import fit_cold_compile

    nutpie = "numba[cpu,float64,driver=nutpie]"
    rows = [{"model": "funnel", "target": "a", "candidate": nutpie, "repeat": 0, "wall": 9.0},
            {"model": "a", "target": "a", "candidate": nutpie, "repeat": 0, "wall": 6.5},
            {"model": "a", "target": "a", "candidate": nutpie, "repeat": 0, "wall": 1.5},
            {"target": "b", "candidate": nutpie, "repeat": 0, "error": "boom"}]
    assert fit_cold_compile.cold_seconds(rows) == {("a", nutpie): [pytest.approx(5.0)]}


def test_replay_of_a_new_process_charges_first_use_and_judges_the_recorded_runs(monkeypatch):
    import os

    import replay_regret

    import pymc_accel
    from pymc_accel import first_use

    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    monkeypatch.setenv("PYMC_ACCEL_FIRST_USE", "off")
    warm = pymc_accel.select(zoo.eight_schools(), draws=1000, tune=1000, chains=2)
    labels = [r.label for r in warm.rows if r.total_seconds is not None]
    rates = {label: 100.0 + 10 * i for i, label in enumerate(labels)}
    records = [{"model": "eight_schools", "selection": {"chosen": "recorded[cpu]"},
                "rows": {label: {"median_ess_per_s": rate, "pooled_ess_per_s": rate,
                                 "min_ess": 500.0} for label, rate in rates.items()}}]
    first_use.mark_used(("numba",))  # this test's process may have run samplers
    line, = replay_regret.replay_new_process(records, 1000, 1000, 2)
    assert line["recorded"] == "recorded[cpu]"
    assert line["replayed"] in rates
    assert line["regret_warm"] == pytest.approx(max(rates.values()) / rates[line["replayed"]])
    assert "numba" in first_use.used()  # the marks of this process are restored
    assert os.environ["PYMC_ACCEL_FIRST_USE"] == "off"


def test_estimate_accuracy_table_gives_typical_error_either_way():
    import replay_regret

    lines = [{"ratios": {"x[cpu]": 2.0}}, {"ratios": {"x[cpu]": 0.5}}, {"error": "missing"}]
    table = replay_regret.accuracy(lines)
    assert "| x[cpu] | 1.00 | 0.50–2.00 | 2.00x | 2 |" in table


def test_fixed_cost_fit_weighs_each_day_and_drops_cold_runs(tmp_path):
    import json

    import fit_fixed

    day = tmp_path / "day.jsonl"
    # the first (cold) run of each pair is dropped; the median of the rest is kept
    rows = [("m", "c", 9.0), ("m", "c", 1.0), ("m", "c", 3.0), ("m", "c", 2.0)]
    day.write_text("\n".join(json.dumps({"model": m, "candidate": c, "wall": w})
                             for m, c, w in rows))
    assert fit_fixed.warm_medians(str(day)) == {("m", "c"): 2.0}
    # exact points of 0.2 + 0.015 k are fitted back
    a, b = fit_fixed.fit_line([(k, 0.2 + 0.015 * k) for k in (59, 117, 216, 533)])
    assert a == pytest.approx(0.2, abs=1e-3) and b == pytest.approx(0.015, rel=1e-3)
    # a day 25% faster and one 25% slower pull the fit equally: it sits between them
    a, b = fit_fixed.fit_line([(k, f * (1 + 0.01 * k)) for k in (50, 200, 500)
                               for f in (0.75, 1 / 0.75)])
    assert a + b * 200 == pytest.approx(1 + 0.01 * 200, rel=0.05)


def test_the_new_process_bench_runs_the_held_out_models_too():
    """``bench_fresh_process`` looked models up in the quick zoo alone, so a held-out model's
    every run failed (each sampler's three runs an error, no choice made)."""
    import bench_fresh_process

    names = bench_fresh_process.models()
    assert {"groups_503", "poisson_groups_303", "eight_schools", "seed_mid"} <= set(names)
    assert set(zoo.held_out()) <= set(names)


def test_nutpies_leapfrogs_count_tuning_and_draws_of_the_slower_chain():
    """``fit_nutpie_leapfrog``: both run lengths tune as long as they draw, so a leapfrog's
    cost divides the walls' difference by every leapfrog of the warm-up and the draws; counting
    the draws' alone priced a leapfrog at 1.9x what it took (seed_mid 287 against 131 µs). The
    chains run side by side, so the slower one's count sets the pace."""
    import arviz as az
    import numpy as np

    import fit_nutpie_leapfrog as fit

    draws = np.array([[10, 10, 10], [20, 20, 20]])
    warmup = np.array([[30, 30], [5, 5]])

    def trace(warmup):
        return az.from_dict({"sample_stats": {"n_steps": draws},
                             "warmup_sample_stats": {"n_steps": warmup}}, save_warmup=True)

    assert fit._leapfrogs(trace(warmup)) == 90.0  # 60 + 30 and 10 + 60: the first chain's
    assert fit._leapfrogs(trace(np.array([[30, 30], [50, 50]]))) == 160.0


def test_numpyros_leapfrog_is_taken_from_median_walls_and_the_grid_recovers_a_known_runtime():
    """``fit_numpyro_leapfrog``: a leapfrog's cost is the median walls' difference over the
    leapfrogs between two lengths (one fast repeat must not set it); a line whose longer runs
    add less than half a second is compile noise; and leapfrogs priced by a runtime on the
    grid are fitted back to it."""
    from dataclasses import replace

    import fit_numpyro_leapfrog as fit

    from pymc_accel import costmodel
    from pymc_accel.machine import MachineFigures

    line = {"model": "m", "precision": "float64", "runs": {
        "100": {"walls": [3.0, 3.2, 3.1], "leapfrogs": 1000.0, "leapfrogs_all": [1000.0] * 3},
        "1000": {"walls": [9.0, 13.1, 14.0], "leapfrogs": 10000.0,
                 "leapfrogs_all": [10000.0] * 3}}}
    assert fit.per_leapfrog(line) == pytest.approx((13.1 - 3.1) / 9000)
    assert fit.reliable(line)
    line["runs"]["1000"]["walls"] = [3.3, 3.4, 3.5]
    assert not fit.reliable(line)
    # runs of one compiled loop have no compile in them: a few hundredths of a second tell
    loop = {"model": "m", "method": "compiled_loop", "runs": {
        "100": {"walls": [0.010, 0.011, 0.012], "leapfrogs": 700.0},
        "1000": {"walls": [0.10, 0.11, 0.12], "leapfrogs": 7000.0}}}
    assert fit.reliable(loop)
    loop["runs"]["1000"]["walls"] = [0.02, 0.021, 0.022]
    assert not fit.reliable(loop)

    machine = MachineFigures({"float32": 1e10, "float64": 1e10},
                             {"float32": 1e10, "float64": 1e10},
                             {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)
    truth = replace(costmodel.JAX_CPU_SAMPLER, bandwidth_factor=0.6, flops_factor=4,
                    matvec_bandwidth_factor=0.0, per_gradient_seconds=5e-6,
                    per_dimension_seconds=2e-8, transcendental_factor=0.0)
    rows = []
    for name in ("glm_poisson", "seed_small", "logistic", "varying_intercept"):
        profile = profile_model(zoo.fit_models()[name]())
        seconds = costmodel.cpu_gradient_seconds(profile, machine, "float64", truth, 2).value
        rows.append(({"model": name, "precision": "float64", "runs": {
            "a": {"walls": [1.0], "leapfrogs": 0.0},
            "b": {"walls": [1.0 + 1e4 * seconds], "leapfrogs": 1e4}}}, profile))
    rms, runtime = fit.grid_fit(rows, machine)
    assert rms < 0.01
    assert max(abs(e) for e in fit.log_errors(runtime, rows, machine)) < 0.02


def test_numpyros_leapfrog_is_timed_in_one_compiled_program():
    """``fit_numpyro_leapfrog.measure`` runs NumPyro's tuned kernel in one compiled loop, so its
    runs hold leapfrogs and no compile: on eight schools (a leapfrog of a few microseconds) the
    shorter length's runs take well under the tenth of a second an ``MCMC.run`` call took to
    compile, and the longer length counts more leapfrogs."""
    import fit_numpyro_leapfrog as fit

    from pymc_accel.machine import machine_figures

    line = fit.measure("eight_schools", "float64", (5, 50), 50, machine_figures(), repeats=2)
    short, long = line["runs"].values()
    assert line["method"] == "compiled_loop"
    assert max(short["walls"]) < 0.1
    assert long["leapfrogs"] > short["leapfrogs"] > 0


def test_numpyros_driver_is_fitted_per_leapfrog_and_dimension():
    """``fit_numpyro_leapfrog.measure_driver`` times NumPyro on standard normals and fits
    ``a + b d`` in the cost model's reference units (this machine's scale taken off)."""
    import fit_numpyro_leapfrog as fit

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures

    machine = machine_figures()
    out = fit.measure_driver([2, 200], (5, 40), 30, machine, repeats=2)
    assert [p["d"] for p in out["driver"]] == [2, 200]
    assert all(p["runs"][40]["leapfrogs"] > p["runs"][5]["leapfrogs"] for p in out["driver"])
    scale = costmodel._machine_scale(machine)
    assert out["per_dimension_seconds"] == pytest.approx(out["fit_seconds_per_dimension"] / scale)
    slope = ((out["driver"][1]["per_leapfrog_seconds"] - out["driver"][0]["per_leapfrog_seconds"])
             / 198)  # two points: the line goes through both
    assert out["fit_seconds_per_dimension"] == pytest.approx(slope)


def test_the_gradient_timing_comparison_summarises_each_figure_against_the_sampler(tmp_path,
                                                                                   capsys):
    """``fit_jax_gradient_timing --summarise``: per model the median of its lines, each figure
    as a ratio to the leapfrog in NumPyro's sampler, and each figure's geometric mean."""
    import json

    import fit_jax_gradient_timing as fit

    lines = [{"model": "a", "in_sampler": 1e-5, "standalone": 2e-5, "loop": 1e-5,
              "modelled": 4e-5},
             {"model": "a", "in_sampler": 1e-5, "standalone": 2e-5, "loop": 1e-5,
              "modelled": 4e-5},
             {"model": "b", "in_sampler": 1e-4, "standalone": 5e-5, "loop": 1e-4,
              "modelled": 1e-4},
             {"model": "c", "error": "NumPyro could not run it"}]
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    fit.summarise([str(path)])
    out = capsys.readouterr().out
    assert "| a | 10.0 | 20.0 (2.00x) | 10.0 (1.00x) | 40.0 (4.00x) |" in out
    assert "loop: geometric mean 1.00x, worst 1.00x over 2 models" in out
    assert "standalone: geometric mean 1.00x, worst 2.00x over 2 models" in out
    assert "| c |" not in out


def test_the_regret_benchmark_runs_the_chosen_candidates_alone_when_asked():
    """``_candidates_for(..., "chosen")`` is what the benchmark runs after measured mode: only
    the choices not run yet (a first version ran every built-in candidate a second time)."""
    import pymc_accel

    model = zoo.fit_models()["funnel"]()
    report = pymc_accel.select(model)
    profile = report.model_profile
    builtin = bench_regret._candidates_for(report, profile, {report.chosen}, "builtin")
    assert report.chosen in builtin and all(
        c.backend in bench_regret.BUILTIN or label == report.chosen
        for label, c in builtin.items())
    assert set(bench_regret._candidates_for(report, profile, {report.chosen}, "chosen")) == {
        report.chosen}
    assert bench_regret._candidates_for(report, profile, set(), "chosen") == {}


def test_a_cold_run_starts_from_an_empty_numba_cache(monkeypatch):
    """PyTensor keeps numba kernels under ``base_compiledir``; pointing only ``compiledir``
    elsewhere left them cached, and the regret bench's cold runs were not cold."""
    import subprocess

    monkeypatch.setenv("PYTENSOR_FLAGS", "floatX=float64")
    path = bench_regret._fresh_compile_dir()
    flags = os.environ["PYTENSOR_FLAGS"]
    assert flags == f"floatX=float64,base_compiledir={path}"
    # where a new process's PyTensor then puts its numba cache
    code = "from pytensor.link.numba.cache import NUMBA_CACHE_PATH as p; print(p)"
    where = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=dict(os.environ)).stdout.strip()
    assert Path(where).is_relative_to(path)


def test_first_selection_bench_times_a_new_process_that_imported_arviz(tmp_path, monkeypatch):
    """bench/bench_first_selection.py: a fresh process, ArviZ imported first (its lazy jax), the
    profile stored by an earlier process; the selection must not import JAX."""
    import bench_first_selection

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    # with an option every sampler path takes, which is answered without reading NumPyro's
    # (importing JAX): one run of the bench's two processes checks both (each takes seconds)
    rows = bench_first_selection.main(["--models", "eight_schools", "--repeats", "1",
                                       "--options", '{"max_treedepth": 12}',
                                       "--out", str(tmp_path / "first.json")])
    (row,) = rows
    (run,) = row["runs"]
    assert row["model"] == "eight_schools" and run["seconds"] > 0
    assert row["options"] == {"max_treedepth": 12}
    assert run["jax_imported"] is False and run["chosen"]
    assert (tmp_path / "first.json").is_file()


@pytest.mark.parametrize("layout, leaves", [("flat", 1), ("per_variable", 3)])
def test_the_numpyro_fits_sample_the_models_posterior_not_its_inverse(layout, leaves):
    """fit_numpyro_tuning.numpyro_inputs gives +log p, whose negative the fits' NUTS takes as
    its potential: PyMC's ``negative_logp`` flag reads the other way from its name, and the
    fits had sampled 1/p. Its flat layout is the backends' (one array), the other PyMC's."""
    import numpy as np

    import fit_numpyro_tuning

    model = zoo.eight_schools()
    logp, x0 = fit_numpyro_tuning.numpyro_inputs(model, "float64", layout)
    assert len(x0) == leaves
    expected = model.compile_logp()(model.initial_point())
    assert float(logp(x0)) == pytest.approx(float(expected))
    assert np.isfinite(expected) and expected < 0


def test_the_flat_position_table_gives_each_layouts_medians_and_their_ratios(tmp_path):
    import json

    import bench_flat_position

    runs = [{"model": "m", "layout": lay, "value_variables": 3, "wall": w, "ess": 100.0,
             "leapfrogs_per_draw": 7.0}
            for lay, w in [("per_variable", 9.0), ("flat", 3.0), ("per_variable", 12.0),
                           ("flat", 4.0), ("per_variable", 10.0), ("flat", 5.0)]]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    row = bench_flat_position.markdown(str(path)).splitlines()[-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:2] == ["m", "3"]
    assert cells[2].startswith("10.0 [9.0, 12.0, 10.0]") and cells[3].startswith("4.0 [")
    assert cells[4] == "**2.50**"  # median walls 10 / 4
    assert cells[5] == "2.50"  # ESS/s medians 25 / 10


def test_the_regret_bench_names_a_bad_model_or_results_file_before_running(tmp_path):
    """`pymc-accel bench --models nosuch` raised KeyError, --report-only a FileNotFoundError or
    KeyError: 'models'."""
    with pytest.raises(SystemExit, match="no zoo model nosuch; the zoo has eight_schools"):
        bench_regret.main(["--quick", "--models", "eight_schools,nosuch"])
    with pytest.raises(SystemExit, match="cannot read it"):
        bench_regret.main(["--report-only", str(tmp_path / "missing.json")])
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(SystemExit, match="not a results file"):
        bench_regret.main(["--report-only", str(tmp_path / "empty.json")])


def test_float32_fit_prices_both_precisions_with_the_leapfrogs_their_runs_took(tmp_path):
    """bench/fit_float32_compute.py: a factor that speeds float32's arithmetic moves the
    estimated float64/float32 ratio against the recorded one; a file without both precisions
    is left out; leapfrogs differing by chance are taken out of the error."""
    import json

    import fit_float32_compute as fit

    def row(precision, wall, leapfrogs):
        return {"candidate": f"numpyro[cpu,{precision},chain_method=parallel]",
                "warm_median_wall": wall,
                "runs": [{"leapfrogs_per_draw": 99.0}] + [{"leapfrogs_per_draw": leapfrogs}] * 2}

    run = {"draws": 100, "tune": 100, "chains": 2}
    (tmp_path / "a.json").write_text(json.dumps({**run, "models": [
        {"model": "eight_schools", "rows": [row("float64", 2.0, 10.0), row("float32", 2.0, 10.0)]},
        {"model": "glm_linear", "rows": [row("float64", 2.0, 10.0)]}]}))
    pairs = fit.recorded_pairs([str(tmp_path / "a.json")])
    assert list(pairs) == ["eight_schools"] and pairs["eight_schools"][0]["lf64"] == 10.0
    results = fit.fit(pairs, grid=(1.0, 2.0))
    # equal walls, equal leapfrogs: a small model's estimated ratio is near 1, and a factor
    # that credits float32 can only move it up
    assert abs(results[1.0]["per_model"]["eight_schools"]) < 0.1
    assert results[2.0]["per_model"]["eight_schools"] >= results[1.0]["per_model"]["eight_schools"]
    # float32's run taking twice the leapfrogs is priced with them: its predicted wall grows,
    # so the estimated float64/float32 ratio falls
    pairs["eight_schools"][0]["lf32"] = 20.0
    doubled = fit.fit(pairs, grid=(1.0,))[1.0]["per_model"]["eight_schools"]
    assert doubled < results[1.0]["per_model"]["eight_schools"]


def test_calibration_contention_tool_reports_each_calibrations_share(monkeypatch, tmp_path):
    import json

    import fit_calibration_contention

    from pymc_accel import machine

    shares = iter([1.0, 1.0, 0.6, 1.0])
    monkeypatch.setattr(machine, "calibrate", lambda: machine.MachineFigures(
        {"float32": 1e9, "float64": 1e9}, {"float32": 2e10, "float64": 2e10},
        {"float32": 4e10, "float64": 4e10}, cpu_call_seconds=3e-6, cpu_share=next(shares)))
    monkeypatch.setattr(fit_calibration_contention.time, "sleep", lambda s: None)
    out = tmp_path / "c.json"
    fit_calibration_contention.main(["--busy", "1", "--out", str(out)])
    data = json.loads(out.read_text())
    assert list(data) == ["idle_before", "busy_1", "idle_after"]
    assert [data[k]["cpu_share"] for k in data] == [1.0, 0.6, 1.0]


def test_process_speed_tool_times_a_fresh_process(tmp_path):
    import json

    import fit_process_speed

    out = tmp_path / "p.json"
    fit_process_speed.main(["--processes", "1", "--out", str(out)])
    (row,) = json.loads(out.read_text())["rows"]
    assert len(row["call_us"]) == 3 and min(row["call_us"]) > 0
    assert row["exp_ms"] > 0 and row["python_loop_ms"] > 0
    assert row["last_cpu"] in row["allowed_cpus"]


def test_jax_cache_bench_table_gives_warm_over_off_and_checks_the_draws():
    import bench_jax_cache

    def run(wall, compile_seconds, digest=1.5):
        return {"wall": wall, "compile": compile_seconds, "programs": 41, "draws_digest": digest}

    results = {"command": "c", "machine": "m", "models": {
        "eight_schools": {"off": [run(8.0, 3.0)], "empty": [run(9.0, 3.5)],
                          "warm": [run(2.0, 0.4)]},
        "funnel": {"off": [run(8.0, 3.0)], "empty": [run(9.0, 3.5)],
                   "warm": [run(2.0, 0.4, digest=2.5)]},
        "pk_scan": {"off": [{"error": "boom"}], "empty": [run(9.0, 3.5)], "warm": [run(2, 0.4)]},
    }}
    table = bench_jax_cache.markdown(results)
    assert ("| eight_schools | 8.00 s (3.00 s) | 9.00 s (3.50 s) | 2.00 s (0.40 s) | **0.25** "
            "| yes |") in table
    assert "| funnel |" in table and table.split("| funnel |")[1].splitlines()[0].endswith("| NO |")
    assert "| pk_scan | failed |" in table


def test_each_candidates_row_is_handed_on_as_it_is_made(monkeypatch):
    """A run cut by a time limit (a GPU lease: two of four models' rows were lost on the H200
    on 2026-11-26) keeps every candidate finished: ``_run_candidates`` hands each row on."""
    import types

    from pymc_accel.backend import SampleRequest

    class Failing:
        def sample(self, model, candidate, request):
            raise RuntimeError("no device")

    registry = types.SimpleNamespace(backends={"stub": Failing()})
    monkeypatch.setattr("pymc_accel.registry.get_registry", lambda: registry)
    candidates = {f"stub[{i}]": types.SimpleNamespace(backend="stub") for i in range(2)}
    seen = []
    args = bench_regret._parse(["--quick", "--repeats", "2"])
    rows = bench_regret._run_candidates("m", lambda: None, candidates, SampleRequest(), args,
                                        types.SimpleNamespace(rows=[]), on_row=seen.append)
    assert [r["candidate"] for r in seen] == ["stub[0]", "stub[1]"] and seen == rows
    assert all(r["error"] == "RuntimeError: no device" for r in seen)


def test_a_cut_short_model_is_reported_with_its_choice_and_finished_rows():
    row = _row("numba[cpu]", [2.0, 1.0, 1.0], 100.0)
    results = {"command": "c", "machine": "m", "tune": 200, "draws": 200, "chains": 2,
               "repeats": 3, "seconds": 60.0, "models": [],
               "partial": {"model": "seed_large", "selection_seconds": 0.1,
                           "chosen": {"auto": "numba[cpu]"}, "rows": [row]}}
    text = bench_regret.markdown(results)
    assert "#### seed_large: cut short" in text and "`auto` chose numba[cpu]" in text
    assert "| numba[cpu] (chosen) |" in text


def test_a_run_cut_before_its_first_model_finished_is_reported():
    """A lease's call cut by its limit during the first model has no total seconds: the report
    says so instead of failing (the H200 lease of 2026-11-27's second call)."""
    row = _row("numba[cpu]", [2.0, 1.0, 1.0], 100.0)
    results = {"command": "c", "machine": "m", "tune": 200, "draws": 200, "chains": 2,
               "repeats": 3, "models": [],
               "partial": {"model": "pk_scan", "selection_seconds": 0.1,
                           "chosen": {"auto": "numba[cpu]"}, "rows": [row]}}
    text = bench_regret.markdown(results)
    assert "cut before its first model finished" in text and "#### pk_scan: cut short" in text


def test_launch_probe_fits_an_iteration_and_a_kernel_and_runs_on_the_cpu():
    import gpu_launch_probe

    made = [{"k": k, "per_iteration_seconds": 9e-6 + 2.5e-6 * k} for k in gpu_launch_probe.STEPS]
    iteration, kernel = gpu_launch_probe.fit(made)
    assert iteration == pytest.approx(9e-6) and kernel == pytest.approx(2.5e-6)
    lines = gpu_launch_probe.probe("cpu", size=64, iterations=20, repeats=1)
    assert [x["k"] for x in lines] == list(gpu_launch_probe.STEPS)
    assert all(x["per_iteration_seconds"] > 0 for x in lines)
    assert lines[-1]["fusions"] > lines[0]["fusions"]  # more steps, more kernels


def test_vectorized_tree_factor_is_the_largest_tree_over_the_mean(tmp_path):
    import fit_vectorized_trees as fvt

    assert fvt.vectorized_factor([[1, 3, 7], [3, 1, 7]]) == pytest.approx((3 + 3 + 7) / (2 + 2 + 7))
    assert fvt.vectorized_factor([[7, 7], [7, 7]]) == 1.0
    path = tmp_path / "trees.jsonl"
    path.write_text("\n".join(json.dumps({"model": "m", "n_free": 3, "chains": 4, "draws": 10,
                                           "seed": s, "mean_leapfrogs_per_draw": 5.0,
                                           "vectorized_factor": f})
                              for s, f in ((1, 1.1), (2, 1.4))))
    table = "\n".join(fvt.summary([str(path)]))
    assert f"| m | 3 | 4 | 5.0 | {(1.1 * 1.4) ** 0.5:.2f} (1.10, 1.40) |" in table


def test_gpu_cold_compile_fit_reads_both_result_files_and_recovers_a_line(tmp_path):
    import fit_gpu_cold_compile as fit

    regret = tmp_path / "regret.json"
    regret.write_text(json.dumps({"models": [{"model": "m", "rows": [
        {"candidate": "numpyro[gpu,float64]", "runs": [{"wall": 12.0}, {"wall": 2.0},
                                                       {"wall": 2.2}, {"wall": 1.8}]},
        {"candidate": "numpyro[cpu,float64]", "runs": [{"wall": 5.0}, {"wall": 1.0}]}]}]}))
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_text(json.dumps({"model": "n", "candidate": "numpyro[gpu,float64]",
                                 "runs": [{"wall": 1.5}, {"wall": 2.5}, {"wall": 2.0}],
                                 "first_run": {"wall": 16.0}}))
    assert fit.first_compiles(str(regret)) == [("m", "numpyro[gpu,float64]", 10.0)]
    assert fit.first_compiles(str(fixed)) == [("n", "numpyro[gpu,float64]", 14.0)]
    a, b = fit.fit([(100, 1.5 + 10.0), (200, 1.5 + 20.0), (400, 1.5 + 40.0)])
    assert a == pytest.approx(1.5) and b == pytest.approx(0.1)


def test_chain_layout_table_sets_each_layout_against_the_vectorized_one():
    import bench_cpu_chain_layout as layout

    rows = [{"model": "m", "devices": 1, "chains": 2, "layout": "vectorized",
             "walls": [9.0, 8.0, 8.4]},
            {"model": "m", "devices": 1, "chains": 2, "layout": "one after another",
             "walls": [6.0, 4.0, 4.4]}]
    text = "\n".join(layout.table(rows))
    assert "| m | 1 | 2 | vectorized | 9.00 | 8.20 | 1.00 |" in text
    assert "| m | 1 | 2 | one after another | 6.00 | 4.20 | 1.95 |" in text


def test_one_device_table_sets_runs_and_estimates_against_the_side_by_side_layout():
    import bench_one_device_estimate as one

    rows = [{"model": "m", "devices": 1, "chains": 2, "jax_cpu_devices": 1,
             "chain_parallelism": 1, "fixed": 0.5, "sampling": 3.0, "walls": [9.0, 5.0, 5.4]},
            {"model": "m", "devices": 2, "chains": 2, "jax_cpu_devices": 2,
             "chain_parallelism": 2, "fixed": 0.5, "sampling": 1.5, "walls": [8.0, 4.0, 4.0]},
            # BlackJAX laid out as vectorized, with its estimate had it run in rounds
            {"model": "b", "devices": 1, "chains": 2, "jax_cpu_devices": 1, "candidate": "bj[v]",
             "chain_parallelism": 1, "fixed": 1.0, "sampling": 4.0, "walls": [9.0, 5.0, 5.0],
             "estimate_in_rounds": 2.5},
            {"model": "b", "devices": 2, "chains": 2, "jax_cpu_devices": 2, "candidate": "bj[p]",
             "chain_parallelism": 2, "fixed": 0.5, "sampling": 2.0, "walls": [8.0, 2.0, 2.0],
             "estimate_in_rounds": 2.5}]
    text = "\n".join(one.table(rows))
    assert "| m | 2 | 2 |  | 2 | 2.00 | 4.00 | 2.00 | 2.00 | 1.00 | 1.00 |" in text
    assert "| m | 1 | 2 |  | 1 | 3.50 | 5.20 | 1.49 | 1.49 | 1.30 | 1.75 |" in text
    assert "| b | 2 | 2 | bj[p] | 2 | 2.50 | 2.00 | 0.80 | 0.80 | 1.00 | 1.00 |" in text
    assert "| b | 1 | 2 | bj[v] | 1 | 5.00 | 5.00 | 1.00 | 2.00 | 2.50 | 2.00 |" in text


def test_measured_mode_timings_are_read_from_regret_files_the_latest_winning(tmp_path):
    import gradient_vs_measured as check

    def run(model, seconds):
        return {"models": [{"model": model, "measurement": {"measured": [
            {"candidate": "numpyro[cpu]", "seconds_per_gradient": seconds}]}},
            {"model": "unmeasured", "measurement": None}]}

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(run("m", 2e-5)))
    second.write_text(json.dumps(run("m", 3e-5)))
    assert check.measured_gradients([str(first), str(second)]) == {("m", "numpyro[cpu]"): 3e-5}


def test_overhead_bench_reports_new_processes_by_their_medians(monkeypatch):
    import bench_overhead

    def run(wall, selection, overhead):
        return {"chosen": "numpyro[cpu]", "wall": wall, "selection_seconds": selection,
                "check_seconds": 0.0, "record_seconds": 0.015, "precision_check_seconds": 0.0,
                "overhead": overhead, "saved_seconds": 0.01, "net_overhead": overhead - 0.005}

    runs = iter([run(5.0, 0.2, 0.042), run(5.0, 0.05, 0.012),  # as timed, then logp first
                 run(6.0, 0.1, 0.02), run(6.0, 0.04, 0.010),
                 {"error": "RuntimeError: boom"}, {"error": "RuntimeError: boom"}])
    seen = []

    def fake(name, history, seed, logp_first=False):
        seen.append(logp_first)
        return next(runs)

    monkeypatch.setattr(bench_overhead, "new_process_run", fake)
    fresh = bench_overhead.new_process_runs("eight_schools", "empty", 1, 3)
    assert seen == [False, True] * 3  # interleaved
    assert fresh["processes"] == 2 and fresh["overheads"] == [0.042, 0.02]
    assert fresh["wall"] == 5.5 and fresh["overhead"] == pytest.approx(0.031)
    assert fresh["logp_first"]["selection_seconds"] == pytest.approx(0.045)
    assert fresh["logp_first"]["overheads"] == [0.012, 0.010]
    results = {"command": "c", "machine": "m", "history": "empty", "models": [
        {"model": "eight_schools", "default_run": {"skipped": "long"}, "new_process": fresh}]}
    text = bench_overhead.markdown(results)
    assert ("| eight_schools | numpyro[cpu] | 5.5 s | 150 ms | 0 ms | 15 ms | **3.1%** "
            "(4.2%, 2.0%) | **2.6%** (10 ms) | 45 ms | **1.1%** (1.2%, 1.0%) | **0.6%** |") in text
    assert "Overhead in a new process: median 3.1%" in text
    assert "Net of the log density the run was handed: median 2.6%" in text
    assert "(the model's log density built and ArviZ imported first): median 1.1%" in text


def test_a_later_runs_choice_that_was_not_run_is_run_for_its_regret(monkeypatch):
    """The history step's choice (a tried runner-up) is run when no row has it, so its regret
    is judged rather than left out."""
    import pymc_accel
    from pymc_accel.backend import SampleRequest
    from pymc_accel.models import eight_schools

    ran = []

    def fake_run(name, factory, candidates, request, args, report, on_row=None):
        ran.append(set(candidates))
        return [{"candidate": label, "cold_ess_per_s": 10.0} for label in candidates]

    monkeypatch.setattr(bench_regret, "_run_candidates", fake_run)
    args = bench_regret._parse(["--quick", "--draws", "50", "--tune", "50"])
    result = {"model": "eight_schools",
              "rows": [{"candidate": "numpyro[cpu,float64,chain_method=parallel]"}],
              "chosen": {"auto": "numpyro[cpu,float64,chain_method=parallel]",
                         "auto (second run, history)": "numba[cpu,float64,driver=nutpie]",
                         "auto (third run, history)": "numba[cpu,float64,driver=nutpie]"}}
    report = pymc_accel.select(eight_schools())
    rows = bench_regret._run_later_choices(eight_schools, args,
                                           SampleRequest(cores=2), result, report)
    assert ran == [{"numba[cpu,float64,driver=nutpie]"}]
    assert [r["candidate"] for r in rows] == ["numba[cpu,float64,driver=nutpie]"]
    result["rows"] += rows  # nothing left to run
    assert bench_regret._run_later_choices(eight_schools, args,
                                           SampleRequest(cores=2), result, report) == []


def test_the_deadline_bench_marks_a_selection_over_its_budget_and_a_compile_left_running():
    import bench_measure_deadline

    base = {"chosen": "numpyro[cpu,float64]", "budget_seconds": 5.0, "run_seconds": 3.0,
            "measured": ["a", "b"], "draws_returned": 2000, "draws_asked": 2000}
    results = [
        {**base, "model": "kept", "selection_seconds": 4.4, "abandoned": [
            {"candidate": "numba[cpu,float64,driver=pymc]", "offered_seconds": 2.5,
             "ran_on_seconds": 8.38}]},
        {**base, "model": "over", "selection_seconds": 5.3, "abandoned": []},
    ]
    text = bench_measure_deadline.markdown(results, {"command": "c", "machine": "m",
                                                     "budget": 5.0, "draws": 1000,
                                                     "tune": 1000, "chains": 2})
    kept, over = (line for line in text.splitlines() if line.startswith(("| kept", "| over")))
    assert "| 4.40 | yes | 2 | numba[cpu,float64,driver=pymc] | 8.38 |" in kept
    assert "| 5.30 | **no** | 2 | none | - |" in over


def test_the_float32_loop_tool_reads_numpyros_two_rows_from_a_regret_file(tmp_path):
    import float32_loop

    rows = [{"candidate": float32_loop.F64, "warm_median_wall": 1.5},
            {"candidate": float32_loop.F32, "warm_median_wall": 1.0},
            {"candidate": "numba[cpu,float64,driver=nutpie]", "warm_median_wall": 9.0}]
    path = tmp_path / "regret.json"
    path.write_text(json.dumps({"models": [{"model": "m", "rows": rows},
                                           {"model": "no_f32", "rows": rows[:1]}]}))
    assert float32_loop.sampler_ratios(str(path)) == {"m": 1.5}
    assert float32_loop.sampler_ratios(None) == {}


def test_single_ops_are_timed_per_element_under_xla_and_numba():
    import fit_xla_ops as ops

    for runtime in ("xla", "numba"):
        for op in ("exp", "scatter_add"):
            for precision in ("float64", "float32"):
                seconds = ops.time_op(runtime, op, size=256, groups=8, passes=4, rounds=1,
                                      precision=precision)
                assert 0 < seconds < 1e-5


def test_single_ops_run_on_arrays_of_the_precision_asked():
    import fit_xla_ops as ops

    for precision in ("float64", "float32"):
        run = ops._xla_runner("scatter_add", 64, 4, 2, precision)
        assert str(run().dtype) == precision


def test_xla_functions_are_timed_as_pytensor_jaxifies_them_in_both_precisions(tmp_path):
    import time_xla_functions as bench

    out = tmp_path / "functions.jsonl"
    lines = bench.main(["--functions", "Exp,GammaLn", "--size", "64", "--passes", "4",
                        "--rounds", "1", "--out", str(out)])
    assert [(line["function"], line["precision"]) for line in lines] == [
        ("Exp", "float64"), ("GammaLn", "float64"), ("Exp", "float32"), ("GammaLn", "float32")]
    assert all(line["in_calibrated_exps"] == pytest.approx(
        line["ns_per_element"] / line["calibrated_exp_ns"], rel=0.01, abs=1e-3) for line in lines)
    assert [json.loads(line) for line in out.read_text().splitlines()] == lines


def test_gradient_devices_bench_times_one_device_and_two_in_its_own_process():
    import subprocess

    script = Path(__file__).parent.parent / "bench" / "time_gradient_devices.py"
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYMC_ACCEL_HISTORY="off")
    env.pop("XLA_FLAGS", None)
    done = subprocess.run([sys.executable, str(script), "--models", "glm_poisson", "--passes",
                           "4", "--rounds", "1", "--precisions", "float64,float32"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| glm_poisson |")]
    assert [row.split("|")[2].strip() for row in rows] == ["float64", "float32"]
    for row in rows:
        one, two, ratio, modelled_one = (float(cell) for cell in row.split("|")[3:7])
        assert one > 0 and two > 0 and ratio == pytest.approx(two / one, rel=0.02, abs=0.01)
    modelled = [float(row.split("|")[6]) for row in rows]
    assert modelled[1] < modelled[0]  # float32 priced as its own precision


def test_xla_function_costs_are_read_at_the_largest_size(tmp_path):
    import fit_xla_functions as fit

    ops = tmp_path / "ops.jsonl"
    ops.write_text("".join(json.dumps(line) + "\n" for line in (
        {"op": "exp", "runtime": "xla", "size": 10, "in_calibrated_exps": 0.9},
        {"op": "exp", "runtime": "xla", "size": 100, "in_calibrated_exps": 0.3},
        {"op": "exp", "runtime": "numba", "size": 100, "in_calibrated_exps": 1.0},
        {"op": "mul_add", "runtime": "xla", "size": 100, "in_calibrated_exps": 0.04})))
    assert fit.function_costs(str(ops)) == {"Exp": 0.3}
    assert fit.rms([math.log(2), -math.log(2)]) == pytest.approx(math.log(2))


def test_record_bench_sets_the_record_beside_every_elements_smallest_bulk_ess():
    import bench_record_ess as bench
    import numpy as np
    import xarray as xr
    from arviz_stats.base import array_stats

    from pymc_accel import history

    draws = np.random.default_rng(4).standard_normal((2, 500, 40))
    draws[:, :, 33] = np.cumsum(draws[:, :, 33], axis=1) * 0.05 + draws[:, :, 33]

    class Run:
        posterior = xr.Dataset({"a": (("chain", "draw", "i"), draws[:, :, :10]),
                                "b": (("chain", "draw", "j"), draws[:, :, 10:])})

    every = array_stats.ess(np.concatenate([draws[:, :, :10], draws[:, :, 10:][:, :, np.linspace(
        0, 29, history.ESS_ELEMENTS_PER_VARIABLE).round().astype(int)]], axis=2),
        chain_axis=0, draw_axis=1, method="bulk")
    value, seconds = bench.timed(bench.every_element, Run(), repeats=2)
    assert value == pytest.approx(float(every.min())) and seconds > 0


def test_gpu_leapfrog_fit_recovers_the_constants_it_was_given(tmp_path):
    """bench/fit_gpu_leapfrog.py: runs made from known fixed seconds and loop iterations give
    those back, and the probe's kernel share is its slope over the calibrated iteration."""
    import fit_gpu_leapfrog

    launch, share, c, iterations = 6.6e-6, 0.064, 0.2, 15.0
    rows = []
    for model, kernels, fixed in (("a", 90, 1.1), ("b", 120, 1.2), ("c", 220, 1.3)):
        for steps, batched in ((20, 300.0), (20, 260.0), (400, 5000.0), (400, 7000.0)):
            wall = fixed + c + batched * launch * (iterations + share * kernels)
            rows.append({"model": model, "steps": steps, "batched": batched, "launch": launch,
                         "kernels": kernels, "fixed_modelled": fixed, "wall": wall})
    got_c, got_iterations = fit_gpu_leapfrog.fit(rows, share)
    assert got_c == pytest.approx(c, abs=1e-6)
    assert got_iterations == pytest.approx(iterations, rel=1e-6)
    probe = tmp_path / "probe.jsonl"
    probe.write_text('{"k": 1, "per_iteration_seconds": 9e-06}\n'
                     '{"fit": "per_iteration = iteration + kernel * k", "kernel_seconds": 4.2e-07}\n')
    assert fit_gpu_leapfrog.kernel_share(str(probe), 6.6e-6) == pytest.approx(4.2e-7 / 6.6e-6)


def test_fit_guard_compares_two_machines_checks_model_by_model(tmp_path, capsys):
    import fit_guard

    def write(name, rows):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(path)

    here = write("here.jsonl", [
        {"model": "a", "seconds": s, "python_loop_seconds": 0.15} for s in (0.4, 0.5, 0.6)]
        + [{"model": "b", "seconds": 0.2, "python_loop_seconds": 0.15},
           {"model": "only_here", "seconds": 9.0, "python_loop_seconds": 0.15}])
    there = write("there.jsonl", [{"model": "a", "seconds": 0.1, "python_loop_seconds": 0.06},
                                  {"model": "b", "seconds": 0.1}])
    fit_guard.compare(here, there)
    out = capsys.readouterr().out
    assert "| a | 500 ms | 100 ms | 5.00 |" in out  # the medians' ratio
    assert "| b | 200 ms | 100 ms | 2.00 |" in out and "only_here" not in out
    assert "(2.50x)" in out  # the loops' ratio
    assert "geometric mean ratio 3.16 over 2 models" in out


def test_float32_leapfrog_fit_recovers_known_factors_from_the_precisions_ratio(tmp_path,
                                                                               monkeypatch):
    """``fit_numpyro_leapfrog.py --float32``: each model's float32 leapfrog priced from its
    float64 one by known float32 factors is fitted back to them; a model timed in one precision
    only, or whose float32 leapfrog is noise, is left out of the pairs."""
    from dataclasses import replace

    import fit_numpyro_leapfrog as fit

    from pymc_accel import costmodel, machine
    from pymc_accel.machine import MachineFigures

    figures = MachineFigures({"float32": 2e9, "float64": 1e9}, {"float32": 2e10, "float64": 2e10},
                             {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)
    monkeypatch.setattr(machine, "machine_figures", lambda *a, **k: figures)
    truth = replace(costmodel.JAX_CPU_SAMPLER, float32_flops_factor=2.0,
                    float32_transcendental_factor=4.0)

    def line(name, precision, seconds):
        return {"model": name, "precision": precision, "method": "compiled_loop", "runs": {
            "100": {"walls": [0.01] * 3, "leapfrogs": 0.0},
            "1000": {"walls": [0.01 + 1e5 * seconds] * 3, "leapfrogs": 1e5}}}

    lines = []
    for name in ("glm_poisson", "seed_small", "logistic", "varying_intercept", "mixture"):
        profile = profile_model(zoo.fit_models()[name]())
        for precision in ("float64", "float32"):
            seconds = costmodel.cpu_gradient_seconds(profile, figures, precision, truth, 2).value
            lines.append(line(name, precision, seconds))
    lines.append(line("student_t", "float64", 1e-5))  # one precision only
    noise = line("logistic", "float32", 1e-9)  # timed again, under the noise: not paired
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [*lines, noise]))
    pairs = fit.precision_pairs([str(path)])
    assert sorted(a["model"] for a, _ in pairs) == [
        "glm_poisson", "logistic", "mixture", "seed_small", "varying_intercept"]
    assert fit.float32_fit([str(path)], {"glm_poisson", "seed_small", "logistic",
                                         "varying_intercept", "mixture"}) == (2.0, 4.0)


def test_tall_products_vector_form_keeps_the_log_density_and_its_gradient():
    """``time_tall_products.vector_form``, the numba alternative the bench times, computes the
    same log density and gradient as the graph as written."""
    import numpy as np
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt
    import time_tall_products

    from pymc_accel.profile import log_density_graph

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    with pm.Model() as model:
        b = pm.Normal("b", 0, 1, shape=3)
        pm.Normal("y", pm.math.dot(X, b), 1.0, observed=rng.normal(size=50))
    graph, _ = log_density_graph(model)
    (b_value,) = graph.value_vars
    rewritten = time_tall_products.vector_form(graph.logp)
    assert any(getattr(v, "data", np.empty(0)).shape == (3, 50)
               for v in pytensor.graph.traversal.graph_inputs([rewritten]))
    before = pytensor.function([b_value], [graph.logp, pt.grad(graph.logp, b_value)])
    after = pytensor.function([b_value], [rewritten, pt.grad(rewritten, b_value)])
    point = rng.normal(size=3)
    for x, y in zip(before(point), after(point)):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_gradient_threads_bench_times_both_precisions_with_threads_on_and_off(monkeypatch):
    """bench/time_gradient_threads.py: each thread setting in a new process, whose XLA_FLAGS
    carry the setting (XLA reads them once, at its start)."""
    import time_gradient_threads

    flags = []
    real = time_gradient_threads.subprocess.run

    def run(cmd, env, **kwargs):
        flags.append(env.get("XLA_FLAGS"))
        return real(cmd, env=env, **kwargs)

    monkeypatch.setattr(time_gradient_threads.subprocess, "run", run)
    rows = time_gradient_threads.main(["--models", "eight_schools", "--budget", "5"])
    assert [r["threads"] for r in rows] == [True, False]
    assert flags == [None, time_gradient_threads.NO_THREADS]
    for row in rows:
        assert row["float64"] > 0 and row["float32"] > 0


def test_adaptation_ess_bench_sets_each_variable_against_nutpies(monkeypatch, capsys):
    """bench/compare_adaptation_ess.py: nutpie once, NumPyro at each tuning length, and each
    variable's median smallest ESS as a ratio to nutpie's (runs replaced by fixed rows)."""
    import compare_adaptation_ess

    def run_once(name, sampler, tune, draws, seed, target_accept):
        assert target_accept == 0.8
        ess = {"nutpie": {"mu": 1000.0, "sd": 400.0},
               "numpyro": {"mu": 500.0 + tune / 10, "sd": 200.0 + seed}}[sampler]
        return {"sampler": sampler, "tune": tune, "seed": seed, "wall": 1.0,
                "leapfrogs_per_draw": 15.0, "step_size": 0.2 + seed / 100, "acceptance": 0.8,
                "ess": ess}

    monkeypatch.setattr(compare_adaptation_ess, "run_once", run_once)
    rows = compare_adaptation_ess.main(["--model", "groups_503", "--tunes", "1000,3000",
                                        "--seeds", "1,2,3"])
    assert [(r["sampler"], r["tune"]) for r in rows] == (
        [("nutpie", 1000)] * 3 + [("numpyro", 1000)] * 3 + [("numpyro", 3000)] * 3)
    table = capsys.readouterr().out
    assert "| numpyro | 1000 | mu | 600 | 0.60 | 15.0 | 0.220 | 0.80 |" in table
    assert "| numpyro | 3000 | sd | 202 | 0.51 | 15.0 | 0.220 | 0.80 |" in table


def test_adaptation_ess_bench_gradient_adapter_estimates_the_mass_matrix_as_nutpie():
    """bench/compare_adaptation_ess.py's ``numpyro_gradient``: in Stan's windows, each middle
    window ends with the inverse mass matrix ``sqrt(var(z) / var(grad))`` of that window's
    draws and gradients (NumPyro's own takes ``var(z)``), fed here by hand."""
    import compare_adaptation_ess
    import jax
    import numpy as np
    from numpyro.infer.hmc_util import IntegratorState, build_adaptation_schedule

    def never(*args, **kwargs):
        raise AssertionError("a dense mass matrix goes to NumPyro's own adapter")

    steps = 300
    init_fn, update_fn = compare_adaptation_ess.gradient_adapter(never)(steps)
    rng = np.random.default_rng(0)
    z = rng.normal(size=(steps, 2)) * [1.0, 10.0]
    g = rng.normal(size=(steps, 2)) * [3.0, 0.5]
    state = init_fn(IntegratorState(z[0], None, 0.0, g[0]), jax.random.PRNGKey(0))
    update = jax.jit(update_fn)
    schedule = build_adaptation_schedule(steps)
    start, end = schedule[-2]  # the last middle window: its estimate is the one sampling uses
    for t in range(steps):
        state = update(t, 0.8, IntegratorState(z[t], None, 0.0, g[t]), state)
        if t == end - 1:
            before = np.asarray(state.inverse_mass_matrix)
    window = slice(start, end + 1)
    expected = np.sqrt(z[window].var(axis=0) / g[window].var(axis=0))
    np.testing.assert_allclose(np.asarray(state.inverse_mass_matrix), expected, rtol=1e-5)
    assert not np.allclose(before, expected)  # set at the window's end, not before
    np.testing.assert_allclose(np.asarray(state.mass_matrix_sqrt_inv), np.sqrt(expected),
                               rtol=1e-5)


def test_mass_start_bench_starts_numpyro_from_the_clipped_inverse_gradient():
    """bench/compare_mass_start.py: the kernel's starting inverse mass matrix is ``1 / |g|``
    at the chain's start, clipped to the cap, 1 where the gradient is zero; NumPyro's own
    start (the identity) is left to a plain NUTS."""
    import compare_mass_start
    import jax
    import jax.numpy as jnp
    import numpy as np

    def potential(position):
        (x,) = position
        return 0.5 * jnp.sum((x / jnp.array([0.1, 1.0, 10.0])) ** 2)

    start = [jnp.array([0.5, 0.0, 0.5])]
    gradient = np.array([0.5 / 0.01, 0.0, 0.5 / 100.0])
    kernel = compare_mass_start.gradient_started_nuts(1e10)(potential_fn=potential)
    state = kernel.init(jax.random.PRNGKey(0), 10, start)
    np.testing.assert_allclose(np.asarray(state.adapt_state.inverse_mass_matrix),
                               [1 / gradient[0], 1.0, 1 / gradient[2]], rtol=1e-6)
    capped = compare_mass_start.gradient_started_nuts(1.0)(potential_fn=potential)
    state = capped.init(jax.random.PRNGKey(0), 10, start)
    np.testing.assert_allclose(np.asarray(state.adapt_state.inverse_mass_matrix),
                               [1 / gradient[0], 1.0, 1.0], rtol=1e-6)
    assert kernel._inverse_mass_matrix is None  # the kernel's own start again after init


def test_mass_start_bench_summarizes_each_start_against_the_identity(tmp_path, capsys):
    import compare_mass_start

    def row(start, seed, tuning, sampling, ess):
        return {"model": "m", "start": start, "seed": seed, "draws": 1000, "n_free": 5,
                "tuning_leapfrogs": tuning, "sampling_leapfrogs": sampling,
                "min_bulk_ess": ess, "median_bulk_ess": ess}

    rows = [row("identity", 1, 3000, 1000, 100), row("1", 1, 1000, 1000, 100),
            row("identity", 2, 3000, 1000, 100), row("1", 2, 7000, 1000, 50)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    compare_mass_start.main(["--summarize", str(path)])
    out = capsys.readouterr().out
    assert "| m | 5 | 3000 / 1000 | 4000 / 1000 | 0.50, 2.00 | 1.00, 0.50 |" in out
    assert "geometric mean 1.000 over 2 (model, seed) pairs; range 0.50-2.00" in out


def test_mass_start_bench_local_start_averages_the_gradient_over_jittered_points():
    """bench/compare_mass_start.py's ``local:<points>:<cap>``: ``1 / mean |g|`` over the chain's
    start and ``points`` jittered from it by uniform(-1, 1), from a key folded off the chain's."""
    import compare_mass_start
    import jax
    import jax.numpy as jnp
    import numpy as np

    scales = jnp.array([0.1, 1.0, 10.0])

    def potential(position):
        return 0.5 * jnp.sum((position[0] / scales) ** 2)

    start, key = jnp.array([0.5, -0.2, 0.5]), jax.random.PRNGKey(3)
    got = compare_mass_start.local_inverse_mass(potential, [start], 1e10, 3, key)
    noise = jax.random.uniform(jax.random.fold_in(key, 7919), (3, 3), start.dtype, -1.0, 1.0)
    points = np.concatenate([np.asarray(start)[None], np.asarray(start + noise)])
    want = 1.0 / np.mean(np.abs(points / np.asarray(scales) ** 2), axis=0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    kernel = compare_mass_start.gradient_started_nuts(1e10, 3)(potential_fn=potential)
    state = kernel.init(key, 10, [start])
    assert np.asarray(state.adapt_state.inverse_mass_matrix).shape == (3,)


def test_blackjax_leapfrog_bench_takes_the_extra_draws_cost_over_their_leapfrogs(monkeypatch,
                                                                                capsys):
    """bench/fit_blackjax_leapfrog.py --method two_runs: the difference of the two lengths'
    median walls over the difference of their leapfrogs, each candidate; BlackJAX's against
    NumPyro's at the end (runs replaced by a fixed cost and a per-leapfrog cost of each
    candidate's)."""
    import fit_blackjax_leapfrog

    numpyro, blackjax = fit_blackjax_leapfrog.CANDIDATES
    cost = {numpyro: 100e-6, blackjax: 50e-6}
    calls = []

    def run(name, label, tune, draws, seed):
        calls.append((label, draws))
        leapfrogs = 10.0 * draws
        return 3.0 + cost[label] * leapfrogs, leapfrogs

    monkeypatch.setattr(fit_blackjax_leapfrog, "_run", run)
    lines = fit_blackjax_leapfrog.main(["--method", "two_runs", "--models", "m",
                                        "--repeats", "2"])
    assert [line["per_leapfrog_seconds"] for line in lines] == pytest.approx([100e-6, 50e-6])
    assert all(line["deterministic"] for line in lines)
    assert calls.count((numpyro, 200)) == 3  # a warm run, then 2 timed
    assert '"blackjax_over_numpyro_per_leapfrog": {"m": 0.5' in capsys.readouterr().out


def test_blackjax_leapfrog_is_timed_in_one_compiled_program():
    """``fit_blackjax_leapfrog.time_blackjax_leapfrogs`` tunes BlackJAX's NUTS with its window
    adaptation and runs its kernel in one compiled loop: the shorter length's runs hold
    leapfrogs and no compile (well under the tenth of a second a compile takes), the longer
    counts more, and each chain's tuning leapfrogs are counted."""
    import fit_blackjax_leapfrog as fit
    import jax.numpy as jnp

    timed = fit.time_blackjax_leapfrogs(lambda x: -0.5 * jnp.sum(x ** 2), jnp.full((2, 3), 0.5),
                                        (5, 50), warmup=30, repeats=2)
    short, long = timed["runs"].values()
    assert max(short["walls"]) < 0.1
    assert min(long["leapfrogs_all"]) > max(short["leapfrogs_all"]) > 0
    assert len(timed["tuning_leapfrogs"]) == 2 and min(timed["tuning_leapfrogs"]) >= 30


def test_blackjax_compiled_loop_line_sets_blackjaxs_leapfrog_against_numpyros(monkeypatch,
                                                                             capsys):
    """``--method compiled_loop`` (the default): each sampler's leapfrog from its loop's median
    walls at the two lengths, and BlackJAX's over NumPyro's per line and per model (loops
    replaced by a per-leapfrog cost of each sampler's and a fixed 10 ms)."""
    import fit_blackjax_leapfrog as fit
    import fit_numpyro_leapfrog

    def runs(cost, lengths, repeats):  # ten leapfrogs a draw
        return {n: {"walls": [0.01 + cost * 10 * n] * repeats,
                    "leapfrogs_all": [10.0 * n] * repeats} for n in lengths}

    def numpyro(potential, init, lengths, warmup, repeats):
        return runs(100e-6, lengths, repeats)

    def blackjax(logdensity, init, lengths, warmup, repeats):
        return {"runs": runs(80e-6, lengths, repeats), "tuning_leapfrogs": [1, 1]}

    monkeypatch.setattr(fit_numpyro_leapfrog, "time_leapfrogs", numpyro)
    monkeypatch.setattr(fit, "time_blackjax_leapfrogs", blackjax)
    monkeypatch.setattr(fit, "_inputs", lambda name, precision: (None, [None]))
    lines = fit.main(["--models", "a,b", "--precisions", "float64"])
    assert [line["ratio"] for line in lines] == pytest.approx([0.8, 0.8])
    assert lines[0]["blackjax"]["per_leapfrog_seconds"] == pytest.approx(80e-6)
    assert lines[0]["numpyro"]["per_leapfrog_seconds"] == pytest.approx(100e-6)
    assert '"median": 0.8' in capsys.readouterr().out


def test_blackjax_fixed_line_is_the_warm_short_runs_median_wall_ratio(monkeypatch):
    """``--method fixed``: each candidate in the line's precision, one warming run then the
    repeats, BlackJAX's median wall over NumPyro's."""
    import fit_blackjax_leapfrog as fit

    walls = {"numpyro": iter([9.0, 1.0, 1.2, 0.8]), "blackjax_nuts": iter([9.0, 1.5, 1.2, 1.8])}
    calls = []

    def run(name, label, tune, draws, seed):
        calls.append((label, tune, draws))
        return next(walls[label.split("[")[0]]), 100.0

    monkeypatch.setattr(fit, "_run", run)
    (line,) = fit.main(["--method", "fixed", "--models", "m", "--precisions", "float32"])
    assert line["ratio"] == pytest.approx(1.5)
    assert {label for label, _, _ in calls} == {
        "numpyro[cpu,float32,chain_method=parallel]",
        "blackjax_nuts[cpu,float32,chain_method=parallel]"}
    assert {(t, d) for _, t, d in calls} == {(10, 10)}


def test_subnormal_count_finds_float32_underflow_and_nothing_where_there_is_none():
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    from count_float32_subnormals import subnormals

    with pm.Model() as model:
        x = pm.Normal("x", 95.0, 1.0)
        pm.Potential("tail", pt.log(1.0 + pt.exp(-x)))  # exp(-95) is subnormal in float32
    assert sum(subnormals(model, [{"x": np.array(95.0)}]).values()) > 0
    assert subnormals(model, [{"x": np.array(5.0)}]) == {}


def test_gradient_fusions_are_read_back_from_a_profiler_trace():
    import trace_gradient_fusions as trace

    for precision in ("float64", "float32"):
        thunks = trace.trace_model(zoo.named()["glm_poisson"](), precision, calls=3, rounds=2)
        assert thunks and all(us > 0 for us in thunks.values())
        assert not any(name.startswith(trace._NOT_THUNKS) for name in thunks)


def test_xla_tuning_bench_times_each_setting_in_processes_of_its_own(tmp_path):
    """bench/compare_xla_tuning.py: the tuned processes start JAX with pymc-accel's flag and
    the default ones without it, and each (model, precision) gets both settings' medians."""
    import compare_xla_tuning

    from pymc_accel import xla_tuning

    if not xla_tuning.flag_parsed_by(xla_tuning.jaxlib_release()):
        pytest.skip("this jaxlib is not one checked to parse the flag")
    result = compare_xla_tuning.main(["--models", "eight_schools", "--precisions", "float64",
                                      "--rounds", "1", "--passes", "5", "--what", "gradient",
                                      "--markdown", str(tmp_path / "t.md")])
    assert xla_tuning.YNN_REDUCE_OFF in result["tuned_flags"].split()
    assert "ynn" not in result["default_flags"]
    assert {(r["model"], r["measure"]) for r in result["rows"]} == {
        ("eight_schools", "one_device"), ("eight_schools", "two_devices")}
    for row in result["rows"]:
        assert row["tuned"] > 0 and row["default"] > 0
    assert "| eight_schools | float64 | two_devices |" in (tmp_path / "t.md").read_text()


def test_float32_posterior_comparison_tells_a_shifted_posterior_from_the_same_one():
    """``bench/compare_float32_posteriors.py`` judges the float32 guard by posteriors: the same
    draws agree, draws shifted by many standard errors differ, and the sd ratio is read."""
    import arviz as az
    import numpy as np

    import compare_float32_posteriors as cmp

    rng = np.random.default_rng(0)
    draws = rng.normal(size=(4, 500, 3))
    base = az.from_dict({"posterior": {"a": draws, "b": draws[..., 0]}})
    same = az.from_dict({"posterior": {"a": draws.astype("float32"), "b": draws[..., 0]}})
    shifted = az.from_dict({"posterior": {"a": draws + [0.0, 0.5, 0.0],
                                          "b": 2.0 * draws[..., 0]}})
    agree = cmp.compare(base, same)
    assert agree["z"] < 1e-3 and agree["sd_ratio"] == pytest.approx((1.0, 1.0), rel=1e-5)
    differ = cmp.compare(base, shifted)
    assert differ["z"] > cmp.Z_LIMIT and differ["where"] == "a"
    assert differ["sd_ratio"] == pytest.approx((1.0, 2.0), rel=1e-6)
    constant = np.ones((4, 500))  # a correlation matrix's diagonal: 1 up to float32's ulp
    diagonal = cmp.compare(az.from_dict({"posterior": {"c": constant}}),
                           az.from_dict({"posterior": {"c": constant * np.float32(1 - 6e-8)
                                                       + rng.normal(0, 1e-8, (4, 500))}}))
    assert diagonal["z"] == 0.0
    assert callable(cmp.model_factory("rice")) and callable(cmp.model_factory("eight_schools"))


def test_backend_posterior_comparison_reads_a_samplers_options_and_names_every_model():
    """``bench/compare_backend_posteriors.py`` runs ``name:option=value`` as
    ``pymc_accel.sample``'s arguments, and its default set is the sweep's."""
    import compare_backend_posteriors as cmp

    assert cmp.sampler_arguments("numba:driver=pymc") == {"nuts_sampler": "numba",
                                                          "driver": "pymc"}
    assert cmp.sampler_arguments("numpyro") == {"nuts_sampler": "numpyro"}
    import compare_float32_posteriors

    for name in cmp.EIGHTH_SET.split(","):
        assert callable(compare_float32_posteriors.model_factory(name))


def test_evaluator_comparison_finds_the_integer_reciprocal_and_a_start_that_is_not_pymcs(
        monkeypatch):
    """``bench/compare_evaluator.py`` reports a model whose evaluator start differs from
    PyMC's (the integer-reciprocal bug) and a log density that differs from the function's."""
    import numpy as np
    import pymc as pm

    import compare_evaluator
    from pymc_accel import graph_building

    with pm.Model() as model:
        sigma = pm.Exponential("sigma", 2)
        pm.Normal("y", 0.0, sigma, observed=[0.3, -0.1])
    worst, same_start, error = compare_evaluator.compare(model)
    assert worst < compare_evaluator.TOLERANCE and same_start and not error

    real = graph_building.Evaluator

    class Off(real):  # an evaluator one part in a thousand off, and a start off PyMC's
        def __call__(self, *values):
            return [np.asarray(v) * (1 + 1e-3) if np.size(v) else v
                    for v in real.__call__(self, *values)]

    monkeypatch.setattr(graph_building, "Evaluator", Off)
    worst, same_start, error = compare_evaluator.compare(model)
    assert worst > compare_evaluator.TOLERANCE and not same_start
    assert "seed_large" not in compare_evaluator.models()


def test_backend_posterior_comparison_tells_unmixed_chains_from_a_wrong_posterior():
    """A posterior that differs with chains that never mixed is a sampler that says so
    (R-hat); one with R-hat near 1 is silently wrong: the table keeps them apart."""
    import arviz as az
    import numpy as np

    import compare_backend_posteriors as cmp

    rng = np.random.default_rng(0)
    mixed = az.from_dict({"posterior": {"a": rng.normal(size=(4, 500))}})
    unmixed = az.from_dict({"posterior": {"a": rng.normal(size=(4, 500))
                                          + np.arange(4)[:, None]}})
    rhat, ess = cmp.convergence(mixed)
    assert rhat < cmp.RHAT_LIMIT and ess > 1000
    rhat, ess = cmp.convergence(unmixed)
    assert rhat > cmp.RHAT_LIMIT and ess < 100


def test_repeated_nodes_bench_counts_the_repeats_and_compares_both_evaluations():
    """bench/count_repeated_nodes.py: PyTensor's gradient of the interval model's
    ``gammainc`` of a free shape repeats its scalar loops; the evaluator merges them by
    default, with the values of the evaluator that computes every node."""
    import count_repeated_nodes

    row = count_repeated_nodes.measure(zoo.named()["intervals_2"](), repeats=1)
    r = row["float64"]
    assert r["same values"] and r["default"]
    assert 0 < r["loops merged"] < r["loops"] and 0 < r["merged"] < r["nodes"]
    assert r["once"] > 0 and r["every"] > 0
    # the float32 copy holds each repeated loop once already (precision.float32_graph)
    r32 = row["float32"]
    assert r32["same values"] and r32["loops merged"] == 0
    assert r32["loops"] == r["loops"] - r["loops merged"]
