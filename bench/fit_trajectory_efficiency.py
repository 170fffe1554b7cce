"""Trees and effective draws of each NUTS implementation against nutpie's, from the runs the
regret benchmark recorded: the data ``pymc_accel.costmodel.NUTS_GRADIENT_EFFICIENCY`` was
fitted to.

``bench_regret.py`` keeps, for every run, its leapfrogs per draw and its minimum bulk ESS. Per
model and run length, each candidate's median over its seeds against nutpie's gives its trees
(leapfrogs per draw), its effective draws per draw, and their ratio, its effective draws per
gradient; the table ends with geometric means over the models. The funnel is left out, as in the
trajectory fit (``fit_trajectories.py``): on a centred hierarchy every NUTS is given nutpie's
trees, whose length there the seed sets.

    python bench/fit_trajectory_efficiency.py docs/results/regret-cpu-500.json \\
        docs/results/regret-cpu-500-all.json docs/results/regret-cpu-1000-small.json \\
        docs/results/regret-cpu-1000-seed.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

NUTPIE = "numba[cpu,float64,driver=nutpie]"
OTHERS = {"PyMC's NUTS": "numba[cpu,float64,driver=pymc]",
          "NumPyro float64": "numpyro[cpu,float64,chain_method=parallel]",
          "NumPyro float32": "numpyro[cpu,float32,chain_method=parallel]"}


def medians(record: dict) -> dict[str, tuple[float, float]]:
    """Per candidate of one recorded model: median leapfrogs per draw and median min bulk ESS
    over its runs that recorded both."""
    out = {}
    for row in record["rows"]:
        runs = [r for r in row.get("runs") or []
                if r.get("ess") is not None and r.get("leapfrogs_per_draw")]
        if runs:
            out[row["candidate"]] = (statistics.median(r["leapfrogs_per_draw"] for r in runs),
                                     statistics.median(r["ess"] for r in runs))
    return out


def ratios(paths: list[str], min_draws: int = 500) -> list[dict]:
    """One line per recorded model and length: each candidate's trees, effective draws per draw
    and per gradient against nutpie's."""
    lines = []
    for path in paths:
        results = json.loads(Path(path).read_text())
        if results["draws"] < min_draws:
            continue
        for record in results["models"]:
            if record["model"] == "funnel":
                continue
            seen = medians(record)
            if NUTPIE not in seen:
                continue
            trees0, ess0 = seen[NUTPIE]
            line = {"model": record["model"], "draws": results["draws"]}
            for name, label in OTHERS.items():
                if label in seen:
                    trees, ess = seen[label]
                    line[name] = (trees / trees0, ess / ess0, (ess / ess0) / (trees / trees0))
            lines.append(line)
    return lines


def _geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="result files of bench_regret.py --out")
    p.add_argument("--min-draws", type=int, default=500,
                   help="leave out shorter runs, whose minimum ESS is mostly noise")
    args = p.parse_args(argv)
    lines = ratios(args.results, args.min_draws)
    names = list(OTHERS)
    print("| model | draws | " + " | ".join(f"{n}: trees / ESS per draw / per gradient"
                                             for n in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for line in lines:
        cells = [" / ".join(f"{v:.2f}" for v in line[n]) if n in line else "" for n in names]
        print(f"| {line['model']} | {line['draws']} | " + " | ".join(cells) + " |")
    means = []
    for n in names:
        got = [line[n] for line in lines if n in line]
        means.append(" / ".join(f"{_geometric_mean([g[i] for g in got]):.2f}" for i in range(3))
                     + f" ({len(got)})" if got else "")
    print("| **geometric mean** (pairs) | | " + " | ".join(means) + " |")


if __name__ == "__main__":
    main()
