"""One chain beside two: whether a sampler's chains run side by side on this machine's cores.

A backend's estimate says how many chains run at once on a CPU (``chain_parallelism``); two
chains that take turns take twice one chain's wall time, and two that run side by side about
as long as one. For each model and backend, runs of one and of two chains alternate (the same
draws and seed, ``cores=2``, a model built afresh each run, the run history off), and the first
of each is left out as the process's compile. Printed as Markdown: the median walls and their
ratio, with the gradients a chain's draws took:

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/time_chains_side_by_side.py \\
        --models eight_schools,seed_mid,sparse_gp_3 --backends nutpie_jax,numpyro
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="eight_schools,seed_mid,sparse_gp_3")
    p.add_argument("--backends", default="nutpie_jax")
    p.add_argument("--draws", type=int, default=300)
    p.add_argument("--tune", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3, help="warm runs of each chain count")
    p.add_argument("--pymc-kwargs", default="{}",
                   help='pm.sample arguments as JSON, e.g. \'{"mp_ctx": "forkserver"}\'')
    args = p.parse_args(argv)
    args.pymc_kwargs = json.loads(args.pymc_kwargs)
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    return args


def _gradients_per_chain(idata) -> float:
    """Gradients a chain's kept draws took (``n_steps``, else ``2**tree_depth - 1``)."""
    stats = idata.sample_stats
    if "n_steps" in stats:
        total = float(stats["n_steps"].sum())
    elif "tree_depth" in stats:
        total = float((2 ** stats["tree_depth"] - 1).sum())
    else:
        return float("nan")
    return total / stats.sizes["chain"]


def main(argv=None) -> str:
    """Time the runs; return the Markdown table."""
    args = _parse(argv)
    os.environ.setdefault("PYMC_ACCEL_HISTORY", "off")
    warnings.filterwarnings("ignore")
    from compare_evaluator import models as every_model

    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.registry import get_registry

    models, registry = every_model(), get_registry()
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"Command: `JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python "
             f"bench/time_chains_side_by_side.py {command}`", "",
             "| model | backend | one chain (s) | two chains (s) | two ÷ one | "
             "gradients a chain's draws took |", "|---|---|---|---|---|---|"]
    for name in args.models.split(","):
        for backend_name in args.backends.split(","):
            backend = registry.backends[backend_name]
            candidate = Candidate(backend_name, "cpu", "float64")
            walls: dict[int, list[float]] = {1: [], 2: []}
            gradients = []
            for repeat in range(args.repeats + 1):  # the first of each: the process's compile
                for chains in (1, 2) if repeat % 2 == 0 else (2, 1):
                    request = SampleRequest(draws=args.draws, tune=args.tune, chains=chains,
                                            cores=2, random_seed=1, progressbar=False,
                                            quiet=True, compute_convergence_checks=False,
                                            pymc_kwargs=dict(args.pymc_kwargs))
                    model = models[name]()
                    start = time.perf_counter()
                    idata = backend.sample(model, candidate, request)
                    wall = time.perf_counter() - start
                    if repeat:
                        walls[chains].append(wall)
                        gradients.append(_gradients_per_chain(idata))
            one, two = statistics.median(walls[1]), statistics.median(walls[2])
            lines.append(f"| {name} | {backend_name} | {one:.2f} | {two:.2f} | {two / one:.2f} "
                         f"| {statistics.median(gradients):.0f} |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines) + (
        f"\n\n{args.tune} tune + {args.draws} draws, seed 1, cores=2; medians of "
        f"{args.repeats} warm runs of each.\n")


if __name__ == "__main__":
    print(main())
