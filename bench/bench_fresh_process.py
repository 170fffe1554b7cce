"""Selection regret for a script run in a new Python process: what most users see.

``bench_regret.py`` times repeats inside one process, where no sampler pays its start-up twice.
A user's script starts a new process every time, with PyTensor's disk cache warm from earlier
runs, and each sampler then pays its first use in the process (:mod:`pymc_accel.first_use`:
nutpie about 5 s, NumPyro 1.65 s, PyMC's NUTS 0.55 s on the 2-core machine). Here every run is
a new process:

1. ``auto``'s choice is made in a new process, with first use charged (what
   ``pymc_accel.sample`` now does) and without (the estimates of a warm process, as before).
2. Each candidate (PyMC's NUTS and nutpie on the numba gradient, NumPyro in float64, and both
   choices) runs once with 10 + 10 draws to warm the disk caches, then ``--seeds`` times, each in
   a new process, with seeds 1, 2, ...: wall time of the backend's ``sample`` (its first use
   included, interpreter start and imports excluded: every sampler pays those), minimum bulk
   ESS, ESS/s.
3. Regret = best median ESS/s ÷ the choice's, with each candidate's pooled ESS/s (its ESS summed
   over its seconds summed) beside it, and the wall-time regret; the selection's own seconds
   (the first in the new process: the registry, the machine figures and the model's profile;
   no profile kept on disk) against the chosen run's wall time.

    JAX_PLATFORMS=cpu python bench/bench_fresh_process.py --models eight_schools,funnel \
        --seeds 3 --out /tmp/fresh.json --markdown /tmp/fresh.md

``--cold``: the model is new to the machine, as after a user changed it. Every run gets its own
copy of a PyTensor compile directory that holds only a primer model's kernels (the funnel's,
eight schools' for the funnel: what every model shares is cached, the model's own kernels are
not), and no warming run. ``auto`` chooses with an empty run history, so the model's first
compile is charged (``Estimate.cold_compile_seconds``); the comparison choice is made with the
history off, where it is not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_regret import _pooled_ess_per_s, _private_history_dir

HERE = Path(__file__).parent
BUILTIN = ("numba[cpu,float64,driver=pymc]", "numba[cpu,float64,driver=nutpie]",
           "numpyro[cpu,float64,chain_method=parallel]")


def _quiet_env() -> None:
    # a first selection and first runs: no run history or kept profile of earlier processes
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    import warnings

    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(HERE))


def models() -> dict:
    """The models a run can name: the quick zoo's and the held-out ones (``zoo.held_out``)."""
    import zoo

    return zoo.zoo(quick=True) | zoo.held_out()


def worker_select(model: str, draws: int, tune: int, chains: int, cold: bool = False) -> dict:
    """In this new process: ``auto``'s choice with first use charged, then without; with
    ``cold``, with the model's first compile charged (an empty run history), then without (the
    history off), first use charged in both."""
    import pymc_accel

    factory = models()[model]
    if cold:  # an empty run history of this worker's own, beside the machine's figures
        _private_history_dir()
        os.environ["PYMC_ACCEL_HISTORY"] = "on"
    report = pymc_accel.select(factory(), draws=draws, tune=tune, chains=chains)
    if cold:
        os.environ["PYMC_ACCEL_HISTORY"] = "off"
    else:
        os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    warm = pymc_accel.select(factory(), draws=draws, tune=tune, chains=chains)
    rows = {r.label: {"total": r.total_seconds, "first_use": r.first_use_seconds,
                      "cold_compile": r.cold_compile_seconds}
            for r in report.rows if r.total_seconds is not None}
    return {"chosen": report.chosen, "chosen_warm_process": warm.chosen, "estimates": rows,
            "selection_seconds": report.selection_seconds}


def worker_run(model: str, label: str, seed: int, draws: int, tune: int, chains: int) -> dict:
    """In this new process: one run of candidate ``label`` on a new ``model``."""
    from bench_regret import min_bulk_ess, offered_candidates

    from pymc_accel.backend import SampleRequest
    from pymc_accel.devices import cpu_cores
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry

    built = models()[model]()
    candidate = offered_candidates(profile_model(built))[label]
    request = SampleRequest(draws=draws, tune=tune, chains=chains, cores=min(chains, cpu_cores()),
                            random_seed=seed, progressbar=False, quiet=True,
                            compute_convergence_checks=False)
    start = time.perf_counter()
    idata = get_registry().backends[candidate.backend].sample(built, candidate, request)
    wall = time.perf_counter() - start
    return {"wall": wall, "ess": min_bulk_ess(idata)}


def _call(args: list[str], compiledir: str | None = None) -> dict:
    env = dict(os.environ)
    if compiledir:
        env["PYTENSOR_FLAGS"] = f"base_compiledir={compiledir}"
    out = subprocess.run([sys.executable, __file__, "--worker", *args],
                         capture_output=True, text=True, check=False, env=env)
    lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if out.returncode or not lines:
        return {"error": out.stderr[-400:]}
    return json.loads(lines[-1])


def primed_compiledir(model: str, chains: int) -> str:
    """A PyTensor compile directory holding the kernels of a primer model (the funnel, or eight
    schools for the funnel), compiled by both numba drivers: what a machine that has run
    other models has cached, without ``model``'s own kernels."""
    import tempfile

    from fit_cold_compile import primer_for

    primer = primer_for(model)
    path = tempfile.mkdtemp(prefix="pymc-accel-primed-")
    for label in BUILTIN[:2]:
        _call(["run", primer, label, "0", "10", "10", str(chains)], compiledir=path)
    return path


