"""What compiling the log density whole (``pymc_accel.backends.run_logp.JIT_LOGP``) saves a
NumPyro run: side by side with PyMC's way, in new processes, with the compile cache on disk
empty and then warm.

PyMC's ``sample_jax_nuts`` evaluates the jaxified log density at each chain's initial point
outside any compiled program, so JAX compiles every op of it as a program of its own; compiled
whole (``jax.jit``), it is one program. For each model and round, four new processes
(``bench_jax_cache.run_child``: NumPyro at ``pm.sample``'s defaults, 2 chains, seed 1): PyMC's
way with an empty cache directory, then again with the programs that run wrote (a script run
again), then the same two compiled whole, in a directory of its own. The table gives medians
and the draws' digests (the two ways must give the same draws).

    JAX_PLATFORMS=cpu python bench/bench_jit_logp.py --out docs/results/jit-logp-cpu.json \\
        --markdown docs/results/jit-logp-cpu.md
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

ARMS = ("PyMC's way, cache empty", "PyMC's way, cache warm", "compiled whole, cache empty",
        "compiled whole, cache warm")
PYMCS_WAY = "from pymc_accel.backends import run_logp\nrun_logp.JIT_LOGP = False"


def markdown(results: dict) -> str:
    """Medians per arm, and the ratios of PyMC's way to the log density compiled whole."""
    lines = [f"Command: `{results['command']}`", "", f"Machine: {results['machine']}", "",
             "| model | " + " | ".join(f"{a}: wall (XLA compile, programs)" for a in ARMS)
             + " | PyMC's ÷ whole, empty / warm | same draws |",
             "|---|" + "---|" * (len(ARMS) + 2)]
    from bench_jax_cache import arm_medians

    for name, runs in results["models"].items():
        med = arm_medians(runs, ARMS, ("wall", "compile", "programs"))
        if med is None:
            lines.append(f"| {name} | failed |" + " |" * (len(ARMS) + 1))
            continue
        digests = {r["draws_digest"] for arm in ARMS for r in runs[arm]}
        cells = [f"{w:.2f} s ({c:.2f} s, {n:.0f})" for w, c, n in med.values()]
        empty = med[ARMS[0]][0] / med[ARMS[2]][0]
        warm = med[ARMS[1]][0] / med[ARMS[3]][0]
        lines.append(f"| {name} | {' | '.join(cells)} | **{empty:.2f} / {warm:.2f}** | "
                     f"{'yes' if len(digests) == 1 else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    from bench_jax_cache import parser, record, results_header, run_child

    args = parser(__doc__, "eight_schools,glm_linear,glm_poisson,seed_small", 2).parse_args(argv)
    from bench_regret import write_outputs

    names = args.models.split(",")
    results = {**results_header("bench_jit_logp.py", argv),
               "models": {n: {a: [] for a in ARMS} for n in names}}
    for _ in range(args.rounds):
        for name in names:
            for setup, (empty, warm) in ((PYMCS_WAY, ARMS[:2]), ("", ARMS[2:])):
                with tempfile.TemporaryDirectory() as cache_dir:
                    for arm in (empty, warm):
                        record(results, name, arm,
                               run_child(name, cache_dir, "on", setup=setup))
    write_outputs(results, markdown(results), args.out, args.markdown)
    return results


if __name__ == "__main__":
    main()
