"""Selection overhead at ``pm.sample``'s defaults, without the regret benchmark's candidate runs.

For each quick-zoo model, in one process: the first selection of a new model (every kept
profile forgotten; the median of three, each on a fresh model), the selection of the model
built again and that of a new process (its profile read from disk), then the chosen candidate
run once at ``pm.sample``'s defaults (1000 tune + 1000 draws, ``max(2, cores)`` chains). The
overhead is pymc-accel's own seconds (selection, and the start check where the sampler does not
check its start itself) over that run's wall time: ``bench_regret.default_run``, which the
regret benchmark runs after its candidates. The run is handed the log density graph its
selection built, as ``pymc_accel.sample`` hands it (``SampleRequest.logp_graph``); a JAX run
then skips building it, and a numba run's ``pm.sample`` its two builds where the graph is the
model's own (``pymc_accel.backends.pm_sample_logp``), so the net overhead takes those builds
(each timed on fresh models after the run, ``bench_regret.log_density_seconds``) off the
selection's seconds and adds them to the run's: what the selection adds to a run of the sampler
named alone.

``--history machine`` selects with this machine's run history (what a user who has run models
here sees); ``--history empty`` with an empty one beside this machine's figures (a machine
where nothing has run: every numba candidate is charged its first compile, which can make
NumPyro in float32 the choice, and the float32 accuracy check part of the overhead).
``--backend NAME`` selects as ``nuts_sampler=NAME`` does (the overhead of a user who names the
backend: the profile, and the start check where the sampler does not check its start itself).

``--new-process N`` also runs each model as a user's script does: in N new Python processes,
the first selection of the process (the registry's plugins, the machine figures, the profile;
nothing in it warmed by an earlier selection), the start check where the sampler needs it, the
chosen sampler's run at ``pm.sample``'s defaults (its first use in the process and, with
``--history empty``, its first compile included) and the run's record, each timed; and N more
processes that build the model's log density first (:func:`new_process_runs`). Imports of
PyMC and pymc-accel are not timed: a script pays them whichever sampler it names. The
package's bytecode is written first (:func:`compile_bytecode`).

    JAX_PLATFORMS=cpu python bench/bench_overhead.py --history empty --out docs/results/overhead-cpu-empty.json --markdown docs/results/overhead-cpu-empty.md
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=None, help="comma-separated quick-zoo names (default: all)")
    p.add_argument("--history", choices=["machine", "empty"], default="empty")
    p.add_argument("--backend", default=None,
                   help="select this backend, as nuts_sampler=<name> does (default: auto)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--default-run-max-seconds", type=float, default=120.0,
                   help="skip a model whose run is predicted longer")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    p.add_argument("--markdown", default=None, help="write the table as Markdown here")
    p.add_argument("--new-process", type=int, default=0, metavar="N",
                   help="also time each model's first selection and run in N new processes "
                        "(the medians are reported)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)  # one model, new process
    p.add_argument("--logp-first", action="store_true", help=argparse.SUPPRESS)  # with --child
    args = p.parse_args(argv)
    # what default_run scales its prediction from (no candidate rows here: unused)
    args.tune, args.draws, args.chains = 1000, 1000, 2
    return args


def markdown(results: dict) -> str:
    """The results as a Markdown table with the command and machine."""
    lines = [f"Command: `{results['command']}`", "",
             f"Machine: {results['machine']}; history: {results['history']}; "
             f"nuts_sampler={results.get('backend') or 'auto'}", "",
             "| model | chosen | run at `pm.sample` defaults | first selection (three, ms) | "
             "of which float32 check | overhead | log density the run was handed | "
             "net overhead | model built again | new process |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for m in results["models"]:
        d = m["default_run"]
        if "wall" not in d:
            lines.append(f"| {m['model']} | {d.get('chosen', '')} | {d.get('skipped') or d.get('error')} "
                         "| | | | | | | |")
            continue
        firsts = ", ".join(f"{t * 1e3:.0f}" for t in d["first_selection_seconds_all"])
        check = d.get("precision_check_seconds") or 0.0
        lines.append(
            f"| {m['model']} | {d['chosen']} | {d['wall']:.1f} s | {firsts} | "
            f"{f'{check * 1e3:.0f} ms' if check else '—'} | **{d['overhead']:.1%}** "
            f"({(d['selection_seconds'] + d['check_seconds']) * 1e3:.0f} ms) | "
            f"{_handed(d)} | **{d.get('net_overhead', d['overhead']):.1%}** | "
            f"{d['overhead_repeat']:.1%} | {d['overhead_stored']:.1%} |")
    done = [m["default_run"] for m in results["models"] if "wall" in m["default_run"]]
    if done:
        over = [d["overhead"] for d in done]
        net = [d.get("net_overhead", d["overhead"]) for d in done]
        lines += ["", f"Overhead of the first selection: median {statistics.median(over):.1%}, "
                      f"max {max(over):.1%}, over {len(over)} models "
                      f"({sum(o <= 0.02 for o in over)} within 2%); net of the log density "
                      f"the run was handed: median {statistics.median(net):.1%}, max "
                      f"{max(net):.1%} ({sum(o <= 0.02 for o in net)} within 2%)."]
    fresh = [m for m in results["models"] if "new_process" in m]
    if fresh:
        lines += ["", "In a new process per model (a script's run: the process's first selection, "
                      "and the run with the sampler's first use; medians over the processes):", "",
                  "| model | chosen | run | first selection | start check | record | "
                  "overhead (each process) | net of the log density the run was handed | "
                  "first selection, log density built and ArviZ imported first | "
                  "overhead (each process) | net |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for m in fresh:
            n = m["new_process"]
            if "wall" not in n:
                lines.append(f"| {m['model']} | {n.get('chosen', '')} | {n.get('error')} "
                             "| | | | | | | | |")
                continue
            spread = ", ".join(f"{o:.1%}" for o in n.get("overheads", []))
            shared = n.get("logp_first")
            beyond = (f"{shared['selection_seconds'] * 1e3:.0f} ms | **{shared['overhead']:.1%}** "
                      f"({', '.join(f'{o:.1%}' for o in shared['overheads'])}) | "
                      f"**{shared.get('net_overhead', shared['overhead']):.1%}**"
                      if shared else "| | ")
            lines.append(
                f"| {m['model']} | {n['chosen']} | {n['wall']:.1f} s | "
                f"{n['selection_seconds'] * 1e3:.0f} ms | {n['check_seconds'] * 1e3:.0f} ms | "
                f"{n['record_seconds'] * 1e3:.0f} ms | **{n['overhead']:.1%}** ({spread}) | "
                f"**{n.get('net_overhead', n['overhead']):.1%}** ({_handed(n)}) | {beyond} |")
        done = [m["new_process"] for m in fresh if "wall" in m["new_process"]]
        for what, key in (("Overhead in a new process", "overhead"),
                          ("Net of the log density the run was handed", "net_overhead")):
            over = [n.get(key, n["overhead"]) for n in done]
            if over:
                lines += ["", f"{what}: median {statistics.median(over):.1%}, "
                              f"max {max(over):.1%}, over {len(over)} models "
                              f"({sum(o <= 0.02 for o in over)} within 2%)."]
        for what, key in (("", "overhead"), (", net of the log density the run was handed",
                                              "net_overhead")):
            beyond = [n["logp_first"].get(key, n["logp_first"]["overhead"]) for n in done
                      if "logp_first" in n]
            if beyond:
                lines += ["", "Beyond the start-up a run shares (the model's log density built "
                              f"and ArviZ imported first){what}: "
                              f"median {statistics.median(beyond):.1%}, max {max(beyond):.1%}"
                              f", over {len(beyond)} models ({sum(o <= 0.02 for o in beyond)} "
                              "within 2%)."]
    return "\n".join(lines) + "\n"


def _handed(d: dict) -> str:
    """The seconds of log density building the run was spared, as a table cell."""
    saved = d.get("saved_seconds")
    if saved is None:
        return "not recorded"
    return f"{saved * 1e3:.0f} ms" if saved else "none (built its own)"


def compile_bytecode() -> None:
    """Write the bytecode of pymc-accel and its installed plugins, as ``pip install`` does for a
    regular install. Under ``PYTHONDONTWRITEBYTECODE`` (set on the development machines) an
    editable install never gets any, so every new process compiled the modules a first
    selection imports from source (about 40 ms); a user's machine does that once."""
    import compileall
    from importlib.metadata import entry_points

    import pymc_accel

    packages = {Path(pymc_accel.__file__).parent}
    for ep in entry_points(group="pymc_accel"):
        try:
            module = __import__(ep.module.split(".")[0])
        except Exception:  # a broken plugin is the registry's to report
            continue
        packages.add(Path(module.__file__).parent)
    for package in sorted(packages):
        compileall.compile_dir(str(package), quiet=1)


