"""NumPyro's float32 against its float64 on the CPU: measured mode's compiled-loop timing of the
gradient (``_measure.time_jax_sampler_gradient``) beside the sampler's own warm walls.

Measured mode prices a float32 JAX candidate on the CPU from its float64 timing, because a
float32 gradient timed alone did not show the sampler's float32 gain. This tool times the loop
in both precisions, ``--repeats`` times each, alternating, on fresh models, and prints the
median float64/float32 ratio of the loop beside the ratio of the warm median walls in a regret
results file (``--regret``), where the two NumPyro rows ran side by side.

    JAX_PLATFORMS=cpu python bench/float32_loop.py --models seed_small,seed_mid,glm_poisson,glm_linear --regret docs/results/regret-cpu-1000-2026-11-27-repeats7.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

F64 = "numpyro[cpu,float64,chain_method=parallel]"
F32 = "numpyro[cpu,float32,chain_method=parallel]"


def sampler_ratios(path: str | None) -> dict[str, float]:
    """Model -> float64/float32 warm median wall of NumPyro's two rows in a regret file."""
    if path is None:
        return {}
    out = {}
    for m in json.loads(Path(path).read_text())["models"]:
        rows = {r["candidate"]: r for r in m["rows"]}
        if F64 in rows and F32 in rows and rows[F32].get("warm_median_wall"):
            out[m["model"]] = rows[F64]["warm_median_wall"] / rows[F32]["warm_median_wall"]
    return out


def loop_seconds(factory, precision: str, chains: int, budget: float) -> float | None:
    """Seconds per gradient in measured mode's compiled loop, on a fresh model."""
    from pymc_accel.backends import _measure

    timed = _measure.time_jax_sampler_gradient(factory(), precision, chains, budget)
    return None if timed is None else timed[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seed_small,seed_mid,glm_poisson,glm_linear")
    p.add_argument("--regret", default=None, help="a bench_regret.py results file to compare")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--budget", type=float, default=3.0, help="seconds for each timing")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    from zoo import zoo

    models, walls = zoo(quick=True), sampler_ratios(args.regret)
    print("| model | loop float64 (µs/grad) | loop float32 (µs/grad) | loop f64/f32 | "
          "sampler's warm wall f64/f32 |\n|---|---|---|---|---|")
    for name in args.models.split(","):
        times = {"float64": [], "float32": []}
        for _ in range(args.repeats):
            for precision in times:
                seconds = loop_seconds(models[name], precision, args.chains, args.budget)
                if seconds is not None:
                    times[precision].append(seconds)
        if not all(times.values()):
            print(f"| {name} | unresolved | | | |")
            continue
        f64, f32 = (statistics.median(times[k]) for k in ("float64", "float32"))
        wall = f"{walls[name]:.2f}" if name in walls else "–"
        print(f"| {name} | {f64 * 1e6:.1f} | {f32 * 1e6:.1f} | {f64 / f32:.2f} | {wall} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
