"""How many memory maps a JAX sampler's run holds at its peak: what a process's
``vm.max_map_count`` (65,530 by default on Linux) bounds.

XLA's CPU runtime compiles a program's kernels apart and maps each one's code into memory, so
a large program (one ``pt.linalg.expm`` is hundreds of XLA ops) takes thousands of maps; at the
limit LLVM's allocation fails ("Cannot allocate memory", "Unable to allocate section memory")
and ends the process, with no error to catch. For each model and candidate, in a fresh process
(its primer run of eight schools first, so that the maps JAX itself holds are counted before),
one run of 10 + 10 draws x 2 chains through the backend, as ``bench_regret.py`` times a
candidate, while a thread reads ``/proc/self/maps`` every 20 ms. Each JSON line has the peak,
the count before the run, and the census's program ops (``costmodel.xla_program_ops``).

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python bench/count_xla_memory_maps.py \\
        --models eight_schools,ctmc_2,ctmc_8,ctmc_16 \\
        --candidates "numpyro[cpu,float64,chain_method=parallel]" \\
        > docs/results/xla-memory-maps-cpu-2026-12-01.jsonl
    python bench/count_xla_memory_maps.py --fit docs/results/xla-memory-maps-cpu-2026-12-01.jsonl

``--fit`` fits, per candidate, the maps a run adds (peak less before) as ``a + b m`` for ``m``
program ops in the census, by least squares over the models with such ops
(``memory_maps.MAPS_PER_RUN`` and ``MAPS_PER_PROGRAM_OP``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def one(name: str, label: str) -> dict:
    """The line for model ``name`` and candidate ``label`` (call in a fresh process)."""
    from bench_regret import offered_candidates
    from fit_numpyro_tuning import _factory

    from pymc_accel import costmodel
    from pymc_accel.backend import SampleRequest
    from pymc_accel.profile import profile_model
    from pymc_accel.registry import get_registry

    registry = get_registry()
    request = SampleRequest(draws=10, tune=10, chains=2, cores=2, random_seed=1,
                            progressbar=False)
    primer_profile = profile_model(_factory("eight_schools")())
    primer = offered_candidates(primer_profile).get(label)
    if primer is not None:
        registry.backends[primer.backend].sample(_factory("eight_schools")(), primer, request)
    profile = profile_model(_factory(name)())
    candidate = offered_candidates(profile)[label]
    before = _maps()
    peak = [before]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _maps())
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    start = time.perf_counter()
    registry.backends[candidate.backend].sample(_factory(name)(), candidate, request)
    wall = time.perf_counter() - start
    done.set()
    thread.join()
    peak[0] = max(peak[0], _maps())
    return {"model": name, "candidate": label, "maps_before": before, "maps_peak": peak[0],
            "maps_after": _maps(), "wall": wall, "kernels": profile.census.compiled_kernels,
            "program_ops": costmodel.xla_program_ops(profile)}


def fit(paths: list[str]) -> None:
    """Print ``a + b m`` per candidate (see the module's docstring)."""
    from collections import defaultdict

    from fit_xla_program_ops import line_fit

    by_candidate: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for path in paths:
        for text in Path(path).read_text().splitlines():
            line = json.loads(text)
            ops = sum((line.get("program_ops") or {}).values())
            if "error" in line:
                print(f"  {line['candidate']} {line['model']}: {line['error'][:120]}")
            elif ops:
                by_candidate[line["candidate"]].append(
                    (ops, line["maps_peak"] - line["maps_before"]))
    for label, points in by_candidate.items():
        if len(points) < 2:
            print(f"{label}: {points} (too few to fit)")
            continue
        a, b = line_fit([m for m, _ in points], [d for _, d in points])
        print(f"{label}: {a:.0f} + {b:.1f} maps an op "
              f"({', '.join(f'{m} ops: {d}' for m, d in points)})")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="eight_schools,ctmc_2,ctmc_8,ctmc_16")
    p.add_argument("--candidates", default="numpyro[cpu,float64,chain_method=parallel]",
                   help="labels, separated by ';'")
    p.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # a worker's model and candidate
    p.add_argument("--fit", nargs="*", help="result files to fit")
    args = p.parse_args(argv)
    if args.fit:
        fit(args.fit)
        return
    if args.one:
        print(json.dumps(one(*args.one)), flush=True)
        return
    for label in args.candidates.split(";"):
        for name in args.models.split(","):
            done = subprocess.run([sys.executable, __file__, "--one", name, label],
                                  capture_output=True, text=True)
            lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
            if done.returncode or not lines:
                tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
                print(json.dumps({"model": name, "candidate": label,
                                  "error": f"exit {done.returncode}: {tail[:300]}"}), flush=True)
            else:
                print(lines[-1], flush=True)


if __name__ == "__main__":
    main()
