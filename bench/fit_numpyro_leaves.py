"""NumPyro's compile on the CPU against the number of arrays in the sampler's position: why the
JAX NUTS backends sample one flat array (``pymc_accel.backends.flat_position``).

PyMC's ``sample_jax_nuts`` hands NumPyro (and BlackJAX) the position as one array per value
variable. NumPyro's NUTS treats it as a pytree, and every array of it is a separate operand of
each step of the tree building, so the XLA program it compiles grows with their count. A model
of 60 scalar variables took 30-37 s under NumPyro where 13 s was estimated, and the same 60
dimensions as one vector variable compiled in 2.5 s (docs/benchmarks.md).

Here the potential is trivial (half the sum of squares), so what is timed is NumPyro's own
program: ``MCMC.run`` of ``--draws`` tune + ``--draws`` draws, two chains on two XLA CPU
devices (``chain_method="parallel"``, as ``sample_jax_nuts`` runs it), compiled again each run
as under ``sample_jax_nuts``; for each count ``k`` of leaves (each a vector of ``--size``), the
fastest of ``--repeats`` walls. One JSON line per ``k``. ``--fit FILE`` fits the walls' excess
over one leaf as ``c (k^p - 1)`` (least squares in log space, over a grid of ``p``).

    JAX_PLATFORMS=cpu python bench/fit_numpyro_leaves.py > docs/results/fit-numpyro-leaves-cpu.jsonl
    python bench/fit_numpyro_leaves.py --fit docs/results/fit-numpyro-leaves-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path


def measure(leaves: int, size: int, draws: int, repeats: int) -> dict:
    """One JSON line: the walls of NumPyro's run with ``leaves`` arrays in its position."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS

    def potential(xs):
        return 0.5 * sum(jnp.sum(x * x) for x in xs)

    init = [jnp.zeros((2, size)) for _ in range(leaves)]  # two chains
    walls = []
    for rep in range(repeats):
        mcmc = MCMC(NUTS(potential_fn=potential), num_warmup=draws, num_samples=draws,
                    num_chains=2, chain_method="parallel", progress_bar=False)
        start = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(rep), init_params=init)
        jax.block_until_ready(mcmc.get_samples())
        walls.append(time.perf_counter() - start)
    return {"leaves": leaves, "size": size, "draws": draws, "wall": min(walls), "walls": walls}


def fit_power(points: list[tuple[int, float]]) -> tuple[float, float, float]:
    """``(c, p, rms)``: the excess seconds ``c (k^p - 1)`` over ``(k, excess)`` points with
    ``k > 1``, least squares in log space for each ``p`` of a grid, the best ``p`` kept."""
    used = [(k, e) for k, e in points if k > 1 and e > 0]
    best = (math.nan, math.nan, math.inf)
    for p in [1.0 + 0.05 * i for i in range(21)]:
        # log e = log c + log(k^p - 1): log c is the mean residual
        logs = [math.log(e) - math.log(k ** p - 1) for k, e in used]
        log_c = sum(logs) / len(logs)
        rms = math.sqrt(sum((x - log_c) ** 2 for x in logs) / len(logs))
        if rms < best[2]:
            best = (math.exp(log_c), p, rms)
    return best


def fit(path: str) -> None:
    """Print each leaf count's wall, its excess over one leaf and the fitted curve."""
    lines = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    one = min(line["wall"] for line in lines if line["leaves"] == 1)
    points = [(line["leaves"], line["wall"] - one) for line in lines]
    c, p, rms = fit_power(points)
    print("| leaves | wall (s) | over one leaf (s) | fitted (s) |")
    print("|---|---|---|---|")
    for line, (k, excess) in zip(lines, points):
        print(f"| {k} | {line['wall']:.2f} | {excess:.2f} | {c * (k ** p - 1):.2f} |")
    print(f"\nfit: {c:.4f} s x (leaves^{p:.2f} - 1), rms log error {rms:.3f} over leaves > 1")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--leaves", default="1,2,3,5,8,15,30,60")
    p.add_argument("--size", type=int, default=2, help="elements of each leaf")
    p.add_argument("--draws", type=int, default=20, help="tuning draws, and as many draws")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--fit", metavar="JSONL", help="fit recorded lines instead of measuring")
    args = p.parse_args(argv)
    if args.fit:
        fit(args.fit)
        return
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    import jax

    jax.config.update("jax_enable_x64", True)
    measure(1, args.size, args.draws, 1)  # the process's first use of JAX and NumPyro
    for k in map(int, args.leaves.split(",")):
        print(json.dumps(measure(k, args.size, args.draws, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
