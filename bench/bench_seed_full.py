"""The seed blog's experiment with one call: the hierarchical logistic regression at full size
(1,000,000 rows, 100,000 groups, 20 covariates: 2.1M parameters), sampled by
``pymc_accel.sample(nuts_sampler="auto")``.

The blog switched floatX to float32 by hand, profiled the gradient, and ran NumPyro on a rented
A100: 100 tuning + 100 draws of one chain in 272 s. Here the model is built as a user would (in
float64 unless ``--dtype float32``) and pymc-accel chooses the device, the precision (float32 only
where its accuracy check passes), the chain layout that fits the device's memory, and says why.

Prints the versions (JAX, jaxlib, NumPyro: GPU figures depend on them, see NumPyro issue 2225),
the devices, the profile time, the selection report, then the run: wall time, minimum bulk ESS of
the kept variables, ESS per second, recovery of the fixed effects against the simulated truth,
and the ratio to the blog's 272 s.

    python bench/bench_seed_full.py                                   # full size (GPU machine)
    python bench/bench_seed_full.py --rows 20000 --groups 2000 --covariates 5   # CPU smoke run
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from importlib.metadata import PackageNotFoundError, version

#: The blog's end-to-end figure: 100 tune + 100 draws, one chain, NumPyro on an A100, float32.
BLOG_SECONDS = 272.16
BLOG_DEVICE = "NVIDIA A100"
#: The blog's var_names: the fixed effects and the scales, not the 2.1M group effects.
BLOG_VAR_NAMES = ("α", "β", "σ_α", "σ_γ")


def versions() -> dict[str, str]:
    """Versions of the libraries that shape the figures."""
    out = {}
    for name in ("pymc", "pytensor", "jax", "jaxlib", "numpyro", "numba", "nutpie", "pymc-accel"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def min_bulk_ess(idata) -> float:
    """Smallest bulk ESS over every kept variable and element."""
    import arviz as az

    ess = az.ess(idata.posterior.to_dataset(), method="bulk")
    return float(min(float(ess[v].min()) for v in ess.data_vars))


def gradient_times(model, devices, budget_seconds: float = 6.0) -> list[dict]:
    """Time one logp-and-gradient evaluation of ``model`` per device and precision.

    JAX on each visible platform in float32 and float64 (compiled once, then the median of
    repeated calls within the budget, dispatch overhead subtracted), and PyTensor's numba
    backend on the CPU in the model's own precision: the blog's CPU-vs-GPU comparison.
    """
    from pymc_accel.backends._measure import time_jax_gradient, time_numba_gradient
    from pymc_accel.machine import machine_figures

    rows = []
    platforms = (["gpu"] if devices.gpus else []) + ["cpu"]
    for platform_name in platforms:
        for precision in ("float32", "float64"):
            try:
                compiled, kernel, calls = time_jax_gradient(model, platform_name, precision,
                                                            budget_seconds)
            except Exception as exc:  # a bench keeps going; the row says what failed
                rows.append({"runtime": "jax", "device": platform_name, "precision": precision,
                             "error": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            rows.append({"runtime": "jax", "device": platform_name, "precision": precision,
                         "seconds": kernel, "calls": calls, "compile_seconds": compiled})
    try:
        compiled, kernel, calls = time_numba_gradient(model, budget_seconds, machine_figures())
        rows.append({"runtime": "pytensor-numba", "device": "cpu",
                     "precision": str(model.initial_point()[model.value_vars[0].name].dtype),
                     "seconds": kernel, "calls": calls, "compile_seconds": compiled})
    except Exception as exc:
        rows.append({"runtime": "pytensor-numba", "device": "cpu",
                     "error": f"{type(exc).__name__}: {exc}"[:300]})
    for row in rows:
        if "seconds" in row:
            print(f"gradient: {row['runtime']} on {row['device']} in {row['precision']}: "
                  f"{row['seconds'] * 1e3:.3f} ms (median of {row['calls']}, compiled in "
                  f"{row['compile_seconds']:.1f} s)")
        else:
            print(f"gradient: {row['runtime']} on {row['device']}: {row['error']}")
    return rows


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=100_000)
    parser.add_argument("--covariates", type=int, default=20)
    parser.add_argument("--tune", type=int, default=100)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--chains", type=int, default=1)
    parser.add_argument("--seed", type=int, default=827)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                        help="precision the model is built in (the blog: float32 by hand)")
    parser.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    parser.add_argument("--all-vars", action="store_true",
                        help="keep every variable (the blog kept only α, β, σ_α, σ_γ)")
    parser.add_argument("--measure", action="store_true", help="measured selection")
    parser.add_argument("--gradients", action="store_true",
                        help="also time one gradient: JAX on every device in float32 and "
                             "float64, and PyTensor's numba backend on the CPU")
    parser.add_argument("--no-sample", action="store_true",
                        help="stop after selection (and --gradients): no sampling run")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    for name in ("rows", "groups", "covariates", "draws", "chains"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.groups > args.rows:
        parser.error("--groups must not exceed --rows")
    return args


def main(argv: list[str] | None = None) -> dict:
    """Run the experiment; return (and print) its figures."""
    args = parse(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)
    import numpy as np

    import pymc_accel
    from pymc_accel.models import hierarchical_logistic

    devices = pymc_accel.discover_devices()
    results: dict = {
        "command": "python bench/bench_seed_full.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": f"{platform.machine()}, {devices.summary()}",
        "versions": versions(),
        "size": {"rows": args.rows, "groups": args.groups, "covariates": args.covariates},
    }
    print(f"machine: {results['machine']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()))

    start = time.perf_counter()
    seed = hierarchical_logistic(args.rows, args.groups, args.covariates, seed=args.seed,
                                 dtype=args.dtype)
    model = seed.model
    results["build_seconds"] = time.perf_counter() - start
    profile = pymc_accel.profile_model(model)
    results["profile_seconds"] = profile.profile_seconds
    results["free_dimension"] = profile.n_free
    print(f"model: {args.rows} rows, {args.groups} groups, {args.covariates} covariates, "
          f"{profile.n_free} parameters, built in {args.dtype} ({results['build_seconds']:.1f} s)")
    print(f"profile: {profile.profile_seconds:.2f} s")

    if args.gradients:
        results["gradients"] = gradient_times(model, devices)

    var_names = None if args.all_vars else list(BLOG_VAR_NAMES)
    device = None if args.device == "auto" else args.device
    run = {"draws": args.draws, "tune": args.tune, "chains": args.chains}
    report = pymc_accel.explain(model, device=device, var_names=var_names, measure=args.measure,
                                **run)
    print(report)
    chosen = report.candidate
    chosen_row = next(r for r in report.rows if r.status == "chosen")
    results["selection"] = {
        "chosen": report.chosen, "device": chosen.device, "precision": chosen.precision,
        "chain_method": chosen.option("chain_method", ""),
        "memory_estimate": chosen_row.memory or None,
        "estimated_seconds": chosen_row.total_seconds,
        "selection_seconds": report.selection_seconds,
    }
    print(f"chosen: {report.chosen}: device {chosen.device}, precision {chosen.precision}, "
          f"chain method {chosen.option('chain_method', 'n/a')}, memory "
          f"{chosen_row.memory or 'not estimated (CPU candidate)'}")

    if args.no_sample:
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1, default=str)
        return results

    start = time.perf_counter()
    idata = pymc_accel.sample(
        args.draws, model=model, nuts_sampler="auto", device=device, random_seed=args.seed,
        var_names=var_names, progressbar=False, measure=args.measure, **{
            k: v for k, v in run.items() if k != "draws"},
    )
    wall = time.perf_counter() - start
    ess = min_bulk_ess(idata)
    beta = idata.posterior["β"].mean(dim=("chain", "draw")).to_numpy()
    beta_sd = idata.posterior["β"].std(dim=("chain", "draw")).to_numpy()
    ran = pymc_accel.SelectionReport.from_idata(idata)
    results["run"] = {
        "candidate": ran.chosen, "wall_seconds": wall,
        "backend_seconds": idata.attrs.get("pymc_accel_wall_seconds"),
        "min_bulk_ess": ess, "ess_per_second": ess / wall,
        "beta_max_abs_error": float(np.max(np.abs(beta - seed.beta))),
        "beta_correlation": float(np.corrcoef(beta, seed.beta)[0, 1]) if beta.size > 1 else None,
        "notes": ran.notes,
        "beta_mean": beta.tolist(), "beta_sd": beta_sd.tolist(),
        "beta_true": np.asarray(seed.beta).tolist(),
        "diverging": int(idata.sample_stats["diverging"].sum()),
        "mean_tree_size": float(idata.sample_stats["n_steps"].mean())
        if "n_steps" in idata.sample_stats else None,
    }
    full = (args.rows, args.groups, args.covariates) == (1_000_000, 100_000, 20)
    same_run = (args.tune, args.draws, args.chains) == (100, 100, 1)
    results["blog"] = {"seconds": BLOG_SECONDS, "device": BLOG_DEVICE,
                       "comparable": full and same_run,
                       "speedup": BLOG_SECONDS / wall}
    r = results["run"]
    print(f"run: {r['candidate']} in {wall:.1f} s (backend {r['backend_seconds']} s); "
          f"min bulk ESS {ess:.1f}, {ess / wall:.3f} ESS/s; β max abs error "
          f"{r['beta_max_abs_error']:.3f}, correlation with the truth {r['beta_correlation']}")
    comparison = f"blog: {BLOG_SECONDS:.0f} s on an {BLOG_DEVICE} -> {BLOG_SECONDS / wall:.2f}x"
    if not results["blog"]["comparable"]:
        comparison += " (not comparable: the blog ran 1M/100k/20, 100 + 100 draws, 1 chain)"
    print(comparison)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return results


if __name__ == "__main__":
    main()
