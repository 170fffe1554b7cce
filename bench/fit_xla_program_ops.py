"""Fit what XLA on the CPU charges for an op JAX lowers to a program of its own
(``costmodel.XLA_PROGRAM_OPS``: ``pt.linalg.expm``), from the Markov-chain shapes ``ctmc_N``
of ``bench/zoo.py`` (two ``Expm`` in the census an interval).

It reads the lines of two timing scripts, each model in a fresh process:

- ``bench/fit_numpyro_fixed.py --jax-cache on`` (NumPyro's 10 + 10 draw runs: each model's
  first run, which compiles the sampler's program, and repeats that load it);
- ``bench/fit_jax_gradient_timing.py`` (NumPyro's leapfrog in its sampler, and the compile of
  measured mode's compiled loop).

For each figure it takes what was timed less what the cost model gave without these ops (the
lines keep what the modelled figures owed to them when they were timed), and fits per op in
the census:

- ``leapfrog``: seconds an op in NumPyro's leapfrog, through the origin;
- ``cached`` and ``cold``: seconds an op in a repeat and in the first run beyond a repeat,
  through the origin, divided by the machine's start-up pace (the selection multiplies the
  modelled start-up seconds by it);
- ``gradient_compile``: seconds an op in measured mode's compile, through the origin (its
  budget check takes the figure as it is).

    for m in eight_schools ctmc_2 ctmc_8 ctmc_16 ctmc_32; do
        JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/fit_numpyro_fixed.py \\
            --jax-cache on --primer funnel --repeats 2 --models $m
    done > docs/results/fit-xla-program-ops-fixed-cpu-2026-12-01.jsonl
    JAX_PLATFORMS=cpu python bench/fit_jax_gradient_timing.py \\
        --models ctmc_2,ctmc_8,ctmc_16,ctmc_32 \\
        > docs/results/fit-xla-program-ops-gradient-cpu-2026-12-01.jsonl
    python bench/fit_xla_program_ops.py \\
        --fixed docs/results/fit-xla-program-ops-fixed-cpu-2026-12-01.jsonl \\
        --gradient docs/results/fit-xla-program-ops-gradient-cpu-2026-12-01.jsonl

The incomplete gamma function's nodes (``--op igamma``), on a copula, a truncated gamma
regression and interval-censored waiting times of ``bench/zoo.py`` with 1 to 8 nodes:

    for m in eight_schools copula_150 truncated_gamma_6 intervals_4 intervals_8; do
        JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/fit_numpyro_fixed.py \\
            --jax-cache on --primer funnel --repeats 2 --models $m
    done > docs/results/fit-xla-program-ops-fixed-cpu-2026-12-01-igamma.jsonl
    JAX_PLATFORMS=cpu python bench/fit_jax_gradient_timing.py \\
        --models copula_150,truncated_gamma_6,intervals_4,intervals_8 \\
        > docs/results/fit-xla-program-ops-gradient-cpu-2026-12-01-igamma.jsonl
    python bench/fit_xla_program_ops.py --op igamma \\
        --fixed docs/results/fit-xla-program-ops-fixed-cpu-2026-12-01-igamma.jsonl \\
        --gradient docs/results/fit-xla-program-ops-gradient-cpu-2026-12-01-igamma.jsonl

``--numba FILE`` fits the numba drivers' figures (``costmodel.NUMBA_PROGRAM_OPS``) from
``bench/fit_cold_compile.py`` runs of the same shapes (each candidate in a new process with an
empty PyTensor compile directory: a primer, then the target twice). Per driver, by least
squares ``a + b m``: the target's second run (its kernels cached) and its first run beyond
the second (the compile). ``b`` is the op's; ``a`` holds what the first model with the op
compiles once for the machine (PyTensor's numba matrix exponential, about 20 s), which is not
charged. Both are divided by this machine's start-up pace when the fit runs (``--pace``
overrides it).

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/fit_cold_compile.py \\
        --models ctmc_2,ctmc_8,ctmc_16,ctmc_32 \\
        --candidates "numba[cpu,float64,driver=nutpie],numba[cpu,float64,driver=pymc]" \\
        > docs/results/fit-cold-compile-ctmc-cpu-2026-12-01.jsonl
    python bench/fit_xla_program_ops.py --numba docs/results/fit-cold-compile-ctmc-cpu-2026-12-01.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def _lines(path: str) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text().splitlines()
            if x.strip() and "error" not in json.loads(x)]


def _ops(line: dict, op: str) -> int:
    return int((line.get("program_ops") or {}).get(op, 0))


def _through_origin(xs: list[float], ys: list[float]) -> float:
    """``k`` of ``y = k x`` by least squares."""
    return sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)


def fit(fixed_path: str, gradient_path: str, op: str = "Expm") -> dict[str, float]:
    """Print each model's residuals and the fitted figures; return the figures."""
    figures: dict[str, float] = {}
    fixed = [x for x in _lines(fixed_path) if _ops(x, op)]
    if fixed:
        ms, cached, cold = [], [], []
        print(f"NumPyro's runs (10 + 10 draws x 2 chains), per {op} in the census:")
        for x in fixed:
            m, pace = _ops(x, op), x["start_up_pace"]
            repeat = statistics.median(r["wall"] for r in x["runs"])
            first = x["first_run"]["wall"] - repeat
            # the modelled figures without the ops, at the machine's pace, as selection pays
            base_fixed = pace * (x["modelled_fixed"] - x.get("modelled_programs_cached", 0.0))
            base_cold = pace * (x["modelled_cold"] - x.get("modelled_programs_cold", 0.0))
            ms.append(m)
            cached.append((repeat - base_fixed) / pace)
            cold.append((first - base_cold) / pace)
            print(f"  {x['model']:8s} {m:3d} ops: repeat {repeat:.2f} s (modelled without the "
                  f"ops {base_fixed:.2f}), first run beyond it {first:.2f} s ({base_cold:.2f}), "
                  f"pace {pace:.2f}")
        figures["cached"] = _through_origin(ms, cached)
        figures["cold"] = _through_origin(ms, cold)
    grads = [x for x in _lines(gradient_path) if _ops(x, op)]
    if grads:
        ms, leap, compiles = [], [], []
        print(f"NumPyro's leapfrog and measured mode's compile, per {op} in the census:")
        for x in grads:
            m = _ops(x, op)
            base = x["modelled"] - x.get("modelled_programs", 0.0)
            base_compile = (x["modelled_gradient_compile"]
                            - x.get("modelled_programs_gradient_compile", 0.0))
            ms.append(m)
            leap.append(x["in_sampler"] - base)
            compiles.append(x["loop_compile"] - base_compile)
            print(f"  {x['model']:8s} {m:3d} ops: leapfrog {x['in_sampler'] * 1e6:.1f} µs "
                  f"(modelled without the ops {base * 1e6:.1f}), measured mode's compile "
                  f"{x['loop_compile']:.2f} s ({base_compile:.2f})")
        figures["leapfrog"] = _through_origin(ms, leap)
        figures["gradient_compile"] = _through_origin(ms, compiles)
        for x, m in zip(grads, ms):
            fitted = figures["leapfrog"] * m
            print(f"    {x['model']}: leapfrog beyond the model fitted at {fitted * 1e6:.1f} µs "
                  f"against {(x['in_sampler'] - x['modelled'] + x.get('modelled_programs', 0)) * 1e6:.1f}")
    print(f"{op}: " + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()))
    return figures


