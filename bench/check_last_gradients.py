"""What the check of a NumPyro run's last gradients finds and costs, model by model.

Each model is sampled by ``pymc_accel.sample(nuts_sampler="numpyro", precision=...)`` (short
runs: ``--draws`` and ``--tune``, two chains, seed 1; ``--sampler blackjax_nuts`` for BlackJAX's
NUTS, whose runs are checked since 2026-12-02), and the check
:mod:`pymc_accel.backends.last_gradients` stored with the result is read back: whether JAX's
gradient at each chain's last draw was the derivative of its log density there, the largest
relative error, and the check's seconds beside the run's wall time. With ``--unheld`` the runs
jaxify the log density without :mod:`pymc_accel.rewrites.coincident_distances` (the runs before
it), to see the check catch the sparse GPs' wrong gradients. One JSON line per model and precision::

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/check_last_gradients.py \\
        --models eight_schools,sparse_gp,...|all [--precisions float64,float32] [--unheld] \\
        [--sampler numpyro|blackjax_nuts] [--markdown FILE]

A run the explicit choice could not make (a model NumPyro cannot sample) is a row with its
error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _options(parser) -> None:
    parser.add_argument("--precisions", default="float64")
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--tune", type=int, default=100)
    parser.add_argument("--sampler", default="numpyro",
                        help="the JAX NUTS to run: numpyro or blackjax_nuts")
    parser.add_argument("--unheld", action="store_true",
                        help="jaxify without holding coinciding GP distances at zero")
    parser.add_argument("--reference", action="store_true",
                        help="compare with PyTensor's gradient on every run, not only where "
                             "the check disagrees (to see that an agreement is one)")


def check_model(name: str, build, precision: str, draws: int, tune: int,
                reference: bool = False, sampler: str = "numpyro") -> dict:
    """One model's short run of ``sampler`` (a JAX NUTS) in ``precision``, and the check stored
    with it; where it disagreed, PyTensor's gradient at the chains' last draws beside the run's
    (``pytensor_rel_errors``: ``|g_run - g| / max(|g|, 1)``), a reference the check does not
    use, to tell a wrong gradient from a wrong check."""
    import pymc_accel
    from pymc_accel.backends import last_gradients
    from pymc_accel.backends.last_gradients import LastGradients

    model = build()
    seen: dict = {}
    checking = last_gradients.check_last_gradients

    def keeping(state, potential, shapes, *args, **kwargs):
        seen.update(state=state, shapes=shapes)
        return checking(state, potential, shapes, *args, **kwargs)

    last_gradients.check_last_gradients = keeping
    try:
        start = time.perf_counter()
        idata = pymc_accel.sample(model=model, nuts_sampler=sampler, precision=precision,
                                  draws=draws, tune=tune, chains=2, random_seed=1,
                                  progressbar=False, quiet=True)
        wall = time.perf_counter() - start
    finally:
        last_gradients.check_last_gradients = checking
    check = LastGradients.from_idata(idata)
    report = pymc_accel.SelectionReport.from_idata(idata)
    row = {"model": name, "precision": precision, "wall_seconds": round(wall, 3),
           "chosen": report.chosen}
    if check is None:
        return {**row, "checked": False}
    return {**row, "checked": True, "agrees": check.agrees, "chains": check.chains,
            "skipped": check.skipped,
            "grad_rel_error": max(check.grad_rel_errors, default=None),
            "raw_rel_error": max(check.raw_rel_errors, default=None),
            "check_seconds": round(check.seconds, 4),
            "check_share": round(check.seconds / wall, 4),
            **({} if check.agrees and not reference
               else _against_pytensor(model, seen["state"], seen["shapes"], precision))}


def _against_pytensor(model, state: dict, shapes: list, precision: str) -> dict:
    """Per chain, at its last draw, against PyTensor's float64 gradient there: the run's
    gradient (``pytensor_rel_errors``: ``|g - g_ref| / max(|g_ref|, 1)``) and JAX's gradient of
    the run's log density compiled on its own, ``jax.jit(jax.grad(...))`` in the run's
    precision (``standalone_rel_errors``), to tell a gradient the sampler's program computes
    wrong from one JAX's derivative rules get wrong."""
    import math

    import jax
    import numpy as np
    import pytensor

    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jaxified_logp, run_graph
    from pymc_accel.curvature import gradient_function

    graph = run_graph(model)
    graph.grads = pytensor.grad(graph.logp, list(graph.value_vars))
    evaluate = gradient_function(graph)
    place = {v.name: i for i, v in enumerate(model.value_vars)}
    graph_order = [place[v.name] for v in graph.value_vars]  # the graph's inputs, by the model's
    z, z_grad = np.atleast_2d(state["z"]), np.atleast_2d(state["z_grad"])
    with jax_precision(precision):
        logp = jaxified_logp(model, device="cpu")
        standalone = jax.jit(jax.grad(logp))
        run_errors, own_errors = [], []
        for c in range(z.shape[0]):
            values, at = [], 0
            for var, shape in zip(model.value_vars, shapes):
                size = math.prod(shape)
                values.append(z[c, at:at + size].reshape(shape).astype(var.dtype))
                at += size
            _, *grads = evaluate(*[values[i] for i in graph_order])
            by_name = {v.name: g for v, g in zip(graph.value_vars, grads)}
            reference = np.concatenate([np.ravel(by_name[v.name]) for v in model.value_vars])
            norm = max(float(np.linalg.norm(reference)), 1.0)
            run = -np.asarray(z_grad[c], dtype="float64")  # the state's is of -log p
            own = np.concatenate([np.ravel(np.asarray(g, dtype="float64")) for g in
                                  standalone([np.asarray(v, dtype=precision) for v in values])])
            run_errors.append(float(np.linalg.norm(run - reference)) / norm)
            own_errors.append(float(np.linalg.norm(own - reference)) / norm)
    return {"pytensor_rel_errors": run_errors, "standalone_rel_errors": own_errors}


