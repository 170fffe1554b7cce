"""What checking the gradient at each chain's start costs a JAX run, four ways, and how many of
PyMC's starts have a JAX gradient that is not finite.

PyMC's JAX path (``sample_jax_nuts``) checks each jittered start with the jaxified log density,
which pymc-accel compiles whole (``jax.jit``). For each model:

- ``logp``: compile the jaxified log density and evaluate it at the starts (what PyMC's check
  costs now), in a new process;
- ``value_and_grad``: the same with JAX's ``value_and_grad`` (what a check of JAX's gradient
  would cost instead), in a new process;
- ``pytensor gradient``: PyTensor's gradient built and evaluated op by op in Python at the
  starts (:func:`pymc_accel.curvature.gradient_function`), on the models with a series
  function (``none`` elsewhere), in a new process;
- ``series check``: :func:`pymc_accel.backends.finite_starts.series_gradient_check` built and
  called at each start (``none`` where the model has no series function), in a new process;
- the starts (PyMC's jitter, seed 1, ``--chains`` chains) whose JAX gradient is not finite,
  with PyMC's jitter alone and inside ``finite_gradient_starts``;
- on :data:`AGREEMENT_STARTS` further starts (seeds 0 to 39, each drawn as PyMC draws it),
  those where PyTensor's gradient is not finite, and those where the series check says as it
  does.

    JAX_PLATFORMS=cpu python bench/time_start_checks.py --models eight_schools,intervals_2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))


def _starts(model, chains: int, block: bool):
    import numpy as np
    import pymc.sampling.jax as pmjax

    from pymc_accel.backends.finite_starts import finite_gradient_starts
    from pymc_accel.backends.run_logp import jaxified_logp

    logp = jaxified_logp(model)
    with finite_gradient_starts(model, jax=True) if block else contextlib.nullcontext():
        starts = pmjax._get_batched_jittered_initial_points(
            model=model, chains=chains, initvals=None, random_seed=1, logp_fn=logp)
    starts = [np.asarray(s).reshape(chains, *np.shape(s)[1:]) for s in starts]
    return [[s[c] for s in starts] for c in range(chains)], logp


def worker(name: str, mode: str, chains: int) -> dict:
    """One model and one way, in this (new) process."""
    warnings.filterwarnings("ignore")
    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    import zoo
    from pymc_accel.backends import run_logp

    model = zoo.named()[name]()
    run_logp.JIT_LOGP = False  # compiled below, timed alone
    starts, logp = _starts(model, chains, block=False)
    jax.jit(lambda x: jax.numpy.sin(x).sum())(jax.numpy.ones(3)).block_until_ready()
    names = [v.name for v in model.value_vars]
    if mode in ("pytensor_gradient", "series_check"):
        import pytensor

        from pymc_accel.backends.finite_starts import series_gradient_check
        from pymc_accel.curvature import gradient_function
        from pymc_accel.profile import log_density_graph

        began = time.perf_counter()
        if mode == "series_check":
            check = series_gradient_check(model)
        elif series_gradient_check(model) is None:
            check = None
        else:
            began = time.perf_counter()
            graph = log_density_graph(model)[0]
            graph.grads = list(pytensor.grad(graph.logp, list(graph.value_vars)))
            evaluate = gradient_function(graph)
            order = [names.index(v.name) for v in graph.value_vars]

            def check(point):
                return evaluate(*[point[names[i]] for i in order])
        if check is None:
            return {"seconds": None}
        for values in starts:
            check(dict(zip(names, values)))
        out = {"seconds": time.perf_counter() - began}
        if mode == "pytensor_gradient":  # the series check against the gradient itself
            from pymc.sampling.mcmc import _init_jitter

            series = series_gradient_check(model)
            points = []
            for seed in range(AGREEMENT_STARTS):  # as PyMC draws them, a start at a time
                try:
                    points += _init_jitter(model, None, [seed], True, 10)
                except Exception:  # no start with a finite log density: not a start
                    continue
            finite = [all(np.all(np.isfinite(g)) for g in check(p)[1:]) for p in points]
            out["agree"] = sum(series(p) == f for p, f in zip(points, finite))
            out["drawn"] = len(points)
            out["not_finite"] = finite.count(False)
        return out
    f = jax.jit(logp if mode == "logp" else jax.value_and_grad(logp))
    began = time.perf_counter()
    for values in starts:
        jax.block_until_ready(f([jax.numpy.asarray(v) for v in values]))
    seconds = time.perf_counter() - began
    out = {"seconds": seconds}
    if mode == "value_and_grad":  # the starts' JAX gradients, PyMC's and checked
        grad = jax.jit(jax.grad(logp))

        def bad(points):
            return sum(not all(np.all(np.isfinite(np.asarray(g))) for g in
                               grad([jax.numpy.asarray(v) for v in values])) for values in points)

        out["nan_pymc"] = bad(starts)
        out["nan_checked"] = bad(_starts(model, chains, block=True)[0])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", required=True, help="comma-separated zoo.named() names")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--worker", nargs=2, metavar=("MODEL", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(*args.worker, args.chains)), flush=True)
        return
    print(f"Command: `python bench/time_start_checks.py --models {args.models} --chains "
          f"{args.chains}`; each way in a new process; seconds for {args.chains} starts.\n")
    print("| model | logp (s) | value_and_grad (s) | ratio | pytensor gradient (s) | series "
          "check (s) | starts with a NaN JAX gradient: PyMC's / checked | of "
          f"{AGREEMENT_STARTS} starts: drawn, gradient not finite, series check agrees |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        got = {}
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, "--chains", str(args.chains),
                                  "--models", name, "--worker", name, mode],
                                 capture_output=True, text=True, check=False).stdout
            line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
            got[mode] = json.loads(line[7:]) if line else {"seconds": float("nan")}
        lp, vg, pg, sc = (got[m]["seconds"] for m in MODES)
        nans = f"{got['value_and_grad'].get('nan_pymc', '?')} / " \
               f"{got['value_and_grad'].get('nan_checked', '?')}"
        pt = got["pytensor_gradient"]
        agree = (f"{pt['drawn']}, {pt['not_finite']}, {pt['agree']}" if "agree" in pt
                 else "–")
        print(f"| {name} | {lp:.3f} | {vg:.3f} | {vg / lp:.2f} | {_seconds(pg)} | "
              f"{_seconds(sc)} | {nans} | {agree} |", flush=True)


def _seconds(value) -> str:
    return "none" if value is None else f"{value:.3f}"


MODES = ("logp", "value_and_grad", "pytensor_gradient", "series_check")
#: Starts the series check is compared with PyTensor's gradient at.
AGREEMENT_STARTS = 40


if __name__ == "__main__":
    main()
