"""Replay recorded regret runs under the current cost model: which candidate would ``auto``
choose now, and what regret would that choice have had against the runs already measured?

``bench/bench_regret.py`` takes half an hour for the quick zoo at 500 + 500 draws; a change to
the cost model changes only the choice, not the runs. This script selects again (modelled,
nothing sampled; run history and profile store off) for every model of the given result files,
with the draws, tuning and chains those runs had, and judges the choice against the recorded
rows: warm median regret, pooled regret and its 90% bootstrap interval, as ``bench_regret``
reports them. A choice that was never run in the recorded set has no regret and says so.

Result files of ``bench/bench_fresh_process.py`` (every run a new process) are replayed with
first use charged, as a new process selects (and, for its ``--cold`` runs, the model's first
compile, with an empty run history): the choice is judged against those runs' median
and pooled ESS/s (their run length is not recorded there: ``--fresh-draws``, default 1000 tune
+ 1000 draws x 2 chains, as they were run).

``--machine-pace`` replays each model of a one-process result file as a machine whose run
history holds the other models' warm runs (each candidate's median warm wall, recorded twice, as
a second run of a model would be): leave one model out, select it with the run history on, and
judge the choice. It shows what :func:`pymc_accel.history.machine_pace` does for a user who has
run other models on the machine, out of sample for the model judged.

``--second-run`` replays what a user's next runs of each model would choose: with a run
history of its own (the model's kernels treated as cached, as in the recorded runs), select the
model, record the chosen candidate's recorded run (the warm run of median wall time, with its
leapfrogs and effective draws per draw), and select again; where that selection tries a close
call's runner-up, record the runner-up's run and select a third time. It judges the choice of
every run after the first, as ``bench_regret``'s history step does with new runs.

A replay selects with the machine figures the result file recorded (``machine_figures``, the
calibration its runs were selected with), so that a replay on a slower or faster machine judges
the cost model, not the machine it runs on; ``--this-machine`` selects with this machine's
calibration instead (as every replay did before 2026-12-02; a machine whose Python loop ran
2.6x the fit machine's then priced start-up 2.6x over the recorded runs'). What the selection
evaluates within a budget in seconds (the posterior's conditioning) runs at this machine's
pace, so its budget is scaled by how much slower this machine's Python loop is than the
recorded one's.

A replay judges a model change in seconds, but only against what was measured: it is a check
on the recorded set, not a new measurement, and figures fitted on the same set (as the cost
model's are) are judged in sample. ``docs/benchmarks.md`` says which.

    JAX_PLATFORMS=cpu python bench/replay_regret.py docs/results/regret-cpu-500.json \\
        docs/results/regret-cpu-500-all.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _factory(name: str):
    """The zoo's factory for a recorded model name, at quick sizes, else at full ones, else
    among the held-out models."""
    import zoo

    quick, full = zoo.zoo(quick=True), zoo.zoo(quick=False)
    return quick.get(name) or full.get(name) or zoo.held_out().get(name)


def _with_factories(records, lines: list[dict]):
    """Each recorded model with the zoo's factory for it; a model the zoo lacks gets an error
    line in ``lines`` instead."""
    for record in records:
        factory = _factory(record["model"])
        if factory is None:
            lines.append({"model": record["model"], "error": "not in bench/zoo.py"})
            continue
        yield record, factory


def replay(results: dict, machine_pace: bool = False) -> list[dict]:
    """One line per recorded model: recorded and replayed choices and the replayed regret.
    With ``machine_pace``, each model is selected with the other models' runs in a run history
    of its own (:func:`_other_models_in_history`)."""
    import pymc_accel
    from bench_regret import _low_ess, _regret, pooled_regret_interval
    from pymc_accel.selection import forget_profiles

    lines = []
    for record, factory in _with_factories(results["models"], lines):
        _SELECTING["model"] = record["model"]  # named in --count-evaluations' list
        with (_other_models_in_history(results, record["model"]) if machine_pace
              else contextlib.nullcontext()):
            forget_profiles()
            report = pymc_accel.select(factory(), draws=results["draws"],
                                       tune=results["tune"], chains=results["chains"])
        rows = [r for r in record["rows"] if r.get("cold_ess_per_s") is not None]
        regret = _regret(rows, report.chosen, 0.0)
        line = {"model": record["model"], "recorded": record["chosen"]["auto"],
                "replayed": report.chosen, "draws": results["draws"],
                "regret_warm": regret.get("regret_warm"),
                "regret_warm_pooled": regret.get("regret_warm_pooled"),
                "interval": pooled_regret_interval(rows, report.chosen),
                "low_ess": _low_ess(rows), "ratios": _estimate_ratios(report, rows)}
        lines.append(line)
    return lines


def _median_warm_run(row: dict) -> dict | None:
    """The recorded warm run of ``row`` whose wall time is the median (the lower of two)."""
    warm = sorted(row.get("runs", [])[1:], key=lambda r: r["wall"])
    return warm[(len(warm) - 1) // 2] if warm else None


def _record_run(profile, report, row: dict, results: dict) -> bool:
    """Record ``row``'s median warm run as the run of ``report``'s choice, in the run history
    that is on: its wall time, leapfrogs per draw and effective draws per draw, as
    ``pymc_accel.sample`` records a run. Returns whether there was a run to record."""
    from types import SimpleNamespace
    from unittest import mock

    import numpy as np

    from pymc_accel import history
    from pymc_accel.backend import SampleRequest

    run = _median_warm_run(row)
    if run is None:
        return False
    request = SampleRequest(draws=results["draws"], tune=results["tune"],
                            chains=results["chains"])
    idata = SimpleNamespace(sample_stats={"n_steps": np.array([run["leapfrogs_per_draw"]])})
    kept = results["draws"] * results["chains"]
    # the record sums a run's effective draws with the sampler's earlier runs', under
    # ESS_RECORD_MINIMUM too (history._pool_effective_draws)
    seen = (float(run["ess"]), kept) if run["ess"] > 0 else None
    # the record keeps effective draws only where ArviZ's statistics are loaded (as after
    # PyMC's convergence checks) and computes them from the draws: the recorded run's own
    # figure stands in for both
    loaded = {"arviz_stats": sys.modules.get("arviz_stats", object())}
    with mock.patch.dict(sys.modules, loaded), \
            mock.patch.object(history, "observed_effective_draws", lambda _: seen):
        history.record(profile, report.candidate, report.estimate, request, run["wall"], idata)
    return True


def replay_second_run(results: dict) -> list[dict]:
    """One line per recorded model: the first choice with an empty run history, and the choice
    after its recorded run (and, where that second selection tries a close call's runner-up,
    after the runner-up's run too), judged against the recorded rows (``--second-run``)."""
    from bench_regret import (_low_ess, _regret, kernels_cached, pooled_regret_interval,
                              private_history)

    import pymc_accel
    from pymc_accel.selection import TRYING_RUNNER_UP, forget_profiles

    def select(factory):
        return pymc_accel.select(factory(), draws=results["draws"], tune=results["tune"],
                                 chains=results["chains"])

    lines = []
    for record, factory in _with_factories(results["models"], lines):
        rows = [r for r in record["rows"] if r.get("cold_ess_per_s") is not None]
        by_label = {r["candidate"]: r for r in rows}
        forget_profiles()
        with private_history(), kernels_cached():
            first = select(factory)
            chosen, tried = first, None
            if first.chosen in by_label and _record_run(first.model_profile, first,
                                                        by_label[first.chosen], results):
                chosen = select(factory)
                if chosen.chosen_by == TRYING_RUNNER_UP and chosen.chosen in by_label:
                    tried = chosen.chosen
                    _record_run(chosen.model_profile, chosen, by_label[chosen.chosen], results)
                    chosen = select(factory)
        regret = _regret(rows, chosen.chosen, 0.0)
        lines.append({"model": record["model"], "recorded": first.chosen,
                      "replayed": chosen.chosen, "tried": tried, "draws": results["draws"],
                      "regret_first": _regret(rows, first.chosen, 0.0).get("regret_warm"),
                      "regret_warm": regret.get("regret_warm"),
                      "regret_warm_pooled": regret.get("regret_warm_pooled"),
                      "interval": pooled_regret_interval(rows, chosen.chosen),
                      "low_ess": _low_ess(rows)})
    return lines


def _estimate_ratios(report, rows) -> dict[str, float]:
    """Each recorded candidate's estimated wall time now over its recorded median warm wall."""
    estimated = {r.label: r.total_seconds for r in report.rows if r.total_seconds}
    return {r["candidate"]: estimated[r["candidate"]] / r["warm_median_wall"]
            for r in rows if r.get("warm_median_wall") and r["candidate"] in estimated}


def _record_other_models(results: dict, left_out: str) -> int:
    """Write every candidate's median warm wall on the other models of ``results`` into the run
    history, twice each (a cached run, as a model's second is); returns the entries written."""
    from bench_regret import offered_candidates

    from pymc_accel import history
    from pymc_accel.backend import SampleRequest
    from pymc_accel.devices import discover
    from pymc_accel.profile import profile_model

    devices = discover()
    request = SampleRequest(draws=results["draws"], tune=results["tune"],
                            chains=results["chains"])
    written = 0
    for record in results["models"]:
        factory = _factory(record["model"])
        if record["model"] == left_out or factory is None:
            continue
        profile = profile_model(factory())
        offered = offered_candidates(profile, devices)
        for row in record["rows"]:
            candidate = offered.get(row["candidate"])
            if candidate is None or not row.get("warm_median_wall"):
                continue
            estimate = warm_estimate(candidate, profile)
            for _ in range(2):
                history.record(profile, candidate, estimate, request, row["warm_median_wall"],
                               None)
            written += 1
    return written


def warm_estimate(candidate, profile):
    """``candidate``'s estimate for ``profile`` with no run history and no first compile: the
    recorded runs found their kernels cached, so none is in their walls."""
    from dataclasses import replace

    from pymc_accel.backend import Figure
    from pymc_accel.machine import machine_figures
    from pymc_accel.registry import get_registry

    estimate = get_registry().backends[candidate.backend].estimate(candidate, profile,
                                                                   machine_figures())
    return replace(estimate, cold_compile_seconds=Figure(0.0))


@contextlib.contextmanager
def _other_models_in_history(results: dict, left_out: str):
    """A run history of its own holding the other models' recorded runs
    (:func:`_record_other_models`), with every model's kernels treated as cached, as they were
    in the recorded runs."""
    from bench_regret import kernels_cached, private_history

    with private_history(), kernels_cached():
        _record_other_models(results, left_out)
        yield


def _select_with_empty_history(model, draws: int, tune: int, chains: int):
    """``auto``'s choice for a model this machine has not run: the run history on and empty,
    so the first compile of the model's kernels is charged (``bench_fresh_process --cold``)."""
    from bench_regret import private_history

    import pymc_accel

    with private_history():
        return pymc_accel.select(model, draws=draws, tune=tune, chains=chains)


def replay_new_process(results: list[dict], draws: int, tune: int, chains: int) -> list[dict]:
    """One line per model of a ``bench_fresh_process.py`` result file: the choice a new process
    makes now (first use charged, nothing run in this process) and its regret there."""
    import pymc_accel
    from pymc_accel import first_use
    from pymc_accel.selection import forget_profiles

    lines = []
    previous = os.environ.get("PYMC_ACCEL_FIRST_USE")
    os.environ["PYMC_ACCEL_FIRST_USE"] = "on"
    ran = first_use.used()
    first_use.forget()  # a new process has started no sampler
    try:
        for record, factory in _with_factories(results, lines):
            forget_profiles()
            if record.get("cold"):  # a model new to the machine: an empty run history
                report = _select_with_empty_history(factory(), draws, tune, chains)
            else:
                report = pymc_accel.select(factory(), draws=draws, tune=tune, chains=chains)
            rows = record["rows"]
            line = {"model": record["model"], "draws": draws,
                    "recorded": record["selection"]["chosen"],
                    "replayed": report.chosen, "regret_warm": None, "regret_warm_pooled": None,
                    "interval": None, "low_ess": False}
            if report.chosen in rows:
                chosen = rows[report.chosen]
                line["regret_warm"] = (max(r["median_ess_per_s"] for r in rows.values())
                                       / chosen["median_ess_per_s"])
                line["regret_warm_pooled"] = (max(r["pooled_ess_per_s"] for r in rows.values())
                                              / chosen["pooled_ess_per_s"])
                line["low_ess"] = max(r["min_ess"] for r in rows.values()) < 100
            lines.append(line)
    finally:
        first_use.mark_used(ran)
        if previous is None:
            os.environ.pop("PYMC_ACCEL_FIRST_USE", None)
        else:
            os.environ["PYMC_ACCEL_FIRST_USE"] = previous
    return lines


def _short(label: str) -> str:
    return label.replace("[cpu,", "[").replace(",chain_method=parallel", "")


def table(lines: list[dict], source: str) -> str:
    """The replay as a Markdown table."""
    out = [f"Replay of `{source}` under the current cost model",
           "", "| model | recorded choice | choice now | regret (median / pooled) | 90% interval |",
           "|---|---|---|---|---|"]
    for x in lines:
        if "error" in x:
            out.append(f"| {x['model']} | {x['error']} | | | |")
            continue
        if x["regret_warm"] is None:
            regret, interval = "not run in this set", ""
        else:
            regret = f"{x['regret_warm']:.2f} / {x['regret_warm_pooled']:.2f}"
            interval = (f"{x['interval'][0]:.2f}–{x['interval'][1]:.2f}" if x["interval"] else "")
            if x["low_ess"]:
                interval += " (ESS < 100)"
        out.append(f"| {x['model']} | {_short(x['recorded'])} | {_short(x['replayed'])} | "
                   f"{regret} | {interval} |")
    return "\n".join(out)


def second_run_table(lines: list[dict], source: str) -> str:
    """``--second-run``'s replay as a Markdown table."""
    out = [f"Second runs of `{source}` under the current cost model",
           "", "| model | first choice | its regret | tried | choice after | its regret "
           "(median / pooled) | 90% interval |", "|---|---|---|---|---|---|---|"]
    for x in lines:
        if "error" in x:
            out.append(f"| {x['model']} | {x['error']} | | | | | |")
            continue
        first = ("not run in this set" if x["regret_first"] is None
                 else f"{x['regret_first']:.2f}")
        if x["regret_warm"] is None:
            regret, interval = "not run in this set", ""
        else:
            regret = f"{x['regret_warm']:.2f} / {x['regret_warm_pooled']:.2f}"
            interval = (f"{x['interval'][0]:.2f}–{x['interval'][1]:.2f}" if x["interval"] else "")
        out.append(f"| {x['model']} | {_short(x['recorded'])} | {first} | "
                   f"{_short(x['tried']) if x['tried'] else ''} | {_short(x['replayed'])} | "
                   f"{regret} | {interval} |")
    return "\n".join(out)


def accuracy(lines: list[dict]) -> str:
    """Per candidate, the estimated over the recorded warm wall time: geometric mean, range and
    typical error (the geometric mean of each model's factor off, either way) over the models,
    as a Markdown table."""
    import math
    from collections import defaultdict

    by_label = defaultdict(list)
    for line in lines:
        for label, ratio in (line.get("ratios") or {}).items():
            by_label[label].append(ratio)
    out = ["| candidate | estimated / warm wall: geometric mean | range | typical error | models |",
           "|---|---|---|---|---|"]
    for label, ratios in sorted(by_label.items()):
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        typical = math.exp(sum(abs(math.log(r)) for r in ratios) / len(ratios))
        out.append(f"| {_short(label)} | {mean:.2f} | {min(ratios):.2f}–{max(ratios):.2f} | "
                   f"{typical:.2f}x | {len(ratios)} |")
    return "\n".join(out)


def summary(everything: dict[str, list[dict]]) -> str:
    """Over every replayed file: how many (model, file) pairs chose within 1.1 of the best,
    for the zoo's models at 1000 + 1000 draws or more, at fewer, and for
    ``bench/zoo.py:held_out``'s; then :func:`accuracy` over the zoo's and the held-out lines."""
    import math

    import zoo

    held = set(zoo.held_out())
    groups: dict[str, list[dict]] = {}
    for lines in everything.values():
        for line in lines:
            if line.get("regret_warm") is None:
                continue
            group = ("held-out models" if line["model"] in held
                     else "zoo, 1000 + 1000 draws or more" if line.get("draws", 0) >= 1000
                     else "zoo, fewer draws")
            groups.setdefault(group, []).append(line)
    out = ["| models | (model, file) pairs | within 1.1 | geometric mean regret | worst |",
           "|---|---|---|---|---|"]
    for group, lines in sorted(groups.items()):
        regrets = [line["regret_warm"] for line in lines]
        worst = max(lines, key=lambda line: line["regret_warm"])
        mean = math.exp(sum(math.log(r) for r in regrets) / len(regrets))
        out.append(f"| {group} | {len(regrets)} | {sum(r <= 1.1 for r in regrets)} | "
                   f"{mean:.3f} | {worst['regret_warm']:.2f} ({worst['model']}) |")
    for name, keep in (("zoo", lambda m: m not in held), ("held-out", lambda m: m in held)):
        lines = [line for ls in everything.values() for line in ls if keep(line["model"])]
        out += ["", f"Estimates on the {name} models, every file:", "", accuracy(lines)]
    return "\n".join(out)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="result files written by bench_regret.py --out")
    p.add_argument("--json", help="also write the replayed lines here")
    p.add_argument("--machine-pace", action="store_true",
                   help="leave one model out, with the other models' runs in the run history")
    p.add_argument("--second-run", action="store_true",
                   help="judge the choice after the first choice's recorded run is in the run "
                        "history (and a tried runner-up's)")
    p.add_argument("--fresh-draws", default="1000,1000,2",
                   help="tune,draws,chains of bench_fresh_process.py result files")
    p.add_argument("--float32-flops-factor", type=float, default=None,
                   help="replay with NumPyro's CPU float32 arithmetic at this many times "
                        "float64's rate (costmodel.Runtime.float32_flops_factor)")
    p.add_argument("--float32-transcendental-factor", type=float, default=None,
                   help="replay with NumPyro's CPU float32 transcendental functions at this "
                        "many times float64's rate "
                        "(costmodel.Runtime.float32_transcendental_factor)")
    p.add_argument("--count-evaluations", action="store_true",
                   help="list the posterior conditionings the selections evaluated "
                        "(pymc_accel.conditioning), with their seconds and budgets")
    p.add_argument("--this-machine", action="store_true",
                   help="select with this machine's calibration, not the one each result file "
                        "recorded")
    p.add_argument("--no-start-up-pace", action="store_true",
                   help="replay with start-up figures as fitted, not at this machine's pace "
                        "(costmodel.start_up_pace taken as 1)")
    args = p.parse_args(argv)
    if args.no_start_up_pace:
        from pymc_accel import costmodel

        costmodel.start_up_pace = lambda machine: 1.0  # at_start_up_pace reads it from here
    factors = {name: value for name, value in (
        ("float32_flops_factor", args.float32_flops_factor),
        ("float32_transcendental_factor", args.float32_transcendental_factor)) if value is not None}
    if factors:
        import dataclasses

        from pymc_accel import costmodel

        costmodel.JAX_CPU_SAMPLER = dataclasses.replace(costmodel.JAX_CPU_SAMPLER, **factors)
    evaluated = _count_conditionings() if args.count_evaluations else None
    if not args.this_machine:
        _scale_conditioning_budget()
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"  # the recorded runs were repeats in one process
    everything = {}
    for path in args.results:
        results = json.loads(Path(path).read_text())
        figures = "this machine's" if args.this_machine else _use_recorded_machine(results)
        print(f"Machine figures for `{path}`: {figures}\n", flush=True)
        if isinstance(results, list):  # bench_fresh_process.py: every run a new process
            tune, draws, chains = map(int, args.fresh_draws.split(","))
            lines = replay_new_process(results, draws, tune, chains)
        elif args.second_run:
            lines = replay_second_run(results)
        else:
            lines = replay(results, machine_pace=args.machine_pace)
        everything[path] = lines
        print((second_run_table if args.second_run else table)(lines, path), "\n", flush=True)
        if any(line.get("ratios") for line in lines):
            print(accuracy(lines), "\n", flush=True)
    if len(everything) > 1:
        print("Every file together\n", summary(everything), "\n", sep="\n", flush=True)
    if evaluated is not None:
        print(f"Posterior conditionings evaluated: {len(evaluated)}, "
              f"{sum(e[1] for e in evaluated):.2f} s in all\n")
        print("| model | seconds | budget (s) | spread of scales | cond(R) | evaluations |\n"
              "|---|---|---|---|---|---|")
        for model, seconds, budget, found in evaluated:
            # the code before the spread (8626158 and earlier) gave cond(R) as its value
            cond = found and getattr(found, "condition_number", found.value)
            print(f"| {model} | {seconds:.3f} | {budget:.2f} | "
                  f"{'none' if found is None else f'{found.value:.3g}'} | "
                  f"{'–' if found is None else f'{cond:.3g}'} | "
                  f"{'–' if found is None else found.evaluations} |")
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))


