"""What a model pays the first time it is compiled on a machine: the data the cost model's
cold-compile seconds were fitted to (``pymc_accel.costmodel.cold_compile_seconds``).

PyTensor keeps the numba kernels it compiles in a disk cache (``base_compiledir``), so a
model's second run loads what its first compiled; the cost model's fixed costs are those of
such cached runs. A user who changes a model meets an empty cache for the kernels that changed.
Here each candidate runs in a new process with an empty PyTensor compile directory:
``fit_tuning.py --lengths 10,10`` on a primer model (it pays the sampler's first use in the
process and compiles the kernels every model shares) and then on the target model twice. The
target's first run less its second is its cold compile. JAX keeps no compile cache on disk
(PyMC does not turn on JAX's persistent cache), so NumPyro's runs are not cold after a primer;
it is timed as a check.

    JAX_PLATFORMS=cpu python bench/fit_cold_compile.py > docs/results/fit-cold-compile-cpu.jsonl
    python bench/fit_cold_compile.py --summarise docs/results/fit-cold-compile-cpu.jsonl
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from fit_tuning import _split_labels, fit_arguments, run_in_new_process  # noqa: E402

CANDIDATES = ("numba[cpu,float64,driver=nutpie]", "numba[cpu,float64,driver=pymc]",
              "numpyro[cpu,float64,chain_method=parallel]")
MODELS = "eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid"


def primer_for(model: str) -> str:
    """The model run first to pay the first use and compile what every model shares: the
    funnel, or eight schools for the funnel itself."""
    return "eight_schools" if model == "funnel" else "funnel"


def run(models: list[str], candidates: list[str], repeats: int) -> None:
    """For every model and candidate, a new process with an empty PyTensor compile directory:
    primer, target, target. Prints one JSON line per run."""
    for repeat in range(repeats):
        for model in models:
            primer = primer_for(model)
            for candidate in candidates:
                with tempfile.TemporaryDirectory(prefix="pymc-accel-cold-") as compiledir:
                    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={compiledir}")
                    run_in_new_process(f"{primer},{model}", candidate,
                                       {"target": model, "repeat": repeat}, env=env)


def cold_seconds(rows: list[dict]) -> dict[tuple[str, str], list[float]]:
    """Per (target model, candidate): the target's first run less its second, per repeat."""
    runs: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        if "wall" in r and r["model"] == r["target"]:
            runs[(r["target"], r["candidate"], r["repeat"])].append(r["wall"])
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (model, candidate, _), walls in runs.items():
        if len(walls) >= 2:
            out[(model, candidate)].append(walls[0] - walls[1])
    return out


def summarise(path: str) -> None:
    """The cold compile of each model and candidate, with the model's kernels, and least
    squares fits of ``b * kernels`` and ``a + b * kernels`` per candidate."""
    import numpy as np

    import zoo

    from pymc_accel.profile import profile_model

    rows = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    cold = cold_seconds(rows)
    quick = zoo.zoo(quick=True)
    kernels = {m: profile_model(quick[m]()).census.kernels for m, _ in cold}
    print("| model | kernels | candidate | cold compile (first run less second), median [runs] |")
    print("|---|---|---|---|")
    for (model, candidate), seconds in sorted(cold.items()):
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"| {model} | {kernels[model]} | {candidate} | "
              f"{statistics.median(seconds):.2f} s [{runs}] |")
    for candidate in sorted({c for _, c in cold}):
        points = [(kernels[m], statistics.median(s)) for (m, c), s in cold.items() if c == candidate]
        k = np.array([p[0] for p in points], float)
        y = np.array([p[1] for p in points])
        a, b = np.linalg.lstsq(np.c_[np.ones_like(k), k], y, rcond=None)[0]
        through_zero = float(k @ y / (k @ k))  # no kernels, nothing to compile
        spread = y / (through_zero * k)
        print(f"\n{candidate}: cold compile = {through_zero * 1e3:.1f} ms per kernel "
              f"(each model at {spread.min():.2f}x to {spread.max():.2f}x of it); "
              f"with an intercept {a:.2f} s + {b * 1e3:.1f} ms per kernel")


def main(argv=None) -> None:
    p = fit_arguments(__doc__, MODELS, repeats=1)
    p.add_argument("--candidates", default=",".join(CANDIDATES))
    args = p.parse_args(argv)
    if args.summarise:
        summarise(args.summarise)
        return
    run(args.models.split(","), _split_labels(args.candidates), args.repeats)


if __name__ == "__main__":
    main()
