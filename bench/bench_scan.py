"""Sequential Scan vs parallel prefix on the seed thread's pharmacokinetic model.

For each number of subjects N and of time steps T, the model of
:func:`pymc_accel.models.pharmacokinetic` (c_t = K c_{t-1} + dose_t, three compartments per
subject, written with ``pytensor.scan``) is run twice through PyMC's jaxified log density: as
written (``lax.scan`` of T steps) and with its affine Scan rewritten into a parallel prefix
(``jax.lax.associative_scan``, depth log2 T; :func:`pymc_accel.rewrites.apply.rewrite_model`
with ``mode="on"``). For each it records:

- the time of one jit-compiled log density and gradient (median of repeated calls, compile
  timed separately), and that both give the same values;
- NumPyro NUTS (vectorized chains) from the same initial points: the sampling time of a warm
  run (the compiled sampler run a second time), the smallest bulk ESS over parameters, and
  ESS per second; longest scans first. Runs whose modelled time would exceed ``--ess-budget``
  are skipped (and say so), as is whatever would not finish within ``--budget`` seconds.

Usage::

    python bench/bench_scan.py --device cpu --quick --out scan-cpu.json
    python bench/bench_scan.py --device gpu                  # bench/gpu_session.sh's scan step

Needs only JAX, NumPyro, PyMC and PyTensor (and this checkout on the path).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GRID = {"subjects": [4, 64], "steps": [10, 30, 100, 300, 1000]}
QUICK = {"subjects": [4, 32], "steps": [10, 100, 1000]}
# leapfrog steps per NUTS draw, for the ESS run's time guard: this posterior needs tree depth
# ~7 (measured: 129 per draw at N=4, T=100)
LEAPFROG_GUESS = 100
NUTS_COMPILE_GUESS = 10.0  # seconds to compile NumPyro's sampler, for the --budget guard


def _parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--quick", action="store_true", help="a smaller grid and shorter chains")
    p.add_argument("--out", type=Path, help="write the results as JSON here")
    p.add_argument("--subjects", type=int, nargs="+", help="override the grid's N")
    p.add_argument("--steps", type=int, nargs="+", help="override the grid's T")
    p.add_argument("--precision", choices=("float32", "float64"), default="float64")
    p.add_argument("--chains", type=int, help="NUTS chains, vectorized (default 4; 2 --quick)")
    p.add_argument("--draws", type=int, help="warm-up and kept draws per chain (each)")
    p.add_argument("--ess-budget", type=float, help="skip an ESS run modelled to take longer (s)")
    p.add_argument("--budget", type=float,
                   help="stop starting new configurations after this many seconds "
                        "(default 170 on a GPU, to fit gpu_session.sh's limit; 1200 on a CPU)")
    p.add_argument("--no-ess", action="store_true", help="gradient timings only")
    args = p.parse_args(argv)
    grid = QUICK if args.quick else GRID
    args.subjects = args.subjects or grid["subjects"]
    args.steps = args.steps or grid["steps"]
    args.draws = args.draws or (150 if args.quick else 300)
    args.chains = args.chains or (2 if args.quick else 4)
    args.budget = args.budget or (170.0 if args.device == "gpu" else 1200.0)
    args.ess_budget = args.ess_budget or (60.0 if args.quick else 40.0)
    if min(args.subjects) < 1 or min(args.steps) < 8:
        p.error("--subjects must be >= 1 and --steps >= 8 (shorter scans are not rewritten)")
    if args.chains < 1 or args.draws < 10:
        p.error("--chains must be >= 1 and --draws >= 10")
    return args


def _variants(n: int, t: int, device: str):
    """The model as written and with its affine scan rewritten (same value variables)."""
    from pymc_accel.models import pharmacokinetic
    from pymc_accel.rewrites.apply import rewrite_model

    model = pharmacokinetic(n, t).model
    rewritten, done = rewrite_model(model, device, mode="on")
    if not done:
        raise RuntimeError(f"N={n}, T={t}: the scan was not rewritten")
    return {"sequential": model, "parallel": rewritten}


def _potential(model, dtype):
    """NumPyro's potential (-log p) on a dict of value arrays, and the initial point."""
    import jax.numpy as jnp
    from pymc.sampling.jax import get_jaxified_graph

    names = [v.name for v in model.value_vars]
    fn = get_jaxified_graph(model.value_vars, [model.logp()])
    ip = model.initial_point()
    init = {k: jnp.asarray(ip[k], dtype=dtype) for k in names}

    def potential(params):
        return -fn(*[params[k] for k in names])[0]

    return potential, init


