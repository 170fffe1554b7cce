"""What a JAX run saves by jaxifying the log density its selection's profile built.

For each model, in one process that has built a primer model first, on fresh models each time
(medians of ``--repeats``), in milliseconds:

- PyMC's ``get_jaxified_logp(model, negative_logp=False)``: what ``sample_jax_nuts`` builds
  first, and what a JAX run built before :mod:`pymc_accel.backends.run_logp`;
- :func:`pymc_accel.backends.run_logp.jaxified_logp` on the graph the profile built (a run
  after a selection that profiled the model; the profile itself not timed);
- the same with no graph handed over (a run after a selection that reused a kept profile: it
  builds the graph as the profile does);
- for each, JAX's compile and first call of the jitted value and gradient, and its seconds a
  call after that, since the frozen copy gives PyTensor's rewrites static shapes;
- whether a seeded NumPyro run (100 + 100 draws, 2 chains) gives the same draws on PyMC's log
  density and on the profile's: where the model has dims or data to freeze, the two programs
  round differently, which is why a run handed no graph builds it as the profile does.

The three ways take turns, each repeat starting with the next.

``--runs N`` also times whole NumPyro runs (``sample_jax_nuts`` on the flat position, 2 chains,
``--tune`` + ``--draws``, the seed fixed) on PyMC's log density and on the profile's, taking
turns, N each. The draws differ by the rounding of the two programs, so the two runs' trees
differ too, and their wall times by more than the programs' speed.

    JAX_PLATFORMS=cpu python bench/time_run_logp.py --models pk_scan,seed_small,negbin_12,ordinal_9 --runs 3
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="pk_scan,seed_small,negbin_12,ordinal_9")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--runs", type=int, default=0, help="whole NumPyro runs a way (0: none)")
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--markdown", default=None, help="write the table as Markdown here")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.runs < 0:
        p.error("--repeats must be at least 1 and --runs at least 0")
    return args


def _build_and_compile(make_logp, model, calls: int = 300) -> tuple[float, float, float]:
    """Milliseconds to build the jaxified log density, and to jit its value and gradient and
    call it once at the initial point; and microseconds a call after that (the median of five
    batches of ``calls / 5``)."""
    import jax
    import jax.numpy as jnp

    start = time.perf_counter()
    logp = make_logp(model)
    built = time.perf_counter()
    point = model.initial_point()
    args = [jnp.asarray(point[v.name]) for v in model.value_vars]
    vg = jax.jit(jax.value_and_grad(logp))
    jax.block_until_ready(vg(args))
    compiled = time.perf_counter()
    batches = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls // 5):
            jax.block_until_ready(vg(args))
        batches.append((time.perf_counter() - t) / (calls // 5))
    return (built - start) * 1e3, (compiled - built) * 1e3, statistics.median(batches) * 1e6


def time_builds(make_model, repeats: int) -> dict[str, float]:
    """Medians over ``repeats`` fresh models of the three ways' build and compile times."""
    import pymc.sampling.jax as pmjax

    from pymc_accel.backends.run_logp import jaxified_logp
    from pymc_accel.profile import profile_and_logp

    pymcs = pmjax.get_jaxified_logp
    ways = {
        "PyMC's": lambda m: pymcs(m, negative_logp=False),
        "profile's graph": None,  # built per model below
        "built in the run": lambda m: jaxified_logp(m, None, negative_logp=False),
    }
    times: dict[str, list] = {f"{w} {part}": [] for w in ways
                              for part in ("build", "compile", "call")}
    order = list(ways)
    for repeat in range(repeats):
        for way in order[repeat % 3:] + order[:repeat % 3]:
            make = ways[way]
            model = make_model()
            if make is None:
                graph = profile_and_logp(model)[1]  # the selection's work, not timed

                def make(m, graph=graph):
                    return jaxified_logp(m, graph, negative_logp=False)
            build, compile_, call = _build_and_compile(make, model)
            times[f"{way} build"].append(build)
            times[f"{way} compile"].append(compile_)
            times[f"{way} call"].append(call)
    return {k: statistics.median(v) for k, v in times.items()}


