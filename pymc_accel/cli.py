"""The ``pymc-accel`` command: ``backends``, ``explain FILE[:NAME]``, ``calibrate``,
``history``, ``bench``, ``demo``."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

# Not a terminal (a log, CI): rich would wrap the report at 80 columns; give it room.
console = Console(width=None if sys.stdout.isatty() else 160)


def cmd_backends(args: argparse.Namespace) -> int:
    """List registered backends, where each came from, what runs here, and broken plugins."""
    from pymc_accel.devices import discover
    from pymc_accel.registry import BLOCK_ENV, get_registry

    registry = get_registry()
    devices = discover()
    table = Table(title=f"pymc-accel backends ({escape(devices.summary())})", title_justify="left")
    for col in ("backend", "from", "status", "description"):
        table.add_column(col, overflow="fold")
    for name, backend in registry.backends.items():
        table.add_row(escape(name), escape(registry.origins.get(name, "")), "[green]registered[/green]",
                      escape(backend.description))
    for b in registry.broken:
        table.add_row(escape(b.name), escape(b.origin), f"[red]broken ({b.stage})[/red]",
                      escape(b.error))
    for name in sorted(registry.blocked_matched):  # a plugin switched off is listed as such
        table.add_row(escape(name), "", "[yellow]blocked[/yellow]",
                      f"named in {BLOCK_ENV}: take it out of that list to use it")
    console.print(table)
    return 0


def load_model(spec: str):
    """Load a model from ``path/to/file.py`` or ``path/to/file.py:NAME``.

    ``NAME`` may be a ``pm.Model`` or a function returning one; without it the file must define
    exactly one ``pm.Model`` at module level.
    """
    import pymc as pm

    path, _, name = spec.partition(":")
    if not Path(path).is_file():
        raise SystemExit(f"no model file {path!r}: give the path of a Python file that builds "
                         "a pm.Model (path/to/file.py, or path/to/file.py:NAME)")
    try:
        namespace = runpy.run_path(path)
    except Exception as exc:  # the model file's own error: one line, not our traceback
        raise SystemExit(f"running {path} raised {type(exc).__name__}: {exc}") from None
    if name:
        if name not in namespace:
            found = [k for k, v in namespace.items() if isinstance(v, pm.Model)
                     or (callable(v) and not k.startswith("_")
                         and getattr(v, "__module__", None) == "<run_path>")]
            raise SystemExit(f"{path} defines no {name!r}; it defines "
                             f"{', '.join(found) or 'no pm.Model or function'}")
        obj = namespace[name]
        if callable(obj) and not isinstance(obj, pm.Model):
            try:
                obj = obj()
            except Exception as exc:
                raise SystemExit(f"calling {spec}() raised {type(exc).__name__}: {exc} (NAME "
                                 "must be a pm.Model or a function of no arguments returning "
                                 "one)") from None
        if not isinstance(obj, pm.Model):
            raise SystemExit(f"{spec} is not a pm.Model (got {type(obj).__name__})")
        return obj
    models = {k: v for k, v in namespace.items() if isinstance(v, pm.Model)}
    if not models:
        raise SystemExit(
            f"{path} defines no pm.Model at module level: build one there, or name a function "
            f"of the file that returns one: {path}:NAME")
    if len(models) > 1:
        raise SystemExit(
            f"{path} defines {len(models)} pm.Model objects ({', '.join(models)}); "
            f"name one: {path}:NAME"
        )
    return next(iter(models.values()))


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the selection report for a model file."""
    import pymc_accel

    model = load_model(args.model)
    # pymc_accel.explain reads its arguments as sample() does: chains=None is pm.sample's
    # default for this machine, not a number of the CLI's own
    report = pymc_accel.explain(model, nuts_sampler=args.backend, device=args.device,
                                precision=args.precision, draws=args.draws, tune=args.tune,
                                chains=args.chains, measure=args.measure)
    console.print_json(report.to_json()) if args.json else console.print(report)
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Measure this machine's figures again (CPU, and every GPU JAX sees) and cache them."""
    from pymc_accel.devices import discover
    from pymc_accel.machine import cache_dir, machine_figures

    devices = discover() if args.device in ("all", "gpu") else None
    if args.device == "gpu" and not devices.has_gpu:
        console.print(f"[red]error:[/red] no GPU visible to JAX ({escape(devices.note)}). On a "
                      "machine with a CUDA GPU: pip install 'pymc-accel\\[gpu]'; or calibrate "
                      "the CPU with --device cpu.")
        return 2
    figures = machine_figures(refresh=True, devices=devices)
    table = Table(title=escape(f"Machine figures ({figures.describe()})"), title_justify="left",
                  caption="CPU elementwise: exp in a loop compiled by numba, 10 flops an "
                          "element; bandwidth and matmul: NumPy's, one thread",
                  caption_justify="left")
    for col in ("device", "precision", "elementwise", "bandwidth", "matmul", "overheads"):
        table.add_column(col)
    for p in ("float32", "float64"):
        table.add_row("cpu", p, f"{figures.cpu_flops[p] / 1e9:.2f} GFLOP/s",
                      f"{figures.cpu_bandwidth[p] / 1e9:.2f} GB/s",
                      f"{figures.cpu_matmul_flops[p] / 1e9:.1f} GFLOP/s",
                      f"call {figures.cpu_call_seconds * 1e6:.2f} µs")
    for name, dev in figures.accelerators.items():
        for p in ("float32", "float64"):
            table.add_row(f"{name} {escape(dev.kind)}", p, f"{dev.flops[p] / 1e9:.1f} GFLOP/s",
                          f"{dev.bandwidth[p] / 1e9:.1f} GB/s",
                          f"{dev.matmul_flops[p] / 1e9:.0f} GFLOP/s",
                          f"launch {dev.launch_seconds * 1e6:.2f} µs, "
                          f"call {dev.call_seconds * 1e6:.1f} µs")
    console.print(table)
    if figures.cpu_python_seconds:
        from pymc_accel.costmodel import start_up_pace

        console.print(f"start-up and compile work: a Python loop in "
                      f"{figures.cpu_python_seconds * 1e3:.0f} ms, so modelled start-up figures "
                      f"are taken at {start_up_pace(figures):.2f}x the fit machine's")
    took = figures.calibration_seconds + sum(d.calibration_seconds for d in figures.accelerators.values())
    console.print(f"calibrated in {took:.1f} s; cached in {escape(str(cache_dir()))}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """List the run history selection learns from (or forget it with ``--clear``)."""
    from pymc_accel import history

    if args.clear:
        removed = history.clear()
        console.print(f"forgot {escape(str(removed))}" if removed else "no run history to forget")
        return 0
    rows = history.entries()
    table = Table(title=escape(f"Run history ({history.ledger_path()})"), title_justify="left")
    for col in ("model", "candidate", "runs", "recorded", "steps x chains", "wall",
                "leapfrogs/draw", "fixed", "measured (measure=True)"):
        table.add_column(col, overflow="fold")  # labels whole: two differ only at their end
    for r in rows:
        ran = "wall_seconds" in r
        fixed = f"{_number(r.get('fixed_seconds', 0.0))} s" if ran else "–"
        if ran and not history.fixed_seconds_usable(r):
            fixed += " (first run: compiled, not used)"
        runs, recorded = str(r.get("runs", 1)), str(r.get("recorded", ""))
        if not ran:  # measured only, or a close call's runner-up whose trial did not finish
            runs, recorded = ("0 (tried)", str(r["tried"])) if "tried" in r else ("0", "")
        table.add_row(escape(str(r.get("model", "?"))), escape(str(r.get("candidate", ""))),
                      escape(runs), escape(recorded),
                      escape(f"{r.get('steps')} x {r.get('chains')}") if ran else "–",
                      f"{_number(r.get('wall_seconds'))} s" if ran else "–",
                      _number(r.get("leapfrogs_per_draw")) + (  # and the effective draws
                          f" (ESS {_number(r['ess_per_draw'], 2)})" if "ess_per_draw" in r else ""),
                      escape(fixed), escape(_measured(r)))
    console.print(table if rows else "no runs recorded yet (pymc_accel.sample records each run)")
    if not history.enabled():
        console.print("PYMC_ACCEL_HISTORY is off: selection neither reads nor writes it")
    return 0


def _number(value, digits: int = 1) -> str:
    """``value`` to ``digits`` decimals, or as it was written when the ledger holds something
    else (a hand-edited or foreign file: the listing shows it rather than failing on it)."""
    if value is None:
        return "–"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.{digits}f}"
    return escape(repr(value))


def _measured(entry: dict) -> str:
    """What measure=True timed for a ledger entry, for the history listing."""
    measured = entry.get("measured")
    if not isinstance(measured, dict):
        return "–"
    parts = []
    if isinstance(measured.get("seconds_per_gradient"), (int, float)):
        parts.append(f"{measured['seconds_per_gradient'] * 1e6:.1f} µs/grad")
    if isinstance(measured.get("fixed_seconds"), (int, float)):
        parts.append(f"{measured['fixed_seconds']:.1f} s fixed")
    return ", ".join(parts) + f" ({measured.get('recorded', '')})"


def bench_script() -> Path | None:
    """``bench/bench_regret.py`` of the source checkout this package runs from (or of the
    current directory), or ``None`` when neither has one."""
    for root in (Path(__file__).resolve().parents[1], Path.cwd()):
        script = root / "bench" / "bench_regret.py"
        if script.is_file():
            return script
    return None


def cmd_bench(argv: list[str]) -> int:
    """Run the selection-regret benchmark (``bench/bench_regret.py``) with ``argv``, in a fresh
    process so that it can start from an empty compile cache."""
    import subprocess

    script = bench_script()
    if script is None:
        console.print("[red]error:[/red] the benchmark ships with the source, not the wheel: run "
                      "`pymc-accel bench` from a checkout of pymc-accel (bench/bench_regret.py)")
        return 2
    env = {**os.environ, "PYMC_ACCEL_BENCH_PROG": "pymc-accel bench"}  # its --help's name
    return subprocess.call([sys.executable, str(script), *argv], env=env)


def cmd_demo(args: argparse.Namespace) -> int:
    """Profile, select, explain and sample the seed blog's model; check parameter recovery."""
    import arviz as az
    import numpy as np

    import pymc_accel
    from pymc_accel.models import hierarchical_logistic

    start = time.perf_counter()
    console.rule("pymc-accel demo: hierarchical logistic regression (the GPU blog's model)")
    seed = hierarchical_logistic(args.rows, args.groups, args.covariates)
    profile = pymc_accel.profile_model(seed.model)
    console.print(f"{args.rows} rows, {args.groups} groups, {args.covariates} covariates: "
                  f"{profile.n_free} free parameters, profiled in {profile.profile_seconds:.2f} s")
    idata = pymc_accel.sample(
        args.draws, tune=args.tune, chains=args.chains, model=seed.model, random_seed=args.seed,
        var_names=["α", "β", "σ_α", "σ_γ"], progressbar=not args.no_progress,
        compute_convergence_checks=False,
    )
    report = pymc_accel.SelectionReport.from_idata(idata)
    console.print(report)
    summary = az.summary(idata, var_names=["α", "β", "σ_α"], kind="all")
    console.print(escape(summary.to_string(max_rows=8)))
    beta_hat = idata.posterior["β"].mean(("chain", "draw")).to_numpy()
    rel = float(np.linalg.norm(beta_hat - seed.beta) / np.linalg.norm(seed.beta))
    corr = float(np.corrcoef(beta_hat, seed.beta)[0, 1])
    console.print(
        f"Fixed-effect recovery: relative error |β̂ - β| / |β| = {rel:.3f}, correlation {corr:.3f}; "
        f"α̂ = {float(idata.posterior['α'].mean()):.3f} (true {seed.alpha})"
    )
    gradients = pymc_accel.LastGradients.from_idata(idata)
    if gradients is not None:  # a NumPyro or BlackJAX run's, checked at its chains' last draws
        verdict = ("the derivative of its log density" if gradients.agrees
                   else "NOT the derivative of its log density")
        console.print(
            f"The run's gradient at its {len(gradients.chains)} chains' last draws: {verdict} "
            f"(its slopes and the log density's differences "
            f"{max(gradients.raw_rel_errors, default=0.0):.2g} apart, "
            f"relative; agreement within {gradients.grad_rtol:g} beyond the differences' own "
            f"error; checked in {1000 * gradients.seconds:.0f} ms)")
    console.print(f"sampled with {escape(idata.attrs['pymc_accel_candidate'])} in "
                  f"{idata.attrs['pymc_accel_wall_seconds']:.1f} s; demo total "
                  f"{time.perf_counter() - start:.1f} s")
    return 0


def _count(least: int):
    """An argparse type: an integer of at least ``least`` (a one-line usage error otherwise,
    where the selector's own ValueError printed a traceback)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pymc-accel`` command."""
    parser = argparse.ArgumentParser(prog="pymc-accel", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("backends", help="list backends, their origin, and broken plugins")
    ex = sub.add_parser("explain", help="print the selection report for a model file")
    ex.add_argument("model", help="path/to/file.py or path/to/file.py:NAME")
    ex.add_argument("--backend", default=None)
    ex.add_argument("--device", choices=["cpu", "gpu"], default=None)
    ex.add_argument("--precision", choices=["float32", "float64"], default=None)
    ex.add_argument("--draws", type=_count(0), default=1000)
    ex.add_argument("--tune", type=_count(0), default=1000)
    ex.add_argument("--chains", type=_count(1), default=None,
                    help="default: pm.sample's, the CPU cores up to 4 and at least 2")
    ex.add_argument("--json", action="store_true", help="print the report as JSON")
    ex.add_argument("--measure", action="store_true",
                    help="compile and time the candidates' gradients (about 5 s) before choosing")
    cal = sub.add_parser("calibrate", help="measure this machine's figures again and cache them")
    cal.add_argument("--device", choices=["cpu", "gpu", "all"], default="all",
                     help="cpu only, or also every GPU JAX sees (default: all)")
    hist = sub.add_parser("history", help="the run history selection learns from")
    hist.add_argument("--clear", action="store_true", help="forget every recorded run")
    sub.add_parser("bench", help="selection-regret benchmark on the model zoo "
                   "(`pymc-accel bench --help` for its options, e.g. --quick)", add_help=False)
    demo = sub.add_parser("demo", help="profile, explain and sample the seed blog's model")
    demo.add_argument("--rows", type=_count(1), default=5000)
    demo.add_argument("--groups", type=_count(1), default=500)
    demo.add_argument("--covariates", type=_count(1), default=10)
    demo.add_argument("--draws", type=_count(1), default=500)
    demo.add_argument("--tune", type=_count(0), default=500)
    demo.add_argument("--chains", type=_count(1), default=2)
    demo.add_argument("--seed", type=int, default=827)
    demo.add_argument("--no-progress", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pymc-accel`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "bench":  # its options are the script's own
        return cmd_bench(argv[1:])
    args = build_parser().parse_args(argv)
    handler = {"backends": cmd_backends, "explain": cmd_explain, "demo": cmd_demo,
               "calibrate": cmd_calibrate, "history": cmd_history}[args.command]
    try:
        return handler(args)
    except Exception as exc:
        from pymc_accel.errors import PymcAccelError

        if isinstance(exc, PymcAccelError):
            console.print(f"[red]error:[/red] {escape(str(exc))}")
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
