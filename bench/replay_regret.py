"""Replay recorded regret runs under the current cost model: which candidate would ``auto``
choose now, and what regret would that choice have had against the runs already measured?

``bench/bench_regret.py`` takes half an hour for the quick zoo at 500 + 500 draws; a change to
the cost model changes only the choice, not the runs. This script selects again (modelled,
nothing sampled; run history and profile store off) for every model of the given result files,
with the draws, tuning and chains those runs had, and judges the choice against the recorded
rows: warm median regret, pooled regret and its 90% bootstrap interval, as ``bench_regret``
reports them. A choice that was never run in the recorded set has no regret and says so.

A replay judges a model change in seconds, but only against what was measured: it is a check
on the recorded set, not a new measurement, and figures fitted on the same set (as the cost
model's are) are judged in sample. ``docs/benchmarks.md`` says which.

    JAX_PLATFORMS=cpu python bench/replay_regret.py docs/results/regret-cpu-500.json \\
        docs/results/regret-cpu-500-all.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _factory(name: str):
    """The zoo's factory for a recorded model name, at quick sizes, else at full ones."""
    import zoo

    quick, full = zoo.zoo(quick=True), zoo.zoo(quick=False)
    return quick.get(name) or full.get(name)


def replay(results: dict) -> list[dict]:
    """One line per recorded model: recorded and replayed choices and the replayed regret."""
    import pymc_accel
    from bench_regret import _low_ess, _regret, pooled_regret_interval
    from pymc_accel.selection import forget_profiles

    lines = []
    for record in results["models"]:
        factory = _factory(record["model"])
        if factory is None:
            lines.append({"model": record["model"], "error": "not in bench/zoo.py"})
            continue
        forget_profiles()
        report = pymc_accel.select(factory(), draws=results["draws"], tune=results["tune"],
                                   chains=results["chains"])
        rows = [r for r in record["rows"] if r.get("cold_ess_per_s") is not None]
        regret = _regret(rows, report.chosen, 0.0)
        line = {"model": record["model"], "recorded": record["chosen"]["auto"],
                "replayed": report.chosen,
                "regret_warm": regret.get("regret_warm"),
                "regret_warm_pooled": regret.get("regret_warm_pooled"),
                "interval": pooled_regret_interval(rows, report.chosen),
                "low_ess": _low_ess(rows)}
        lines.append(line)
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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="result files written by bench_regret.py --out")
    p.add_argument("--json", help="also write the replayed lines here")
    args = p.parse_args(argv)
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"  # the recorded runs were repeats in one process
    everything = {}
    for path in args.results:
        lines = replay(json.loads(Path(path).read_text()))
        everything[path] = lines
        print(table(lines, path), "\n", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))


if __name__ == "__main__":
    main()