def new_process_runs(name: str, history: str, seed: int, repeats: int) -> dict:
    """:func:`new_process_run` ``repeats`` times as timed and ``repeats`` times with the
    model's log density built first (interleaved): the medians of their seconds and
    overheads, each process's overhead in ``overheads`` (or the first ``error``).

    A new process's first ``model.logp()`` pays PyMC's and PyTensor's start-up (about half of
    the funnel's first selection: 162 ms against 79 ms), which the chosen sampler's run pays
    when no selection went before it: that run builds the same log density, and imports ArviZ
    (with ``scipy.special``, about 0.1 s, which the float32 check imports when it goes first).
    The second set of processes does both first (untimed), so its selection is what the
    selection adds to the script.
    """
    plain, shared = [], []
    for _ in range(repeats):
        plain.append(new_process_run(name, history, seed))
        shared.append(new_process_run(name, history, seed, logp_first=True))
    good = [r for r in plain if "wall" in r]
    if not good:
        return plain[0]
    out = {"chosen": good[0]["chosen"], "processes": len(good),
           "chosen_all": sorted({r["chosen"] for r in good}),
           "overheads": [r["overhead"] for r in good]}
    for key in ("wall", "selection_seconds", "check_seconds", "record_seconds",
                "precision_check_seconds", "overhead", "saved_seconds", "net_overhead"):
        out[key] = statistics.median(r[key] for r in good)
    first = [r for r in shared if "wall" in r]
    if first:
        out["logp_first"] = {
            "processes": len(first), "overheads": [r["overhead"] for r in first],
            **{key: statistics.median(r[key] for r in first)
               for key in ("wall", "selection_seconds", "overhead", "net_overhead")}}
    return out


