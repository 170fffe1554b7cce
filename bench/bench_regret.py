"""Selection regret on the model zoo: does ``auto`` pick the candidate with the best ESS/s?

For each zoo model (``bench/zoo.py``): select as ``nuts_sampler="auto"`` would (and with
``measure=True``), then run every candidate side by side with the same draws, chains and seed,
``--repeats`` times, each on a freshly built model, run ``i`` with seed ``--seed + i`` (the same
seeds for every candidate: one seed's ESS is luck, up to 1.5x apart between seeds for the same
sampler at these lengths). Per run: wall time including compilation,
minimum bulk ESS over all posterior variables, ESS/s. The first run of a candidate is *cold*
(the process starts with an empty PyTensor compile directory, so numba compiles from scratch,
and JAX has not seen the function; other candidates run earlier on the same model may have
warmed caches they share), later runs are *warm*; they are reported separately, warm as the
median with its range. ``select(measure=True)`` runs after the candidates (its compilations would warm their cold
runs), so its choice is judged against the same rows but its own time is a warm-cache figure.
If it chose a candidate not in the run set, its regret is not available.
Regret = best ESS/s ÷ ESS/s of what ``auto`` chose (1.0 is perfect),
with the range the warm runs' spread allows, and *pooled*: each candidate's warm runs' ESS
summed over their wall times summed (where ESS per run is in the tens, as on the funnel, the
median of ratios is one seed's luck), and beside it its *noise floor*: the regret of a choice
made in hindsight from the same candidates' other warm runs (:func:`hindsight_regret`), which
is above 1 wherever candidates are within their seeds' scatter; overhead = pymc-accel's own seconds (selection,
plus ``pymc_accel.sample``'s initial-point check where the chosen sampler does not check its
start itself) ÷ the chosen candidate's wall time. Short runs make the overhead look large, so
``--default-run`` (on by default) also selects for the run a user gets from ``pm.sample()``
with no arguments (1000 tune + 1000 draws, ``max(2, min(4, cores))`` chains) and runs
``auto``'s choice once at those settings: its overhead is the same own seconds, plus the run
history's record of that run (its effective draws), ÷ that run's wall time, all measured (runs
predicted longer than ``--default-run-max-seconds`` are skipped and say so).

    python bench/bench_regret.py --quick --out docs/benchmarks-regret.json
    pymc-accel bench --quick            # the same, through the CLI

``--history`` (on by default) then runs ``pymc_accel.sample(nuts_sampler="auto")`` once per
model, which records the run history (``pymc_accel.history``: leapfrogs per draw, effective
draws and fixed seconds observed), and selects again: the choice a user's second run of the
model gets, judged against the same rows. Where that selection tries a close call's runner-up
once, or chooses a sampler that has not run the model, its run follows and a third selection:
the choice of every run after. First selections are made with the history off.

``--candidates builtin`` (the default with ``--quick``) runs the built-in backends' candidates
(PyMC's NUTS and nutpie on the numba gradient; NumPyro on JAX in float64 and float32) plus
whatever ``auto`` chose; ``all`` runs every registered backend's candidates.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

BUILTIN = ("numba", "numpyro")


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                prog=os.environ.get("PYMC_ACCEL_BENCH_PROG"))  # pymc-accel bench
    p.add_argument("--quick", action="store_true",
                   help="small zoo sizes, 200 tune + 200 draws, built-in candidates")
    p.add_argument("--models", default=None,
                   help="comma-separated zoo names (default: all), or bench/zoo.py:held_out's")
    # one cold run and three warm: the warm median of two runs was their mean, and one run
    # twice as slow as its twin (2.21 s against 0.87 s, NumPyro on seed_small, 2026-11-27)
    # decided a regret of 1.35
    p.add_argument("--repeats", type=int, default=4)
    p.add_argument("--draws", type=int, default=None)
    p.add_argument("--tune", type=int, default=None)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--candidates", choices=["builtin", "all"], default=None)
    p.add_argument("--slow-run-seconds", type=float, default=120.0,
                   help="a candidate whose cold run takes longer is not repeated")
    p.add_argument("--keep-compile-cache", action="store_true",
                   help="do not start with an empty PyTensor compile directory")
    p.add_argument("--default-run", action=argparse.BooleanOptionalAction, default=True,
                   help="also run auto's choice once at pm.sample's defaults, for the overhead "
                        "a user sees (default: on)")
    p.add_argument("--default-run-max-seconds", type=float, default=120.0,
                   help="skip a default run predicted (from the short runs) to take longer")
    p.add_argument("--history", action=argparse.BooleanOptionalAction, default=True,
                   help="also run auto's choice once through pymc_accel.sample, which records "
                        "the run history, and judge the next selection of the model (default: on)")
    p.add_argument("--measured-runs", action=argparse.BooleanOptionalAction, default=True,
                   help="run measured mode's choice right after each of --repeats measured "
                        "selections, with what the measurement kept (its regret as a user of "
                        "sample(measure=True) gets it)")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    p.add_argument("--markdown", default=None, help="write the results as a Markdown section here")
    p.add_argument("--report-only", default=None, metavar="JSON",
                   help="run nothing: recompute the summary of a results file")
    args = p.parse_args(argv)
    args.draws = args.draws or (200 if args.quick else 500)
    args.tune = args.tune or (200 if args.quick else 500)
    args.candidates = args.candidates or ("builtin" if args.quick else "all")
    return args


def _fresh_compile_dir() -> str:
    """Point PyTensor (and with it its numba cache) at an empty directory; must run before
    PyTensor is imported. The numba cache is ``base_compiledir/numba``: setting ``compiledir``
    alone, as this did before 2026-11-25, left the kernels of every model the machine had run
    before cached, and the "cold" runs were only first runs in the process (the demo model's
    nutpie run: 5.8 s over its warm run that way, 16.8 s truly cold)."""
    path = tempfile.mkdtemp(prefix="pymc-accel-bench-")
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    os.environ["PYTENSOR_FLAGS"] = f"{flags},base_compiledir={path}".strip(",")
    return path


def copy_machine_figures(path: str) -> None:
    """Copy this machine's cached CPU and device figures into the cache directory ``path``, so
    that a private cache does not calibrate again."""
    import shutil

    from pymc_accel.machine import cache_dir

    source = cache_dir()
    for figures in list(source.glob("machine-*.json")) + list(source.glob("device-*.json")):
        shutil.copy(figures, path)


def _private_history_dir() -> str:
    """Point pymc-accel's cache at a new directory holding only this machine's cached figures,
    so that the history step sees the history of this benchmark's own runs."""
    path = tempfile.mkdtemp(prefix="pymc-accel-bench-cache-")
    copy_machine_figures(path)
    os.environ["PYMC_ACCEL_CACHE_DIR"] = path
    return path