def line_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """``(a, b)`` of ``y = a + b x`` by least squares."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def fit_numba(path: str, pace: float | None = None, op: str = "Expm") -> dict[str, tuple]:
    """Print and return, per numba candidate, ``(cached, cold)`` seconds an op (see the
    module's docstring)."""
    import sys
    from collections import defaultdict

    sys.path.insert(0, str(Path(__file__).parent))
    import zoo

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    if pace is None:
        pace = costmodel.start_up_pace(machine_figures())
    walls: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for x in _lines(path):
        if "wall" in x and x["model"] == x.get("target"):
            walls[(x["candidate"], x["model"])][x["position"]] = x["wall"]
    shapes = zoo.program_size_shapes()
    ops = {name: costmodel.xla_program_ops(profile_model(shapes[name]())).get(op, 0)
           for _, name in walls}
    out = {}
    for label in sorted({c for c, _ in walls}):
        points = sorted((ops[m], w[3], w[2] - w[3]) for (c, m), w in walls.items()
                        if c == label and 2 in w and 3 in w)
        (wa, wb), (ca, cb) = (line_fit([p[0] for p in points], [p[1] for p in points]),
                              line_fit([p[0] for p in points], [p[2] for p in points]))
        print(f"{label}: cached run {wa:.2f} s + {wb:.3f} s an {op}, first compile beyond it "
              f"{ca:.2f} s + {cb:.3f} s ({', '.join(f'{m} ops: {w:.2f}, {c:.2f}' for m, w, c in points)});"
              f" at the fit machine's pace ({pace:.2f}): {wb / pace:.3f} and {cb / pace:.3f}")
        out[label] = (wb / pace, cb / pace)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fixed")
    p.add_argument("--gradient")
    p.add_argument("--numba")
    p.add_argument("--pace", type=float)
    p.add_argument("--op", default="Expm")
    args = p.parse_args(argv)
    if args.fixed and args.gradient:
        fit(args.fixed, args.gradient, args.op)
    if args.numba:
        fit_numba(args.numba, args.pace, args.op)


if __name__ == "__main__":
    main()