def _use_recorded_machine(results) -> str:
    """Have the selections read the machine figures ``results`` recorded (a regret file's
    ``machine_figures``), or this machine's where it recorded none; says which."""
    import dataclasses

    from pymc_accel import machine

    recorded = results.get("machine_figures") if isinstance(results, dict) else None
    if not recorded:
        machine._FIGURES = None  # read this machine's again
        _PACE["slower"] = 1.0
        return "this machine's (the file recorded none)"
    fields = {f.name for f in dataclasses.fields(machine.MachineFigures)} - {"accelerators"}
    machine._FIGURES = None
    here = machine.machine_figures().cpu_python_seconds
    there = recorded.get("cpu_python_seconds")
    _PACE["slower"] = here / there if here and there else 1.0
    # machine_figures() returns the figures it holds: the recorded ones, for every selection
    machine._FIGURES = machine.MachineFigures(
        **{k: v for k, v in recorded.items() if k in fields})
    return (f"recorded with the file (Python loop {there or 0:.3f} s; here "
            f"{here or 0:.3f} s, so the conditioning's budget x {_PACE['slower']:.2f})")


#: How many times slower this machine is than the one a result file recorded: the posterior
#: conditioning's budget is scaled by it (:func:`_scale_conditioning_budget`).
_PACE = {"slower": 1.0}


def _scale_conditioning_budget() -> None:
    """Give each posterior conditioning the selection evaluates its budget times
    ``_PACE["slower"]``: it runs at this machine's pace, the budget was set at the recorded
    machine's."""
    from pymc_accel import conditioning

    real = conditioning.posterior_conditioning

    def scaled(graph, point, budget_seconds=float("inf")):
        return real(graph, point, budget_seconds * _PACE["slower"])

    conditioning.posterior_conditioning = scaled


#: The model a replay is selecting, for the list of conditionings evaluated.
_SELECTING: dict[str, str | None] = {"model": None}


def _count_conditionings() -> list[tuple[str | None, float, float, object]]:
    """Record every posterior conditioning the selections evaluate: (the model, seconds, budget,
    what it found), in a list that grows."""
    import time

    from pymc_accel import conditioning

    evaluated = []
    real = conditioning.posterior_conditioning

    def counted(graph, point, budget_seconds=float("inf")):
        start = time.perf_counter()
        found = real(graph, point, budget_seconds)
        evaluated.append((_SELECTING["model"], time.perf_counter() - start, budget_seconds,
                          found))
        return found

    conditioning.posterior_conditioning = counted
    return evaluated


if __name__ == "__main__":
    main()
