"""NumPyro's leapfrog and fixed seconds on a GPU, from one lease's runs: the data for
``costmodel.NUTS_GPU_LOOP_ITERATIONS``, ``costmodel.GPU_KERNEL_IN_LOOP_SHARE`` and
``costmodel.GPU_PROGRAM_LOAD_SECONDS``.

A GPU candidate's warm run is ``fixed + batched leapfrogs x seconds per leapfrog``. The
batched leapfrogs are the run's own (``leapfrogs_per_draw`` of the regret JSON's runs, or the
``n_steps`` that ``fit_numpyro_fixed.py`` records) over tuning and draws, plus the early tuning's
extra gradients (:func:`pymc_accel.costmodel.stan_tuning_extra_gradients`, runs of 200 + 200 draws
and longer only), times the vectorized chains' largest-tree factor. The fixed seconds are the
estimate's with the lease's machine figures, plus a constant. Each leapfrog is priced in units of
the GPU's calibrated loop iteration (``DeviceFigures.launch_seconds``, a ``fori_loop`` iteration of
one kernel): ``iterations + share x kernels``, the NUTS while loops' own iterations and the
gradient's kernels queued inside one. Least squares over the runs gives the three constants:

    python bench/fit_gpu_leapfrog.py docs/results/regret-gpu-h200-2026-11-27-third-lease-part*.json \\
        docs/results/fit-numpyro-fixed-h200-host-gpu-2026-11-27-third-lease.jsonl \\
        --probe docs/results/gpu-launch-probe-h200-2026-11-27.jsonl

The regret JSON's ``machine_figures`` (the lease's calibration) prices the estimates, so this runs
on any machine. The fixed-seconds constant is read against the estimate as it is: 0.16 s on the
third H200 lease's runs before ``costmodel.GPU_PROGRAM_LOAD_SECONDS`` took it in, 0.00 since. ``bench/gpu_launch_probe.py`` times the two units apart on the device.
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: shortest run whose early tuning is counted whole (``stan_tuning_extra_gradients`` was fitted
#: on runs of 200 + 200 draws and longer; a 10 + 10 draw run's tuning is its 10 steps)
LONG_RUN_STEPS = 400


def lease_machine(figures: dict):
    """The lease's :class:`~pymc_accel.machine.MachineFigures` from a regret JSON's copy."""
    from pymc_accel.machine import DeviceFigures, MachineFigures

    accelerators = {k: DeviceFigures(**v) for k, v in figures.get("accelerators", {}).items()}
    return MachineFigures(**{**figures, "accelerators": accelerators})


def gpu_runs(paths: list[str]) -> tuple[list[dict], dict]:
    """Every warm GPU run of the files, as ``{model, candidate, wall, lpd, steps, chains}``,
    and the lease's machine figures (from the regret JSON)."""
    runs, figures = [], None
    for path in paths:
        text = Path(path).read_text()
        if path.endswith(".jsonl"):
            for x in (json.loads(t) for t in text.splitlines() if t.strip()):
                if "gpu" not in x["candidate"]:
                    continue
                for r in x["runs"]:  # 10 + 10 draws x 2 chains; n_steps summed over both chains
                    runs.append({"model": x["model"], "candidate": x["candidate"], "wall": r["wall"],
                                 "lpd": r["sampling_leapfrogs"] / 20, "steps": 20, "chains": 2,
                                 "source": "10 + 10"})
                g = x.get("long")
                if g:  # the first long run compiles the program for its length: warm ones only
                    for wall, lpd in list(zip(g["walls"], g["leapfrogs_per_draw"]))[1:]:
                        runs.append({"model": x["model"], "candidate": x["candidate"], "wall": wall,
                                     "lpd": lpd, "steps": 2 * g["draws"], "chains": 2,
                                     "source": f"{g['draws']} + {g['draws']}"})
            continue
        results = json.loads(text)
        figures = results.get("machine_figures") or figures
        partial = [results["partial"]] if "partial" in results else []
        for model in [*results.get("models", []), *partial]:
            for row in model.get("rows", []):
                if "gpu" not in row["candidate"]:
                    continue
                for r in row["runs"][1:]:  # the first run compiles
                    runs.append({"model": model["model"], "candidate": row["candidate"],
                                 "wall": r["wall"], "lpd": r["leapfrogs_per_draw"],
                                 "steps": results["draws"] + results["tune"],
                                 "chains": results["chains"],
                                 "source": f"{results['tune']} + {results['draws']}"})
    return runs, figures


