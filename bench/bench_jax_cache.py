"""What JAX's compile cache on disk (``pymc_accel.jax_cache``) saves a user who runs a script
again: NumPyro's run at ``pm.sample``'s defaults in a new process, side by side.

For each model, three new processes one after another: the cache off
(``PYMC_ACCEL_JAX_CACHE=off``, every program compiles, as before the cache), the cache on and
empty (the run compiles and writes its programs), and the cache on again (the run loads them).
Each process imports everything, then times ``pymc_accel.sample(model, nuts_sampler="numpyro",
random_seed=1)`` (1000 + 1000 draws, 2 chains) with XLA's compile seconds from
``jax.monitoring``; the draws of the three are compared (the same program must give the same
draws). ``--rounds`` repeats the triple, models interleaved, and the table gives medians.

    JAX_PLATFORMS=cpu python bench/bench_jax_cache.py --out docs/results/jax-cache-cpu.json \\
        --markdown docs/results/jax-cache-cpu.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

QUICK = "eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid"

CHILD = """
import json, sys, time, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, {bench!r})
import jax.monitoring
import numpy as np
import pymc_accel
from zoo import zoo
{setup}

compiled = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, seconds, **_: compiled.append(seconds)
    if name.endswith("backend_compile_duration") else None)
model = zoo(quick=True)[{model!r}]()
start = time.perf_counter()
idata = pymc_accel.sample(model=model, nuts_sampler="numpyro", random_seed=1, chains=2,
                          progressbar=False, compute_convergence_checks=False)
wall = time.perf_counter() - start
first = sorted(idata.posterior.data_vars)[0]
print(json.dumps({{"wall": wall, "compile": sum(compiled), "programs": len(compiled),
                  "draws_digest": float(np.asarray(idata.posterior[first]).sum())}}))
"""


def run_child(model: str, cache_dir: str, jax_cache: str, extra_env: dict | None = None,
              setup: str = "") -> dict:
    """One new process's timed run (see the module docstring), with ``extra_env`` set and
    ``setup`` run after the imports."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAX_COMPILATION_CACHE_DIR", "JAX_COMPILATION_CACHE_MAX_SIZE")
           and not k.startswith("JAX_PERSISTENT")}
    env.update(PYMC_ACCEL_CACHE_DIR=cache_dir, PYMC_ACCEL_JAX_CACHE=jax_cache,
               PYMC_ACCEL_HISTORY="off", JAX_PLATFORMS=env.get("JAX_PLATFORMS", "cpu"),
               **(extra_env or {}))
    code = CHILD.format(bench=str(Path(__file__).parent), model=model, setup=setup)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                         capture_output=True, text=True, timeout=900)
    if out.returncode:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def parser(doc: str, models: str, rounds: int) -> argparse.ArgumentParser:
    """The arguments the JAX-cache benchmarks share: ``--models``, ``--rounds``, ``--out``,
    ``--markdown``."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--models", default=models)
    p.add_argument("--rounds", type=int, default=rounds)
    p.add_argument("--out")
    p.add_argument("--markdown")
    return p


def record(results: dict, name: str, arm: str, run: dict) -> None:
    """Add one child's run to ``results`` under its model and arm, and print it."""
    results["models"][name][arm].append(run)
    print(name, arm, {k: v for k, v in run.items() if k != "error"} or run["error"], flush=True)


def machine() -> str:
    """The machine line of a result file."""
    return (f"{platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}")


def results_header(script: str, argv) -> dict:
    """A result file's command and machine."""
    return {"command": f"python bench/{script} " + " ".join(
                argv if argv is not None else sys.argv[1:]),
            "machine": machine()}


def arm_medians(runs: dict, arms, keys=("wall", "compile")) -> dict | None:
    """Each arm's medians of ``keys`` over its runs that finished; ``None`` where an arm has
    none."""
    med = {}
    for arm in arms:
        ok = [r for r in runs[arm] if "wall" in r]
        if not ok:
            return None
        med[arm] = tuple(statistics.median(r[k] for r in ok) for k in keys)
    return med


def markdown(results: dict) -> str:
    """The medians as a Markdown table with the command and machine."""
    lines = [f"Command: `{results['command']}`", "", f"Machine: {results['machine']}", "",
             "| model | cache off: wall (XLA compile) | cache empty: wall (compile) | "
             "cache warm: wall (compile) | warm ÷ off | same draws |",
             "|---|---|---|---|---|---|"]
    for name, runs in results["models"].items():
        med = arm_medians(runs, ("off", "empty", "warm"))
        if med is None:
            lines.append(f"| {name} | failed | | | | |")
            continue
        same = all(len({r["draws_digest"] for r in (runs["off"][i], runs["empty"][i],
                                                     runs["warm"][i])}) == 1
                   for i in range(len(runs["off"])))
        cells = [f"{w:.2f} s ({c:.2f} s)" for w, c in med.values()]
        lines.append(f"| {name} | {' | '.join(cells)} | **{med['warm'][0] / med['off'][0]:.2f}** "
                     f"| {'yes' if same else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    args = parser(__doc__, QUICK, 1).parse_args(argv)
    from bench_regret import write_outputs

    names = args.models.split(",")
    results = {**results_header("bench_jax_cache.py", argv),
               "models": {n: {"off": [], "empty": [], "warm": []} for n in names}}
    for _ in range(args.rounds):
        for name in names:
            with tempfile.TemporaryDirectory() as off_dir, \
                    tempfile.TemporaryDirectory() as on_dir:
                for state, directory, switch in (("off", off_dir, "off"), ("empty", on_dir, "on"),
                                                 ("warm", on_dir, "on")):
                    record(results, name, state, run_child(name, directory, switch))
            if args.out:  # each model's runs as they finish
                Path(args.out).write_text(json.dumps(results, indent=1))
    write_outputs(results, markdown(results), args.out, args.markdown)
    return results


if __name__ == "__main__":
    main()
