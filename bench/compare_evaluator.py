"""The evaluator against PyTensor's compiled function: the log density and gradient of every
zoo, held-out and user-sweep model at its initial point.

:class:`pymc_accel.graph_building.Evaluator` computes a graph op by op in Python without a
PyTensor function; the float32 check, the scale spread and the start check read its values.
Where it computes something else than the function a sampler compiles, those read wrong
values and nothing fails: until 2026-11-30 it computed the reciprocal of an integer in NumPy's
integer arithmetic (an ``Exponential(2)`` prior started at log(0)) and could not sum more than
31 terms. For each model this evaluates the profile's log density and gradient at the
initial point the evaluator computes, both ways, and prints the largest relative difference
(``|a - b| / max(1, |b|)``), whether that initial point is PyMC's own, and what the float32
check, which evaluates with it, says.

    JAX_PLATFORMS=cpu PYMC_ACCEL_PROFILE_CACHE=off python bench/compare_evaluator.py \
        [--models a,b] [--markdown docs/results/X.md]

Run from this checkout with an older checkout's package first on ``PYTHONPATH`` (``git
worktree add``), it compares that version's evaluator and check on the same models.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: too large to evaluate op by op in a benchmark's minutes
LEFT_OUT = ("seed_large", "seed_full")
#: differences beyond this are a disagreement (float64 rounding of long sums stays under 1e-9)
TOLERANCE = 1e-8


def models() -> dict:
    """Every model of the zoo, its held-out set and the user sweep, by name."""
    import pymc as pm

    import sweep_user_models
    import zoo

    factories = {**zoo.named(), **zoo.held_out()}
    for make in sweep_user_models.MODELS:
        factories[make.__name__] = (lambda make=make: make(pm))
    return {name: f for name, f in factories.items() if name not in LEFT_OUT}


def compare(model) -> tuple[float | None, bool, str]:
    """The largest relative difference between the evaluator and PyTensor's function (None
    where the profile has no gradient), whether the evaluator's initial point is PyMC's, and
    what raised, if anything did."""
    import numpy as np
    import pytensor

    from pymc_accel.graph_building import Evaluator, initial_point
    from pymc_accel.profile import profile_and_logp

    point = initial_point(model)
    pymcs = model.initial_point()
    same_start = all(np.allclose(point[k], pymcs[k], equal_nan=True) for k in pymcs)
    graph = profile_and_logp(model)[1]
    if graph.grads is None:
        return None, same_start, ""
    inputs, outputs = list(graph.value_vars), [graph.logp, *graph.grads]
    values = [point[v.name] for v in inputs]
    try:  # at a start the evaluator got wrong, PyTensor's parameter checks can raise
        want = pytensor.function(inputs, outputs, on_unused_input="ignore")(*values)
    except Exception as exc:
        return None, same_start, (f"(PyTensor's function) {type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0][:80]}")
    try:
        got = Evaluator(inputs, outputs)(*values)
    except Exception as exc:  # a graph the evaluator cannot run is a finding
        return None, same_start, f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    worst = max(float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))) if np.size(b) else 0.0
                for a, b in zip(got, want, strict=True))
    return worst, same_start, ""


def float32_verdict(model) -> str:
    """What :func:`pymc_accel.check_float32` says of ``model``, as one cell: the verdict and
    the float32 log density's and gradient's relative errors, or what it raised."""
    import pymc_accel

    try:
        check = pymc_accel.check_float32(model)
    except Exception as exc:  # the check is public: what it raises is a finding
        return f"raised {type(exc).__name__}"
    return (f"{'safe' if check.safe else 'unsafe'} ({check.logp_rel_error:.1e} / "
            f"{check.grad_rel_error:.1e}; {check.points} points, {check.graph})")


def main(argv=None) -> str:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--markdown", default=None, help="write the table here as well")
    p.add_argument("--models", default=None,
                   help="comma-separated names (default: every model, about 150)")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    started = time.strftime("%H:%M")
    rows, agree, raised = [], 0, 0
    chosen = models()
    if args.models:
        unknown = sorted(set(args.models.split(",")) - set(chosen))
        if unknown:
            p.error(f"unknown models: {', '.join(unknown)}")
        chosen = {name: chosen[name] for name in args.models.split(",")}
    for name, make in chosen.items():
        worst, same_start, error = compare(make())
        if error:
            raised += 1
            verdict = f"raised {error}"
        elif worst is None:
            verdict = "no gradient"
        else:
            agree += worst <= TOLERANCE
            verdict = "agree" if worst <= TOLERANCE else "**differ**"
        shown = "—" if worst is None else f"{worst:.1e}"
        rows.append(f"| {name} | {shown} | {'yes' if same_start else '**no**'} | {verdict} | "
                    f"{float32_verdict(make())} |")
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        f"Command: `JAX_PLATFORMS=cpu PYMC_ACCEL_PROFILE_CACHE=off python "
        f"bench/compare_evaluator.py {command}` ({started}–{time.strftime('%H:%M')})", "",
        "| model | largest relative difference, log density and gradient | initial point is "
        "PyMC's | | float32 check (logp / gradient relative errors) |", "|---|---|---|---|---|",
        *rows, "",
        f"{agree} of {len(rows)} models agree within {TOLERANCE:g}; the evaluator raised on "
        f"{raised} (where it raises, the float32 check goes on with the log density as the "
        "backends rewrite it, and the selection has no scale spread).",
    ]
    text = "\n".join(lines)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    print(text)
    return text


if __name__ == "__main__":
    main()
