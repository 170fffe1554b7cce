"""Every sampler's posterior against one reference's: a backend that runs a model but samples
the wrong distribution is a miss no timing shows.

The JAX samplers run the log density PyTensor's JAX conversion writes; the numba backend runs
the one PyTensor compiles with numba. A conversion that computes something else (a sparse
matrix product, a sort, a linear solve, a special function) would still give a result, and the
user sweep (``bench/sweep_user_models.py``) would print ``OK``. So, for each model, this runs
the reference sampler (nutpie on PyMC's numba-compiled log density, the graph PyMC itself
compiles) and every other sampler named, in the model's precision, with the same draws, chains
and seed, and compares each posterior variable's mean (free variables and deterministics) in
units of their combined Monte Carlo standard errors (ArviZ's ``mcse``) and their standard
deviations as a ratio, as ``bench/compare_float32_posteriors.py`` compares two precisions.

Models: the user sweep's (by function name) and the zoo's (by its names); default: the sweep's
eighth set.

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/compare_backend_posteriors.py \
        [--models car_spatial,...] [--samplers numpyro,blackjax_nuts,numba:driver=pymc]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

EIGHTH_SET = ("car_spatial,icar_spatial,stick_breaking_mixture,gp_latent,mv_random_walk,"
              "ode_logistic_growth,einsum_regression,sorted_cumsum,piecewise_searchsorted,"
              "linear_solve_likelihood,extreme_value_families,half_student_t_hierarchy")
#: The reference: nutpie on the numba-compiled log density
REFERENCE = "numba:driver=nutpie"
#: R-hat beyond which a sampler's chains are taken not to have mixed (ArviZ's own warning level)
RHAT_LIMIT = 1.01


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=EIGHTH_SET)
    p.add_argument("--samplers", default="numpyro,blackjax_nuts,numba:driver=pymc",
                   help="comma-separated; a sampler's options after colons, as "
                        "numba:driver=pymc")
    p.add_argument("--reference", default=REFERENCE)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--markdown", default=None, help="write the table here as well")
    return p.parse_args(argv)


def sampler_arguments(spec: str) -> dict:
    """``pymc_accel.sample``'s arguments for a sampler written as ``name:option=value:...``
    (colons: the list of samplers is comma-separated), as the user sweep reads its own."""
    import sweep_user_models

    return sweep_user_models.sampler_arguments(spec, separator=":")


def convergence(idata) -> tuple[float, float]:
    """The largest R-hat and the smallest bulk ESS over the posterior's elements (ArviZ's):
    a sampler whose chains have not mixed has a posterior that differs and says so; one that
    differs with R-hat near 1 is silently wrong."""
    import arviz as az
    import numpy as np

    post = idata.posterior.to_dataset()
    rhat = az.rhat(post).to_array().values
    ess = az.ess(post, method="bulk").to_array().values
    return float(np.nanmax(rhat)), float(np.nanmin(ess))


def _run(make, spec: str, args) -> object:
    """The sampler's InferenceData, or the first line of what it raised. A variable whose
    dims repeat a name is laid on one axis (:func:`pymc_accel.convergence.distinct_dims_view`),
    on which ArviZ computes, element by element, what it refuses on the variable's own dims."""
    import pymc_accel
    from pymc_accel.convergence import distinct_dims_view

    try:
        return distinct_dims_view(pymc_accel.sample(
            model=make(), draws=args.draws, tune=args.tune, chains=args.chains,
            random_seed=args.seed, progressbar=False, **sampler_arguments(spec)))
    except Exception as exc:  # a sampler that cannot run the model is a finding, not a stop
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}"


def main(argv=None) -> str:
    """Run the comparisons; return the Markdown table."""
    args = _parse(argv)
    warnings.filterwarnings("ignore")
    from compare_float32_posteriors import Z_LIMIT, compare, model_factory

    from pymc_accel.precision import divergence_fraction

    rows = []
    started = time.strftime("%H:%M")
    for name in args.models.split(","):
        make = model_factory(name)
        reference = _run(make, args.reference, args)
        if not isinstance(reference, str):  # read once for all the samplers compared to it
            reference_rhat = convergence(reference)[0]
            reference_divergent = divergence_fraction(reference)[0]
        for spec in args.samplers.split(","):
            # nothing to compare with where the reference could not run: not run either
            other = _run(make, spec, args) if not isinstance(reference, str) else None
            if isinstance(reference, str) or isinstance(other, str):
                failed = "; ".join(f"{s}: {r}" for s, r in ((args.reference, reference),
                                                            (spec, other)) if isinstance(r, str))
                row = f"| {name} | {spec} | — | — | — | — | — | run failed: {failed} |"
            else:
                c = compare(reference, other)
                rhat, ess = convergence(other)
                mixed = max(rhat, reference_rhat) <= RHAT_LIMIT
                if c["z"] <= Z_LIMIT:
                    verdict = "agree" if mixed else "agree (not converged: says little)"
                else:
                    verdict = "**differ**" if mixed else "differ, not converged"
                row = (f"| {name} | {spec} | {c['z']:.1f} ({c['where']}) | "
                       f"{c['sd_ratio'][0]:.2f}–{c['sd_ratio'][1]:.2f} | "
                       f"{reference_divergent:.0%} / {divergence_fraction(other)[0]:.0%} | "
                       f"{rhat:.3f} / {ess:.0f} | {reference_rhat:.3f} | {verdict} |")
            print(row, flush=True)
            rows.append(row)
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        f"Command: `JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python "
        f"bench/compare_backend_posteriors.py {command}` ({started}–{time.strftime('%H:%M')}; "
        f"{args.chains} chains x {args.tune} tune + {args.draws} draws, seed {args.seed}; "
        f"reference {args.reference})", "",
        "| model | sampler | largest |mean difference| / MCSE against the reference (where) | "
        "sd ratio, sampler / reference | divergent draws, reference / sampler | the sampler's "
        "largest R-hat / smallest bulk ESS | the reference's largest R-hat | posteriors |",
        "|---|---|---|---|---|---|---|---|", *rows, "",
        f"Means differ where some element's |difference| exceeds {Z_LIMIT:g} combined Monte "
        "Carlo standard errors (elements constant in the reference left out); \"not "
        f"converged\": the sampler's or the reference's largest R-hat is over {RHAT_LIMIT:g}, "
        "which ArviZ and PyMC warn of (a posterior with symmetric modes, a mixture's labels, "
        "leaves every sampler there, and the comparison says little).",
    ]
    text = "\n".join(lines)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    print(text)
    return text


if __name__ == "__main__":
    main()
