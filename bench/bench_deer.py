"""DEER-MALA vs sequential MALA vs NumPyro NUTS, side by side in one process.

For each model: tune MALA once (sequential, 4 chains), then time *the same chain* (same keys,
same kernel) run by sequential MALA and by DEER in each Jacobian mode, over window lengths T;
check that DEER's chain equals the sequential one; record Newton iterations per window; and
compare ESS per second with NumPyro's NUTS on the same log density. Wall times are medians of
3 warm runs (compilation timed separately).

Usage::

    python bench/bench_deer.py                       # CPU, the sizes of docs/benchmarks.md
    python bench/bench_deer.py --device gpu --out deer-gpu.json
    python bench/bench_deer.py --quick               # a smoke run
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from pymc_accel import deer  # noqa: E402

CHAINS = 4


def logistic_regression(d: int, n: int, seed: int = 0):
    """The seed docs' Bayesian logistic regression: beta, X ~ N(0, 1), N(0, I) prior."""
    rng = np.random.default_rng(seed)
    beta = rng.normal(size=d)
    X = rng.normal(size=(n, d)) / np.sqrt(d / 10)  # keep X beta of order 3 as d grows
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ beta))).astype(float)
    X, y = jnp.asarray(X), jnp.asarray(y)

    def logdensity(b):
        z = X @ b
        return -0.5 * jnp.sum(b**2) + jnp.sum(y * z - jnp.logaddexp(0.0, z))

    return logdensity, d


def seed_hierarchical(rows: int, groups: int, covariates: int):
    """The seed blog's hierarchical logistic regression, through PyMC's jaxified logp."""
    from pymc_accel.backends.jax_model import flatten_model
    from pymc_accel.models import hierarchical_logistic

    model = hierarchical_logistic(rows=rows, groups=groups, covariates=covariates).model
    flat = flatten_model(model, chains=1, initvals=None, random_seed=0, dtype="float64")
    return flat.logdensity, flat.dim


def _timed(fn, repeats: int = 3):
    start = time.perf_counter()
    jax.block_until_ready(fn())
    compile_and_first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return out, compile_and_first, times


def _min_ess(draws: np.ndarray) -> float:
    import arviz as az

    post = az.from_dict({"posterior": {"x": draws}}).posterior.to_dataset()
    return float(az.ess(post, method="bulk")["x"].min())


def _nuts(logdensity, dim, starts, steps):
    from numpyro.infer import MCMC, NUTS

    mcmc = MCMC(
        NUTS(potential_fn=lambda b: -logdensity(b)), num_warmup=steps, num_samples=steps,
        num_chains=CHAINS, chain_method="vectorized", progress_bar=False,
    )
    fields = ("num_steps",)
    # Warm-up apart, timed sampling only: the MALA rows exclude their tuning too.
    mcmc.warmup(jax.random.key(0), init_params=starts, extra_fields=fields, collect_warmup=False)
    times = []
    for _ in range(2):  # the second run reuses the compiled sampler
        start = time.perf_counter()
        mcmc.run(mcmc.post_warmup_state.rng_key, extra_fields=fields)
        jax.block_until_ready(mcmc.get_samples())
        times.append(time.perf_counter() - start)
    draws = np.asarray(mcmc.get_samples(group_by_chain=True))
    grads = float(np.asarray(mcmc.get_extra_fields()["num_steps"]).mean())
    return {"wall": times[1], "wall_cold": times[0], "ess": _min_ess(draws), "grads_per_draw": grads}


