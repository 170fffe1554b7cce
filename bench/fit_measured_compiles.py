"""What measured mode's compiles cost with warm caches, and what a nutpie run pays once its
compiled model is kept: the data behind ``costmodel.NUMBA_GRADIENT_COMPILE_*`` (warm) and
``numba_cpu.NUTPIE_KEPT_MODEL_RUN_SECONDS``.

For each zoo model, in one process whose numba and nutpie have already run (a primer model), and
with PyTensor's compile cache holding the model's kernels (each model is compiled once first),
it times, on a model object built afresh each time:

- ``gradient``: PyMC's numba logp-and-gradient function, as measured mode compiles it
  (``_measure.pymc_gradient_function``, the one PyMC's NUTS compiles);
- ``nutpie_compile``: ``nutpie.compile_pymc_model(model, backend="numba")``;
- ``run_kept``: ``pm.sample(nuts_sampler="nutpie")`` of 10 + 10 draws x 2 chains with that
  compiled model kept (``pymc_accel.backends.nutpie_compiled``);
- ``run``: the same run compiling as usual;
- ``pymc_run_kept``: ``pm.sample(nuts_sampler="pymc", backend="numba")`` of 10 + 10 draws x 2
  chains with measured mode's gradient function kept (``pymc_accel.backends.pymc_compiled``);
- ``pymc_run``: the same run compiling as usual (both with one BLAS thread per chain, as the
  backend runs them).

One JSON line per model and repeat.

    JAX_PLATFORMS=cpu python bench/fit_measured_compiles.py --repeats 3 > docs/results/fit-measured-compiles-pymc-function-cpu.jsonl
    python bench/fit_measured_compiles.py --summarise docs/results/fit-measured-compiles-pymc-function-cpu.jsonl
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections import defaultdict
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

DEFAULT_MODELS = "funnel,glm_poisson,eight_schools,glm_linear,seed_small,seed_mid,gp_200,pk_scan"


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def time_model(name: str) -> dict[str, float]:
    """One repeat of the four timings for zoo model ``name``."""
    import pymc as pm
    import zoo

    from pymc_accel.backends import _measure, nutpie_compiled, pymc_compiled
    from pymc_accel.backends.blas_threads import limit_blas
    from pymc_accel.machine import machine_figures

    build = zoo.zoo(quick=True)[name]
    kwargs = dict(draws=10, tune=10, chains=2, cores=2, random_seed=1, progressbar=False,
                  nuts_sampler="nutpie", compute_convergence_checks=False)
    machine = machine_figures()
    gradient = _timed(lambda: _measure.time_numba_gradient(build(), 0.1, machine))
    model = build()
    compile_seconds = nutpie_compiled.compile_for_run(model)

    def run_kept():
        with nutpie_compiled.reused_by_pm_sample(model) as reused:
            assert reused
            pm.sample(model=model, **kwargs)

    kept = _timed(run_kept)
    run = _timed(lambda: pm.sample(model=build(), **kwargs))
    pymc_kwargs = dict(kwargs, nuts_sampler="pymc", backend="numba")
    # one BLAS thread per chain, as the backend runs PyMC's NUTS: unlimited, the marginal GP's
    # chains took 1.7 to 28 s where they take 1 to 3
    blas_limit = partial(limit_blas, "auto", 2, 2)
    model = build()
    _measure.time_numba_gradient(model, 0.05, machine)

    def pymc_run_kept():
        with pymc_compiled.reused_by_pm_sample(model) as reused, blas_limit():
            assert reused
            pm.sample(model=model, **pymc_kwargs)

    def pymc_run():
        with blas_limit():
            pm.sample(model=build(), **pymc_kwargs)

    pymc_kept = _timed(pymc_run_kept)
    pymc_run = _timed(pymc_run)
    return {"model": name, "gradient": round(gradient, 3), "nutpie_compile": round(compile_seconds, 3),
            "run_kept": round(kept, 3), "run": round(run, 3),
            "pymc_run_kept": round(pymc_kept, 3), "pymc_run": round(pymc_run, 3)}


def summarise(path: str) -> None:
    """Medians per model, and the kept-model run's start-up over the zoo."""
    rows = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        rows[row["model"]].append(row)
    keys = ("gradient", "nutpie_compile", "run_kept", "run", "pymc_run_kept", "pymc_run")
    print("| model | gradient compile (s) | nutpie compile (s) | nutpie / gradient compile | "
          "nutpie run, model kept (s) | nutpie run (s) | PyMC NUTS run, function kept (s) | "
          "PyMC NUTS run (s) |")
    print("|---|---|---|---|---|---|---|---|")
    kept, ratios, pymc_kept = [], [], []
    for model, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) if all(k in r for r in runs) else math.nan
               for k in keys}
        kept.append(med["run_kept"])
        ratios.append(med["nutpie_compile"] / med["gradient"])
        pymc_kept.append(med["pymc_run_kept"])
        print(f"| {model} | {med['gradient']:.2f} | {med['nutpie_compile']:.2f} | "
              f"{ratios[-1]:.1f} | {med['run_kept']:.2f} | {med['run']:.2f} | "
              f"{med['pymc_run_kept']:.2f} | {med['pymc_run']:.2f} |")
    print(f"\nnutpie run with the model kept: median {statistics.median(kept):.2f} s "
          f"(range {min(kept):.2f}-{max(kept):.2f})")
    print(f"nutpie compile / gradient compile: {min(ratios):.1f}-{max(ratios):.1f}")
    print(f"PyMC NUTS run with the function kept: {min(pymc_kept):.2f}-{max(pymc_kept):.2f} s")
    from fit_fixed import fit_line, kernels_of

    kernels = kernels_of(set(rows))
    medians = {m: statistics.median(r["gradient"] for r in runs) for m, runs in rows.items()}
    a, b = fit_line([(kernels[m], g) for m, g in medians.items()])
    print(f"gradient compile: {a:.3f} s + {b * 1e3:.2f} ms x kernels; per model / fit: "
          + ", ".join(f"{m} {g / (a + b * kernels[m]):.2f}" for m, g in medians.items()))


def main(argv=None) -> None:
    from fit_tuning import fit_arguments

    args = fit_arguments(__doc__, DEFAULT_MODELS, repeats=3).parse_args(argv)
    if args.summarise:
        summarise(args.summarise)
        return
    import pymc as pm
    import zoo

    from pymc_accel.backends import _measure
    from pymc_accel.machine import machine_figures

    primer = zoo.zoo(quick=True)["funnel"]()  # numba and nutpie start once, not in the timings
    pm.sample(model=primer, draws=10, tune=10, chains=2, nuts_sampler="nutpie", progressbar=False)
    for name in args.models.split(","):
        _measure.time_numba_gradient(zoo.zoo(quick=True)[name](), 0.1, machine_figures())
        pm.sample(model=zoo.zoo(quick=True)[name](), draws=10, tune=10, chains=2,
                  nuts_sampler="nutpie", progressbar=False)  # the model's kernels cached
        for _ in range(args.repeats):
            print(json.dumps(time_model(name)), flush=True)


if __name__ == "__main__":
    main()
