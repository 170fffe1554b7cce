"""The JAX samplers' runs with BLAS left at a thread per core against one BLAS thread a chain.

Each candidate runs each model twice per seed, in one process, side by side: with
``blas_cores=None`` (BLAS left as it is: what the JAX backends did until 2026-11-29) and with
the default ``blas_cores="auto"`` (:func:`pymc_accel.backends.blas_threads.limit_blas`: the
cores shared among the chains running at once). Every run is on a fresh model, after one
warm-up run of each setting (compiles in JAX's and PyTensor's caches). Wall time, min bulk ESS
and ESS/s per run; medians and the ratio of the medians as a Markdown table:

    JAX_PLATFORMS=cpu python bench/bench_blas_threads.py --models gp_200,lkj_20,glm_poisson

The draws of one seed differ between the settings where LAPACK's results do (the summation
order of a threaded call), so ESS is reported with the walls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SETTINGS = {"a thread per core": None, "one a chain": "auto"}


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="gp_200,lkj_20,glm_poisson")
    p.add_argument("--candidates", default="numpyro:float64,numpyro:float32",
                   help="backend:precision, comma-separated")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--out", help="JSON lines, one a run")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error("--seeds must be at least 1")
    return args


def main(argv=None) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    import pymc_accel  # noqa: F401  (JAX's CPU devices asked for before JAX starts)
    from bench_regret import min_bulk_ess
    from zoo import named
    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.registry import get_registry

    args = _parse(argv)
    factories = named()
    registry = get_registry()
    lines, table = [], []
    for name in args.models.split(","):
        for spec in args.candidates.split(","):
            backend_name, precision = spec.split(":")
            backend = registry.backends[backend_name]
            candidate = Candidate(backend_name, "cpu", precision,
                                  (("chain_method", "parallel"),))
            walls: dict[str, list[float]] = {s: [] for s in SETTINGS}
            ess: dict[str, list[float]] = {s: [] for s in SETTINGS}
            for seed in range(0, args.seeds + 1):  # seed 0: the warm-up, not reported
                for setting, blas_cores in SETTINGS.items():
                    request = SampleRequest(draws=args.draws, tune=args.tune,
                                            chains=args.chains, random_seed=seed,
                                            progressbar=False,
                                            pymc_kwargs={"blas_cores": blas_cores})
                    model = factories[name]()
                    began = time.perf_counter()
                    idata = backend.sample(model, candidate, request)
                    wall = time.perf_counter() - began
                    e = min_bulk_ess(idata)
                    print(f"{name} {spec} {setting} seed {seed}: {wall:.1f} s, "
                          f"min ESS {e:.0f}", flush=True)
                    if seed == 0:
                        continue
                    walls[setting].append(wall)
                    ess[setting].append(e)
                    lines.append({"model": name, "candidate": spec, "setting": setting,
                                  "seed": seed, "wall": wall, "ess": e})
            med = {s: (statistics.median(walls[s]), statistics.median(ess[s])) for s in SETTINGS}
            table.append((name, spec, med))
    if args.out:
        Path(args.out).write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(f"\nCommand: `python bench/bench_blas_threads.py {' '.join(argv or sys.argv[1:])}`\n")
    print("| model | candidate | wall, a BLAS thread per core (s) | wall, one a chain (s) | "
          "wall ratio | min ESS, per core / one a chain | ESS/s ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, spec, med in table:
        (w0, e0), (w1, e1) = med["a thread per core"], med["one a chain"]
        print(f"| {name} | {spec} | {w0:.1f} | {w1:.1f} | {w0 / w1:.2f} | {e0:.0f} / {e1:.0f} "
              f"| {(e1 / w1) / (e0 / w0):.2f} |")


if __name__ == "__main__":
    main()
