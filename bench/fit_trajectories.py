"""Leapfrogs per draw and effective draws per gradient of each NUTS implementation: the data
``pymc_accel.costmodel.NUTS_TRAJECTORY_SCALE`` was fitted to.

For each zoo model (quick sizes), candidate and seed it samples ``--draws`` tune + ``--draws``
draws with 2 chains and prints one JSON line: wall time, minimum bulk ESS and the variable
that has it, mean leapfrogs per kept draw (``n_steps``), the mean step size, and the effective
draws per gradient of the kept draws (minimum bulk ESS ÷ kept draws' leapfrogs). Leapfrogs and
ESS are the seed's, not the machine's: they repeat exactly; the wall time does not.

    JAX_PLATFORMS=cpu python bench/fit_trajectories.py --seeds 2 \\
        > docs/results/fit-trajectories-cpu.jsonl
    python bench/fit_trajectories.py --summarise docs/results/fit-trajectories-cpu.jsonl

``--summarise`` prints, per model and adaptation, the ratios to nutpie of leapfrogs per draw
and of effective draws per gradient (geometric means over seeds), and their geometric means
over the models (the funnel left out: its ESS per run is below 100 for every sampler, and one
seed's trees differ 2x from the next's).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

DEFAULT_CANDIDATES = ("numba[cpu,float64,driver=nutpie],numba[cpu,float64,driver=pymc],"
                      "numpyro[cpu,float64,chain_method=parallel]")


def trajectory_row(idata, draws: int, chains: int) -> dict:
    """Minimum bulk ESS (and where), leapfrogs per kept draw, step size, ESS per gradient."""
    import arviz as az

    ess = az.ess(idata.posterior.to_dataset(), method="bulk")
    smallest = {v: float(ess[v].min()) for v in ess.data_vars}
    worst = min(smallest, key=smallest.get)
    stats = idata.sample_stats
    steps = float(stats["n_steps"].mean()) if "n_steps" in stats else None
    return {
        "ess": round(smallest[worst], 1), "worst": worst,
        "leapfrogs_per_draw": round(steps, 2) if steps else None,
        "step_size": round(float(stats["step_size"].mean()), 4) if "step_size" in stats else None,
        "ess_per_gradient": (smallest[worst] / (steps * draws * chains)) if steps else None,
    }


def _adaptation(label: str) -> str:
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend

    if label.startswith("numba"):
        return "pymc" if "driver=pymc" in label else "nutpie"
    return "nutpie" if label.startswith("nutpie") else JaxNutsBackend.adaptation


def summarise(lines: list[dict], left_out: tuple[str, ...] = ("funnel",)) -> dict:
    """Per adaptation: ``{model: (leapfrog ratio, ESS-per-gradient ratio)}`` against nutpie,
    and ``"geomean"``: both ratios' geometric means over the models not ``left_out``."""
    from collections import defaultdict

    def geomean(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    steps, per_gradient = defaultdict(list), defaultdict(list)
    for line in lines:
        if line.get("leapfrogs_per_draw"):
            key = (line["model"], _adaptation(line["candidate"]))
            steps[key].append(line["leapfrogs_per_draw"])
            per_gradient[key].append(line["ess_per_gradient"])
    out: dict = {}
    for model, adaptation in sorted(steps):
        if adaptation == "nutpie" or (model, "nutpie") not in steps:
            continue
        out.setdefault(adaptation, {})[model] = (
            geomean(steps[model, adaptation]) / geomean(steps[model, "nutpie"]),
            geomean(per_gradient[model, adaptation]) / geomean(per_gradient[model, "nutpie"]))
    for ratios in out.values():
        kept = [v for m, v in ratios.items() if m not in left_out]
        ratios["geomean"] = (geomean([a for a, _ in kept]), geomean([b for _, b in kept]))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="eight_schools,glm_linear,glm_poisson,funnel,pk_scan,"
                   "seed_small,seed_mid,seed_large,gp_200")
    p.add_argument("--candidates", default=DEFAULT_CANDIDATES,
                   help="comma-separated candidate labels, as the selection report writes them")
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--skip", default="gp_200:numpyro",
                   help="model:backend pairs not run (NumPyro takes minutes on the GP)")
    p.add_argument("--summarise", metavar="JSONL", help="summarise a file this script wrote")
    args = p.parse_args(argv)
    if args.summarise:
        lines = [json.loads(x) for x in Path(args.summarise).read_text().splitlines() if x]
        for adaptation, ratios in summarise(lines).items():
            for model, (leapfrogs, per_gradient) in ratios.items():
                print(f"{adaptation:6s} {model:14s} leapfrogs per draw x {leapfrogs:.2f}, "
                      f"ESS per gradient x {per_gradient:.2f} against nutpie")
        return

    import zoo
    from fit_tuning import _split_labels

    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.devices import discover
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry

    registry = get_registry()
    skip = {tuple(pair.split(":")) for pair in args.skip.split(",") if pair}
    request = SampleRequest(draws=args.draws, tune=args.draws, chains=2, cores=2, random_seed=1,
                            progressbar=False, quiet=True, compute_convergence_checks=False)
    factories = zoo.fit_models() | zoo.held_out()
    for name in args.models.split(","):
        offered = {}
        for backend in registry.backends.values():
            for c in backend.candidates(profile_model(factories[name]()), discover()):
                if isinstance(c, Candidate):
                    offered[c.label] = c
        for label in _split_labels(args.candidates):
            candidate = offered.get(label)
            if candidate is None or (name, label.split("[")[0]) in skip:
                continue
            backend = registry.backends[candidate.backend]
            for seed in range(1, args.seeds + 1):
                start = time.perf_counter()
                idata = backend.sample(factories[name](), candidate,
                                       replace(request, random_seed=seed))
                wall = time.perf_counter() - start
                row = {"model": name, "candidate": label, "seed": seed, "draws": args.draws,
                       "wall": round(wall, 2), **trajectory_row(idata, args.draws, 2)}
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
