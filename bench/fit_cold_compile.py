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

``--primer MODELS`` times a machine that has compiled other models instead of an empty one: the
primer models run once, in one process, into a compile directory that every target's process
then starts from a copy of (a user's machine that has run those models, meeting a new one):

    JAX_PLATFORMS=cpu python bench/fit_cold_compile.py --primer eight_schools,glm_linear,glm_poisson,funnel,seed_small,pk_scan \
        --models conjugate,many_scalars,logistic,student_t,varying_intercept,mixture,many_deterministics,ar1 \
        --candidates "numba[cpu,float64,driver=pymc]" > docs/results/fit-cold-compile-used-cpu.jsonl
    python bench/fit_cold_compile.py --fit-by-rank docs/results/fit-cold-compile-cpu.jsonl docs/results/fit-cold-compile-used-cpu.jsonl

``--compiled-nodes`` prints, for ``--models``, the census's kernels beside the nodes of the
function numba compiles (``costmodel.as_compiled_by``):

    JAX_PLATFORMS=cpu python bench/fit_cold_compile.py --compiled-nodes --models intervals_2,glm_poisson
"""

from __future__ import annotations

import json
import math
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


def run(models: list[str], candidates: list[str], repeats: int,
        primed: str | None = None) -> None:
    """For every model and candidate, a new process with an empty PyTensor compile directory
    (or a copy of ``primed``): primer, target, target. Prints one JSON line per run."""
    import shutil

    for repeat in range(repeats):
        for model in models:
            primer = primer_for(model)
            for candidate in candidates:
                with tempfile.TemporaryDirectory(prefix="pymc-accel-cold-") as compiledir:
                    if primed is not None:
                        shutil.copytree(primed, compiledir, dirs_exist_ok=True)
                    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={compiledir}")
                    run_in_new_process(f"{primer},{model}", candidate,
                                       {"target": model, "repeat": repeat,
                                        "primed": primed is not None}, env=env)


def prime(models: str, candidates: list[str]) -> str:
    """A compile directory holding what running ``models`` with every candidate compiled."""
    compiledir = tempfile.mkdtemp(prefix="pymc-accel-primed-")
    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={compiledir}")
    for candidate in candidates:
        run_in_new_process(models, candidate, {"primer": True}, env=env)
    return compiledir


def cold_seconds(rows: list[dict]) -> dict[tuple[str, str], list[float]]:
    """Per (target model, candidate): the target's first run less its second, per repeat."""
    runs: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        if "wall" in r and r["model"] == r.get("target"):
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
    from pymc_accel import costmodel

    # a primed run is a machine that has compiled other models (--primer)
    compiled_here = costmodel.USED_MACHINE_MODELS if any(r.get("primer") for r in rows) else 0

    models = zoo.named()
    profiles = {m: profile_model(models[m]()) for m, _ in cold}
    kernels = {m: p.census.kernels for m, p in profiles.items()}
    runtimes = {"driver=nutpie": costmodel.NUMBA_NUTPIE, "driver=pymc": costmodel.NUMBA_PYMC}
    print("| model | kernels | candidate | cold compile (first run less second), median [runs] "
          "| modelled | measured / modelled |")
    print("|---|---|---|---|---|---|")
    for (model, candidate), seconds in sorted(cold.items()):
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        runtime = next((r for k, r in runtimes.items() if k in candidate), None)
        modelled = (costmodel.cold_compile_seconds(profiles[model], runtime, compiled_here).value
                    if runtime is not None else 0.0)
        ratio = f"{statistics.median(seconds) / modelled:.2f}" if modelled > 0 else "–"
        print(f"| {model} | {kernels[model]} | {candidate} | "
              f"{statistics.median(seconds):.2f} s [{runs}] | "
              f"{modelled:.2f} s | {ratio} |")
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


def fit_by_rank(empty_path: str, used_path: str) -> None:
    """Fit the first compile by loop rank to an empty machine's runs and a primed one's together
    (each state its own scalar figure; vector loops and loop nests shared), relative errors,
    non-negative; print the figures and each run's estimate with it left out, beside the
    per-kernel figures' error: ``costmodel.NUMBA_COLD_BY_RANK_USED``."""
    import numpy as np
    from scipy.optimize import nnls

    import zoo

    from pymc_accel import costmodel
    from pymc_accel.profile import profile_model

    models = zoo.named()
    ranks: dict[str, list[int]] = {}
    kernels: dict[str, int] = {}

    def rank(name: str) -> list[int]:
        if name not in ranks:
            census = profile_model(models[name]()).census
            r = census.compiled_kernels_by_rank
            ranks[name], kernels[name] = [r["0"], r["1"], r["2+"]], census.kernels
        return ranks[name]

    X, y, labels = [], [], []
    for state, path in (("empty", empty_path), ("used", used_path)):
        rows = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
        for (name, candidate), seconds in sorted(cold_seconds(rows).items()):
            if not candidate.startswith("numba["):
                continue
            n = rank(name)
            X.append([n[0], 0, n[1], n[2]] if state == "empty" else [0, n[0], n[1], n[2]])
            y.append(statistics.median(seconds))
            labels.append((state, name, candidate))
    X, y = np.array(X, float), np.array(y)
    w = 1.0 / y
    coef = nnls(X * w[:, None], y * w)[0]
    print("ms per kernel: scalar (empty machine) {:.1f}, scalar (used) {:.1f}, vector loop {:.1f}, "
          "loop nest {:.1f}".format(*(coef * 1e3)))
    errors, flat_errors = [], []
    print("| machine | model | candidate | first compile | by rank, left out | per kernel |")
    print("|---|---|---|---|---|---|")
    for i, (state, name, candidate) in enumerate(labels):
        keep = [j for j in range(len(y)) if j != i]
        left_out = float(X[i] @ nnls(X[keep] * w[keep, None], y[keep] * w[keep])[0])
        per_kernel = (costmodel.NUMBA_PYMC_COLD_PER_KERNEL if "pymc" in candidate
                      else costmodel.NUMBA_NUTPIE_COLD_PER_KERNEL) * kernels[name]
        errors.append(math.log(left_out / y[i]))
        flat_errors.append(math.log(per_kernel / y[i]))
        print(f"| {state} | {name} | {candidate} | {y[i]:.2f} s | {left_out:.2f} s | "
              f"{per_kernel:.2f} s |")
    for state in ("empty", "used"):
        mine = [i for i, label in enumerate(labels) if label[0] == state]
        rms = math.sqrt(sum(errors[i] ** 2 for i in mine) / len(mine))
        flat = math.sqrt(sum(flat_errors[i] ** 2 for i in mine) / len(mine))
        print(f"{state} machine, rms log error: by rank, each run left out {rms:.3f} (worst "
              f"{math.exp(max(abs(errors[i]) for i in mine)):.2f}x); per kernel {flat:.3f} "
              f"(worst {math.exp(max(abs(flat_errors[i]) for i in mine)):.2f}x)")


def compiled_nodes(models: list[str]) -> None:
    """For each model: the census's kernels, the stand-in census's (what the compile figures
    count, ``costmodel.as_compiled_by``), and the nodes of ``model.logp_dlogp_function``
    compiled in PyTensor's numba mode, each a function numba compiles (or a view)."""
    import zoo

    from pymc_accel.costmodel import as_compiled_by
    from pymc_accel.profile import profile_model

    print("| model | census kernels | compiled-kernel census | numba function's nodes |")
    print("|---|---|---|---|")
    for name in models:
        model = zoo.named()[name]()
        profile = profile_model(model)
        function = model.logp_dlogp_function(ravel_inputs=True, mode="NUMBA")
        nodes = len(function._pytensor_function.maker.fgraph.apply_nodes)
        print(f"| {name} | {profile.census.kernels} | "
              f"{as_compiled_by(profile).census.kernels} | {nodes} |", flush=True)


def main(argv=None) -> None:
    p = fit_arguments(__doc__, MODELS, repeats=1)
    p.add_argument("--candidates", default=",".join(CANDIDATES))
    p.add_argument("--primer", default=None, metavar="MODELS",
                   help="start every target from a compile directory these models filled")
    p.add_argument("--fit-by-rank", nargs=2, metavar=("EMPTY_JSONL", "USED_JSONL"),
                   help="fit the first compile by loop rank to recorded runs instead")
    p.add_argument("--compiled-nodes", action="store_true",
                   help="print each model's census kernels (its own and its stand-in's, "
                        "costmodel.as_compiled_by) beside the nodes of the function PyMC's "
                        "NUTS compiles with numba, after PyTensor's rewrites and fusion")
    args = p.parse_args(argv)
    if args.compiled_nodes:
        compiled_nodes(args.models.split(","))
        return
    if args.fit_by_rank:
        fit_by_rank(*args.fit_by_rank)
        return
    if args.summarise:
        summarise(args.summarise)
        return
    candidates = _split_labels(args.candidates)
    primed = prime(args.primer, candidates) if args.primer else None
    run(args.models.split(","), candidates, args.repeats, primed)


if __name__ == "__main__":
    main()
