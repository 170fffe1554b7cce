"""Which PyTensor rewrites the float32 and start checks should apply: each set beside PyMC's own
compiled log density.

The checks (:func:`pymc_accel.precision.check_float32`, :func:`pymc_accel.integration.check_initial_point`)
evaluate the log density with PyTensor's Python linker after the rewrite databases named by
``precision.BACKEND_REWRITES`` (less ``precision.BACKEND_EXCLUDED_REWRITES``, as the numba and
JAX linkers leave them out), to compute what the backends compile. For each model (forms
that need the rewrites to stay finite, then the quick zoo and the held-out models) and each
rewrite set, this runs the float32 check and reports its float64 log density at the initial
point, its verdict, its errors and its seconds, beside ``model.compile_logp()`` (PyTensor's
FAST_RUN, whose rewrites PyMC's numba and JAX compiles share up to ``specialize``). The rewrite
sets' columns check as the backends compile only (``as_written_first=False``); the last column is
the check as selections run it (all three sets, the log density as written first), with the
graph that decided, and the table ends with how many of its verdicts match the
all-three-sets column:

    JAX_PLATFORMS=cpu python bench/compare_check_rewrites.py > docs/results/check-rewrites-cpu.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

SETS = {"canonicalize + stabilize": ("canonicalize", "stabilize"),
        "stabilize": ("stabilize",),
        "canonicalize + stabilize + specialize": ("canonicalize", "stabilize", "specialize")}
ALL_THREE = "canonicalize + stabilize + specialize"


def hazard_models() -> dict:
    """Small models whose log density needs a stabilizing or simplifying rewrite to be finite at
    its initial point (or near it), and three whose constants the rewrites fold, keyed by
    name."""
    import pymc as pm
    import pytensor.tensor as pt

    def one(term):
        def build():
            with pm.Model() as model:
                b = pm.Normal("b", 0.0, 1.0)
                pm.Potential("t", term(b))
            return model
        return build

    def bernoulli(**kw):
        def build():
            with pm.Model() as model:
                b = pm.Normal("b", 0.0, 1.0)
                pm.Bernoulli("y", **{k: v(b) for k, v in kw.items()}, observed=np.zeros(5))
            return model
        return build

    def mixture():
        with pm.Model() as model:
            mu = pm.Normal("mu", 0.0, 1.0, shape=2)
            w = pm.Dirichlet("w", np.ones(2))
            pm.NormalMixture("y", w=w, mu=mu, sigma=0.1, observed=np.array([50.0, -50.0]))
        return model

    return {
        "Bernoulli(logit_p=20+b)": bernoulli(logit_p=lambda b: 20.0 + b),
        "Bernoulli(p=invlogit(20+b))": bernoulli(p=lambda b: pm.math.invlogit(20.0 + b)),
        "log(1+exp(100+b))": one(lambda b: -pt.log(1 + pt.exp(100.0 + b))),
        "log(1-exp(-exp(b-30)))": one(lambda b: pt.log(1 - pt.exp(-pt.exp(b - 30.0)))),
        "log(sigmoid(b-40))": one(lambda b: pt.log(pt.sigmoid(b - 40.0))),
        "log(1-sigmoid(40+b))": one(lambda b: pt.log(1 - pt.sigmoid(40.0 + b))),
        "log1p(-sigmoid(40+b))": one(lambda b: pt.log1p(-pt.sigmoid(40.0 + b))),
        "log(exp(800+b)+exp(800-b))": one(lambda b: pt.log(pt.exp(800.0 + b) + pt.exp(800.0 - b))),
        "log(exp(800+b))": one(lambda b: -pt.log(pt.exp(800.0 + b))),
        "log1p(expm1(800+b))": one(lambda b: -pt.log1p(pt.expm1(800.0 + b))),
        "normal mixture, far data": mixture,
        # constants the rewrites fold: would a folded constant overflow float32 where the
        # graph as written does not?
        "(1e25*b)*(1e25*b)*1e-50": one(lambda b: -((1e25 * b) * (1e25 * b) * 1e-50)),
        "b*1e30*1e30/1e60": one(lambda b: -(b * 1e30 * 1e30 / 1e60) ** 2),
        "exp(b+50)*exp(b+50)*exp(-100)": one(
            lambda b: -pt.exp(b + 50.0) * pt.exp(b + 50.0) * pt.exp(-100.0)),
    }


def run(name: str, build, include: tuple[str, ...], repeats: int,
        as_written_first: bool = False) -> dict:
    """The float32 check of fresh ``build()`` models under ``include``: its first record, with
    the median seconds over ``repeats``."""
    from pymc_accel import precision

    default, precision.BACKEND_REWRITES = precision.BACKEND_REWRITES, include
    try:
        first, seconds = _checks(build, repeats, as_written_first)
    finally:
        precision.BACKEND_REWRITES = default
    first["seconds"] = statistics.median(seconds) if seconds else float("nan")
    return first


def _checks(build, repeats: int, as_written_first: bool) -> tuple[dict, list[float]]:
    """``repeats`` float32 checks of fresh ``build()`` models: the first one's record and the
    seconds of each that ran."""
    from pymc_accel import precision

    seconds, first = [], None
    for _ in range(repeats):
        model = build()
        start = time.perf_counter()
        try:
            check = precision.check_float32(model, as_written_first=as_written_first)
        except Exception as exc:  # what the selection would report as a refusal
            first = first or {"error": f"{type(exc).__name__}: {str(exc)[:60]}"}
            continue
        seconds.append(time.perf_counter() - start)
        if first is None:
            at_start = check.per_point[0] if check.per_point else {}
            first = {"logp64": at_start.get("logp64"), "safe": check.safe,
                     "logp_err": check.logp_rel_error, "grad_err": check.grad_rel_error,
                     "problem": check.problem, "graph": check.graph}
    return first, seconds


def main(argv=None) -> str:
    """Run every model under every set; return the Markdown table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-zoo", action="store_true", help="the hazard forms only")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    from zoo import held_out, zoo

    models = hazard_models()
    if not args.no_zoo:
        models.update({k: v for k, v in zoo(quick=True).items()
                       if k not in ("seed_large", "gp_200")})
        models.update(held_out())
    lines = ["Command: `JAX_PLATFORMS=cpu python bench/compare_check_rewrites.py "
             + " ".join(argv if argv is not None else sys.argv[1:]) + "`", "",
             "Per rewrite set: the check's float64 log density at the initial point, its verdict "
             "(max logp / gradient relative errors) and its median seconds.", "",
             "| model | PyMC's compiled logp | " + " | ".join(SETS)
             + " | all three, as written first |",
             "|---|---|" + "---|" * (len(SETS) + 1)]
    agree = 0
    for name, build in models.items():
        try:
            reference = float(build().compile_logp()(build().initial_point()))
        except Exception as exc:
            reference = f"{type(exc).__name__}"
        records = [run(name, build, include, args.repeats) for include in SETS.values()]
        first = run(name, build, SETS[ALL_THREE], args.repeats, as_written_first=True)
        agree += first.get("safe") == records[list(SETS).index(ALL_THREE)].get("safe")
        cells = [_cell(r) for r in records] + [_cell(first) + f", {first.get('graph', '')}"]
        ref = f"{reference:.6g}" if isinstance(reference, float) else reference
        lines.append(f"| {name} | {ref} | " + " | ".join(cells) + " |")
    lines += ["", f"The check as written first gives the verdict of all three sets on {agree} of "
              f"{len(models)} models."]
    return "\n".join(lines) + "\n"


def _cell(r: dict) -> str:
    """One check's record as a table cell."""
    if "error" in r:
        return r["error"]
    verdict = "safe" if r["safe"] else "refused"
    if r["logp64"] is None:
        return f"{verdict}: {r['problem'][:40]}, {r['seconds'] * 1e3:.0f} ms"
    return (f"{r['logp64']:.6g}, {verdict} ({r['logp_err']:.1e} / {r['grad_err']:.1e}), "
            f"{r['seconds'] * 1e3:.0f} ms")


if __name__ == "__main__":
    print(main())
