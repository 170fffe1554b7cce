"""Which models' log densities have a guarded distance the coinciding-distance rewrite looks at,
and how many elements it holds at zero.

:mod:`pymc_accel.rewrites.coincident_distances` searches every JAX run's log density for a sum
a square root takes through a guard against negative values (PyMC's kernels' ``clip``, a
hand-written kernel's ``maximum``, ``abs`` or ``switch``) and holds its elements that are zero
at the initial point and a jittered copy. This runs the search and the hold on the log density
a JAX run builds (:func:`pymc_accel.backends.run_logp.run_graph`), without compiling anything,
and prints one JSON line per model: the guarded sums found, their guards, and the elements held::

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/count_guarded_distances.py \\
        --models all [--markdown FILE]

A model with no row in the markdown table's first part had nothing found: the rewrite leaves
its runs as they were.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def count_model(name: str, build) -> dict:
    """The guarded sums of one model's run log density, their guards and the elements held."""
    from pymc_accel.backends.run_logp import run_graph
    from pymc_accel.precision import _points
    from pymc_accel.rewrites.coincident_distances import (
        _guarded,
        guarded_distances,
        zeroed_coincident_distances,
    )

    model = build()
    graph = run_graph(model)
    found = guarded_distances([graph.logp])
    guards = sorted({type(client.op.scalar_op).__name__
                     for summed in found for client in graph_clients(graph.logp, summed)
                     if _guarded(client.outputs[0]) is summed})
    held = 0
    if found:
        by_name = {v.name: v for v in graph.value_vars}
        inputs = [by_name[v.name] for v in model.value_vars]

        def points():
            return [[p[v.name] for v in model.value_vars] for p in _points(model, 1, None, 0)]

        held = zeroed_coincident_distances([graph.logp], inputs, points)[1]
    return {"model": name, "found": len(found), "guards": guards, "held": held}


def graph_clients(output, var) -> list:
    """The elementwise nodes of ``output``'s graph that take ``var`` as an input."""
    from pytensor.graph.traversal import applys_between, graph_inputs
    from pytensor.tensor.elemwise import Elemwise

    return [node for node in applys_between(list(graph_inputs([output])), [output])
            if isinstance(node.op, Elemwise) and any(x is var for x in node.inputs)]


def markdown(rows: list[dict], command: str) -> str:
    """The models where something was found, then how many were searched."""
    lines = [f"Command: `{command}`", "",
             "| model | guarded sums | their guards' ops | elements held |", "|---|---|---|---|"]
    hits = [r for r in rows if r.get("found")]
    for r in sorted(hits, key=lambda r: r["model"]):
        lines.append(f"| {r['model']} | {r['found']} | {', '.join(r['guards'])} | {r['held']} |")
    failed = [r for r in rows if "error" in r]
    lines += ["", f"{len(rows)} models searched; {len(hits)} with a guarded sum; "
              f"{len(failed)} whose run log density could not be built"
              + (f" ({', '.join(r['model'] for r in failed)})" if failed else "") + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    from model_rows import main_of

    main_of(__doc__, count_model, markdown)


if __name__ == "__main__":
    main()
