"""The JAX NUTS backends with the sampler's position as one flat array, against PyMC's one
array per value variable (:mod:`pymc_accel.backends.flat_position`), side by side.

For each model, ``--repeats`` pairs of runs of ``pymc_accel.sample(nuts_sampler=BACKEND)``
(2 chains, ``--draws`` tune + ``--draws`` draws; seed 1, 2, ... a pair, the same for both
layouts, as NUTS's trees on one seed can differ by a third between the two programs' roundings
on eight schools), the two layouts alternating,
each run in a fresh process (what a script pays: XLA compiles the whole sampler on every run,
and the JAX compilation cache is left off). Timed: the ``sample`` call, selection and start
check included, and the min bulk ESS of its draws. One JSON line per run; ``--markdown``
prints the medians and the ratios.

    JAX_PLATFORMS=cpu python bench/bench_flat_position.py --out docs/results/flat-position-cpu.jsonl
    python bench/bench_flat_position.py --markdown docs/results/flat-position-cpu.jsonl
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

sys.path.insert(0, str(Path(__file__).parent))

DEFAULT_MODELS = ("eight_schools,funnel,glm_linear,glm_poisson,pk_scan,seed_small,seed_mid,"
                  "varying_intercept,scalars_30,vector_30,terms_30,scalars_60")


def one_run(name: str, layout: str, backend: str, draws: int, seed: int) -> dict:
    """Sample ``name`` once with ``layout`` ("flat" or "per_variable") in this process."""
    import contextlib

    import pymc_accel
    from bench_regret import min_bulk_ess
    from pymc_accel.backends import flat_position
    from zoo import fit_models, value_variable_shapes

    if layout == "per_variable":  # PyMC's own layout: the context swaps nothing
        flat_position.flat_position = lambda jax_sampler: contextlib.nullcontext(False)
    model = (fit_models() | value_variable_shapes())[name]()
    start = time.perf_counter()
    idata = pymc_accel.sample(model=model, nuts_sampler=backend, draws=draws, tune=draws,
                              chains=2, random_seed=seed, progressbar=False,
                              compute_convergence_checks=False)
    wall = time.perf_counter() - start
    steps = float(idata.sample_stats["n_steps"].mean())
    return {"model": name, "layout": layout, "backend": backend, "draws": draws, "seed": seed,
            "value_variables": len(model.value_vars), "wall": wall, "ess": min_bulk_ess(idata),
            "leapfrogs_per_draw": steps}


def markdown(path: str) -> str:
    """Median wall and ESS/s per (model, layout), and flat's ratios over per-variable."""
    runs = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    models = list(dict.fromkeys(r["model"] for r in runs))
    lines = ["| model | value variables | per variable: median wall (s) [runs] | flat: median "
             "wall (s) [runs] | wall, per variable ÷ flat | ESS/s, flat ÷ per variable | "
             "leapfrogs a draw (per variable, flat) |", "|---|---|---|---|---|---|---|"]
    for name in models:
        by = {lay: [r for r in runs if r["model"] == name and r["layout"] == lay]
              for lay in ("per_variable", "flat")}
        if not all(by.values()):
            continue
        wall = {k: statistics.median(r["wall"] for r in v) for k, v in by.items()}
        rate = {k: statistics.median(r["ess"] / r["wall"] for r in v) for k, v in by.items()}
        steps = {k: statistics.median(r["leapfrogs_per_draw"] for r in v) for k, v in by.items()}
        spread = {k: ", ".join(f"{r['wall']:.1f}" for r in v) for k, v in by.items()}
        lines.append(
            f"| {name} | {by['flat'][0]['value_variables']} | {wall['per_variable']:.1f} "
            f"[{spread['per_variable']}] | {wall['flat']:.1f} [{spread['flat']}] | "
            f"**{wall['per_variable'] / wall['flat']:.2f}** | "
            f"{rate['flat'] / rate['per_variable']:.2f} | "
            f"{steps['per_variable']:.1f}, {steps['flat']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--backend", default="numpyro")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None, help="append the runs' JSON lines here")
    p.add_argument("--markdown", default=None, help="print the table of this JSON-lines file")
    p.add_argument("--one", nargs=4, metavar=("MODEL", "LAYOUT", "DRAWS", "SEED"),
                   help=argparse.SUPPRESS)  # a single run, in the process the driver started
    args = p.parse_args(argv)
    if args.markdown:
        print(markdown(args.markdown))
        return
    if args.one:
        name, layout, draws, seed = args.one
        print(json.dumps(one_run(name, layout, args.backend, int(draws), int(seed))))
        return
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    env.setdefault("JAX_PLATFORMS", "cpu")
    for name in args.models.split(","):
        for rep in range(args.repeats):
            layouts = ("per_variable", "flat") if rep % 2 == 0 else ("flat", "per_variable")
            for layout in layouts:
                out = subprocess.run(
                    [sys.executable, __file__, "--backend", args.backend, "--one", name, layout,
                     str(args.draws), str(rep + 1)], capture_output=True, text=True, env=env)
                if out.returncode:
                    print(f"{name} {layout} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
                    continue
                line = out.stdout.strip().splitlines()[-1]
                print(line, flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(line + "\n")


if __name__ == "__main__":
    main()