@contextlib.contextmanager
def private_history():
    """A run history of its own, empty and switched on, beside this machine's figures, for
    selections that must see only what the caller records in it; the environment is restored
    afterwards."""
    saved = {k: os.environ.get(k) for k in ("PYMC_ACCEL_CACHE_DIR", "PYMC_ACCEL_HISTORY")}
    with tempfile.TemporaryDirectory(prefix="pymc-accel-bench-cache-") as path:
        copy_machine_figures(path)
        os.environ["PYMC_ACCEL_CACHE_DIR"] = path
        os.environ["PYMC_ACCEL_HISTORY"] = "on"
        try:
            yield path
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@contextlib.contextmanager
def kernels_cached():
    """Selections inside treat every model as compiled on this machine for every candidate, so
    no first compile is charged: the benchmark's rows they are judged against were warm."""
    from pymc_accel import history

    compiled_here, program = history.compiled_here, history.program_compiled_here
    history.compiled_here = lambda profile, candidate: candidate.label
    history.program_compiled_here = lambda *args: "the benchmark's runs"
    try:
        yield
    finally:
        history.compiled_here, history.program_compiled_here = compiled_here, program


def with_history(factory, args, request):
    """Run ``pymc_accel.sample(nuts_sampler="auto")`` once on a fresh model (recording its run
    history), then select again for another fresh model: the choice a user's second run of the
    model gets (its regret is judged with the other choices'). Where that second selection
    tries a close call's runner-up (``selection._runner_up_to_try``) or chooses a sampler that
    has not run the model, run it too and select a third time: the choice of every run after.
    Returns the record."""
    import pymc_accel
    from pymc_accel import history
    from pymc_accel.selection import TRYING_RUNNER_UP

    def run(seed):
        t0 = time.perf_counter()
        idata = pymc_accel.sample(model=factory(), draws=args.draws, tune=args.tune,
                                  chains=args.chains, cores=request.cores, random_seed=seed,
                                  progressbar=False, quiet=True, compute_convergence_checks=False)
        return pymc_accel.SelectionReport.from_idata(idata).chosen, time.perf_counter() - t0

    def again():
        return pymc_accel.select(factory(), draws=args.draws, tune=args.tune, chains=args.chains)

    os.environ["PYMC_ACCEL_HISTORY"] = "on"
    third = tried_wall = None
    try:
        # every candidate's runs above compiled the model: its kernels are cached for all of
        # them, as the warm rows this choice is judged against were
        with kernels_cached():
            first, wall = run(args.seed)
            second = again()
            # a runner-up tried, or a sampler the history now ranks first that has not run the
            # model: its run records its own figures, and the third selection (every run
            # after) chooses between observed ones. Before, only a trial ran, and a move to an
            # unrun sampler was reported as every later run's choice (censored_6 and weibull_5
            # on 2026-11-30: PyMC's NUTS after nutpie's run, at 1.35 and 1.38)
            if (second.chosen_by == TRYING_RUNNER_UP
                    or not history.ran(second.model_profile, second.candidate)):
                _, tried_wall = run(args.seed + 1)
                third = again()
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        os.environ["PYMC_ACCEL_HISTORY"] = "off"
    chosen = next(r for r in second.rows if r.status == "chosen")
    out = {"first_run": first, "first_run_wall": wall, "chosen": second.chosen,
           "chosen_by": second.chosen_by,
           "selection_seconds": second.selection_seconds, "why": chosen.reason,
           "charged_first_compile": [r.label for r in second.rows if r.cold_compile_seconds]}
    if third is not None:
        out.update(tried_wall=tried_wall, third=third.chosen, third_chosen_by=third.chosen_by,
                   third_why=next(r for r in third.rows if r.status == "chosen").reason)
    return out


def min_bulk_ess(idata) -> float:
    """Smallest bulk ESS over every posterior variable and element."""
    import arviz as az

    ess = az.ess(idata.posterior.to_dataset(), method="bulk")
    return float(min(float(ess[v].min()) for v in ess.data_vars))


def timed_record(report, request, wall: float, idata) -> float:
    """Seconds of what ``pymc_accel.sample`` does after a run: the run history's record (its
    effective draws: ``history.observed_effective_draws``), into a history of its own, so the
    machine's run history is not touched. Call it before anything else reads the draws (an ESS
    turns a JAX posterior into NumPy, which the record would then find done)."""
    # pm.sample's default convergence checks import ArviZ's statistics during the run (the
    # benchmarks' runs skip the checks); without them the record skips its effective draws
    import arviz_stats.base  # noqa: F401

    from pymc_accel import history

    with private_history():
        start = time.perf_counter()
        history.record(report.model_profile, report.candidate, report.estimate, request,
                       wall, idata)
        return time.perf_counter() - start


@contextlib.contextmanager
def handed_graphs_used(seen: list):
    """Inside the block, each time a log density graph is taken to be jaxified
    (:func:`pymc_accel.backends.run_logp.run_graph`: :func:`~pymc_accel.jaxified_logp` takes
    its graph there, and a run handed none builds one there) ``seen`` gets whether the graph
    was handed over (False: the run built it), and each time ``pm.sample`` is handed a copy of
    it in place of building the model's log density
    (:func:`pymc_accel.backends.pm_sample_logp.copy_of`: a numba run's two builds) it gets
    True. Opening :func:`~pymc_accel.backends.run_logp.jax_runs_use` with a graph is not
    counted: only a run that jaxifies it is.

    Parameters
    ----------
    seen : list
        Appended to; the run used a handed graph when ``seen`` is non-empty and all True.

    Yields
    ------
    list
        ``seen``.
    """
    from pymc_accel.backends import pm_sample_logp, run_logp

    real, real_copy = run_logp.run_graph, pm_sample_logp.copy_of

    def noting(model, graph=None):
        seen.append(graph is not None)
        return real(model, graph)

    def noting_copy(graph):
        seen.append(True)
        return real_copy(graph)

    run_logp.run_graph, pm_sample_logp.copy_of = noting, noting_copy
    try:
        yield seen
    finally:
        run_logp.run_graph, pm_sample_logp.copy_of = real, real_copy


