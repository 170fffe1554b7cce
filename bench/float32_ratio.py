"""NumPyro's float32 against its float64 on the CPU, in every recorded regret run: the observed
ratio of their warm median wall times next to the ratio the cost model estimated then.

Reads ``docs/results/regret-cpu-*.json`` (``bench/bench_regret.py``'s output) and prints, per
model, the number of files, the median observed float64/float32 wall ratio with its range, and
the median estimated ratio. Nothing is run.

    python bench/float32_ratio.py [--markdown FILE]
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import statistics
from pathlib import Path

F64 = "numpyro[cpu,float64,chain_method=parallel]"
F32 = "numpyro[cpu,float32,chain_method=parallel]"


def numpyro_pairs(paths: list[str]):
    """Every (result file's data, model record, float64 row, float32 row) of ``paths`` where
    NumPyro ran warm in both precisions on the CPU; unreadable files are skipped."""
    for path in sorted(paths):
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        for model in data.get("models", []):
            rows = {r["candidate"]: r for r in model.get("rows", [])}
            a, b = rows.get(F64), rows.get(F32)
            if a and b and a.get("warm_median_wall") and b.get("warm_median_wall"):
                yield data, model, a, b


def ratios(paths: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Per model, (observed, estimated) float64/float32 ratios, one per file that ran both."""
    out: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for _, model, a, b in numpyro_pairs(paths):
        out[model["model"]].append((a["warm_median_wall"] / b["warm_median_wall"],
                                    a["estimated_seconds"] / b["estimated_seconds"]))
    return out


def markdown(found: dict[str, list[tuple[float, float]]]) -> str:
    lines = ["| model | files | observed float64/float32 wall: median [range] | estimated: median |",
             "|---|---|---|---|"]
    for name, pairs in sorted(found.items(), key=lambda kv: -len(kv[1])):
        seen = [p[0] for p in pairs]
        lines.append(f"| {name} | {len(pairs)} | {statistics.median(seen):.2f} "
                     f"[{min(seen):.2f}–{max(seen):.2f}] | "
                     f"{statistics.median(p[1] for p in pairs):.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--markdown", default=None, help="write the table here too")
    args = p.parse_args(argv)
    text = markdown(ratios(glob.glob("docs/results/regret-cpu-*.json")))
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
