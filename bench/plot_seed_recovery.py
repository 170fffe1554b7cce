"""Plot the fixed-effect recovery of a ``bench/bench_seed_full.py`` run, as the seed blog does.

Posterior mean ± 2 sd of each β against its simulated true value, one panel per results file:

    python bench/plot_seed_recovery.py docs/results/seed-full-1chain.json \\
        --png docs/seed-full-recovery.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="JSON files written by bench_seed_full --out")
    parser.add_argument("--png", required=True, help="where to write the figure")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    runs = [json.loads(Path(p).read_text()) for p in args.results]
    fig, axes = plt.subplots(1, len(runs), figsize=(5 * len(runs), 4.6), squeeze=False)
    for ax, res in zip(axes[0], runs):
        run = res["run"]
        true, mean, sd = (np.asarray(run[k]) for k in ("beta_true", "beta_mean", "beta_sd"))
        ax.errorbar(true, mean, yerr=2 * sd, fmt="o", ms=4, capsize=2, label="posterior mean ± 2 sd")
        lim = [min(true.min(), mean.min()) - 0.1, max(true.max(), mean.max()) + 0.1]
        ax.plot(lim, lim, "k--", lw=1, label="truth")
        size = res["size"]
        ax.set_title(f"{size['rows']:,} rows, {size['groups']:,} groups, "
                     f"{res['free_dimension']:,} parameters\n{run['candidate']}, "
                     f"{run['wall_seconds']:.0f} s", fontsize=9)
        ax.set_xlabel("true β")
        ax.set_ylabel("posterior mean of β")
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