def _cold_copy(template: str) -> str:
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="pymc-accel-cold-")
    shutil.copytree(template, path, dirs_exist_ok=True)
    return path


def bench_model(model: str, seeds: int, draws: int, tune: int, chains: int,
                cold: bool = False) -> dict:
    """Select in a new process, then run every candidate in new processes; the model's record.
    With ``cold`` every run compiles the model's kernels (:func:`primed_compiledir`)."""
    import shutil

    length = [str(draws), str(tune), str(chains)]
    selection = _call(["select", model, *length, "cold" if cold else "warm"])
    print(f"{model}: chose {selection.get('chosen')} (without " + ("the first compile" if cold else "first use") + ": "
          f"{selection.get('chosen_warm_process')})", flush=True)
    labels = list(dict.fromkeys([*BUILTIN, selection.get("chosen"),
                                 selection.get("chosen_warm_process")]))
    rows = {}
    template = primed_compiledir(model, chains) if cold else None
    for label in filter(None, labels):
        if template is None:
            _call(["run", model, label, "0", "10", "10", str(chains)])  # disk caches warm
            runs = [_call(["run", model, label, str(seed), *length])
                    for seed in range(1, seeds + 1)]
        else:
            runs = []
            for seed in range(1, seeds + 1):
                compiledir = _cold_copy(template)
                runs.append(_call(["run", model, label, str(seed), *length], compiledir))
                shutil.rmtree(compiledir, ignore_errors=True)
        good = [r for r in runs if "error" not in r]
        rates = [r["ess"] / r["wall"] for r in good]
        rows[label] = {
            "runs": runs,
            "median_wall": statistics.median(r["wall"] for r in good) if good else None,
            "median_ess_per_s": statistics.median(rates) if rates else None,
            "pooled_ess_per_s": _pooled_ess_per_s(good) if good else None,
            "min_ess": min((r["ess"] for r in good), default=None),
        }
        print(f"  {label}: walls {[round(r['wall'], 2) for r in good]} ESS "
              f"{[round(r['ess']) for r in good]}"
              + (f" errors {len(runs) - len(good)}" if len(good) < len(runs) else ""), flush=True)
    if template is not None:
        shutil.rmtree(template, ignore_errors=True)
    record = {"model": model, "selection": selection, "rows": rows, "cold": cold}
    for key in ("chosen", "chosen_warm_process"):
        record[f"regret_{key}"] = _regret(rows, selection.get(key))
    return record


def _regret(rows: dict, label: str | None) -> dict | None:
    ok = {k: v for k, v in rows.items() if v["median_ess_per_s"]}
    if not ok or label not in ok:
        return None
    best_median = max(v["median_ess_per_s"] for v in ok.values())
    best_pooled = max(v["pooled_ess_per_s"] for v in ok.values())
    best_wall = min(v["median_wall"] for v in ok.values())
    return {"median": best_median / ok[label]["median_ess_per_s"],
            "pooled": best_pooled / ok[label]["pooled_ess_per_s"],
            "wall": ok[label]["median_wall"] / best_wall}


def markdown(results: list[dict], command: str) -> str:
    """The records as a Markdown table."""
    cold = any(rec.get("cold") for rec in results)
    out = [f"Command: `{command}`", "",
           "| model | chose (first use" + (" and first compile" if cold else "") + " charged) | "
           "regret median / pooled / wall | "
           + ("estimates without the first compile chose" if cold
              else "warm-process estimates chose") + " | its regret median / pooled / wall | "
           "selection in the new process (share of the chosen run) | "
           "median wall per candidate (s) |",
           "|---|---|---|---|---|---|---|"]

    def fmt(r):
        return "n/a" if not r else f"{r['median']:.2f} / {r['pooled']:.2f} / {r['wall']:.2f}"

    for rec in results:
        sel = rec["selection"]
        walls = "; ".join(f"{k}: {v['median_wall']:.1f}" for k, v in rec["rows"].items()
                          if v["median_wall"])
        chosen_wall = rec["rows"].get(sel.get("chosen"), {}).get("median_wall")
        took = sel.get("selection_seconds")
        overhead = (f"{took:.2f} s ({took / chosen_wall:.1%})" if took and chosen_wall
                    else "n/a")
        out.append(f"| {rec['model']} | {sel.get('chosen')} | {fmt(rec['regret_chosen'])} | "
                   f"{sel.get('chosen_warm_process')} | {fmt(rec['regret_chosen_warm_process'])}"
                   f" | {overhead} | {walls} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        _quiet_env()
        kind, *rest = argv[1:]
        if kind == "select":
            model, draws, tune, chains, mode = rest
            print(json.dumps(worker_select(model, int(draws), int(tune), int(chains),
                                           cold=mode == "cold")))
        else:
            model, label, seed, draws, tune, chains = rest
            print(json.dumps(worker_run(model, label, int(seed), int(draws), int(tune),
                                        int(chains))))
        return
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="eight_schools,glm_linear,glm_poisson,funnel,pk_scan,"
                                       "seed_small,seed_mid")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--cold", action="store_true",
                   help="the model new to the machine: its kernels compiled in every run")
    p.add_argument("--out")
    p.add_argument("--markdown")
    args = p.parse_args(argv)
    results = []
    for model in args.models.split(","):
        results.append(bench_model(model, args.seeds, args.draws, args.tune, args.chains,
                                   cold=args.cold))
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1))
    text = markdown(results, "python bench/bench_fresh_process.py " + " ".join(argv))
    Path(args.markdown).write_text(text) if args.markdown else print(text)


if __name__ == "__main__":
    main()
