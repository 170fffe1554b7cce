"""Where a first selection's time goes, part by part: the data behind the overhead tables.

For each model, in one process that has selected a primer model first (imports and machine
figures paid), with the run history empty and no profile kept: the first selection of a model
built afresh, timed whole and in its two large parts (the profile and the float32 check, as
:func:`pymc_accel.select` calls them), and the parts of each on their own, on other fresh models:

- the profile: freezing dims and data, PyMC's log density, PyTensor's gradient, the census;
- the float32 check: the float32 copy of the profile's log density and gradient, the two
  evaluators (:class:`pymc_accel.graph_building.Evaluator`; PyTensor functions in the evaluating
  mode until 2026-11-30), the points, four points' evaluations in both precisions; where it
  fails as written, the rewrites every backend applies, the gradient again, and the same
  steps on the rewritten log density, added to the same columns.

Medians of ``--repeats`` fresh models, in milliseconds, as a Markdown table:

    JAX_PLATFORMS=cpu python bench/time_selection_parts.py --models pk_scan,glm_poisson,seed_mid
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="pk_scan,glm_poisson,seed_mid")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--as-compiled-only", action="store_true",
                   help="the float32 check as it ran until 2026-11-27: the rewritten log density "
                        "only (as_written_first=False)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    return args


def _timed(module, name: str, seconds: dict) -> None:
    """Wrap ``module.name`` so that each call adds its seconds to ``seconds[name]``."""
    function = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start

    setattr(module, name, wrapper)


def profile_parts(model) -> dict:
    """The profile's steps on ``model``, in milliseconds (as ``profile._logp_and_grad_census``)."""
    import pytensor
    from pymc.model.transform.optimization import freeze_dims_and_data

    from pymc_accel.census import census_of
    from pymc_accel.graph_building import quietly

    @quietly
    def run():
        t = [time.perf_counter()]
        frozen = freeze_dims_and_data(model) if (model.dim_lengths or model.data_vars) else model
        t.append(time.perf_counter())
        logp = frozen.logp()
        t.append(time.perf_counter())
        grads = pytensor.grad(logp, frozen.value_vars)
        t.append(time.perf_counter())
        census_of(list(frozen.value_vars), [logp, *grads])
        t.append(time.perf_counter())
        return t

    t = run()
    return {k: (b - a) * 1e3 for k, a, b in zip(("freeze", "log density", "gradient", "census"),
                                                 t, t[1:])}


def check_parts(model, as_compiled: bool, as_written_first: bool = True) -> dict:
    """The float32 check's steps on ``model`` from its profile's graph, in milliseconds (as
    :func:`pymc_accel.precision.check_float32` runs them): the log density as written, and
    with ``as_compiled`` (where the check went on) the rewrite, the gradient and the same steps
    again on the rewritten log density; without ``as_written_first``, those only (the check
    until 2026-11-27). Every point is evaluated, where the check as written stops at the first
    that fails."""
    import numpy as np
    import pytensor

    from pymc_accel import precision
    from pymc_accel.graph_building import Evaluator, quietly
    from pymc_accel.profile import profile_and_logp

    graph = profile_and_logp(model)[1]
    gc.collect()
    value_vars = list(graph.value_vars)
    parts: dict[str, float] = {}

    def add(name: str, seconds: float) -> None:
        parts[name] = parts.get(name, 0.0) + seconds * 1e3

    def stage(outputs: list) -> None:
        t = [time.perf_counter()]
        ins32, outs32 = precision.float32_graph(value_vars, outputs)
        t.append(time.perf_counter())
        f64 = Evaluator(value_vars, outputs)  # as the check
        f32 = Evaluator(ins32, outs32)
        t.append(time.perf_counter())
        points = precision._points(model, 3, None, 0)
        t.append(time.perf_counter())
        for point in points:
            args = [point[v.name] for v in value_vars]
            f64(*args)
            f32(*[np.asarray(a, dtype="float32") if a.dtype == np.float64 else a for a in args])
        t.append(time.perf_counter())
        names = ("float32 copy", "two evaluators", "points", "evaluations")
        for name, a, b in zip(names, t, t[1:]):
            add(name, b - a)

    @quietly
    def run():
        if as_written_first:
            stage([graph.logp, *graph.grads])
        if as_compiled:
            start = time.perf_counter()
            logp = precision.as_backends_rewrite(graph.logp)
            add("rewrite", time.perf_counter() - start)
            start = time.perf_counter()
            grads = pytensor.grad(logp, value_vars)
            add("check gradient", time.perf_counter() - start)
            stage([logp, *grads])

    run()
    return parts


def main(argv=None) -> str:
    """Time the parts; return the Markdown table."""
    args = _parse(argv)
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    warnings.filterwarnings("ignore")
    from bench_regret import private_history
    from compare_evaluator import models as every_model

    import pymc_accel
    from pymc_accel import precision, selection
    from pymc_accel.selection import forget_profiles

    models = every_model()  # the zoo's, the held-out sets' and the user sweep's
    seconds: dict[str, float] = {}
    if args.as_compiled_only:
        selection.check_float32 = functools.partial(selection.check_float32,
                                                    as_written_first=False)
    _timed(selection, "_cached_profile_and_logp", seconds)
    _timed(selection, "check_float32", seconds)
    rows = []
    with private_history():
        pymc_accel.select(models["eight_schools"]())  # the process's one-off costs
        for name in args.models.split(","):
            runs = []
            for _ in range(args.repeats):
                forget_profiles()
                model = models[name]()
                gc.collect()
                seconds.clear()
                start = time.perf_counter()
                report = pymc_accel.select(model, draws=1000, tune=1000, chains=2)
                whole = (time.perf_counter() - start) * 1e3
                checked = "check_float32" in seconds
                run = {"selection": whole, "profile": seconds["_cached_profile_and_logp"] * 1e3}
                if checked:
                    run["float32 check"] = seconds["check_float32"] * 1e3
                run["rest of selection"] = whole - run["profile"] - run.get("float32 check", 0.0)
                gc.collect()
                parts = profile_parts(models[name]())
                run.update(parts)
                run["rest of profile"] = run["profile"] - sum(parts.values())
                if checked:
                    gc.collect()
                    as_compiled = report.precision_check["graph"] == precision.AS_COMPILED
                    run.update(check_parts(models[name](), as_compiled,
                                           not args.as_compiled_only))
                runs.append(run)
            keys = dict.fromkeys(k for r in runs for k in r)
            med = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}
            rows.append((name, report.chosen, med))  # the choice of the last repeat
    columns = ["selection", "profile", "freeze", "log density", "gradient", "census",
               "rest of profile", "float32 check", "rewrite", "check gradient", "float32 copy",
               "two evaluators", "points", "evaluations", "rest of selection"]
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"Command: `JAX_PLATFORMS=cpu python bench/time_selection_parts.py {command}`",
             "", "| model | chosen | " + " | ".join(columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for name, chosen, med in rows:
        cells = [f"{med[c]:.1f}" if c in med else "–" for c in columns]
        lines.append(f"| {name} | {chosen} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nMilliseconds, medians of fresh models.\n"


if __name__ == "__main__":
    print(main())
