"""Selection overhead at ``pm.sample``'s defaults, without the regret benchmark's candidate runs.

For each quick-zoo model, in one process: the first selection of a new model (every kept
profile forgotten; the median of three, each on a fresh model), the selection of the model
built again and that of a new process (its profile read from disk), then the chosen candidate
run once at ``pm.sample``'s defaults (1000 tune + 1000 draws, ``max(2, cores)`` chains). The
overhead is pymc-accel's own seconds (selection, and the start check where the sampler does not
check its start itself) over that run's wall time: ``bench_regret.default_run``, which the
regret benchmark runs after its candidates.

``--history machine`` selects with this machine's run history (what a user who has run models
here sees); ``--history empty`` with an empty one beside this machine's figures (a machine
where nothing has run: every numba candidate is charged its first compile, which can make
NumPyro in float32 the choice, and the float32 accuracy check part of the overhead).
``--backend NAME`` selects as ``nuts_sampler=NAME`` does (the overhead of a user who names the
backend: the profile, and the start check where the sampler does not check its start itself).

    JAX_PLATFORMS=cpu python bench/bench_overhead.py --history empty --out docs/results/overhead-cpu-empty.json --markdown docs/results/overhead-cpu-empty.md
"""

from __future__ import annotations

import argparse
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
             "of which float32 check | overhead | model built again | new process |",
             "|---|---|---|---|---|---|---|---|"]
    for m in results["models"]:
        d = m["default_run"]
        if "wall" not in d:
            lines.append(f"| {m['model']} | {d.get('chosen', '')} | {d.get('skipped') or d.get('error')} "
                         "| | | | | |")
            continue
        firsts = ", ".join(f"{t * 1e3:.0f}" for t in d["first_selection_seconds_all"])
        check = d.get("precision_check_seconds") or 0.0
        lines.append(
            f"| {m['model']} | {d['chosen']} | {d['wall']:.1f} s | {firsts} | "
            f"{f'{check * 1e3:.0f} ms' if check else '—'} | **{d['overhead']:.1%}** "
            f"({(d['selection_seconds'] + d['check_seconds']) * 1e3:.0f} ms) | "
            f"{d['overhead_repeat']:.1%} | {d['overhead_stored']:.1%} |")
    over = [m["default_run"]["overhead"] for m in results["models"] if "wall" in m["default_run"]]
    if over:
        lines += ["", f"Overhead of the first selection: median {statistics.median(over):.1%}, "
                      f"max {max(over):.1%}, over {len(over)} models "
                      f"({sum(o <= 0.02 for o in over)} within 2%)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    """Run the benchmark; return the results as a dict."""
    args = _parse(argv)
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"  # default_run times a reuse itself
    # the runs are in one process, which pays no sampler's first use after the first
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    warnings.filterwarnings("ignore")
    from bench_regret import default_run, private_history, write_outputs
    from zoo import zoo

    from importlib.metadata import version

    import pymc_accel
    from pymc_accel.devices import cpu_cores, discover

    models = zoo(quick=True)
    names = args.models.split(",") if args.models else list(models)
    pymc_accel.select(models["eight_schools"]())  # one-off costs of a process: imports, figures
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
        results["models"].append({"model": name, "default_run": record})
        results["seconds"] = time.perf_counter() - start
        if args.out:  # each model's record as it finishes
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    write_outputs(results, markdown(results), args.out, args.markdown)
    return results


if __name__ == "__main__":
    main()
