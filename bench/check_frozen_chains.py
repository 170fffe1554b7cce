"""Which runs have chains that barely moved: :func:`pymc_accel.stuck_chains.frozen_chains`
on named samplers' runs, with each chain's share of draws at the maximum tree depth.

``frozen_chains`` decides whether ``auto``'s run is re-run with another sampler, so it must
find the chains whose step size collapsed in tuning (a latent Student-t process's NumPyro
chains) and no others (a funnel's slow chains, a small model's healthy ones). Each run goes
through :func:`pymc_accel.sample` with the sampler named, so nothing is re-run: a named
sampler's frozen chains are warned of, and kept.

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/check_frozen_chains.py \
        --models funnel,eight_schools,student_t_process --samplers numpyro,numba \
        [--seeds 1,2] [--markdown docs/results/X.md]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="funnel,eight_schools,student_t_process")
    p.add_argument("--samplers", default="numpyro,numba")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--markdown", default=None, help="write the table here as well")
    return p.parse_args(argv)


def main(argv=None) -> str:
    """Run every (model, sampler, seed); return the Markdown table."""
    args = _parse(argv)
    warnings.filterwarnings("ignore")
    import numpy as np
    import pymc as pm
    from compare_backend_posteriors import sampler_arguments

    import pymc_accel
    import sweep_user_models
    import zoo
    from pymc_accel.stuck_chains import _at_max_depth, frozen_chains

    factories = {**zoo.named(), **zoo.held_out()}
    for make in sweep_user_models.MODELS:
        factories[make.__name__] = (lambda make=make: make(pm))
    started = time.strftime("%H:%M")
    rows = []
    for name in args.models.split(","):
        for spec in args.samplers.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                idata = pymc_accel.sample(
                    model=factories[name](), **sampler_arguments(spec), draws=args.draws,
                    tune=args.tune, chains=args.chains, progressbar=False, random_seed=seed)
                at_max = _at_max_depth(idata)
                shares = ("—" if at_max is None
                          else " / ".join(f"{s:.0%}" for s in at_max.mean(axis=1)))
                steps = idata.sample_stats.get("step_size")
                step = ("—" if steps is None else " / ".join(
                    f"{s:.1e}" for s in np.asarray(steps)[:, -1]))
                frozen = frozen_chains(idata)
                rows.append(f"| {name} | {spec} | {seed} | {shares} | {step} | "
                            f"{', '.join(map(str, frozen)) or 'none'} |")
                print(rows[-1], flush=True)
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"Command: `JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python "
             f"bench/check_frozen_chains.py {command}` ({started}–{time.strftime('%H:%M')}; "
             f"{args.chains} chains x {args.tune} tune + {args.draws} draws)", "",
             "| model | sampler | seed | draws at the maximum tree depth, per chain | "
             "last step size, per chain | frozen chains |", "|---|---|---|---|---|---|",
             *rows]
    table = "\n".join(lines) + "\n"
    if args.markdown:
        Path(args.markdown).write_text(table)
    print(table)
    return table


if __name__ == "__main__":
    main()
