"""JAX's compiled gradient of a model's log density beside PyTensor's, in float64.

A JAX sampler (NumPyro's NUTS, DEER) never runs PyTensor's gradient: it jaxifies the log
density and differentiates it with JAX's rules inside a program XLA compiles. The float32
check (:func:`pymc_accel.precision.check_float32`) compares float32 to float64 and takes a
float64 gradient to be right; this asks whether it is right for the JAX samplers, at the
check's points (the initial point and its jittered copies, :func:`pymc_accel.precision._points`
with the check's seed: all ten, the four it compares and the six it asks to be finite). Per
model, the largest relative gradient error (the check's measure, ``|g - g_ref| /
max(|g_ref|, 1)``) of

- ``run_jit``: the log density a JAX run jaxifies (:func:`pymc_accel.backends.run_logp.
  jaxified_logp`), differentiated by ``jax.value_and_grad`` under ``jax.jit``, as a sampler
  runs it;
- ``run_flat_jit``: the same with the position one flat vector, unraveled inside the compiled
  function, as pymc-accel's NumPyro and BlackJAX runs hand it to the sampler
  (:mod:`pymc_accel.backends.flat_position`);
- ``unheld_jit`` and ``unheld_flat_jit``: ``run_jit`` and ``run_flat_jit`` with
  :data:`pymc_accel.backends.run_logp.ZERO_COINCIDENT_DISTANCES` off, the run's log density as
  it was before :mod:`pymc_accel.rewrites.coincident_distances`;
- ``run_eager``: the function and gradient of ``run_jit`` run op by op, without ``jax.jit``
  (computed only where a compiled way's error is over ``MARK``, to say whether the compilation
  makes it);
- ``pymc_jit``: PyMC's own ``get_jaxified_logp`` of the model under ``jax.jit``, which is what
  ``pm.sample(nuts_sampler="numpyro")`` runs without pymc-accel;

against PyTensor's compiled float64 gradient (``model.compile_dlogp``), and the largest relative
error of a central finite difference of PyTensor's log density (step 1e-6) against the same
gradient, the reference's own check, for models of at most ``MAX_DIFFERENCED`` free values.
One JSON line per model:

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/compare_jax_gradient.py \\
        --models sparse_gp,periodic_gp,...|all [--markdown FILE]

A model whose compiled error is large where ``run_eager``'s is not has a gradient that XLA's
compilation changes, not the jaxification: a JAX sampler runs it with a gradient that is not the
log density's. ``marked`` says whether any compiled way's error is over ``MARK``; ``fixed``,
whether only the ways without the zeroed distances are; ``points_over``, for each way, the
points (counted among those compared; 0 is the initial point) where its error is over ``MARK``;
``held``, how many distance elements
the rewrite holds at zero, and ``rewrite_seconds``, the least of three timings of it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: the relative gradient error above which a row is marked (the float32 check's tolerance)
MARK = 1e-3
#: the largest free dimension whose reference gradient is checked by finite differences
MAX_DIFFERENCED = 50


def _flat(parts):
    """One float64 vector of a gradient given as a list of arrays or as one array."""
    import numpy as np

    if not isinstance(parts, (list, tuple)):
        return np.ravel(np.asarray(parts, dtype=np.float64))
    return (np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in parts])
            if parts else np.zeros(0))


def _error(g, ref) -> float:
    import numpy as np

    if not np.all(np.isfinite(g)):
        return float("inf")
    return float(np.linalg.norm(g - ref)) / max(float(np.linalg.norm(ref)), 1.0)


def compare_model(name: str, build) -> dict:
    """The largest relative float64 gradient errors of JAX's ways of differentiating one model's
    log density against PyTensor's gradient, at the float32 check's points."""
    import jax
    import numpy as np
    from jax.flatten_util import ravel_pytree
    from pymc.sampling.jax import get_jaxified_logp

    from pymc_accel.backends import run_logp
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jaxified_logp
    from pymc_accel.precision import FINITENESS_POINTS, JITTERED_POINTS, _points
    from pymc_accel.profile import profile_and_logp

    model = build()
    _, graph = profile_and_logp(model)
    points = _points(model, JITTERED_POINTS + FINITENESS_POINTS, None, 0)
    names = [v.name for v in model.value_vars]
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    errors = {"run_jit": 0.0, "run_flat_jit": 0.0, "unheld_jit": 0.0, "unheld_flat_jit": 0.0,
              "pymc_jit": 0.0, "run_eager": None, "finite_difference": 0.0}
    compared = []
    over: dict[str, list[int]] = {}  # way -> the points (0: the initial point) over MARK
    with jax_precision("float64"):
        run_logp.ZERO_COINCIDENT_DISTANCES = False
        try:
            unheld = jaxified_logp(model, graph, negative_logp=True, device="cpu")
        finally:
            run_logp.ZERO_COINCIDENT_DISTANCES = True
        run = jaxified_logp(model, graph, negative_logp=True, device="cpu")
        pymc_fn = get_jaxified_logp(model, negative_logp=True)
        _, unravel = ravel_pytree([np.asarray(points[0][n]) for n in names])
        ways = {"run_jit": jax.jit(jax.value_and_grad(run)),
                "run_flat_jit": jax.jit(jax.value_and_grad(lambda flat: run(unravel(flat)))),
                "unheld_jit": jax.jit(jax.value_and_grad(unheld)),
                "unheld_flat_jit": jax.jit(jax.value_and_grad(
                    lambda flat: unheld(unravel(flat)))),
                "pymc_jit": jax.jit(jax.value_and_grad(pymc_fn))}
        for point in points:
            ref = np.asarray(dlogp(point), dtype=np.float64)
            if not (np.isfinite(logp(point)) and np.all(np.isfinite(ref))):
                continue  # no reference here
            args = [np.asarray(point[n]) for n in names]
            compared.append((args, ref))
            for way, fn in ways.items():
                position = ravel_pytree(args)[0] if way.endswith("flat_jit") else args
                error = _error(_flat(fn(position)[1]), ref)
                if error > MARK:
                    over.setdefault(way, []).append(len(compared) - 1)
                errors[way] = max(errors[way], error)
            if ref.size <= MAX_DIFFERENCED:
                difference = _central_difference(logp, point, names)
                errors["finite_difference"] = max(errors["finite_difference"],
                                                  _error(difference, ref))
            else:
                errors["finite_difference"] = None
        worst = max(errors[way] for way in ways)
        if worst > MARK:
            eager = jax.value_and_grad(run)
            errors["run_eager"] = max(_error(_flat(eager(args)[1]), ref)
                                      for args, ref in compared)
    ours = max(errors["run_jit"], errors["run_flat_jit"])
    return {"model": name, "points": len(compared), **errors, "marked": worst > MARK,
            "fixed": worst > MARK and ours <= MARK, "points_over": over,
            **_rewrite_cost(model, graph)}


def _rewrite_cost(model, graph) -> dict:
    """How many distance elements the rewrite holds at zero and the seconds it takes, the least
    of three calls (the search of the graph, the two points and their evaluation)."""
    from pymc_accel.precision import _points
    from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

    by_name = {v.name: v for v in graph.value_vars}
    inputs = [by_name[v.name] for v in model.value_vars]

    def points():
        return [[p[v.name] for v in model.value_vars] for p in _points(model, 1, None, 0)]

    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        _, held = zeroed_coincident_distances([graph.logp], inputs, points)
        seconds.append(time.perf_counter() - start)
    return {"held": held, "rewrite_seconds": round(min(seconds), 4)}


def _central_difference(logp, point: dict, names: list[str], step: float = 1e-6):
    """The gradient of ``logp`` at ``point`` by central differences, in the order
    ``compile_dlogp`` returns it (``names``: the value variables in the model's order)."""
    import numpy as np

    out = []
    for name in names:
        value = np.asarray(point[name], dtype=np.float64)
        flat = value.ravel()
        for i in range(flat.size):
            up, down = flat.copy(), flat.copy()
            up[i] += step
            down[i] -= step
            out.append((logp({**point, name: up.reshape(value.shape)})
                        - logp({**point, name: down.reshape(value.shape)})) / (2 * step))
    return np.asarray(out)


def markdown(rows: list[dict], command: str) -> str:
    """A table of the errors, marked rows first."""
    lines = [f"Command: `{command}`", "",
             f"Relative float64 gradient errors against PyTensor's at the float32 check's "
             f"points; **bold**: over {MARK:g} under ``jax.jit``.", "",
             "| model | points | JAX run, jit | JAX run, flat, jit | without the zeroed distances, "
             "jit | without, flat, jit | PyMC's jaxified, jit | JAX run, eager | "
             "finite difference |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (not r.get("marked", False), r["model"])):
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} | | | | | | | |")
            continue
        cells = [f"**{r[k]:.2g}**" if k.endswith("jit") and r[k] > MARK
                 else "-" if r[k] is None else f"{r[k]:.2g}"
                 for k in ("run_jit", "run_flat_jit", "unheld_jit", "unheld_flat_jit", "pymc_jit",
                           "run_eager", "finite_difference")]
        lines.append(f"| {r['model']} | {r['points']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    from model_rows import CHUNK_HELP, chosen_models, model_parser, rows_here, rows_in_processes

    parser = model_parser(__doc__)
    parser.add_argument("--chunk", type=int, default=0, help=CHUNK_HELP)
    args = parser.parse_args()

    names, models = chosen_models(parser, args.models)
    rows = (rows_in_processes(__file__, names, args.chunk) if args.chunk
            else rows_here(names, models, compare_model))
    if args.markdown:
        command = "JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python " + " ".join(sys.argv)
        Path(args.markdown).write_text(markdown(rows, command))


if __name__ == "__main__":
    main()