def _time_gradient(potential, init, repeats: int):
    import jax

    vg = jax.jit(jax.value_and_grad(potential))
    start = time.perf_counter()
    value, grad = jax.block_until_ready(vg(init))
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(vg(init))
        times.append(time.perf_counter() - start)
    return float(value), grad, compile_s, statistics.median(times)


def _ess_run(potential, init, chains: int, draws: int, seed: int):
    """NumPyro NUTS twice with the same key: the first compiles, the second is timed."""
    import jax
    import numpy as np
    from numpyro.diagnostics import effective_sample_size
    from numpyro.infer import MCMC, NUTS

    key = jax.random.PRNGKey(seed)
    jitter = jax.random.normal(jax.random.key(seed + 1), (chains,))
    start_points = {k: v + 0.1 * jitter.reshape((chains,) + (1,) * v.ndim).astype(v.dtype)
                    for k, v in init.items()}
    mcmc = MCMC(NUTS(potential_fn=potential), num_warmup=draws, num_samples=draws,
                num_chains=chains, chain_method="vectorized", progress_bar=False)
    fields = ("num_steps", "diverging")
    start = time.perf_counter()
    mcmc.run(key, init_params=start_points, extra_fields=fields)
    jax.block_until_ready(mcmc.get_samples())
    first = time.perf_counter() - start
    start = time.perf_counter()
    mcmc.run(key, init_params=start_points, extra_fields=fields)
    samples = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
    warm = time.perf_counter() - start
    ess = min(
        float(np.min(effective_sample_size(np.asarray(s, dtype=np.float64).reshape(chains, draws, -1))))
        for s in samples.values()
    )
    steps = np.asarray(mcmc.get_extra_fields(group_by_chain=True)["num_steps"]).mean()
    diverging = float(np.asarray(mcmc.get_extra_fields()["diverging"]).mean())
    # the kept draws' leapfrog steps, counted for the warm-up too: sampler time per step
    per_step = warm / max(1.0, 2 * draws * float(steps))
    return {"first_run_s": first, "warm_run_s": warm, "min_ess": ess, "ess_per_s": ess / warm,
            "leapfrog_per_draw": float(steps), "s_per_leapfrog": per_step,
            "divergent_share": diverging}


def _machine(device: str) -> dict:
    import jax
    import numpyro
    import pymc
    import pytensor

    devs = jax.devices("gpu" if device == "gpu" else "cpu")
    return {
        "device": device, "jax_devices": [str(d) for d in devs],
        "device_kind": devs[0].device_kind if devs else "",
        "cpu": platform.processor() or platform.machine(),
        "cpu_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(), "jax": jax.__version__, "numpyro": numpyro.__version__,
        "pymc": pymc.__version__, "pytensor": pytensor.__version__,
    }


def _table(rows: list[dict]) -> str:
    head = ("| N | T | grad seq | grad par | grad speed-up | NUTS step seq / par | ESS/s seq | "
            "ESS/s par | ESS/s ratio | compile seq / par |")
    lines = [head, "|---:" * (head.count("|") - 1) + "|"]
    for r in rows:
        s, p = r["sequential"], r["parallel"]

        def ms(x):
            return f"{x * 1e3:.3g} ms"

        def ess(v):
            e = v.get("ess")
            return f"{e['ess_per_s']:.4g}" if e else v.get("ess_skipped", "skipped")

        ratio = step = ""
        if s.get("ess") and p.get("ess"):
            ratio = f"{p['ess']['ess_per_s'] / s['ess']['ess_per_s']:.2f}x"
        step = " / ".join(ms(v["ess"]["s_per_leapfrog"]) if v.get("ess") else "-" for v in (s, p))
        lines.append(
            f"| {r['subjects']} | {r['steps']} | {ms(s['grad_s'])} | {ms(p['grad_s'])} | "
            f"{s['grad_s'] / p['grad_s']:.2f}x | {step} | {ess(s)} | {ess(p)} | {ratio} | "
            f"{s['compile_s']:.2f} / {p['compile_s']:.2f} s |"
        )
    return "\n".join(lines)


