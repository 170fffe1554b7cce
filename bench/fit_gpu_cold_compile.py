"""The first compile of NumPyro's sampler on a GPU, from the leases' runs: the data for
``costmodel.GPU_COLD_SECONDS`` and ``costmodel.GPU_COLD_SECONDS_PER_KERNEL``.

A model's first GPU run compiles the sampler's XLA programs for the GPU (JAX's disk cache
then holds them): its wall time less the same candidate's warm median is the first compile.
Taken from the regret runs (``bench_regret.py`` JSON: each GPU row's cold run against its warm
runs) and from ``fit_numpyro_fixed.py`` lines of a GPU candidate (its ``first_run`` against
its repeats), each set against the kernels of the model's profile as the GPU candidate's
estimate counts them (affine scans rewritten to parallel prefixes), and fitted as
``a + b kernels`` by least squares. Each run is also set against the cost model's figure as it
stands (``costmodel.gpu_cold_compile_seconds``'s constants), so a lease's runs test it out of
sample:

    python bench/fit_gpu_cold_compile.py docs/results/regret-gpu-h200-*.json \\
        docs/results/fit-numpyro-fixed-h200-host-gpu-2026-11-27.jsonl
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from pymc_accel.costmodel import GPU_COLD_SECONDS, GPU_COLD_SECONDS_PER_KERNEL  # noqa: E402


def gpu_kernels(name: str) -> int:
    """The model's compiled kernels as a GPU candidate's first compile is priced by them."""
    from fit_numpyro_tuning import _factory
    from pymc_accel.profile import profile_model
    from pymc_accel.rewrites.apply import with_parallel_scans

    census = with_parallel_scans(profile_model(_factory(name)()), "gpu").census
    return census.compiled_kernels


def first_compiles(path: str) -> list[tuple[str, str, float]]:
    """``(model, candidate, seconds)`` of every GPU first compile a result file holds."""
    text = Path(path).read_text()
    out = []
    if path.endswith(".jsonl"):
        for line in (json.loads(x) for x in text.splitlines() if x.strip()):
            if "gpu" in line["candidate"] and line.get("first_run"):
                warm = statistics.median(r["wall"] for r in line["runs"])
                out.append((line["model"], line["candidate"], line["first_run"]["wall"] - warm))
        return out
    results = json.loads(text)
    partial = [results["partial"]] if "partial" in results else []
    for model in [*results.get("models", []), *partial]:
        for row in model.get("rows", []):
            walls = [r["wall"] for r in row["runs"]]
            if "gpu" in row["candidate"] and len(walls) > 1:
                first = walls[0] - statistics.median(walls[1:])
                out.append((model["model"], row["candidate"], first))
    return out


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``seconds = a + b kernels``; returns ``(a, b)``."""
    xs, ys = [float(k) for k, _ in points], [s for _, s in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main(argv=None) -> None:
    paths = sys.argv[1:] if argv is None else argv
    rows = [(m, c, s, p) for p in paths for m, c, s in first_compiles(p)]
    kernels = {m: gpu_kernels(m) for m in {r[0] for r in rows}}
    a, b = fit([(kernels[m], s) for m, _, s, _ in rows])
    print(f"first GPU compile = {a:.2f} s + {b * 1e3:.1f} ms x kernels ({len(rows)} runs, "
          f"{len(kernels)} models); the cost model's: {GPU_COLD_SECONDS:.2f} s + "
          f"{GPU_COLD_SECONDS_PER_KERNEL * 1e3:.1f} ms x kernels")
    for m, c, s, p in sorted(rows, key=lambda r: kernels[r[0]]):
        fitted = a + b * kernels[m]
        priced = GPU_COLD_SECONDS + GPU_COLD_SECONDS_PER_KERNEL * kernels[m]
        print(f"  {m:14s} {kernels[m]:4d} kernels  {c:46s} {s:5.1f} s  fit {fitted:5.1f} "
              f"({fitted / s:.2f}x)  cost model {priced:5.1f} ({priced / s:.2f}x)  "
              f"{Path(p).name}")


if __name__ == "__main__":
    main()