def used_a_handed_graph(seen: list) -> bool:
    """Whether a run, watched by :func:`handed_graphs_used`, used a handed graph only."""
    return bool(seen) and all(seen)


def handed_builds(seen: list) -> int:
    """How many builds of the log density a run, watched by :func:`handed_graphs_used`, was
    spared: each use of a handed graph, where it used handed graphs only (a JAX run's one
    jaxified graph; ``pm.sample``'s two builds in a numba run)."""
    return len(seen) if used_a_handed_graph(seen) else 0


def log_density_seconds(factory, repeats: int = 3) -> float:
    """Median seconds of building a fresh model's log density as the profile does
    (:func:`pymc_accel.profile.log_density_graph`): what a JAX run handed the selection's graph
    does not do, and one handed none does.

    Parameters
    ----------
    factory : callable
        Makes the model, fresh each call.
    repeats : int, default 3

    Returns
    -------
    float
    """
    from pymc_accel.backends.run_logp import run_graph

    times = []
    for _ in range(repeats):
        model = factory()
        start = time.perf_counter()
        run_graph(model)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def write_outputs(results: dict, text: str, out: str | None = None,
                  markdown: str | None = None) -> None:
    """Write a benchmark's ``results`` as JSON to ``out`` and its table ``text`` to
    ``markdown`` (each where given), and print the table."""
    if out:
        Path(out).write_text(json.dumps(results, indent=1, default=str))
    if markdown:
        Path(markdown).write_text(text)
    print(text)


def offered_candidates(profile, devices=None) -> dict:
    """Every candidate the registered backends offer for ``profile`` on ``devices`` (default:
    this machine's), by label: results and reports hold labels, a run needs the Candidate."""
    import pymc_accel
    from pymc_accel.devices import discover
    from pymc_accel.registry import get_registry

    devices = discover() if devices is None else devices
    return {c.label: c for b in get_registry().backends.values()
            for c in b.candidates(profile, devices) if isinstance(c, pymc_accel.Candidate)}


def _candidates_for(report, profile, chosen_labels, which):
    import pymc_accel
    from pymc_accel.devices import discover
    from pymc_accel.registry import get_registry

    accepted = {r.label for r in report.rows if r.status != "refused"}
    out = {}
    for name, backend in get_registry().backends.items():
        for c in backend.candidates(profile, discover()):
            if not isinstance(c, pymc_accel.Candidate) or c.label not in accepted:
                continue
            if (c.label in chosen_labels or which == "all"
                    or (which == "builtin" and c.backend in BUILTIN)):
                out[c.label] = c
    return out


def bench_model(name, factory, args, progress=None):
    """Select, then run every candidate ``args.repeats`` times; return the model's record.

    ``progress``, when given, is called with the record as it stands (the first selection's
    choice and estimates, and the rows of the candidates run so far) after the selection and
    after each candidate, so that a run cut by a time limit (a GPU lease) keeps them."""
    import pymc_accel
    from pymc_accel.backend import SampleRequest
    from pymc_accel.devices import cpu_cores

    request = SampleRequest(draws=args.draws, tune=args.tune, chains=args.chains,
                            cores=min(4, cpu_cores()), random_seed=args.seed, progressbar=False,
                            quiet=True, compute_convergence_checks=False)
    from pymc_accel.integration import check_initial_point, checks_its_own_start
    from pymc_accel.measure import wait_for_background
    from pymc_accel.selection import forget_profiles

    forget_profiles()  # a first selection: no model of this structure profiled before
    model = factory()
    report = pymc_accel.select(model, draws=args.draws, tune=args.tune, chains=args.chains)
    selection_seconds = report.selection_seconds  # profile + selection; building the model excluded
    check_seconds = 0.0
    if not checks_its_own_start(report.candidate):  # pymc_accel.sample's own start check
        t0 = time.perf_counter()
        check_initial_point(model)
        check_seconds = time.perf_counter() - t0
    candidates = _candidates_for(report, report.model_profile, {report.chosen}, args.candidates)
    estimates = {r.label: r.total_seconds for r in report.rows if r.label in candidates}
    print(f"  auto chose {report.chosen} (selection {selection_seconds:.2f} s); estimated "
          + ", ".join(f"{label} {est:.1f} s" for label, est in estimates.items()), flush=True)
    partial = {"model": name, "profile": report.profile, "selection_seconds": selection_seconds,
               "chosen": {"auto": report.chosen}, "estimated_seconds": estimates, "rows": []}
    if progress is not None:
        progress(partial)
    rows = _run_candidates(name, factory, candidates, request, args, report,
                           on_row=None if progress is None else (
                               lambda row: (partial["rows"].append(row), progress(partial))))
    # measured mode after the runs: its compilations would otherwise warm the cold runs. Every
    # candidate has compiled the model by now, so its kernels are cached, as measured mode
    # learns from the run history (an empty one here, but for that) when it predicts what its
    # numba compiles take
    with private_history(), kernels_cached():
        measured = pymc_accel.select(factory(), draws=args.draws, tune=args.tune,
                                     chains=args.chains, measure=True)
        # the default mode's next selection of the model, with what measuring timed kept
        after = pymc_accel.select(factory(), draws=args.draws, tune=args.tune, chains=args.chains)
    # a measurement left running past the budget ends before anything else is timed: it
    # would share the CPU with the next runs
    background = wait_for_background()
    measured_runs = _measured_runs(name, factory, request, args) if args.measured_runs else None
    # a candidate only measured mode chose (a plugin's, with --candidates builtin) is run too,
    # after the others, so that its choice has a regret (its first run is not cold: measured
    # mode compiled its gradient)
    rows += _run_unrun(name, factory, {measured.chosen, after.chosen}, rows, request, args,
                       report, offered=measured)
    chosen = {"auto": report.chosen, "auto (measure=True)": measured.chosen,
              "auto after measure=True": after.chosen}
    result = {
        "model": name, "profile": report.profile, "selection_seconds": selection_seconds,
        "start_check_seconds": check_seconds,
        "measured_selection_seconds": measured.selection_seconds,
        "after_measured_selection_seconds": after.selection_seconds,
        "measurement": measured.measurement, "chosen": chosen, "rows": rows,
        "waited_for_background_seconds": background,
    }
    if measured_runs is not None:
        result["measured_runs"] = measured_runs
    return _finish(factory, args, request, result, report)