def same_draws(make_model) -> bool:
    """Whether a seeded NumPyro run (100 + 100 draws, 2 chains, flat position) draws the same
    on PyMC's log density as on the profile's."""
    import contextlib

    import numpy as np
    from pymc.sampling.jax import sample_jax_nuts

    from pymc_accel.backends.flat_position import flat_position
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jax_runs_use
    from pymc_accel.profile import profile_and_logp

    draws = []
    for ours in (False, True):
        model = make_model()
        graph = profile_and_logp(model)[1] if ours else None
        way = jax_runs_use(model, graph) if ours else contextlib.nullcontext()
        with jax_precision("float64"), flat_position("numpyro"), way:
            idata = sample_jax_nuts(draws=100, tune=100, chains=2, random_seed=1, model=model,
                                    progressbar=False, chain_method="parallel",
                                    compute_convergence_checks=False, nuts_sampler="numpyro")
        draws.append(np.concatenate([idata.posterior[v].values.ravel()
                                     for v in idata.posterior.data_vars]))
    return bool(np.array_equal(*draws))


def time_runs(make_model, runs: int, tune: int, draws: int) -> dict[str, float]:
    """Median seconds of whole NumPyro runs on PyMC's log density and on the profile's."""
    import contextlib

    from pymc.sampling.jax import sample_jax_nuts

    from pymc_accel.backends.flat_position import flat_position
    from pymc_accel.backends.jax_model import jax_precision
    from pymc_accel.backends.run_logp import jax_runs_use
    from pymc_accel.profile import profile_and_logp

    walls: dict[str, list] = {"PyMC's": [], "profile's graph": []}
    for _ in range(runs):
        for way in walls:
            model = make_model()
            graph = profile_and_logp(model)[1] if way != "PyMC's" else None
            ours = jax_runs_use(model, graph) if graph is not None else contextlib.nullcontext()
            start = time.perf_counter()
            with jax_precision("float64"), flat_position("numpyro"), ours:
                sample_jax_nuts(draws=draws, tune=tune, chains=2, random_seed=1, model=model,
                                progressbar=False, chain_method="parallel",
                                compute_convergence_checks=False, nuts_sampler="numpyro")
            walls[way].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in walls.items()}


def main(argv=None) -> int:
    args = _parse(argv)
    warnings.filterwarnings("ignore")
    import zoo

    from pymc_accel.backends.run_logp import jaxified_logp

    models = {**zoo.zoo(quick=True), **zoo.held_out()}
    jaxified_logp(models["eight_schools"]())  # imports and PyTensor's caches, paid
    command = "python bench/time_run_logp.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"Command: `JAX_PLATFORMS=cpu {command}`", "",
             f"Machine: {platform.machine()}, Python {platform.python_version()}; milliseconds, "
             f"medians of {args.repeats} fresh models", "",
             "| model | PyMC's: build | compile | µs a call | profile's graph: build | compile "
             "| µs a call | built in the run: build | compile | µs a call "
             "| saved by the handed graph | seeded draws |"
             + (" NumPyro run, PyMC's | profile's | ratio |" if args.runs else ""),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"
             + ("---|---|---|" if args.runs else "")]
    for name in args.models.split(","):
        t = time_builds(models[name], args.repeats)
        saved = t["PyMC's build"] - t["profile's graph build"]
        row = f"| {name} "
        for way in ("PyMC's", "profile's graph", "built in the run"):
            row += (f"| {t[f'{way} build']:.1f} | {t[f'{way} compile']:.0f} "
                    f"| {t[f'{way} call']:.1f} ")
        row += f"| {saved:.1f} | {'the same' if same_draws(models[name]) else 'differ'} |"
        if args.runs:
            w = time_runs(models[name], args.runs, args.tune, args.draws)
            row += (f" {w["PyMC's"]:.2f} s | {w["profile's graph"]:.2f} s "
                    f"| {w["profile's graph"] / w["PyMC's"]:.3f} |")
        print(row, flush=True)
        lines.append(row)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
