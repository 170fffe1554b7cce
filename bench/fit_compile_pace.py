"""Does a small compile, timed the way a calibration could time it, follow the samplers' fixed
costs as the machine's pace changes by the hour?

On 2026-11-26 every sampler's runs took 1.3-1.8x longer at 14:00 than at 11:55, while the
machine calibration (flops, bandwidth, call overhead) measured the same figures both times
(docs/benchmarks.md, "Three ways to stop one run from flipping the choice"). The slow part was
compiling (numba's LLVM, XLA) and NumPyro's fused loop. Here, every ``--every`` seconds for
``--iterations`` rounds, a fresh process times:

- ``numba_compile``: ``numba.njit`` of a fixed 40-line function, not cached (LLVM's work);
- ``xla_compile``: ``jax.jit(...).lower(...).compile()`` of a fixed 60-op function, with no
  persistent compilation cache;
- ``calibration``: the calibration's elementwise flops (``machine._best_of`` of ``np.exp``);
- ``nutpie_fixed`` and ``numpyro_fixed``: eight schools, 10 + 10 draws x 2 chains through each
  backend's ``sample`` (a run that is its fixed cost), after one warm-up run each.

Each round is one JSON line. (The rounds of
``docs/results/fit-compile-pace-cpu-2026-11-26.jsonl`` timed the probes first, so JAX started
with one CPU device and NumPyro's two chains ran in turn: its fixed cost there is that
configuration's, about twice a run's on two devices.) If the compile timings rise and fall
with the fixed costs (their log ratios correlate over rounds that span a change of pace) while
the calibration's figure does not, a timed compile is what a calibration would need to scale
the runtimes' fixed seconds.

    JAX_PLATFORMS=cpu python bench/fit_compile_pace.py --iterations 20 --every 120 \\
        > docs/results/fit-compile-pace-cpu-2026-11-26.jsonl
    python bench/fit_compile_pace.py --fit docs/results/fit-compile-pace-cpu-2026-11-26.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
os.environ["PYMC_ACCEL_HISTORY"] = "off"
out = {"time": time.strftime("%H:%M:%S")}
# the samplers first: pymc-accel asks XLA for a CPU device per core before JAX starts, which
# the XLA probe below would otherwise start with one (NumPyro's chains then run in turn)

import zoo
from bench_regret import offered_candidates
from pymc_accel.backend import SampleRequest
from pymc_accel.profile import profile_model
from pymc_accel.registry import get_registry
offered = offered_candidates(profile_model(zoo.eight_schools()))
for key, label in (("nutpie_fixed", "numba[cpu,float64,driver=nutpie]"),
                   ("numpyro_fixed", "numpyro[cpu,float64,chain_method=parallel]")):
    candidate = offered[label]
    backend = get_registry().backends[candidate.backend]
    walls = []
    for seed in (1, 2):  # the first warms the process (imports, first use)
        request = SampleRequest(draws=10, tune=10, chains=2, cores=2, random_seed=seed,
                                progressbar=False)
        t = time.perf_counter()
        backend.sample(zoo.eight_schools(), candidate, request)
        walls.append(time.perf_counter() - t)
    out[key] = walls[-1]
import numpy as np
from pymc_accel.machine import _best_of
a, b = np.random.default_rng(0).random(1 << 20), np.empty(1 << 20)
out["calibration_exp_seconds"] = _best_of(lambda: np.exp(a, out=b))

import numba
SOURCE = "def f(x, y):\n    s = 0.0\n    for i in range(x.shape[0]):\n" + "".join(
    f"        s += {k + 1}.0 * np.sin(x[i] * {k}.5 + y[i]) / (1.0 + abs(x[i] - {k}.0))\n"
    for k in range(40)) + "    return s\n"
t = time.perf_counter()
scope = {"np": np}
exec(SOURCE, scope)
numba.njit(cache=False)(scope["f"])(a[:8], a[:8])
out["numba_compile"] = time.perf_counter() - t

import jax, jax.numpy as jnp
def g(x):
    for k in range(60):
        x = jnp.tanh(x * (k + 1.5)) + jnp.sin(x) * k
    return jnp.sum(x)
x = jnp.ones(16)
t = time.perf_counter()
jax.jit(jax.grad(g)).lower(x).compile()
out["xla_compile"] = time.perf_counter() - t

print(json.dumps(out))
"""


def one_round() -> dict:
    """One fresh process's timings."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).parent.parent)
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if not lines:
        return {"error": done.stderr[-500:]}
    return json.loads(lines[-1])


def fit(paths: list[str]) -> dict[str, float]:
    """Correlation over rounds of each timing's logarithm with the two fixed costs' mean
    logarithm; prints the rounds and returns the correlations."""
    rows = [json.loads(x) for p in paths for x in Path(p).read_text().splitlines()
            if x.strip() and "error" not in json.loads(x)]
    fixed = [(math.log(r["nutpie_fixed"]) + math.log(r["numpyro_fixed"])) / 2 for r in rows]
    out = {}
    for key in ("numba_compile", "xla_compile", "calibration_exp_seconds"):
        xs = [math.log(r[key]) for r in rows]
        mx, my = sum(xs) / len(xs), sum(fixed) / len(fixed)
        sxy = sum((x - mx) * (y - my) for x, y in zip(xs, fixed))
        sxx = sum((x - mx) ** 2 for x in xs)
        syy = sum((y - my) ** 2 for y in fixed)
        out[key] = sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")
    for r in rows:
        print(f"{r['time']}  numba {r['numba_compile']:.3f} s  xla {r['xla_compile']:.3f} s  "
              f"exp {r['calibration_exp_seconds'] * 1e3:.2f} ms  nutpie {r['nutpie_fixed']:.2f} s"
              f"  numpyro {r['numpyro_fixed']:.2f} s")
    print("correlation with the fixed costs (logs): " +
          ", ".join(f"{k} {v:+.2f}" for k, v in out.items()))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--every", type=float, default=120.0, help="seconds between rounds' starts")
    p.add_argument("--fit", nargs="*")
    args = p.parse_args(argv)
    if args.fit:
        fit(args.fit)
        return
    for i in range(args.iterations):
        start = time.monotonic()
        print(json.dumps(one_round()), flush=True)
        if i + 1 < args.iterations:
            time.sleep(max(0.0, args.every - (time.monotonic() - start)))


if __name__ == "__main__":
    main()
