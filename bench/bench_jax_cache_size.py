"""What JAX's own size limit on the compile cache cost a NumPyro run, on a cache that holds other
programs: side by side, with and without the limit, against an empty cache.

pymc-accel set ``jax_compilation_cache_max_size`` on the cache it sets up
(``pymc_accel.jax_cache``) until 2026-11-30. JAX then reads the size and last-use stamp of every
entry in the directory each time it writes a program, to find what to drop, and a NumPyro run
of a model new to the cache writes dozens. This benchmark fills a new cache directory with
``--filled`` programs of other models (filler files of ``--filler-bytes`` each, named and
stamped as JAX names and stamps them; JAX reads no more than that) and runs, each in a new
process and a copy of its own of the directory (``bench_jax_cache.run_child``: NumPyro at
``pm.sample``'s defaults, 2 chains, seed 1): the cache empty; filled, with JAX's size limit as
pymc-accel set it (``JAX_COMPILATION_CACHE_MAX_SIZE``, read by JAX at start-up); filled,
without it (pymc-accel's setting now). ``--rounds`` repeats the three, models interleaved; the
table gives medians and the draws' digests (the same program must give the same draws).

    JAX_PLATFORMS=cpu python bench/bench_jax_cache_size.py --filled 1133 \\
        --out docs/results/jax-cache-size-cpu.json --markdown docs/results/jax-cache-size-cpu.md
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

ARMS = ("empty", "filled, JAX's size limit", "filled, no limit")


def fill(directory: Path, count: int, size: int) -> None:
    """``count`` cached programs of ``size`` bytes each, with JAX's last-use stamps."""
    directory.mkdir(parents=True, exist_ok=True)
    body = os.urandom(size)
    for i in range(count):
        key = f"jit_filler-{i:064x}"
        (directory / f"{key}-cache").write_bytes(body)
        (directory / f"{key}-atime").write_bytes(i.to_bytes(8, "little"))


def markdown(results: dict) -> str:
    """Medians per arm, and the limit's cost against no limit."""
    lines = [f"Command: `{results['command']}`", "", f"Machine: {results['machine']}", "",
             f"Filled: {results['filled']} programs of {results['filler_bytes']} bytes.", "",
             "| model | " + " | ".join(f"{a}: wall (XLA compile)" for a in ARMS)
             + " | limit ÷ no limit | same draws |",
             "|---|" + "---|" * (len(ARMS) + 2)]
    from bench_jax_cache import arm_medians

    for name, runs in results["models"].items():
        med = arm_medians(runs, ARMS)
        if med is None:
            lines.append(f"| {name} | failed |" + " |" * (len(ARMS) + 1))
            continue
        digests = {r["draws_digest"] for arm in ARMS for r in runs[arm]}
        cells = [f"{w:.2f} s ({c:.2f} s)" for w, c in med.values()]
        ratio = med[ARMS[1]][0] / med[ARMS[2]][0]
        lines.append(f"| {name} | {' | '.join(cells)} | **{ratio:.2f}** | "
                     f"{'yes' if len(digests) == 1 else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    from bench_jax_cache import parser, record, results_header, run_child

    p = parser(__doc__, "eight_schools,glm_linear,seed_small", 2)
    p.add_argument("--filled", type=int, default=1133)
    p.add_argument("--filler-bytes", type=int, default=12_000)
    args = p.parse_args(argv)
    from bench_regret import write_outputs

    from pymc_accel.jax_cache import MAX_BYTES

    names = args.models.split(",")
    results = {**results_header("bench_jax_cache_size.py", argv),
               "filled": args.filled, "filler_bytes": args.filler_bytes,
               "models": {n: {a: [] for a in ARMS} for n in names}}
    with tempfile.TemporaryDirectory() as filled_dir:
        filled = Path(filled_dir) / "jax-compile"
        fill(filled, args.filled, args.filler_bytes)
        for _ in range(args.rounds):
            for name in names:
                for arm in ARMS:
                    with tempfile.TemporaryDirectory() as cache_dir:
                        if arm != "empty":
                            shutil.copytree(filled, Path(cache_dir) / "jax-compile")
                        extra = ({"JAX_COMPILATION_CACHE_MAX_SIZE": str(MAX_BYTES)}
                                 if arm == ARMS[1] else {})
                        run = run_child(name, cache_dir, "on", extra)
                    record(results, name, arm, run)
    write_outputs(results, markdown(results), args.out, args.markdown)
    return results


if __name__ == "__main__":
    main()
