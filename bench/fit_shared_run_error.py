"""How much of a run's error against its estimate do the samplers of one model share?

The run history corrects a sampler's seconds per gradient and fixed seconds by its own runs of
the model: the run's wall time over its estimate with the run's own leapfrogs per draw, split
between the two in proportion (``history._observed_fixed_seconds``). A sampler that has not
run the model keeps its modelled seconds, so one slow run of the leader (a slow hour of the
machine, a model the census undercounts) can hand the next run to a rival that is just as
slow. This script measures how far one sampler's ratio says another's.

For every model of the given ``bench_regret.py`` result files, each candidate's recorded warm
run of median wall time is recorded into a run history of its own, against the candidate's
estimate with an empty history (the model's kernels cached, as in the recorded runs), and the
ratio the record keeps is read back (``fixed_ratio``: the proportional split makes it the
run's wall time over its whole estimate). Over the (model, file) pairs where two candidates
both have one, the covariance of their logarithms, each centred on its candidate's mean, is
the error they share; a candidate's variance beyond the shared covariance (the mean over pairs
of different runtimes) is its own. The fit is written as JSON with the per-candidate means,
variances and covariances; ``--split`` fits on the files whose names do not contain it and
reports the same figures on those that do, out of sample.

    JAX_PLATFORMS=cpu python bench/fit_shared_run_error.py docs/results/regret-cpu-1000*.json \\
        --out docs/results/fit-shared-run-error-cpu.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def run_ratios(results: dict) -> list[dict]:
    """Per recorded model: ``{candidate: run ratio}`` of each candidate's median warm run,
    recorded against its estimate with an empty run history."""
    from bench_regret import kernels_cached, offered_candidates, private_history
    from replay_regret import _factory, _median_warm_run, warm_estimate

    from types import SimpleNamespace

    import numpy as np

    from pymc_accel import history
    from pymc_accel.backend import SampleRequest
    from pymc_accel.devices import discover
    from pymc_accel.profile import profile_model

    devices = discover()
    request = SampleRequest(draws=results["draws"], tune=results["tune"],
                            chains=results["chains"])
    out = []
    for record in results["models"]:
        factory = _factory(record["model"])
        if factory is None:
            continue
        profile = profile_model(factory())
        offered = offered_candidates(profile, devices)
        ratios = {}
        with private_history(), kernels_cached():
            for row in record["rows"]:
                candidate, run = offered.get(row["candidate"]), _median_warm_run(row)
                if candidate is None or run is None:
                    continue
                estimate = warm_estimate(candidate, profile)
                idata = SimpleNamespace(
                    sample_stats={"n_steps": np.array([run["leapfrogs_per_draw"]])})
                history.record(profile, candidate, estimate, request, run["wall"], idata)
                # the run's wall time over its whole estimate, split between fixed seconds
                # and sampling alike (history._observed_fixed_seconds): the fixed ratio
                ratio = (history.lookup(profile, candidate) or {}).get("fixed_ratio")
                history.clear()  # the next candidate is estimated without this run
                if ratio:
                    ratios[candidate.label] = float(ratio)
        out.append({"model": record["model"], "ratios": ratios})
    return out


def _twins(a: str, b: str) -> bool:
    """The same sampler in two precisions: their errors share the sampler's program."""
    strip = lambda label: label.replace("float32", "float64")  # noqa: E731
    return strip(a) == strip(b)


def fit(lines: list[dict]) -> dict:
    """Per-candidate mean and variance of log ratio, pairwise covariances (each pair over the
    lines where both have a ratio), the shared variance (mean covariance over pairs that are
    not twins) and each candidate's own variance beyond it."""
    labels = sorted({c for line in lines for c in line["ratios"]})
    logs = {c: [math.log(line["ratios"][c]) for line in lines if c in line["ratios"]]
            for c in labels}
    mean = {c: sum(v) / len(v) for c, v in logs.items() if v}
    var = {c: sum((x - mean[c]) ** 2 for x in v) / len(v) for c, v in logs.items() if v}
    cov, pairs = {}, {}
    for a, b in itertools.combinations(labels, 2):
        both = [line["ratios"] for line in lines if a in line["ratios"] and b in line["ratios"]]
        if len(both) < 5:
            continue
        cov[f"{a} / {b}"] = sum((math.log(r[a]) - mean[a]) * (math.log(r[b]) - mean[b])
                                for r in both) / len(both)
        pairs[f"{a} / {b}"] = len(both)
    cross = [v for k, v in cov.items() if not _twins(*k.split(" / "))]
    shared = sum(cross) / len(cross) if cross else float("nan")
    return {"lines": len(lines), "mean_log_ratio": mean, "variance": var,
            "covariance": cov, "pairs": pairs, "shared_variance": shared,
            "own_variance": {c: v - shared for c, v in var.items()}}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="result files written by bench_regret.py --out")
    p.add_argument("--split", help="fit on the files whose names lack this; report those with it")
    p.add_argument("--out", help="write the fit here as JSON")
    args = p.parse_args(argv)
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"  # the recorded runs were repeats in one process
    by_file = {}
    for path in args.results:
        results = json.loads(Path(path).read_text())
        if isinstance(results, dict) and results.get("models"):
            by_file[path] = run_ratios(results)
    every = [line for lines in by_file.values() for line in lines]
    out = {"command": "python bench/fit_shared_run_error.py " + " ".join(argv or sys.argv[1:]),
           "files": list(by_file), "all": fit(every), "by_file": by_file}
    if args.split:
        out["fitted"] = fit([ln for f, ls in by_file.items() if args.split not in f for ln in ls])
        out["held_out"] = fit([ln for f, ls in by_file.items() if args.split in f for ln in ls])
    for name in ("all", "fitted", "held_out"):
        if name in out:
            f = out[name]
            print(f"{name}: {f['lines']} model runs, shared variance {f['shared_variance']:.4f}")
            for c in f["variance"]:
                print(f"  {c}: mean log ratio {f['mean_log_ratio'][c]:+.3f}, variance "
                      f"{f['variance'][c]:.4f}, own {f['own_variance'][c]:+.4f}")
            for k, v in f["covariance"].items():
                print(f"  cov {k}: {v:.4f} ({f['pairs'][k]} pairs)")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
