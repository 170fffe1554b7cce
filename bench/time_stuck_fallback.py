"""``auto``'s run of a model on seeds where a chain can start where the gradient is not finite:
its wall time, the sampler that gave the draws, the chains that never left their start, and the
report's note on a re-run (``pymc_accel.integration``'s fallback to nutpie, whose start is
drawn again until the log density and its gradient are finite).

Each seed runs in this process, one after another, with ``pm.sample``'s defaults (1000 + 1000
draws, 2 chains); the first pays the samplers' first use and compiles.

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/time_stuck_fallback.py \\
        --model intervals_2 --seeds 2,4

``--model`` takes a user sweep model too, as ``sweep:<function name>``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="intervals_2",
                   help="a model zoo.named() names, or sweep:<a bench/sweep_user_models.py model>")
    p.add_argument("--seeds", default="2,4")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import zoo

    import pymc_accel
    from pymc_accel.report import SelectionReport
    from pymc_accel.stuck_chains import stuck_chains

    for seed in (int(s) for s in args.seeds.split(",")):
        model = (zoo._sweep_model(args.model[len("sweep:"):]) if args.model.startswith("sweep:")
                 else zoo.named()[args.model]())
        start = time.perf_counter()
        idata = pymc_accel.sample(model=model, draws=1000, tune=1000, chains=2,
                                  progressbar=False, quiet=True, random_seed=seed)
        wall = time.perf_counter() - start
        report = SelectionReport.from_idata(idata)
        notes = [n for n in report.notes if "never left" in n or "barely moved" in n]
        print(f"{args.model} seed {seed}: {wall:.1f} s, draws from {report.chosen}, chains "
              f"stuck in the result: {stuck_chains(idata) or 'none'}; "
              f"{notes[0] if notes else 'no re-run'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
