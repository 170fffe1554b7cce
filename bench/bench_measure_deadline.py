"""Measured mode's deadline when a compile runs past its prediction.

Measured mode starts a compile only when its predicted time fits in what is left of the budget,
and a prediction can be wrong: in the regret run of 2026-11-27, numba's gradient compile of
seed_mid took 3.3 s where 0.9 s was predicted and 2.2 s were left, and the selection took
5.3 s of a 5 s budget. Since then a measurement still running at the deadline is left to finish
in the background (:mod:`pymc_accel.measure`).

This benchmark makes such predictions wrong on purpose: the process's PyTensor compile
directory is empty (every numba kernel cold: seconds to compile), while the selection is told
that every model's kernels are cached (``bench_regret.kernels_cached``), so numba's compiles are
predicted at their warm time. For each model, in a new process of its own (nothing learned from
an earlier model), ``pymc_accel.sample(nuts_sampler="auto", measure=True)`` is run as a user's
script runs it, and reported: the selection's seconds against its
budget, what was measured and what was left running, how long a compile left running went on
after the selection (what a selection that waited for it would have taken more), and the run's
wall time (the run shares the CPU with that compile, or, for a numba run, waits for it first).

    JAX_PLATFORMS=cpu python bench/bench_measure_deadline.py --out docs/results/measure-deadline-cpu.json --markdown docs/results/measure-deadline-cpu.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

DEFAULT_MODELS = "seed_mid,pk_scan,glm_linear,eight_schools"


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=DEFAULT_MODELS, help="comma-separated quick-zoo names")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None, help="write the results as JSON here")
    p.add_argument("--markdown", default=None, help="write the table as Markdown here")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)  # one model, new process
    return p.parse_args(argv)


def run_model(name: str, factory, args) -> dict:
    """One model: ``sample(auto, measure=True)`` with the measurement's live log captured."""
    import pymc_accel
    from pymc_accel import measure, selection
    from pymc_accel.report import SelectionReport

    logs: list[dict] = []
    real = selection.measure_candidates

    def capturing(*a, **kw):  # the live log: a compile left running fills in ran_on_seconds
        logs.append(real(*a, **kw))
        return logs[-1]

    selection.measure_candidates = capturing
    try:
        began = time.perf_counter()
        idata = pymc_accel.sample(model=factory(), nuts_sampler="auto", measure=True,
                                  draws=args.draws, tune=args.tune,
                                  chains=args.chains, random_seed=args.seed, progressbar=False)
        total = time.perf_counter() - began
    finally:
        selection.measure_candidates = real
    after_run = measure.wait_for_background()
    report = SelectionReport.from_idata(idata)
    log = logs[-1]
    drawn = int(idata.posterior.sizes["draw"]) * int(idata.posterior.sizes["chain"])
    return {
        "model": name, "chosen": report.chosen, "selection_seconds": report.selection_seconds,
        "budget_seconds": log["budget_seconds"], "run_seconds": total - report.selection_seconds,
        "measured": [m["candidate"] for m in log["measured"]],
        "abandoned": [dict(a) for a in log["abandoned"]],
        "waited_after_run_seconds": after_run, "overran_seconds": log["overran_seconds"],
        "draws_returned": drawn, "draws_asked": args.draws * args.chains,
    }


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        "# Measured mode's deadline, compiles predicted warm and run cold",
        "",
        f"`{meta['command']}`",
        "",
        f"Machine: {meta['machine']}. Budget {meta['budget']:g} s; {meta['draws']} + "
        f"{meta['tune']} draws, {meta['chains']} chains.",
        "",
        "| model | selection (s) | within budget | measured | left running | went on after the "
        "selection (s) | chosen | run (s) | draws |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        left = ", ".join(a["candidate"] for a in r["abandoned"]) or "none"
        on = ", ".join(f"{a['ran_on_seconds']:.2f}" for a in r["abandoned"]
                       if a["ran_on_seconds"] is not None) or "-"
        within = "yes" if r["selection_seconds"] <= r["budget_seconds"] else "**no**"
        lines.append(
            f"| {r['model']} | {r['selection_seconds']:.2f} | {within} | {len(r['measured'])} | "
            f"{left} | {on} | "
            f"{r['chosen']} | {r['run_seconds']:.1f} | {r['draws_returned']}/{r['draws_asked']} |")
    return "\n".join(lines) + "\n"


def child(name: str, args) -> dict:
    """One model in this (new) process, with an empty compile directory of its own."""
    from bench_regret import _fresh_compile_dir, kernels_cached, private_history

    compile_dir = _fresh_compile_dir()  # before PyTensor is imported
    import warnings

    warnings.filterwarnings("ignore")
    from zoo import zoo

    with private_history(), kernels_cached():
        return {**run_model(name, zoo(quick=True)[name], args), "compile_dir": compile_dir}


def main(argv=None) -> int:
    args = _parse(argv)
    if args.child:
        print("RESULT " + json.dumps(child(args.child, args)), flush=True)
        return 0
    results = []
    for name in args.models.split(","):  # a new process each: nothing learned from the last
        print(f"{name} ...", flush=True)
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--draws", str(args.draws),
             "--tune", str(args.tune), "--chains", str(args.chains), "--seed", str(args.seed)],
            capture_output=True, text=True, check=False)
        line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            print(out.stdout[-2000:], out.stderr[-4000:], flush=True)
            raise SystemExit(f"{name}: the child process failed")
        results.append(json.loads(line[len("RESULT "):]))
        r = results[-1]
        print(f"  selection {r['selection_seconds']:.2f} s, left running "
              f"{[a['candidate'] for a in r['abandoned']]}, chosen {r['chosen']}, "
              f"run {r['run_seconds']:.1f} s", flush=True)
    meta = {"command": "JAX_PLATFORMS=cpu python bench/bench_measure_deadline.py "
                       + " ".join(argv if argv is not None else sys.argv[1:]),
            "machine": f"{platform.node()} ({os.cpu_count()} cores)",
            "budget": results[0]["budget_seconds"] if results else None,
            "draws": args.draws, "tune": args.tune, "chains": args.chains}
    if args.out:
        Path(args.out).write_text(json.dumps({**meta, "results": results}, indent=1))
    text = markdown(results, meta)
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
