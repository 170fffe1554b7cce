"""How many of a model's unknown shapes the census infers, and what the inference costs.

PyTensor leaves some ops' output lengths unknown (a convolution's, a Cholesky's in some
graphs, a ZeroSumNormal's); :func:`pymc_accel.census.inferred_shapes` gives what each op's
shape inference can. For every model of ``bench/zoo.py``'s ``named()`` whose profile has
unknown shapes: the shapes inferred, those still unknown, and the inference's seconds beside
the whole profile's (profile store off):

    JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off PYMC_ACCEL_PROFILE_CACHE=off \\
        python bench/count_inferred_shapes.py > docs/results/inferred-shapes-cpu-<date>.txt
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    warnings.filterwarnings("ignore")
    import zoo

    import pymc_accel.census as census
    from pymc_accel.profile import profile_model

    real = census.inferred_shapes
    seen: dict[str, float] = {}

    def timed(*args):
        start = time.perf_counter()
        found = real(*args)
        seen["seconds"] = seen.get("seconds", 0.0) + time.perf_counter() - start
        seen["inferred"] = seen.get("inferred", 0) + len(found)
        return found

    census.inferred_shapes = timed
    print(f"{'model':22s} {'inferred':>8s} {'unknown':>8s} {'inference (s)':>14s} "
          f"{'profile (s)':>12s}", flush=True)
    for name, make in zoo.named().items():
        seen.clear()
        try:
            model = make()
            start = time.perf_counter()
            profile = profile_model(model)
            seconds = time.perf_counter() - start
        except Exception as exc:  # noqa: BLE001 - a model the profile cannot take is named
            print(f"{name:22s} {type(exc).__name__}", flush=True)
            continue
        if seen.get("inferred") or profile.census.unknown_shapes:
            print(f"{name:22s} {seen.get('inferred', 0):8d} {profile.census.unknown_shapes:8d} "
                  f"{seen.get('seconds', 0.0):14.3f} {seconds:12.2f}", flush=True)


if __name__ == "__main__":
    main()