def design(runs: list[dict], machine) -> list[dict]:
    """Each run with what the current estimate says of it: its fixed seconds, batched
    leapfrogs, kernels and the modelled seconds per leapfrog."""
    from fit_numpyro_tuning import _factory
    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry
    from pymc_accel.rewrites.apply import with_parallel_scans

    backend = get_registry().backends["numpyro"]
    profiles, out = {}, []
    for run in runs:
        if run["model"] not in profiles:
            profile = profile_model(_factory(run["model"])())
            # the kernels as the GPU candidate's estimate counts them (scans rewritten)
            profiles[run["model"]] = profile, with_parallel_scans(profile, "gpu").census.kernels
        profile, kernels = profiles[run["model"]]
        precision = "float32" if "float32" in run["candidate"] else "float64"
        candidate = Candidate("numpyro", "gpu", precision, (("chain_method", "vectorized"),))
        est = backend.estimate(candidate, profile, machine)
        extra = est.extra_gradients.value if run["steps"] >= LONG_RUN_STEPS else 0.0
        batched = (run["steps"] * run["lpd"] + extra) * est.vectorized_trees.value
        out.append({**run, "precision": precision, "fixed_modelled": est.fixed_seconds.value,
                    "batched": batched, "kernels": kernels,
                    "leapfrog_modelled": est.seconds_per_gradient.value,
                    "launch": machine.accelerator("gpu").launch_seconds,
                    "modelled": est.fixed_seconds.value + batched * est.seconds_per_gradient.value})
    return out


def kernel_share(probe_path: str, launch: float) -> float:
    """A kernel queued inside a loop iteration, as a share of the calibrated iteration: the
    slope of ``bench/gpu_launch_probe.py``'s fit over the calibration's ``launch_seconds``."""
    for line in Path(probe_path).read_text().splitlines():
        x = json.loads(line) if line.strip().startswith("{") else {}
        if "kernel_seconds" in x:
            return x["kernel_seconds"] / launch
    raise SystemExit(f"{probe_path}: no fit line of bench/gpu_launch_probe.py")


def fit(rows: list[dict], share: float, rounds: int = 20) -> tuple[float, float]:
    """``(c, iterations)`` of ``wall = fixed_modelled + c + batched x launch x (iterations +
    share x kernels)``, in two stages, repeated: ``c`` is the median over the 10 + 10 draw runs
    (a few hundred leapfrogs: mostly fixed seconds), and ``iterations`` the median over models
    of each model's median over its longer runs (each model one vote, so that the model with
    the most runs does not decide it; the median, so that pk_scan's parallel prefix, 3x the
    others' figure, does not either). A joint least squares of the two cannot tell them
    apart on these runs: it gave c from 0.3 to 1.0 s with the weighting."""
    c, iterations = 0.0, 0.0
    for _ in range(rounds):
        def sampling(r):
            return r["batched"] * r["launch"] * (iterations + share * r["kernels"])
        short = [r["wall"] - r["fixed_modelled"] - sampling(r) for r in rows if r["steps"] < LONG_RUN_STEPS]
        c = statistics.median(short) if short else 0.0
        per_model: dict[str, list[float]] = {}
        for r in rows:
            if r["steps"] >= LONG_RUN_STEPS:
                per_model.setdefault(r["model"], []).append(
                    (r["wall"] - r["fixed_modelled"] - c) / (r["batched"] * r["launch"])
                    - share * r["kernels"])
        iterations = statistics.median(statistics.median(v) for v in per_model.values())
    return c, iterations


def main(argv=None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="the lease's regret JSON and fit_numpyro_fixed JSONL")
    p.add_argument("--probe", required=True, help="bench/gpu_launch_probe.py's output there")
    args = p.parse_args(argv)
    runs, figures = gpu_runs(args.files)
    if figures is None:
        raise SystemExit("no regret JSON with the lease's machine_figures among the files")
    machine = lease_machine(figures)
    rows = design(runs, machine)
    launch = machine.accelerator("gpu").launch_seconds
    share = kernel_share(args.probe, launch)
    c, i = fit(rows, share)
    print(f"GPU loop iteration {launch * 1e6:.1f} us (the lease's calibration), a kernel inside "
          f"one {share:.3f} of it (the probe); {len(rows)} warm runs")
    print(f"wall = modelled fixed + {c:.2f} s + batched leapfrogs x iteration x "
          f"({i:.1f} + {share:.3f} x kernels)")
    by_model: dict = {}
    for r in rows:
        fitted = r["fixed_modelled"] + c + r["batched"] * r["launch"] * (i + share * r["kernels"])
        by_model.setdefault((r["model"], r["source"]), []).append((r, fitted))
    print(f"{'model':14s} {'run':9s} {'kernels':>7s} {'runs':>4s} {'wall':>6s} "
          f"{'modelled':>8s} {'fit':>6s}  per leapfrog: modelled / fit / observed less fit's fixed")
    for (model, source), pairs in sorted(by_model.items(), key=lambda kv: kv[0]):
        r0 = pairs[0][0]
        wall = statistics.median(r["wall"] for r, _ in pairs)
        modelled = statistics.median(r["modelled"] for r, _ in pairs)
        fitted = statistics.median(f for _, f in pairs)
        observed = statistics.median((r["wall"] - r["fixed_modelled"] - c) / r["batched"]
                                     for r, _ in pairs)
        print(f"{model:14s} {source:9s} {r0['kernels']:7d} {len(pairs):4d} {wall:6.2f} "
              f"{modelled:8.2f} {fitted:6.2f}  {r0['leapfrog_modelled'] * 1e6:6.0f} / "
              f"{r0['launch'] * (i + share * r0['kernels']) * 1e6:4.0f} / {observed * 1e6:4.0f} us")


if __name__ == "__main__":
    main()
