"""Matrix-vector products' bandwidth under numba: the figures behind
``pymc_accel.costmodel.NUMBA_MATVEC_BANDWIDTH_FACTOR`` (docs/benchmarks.md, "Matrix-vector
products"). NumPyro's side is ``bench/fit_numpyro_tuning.py``.

``numba`` lines: a PyTensor function (numba mode) of ``X @ b`` and ``X.T @ r`` alone for a
constant ``X`` of each shape, one BLAS thread, median of 7 x 200 calls; its bytes (``X`` twice,
the vectors) per second as a multiple of NumPy's bandwidth as machine calibration measured it.

    JAX_PLATFORMS=cpu python bench/fit_matvec.py > docs/results/fit-matvec-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import time

SHAPES = ((3000, 100), (1000, 200), (5000, 20), (2000, 30), (2000, 10), (20000, 20),
          (100000, 20))


def numba_matvec(n: int, p: int, bandwidth: float) -> dict:
    """One ``numba`` line: seconds of ``X @ b`` and ``X.T @ r`` for an ``n x p`` ``X``."""
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from threadpoolctl import threadpool_limits

    X = pt.constant(np.random.default_rng(0).normal(size=(n, p)))
    b, r = pt.vector("b"), pt.vector("r")
    fn = pytensor.function([b, r], [pt.dot(X, b), pt.dot(X.T, r)], mode="NUMBA")
    fn.trust_input = True
    bv, rv = np.ones(p), np.ones(n)
    with threadpool_limits(1, user_api="blas"):
        fn(bv, rv)
        times = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(200):
                fn(bv, rv)
            times.append((time.perf_counter() - start) / 200)
    seconds = float(np.median(times))
    nbytes = 8.0 * 2 * (n * p + n + p)
    return {"kind": "numba", "shape": [n, p], "seconds": seconds, "bytes": nbytes,
            "bandwidth_factor": nbytes / seconds / bandwidth}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.parse_args(argv)
    from pymc_accel.machine import machine_figures

    machine = machine_figures()
    for n, q in SHAPES:
        print(json.dumps(numba_matvec(n, q, machine.cpu_bandwidth["float64"])), flush=True)


if __name__ == "__main__":
    main()
