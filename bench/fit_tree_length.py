"""Does the posterior's conditioning at the initial point predict NUTS's tree length?

The cost model prices nutpie's leapfrogs per draw from the dimension alone (``3.4 d^(1/4)``,
:func:`pymc_accel.costmodel.nuts_gradients_per_draw`). Held-out models with correlated
posteriors ran far longer trees than that (NumPyro's 109 leapfrogs a draw on spline_20 and 95
on adstock_11, where 9.9 and 8.5 are priced), which hid the gradient work behind the fixed costs
and with it float32's gain. Under a diagonal mass matrix, which every NUTS here adapts, what is left
of a Gaussian posterior is its correlation matrix ``R``: the step size follows its largest
eigenvalue of ``R^-1``, the trajectory its smallest, so a tree needs about ``sqrt(cond(R))``
steps more than an uncorrelated one.

With ``--at mode`` the same at the mode, as the selector evaluates it, with the spread of
``R``'s scales (the mean over its eigenvalues of ``sqrt(lambda_i / lambda_min)``,
:mod:`pymc_accel.conditioning`) beside ``cond(R)``, and the multiplier fitted on each.

For each model: the Hessian of ``-log p`` at the initial point by central differences of the
gradient the profile builds (2 d gradients, evaluated op by op; models over ``--max-dim``
skipped), its inverse's correlation matrix ``R`` where it is positive definite, and
``cond(R)``; beside them the leapfrogs per draw nutpie and NumPyro (float64) ran in the
recorded regret files at 1000 + 1000 draws (median over every run). Then least squares of
``log(leapfrogs)`` on ``log d`` and ``log cond(R)``, and on ``log d`` alone, each model left out
in turn:

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/fit_tree_length.py \\
        --out docs/results/fit-tree-length-cpu-<date>.jsonl
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
ROOT = Path(__file__).parent.parent


def observed_leapfrogs(pattern: str) -> dict[str, dict[str, float]]:
    """Median leapfrogs per draw per model and candidate over every run of the regret files
    matching ``pattern`` recorded at 1000 + 1000 draws."""
    seen: dict[str, dict[str, list[float]]] = {}
    for path in sorted(glob.glob(pattern)):
        try:
            data = json.loads(Path(path).read_text())
        except ValueError:
            continue
        if data.get("draws") != 1000 or data.get("tune") != 1000:
            continue
        for model in data.get("models") or []:
            for row in model.get("rows", []):
                for run in row.get("runs", []):
                    if run.get("leapfrogs_per_draw"):
                        seen.setdefault(model["model"], {}).setdefault(
                            row["candidate"], []).append(run["leapfrogs_per_draw"])
    return {m: {c: statistics.median(v) for c, v in by.items()} for m, by in seen.items()}


def conditioning(model, max_dim: int, at: str = "start") -> dict | None:
    """``cond(R)`` of the model's posterior at its initial point (``at="start"``, with the
    Jacobi-scaled Hessian's condition number) or at the mode L-BFGS finds from there
    (``at="mode"``: :func:`pymc_accel.conditioning.posterior_conditioning`, as the selector
    evaluates it), with the dimension, the evaluations and the seconds it took; ``None`` past
    ``max_dim``."""
    from pymc_accel.curvature import gradient_function
    from pymc_accel.graph_building import initial_point
    from pymc_accel.profile import profile_and_logp

    profile, graph = profile_and_logp(model)
    if profile.n_free > max_dim or graph.grads is None:
        return None
    start = time.perf_counter()
    point = initial_point(model)
    if at == "mode":  # as the selector evaluates it
        from pymc_accel.conditioning import posterior_conditioning

        found = posterior_conditioning(graph, point)
        return {"dim": profile.n_free, "seconds": time.perf_counter() - start, "at": at,
                **({"cond_R": found.condition_number, "spread": found.value,
                    "evaluations": found.evaluations, "positive_definite": True} if found else
                   {"evaluations": 0, "positive_definite": False})}
    values = [np.asarray(point[v.name], dtype="float64") for v in graph.value_vars]
    shapes = [v.shape for v in values]
    sizes = [v.size for v in values]
    x0 = np.concatenate([v.ravel() for v in values])
    f = gradient_function(graph)

    def gradient(x):
        parts, i = [], 0
        for shape, size, var in zip(shapes, sizes, graph.value_vars):
            parts.append(x[i:i + size].reshape(shape).astype(var.dtype))
            i += size
        return np.concatenate([np.ravel(g) for g in f(*parts)[1:]]).astype("float64")

    evaluations = 2 * x0.size
    d = x0.size
    h = 1e-4
    hessian = np.empty((d, d))
    for i in range(d):
        step = np.zeros(d)
        step[i] = h
        hessian[i] = -(gradient(x0 + step) - gradient(x0 - step)) / (2 * h)
    hessian = (hessian + hessian.T) / 2
    out = {"dim": d, "seconds": time.perf_counter() - start, "at": at,
           "evaluations": evaluations}
    eig = np.linalg.eigvalsh(hessian)
    out["positive_definite"] = bool(np.all(eig > 0) and np.all(np.isfinite(eig)))
    if out["positive_definite"]:
        cov = np.linalg.inv(hessian)
        sd = np.sqrt(np.diag(cov))
        corr = cov / np.outer(sd, sd)
        c = np.linalg.eigvalsh(corr)
        out["cond_R"] = float(c[-1] / c[0])
    # the Jacobi-scaled Hessian, defined where the diagonal is positive
    diag = np.diag(hessian)
    if np.all(diag > 0):
        scaled = hessian / np.sqrt(np.outer(diag, diag))
        s = np.abs(np.linalg.eigvalsh(scaled))
        out["cond_jacobi"] = float(s.max() / max(s.min(), 1e-300))
    return out


def _lstsq(rows: list[dict], columns: list[str]) -> tuple[np.ndarray, float, float]:
    """Least squares of log leapfrogs on log columns: coefficients, rms log error, and the rms
    log error with each model left out of its own fit."""
    def design(rs):
        return np.array([[1.0] + [math.log(r[c]) for c in columns] for r in rs])

    y = np.array([math.log(r["leapfrogs"]) for r in rows])
    coef = np.linalg.lstsq(design(rows), y, rcond=None)[0]
    rms = float(np.sqrt(np.mean((design(rows) @ coef - y) ** 2)))
    errors = []
    for i in range(len(rows)):
        rest = rows[:i] + rows[i + 1:]
        c = np.linalg.lstsq(design(rest), np.delete(y, i), rcond=None)[0]
        errors.append(float((design([rows[i]]) @ c)[0] - y[i]))
    return coef, rms, float(np.sqrt(np.mean(np.square(errors))))


#: Each NUTS's trees against nutpie's as the cost model prices them
#: (:data:`pymc_accel.costmodel.NUTS_TRAJECTORY_SCALE`), by the candidate the regret files name.
TRAJECTORY_SCALES = {"numba[cpu,float64,driver=nutpie]": 1.0,
                     "numba[cpu,float64,driver=pymc]": 1.16,
                     "numpyro[cpu,float64,chain_method=parallel]": 1.38,
                     "numpyro[cpu,float32,chain_method=parallel]": 1.38}


def _multiplier_fit(rows: list[tuple[float, float, float]], knee: float
                    ) -> tuple[float, float, float, float]:
    """``c`` of ``observed = priced * max(1, cond / knee)^c`` by least squares on the log
    residual, for ``(priced, observed, cond)`` rows: ``c``, the rms log error with it and with
    each row left out of its own fit, and the rms log error as priced."""
    y = np.array([math.log(o / p) for p, o, _ in rows])
    x = np.array([max(0.0, math.log(k / knee)) for _, _, k in rows])
    c = float(x @ y / (x @ x)) if x @ x > 0 else 0.0
    errors = []
    for i in range(len(rows)):
        keep = np.arange(len(rows)) != i
        ci = float(x[keep] @ y[keep] / (x[keep] @ x[keep])) if x[keep] @ x[keep] > 0 else 0.0
        errors.append(y[i] - ci * x[i])
    return (c, float(np.sqrt(np.mean((y - c * x) ** 2))),
            float(np.sqrt(np.mean(np.square(errors)))), float(np.sqrt(np.mean(y ** 2))))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=None, help="zoo.named() names (default: every model "
                   "with nutpie runs in the regret files)")
    p.add_argument("--results", default=str(ROOT / "docs/results/regret-cpu-1000-*.json"))
    p.add_argument("--max-dim", type=int, default=150)
    p.add_argument("--candidate", default="numba[cpu,float64,driver=nutpie]")
    p.add_argument("--at", choices=["start", "mode"], default="start",
                   help="the Hessian at the initial point, or at the mode L-BFGS finds from it")
    p.add_argument("--knee", type=float, default=10.0,
                   help="cond(R) above which the trees are lengthened (the multiplier's fit)")
    p.add_argument("--spread-knee", type=float, default=2.5,
                   help="the spread of R's scales above which the trees are lengthened (its "
                        "multiplier's fit, at the mode)")
    p.add_argument("--out", default=None, help="write one JSON line a model here")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import zoo

    observed = observed_leapfrogs(args.results)
    names = (args.models.split(",") if args.models
             else sorted(m for m in observed if args.candidate in observed[m]))
    makers = zoo.named()
    rows = []
    for name in names:
        if name not in makers or args.candidate not in observed.get(name, {}):
            continue
        try:
            found = conditioning(makers[name](), args.max_dim, args.at)
        except Exception as exc:  # noqa: BLE001 - a model the evaluator cannot run is listed
            print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if found is None:
            continue
        row = {"model": name, **found, "leapfrogs": observed[name][args.candidate],
               "numpyro_leapfrogs": observed[name].get(
                   "numpyro[cpu,float64,chain_method=parallel]"),
               "by_candidate": observed[name],
               "priced": max(3.0, 3.4 * found["dim"] ** 0.25)}
        rows.append(row)
        print(f"{name:22s} d {row['dim']:4d}  cond(R) {row.get('cond_R', float('nan')):10.1f}  "
              f"spread {row.get('spread', float('nan')):6.2f}  "
              f"cond(Jacobi) {row.get('cond_jacobi', float('nan')):10.1f}  nutpie "
              f"{row['leapfrogs']:6.1f}  priced {row['priced']:5.1f}  ({row['seconds']:.2f} s, "
              f"{row['evaluations']} evaluations)",
              flush=True)
    if args.out:
        Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows))
    usable = [r for r in rows if r.get("cond_R")]
    print(f"\n{len(usable)} of {len(rows)} models with a positive definite Hessian "
          f"(at the {args.at})")
    for target, name in (("leapfrogs", "nutpie"), ("numpyro_leapfrogs", "NumPyro float64")):
        these = [{**r, "leapfrogs": r[target]} for r in usable if r.get(target)]
        if len(these) < 4:
            continue
        print(f"{name}, {len(these)} models:")
        for columns in (["dim"], ["dim", "cond_R"]):
            coef, rms, left_out = _lstsq(these, columns)
            terms = " + ".join(f"{b:.3f} log {c}" for b, c in zip(coef[1:], columns))
            print(f"  log leapfrogs = {coef[0]:.3f} + {terms}: rms log error {rms:.3f}, "
                  f"each model left out {left_out:.3f}")
        if target == "leapfrogs":
            priced = [math.log(r["priced"] / r["leapfrogs"]) for r in these]
            print(f"  3.4 d^(1/4) as priced: rms log error "
                  f"{np.sqrt(np.mean(np.square(priced))):.3f}")
    fits = [("cond_R", "cond(R)", args.knee)]
    if args.at == "mode":
        fits.append(("spread", "the spread of R's scales", args.spread_knee))
    for column, name, knee in fits:
        print(f"\nThe priced trees times ({column} / {knee:g})^c above {column} = {knee:g} "
              f"({name}), c by least squares on the log residual (each adaptation's constant "
              "scale kept):")
        for candidate, scale in TRAJECTORY_SCALES.items():
            these = [(r["priced"] * scale, r["by_candidate"][candidate], r[column])
                     for r in usable if candidate in r["by_candidate"]]
            if len(these) < 4:
                continue
            c, rms, left_out, before = _multiplier_fit(these, knee)
            print(f"  {candidate}: c = {c:.3f} ({len(these)} models), rms log error "
                  f"{before:.3f} as priced, {rms:.3f} with it, each model left out "
                  f"{left_out:.3f}")

if __name__ == "__main__":
    main()
