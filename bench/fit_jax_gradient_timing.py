"""How well measured mode's timing of a JAX gradient predicts what NumPyro's sampler pays per
leapfrog on the CPU: the data behind ``_measure.time_jax_sampler_gradient``.

For each model, in a fresh process, side by side:

- ``in_sampler``: NumPyro's cost per leapfrog, two chains side by side on two XLA CPU devices,
  its tuned kernel run in one compiled loop at two lengths (``fit_numpyro_leapfrog.measure``
  and its ``per_leapfrog``: the median walls' difference over the leapfrogs' difference);
- ``standalone``: what measured mode took until 2026-11-26: one jitted value-and-gradient call
  timed alone, less the modelled dispatch of its kernels (at most four fifths of it), plus the
  modelled driver;
- ``loop``: the gradient timed inside one compiled loop with the two chains side by side
  (``_measure.time_jax_sampler_gradient``), plus the modelled driver;
- ``modelled``: the cost model's figure (``costmodel.JAX_CPU_SAMPLER``), no timing.

Each JSON line has the four seconds and each figure's ratio to ``in_sampler``.
``--summarise`` prints the geometric mean and worst ratio per figure.

    JAX_PLATFORMS=cpu python bench/fit_jax_gradient_timing.py --models glm_poisson,seed_mid \\
        > docs/results/fit-jax-gradient-timing-cpu.jsonl
    python bench/fit_jax_gradient_timing.py --summarise docs/results/fit-jax-gradient-timing-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

QUICK_ZOO = "eight_schools,glm_linear,glm_poisson,funnel,pk_scan,seed_small,seed_mid"


def one_model(name: str, lengths: tuple[int, int], warmup: int, repeats: int) -> dict:
    """The four figures for zoo model ``name`` (call in a fresh process)."""
    from fit_numpyro_leapfrog import _factory, measure, per_leapfrog

    from pymc_accel import costmodel
    from pymc_accel.backends import _measure
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    machine = machine_figures()
    sampler = costmodel.JAX_CPU_SAMPLER
    line = measure(name, "float64", lengths, warmup, machine, repeats)
    truth = per_leapfrog(line)
    model = _factory(name)()
    profile = profile_model(model)
    driver = costmodel.driver_seconds(profile, machine, sampler)
    _, kernel, _ = _measure.time_jax_gradient(model, "cpu", "float64", 5.0)
    dispatch = ((costmodel.JAX_CPU.per_kernel_seconds - sampler.per_kernel_seconds)
                * profile.census.kernels * costmodel._machine_scale(machine))
    standalone = max(kernel - dispatch, 0.2 * kernel) + driver
    looped = _measure.time_jax_sampler_gradient(model, "float64", 2, 5.0)
    if looped is None:
        raise RuntimeError(f"{name}: the compiled loop's gradient was not resolved in 5 s")
    compiled, per, passes, _ = looped
    loop = per + driver
    modelled = costmodel.cpu_gradient_seconds(profile, machine, "float64", sampler, 2).value
    out = {"model": name, "n_free": profile.n_free, "kernels": profile.census.kernels,
           "in_sampler": truth, "in_sampler_runs": line["runs"], "standalone": standalone,
           "standalone_kernel": kernel, "standalone_dispatch_taken_off": dispatch,
           "loop": loop, "loop_gradient": per, "loop_passes": passes,
           "loop_compile": compiled, "driver": driver, "modelled": modelled,
           # what the modelled figures owe to ops JAX compiles as programs of their own
           "program_ops": costmodel.xla_program_ops(profile),
           "modelled_programs": costmodel.xla_program_seconds(profile, "leapfrog"),
           "modelled_gradient_compile": costmodel.gradient_compile_seconds(
               profile, costmodel.JAX_CPU),
           "modelled_programs_gradient_compile": costmodel.xla_program_seconds(
               profile, "gradient_compile")}
    for key in ("standalone", "loop", "modelled"):
        out[f"{key}_ratio"] = out[key] / truth if truth > 0 else None
    return out


def summarise(paths: list[str]) -> None:
    """Geometric mean and worst ratio to the in-sampler figure, per figure, over the models
    (a model's lines are taken together by their medians)."""
    import statistics
    from collections import defaultdict

    by_model: dict[str, list[dict]] = defaultdict(list)
    for path in paths:
        for text in Path(path).read_text().splitlines():
            line = json.loads(text)
            if "error" not in line:
                by_model[line["model"]].append(line)
    print("| model | in sampler (µs) | standalone (µs) | loop (µs) | modelled (µs) |")
    print("|---|---|---|---|---|")
    ratios: dict[str, list[float]] = defaultdict(list)
    for name, lines in by_model.items():
        med = {k: statistics.median(line[k] for line in lines)
               for k in ("in_sampler", "standalone", "loop", "modelled")}
        print(f"| {name} | " + " | ".join(
            f"{med[k] * 1e6:.1f}" + ("" if k == "in_sampler" else
                                    f" ({med[k] / med['in_sampler']:.2f}x)")
            for k in ("in_sampler", "standalone", "loop", "modelled")) + " |")
        if med["in_sampler"] > 0:
            for k in ("standalone", "loop", "modelled"):
                ratios[k].append(med[k] / med["in_sampler"])
    for k, rs in ratios.items():
        gm = math.exp(statistics.fmean(math.log(r) for r in rs))
        worst = max(rs, key=lambda r: abs(math.log(r)))
        print(f"{k}: geometric mean {gm:.2f}x, worst {worst:.2f}x over {len(rs)} models")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=QUICK_ZOO)
    p.add_argument("--lengths", default="100,1000")
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a worker's model
    p.add_argument("--summarise", nargs="*", help="result files to summarise")
    args = p.parse_args(argv)
    if args.summarise:
        summarise(args.summarise)
        return
    lengths = tuple(int(n) for n in args.lengths.split(","))
    if args.one:
        print(json.dumps(one_model(args.one, lengths, args.warmup, args.repeats)), flush=True)
        return
    for name in filter(None, args.models.split(",")):
        cmd = [sys.executable, __file__, "--one", name, "--lengths", args.lengths,
               "--warmup", str(args.warmup), "--repeats", str(args.repeats)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
        lines = done.stdout.strip().splitlines()
        if done.returncode or not lines:
            print(json.dumps({"model": name, "error": done.stderr[-300:]}), flush=True)
        else:
            print(lines[-1], flush=True)


if __name__ == "__main__":
    main()