def new_process_run(name: str, history: str, seed: int, logp_first: bool = False) -> dict:
    """Time ``name``'s first selection, start check, run and record in a new process (the
    ``--child`` mode of this script), with the history as ``history`` says; the child's
    record, or ``error``."""
    import subprocess
    import tempfile

    from bench_regret import copy_machine_figures

    env = dict(os.environ, PYMC_ACCEL_PROFILE_CACHE="off")  # a model new to the machine
    env.pop("PYMC_ACCEL_FIRST_USE", None)  # a new process pays each sampler's first use
    with tempfile.TemporaryDirectory(prefix="pymc-accel-bench-cache-") as path:
        if history == "empty":
            copy_machine_figures(path)
            env.update(PYMC_ACCEL_CACHE_DIR=path, PYMC_ACCEL_HISTORY="on")
        done = subprocess.run(
            [sys.executable, __file__, "--child", name, "--seed", str(seed)]
            + (["--logp-first"] if logp_first else []),
            env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return json.loads(lines[-1])


def _child(name: str, seed: int, logp_first: bool = False) -> None:
    """One model in this new process: first selection, start check, run, record (timed);
    prints the record as one JSON line. ``logp_first``: a copy of the model builds its log
    density first and ArviZ is imported, untimed (the start-up the run would otherwise pay:
    every sampler's run builds the log density and returns ArviZ's InferenceData, and
    importing ArviZ imports ``scipy.special``, which a selection's float32 check also needs),
    and the full collection those imports leave due is run."""
    warnings.filterwarnings("ignore")
    from bench_regret import (handed_builds, handed_graphs_used, log_density_seconds,
                              min_bulk_ess, timed_record)
    from zoo import held_out, zoo

    import pymc_accel
    from pymc_accel.backend import SampleRequest
    from pymc_accel.devices import cpu_cores
    from pymc_accel.integration import check_initial_point, checks_its_own_start
    from pymc_accel.registry import get_registry

    models = zoo(quick=True) | held_out()  # held-out models by name too
    model = models[name]()
    if logp_first:
        models[name]().logp()
        import arviz  # noqa: F401

        # and the collection those imports have made due: after ArviZ's (220,000 objects) the
        # collector's counters stand near a full collection, about 0.1 s, which the run pays
        # where no selection went first (seed_mid's selection took 0.26 s with it, 0.16 without)
        gc.collect()
    cores = min(4, cpu_cores())
    chains, tune, draws = max(2, cores), 1000, 1000  # pm.sample's defaults
    out = {"tune": tune, "draws": draws, "chains": chains}
    start = time.perf_counter()
    graph: list = []  # the log density the selection builds, handed to the run as sample() does
    report = pymc_accel.select(model, draws=draws, tune=tune, chains=chains,
                               _logp_graph_out=graph)
    out["selection_seconds"] = time.perf_counter() - start
    out["chosen"] = report.chosen
    out["precision_check_seconds"] = (report.precision_check or {}).get("seconds", 0.0)
    out["check_seconds"] = 0.0
    if not checks_its_own_start(report.candidate):  # as pymc_accel.sample does
        start = time.perf_counter()
        check_initial_point(model)
        out["check_seconds"] = time.perf_counter() - start
    request = SampleRequest(draws=draws, tune=tune, chains=chains, cores=cores,
                            random_seed=seed, progressbar=False, quiet=True,
                            compute_convergence_checks=False,
                            logp_graph=graph[0] if graph else None)
    start = time.perf_counter()
    with handed_graphs_used([]) as used:
        idata = get_registry().backends[report.candidate.backend].sample(
            model, report.candidate, request)
    out["wall"] = time.perf_counter() - start
    out["record_seconds"] = timed_record(report, request, out["wall"], idata)
    out["ess"] = min_bulk_ess(idata)
    own = out["selection_seconds"] + out["check_seconds"] + out["record_seconds"]
    out["overhead"] = own / out["wall"]
    # as bench_regret.default_run: net of the log density builds the run was spared
    builds = handed_builds(used)
    out["saved_seconds"] = log_density_seconds(models[name]) * builds if builds else 0.0
    out["net_overhead"] = (own - out["saved_seconds"]) / (out["wall"] + out["saved_seconds"])
    print(json.dumps(out), flush=True)


def main(argv=None) -> dict:
    """Run the benchmark; return the results as a dict."""
    args = _parse(argv)
    if args.child:
        _child(args.child, args.seed, args.logp_first)
        return {}
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"  # default_run times a reuse itself
    # the runs are in one process, which pays no sampler's first use after the first
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    warnings.filterwarnings("ignore")
    from bench_regret import default_run, private_history, write_outputs
    from zoo import held_out, zoo

    from importlib.metadata import version

    import pymc_accel
    from pymc_accel.devices import cpu_cores, discover

    models = zoo(quick=True)
    names = args.models.split(",") if args.models else list(models)
    models |= held_out()  # named with --models: models no cost-model figure was fitted on
    pymc_accel.select(models["eight_schools"]())  # one-off costs of a process: imports, figures
    if args.new_process:
        compile_bytecode()
    results = {
        "command": "python bench/bench_overhead.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.machine()}, {cpu_cores()} cores, {discover().summary()}, "
                   f"Python {platform.python_version()}",
        "history": args.history, "backend": args.backend, "models": [],
        "versions": {p: version(p) for p in ("pymc", "pytensor", "nutpie", "numpyro", "jax", "numba")},
    }
    start = time.perf_counter()
    for name in names:
        print(f"{name}:", flush=True)
        if args.history == "empty":
            with private_history():
                record = default_run(models[name], args, rows=[])
        else:
            os.environ["PYMC_ACCEL_HISTORY"] = "on"
            record = default_run(models[name], args, rows=[])
        entry = {"model": name, "default_run": record}
        if args.new_process:
            entry["new_process"] = fresh = new_process_runs(
                name, args.history, args.seed, args.new_process)
            if "wall" in fresh:
                print(f"  new process: {fresh['chosen']}, run {fresh['wall']:.1f} s, first "
                      f"selection {fresh['selection_seconds']:.3f} s + start check "
                      f"{fresh['check_seconds']:.3f} s + record {fresh['record_seconds']:.3f} s"
                      f" = {fresh['overhead']:.1%}", flush=True)
            else:
                print(f"  new process: {fresh.get('error')}", flush=True)
        results["models"].append(entry)
        results["seconds"] = time.perf_counter() - start
        if args.out:  # each model's record as it finishes
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    write_outputs(results, markdown(results), args.out, args.markdown)
    return results


if __name__ == "__main__":
    main()