def markdown(rows: list[dict], command: str) -> str:
    """Disagreements and errors first, then the spread of the errors and of the check's cost."""
    import statistics

    lines = [f"Command: `{command}`", ""]
    checked = [r for r in rows if r.get("checked")]
    off = [r for r in checked if not r["agrees"]]
    lines += ["| model | precision | agrees | largest gradient error | the run's gradient "
              "against PyTensor's, per chain | JAX's own jitted gradient against PyTensor's | "
              "check s | run s |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(off, key=lambda r: (r["model"], r["precision"])):
        against = ", ".join(f"{e:.3g}" for e in r.get("pytensor_rel_errors") or [])
        own = ", ".join(f"{e:.3g}" for e in r.get("standalone_rel_errors") or [])
        lines.append(f"| {r['model']} | {r['precision']} | no | {r['grad_rel_error']:.3g} | "
                     f"{against} | {own} | {r['check_seconds']:.3f} | "
                     f"{r['wall_seconds']:.1f} |")
    referenced = [r for r in checked if r["agrees"] and r.get("pytensor_rel_errors")]
    if referenced:
        worst = max(referenced, key=lambda r: max(r["pytensor_rel_errors"]))
        lines += ["", f"Of the runs that agreed, {len(referenced)} compared with PyTensor's "
                  f"gradient too: the run's within {max(worst['pytensor_rel_errors']):.2g} of "
                  f"it at most ({worst['model']}, {worst['precision']})."]
    for precision in sorted({r["precision"] for r in checked}):
        these = [r for r in checked if r["precision"] == precision and r["agrees"]
                 and r["grad_rel_error"] is not None]
        if not these:
            continue
        worst = max(these, key=lambda r: r["grad_rel_error"])
        nearest = max(these, key=lambda r: r["raw_rel_error"])
        shares = [r["check_share"] for r in these]
        seconds = [r["check_seconds"] for r in these]
        lines += ["", f"{precision}: {len(these)} runs agreed; largest gradient error "
                  f"{worst['grad_rel_error']:.2g} ({worst['model']}), before the difference's "
                  f"error bound is taken off {nearest['raw_rel_error']:.2g} "
                  f"({nearest['model']}); the check "
                  f"took median {statistics.median(seconds):.3f} s (largest "
                  f"{max(seconds):.3f} s), median {100 * statistics.median(shares):.2f}% of "
                  f"the run (largest {100 * max(shares):.2f}%, "
                  f"{max(these, key=lambda r: r['check_share'])['model']})."]
    skipped = [r for r in checked if not r["chains"]]
    unchecked = [r for r in rows if "checked" in r and not r["checked"]]
    failed = [r for r in rows if "error" in r]
    lines += ["", f"{len(rows)} runs; {len(off)} disagreed; {len(skipped)} with no chain "
              f"compared (figures not finite, or steps the precision cannot place); "
              f"{len(unchecked)} not checked; {len(failed)} "
              "could not run"
              + (f" ({', '.join(dict.fromkeys(r['model'] for r in failed))})" if failed
                 else "") + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    from model_rows import CHUNK_HELP, chosen_models, model_parser, rows_here, rows_in_processes

    parser = model_parser(__doc__)
    _options(parser)
    parser.add_argument("--chunk", type=int, default=0, help=CHUNK_HELP)
    args = parser.parse_args()
    names, models = chosen_models(parser, args.models)
    if args.chunk:
        options = ["--precisions", args.precisions, "--draws", str(args.draws),
                   "--tune", str(args.tune), "--sampler", args.sampler] + (
                       ["--unheld"] if args.unheld else []) + (
                       ["--reference"] if args.reference else [])
        rows = rows_in_processes(__file__, names, args.chunk, options)
    else:
        if args.unheld:
            from pymc_accel.backends import run_logp

            run_logp.ZERO_COINCIDENT_DISTANCES = False
        rows = []
        for precision in args.precisions.split(","):
            def compare(name, build, precision=precision):
                return check_model(name, build, precision, args.draws, args.tune,
                                   args.reference, args.sampler)

            rows += rows_here(names, models, compare)
    if args.markdown:
        command = "JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python " + " ".join(sys.argv)
        Path(args.markdown).write_text(markdown(rows, command))


if __name__ == "__main__":
    main()
