"""The float32 guard judged by the posteriors: NumPyro's float32 draws against its float64 draws.

The guard (:func:`pymc_accel.precision.check_float32`) passes float32 where the log density and
its gradient agree with float64 at a few points. What a user needs is the same posterior. For
each model this runs the check, then NumPyro in both precisions (float32 named, so the check
does not stand in the way; the same seeds and chains), and compares each posterior variable's
mean (free variables and deterministics) between the two in units of their Monte Carlo standard
errors (ArviZ's ``mcse``), and their standard deviations as a ratio. A check that passes float32
on a model whose float32 means lie many standard errors from float64's is a miss of its first
line; the second, the re-run in float64 of an automatically chosen float32 run that diverged
heavily (:func:`pymc_accel.precision.divergence_fraction`), is read from the float32 run's
draws.

Models: the user sweep's (``bench/sweep_user_models.py``, by function name) and the zoo's (by
its names), defaulting to the sweep's sixth set, whose log densities call special functions.

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/compare_float32_posteriors.py \
        [--models rice,ex_gaussian,...] [--draws 1000 --tune 1000 --chains 4]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SIXTH_SET = ("rice,ex_gaussian,wald,kumaraswamy,skew_student_t,asymmetric_laplace,beta_binomial,"
             "dirichlet_multinomial,hurdle_poisson,euler_maruyama,garch11,matrix_normal,"
             "mv_student_t")
#: Standard errors apart beyond which two precisions' means are taken to differ: with a dozen
#: variables' elements compared per model, |z| > 4 by chance has odds of about 1 in 1,000.
Z_LIMIT = 4.0


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=SIXTH_SET)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--markdown", default=None, help="write the table here as well")
    return p.parse_args(argv)


def model_factory(name: str):
    """A function making the model called ``name``: the sweep's, else the zoo's."""
    import pymc as pm

    import sweep_user_models
    from zoo import named

    by_sweep = {f.__name__: f for f in sweep_user_models.MODELS}
    if name in by_sweep:
        return lambda: by_sweep[name](pm)
    return named()[name]


def compare(idata64, idata32) -> dict:
    """The largest |difference of means| / (combined MCSE) over the posterior's elements,
    where it is, and the range of the float32 / float64 standard deviation ratios."""
    import arviz as az
    import numpy as np

    post64 = idata64.posterior.to_dataset()
    post32 = idata32.posterior.to_dataset().astype("float64")
    se64, se32 = az.mcse(post64, method="mean"), az.mcse(post32, method="mean")
    worst, where, ratios = 0.0, "", []
    for name in post64.data_vars:
        if name not in post32:
            continue
        m64 = post64[name].mean(("chain", "draw")).values
        m32 = post32[name].mean(("chain", "draw")).values
        z = np.abs(m32 - m64) / np.sqrt(se64[name].values**2 + se32[name].values**2)
        sd64 = post64[name].std(("chain", "draw")).values
        sd32 = post32[name].std(("chain", "draw")).values
        # an element constant in float64 (a correlation matrix's diagonal) is left out: float32
        # rounds it to a spread of an ulp, which no standard error measures
        varies = sd64 > 1e-6 * np.maximum(1.0, np.abs(m64))
        ratios.extend(np.ravel((sd32 / np.where(varies, sd64, 1.0))[varies]).tolist())
        z = np.where(np.isfinite(z) & varies, z, 0.0)
        if z.size and float(z.max()) > worst:
            worst, where = float(z.max()), name
    return {"z": worst, "where": where,
            "sd_ratio": (min(ratios), max(ratios)) if ratios else (math.nan, math.nan)}


def main(argv=None) -> str:
    """Run the comparisons; return the Markdown table."""
    args = _parse(argv)
    warnings.filterwarnings("ignore")
    import pymc_accel
    from pymc_accel.precision import DIVERGENCE_FALLBACK_FRACTION, divergence_fraction

    rows = []
    started = time.strftime("%H:%M")
    for name in args.models.split(","):
        make = model_factory(name)
        try:
            check = pymc_accel.check_float32(make())
            verdict = "safe" if check.safe else "unsafe"
            errors = f"{check.logp_rel_error:.1e} / {check.grad_rel_error:.1e}"
        except Exception as exc:  # the check itself failing is a finding too
            verdict, errors = f"raised {type(exc).__name__}", "—"
        runs = {}
        for precision in ("float64", "float32"):
            try:
                runs[precision] = pymc_accel.sample(
                    model=make(), nuts_sampler="numpyro", precision=precision,
                    draws=args.draws, tune=args.tune, chains=args.chains,
                    random_seed=args.seed, progressbar=False)
            except Exception as exc:
                runs[precision] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
        if all(not isinstance(r, str) for r in runs.values()):
            c = compare(runs["float64"], runs["float32"])
            differ = c["z"] > Z_LIMIT
            outcome = ("**differ**" if differ else "agree")
            if differ and verdict == "safe":
                outcome += " (**the check passed it**)"
            shares = [divergence_fraction(runs[p])[0] for p in ("float64", "float32")]
            fallback = shares[1] > DIVERGENCE_FALLBACK_FRACTION
            row = (f"| {name} | {verdict} | {errors} | {c['z']:.1f} ({c['where']}) | "
                   f"{c['sd_ratio'][0]:.2f}–{c['sd_ratio'][1]:.2f} | {shares[0]:.0%} / "
                   f"{shares[1]:.0%}{' (re-run)' if fallback else ''} | {outcome} |")
        else:
            failed = "; ".join(f"{p}: {r}" for p, r in runs.items() if isinstance(r, str))
            row = f"| {name} | {verdict} | {errors} | — | — | — | run failed: {failed} |"
        print(row, flush=True)
        rows.append(row)
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        f"Command: `JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python "
        f"bench/compare_float32_posteriors.py {command}` ({started}–{time.strftime('%H:%M')}; "
        f"{args.chains} chains x {args.tune} tune + {args.draws} draws, seed {args.seed})", "",
        "| model | float32 check | its logp / gradient rel. errors | largest |mean difference| "
        "/ MCSE (where) | sd ratio, float32 / float64 | divergent draws, float64 / float32 | "
        "posteriors |",
        "|---|---|---|---|---|---|---|", *rows, "",
        f"Means differ where some element's |difference| exceeds {Z_LIMIT:g} combined Monte "
        "Carlo standard errors (elements constant in float64 left out). \"re-run\": the float32 "
        f"run's divergent share is over {DIVERGENCE_FALLBACK_FRACTION:.0%}, so a float32 run "
        "pymc-accel chose itself would have been re-run in float64 "
        "(`precision.DIVERGENCE_FALLBACK_FRACTION`); here float32 was named, and the user's "
        "choice wins.",
    ]
    text = "\n".join(lines)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    print(text)
    return text


if __name__ == "__main__":
    main()
