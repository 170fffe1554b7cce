"""Subnormal values in a model's float32 log density and gradient at posterior draws.

Arithmetic on subnormal floats can run many times slower on x86 CPUs, and float32 reaches them
where float64 does not (``exp(-x)`` for ``x`` beyond about 87). To see whether a model's float32
run could pay for them, this samples the model with ``pm.sample`` (float64), then evaluates the
float32 copy of the profile's log density and gradient
(:func:`pymc_accel.precision.float32_graph`, op by op in NumPy:
:class:`pymc_accel.graph_building.Evaluator`) at ``--points`` of the draws
and counts, per op, the subnormal values among its float32 outputs:

    JAX_PLATFORMS=cpu python bench/count_float32_subnormals.py --models seed_mid

NumPy's kernels are not XLA's, so a count of zero says the values the graph computes stay
clear of the subnormal range, not what XLA's own intermediate steps touch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def posterior_points(model, points: int, seed: int = 1) -> list[dict]:
    """``points`` draws of ``pm.sample`` (one chain, float64) on the unconstrained scale, by
    value variable name."""
    import numpy as np
    import pymc as pm

    with model:
        idata = pm.sample(draws=points, tune=300, chains=1, random_seed=seed,
                          progressbar=False, compute_convergence_checks=False,
                          idata_kwargs={"include_transformed": True})
    unconstrained = "unconstrained_posterior" in idata.children
    draws = idata["unconstrained_posterior"] if unconstrained else None
    out = []
    for i in range(points):
        point = {}
        for v in model.value_vars:
            source = draws if draws is not None and v.name in draws else idata.posterior
            point[v.name] = np.asarray(source[v.name].values[0, i])
        out.append(point)
    return out


def subnormals(model, points: list[dict]) -> dict[str, int]:
    """Subnormal float32 outputs, per op, of the float32 copy of ``model``'s log density and
    gradient evaluated at ``points`` (unconstrained values by value variable name)."""
    import numpy as np

    from pymc_accel.graph_building import Evaluator
    from pymc_accel.precision import float32_graph
    from pymc_accel.profile import profile_and_logp

    _, graph = profile_and_logp(model)
    value_vars = list(graph.value_vars)
    ins32, outs32 = float32_graph(value_vars, [graph.logp, *graph.grads])
    f = Evaluator(ins32, outs32)
    tiny = np.finfo(np.float32).tiny
    counts: dict[str, int] = {}

    def counted(thunk, node):
        def run():
            result = thunk()
            for cell in thunk.outputs:
                value = cell[0]
                if isinstance(value, np.ndarray) and value.dtype == np.float32:
                    n = int(np.count_nonzero((value != 0) & (np.abs(value) < tiny)))
                    if n:
                        counts[str(node.op)] = counts.get(str(node.op), 0) + n
            return result
        run.inputs, run.outputs = thunk.inputs, thunk.outputs
        return run

    f._thunks = [counted(t, n) for t, n in zip(f._thunks, f.nodes, strict=True)]
    for point in points:
        f(*[np.asarray(point[v.name], dtype="float32") for v in value_vars])
    return counts


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seed_mid")
    p.add_argument("--points", type=int, default=5)
    args = p.parse_args(argv)
    import zoo

    for name in args.models.split(","):
        model = zoo.named()[name]()
        counts = subnormals(model, posterior_points(model, args.points))
        print(f"{name}: {sum(counts.values())} subnormal float32 values over {args.points} "
              f"posterior draws" + (f" ({counts})" if counts else ""), flush=True)


if __name__ == "__main__":
    main()
