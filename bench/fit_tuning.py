"""Leapfrogs and wall time of sampler candidates, tuning included: the data the cost model's
per-leapfrog driver costs, PyMC's early-tuning gradients and the fixed costs were fitted to
(``pymc_accel.costmodel``: ``NUMBA_NUTPIE``, ``NUMBA_PYMC``, ``JAX_CPU``,
``pymc_tuning_extra_gradients``).

For each zoo model, candidate and run length ``n`` (``n`` tune + ``n`` draws, 2 chains, seed 1)
it samples and prints one JSON line per run: wall time and leapfrogs per chain (tuning
included where the sampler keeps its tuning draws' statistics; NumPyro's do not, and its lines
say ``"tuning_counted": false``). Two lengths separate a candidate's fixed cost from its cost
per leapfrog; very short runs (``--lengths 10,10,10``) time the fixed cost alone; the first run
of a model is cold.

    JAX_PLATFORMS=cpu python bench/fit_tuning.py --models seed_large --lengths 100,800
    JAX_PLATFORMS=cpu python bench/fit_tuning.py --lengths 10,10,10 \
        --candidates "numpyro[cpu,float64,chain_method=parallel],nutpie_jax[cpu,float64]"
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _models() -> dict:
    """The models a fitting run can name: every model of ``zoo.named()`` (the quick zoo, its
    shapes, the program-size, series-function and held-out models)."""
    import zoo

    return zoo.named()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="eight_schools,glm_poisson,seed_small,seed_mid,seed_large")
    p.add_argument("--lengths", default="100,400", help="comma-separated n (n tune + n draws)")
    p.add_argument("--candidates",
                   default="numba[cpu,float64,driver=nutpie],numba[cpu,float64,driver=pymc]",
                   help="comma-separated candidate labels, as the selection report writes them")
    args = p.parse_args(argv)

    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.devices import discover
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry

    registry = get_registry()
    wanted = _split_labels(args.candidates)
    for name in args.models.split(","):
        offered = {}
        for backend in registry.backends.values():
            for c in backend.candidates(profile_model(_models()[name]()), discover()):
                if isinstance(c, Candidate):
                    offered[c.label] = c
        for label in wanted:
            if label not in offered:
                print(json.dumps({"model": name, "candidate": label, "skipped": "not offered"}))
                continue
            candidate = offered[label]
            backend = registry.backends[candidate.backend]
            for n in map(int, args.lengths.split(",")):
                request = SampleRequest(draws=n, tune=n, chains=2, cores=2, random_seed=1,
                                        progressbar=False, quiet=True,
                                        compute_convergence_checks=False,
                                        discard_tuned_samples=False)
                model = _models()[name]()
                start = time.perf_counter()
                idata = backend.sample(model, candidate, request)
                wall = time.perf_counter() - start
                tuned = "warmup_sample_stats" in idata
                leapfrogs = float(idata.sample_stats["n_steps"].sum()) / request.chains
                if tuned:
                    leapfrogs += float(idata.warmup_sample_stats["n_steps"].sum()) / request.chains
                print(json.dumps({"model": name, "candidate": candidate.label, "n": n,
                                  "wall": round(wall, 2), "leapfrogs_per_chain": leapfrogs,
                                  "tuning_counted": tuned}),
                      flush=True)


def run_in_new_process(models: str, candidates: str, tags: dict, env: dict | None = None) -> None:
    """Run this script (``--lengths 10,10``) in a new Python process and print its JSON lines,
    each tagged with ``tags`` and its position in the process; an error line if it failed.
    For the benchmarks that time what a new process pays (``fit_first_use.py``,
    ``fit_cold_compile.py``)."""
    import subprocess

    cmd = [sys.executable, __file__, "--models", models, "--lengths", "10,10",
           "--candidates", candidates]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    position = 0
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line) | tags | {"position": position}
        position += 1
        print(json.dumps(row), flush=True)
    if out.returncode:
        print(json.dumps(tags | {"candidate": candidates, "error": out.stderr[-500:]}),
              flush=True)


def fit_arguments(doc: str, models: str, repeats: int) -> argparse.ArgumentParser:
    """The command line the fitting scripts share: ``--models``, ``--repeats`` and
    ``--summarise JSONL`` (summarise a recorded run instead of running)."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=models)
    p.add_argument("--repeats", type=int, default=repeats)
    p.add_argument("--summarise", metavar="JSONL", help="summarise a recorded run instead")
    return p


def _split_labels(text: str) -> list[str]:
    """Split a comma-separated list of candidate labels, whose brackets hold commas too."""
    labels, depth, current = [], 0, ""
    for ch in text:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            labels.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        labels.append(current.strip())
    return labels


if __name__ == "__main__":
    main()
