"""Fit NumPyro's float32 arithmetic rate on the CPU (``costmodel.JAX_CPU_SAMPLER``'s
``float32_flops_factor``) to the recorded regret runs: the warm median wall of NumPyro's
float64 over its float32, per model, against the ratio the cost model gives at each factor.

Nothing is sampled. For every model of ``docs/results/regret-cpu-*.json`` (bench_regret.py's
output) whose files ran NumPyro in both precisions, the model is built again from
``bench/zoo.py`` and profiled; each factor of the grid prices both candidates, with the
leapfrogs a draw each precision's warm runs took (so tree depths that differed by chance do
not count against the factor) and the modelled fixed seconds. Models are weighted equally
(the median over a model's files), and the error is the rms of log(estimated / observed).

    JAX_PLATFORMS=cpu python bench/fit_float32_compute.py [--out FILE.jsonl] [--transcendental]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import glob
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

GRID = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0)


def _warm_leapfrogs(row: dict) -> float | None:
    """Median leapfrogs a draw over a row's warm runs (every run after its first)."""
    seen = [r["leapfrogs_per_draw"] for r in row.get("runs", [])[1:]
            if r.get("leapfrogs_per_draw")]
    return statistics.median(seen) if seen else None


def recorded_pairs(paths: list[str]) -> dict[str, list[dict]]:
    """Per model, one entry per file that ran both precisions warm: walls, leapfrogs, run."""
    from float32_ratio import numpyro_pairs

    out: dict[str, list[dict]] = collections.defaultdict(list)
    for data, model, a, b in numpyro_pairs(paths):
        la, lb = _warm_leapfrogs(a), _warm_leapfrogs(b)
        if la and lb:
            out[model["model"]].append({
                "wall64": a["warm_median_wall"], "wall32": b["warm_median_wall"],
                "lf64": la, "lf32": lb,
                "steps": data["draws"] + data["tune"], "chains": data["chains"]})
    return out


def predicted_wall(estimate, leapfrogs: float, steps: int, chains: int) -> float:
    """The estimate's warm wall with the leapfrogs a draw a run took: fixed seconds plus
    sampling, no first use or first compile (the recorded warm runs paid neither)."""
    observed = dataclasses.replace(
        estimate, gradients_per_draw=dataclasses.replace(estimate.gradients_per_draw,
                                                         value=leapfrogs))
    return observed.fixed_seconds.value + observed.sampling_seconds(steps, chains)


def fit(pairs: dict[str, list[dict]], grid=GRID) -> dict:
    """Per factor of ``grid``: per model, median log(estimated ratio / observed ratio), and
    their rms over the models."""
    return fit_variants(pairs, {factor: {"float32_flops_factor": factor} for factor in grid})


def fit_variants(pairs: dict[str, list[dict]], variants: dict) -> dict:
    """Per variant (a key and the ``JAX_CPU_SAMPLER`` fields it replaces): per model, median
    log(estimated ratio / observed ratio), and their rms over the models."""
    from pymc_accel import costmodel
    from pymc_accel.backend import Candidate
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model
    from replay_regret import _factory

    machine, backend = machine_figures(), NumpyroBackend()
    candidates = {p: Candidate("numpyro", "cpu", p, (("chain_method", "parallel"),))
                  for p in ("float64", "float32")}
    profiles = {}
    for name in pairs:
        factory = _factory(name)
        if factory is not None:
            profiles[name] = profile_model(factory())
    original = costmodel.JAX_CPU_SAMPLER
    results = {}
    try:
        for key, fields in variants.items():
            costmodel.JAX_CPU_SAMPLER = dataclasses.replace(original, **fields)
            per_model = {}
            for name, entries in pairs.items():
                if name not in profiles:
                    continue
                est = {p: backend.estimate(c, profiles[name], machine)
                       for p, c in candidates.items()}
                errors = []
                for e in entries:
                    modelled = (predicted_wall(est["float64"], e["lf64"], e["steps"], e["chains"])
                                / predicted_wall(est["float32"], e["lf32"], e["steps"],
                                                 e["chains"]))
                    errors.append(math.log(modelled / (e["wall64"] / e["wall32"])))
                per_model[name] = statistics.median(errors)
            rms = math.sqrt(statistics.fmean(v * v for v in per_model.values()))
            results[key] = {"rms_log_error": rms, "per_model": per_model}
    finally:
        costmodel.JAX_CPU_SAMPLER = original
    return results


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=None, help="append one JSON line per factor here")
    p.add_argument("--transcendental", action="store_true",
                   help="grid the transcendental functions' float32 factor apart from the rest "
                        "of the arithmetic's, with and without float32's halved bytes")
    args = p.parse_args(argv)
    pairs = recorded_pairs(glob.glob("docs/results/regret-cpu-*.json"))
    if args.transcendental:
        variants = {(a, t, halved): {"float32_flops_factor": a,
                                     "float32_transcendental_factor": t,
                                     "float32_bytes_gain": halved}
                    for a in (0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5)
                    for t in (1.0, 1.3, 1.6, 2.0, 2.5, 3.0, 4.0) for halved in (True, False)}
        results = fit_variants(pairs, variants)
        for key, r in sorted(results.items(), key=lambda kv: kv[1]["rms_log_error"])[:10]:
            print("arithmetic %.1f, transcendental %.1f, bytes halved %s: rms %.3f"
                  % (*key, r["rms_log_error"]))
        from pymc_accel import costmodel

        sampler = costmodel.JAX_CPU_SAMPLER
        own = (sampler.float32_flops_factor,
               sampler.float32_transcendental_factor or sampler.float32_flops_factor,
               sampler.float32_bytes_gain)
        one = (sampler.float32_flops_factor, sampler.float32_flops_factor,
               sampler.float32_bytes_gain)
        for label, key in (("the cost model's", own), ("one factor for both", one)):
            if key in results:
                print("%s %s: rms %.3f" % (label, key, results[key]["rms_log_error"]))
        return
    results = fit(pairs)
    names = sorted(next(iter(results.values()))["per_model"], key=lambda n: -len(pairs[n]))
    print("factor  rms   " + " ".join(f"{n[:12]:>12}" for n in names))
    for factor, r in results.items():
        print(f"{factor:5.2f}  {r['rms_log_error']:.3f} "
              + " ".join(f"{math.exp(r['per_model'][n]):12.2f}" for n in names))
    print("(per model: estimated float64/float32 ratio over the observed one, median of files;"
          " files: " + ", ".join(f"{n} {len(pairs[n])}" for n in names) + ")")
    if args.out:
        with open(args.out, "a") as fh:
            for factor, r in results.items():
                fh.write(json.dumps({"factor": factor, **r,
                                     "files": {n: len(pairs[n]) for n in names}}) + "\n")


if __name__ == "__main__":
    main()