def bench_model(name, logdensity, dim, windows, modes, steps, device):
    keys = jax.random.split(jax.random.key(0), 2 * CHAINS)
    starts = jax.random.normal(keys[0], (CHAINS, dim)) * 0.1
    tuned = jax.jit(jax.vmap(lambda k, x: deer.tune(k, x, logdensity, 500)))(keys[:CHAINS], starts)
    args = (keys[CHAINS:], tuned.state.position, tuned.step_size, tuned.inverse_mass)
    rows = []
    nuts = _nuts(logdensity, dim, tuned.state.position, steps)
    for window in windows:
        seq = deer.build_sampler(logdensity, num_steps=steps, window=window, method="sequential")
        ref, seq_compile, seq_times = _timed(lambda: seq(*args))
        ess = _min_ess(np.asarray(ref.positions))
        seq_wall = statistics.median(seq_times)
        base = {"model": name, "dim": dim, "window": window, "steps": steps, "device": device}
        rows.append({**base, "method": "sequential MALA", "compile": seq_compile,
                     "wall": seq_wall, "spread": [min(seq_times), max(seq_times)], "ess": ess,
                     "ess_per_s": ess / seq_wall, "speedup": 1.0})
        for mode in modes:
            par = deer.build_sampler(logdensity, num_steps=steps, window=window, jacobian=mode)
            out, par_compile, par_times = _timed(lambda: par(*args))
            err = float(jnp.max(jnp.abs(out.positions - ref.positions)) / jnp.max(jnp.abs(ref.positions)))
            wall = statistics.median(par_times)
            rows.append({**base, "method": f"DEER {mode}", "compile": par_compile, "wall": wall,
                         "spread": [min(par_times), max(par_times)], "ess": ess,
                         "ess_per_s": ess / wall, "speedup": seq_wall / wall,
                         "newton_mean": float(out.newton_iterations.mean()),
                         "newton_max": int(out.newton_iterations.max()),
                         "fallback_steps": int(out.sequential_steps.sum()),
                         "rel_error_vs_sequential": err})
        print(_table(rows[-1 - len(modes):]), flush=True)
    rows.append({"model": name, "dim": dim, "window": None, "steps": steps, "device": device,
                 "method": "NumPyro NUTS", "compile": nuts["wall_cold"] - nuts["wall"],
                 "wall": nuts["wall"], "ess": nuts["ess"],
                 "ess_per_s": nuts["ess"] / nuts["wall"],
                 "note": f"{steps} draws timed after {steps} warm-up, {nuts['grads_per_draw']:.1f} gradients/draw"})
    return rows


def _table(rows) -> str:
    out = []
    for r in rows:
        newton = f"{r['newton_mean']:.1f} (max {r['newton_max']})" if "newton_mean" in r else ""
        err = f"{r['rel_error_vs_sequential']:.1e}" if "rel_error_vs_sequential" in r else ""
        out.append(
            f"| {r['model']} | {r['dim']} | {r['window'] or ''} | {r['method']} | "
            f"{r['wall']:.3f} | {r.get('speedup', float('nan')):.2f} | {newton} | "
            f"{r['ess']:.0f} | {r['ess_per_s']:.0f} | {err} |"
        )
    return "\n".join(out)


HEADER = ("| model | d | T | method | wall s (median of 3) | speed-up vs sequential | "
          "Newton iterations/window | min bulk ESS | ESS/s | rel. error vs sequential |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--steps", type=int, default=1024, help="draws per chain")
    parser.add_argument("--out", type=Path, help="write all rows as JSON here")
    args = parser.parse_args(argv)
    device = jax.devices(args.device)[0]
    models = [("logistic d=10 N=1000", lambda: logistic_regression(10, 1000), ("full", "diag", "stoch_diag")),
              ("logistic d=50 N=1000", lambda: logistic_regression(50, 1000),
               ("diag", "stoch_diag") if args.device == "gpu" else ("stoch_diag",))]
    windows = (16, 64) if args.quick else (16, 64, 256)
    if not args.quick:
        models.append(("seed hierarchical 2000 rows/100 groups/5 cov",
                       lambda: seed_hierarchical(2000, 100, 5), ("stoch_diag",)))
    if args.device == "gpu" and not args.quick:
        models += [("logistic d=200 N=10000", lambda: logistic_regression(200, 10_000), ("stoch_diag",)),
                   ("seed hierarchical 100k rows/10k groups/10 cov",
                    lambda: seed_hierarchical(100_000, 10_000, 10), ("stoch_diag",))]
    steps = 256 if args.quick else args.steps
    print(f"device: {device.device_kind if hasattr(device, 'device_kind') else device}; "
          f"{CHAINS} chains vectorized; {steps} draws per chain; jax {jax.__version__}")
    print(HEADER, flush=True)
    rows = []
    with jax.default_device(device):
        for name, build, modes in models:
            logdensity, dim = build()
            model_rows = bench_model(name, logdensity, dim, windows, modes, steps, args.device)
            print(_table(model_rows[-1:]), flush=True)
            rows += model_rows
    if args.out:
        meta = {"device": str(device), "machine": platform.processor() or platform.machine(),
                "jax": jax.__version__, "command": " ".join(sys.argv)}
        args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
