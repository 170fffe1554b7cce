"""Which figure of a correlation matrix sets NUTS's tree length: its condition number or the
spread of its scales (:mod:`pymc_accel.conditioning`)?

Gaussians of dimension ``--dim`` (20), each variable of variance 1, so a diagonal mass matrix
leaves their correlation matrix ``R`` as it is: independent; equicorrelated at 0.95 and 0.995
(one wide direction, ``1 + (d - 1) rho``, and ``d - 1`` narrow ones alike, ``1 - rho``, as a
non-centred hierarchy's group effects sharing its intercept); and negatively equicorrelated so
that one direction is narrow (its eigenvalue 0.01 and 1e-4) and the rest alike, as a spline's
coefficients against its intercept. For each: ``cond(R)``, the spread (the mean over ``R``'s
eigenvalues of ``sqrt(lambda_i / lambda_min)``) and the leapfrogs a draw nutpie and PyMC's NUTS
run, ``--chains`` chains of ``--tune`` + ``--draws`` draws, seed 1. No sampler here is timed:

    JAX_PLATFORMS=cpu python bench/compare_spread_gaussians.py \\
        --out docs/results/spread-gaussians-cpu-<date>.txt
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from compare_spread_draws import add_run_arguments  # noqa: E402

from pymc_accel.conditioning import correlation_spread  # noqa: E402


def matrices(d: int) -> list[tuple[str, np.ndarray]]:
    """The correlation matrices compared, by name."""
    eye, ones = np.eye(d), np.ones((d, d))

    def equicorrelated(rho):
        return (1 - rho) * eye + rho * ones

    return [("independent", eye),
            ("equicorrelated 0.95 (one wide)", equicorrelated(0.95)),
            ("equicorrelated 0.995 (one wide)", equicorrelated(0.995)),
            ("one narrow, its eigenvalue 0.01", equicorrelated(-0.99 / (d - 1))),
            ("one narrow, its eigenvalue 1e-4", equicorrelated(-0.9999 / (d - 1)))]


def leapfrogs(corr: np.ndarray, sampler: str, args: argparse.Namespace) -> float:
    """Mean leapfrogs a draw of ``sampler`` on a zero-mean Gaussian of correlation ``corr``."""
    import pymc as pm

    with pm.Model():
        pm.MvNormal("x", mu=np.zeros(len(corr)), cov=corr)
        idata = pm.sample(args.draws, tune=args.tune, chains=args.chains, nuts_sampler=sampler,
                          progressbar=False, random_seed=1, compute_convergence_checks=False)
    stats = idata.sample_stats
    return float((stats["n_steps"] if "n_steps" in stats else stats["tree_size"]).mean())


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=20)
    add_run_arguments(p)
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    lines = [f"{'correlation':34s} {'cond(R)':>9s} {'spread':>7s} {'nutpie':>7s} {'PyMC':>7s}"]
    print(lines[0], flush=True)
    for name, corr in matrices(args.dim):
        eig = np.linalg.eigvalsh(corr)
        spread = correlation_spread(eig)
        ran = [leapfrogs(corr, sampler, args) for sampler in ("nutpie", "pymc")]
        lines.append(f"{name:34s} {eig[-1] / eig[0]:9.1f} {spread:7.2f} {ran[0]:7.1f} "
                     f"{ran[1]:7.1f}")
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"Command: python {' '.join(sys.argv)}\n"
                    "Leapfrogs a draw: the mean over every chain's draws.\n\n"
                    + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
