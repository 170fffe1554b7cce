"""NumPyro's fixed cost and cost per leapfrog on the CPU, from ``fit_tuning.py`` runs at two
lengths, against what the cost model gives (``pymc_accel.costmodel.JAX_CPU_SAMPLER``).

NumPyro compiles its whole sampler with XLA, so a run's wall time is a fixed cost (tracing and
compiling the sampler) plus its leapfrogs. Two run lengths of the same model separate them:
the longer run less the shorter, over the leapfrogs between them, is the cost of a leapfrog of
two chains side by side (NumPyro keeps no statistics of its tuning draws, so tuning is counted at
the sampling phase's leapfrogs per draw). The shorter run less its leapfrogs is the fixed cost,
fitted by least squares to ``a + b * kernels`` over the models.

Each length's fastest repeat is used: a model's first run in a process also traces a new model
structure (0.3 to 0.9 s more, ``docs/benchmarks.md``, "A script's run").

    python bench/fit_numpyro_loop.py docs/results/fit-numpyro-loop-cpu.jsonl \\
        docs/results/fit-jax-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def per_leapfrog(rows: list[dict]) -> dict | None:
    """Fixed seconds and seconds per leapfrog (both chains side by side) of one model and
    candidate, from its shortest and longest run lengths; ``None`` with one length only."""
    by_n: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        by_n[row["n"]].append(row)
    if len(by_n) < 2:
        return None
    short, long = min(by_n), max(by_n)

    def fastest(n: int) -> tuple[float, float]:
        row = min(by_n[n], key=lambda r: r["wall"])
        # leapfrogs per chain of the whole run: tuning at the sampling phase's trees
        return row["wall"], row["leapfrogs_per_chain"] * 2.0

    wall_s, frogs_s = fastest(short)
    wall_l, frogs_l = fastest(long)
    step = max(0.0, (wall_l - wall_s) / max(1.0, frogs_l - frogs_s))
    return {"short": short, "long": long, "wall_short": wall_s, "wall_long": wall_l,
            "seconds_per_leapfrog": step, "fixed": wall_s - step * frogs_s,
            "leapfrogs_long": frogs_l}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--candidate-prefix", default="numpyro[cpu,")
    args = p.parse_args(argv)

    import numpy as np
    import zoo

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for path in args.files:
        for line in Path(path).read_text().splitlines():
            row = json.loads(line)
            if "wall" in row and row["candidate"].startswith(args.candidate_prefix):
                groups[(row["model"], row["candidate"])].append(row)

    machine = machine_figures()
    quick = zoo.zoo(quick=True)
    fits = []
    for (model, candidate), rows in sorted(groups.items()):
        fit = per_leapfrog(rows)
        if fit is None or model not in quick:
            continue
        profile = profile_model(quick[model]())
        precision = "float32" if "float32" in candidate else "float64"
        old = costmodel.cpu_gradient_seconds(profile, machine, precision, costmodel.JAX_CPU, 2)
        new = costmodel.cpu_gradient_seconds(profile, machine, precision,
                                             costmodel.JAX_CPU_SAMPLER, 2)
        fits.append(fit | {"model": model, "precision": precision,
                           "kernels": profile.census.kernels,
                           "modelled_jax_cpu": old.value, "modelled_sampler": new.value,
                           "fixed_modelled": costmodel.compile_seconds(
                               profile, costmodel.JAX_CPU_SAMPLER).value})
    print("| model | precision | kernels | fixed (fastest short run) | modelled fixed | "
          "per leapfrog, 2 chains | JAX_CPU (standalone jit) | JAX_CPU_SAMPLER |")
    print("|---|---|---|---|---|---|---|---|")
    for f in fits:
        print(f"| {f['model']} | {f['precision']} | {f['kernels']} | {f['fixed']:.2f} s | "
              f"{f['fixed_modelled']:.2f} s | {f['seconds_per_leapfrog'] * 1e6:.0f} µs | "
              f"{f['modelled_jax_cpu'] * 1e6:.0f} µs | {f['modelled_sampler'] * 1e6:.0f} µs |")
    kernels = np.array([f["kernels"] for f in fits], float)
    fixed = np.array([f["fixed"] for f in fits])
    a, b = np.linalg.lstsq(np.c_[np.ones_like(kernels), kernels], fixed, rcond=None)[0]
    print(f"\nfixed cost least squares: {a:.2f} s + {b * 1e3:.1f} ms per kernel "
          f"(JAX_CPU_SAMPLER: {costmodel.JAX_CPU_SAMPLER.compile_seconds:.2f} s + "
          f"{costmodel.JAX_CPU_SAMPLER.compile_seconds_per_kernel * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
