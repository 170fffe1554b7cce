"""Whether a model's conditioning at its initial point says how long NUTS's trees will be:
the check behind not pricing trees by it (``docs/benchmarks.md``, "A seventh set of held-out
families").

``costmodel.nuts_gradients_per_draw`` prices nutpie's leapfrogs per draw by the dimension
alone (``3.4 d^(1/4)``). A posterior whose variables are correlated needs longer trees than its
dimension says, since a diagonal mass matrix cannot undo a correlation: the B-spline regression
``spline_20`` ran nutpie at 25 leapfrogs a draw against 7.2 priced, NumPyro at 109. Here
each model's Hessian of ``-log p`` at its initial point is taken by central differences of
PyMC's gradient (unconstrained space, Jacobian included), scaled to unit diagonal (what a
diagonal mass matrix can do), and its condition number (largest eigenvalue over the smallest
in magnitude) set beside the leapfrogs per draw the regret runs recorded (each file's median
over its runs, the median over files, by adaptation: nutpie's, PyMC's, Stan's in NumPyro's
float64) and the dimension's law.
One JSON line per model with at most ``--max-dim`` free dimensions:

    python bench/compare_initial_conditioning.py docs/results/regret-cpu-1000-2026-11-30-*.json

The regret runs' files are read for their leapfrogs alone; no sampler runs here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def observed_leapfrogs(paths: list[str]) -> dict[str, dict[str, list[float]]]:
    """model -> adaptation -> each result file's median leapfrogs per draw
    (:func:`fit_trajectory_efficiency.medians`), from regret result files."""
    from fit_trajectory_efficiency import medians

    out: dict[str, dict[str, list[float]]] = {}
    for path in paths:
        for record in json.loads(Path(path).read_text()).get("models", []):
            for candidate, (trees, _) in medians(record).items():
                adaptation = ("nutpie" if "driver=nutpie" in candidate
                              else "pymc" if "driver=pymc" in candidate
                              else "stan" if candidate.startswith("numpyro[cpu,float64") else None)
                if adaptation is not None:
                    out.setdefault(record["model"], {}).setdefault(adaptation, []).append(trees)
    return out


def scaled_condition_number(model, step: float = 1e-5) -> tuple[int, float, int]:
    """``(dimension, condition number, negative eigenvalues)`` of the unit-diagonal Hessian of
    ``-log p`` at the model's initial point."""
    import numpy as np
    from pymc.blocking import DictToArrayBijection, RaveledVars

    point = DictToArrayBijection.map(model.initial_point())
    dlogp = model.compile_dlogp(jacobian=True)

    def gradient(x):
        return np.asarray(dlogp(DictToArrayBijection.rmap(RaveledVars(x, point.point_map_info))))

    d = point.data.size
    hessian = np.empty((d, d))
    for i in range(d):
        e = np.zeros(d)
        e[i] = step
        hessian[:, i] = -(gradient(point.data + e) - gradient(point.data - e)) / (2 * step)
    hessian = (hessian + hessian.T) / 2
    diag = np.abs(np.diag(hessian))
    diag[diag == 0] = 1.0
    eig = np.linalg.eigvalsh(hessian / np.sqrt(np.outer(diag, diag)))
    return d, float(eig.max() / max(np.abs(eig).min(), 1e-12)), int((eig < 0).sum())


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", nargs="+")
    p.add_argument("--max-dim", type=int, default=700)
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import zoo

    models = zoo.named()
    for name, by_adaptation in sorted(observed_leapfrogs(args.results).items()):
        if name not in models:
            continue
        model = models[name]()
        if sum(v.size for v in model.initial_point().values()) > args.max_dim:
            continue
        d, kappa, negative = scaled_condition_number(model)
        law = 3.4 * d**0.25
        line = {"model": name, "dim": d, "condition_number": round(kappa, 2),
                "negative_eigenvalues": negative, "law": round(law, 2)}
        for adaptation, runs in sorted(by_adaptation.items()):
            line[adaptation] = round(statistics.median(runs), 2)
        if "nutpie" in line:
            line["nutpie_over_law"] = round(line["nutpie"] / law, 2)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
