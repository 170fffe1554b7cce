"""What a sampler pays the first time it runs in a Python process: the data the cost model's
first-use costs were fitted to (``pymc_accel.first_use.FIRST_USE_SECONDS``).

A user who runs a script starts a new process every time, with PyTensor's on-disk compile cache
already warm from earlier runs. The warm fixed costs of ``fit_tuning.py`` are a model's second
run in one process; this runs scenarios of ``fit_tuning.py`` (short runs of 10 tune + 10 draws,
2 chains) in fresh processes, several times each, and prints one JSON line per run tagged with
its scenario, repeat and position in the process. The first run of a sampler in a process, less
its later runs of the same model, is the sampler's first use; a second model in the same
process shows what a new model structure costs beyond it.

    JAX_PLATFORMS=cpu python bench/fit_first_use.py --repeats 3 > docs/results/fit-first-use-cpu.jsonl
    python bench/fit_first_use.py --summarise docs/results/fit-first-use-cpu.jsonl

Run it once before the measured repeats (or discard the first repeat) so the disk caches are warm.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from fit_tuning import run_in_new_process  # noqa: E402

NUTPIE = "numba[cpu,float64,driver=nutpie]"
PYMC = "numba[cpu,float64,driver=pymc]"
NUMPYRO = "numpyro[cpu,float64,chain_method=parallel]"
NUTPIE_JAX = "nutpie_jax[cpu,float64]"
BLACKJAX = "blackjax_nuts[cpu,float64,chain_method=parallel]"  # the plugin

#: name -> (models, candidates): each runs ``fit_tuning.py --lengths 10,10`` in a new process,
#: model by model, every candidate twice.
SCENARIOS = {
    "nutpie": ("eight_schools,glm_poisson", [NUTPIE]),
    "pymc": ("eight_schools,glm_poisson", [PYMC]),
    "pymc-then-nutpie": ("eight_schools", [PYMC, NUTPIE]),
    "numpyro": ("eight_schools,glm_poisson", [NUMPYRO]),
    "numpyro-then-nutpie_jax": ("eight_schools", [NUMPYRO, NUTPIE_JAX]),
    "nutpie_jax": ("eight_schools", [NUTPIE_JAX]),
    "blackjax": ("eight_schools,glm_poisson", [BLACKJAX]),
}


def run(scenarios: list[str], repeats: int) -> None:
    """Run each scenario ``repeats`` times in fresh processes; print tagged JSON lines."""
    for repeat in range(repeats):
        for name in scenarios:
            models, candidates = SCENARIOS[name]
            run_in_new_process(models, ",".join(candidates),
                               {"scenario": name, "repeat": repeat})


def summarise(path: str) -> None:
    """Per scenario and candidate: the first run in the process, later runs of the same model,
    the first run of the next model, as medians over the repeats."""
    rows = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    table: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        if "wall" not in r:
            continue
        first_of_candidate = not any(
            o["scenario"] == r["scenario"] and o["repeat"] == r["repeat"]
            and o["candidate"] == r["candidate"] and o["position"] < r["position"]
            for o in rows if "wall" in o)
        seen_model = any(
            o["scenario"] == r["scenario"] and o["repeat"] == r["repeat"]
            and o["candidate"] == r["candidate"] and o["model"] == r["model"]
            and o["position"] < r["position"] for o in rows if "wall" in o)
        kind = ("first in process" if first_of_candidate
                else "same model again" if seen_model else "new model")
        table[(r["scenario"], r["candidate"], r["model"], kind)].append(r["wall"])
    print("| scenario | candidate | model | run | wall (s), median [runs] |")
    print("|---|---|---|---|---|")
    for (scenario, candidate, model, kind), walls in table.items():
        runs = ", ".join(f"{w:.2f}" for w in walls)
        print(f"| {scenario} | {candidate} | {model} | {kind} | "
              f"{statistics.median(walls):.2f} [{runs}] |")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scenarios", default=",".join(SCENARIOS))
    p.add_argument("--summarise", metavar="JSONL", help="summarise a recorded run instead")
    args = p.parse_args(argv)
    if args.summarise:
        summarise(args.summarise)
    else:
        run(args.scenarios.split(","), args.repeats)


if __name__ == "__main__":
    main()