def main(argv=None) -> dict:
    args = _parse(argv)
    os.environ.setdefault("JAX_PLATFORMS", "cuda,cpu" if args.device == "gpu" else "cpu")
    import jax

    jax.config.update("jax_enable_x64", args.precision == "float64")
    import numpy as np

    try:
        device = jax.devices("gpu" if args.device == "gpu" else "cpu")[0]
    except RuntimeError as exc:
        raise SystemExit(f"--device {args.device}: JAX has no such device ({exc})") from None
    began = time.perf_counter()
    result = {"command": " ".join([Path(sys.executable).name, *sys.argv]),
              "machine": _machine(args.device), "precision": args.precision,
              "chains": args.chains, "draws": args.draws, "rows": [], "skipped": []}
    print(json.dumps(result["machine"]))
    kept = {}  # (row index, variant) -> (potential, init, modelled ESS-run seconds)
    with jax.default_device(device):
        # pass 1: every configuration's gradient, both variants (cheap)
        for n in args.subjects:
            for t in args.steps:
                if time.perf_counter() - began > args.budget:
                    result["skipped"].append({"subjects": n, "steps": t, "why": "--budget reached"})
                    print(f"N={n} T={t}: skipped (--budget {args.budget:g} s reached)", flush=True)
                    continue
                row = {"subjects": n, "steps": t}
                grads = {}
                for name, model in _variants(n, t, args.device).items():
                    potential, init = _potential(model, args.precision)
                    repeats = 20 if args.quick else 50
                    value, grad, compile_s, grad_s = _time_gradient(potential, init, repeats)
                    grads[name] = (value, grad)
                    row[name] = {"grad_s": grad_s, "compile_s": compile_s, "logp": -value}
                    # two runs of warm-up + draws; chains cost in turn on a CPU, together on a GPU
                    width = args.chains if args.device == "cpu" else 1
                    modelled = grad_s * width * 2 * args.draws * LEAPFROG_GUESS * 2
                    kept[len(result["rows"]), name] = (potential, init, modelled)
                    print(f"N={n} T={t} {name}: grad {grad_s * 1e3:.3f} ms (compile {compile_s:.2f} s)",
                          flush=True)
                (v0, g0), (v1, g1) = grads["sequential"], grads["parallel"]
                row["max_rel_diff"] = float(max(
                    abs(v1 - v0) / max(1.0, abs(v0)),
                    *(float(np.max(np.abs(np.asarray(g1[k]) - np.asarray(g0[k])))
                            / max(1.0, float(np.max(np.abs(np.asarray(g0[k])))))) for k in g0),
                ))
                result["rows"].append(row)
        # pass 2: NUTS where it fits, longest scans first (where the variants differ most)
        order = sorted(range(len(result["rows"])),
                       key=lambda i: (-result["rows"][i]["steps"], result["rows"][i]["subjects"]))
        for i in order:
            row = result["rows"][i]
            for name in ("sequential", "parallel"):
                potential, init, modelled = kept[i, name]
                entry = row[name]
                if args.no_ess:
                    entry["ess_skipped"] = "--no-ess"
                elif modelled > args.ess_budget:
                    entry["ess_skipped"] = f"skipped (~{modelled:.0f} s)"
                elif time.perf_counter() - began + modelled + NUTS_COMPILE_GUESS > args.budget:
                    entry["ess_skipped"] = "skipped (--budget)"
                else:
                    entry["ess"] = _ess_run(potential, init, args.chains, args.draws,
                                            seed=row["subjects"] * 7919 + row["steps"])
                    print(f"N={row['subjects']} T={row['steps']} {name}: ESS/s "
                          f"{entry['ess']['ess_per_s']:.3g}", flush=True)
    result["seconds"] = time.perf_counter() - began
    print(_table(result["rows"]))
    print(f"total {result['seconds']:.0f} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