def _measured_runs(name, factory, request, args) -> list[dict]:
    """What ``sample(nuts_sampler="auto", measure=True)`` gets: for each seed, a fresh model,
    its measured selection, and the chosen candidate run at once on that model, with what the
    measurement compiled and kept for it (nutpie's compiled model, PyMC's gradient function;
    :mod:`pymc_accel.backends.kept`). The candidates' rows cannot show that: a warm row of nutpie
    pays the compile measured mode has already paid. Selections as in :func:`bench_model`
    (kernels cached, an empty history)."""
    import pymc_accel
    from pymc_accel.measure import wait_for_background
    from pymc_accel.registry import get_registry

    runs = []
    for i in range(args.repeats):
        model = factory()
        with private_history(), kernels_cached():
            t0 = time.perf_counter()
            report = pymc_accel.select(model, draws=args.draws, tune=args.tune,
                                       chains=args.chains, measure=True)
            took = time.perf_counter() - t0
        backend = get_registry().backends[report.candidate.backend]
        t0 = time.perf_counter()
        try:
            idata = backend.sample(model, report.candidate,
                                   replace(request, random_seed=args.seed + i))
        except Exception as exc:  # a failing choice is a result, not a crash
            runs.append({"chosen": report.chosen, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        wall = time.perf_counter() - t0
        wait_for_background()
        ess = min_bulk_ess(idata)
        runs.append({"chosen": report.chosen, "selection_seconds": took, "wall": wall,
                     "ess": ess, "ess_per_s": ess / wall, "seed": args.seed + i})
        print(f"  {name:14s} measure=True chose {report.chosen}: selection {took:.1f} s, run "
              f"{wall:.1f} s, min ESS {ess:.1f}, ESS/s {ess / wall:.2f}", flush=True)
    return runs


def measured_run_regret(result) -> dict | None:
    """Regret of :func:`_measured_runs`: the best candidate's warm ESS/s (median of its
    seeds) over the median ESS/s of the runs measured mode chose, those runs' walls without
    and with their measured selections."""
    runs = [r for r in result.get("measured_runs") or [] if "ess" in r]
    rows = [r for r in result["rows"] if r.get("warm_ess_per_s")]
    if not runs or not rows:
        return None
    best = max(r["warm_ess_per_s"] for r in rows)
    return {"chosen": sorted({r["chosen"] for r in runs}),
            "regret": best / statistics.median(r["ess_per_s"] for r in runs),
            "regret_with_selection": best / statistics.median(
                r["ess"] / (r["wall"] + r["selection_seconds"]) for r in runs),
            "selection_seconds": [r["selection_seconds"] for r in runs]}


def _run_candidates(name, factory, candidates, request, args, report, on_row=None) -> list[dict]:
    """Run each candidate ``args.repeats`` times on a fresh model; one summary row each, also
    handed to ``on_row`` as it is made."""
    from pymc_accel.history import observed_leapfrogs_per_draw
    from pymc_accel.registry import get_registry

    rows = []
    for label, candidate in candidates.items():
        backend = get_registry().backends[candidate.backend]
        runs = []
        for i in range(args.repeats):
            model = factory()
            seeded = replace(request, random_seed=args.seed + i)
            t0 = time.perf_counter()
            try:
                idata = backend.sample(model, candidate, seeded)
            except Exception as exc:  # a failing candidate is a result, not a crash
                runs.append({"error": f"{type(exc).__name__}: {exc}"[:300]})
                break
            wall = time.perf_counter() - t0
            ess = min_bulk_ess(idata)
            div = float(idata.sample_stats["diverging"].mean()) if "diverging" in idata.sample_stats else None
            runs.append({"wall": wall, "ess": ess, "ess_per_s": ess / wall, "divergent": div,
                         "seed": args.seed + i,
                         # kept draws' mean tree size: ESS per gradient (fit_trajectories.py)
                         "leapfrogs_per_draw": observed_leapfrogs_per_draw(idata)})
            print(f"  {name:14s} {label:52s} run {i + 1}: {wall:6.1f} s, min ESS {ess:7.1f}, "
                  f"ESS/s {ess / wall:8.2f}", flush=True)
            if i == 0 and wall > args.slow_run_seconds:
                break
        rows.append(_summarise(label, runs, report))
        if on_row is not None:
            on_row(rows[-1])
    return rows


def _run_unrun(name, factory, labels, rows, request, args, report, offered=None) -> list[dict]:
    """Rows for the candidates of ``labels`` that no row of ``rows`` has, run as the others
    were, so that a choice made after the candidates ran has a regret. They are found among
    the candidates ``offered`` accepted (default: ``report``, the model's first selection)."""
    offered = offered or report
    missing = set(labels) - {r["candidate"] for r in rows}
    extra = _candidates_for(offered, report.model_profile, missing, "chosen")
    return _run_candidates(name, factory, extra, request, args, report)


def _run_later_choices(factory, args, request, result, report) -> list[dict]:
    """Rows for the candidates the later runs' selections chose (a close call's runner-up,
    tried once) that no row has yet (:func:`_run_unrun`). Before, a plugin's candidate chosen
    there was left unjudged (seed_small's second and third runs chose BlackJAX on 2026-11-27
    and were reported as "–")."""
    later = {result["chosen"][key] for key in ("auto (second run, history)",
                                                "auto (third run, history)")
             if key in result["chosen"]}
    return _run_unrun(result["model"], factory, later, result["rows"], request, args, report)


def _finish(factory, args, request, result, report) -> dict:
    """The model's record completed: the second run's choice, each choice's regret, the run
    at ``pm.sample``'s defaults."""
    chosen, check_seconds = result["chosen"], result["start_check_seconds"]
    if args.history:
        result["history"] = with_history(factory, args, request)
        if "chosen" in result["history"]:
            chosen["auto (second run, history)"] = result["history"]["chosen"]
            # where the second chose a sampler that had run, the third run's selection is the
            # second's
            chosen["auto (third run, history)"] = result["history"].get(
                "third", result["history"]["chosen"])
            result["rows"] += _run_later_choices(factory, args, request, result, report)
    ok = [r for r in result["rows"] if r["cold_ess_per_s"] is not None]
    for key, label in chosen.items():
        result[key] = _regret(ok, label, _own_seconds(result, key) + check_seconds)
    if args.default_run:
        result["default_run"] = default_run(factory, args, result["rows"])
    return result


def default_run(factory, args, rows):
    """Select for ``pm.sample()``'s default run on a fresh model and run the choice once:
    the overhead a user of ``pymc_accel.sample`` sees (selection, and the initial-point check
    where the chosen sampler does not check its start itself), against that run's wall time.
    Returns the record (``skipped`` when predicted too long)."""
    import math

    import pymc_accel
    from pymc_accel.backend import SampleRequest
    from pymc_accel.devices import cpu_cores
    from pymc_accel.registry import get_registry

    from pymc_accel.selection import forget_profiles

    cores = min(4, cpu_cores())
    chains, tune, draws = max(2, cores), 1000, 1000  # pm.sample's defaults
    # nuts_sampler= as the user names it (bench_overhead --backend); None: "auto"
    run = dict(draws=draws, tune=tune, chains=chains, backend=getattr(args, "backend", None))
    # a model of a structure profiled before is not profiled again: the first selection is
    # timed with every kept profile forgotten (what running a new model costs; the median of
    # three, as one timing can hold a garbage collection of the whole process), then the
    # selection of a new process running the same script (the profile read from disk:
    # pymc_accel.profile_store) and that of the model built again in the same process
    firsts = []
    for _ in range(2):
        forget_profiles()
        firsts.append(pymc_accel.select(factory(), **run))
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "on"
    try:
        forget_profiles()
        pymc_accel.select(factory(), **run)  # writes the store
        forget_profiles()
        stored = pymc_accel.select(factory(), **run)
    finally:
        os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    repeat = pymc_accel.select(factory(), **run)  # its structure's profile kept in the process
    # the run's model, selected as pymc_accel.sample does a new model's: the third first
    # selection, whose log density graph the run is handed (SampleRequest.logp_graph)
    forget_profiles()
    model, graph = factory(), []
    report = pymc_accel.select(model, **run, _logp_graph_out=graph)
    firsts.append(report)
    first = sorted(firsts, key=lambda r: r.selection_seconds)[1]
    out = {"tune": tune, "draws": draws, "chains": chains, "chosen": report.chosen,
           "selection_seconds": first.selection_seconds,
           "first_selection_seconds_all": [r.selection_seconds for r in firsts],
           "stored_selection_seconds": stored.selection_seconds,
           "repeat_selection_seconds": repeat.selection_seconds, "check_seconds": 0.0,
           # the float32 accuracy check, when the first selection ran one (part of its seconds)
           "precision_check_seconds": (first.precision_check or {}).get("seconds", 0.0)}
    row = next((r for r in rows if r["candidate"] == report.chosen and r["warm_median_wall"]), None)
    if row is not None:  # sampling scales with steps and chain rounds (compile does not: an upper bound)
        predicted = (row["warm_median_wall"] * (tune + draws) / (args.tune + args.draws)
                     * math.ceil(chains / cores) / math.ceil(args.chains / cores))
        source = "the short runs' warm median, scaled"
    else:
        predicted, source = report.estimate.total_seconds(tune + draws, chains), "the cost model"
    out["predicted_wall"], out["predicted_from"] = predicted, source
    if predicted > args.default_run_max_seconds:
        out["skipped"] = (f"predicted {predicted:.0f} s (from {source}) > "
                          f"--default-run-max-seconds {args.default_run_max_seconds:g}")
        print(f"  default run skipped: {out['skipped']}", flush=True)
        return out
    request = SampleRequest(draws=draws, tune=tune, chains=chains, cores=cores,
                            random_seed=args.seed, progressbar=False, quiet=True,
                            compute_convergence_checks=False,
                            logp_graph=graph[0] if graph else None)
    from pymc_accel.integration import check_initial_point, checks_its_own_start

    out["check_repeat_seconds"] = out["check_stored_seconds"] = 0.0
    if not checks_its_own_start(report.candidate):  # as pymc_accel.sample does
        t0 = time.perf_counter()
        check_initial_point(model)
        out["check_seconds"] = time.perf_counter() - t0
        # a passed check is kept (pymc_accel.check_store): the model built again reads it in
        # the process, a new process from the disk
        from pymc_accel import check_store
        from pymc_accel.integration import _check_start

        os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "on"
        try:
            _check_start(factory(), None, kept=True)
            t0 = time.perf_counter()
            _check_start(factory(), None, kept=True)
            out["check_repeat_seconds"] = time.perf_counter() - t0
            check_store.forget()
            t0 = time.perf_counter()
            _check_start(factory(), None, kept=True)
            out["check_stored_seconds"] = time.perf_counter() - t0
        finally:
            os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    backend = get_registry().backends[report.candidate.backend]
    t0 = time.perf_counter()
    try:
        with handed_graphs_used([]) as used:
            idata = backend.sample(model, report.candidate, request)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"[:300]
        return out
    out["wall"] = time.perf_counter() - t0
    out["record_seconds"] = timed_record(report, request, out["wall"], idata)
    out["ess"] = min_bulk_ess(idata)
    own = out["selection_seconds"] + out["check_seconds"] + out["record_seconds"]
    out["overhead"] = own / out["wall"]
    # the run jaxified the selection's log density, or pm.sample took copies of it: a run of
    # the sampler named alone builds it each time, so the selection's net seconds are its own
    # less those builds, over that longer run (each timed as the profile builds it, without
    # PyTensor's stack traces: pm.sample's own builds take longer)
    builds = handed_builds(used)
    out["saved_seconds"] = log_density_seconds(factory) * builds if builds else 0.0
    out["net_overhead"] = (own - out["saved_seconds"]) / (out["wall"] + out["saved_seconds"])
    out["overhead_repeat"] = ((out["repeat_selection_seconds"] + out["check_repeat_seconds"]
                               + out["record_seconds"]) / out["wall"])
    out["overhead_stored"] = ((out["stored_selection_seconds"] + out["check_stored_seconds"]
                               + out["record_seconds"]) / out["wall"])
    print(f"  default run ({tune} + {draws} x {chains}) of {report.chosen}: {out['wall']:.1f} s, "
          f"selection {out['selection_seconds']:.2f} s (rebuilt model "
          f"{out['repeat_selection_seconds']:.3f} s, new process {out['stored_selection_seconds']:.3f} s)"
          f" + start check {out['check_seconds']:.2f} s + record {out['record_seconds']:.3f} s"
          f" = {out['overhead']:.1%}, less the log density the run was handed "
          f"{out['saved_seconds'] * 1e3:.0f} ms = {out['net_overhead']:.1%} "
          f"({out['overhead_repeat']:.1%}, {out['overhead_stored']:.1%})", flush=True)
    return out


def _summarise(label, runs, report):
    good = [r for r in runs if "error" not in r]
    est = next((r.total_seconds for r in report.rows if r.label == label), None)
    row = {"candidate": label, "estimated_seconds": est, "runs": runs,
           "cold_wall": None, "cold_ess_per_s": None, "warm_median_wall": None,
           "warm_ess_per_s": None, "warm_range": None}
    if not good:
        row["error"] = runs[-1].get("error") if runs else "not run"
        return row
    row["cold_wall"], row["cold_ess_per_s"] = good[0]["wall"], good[0]["ess_per_s"]
    warm = _warm_runs(runs)
    row["warm_median_wall"] = statistics.median(r["wall"] for r in warm)
    row["warm_ess_per_s"] = statistics.median(r["ess_per_s"] for r in warm)
    row["warm_range"] = [min(r["ess_per_s"] for r in warm), max(r["ess_per_s"] for r in warm)]
    row["warm_runs"] = len(warm) if good[1:] else 0
    row["warm_pooled_ess_per_s"] = _pooled_ess_per_s(warm)
    return row


def _warm_runs(runs):
    """The runs after the first (cold) one that did not fail; the cold one if it ran alone."""
    good = [r for r in runs if "error" not in r]
    return good[1:] or good[:1]


def _pooled_ess_per_s(warm) -> float:
    """All warm runs' effective draws over all their seconds: one seed's luck weighs by the
    length of its run."""
    return sum(r["ess"] for r in warm) / sum(r["wall"] for r in warm)


def _pooled(row) -> float:
    if "warm_pooled_ess_per_s" not in row:  # results written before the pooled figure existed
        row["warm_pooled_ess_per_s"] = _pooled_ess_per_s(_warm_runs(row["runs"]))
    return row["warm_pooled_ess_per_s"]


#: Below this many effective draws an ESS estimate is unreliable (Vehtari et al. 2021, "Rank-
#: normalization, folding, and localization": at least 100 bulk ESS before trusting it).
RELIABLE_ESS = 100


def pooled_regret_interval(rows, label, level=0.9, resamples=2000, seed=0):
    """Bootstrap interval of the pooled warm regret: each candidate's warm runs resampled with
    replacement (a run's ESS with its wall time), the regret recomputed; ``None`` when the
    chosen candidate has no warm runs. With 3 to 5 seeds whose ESS differ 1.5x, the regret's
    point value alone overstates what one run set shows."""
    import numpy as np

    warm = {r["candidate"]: [(x["ess"], x["wall"]) for x in _warm_runs(r["runs"])]
            for r in rows if r.get("runs")}
    warm = {k: np.array(v) for k, v in warm.items() if v}
    if label not in warm:
        return None
    rng = np.random.default_rng(seed)
    pooled = {}
    for name, runs in warm.items():
        picks = runs[rng.integers(0, len(runs), size=(resamples, len(runs)))]
        pooled[name] = picks[..., 0].sum(axis=1) / picks[..., 1].sum(axis=1)
    best = np.max(np.stack(list(pooled.values())), axis=0)
    regret = best / pooled[label]
    tail = (1 - level) / 2
    return [float(np.quantile(regret, tail)), float(np.quantile(regret, 1 - tail))]


def hindsight_regret(rows) -> tuple[float, float] | None:
    """The noise floor of the warm regret: the regret of a choice made in hindsight from the
    same candidates' *other* warm runs. For every split of the warm runs into the seeds a
    choice is made on (the best median ESS/s there) and the rest it is judged on (regret
    against the best median ESS/s there), the regret; returns its median and maximum over the
    splits, or ``None`` with fewer than two warm runs per candidate. Where candidates are
    within their seeds' scatter, the best of their medians is the luckiest draw, and even a
    choice that knows how every candidate ran on other seeds has a regret above 1: a warm
    regret near this floor is as good as this many runs can show."""
    import itertools

    per = {r["candidate"]: [x["ess_per_s"] for x in r["runs"][1:] if "error" not in x]
           for r in rows if r.get("runs")}
    per = {k: v for k, v in per.items() if len(v) >= 2}
    if len(per) < 2:
        return None
    n = min(len(v) for v in per.values())
    regrets = []
    for k in range(1, n):
        for seen in itertools.combinations(range(n), k):
            judged = [i for i in range(n) if i not in seen]
            pick = max(per, key=lambda c: statistics.median(per[c][i] for i in seen))
            best = max(statistics.median(per[c][i] for i in judged) for c in per)
            regrets.append(best / statistics.median(per[pick][i] for i in judged))
    return statistics.median(regrets), max(regrets)


def _low_ess(rows) -> bool:
    """Whether even the best candidate's median ESS per run is below :data:`RELIABLE_ESS`."""
    medians = [statistics.median(x["ess"] for x in warm)
               for r in rows if (warm := _warm_runs(r.get("runs") or []))]
    return bool(medians) and max(medians) < RELIABLE_ESS


def _own_seconds(result, key) -> float:
    """Seconds of selection behind one of a model's choices (``result["chosen"]``'s keys)."""
    if key == "auto":
        return result["selection_seconds"]
    if key == "auto (measure=True)":
        return result["measured_selection_seconds"]
    if key == "auto after measure=True":
        return result.get("after_measured_selection_seconds", 0.0)
    return (result.get("history") or {}).get("selection_seconds", 0.0)


def _regret(rows, label, selection_seconds):
    chosen = next((r for r in rows if r["candidate"] == label), None)
    if chosen is None or not rows:
        return {"chosen": label, "regret_warm": None, "note": "chosen candidate did not run"}
    best_warm = max(rows, key=lambda r: r["warm_ess_per_s"])
    best_cold = max(rows, key=lambda r: r["cold_ess_per_s"])
    lo = max(r["warm_range"][0] for r in rows) / chosen["warm_range"][1]
    hi = max(r["warm_range"][1] for r in rows) / chosen["warm_range"][0]
    return {
        "chosen": label,
        "best_warm": best_warm["candidate"], "best_cold": best_cold["candidate"],
        "regret_warm": best_warm["warm_ess_per_s"] / chosen["warm_ess_per_s"],
        "regret_warm_range": [max(1.0, lo), max(1.0, hi)],
        "regret_cold": best_cold["cold_ess_per_s"] / chosen["cold_ess_per_s"],
        "regret_warm_pooled": (max(_pooled(r) for r in rows) / _pooled(chosen)),
        # what the selector controls without the seed's luck in ESS: time to the same draws
        "wall_regret_warm": chosen["warm_median_wall"] / min(r["warm_median_wall"] for r in rows),
        "wall_regret_cold": chosen["cold_wall"] / min(r["cold_wall"] for r in rows),
        "overhead_warm": selection_seconds / chosen["warm_median_wall"],
        "overhead_cold": selection_seconds / chosen["cold_wall"],
    }


def _interval(rows, label) -> str:
    ci = pooled_regret_interval(rows, label)
    text = f"[{ci[0]:.2f}–{ci[1]:.2f}]" if ci else ""
    if _low_ess(rows):
        text += f" (every candidate's median ESS per run < {RELIABLE_ESS}: ESS/s is noise)"
    return text


def _leapfrogs(runs) -> str:
    """Runs' leapfrogs per kept draw (``–`` where the sampler does not report them, or the
    results predate recording them)."""
    seen = [x["leapfrogs_per_draw"] for x in runs if x.get("leapfrogs_per_draw")]
    return " / ".join(f"{v:.1f}" for v in seen) if seen else "–"


def _floor(rows) -> str:
    floor = hindsight_regret(rows)
    return "–" if floor is None else f"{floor[0]:.2f} [{floor[1]:.2f}]"


def _rows_table(rows, chosen) -> list[str]:
    """One model's candidates as Markdown table lines, best warm ESS/s first."""
    out = ["| candidate | est. (s) | cold wall (s) | warm median wall (s) | cold ESS/s | "
           "warm ESS/s median [range] | min bulk ESS per run | leapfrogs per draw | divergent |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -(r["warm_ess_per_s"] or 0)):
        if r["cold_wall"] is None:
            out.append(f"| {r['candidate']} | | failed: {r.get('error', '')[:80]} | | | | | | |")
            continue
        good = [x for x in r["runs"] if "error" not in x]
        tag = " (chosen)" if r["candidate"] == chosen else ""
        warm = (f"{r['warm_median_wall']:.1f}" if r["warm_runs"] else "– (not repeated)")
        est = "–" if r["estimated_seconds"] is None else f"{r['estimated_seconds']:.1f}"
        out.append(
            f"| {r['candidate']}{tag} | {est} | {r['cold_wall']:.1f} | "
            f"{warm} | {r['cold_ess_per_s']:.1f} | {r['warm_ess_per_s']:.1f} "
            f"[{r['warm_range'][0]:.1f}–{r['warm_range'][1]:.1f}] | "
            f"{' / '.join(f'{x['ess']:.0f}' for x in good)} | {_leapfrogs(good)} | "
            f"{(good[0]['divergent'] or 0):.1%} |")
    return out


def markdown(results) -> str:
    """The results as a Markdown section (summary table, then one table per model)."""
    out = [f"Command: `{results['command']}`; machine: {results['machine']}; "
           + (f"XLA_FLAGS `{results['xla_flags']}`; " if results.get("xla_flags") else "")
           + f"{results['tune']} tune + {results['draws']} draws × {results['chains']} chains, "
           f"{results['repeats']} runs per candidate"
           + (f" (seeds {results['seed']} to {results['seed'] + results['repeats'] - 1}, the same "
              "for every candidate)" if "seed" in results else "") + "; "
           + (f"total {results['seconds'] / 60:.0f} min" if "seconds" in results
              else "cut before its first model finished")  # a run stopped by its time limit
           + ". The first selection in a process also "
           f"pays one-off imports: {results.get('first_selection_in_process_seconds', 0):.2f} s "
           "here (not in the overheads below).", "",
           "| model | free dim | `auto` chose | regret warm [range] | regret warm, pooled "
           "[90% bootstrap] | noise floor: hindsight from other seeds, median [max] | "
           "regret cold | best warm | "
           "wall-time regret warm / cold | overhead warm / cold | overhead at `pm.sample` "
           "defaults, first selection (run); new process; model built again | `measure=True` chose | its regret warm | `measure=True` took | "
           "second run (history) chose | its regret warm, median / pooled | "
           "third run (history) chose | its regret warm | "
           "after one `measure=True`, `auto` chose | its regret warm |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in results["models"]:
        a, b = m["auto"], m["auto (measure=True)"]
        am = m.get("auto after measure=True") or {}
        h = m.get("auto (second run, history)") or {}
        h3 = m.get("auto (third run, history)") or {}
        def f(x, fmt="{:.2f}"):
            return "–" if x is None else fmt.format(x)
        rng = a.get("regret_warm_range")
        d = m.get("default_run") or {}
        if "overhead" in d:
            own = d["selection_seconds"] + d.get("check_seconds", 0.0) + d.get("record_seconds", 0.0)
            dflt = f"{d['overhead']:.1%} ({own:.2f} s / {d['wall']:.0f} s)"
            if d.get("saved_seconds"):  # the log density builds the run was spared
                dflt += (f", net of the log density the run was handed "
                         f"({d['saved_seconds'] * 1e3:.0f} ms) {d['net_overhead']:.1%}")
            if "overhead_stored" in d:
                dflt += f"; new process {d['overhead_stored']:.1%}"
            if "overhead_repeat" in d:
                dflt += f"; model built again {d['overhead_repeat']:.1%}"
        else:
            dflt = "–" + (f" ({d.get('skipped') or d.get('error', '')})"[:60] if d else "")
        out.append(
            f"| {m['model']} | {m['profile']['free dimension']} | {a['chosen']} | "
            f"{f(a.get('regret_warm'))} [{f(rng[0]) if rng else '–'}–{f(rng[1]) if rng else '–'}] | "
            f"{f(a.get('regret_warm_pooled'))} {_interval(m['rows'], a['chosen'])} | "
            f"{_floor(m['rows'])} | "
            f"{f(a.get('regret_cold'))} | {a.get('best_warm', '–')} | "
            f"{f(a.get('wall_regret_warm'))} / {f(a.get('wall_regret_cold'))} | "
            f"{f(a.get('overhead_warm'), '{:.1%}')} / {f(a.get('overhead_cold'), '{:.1%}')} | "
            f"{dflt} | {b['chosen']} | {f(b.get('regret_warm'))} | "
            f"{m['measured_selection_seconds']:.1f} s | {h.get('chosen', '–')} | "
            f"{f(h.get('regret_warm'))} / {f(h.get('regret_warm_pooled'))} | "
            f"{h3.get('chosen', '–')} | {f(h3.get('regret_warm'))} | "
            f"{am.get('chosen', '–')} | {f(am.get('regret_warm'))} |")
    measured = [(m["model"], measured_run_regret(m)) for m in results["models"]]
    if any(r for _, r in measured):
        out += ["", "`measure=True`'s own runs: each seed's measured selection on a fresh model "
                "and its choice run at once on that model (what the measurement kept used); "
                "regret against the best candidate's warm median ESS/s, the run alone and with "
                "its measured selection's seconds.", "",
                "| model | chose | measured selections (s) | regret of the run | with the "
                "selection |", "|---|---|---|---|---|"]
        for name, r in measured:
            if r:
                out.append(f"| {name} | {', '.join(r['chosen'])} | "
                           f"{' / '.join(f'{x:.1f}' for x in r['selection_seconds'])} | "
                           f"{r['regret']:.2f} | {r['regret_with_selection']:.2f} |")
    for m in results["models"]:
        out += ["", f"#### {m['model']} (selection {m['selection_seconds']:.2f} s"
                f" + start check {m.get('start_check_seconds', 0.0):.2f} s; with "
                f"measure=True {m['measured_selection_seconds']:.2f} s)", ""]
        out += _rows_table(m["rows"], m["auto"]["chosen"])
    if results.get("partial"):  # the model a time limit cut short: what it had measured
        m = results["partial"]
        out += ["", f"#### {m['model']}: cut short (selection {m['selection_seconds']:.2f} s; "
                f"`auto` chose {m['chosen']['auto']}; no regret: not every candidate ran)", ""]
        out += _rows_table(m["rows"], m["chosen"]["auto"])
    return "\n".join(out) + "\n"


def main(argv=None):
    """Run the benchmark; return the results as a dict."""
    args = _parse(argv)
    if args.report_only:  # recompute regrets and the Markdown from a results file
        try:
            results = json.loads(Path(args.report_only).read_text())
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--report-only {args.report_only}: cannot read it as a results "
                             f"file ({type(exc).__name__}: {exc})") from None
        if not isinstance(results, dict) or "models" not in results:
            raise SystemExit(f"--report-only {args.report_only}: not a results file of this "
                             "benchmark (no 'models'): give the JSON its --out wrote")
        for m in results["models"]:
            ok = [r for r in m["rows"] if r["cold_ess_per_s"] is not None]
            for key, label in m["chosen"].items():
                m[key] = _regret(ok, label,
                                 _own_seconds(m, key) + m.get("start_check_seconds", 0.0))
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
        text = markdown(results)
        Path(args.markdown).write_text(text) if args.markdown else print(text)
        return results
    sys.path.insert(0, str(Path(__file__).parent))
    from zoo import dense_shapes, held_out, program_size_shapes, zoo

    known = (set(zoo(quick=args.quick)) | set(held_out()) | set(dense_shapes())
             | set(program_size_shapes()))
    unknown = [n for n in (args.models or "").split(",") if n and n not in known]
    if unknown:  # before any compile directory or run: a typo costs nothing
        raise SystemExit(f"--models: no zoo model {', '.join(unknown)}; the zoo has "
                         f"{', '.join(zoo(quick=args.quick))}, held-out "
                         f"{', '.join(held_out())}, and dense {', '.join(dense_shapes())}")
    compile_dir = None if args.keep_compile_cache else _fresh_compile_dir()
    # judge the first selection of each model: no run history of earlier benchmark runs; the
    # history step records into a history of this run only (machine figures copied)
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    # nor profiles kept on disk by earlier processes (default_run times a reuse itself)
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    # the runs judged are repeats in one process, which pay no sampler's first use
    # (pymc_accel.first_use); bench_fresh_process.py judges a new process's choice
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    _private_history_dir()
    import platform
    import warnings
    from importlib.metadata import version

    warnings.filterwarnings("ignore")

    from pymc_accel.devices import cpu_cores, discover
    from pymc_accel.machine import machine_figures

    models = zoo(quick=args.quick)
    import pymc_accel

    first = time.perf_counter()  # one-off costs of a process: JAX import, machine figures
    pymc_accel.select(models["eight_schools"](), draws=args.draws, tune=args.tune, chains=args.chains)
    first = time.perf_counter() - first
    names = args.models.split(",") if args.models else list(models)
    # named with --models: models no cost-model figure was fitted on, and dense shapes
    models |= held_out() | dense_shapes() | program_size_shapes()
    start = time.perf_counter()
    results = {
        "command": "python bench/bench_regret.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.machine()}, {cpu_cores()} cores, {discover().summary()}, "
                   f"Python {platform.python_version()}",
        # as JAX started with them: pymc-accel's own (xla_tuning) or the user's
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "versions": {p: version(p) for p in ("pymc", "pytensor", "nutpie", "numpyro", "jax", "numba")},
        "compile_dir": compile_dir, "draws": args.draws, "tune": args.tune, "chains": args.chains,
        "repeats": args.repeats, "seed": args.seed, "candidates": args.candidates, "models": [],
        "first_selection_in_process_seconds": first,
        # the calibration the estimates were made with (a GPU's launch latency among them), so
        # a lent machine's estimates can be taken apart after it is gone
        "machine_figures": dataclasses.asdict(machine_figures(devices=discover())),
    }
    def keep_partial(record):  # a model cut short keeps its choice and finished candidates
        results["partial"] = record
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))

    for name in names:
        print(f"{name}:", flush=True)
        results["models"].append(bench_model(name, models[name], args, progress=keep_partial))
        results.pop("partial", None)
        a = results["models"][-1]["auto"]
        print(f"  -> auto chose {a['chosen']}: regret warm {a.get('regret_warm')}, "
              f"cold {a.get('regret_cold')}", flush=True)
        results["seconds"] = time.perf_counter() - start
        if args.out:  # written after every model, so an interrupted run keeps what it measured
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    results["seconds"] = time.perf_counter() - start
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    if args.markdown:
        Path(args.markdown).write_text(markdown(results))
    return results


if __name__ == "__main__":
    main()
