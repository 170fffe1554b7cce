"""What the run history's record of a run costs, as ``pymc_accel.sample`` pays it: the record
(:func:`pymc_accel.history.record`) timed inside real runs at ``pm.sample``'s defaults
(1000 + 1000 draws, ``max(2, cores)`` chains, convergence checks on, so ArviZ's statistics
are imported as they are for a user), each on a fresh model, in an empty run history beside
this machine's figures.

    JAX_PLATFORMS=cpu python bench/time_run_record.py --model ordinal_9 --sampler numpyro \\
        --precision float32 --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main(argv=None) -> list[float]:
    """Run the model ``--repeats`` times; return (and print) the record's milliseconds."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="ordinal_9")
    p.add_argument("--sampler", default="numpyro")
    p.add_argument("--precision", default=None)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import zoo
    from bench_regret import private_history

    import pymc_accel
    from pymc_accel import history

    factory = (zoo.zoo(quick=True) | zoo.held_out())[args.model]
    took: list[float] = []
    record = history.record

    def timed(*a, **k):
        start = time.perf_counter()
        try:
            return record(*a, **k)
        finally:
            took.append((time.perf_counter() - start) * 1e3)

    history.record = timed
    with private_history():  # an empty run history beside this machine's figures
        for seed in range(1, args.repeats + 1):
            pymc_accel.sample(model=factory(), progressbar=False, random_seed=seed, quiet=True,
                              nuts_sampler=args.sampler, precision=args.precision)
    print(f"{args.model}, {args.sampler} {args.precision or ''}: the record took "
          + ", ".join(f"{t:.1f}" for t in took) + " ms")
    return took


if __name__ == "__main__":
    main()
