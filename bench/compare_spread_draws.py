"""Does the posterior's spread at its mode (:mod:`pymc_accel.conditioning`) say what its draws
say?

For each model: the spread of the correlation scales of the inverse Hessian at the mode, as
the selector evaluates it, beside the same figure of the correlation matrix of nutpie's draws on
the unconstrained scale (``--chains`` chains of ``--tune`` + ``--draws`` draws, seed 1) and the
leapfrogs a draw nutpie ran there. Where the mode is not in the posterior's typical set (a
non-centred hierarchy's mode sets its group effects at 0 and its group scale large) the two
differ:

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/compare_spread_draws.py \\
        --models binomial_72,groups_53,data_groups_33,seed_small,spline_20,hsgp_33,adstock_11 \\
        --out docs/results/spread-draws-cpu-<date>.txt

A draws' figure needs more draws than dimensions: the smallest eigenvalue of a correlation
matrix of few draws is biased low, and its spread high.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The sampler runs' arguments, shared with ``compare_spread_gaussians.py``."""
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--out", default=None, help="also write the table here")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="binomial_72,groups_53,data_groups_33,seed_small,"
                   "spline_20,hsgp_33,adstock_11")
    add_run_arguments(p)
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import nutpie
    import zoo

    from pymc_accel.conditioning import correlation_spread, posterior_conditioning
    from pymc_accel.graph_building import initial_point
    from pymc_accel.profile import profile_and_logp

    makers = zoo.named()
    lines = [f"{'model':16s} {'d':>4s} {'mode: spread':>13s} {'cond(R)':>9s} "
             f"{'draws: spread':>14s} {'cond(R)':>9s} {'nutpie leapfrogs':>17s}"]
    print(lines[0], flush=True)
    for name in args.models.split(","):
        model = makers[name]()
        _, graph = profile_and_logp(model)
        at_mode = posterior_conditioning(graph, initial_point(model))
        compiled = nutpie.compile_pymc_model(model)
        idata = nutpie.sample(compiled, draws=args.draws, tune=args.tune, chains=args.chains,
                              seed=1, progress_bar=False, store_unconstrained=True)
        stats = idata["sample_stats"].to_dataset()
        draws = stats["unconstrained_draw"].values
        draws = draws.reshape(draws.shape[0] * draws.shape[1], -1)
        correlation = np.corrcoef(draws, rowvar=False)
        eig = np.linalg.eigvalsh(correlation)
        mode = ("none", "none") if at_mode is None else (
            f"{at_mode.value:.2f}", f"{at_mode.condition_number:.1f}")
        lines.append(f"{name:16s} {draws.shape[1]:4d} {mode[0]:>13s} {mode[1]:>9s} "
                     f"{correlation_spread(eig):14.2f} {eig[-1] / eig[0]:9.1f} "
                     f"{float(stats['n_steps'].mean()):17.1f}")
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"Command: python {' '.join(sys.argv)}\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
