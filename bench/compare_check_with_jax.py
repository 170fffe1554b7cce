"""The float32 check's verdict beside what JAX computes in float32, at the same points.

:func:`pymc_accel.precision.check_float32` judges float32 by evaluating the model's PyTensor
graph op by op with float32 inputs and constants (:func:`pymc_accel.precision.float32_graph`).
A JAX sampler run in float32 computes something else where the two part ways: it jaxifies the
log density and differentiates it with JAX's own rules, so where PyTensor writes a derivative as
a scalar loop (``gammainc``'s and ``betainc``'s in their shape parameters) JAX runs XLA's own
float32 series instead, and the check copies PyTensor's loop with its inner graph as built, in
float64 (a scalar loop's inner types are fixed when it is built).

For each model this runs the check as a selection does (after the profile, on its log density),
then evaluates the log density a JAX run jaxifies
(:func:`pymc_accel.backends.run_logp.jaxified_logp`) and its JAX gradient in float64 and in
float32, at the check's points (the initial point and the same jittered ones,
:func:`pymc_accel.precision._points` with the check's seed), and applies the check's own
tolerances and finiteness rule to JAX's errors. One JSON line per model:

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/compare_check_with_jax.py \\
        --models copula_4,intervals_2,truncated_gamma_6,...|all [--markdown FILE]

A model where the two verdicts differ is one where the check either refuses a float32 run that
would have computed what float64 computes (a lost speed-up), or passes one that would not (a
wrong posterior the divergence fallback may not catch).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def jax_errors(model, graph, points: list[dict], compared: int, logp_rtol: float,
               grad_rtol: float) -> dict:
    """JAX's float32 log density and gradient against its float64 ones at ``points``: the
    largest relative errors over the first ``compared`` points, finiteness at all of them, and
    the verdict under the check's rule."""
    import jax
    import numpy as np

    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jaxified_logp
    from pymc_accel.precision import _errors, _finite

    names = [v.name for v in model.value_vars]

    def evaluate(precision: str) -> list[tuple]:
        dtype = np.float64 if precision == "float64" else np.float32
        with jax_precision(precision):
            fn = jaxified_logp(model, graph, negative_logp=True, device="cpu")
            value_and_grad = jax.jit(jax.value_and_grad(fn))
            out = []
            for point in points:
                args = [np.asarray(point[n], dtype=dtype)
                        if np.issubdtype(np.asarray(point[n]).dtype, np.floating)
                        else np.asarray(point[n]) for n in names]
                lp, g = value_and_grad(args)
                flat = (np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in g])
                        if g else np.zeros(0))
                out.append((float(lp), flat))
            return out

    at64, at32 = evaluate("float64"), evaluate("float32")
    logp_error = grad_error = 0.0
    problem = ""
    for i, ((lp64, g64), (lp32, g32)) in enumerate(zip(at64, at32, strict=True)):
        if not _finite(lp64, g64):
            continue  # float32 is asked to be finite only where float64 is
        if not _finite(lp32, g32):
            problem = problem or f"not finite at point {i}"
            logp_error = grad_error = float("inf")
            continue
        if i < compared:
            le, ge = _errors(lp32, g32, lp64, g64)
            logp_error, grad_error = max(logp_error, le), max(grad_error, ge)
    finite64 = sum(_finite(lp, g) for lp, g in at64)
    if not finite64:  # as the check: float64 not finite anywhere leaves nothing to compare
        problem = "float64 itself is not finite at any point; nothing to compare"
    if not problem and logp_error > logp_rtol:
        problem = f"logp rel. error {logp_error:.2g}"
    if not problem and grad_error > grad_rtol:
        problem = f"gradient rel. error {grad_error:.2g}"
    return {"safe": not problem, "problem": problem, "logp_rel_error": logp_error,
            "grad_rel_error": grad_error, "points_finite_in_float64": finite64}


def compare_model(name: str, build) -> dict:
    """The check's verdict and JAX's at the check's points, for one model."""
    from pymc_accel.precision import (FINITENESS_POINTS, JITTERED_POINTS, _points,
                                      check_float32)
    from pymc_accel.profile import profile_and_logp

    model = build()
    _, graph = profile_and_logp(model)
    check = check_float32(model, logp_graph=graph)
    points = _points(model, JITTERED_POINTS + FINITENESS_POINTS, None, 0)
    jax_side = jax_errors(model, graph, points, 1 + JITTERED_POINTS, check.logp_rtol,
                          check.grad_rtol)
    return {
        "model": name,
        "check": {"safe": check.safe, "graph": check.graph, "problem": check.problem,
                  "logp_rel_error": check.logp_rel_error,
                  "grad_rel_error": check.grad_rel_error, "points": check.points,
                  "seconds": round(check.seconds, 3)},
        "jax_float32": jax_side,
        "agree": check.safe == jax_side["safe"],
    }


def markdown(rows: list[dict], command: str) -> str:
    """A table of the verdicts side by side."""
    def errors(side: dict) -> str:
        return f"{side['logp_rel_error']:.2g} / {side['grad_rel_error']:.2g}"

    lines = [f"Command: `{command}`", "",
             "| model | check's verdict (graph) | its logp / gradient rel. errors | JAX float32 "
             "verdict | its logp / gradient rel. errors | agree |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} | | | | |")
            continue
        c, j = r["check"], r["jax_float32"]
        lines.append(
            f"| {r['model']} | {'safe' if c['safe'] else 'unsafe'} ({c['graph']}) | "
            f"{errors(c)} | {'safe' if j['safe'] else 'unsafe: ' + j['problem']} | "
            f"{errors(j)} | {'yes' if r['agree'] else '**no**'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    from model_rows import main_of

    main_of(__doc__, compare_model, markdown)


if __name__ == "__main__":
    main()
