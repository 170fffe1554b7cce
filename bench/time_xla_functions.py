"""What XLA's scalar functions cost an element on the CPU, as a JAX sampler evaluates them.

NumPyro's sampler runtime (``costmodel.JAX_CPU_SAMPLER``) charges every transcendental function
the census counts as evaluated 10 flops. This times each, to see which cost far more
(docs/benchmarks.md, "XLA's gamma-family functions timed, and not priced").

Each function is PyTensor's own scalar op (``pt.gammaln``, ``pt.psi``, ...) jaxified as PyMC's
JAX samplers jaxify a log density (``pymc.sampling.jax.get_jaxified_graph``), so the XLA code
timed is the code NumPyro's sampler runs. It is applied ``--passes`` times to ``--size``
elements inside one jitted ``lax.fori_loop`` (no dispatch per pass, as the sampler's loop runs
its gradient), each pass fed by the last so that XLA cannot hoist it; the same loop with the
identity in its place is taken off. Best of ``--rounds`` rounds, in ns an element and in this
machine's calibrated ``exp``s of the same precision (10 flops at ``cpu_flops``, what the cost
model prices functions in). One JSON line per function and precision:

    JAX_PLATFORMS=cpu python bench/time_xla_functions.py --out docs/results/time-xla-functions-cpu.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

#: census name -> (PyTensor function name, input range): the range keeps every function finite
FUNCTIONS = {
    "Identity": (None, (0.5, 20.0)),
    "Exp": ("exp", (-3.0, 3.0)),
    "Log": ("log", (0.5, 20.0)),
    "Log1p": ("log1p", (0.5, 20.0)),
    "Sigmoid": ("sigmoid", (-3.0, 3.0)),
    "Softplus": ("softplus", (-3.0, 3.0)),
    "Erf": ("erf", (-2.0, 2.0)),
    "Erfc": ("erfc", (-2.0, 2.0)),
    "Erfinv": ("erfinv", (-0.9, 0.9)),
    "GammaLn": ("gammaln", (0.5, 20.0)),
    "Gamma": ("gamma", (0.5, 20.0)),
    "Psi": ("psi", (0.5, 20.0)),
    "TriGamma": ("tri_gamma", (0.5, 20.0)),
}


def _jax_function(name: str | None, dtype: str):
    """PyTensor's scalar op ``name`` over a vector, jaxified as PyMC's JAX samplers do."""
    import pytensor.tensor as pt
    from pymc.sampling.jax import get_jaxified_graph

    if name is None:
        return lambda v: v
    x = pt.vector("x", dtype=dtype)
    f = get_jaxified_graph(inputs=[x], outputs=[getattr(pt, name)(x)])
    return lambda v: f(v)[0]


def time_function(census_name: str, dtype: str, size: int, passes: int, rounds: int) -> float:
    """Best seconds an element of ``passes`` applications of the function, loop included."""
    import jax
    import jax.numpy as jnp

    name, (low, high) = FUNCTIONS[census_name]
    f = _jax_function(name, dtype)
    x = jnp.asarray(np.random.default_rng(0).uniform(low, high, size), dtype=dtype)
    tiny = jnp.asarray(1e-30 if dtype == "float64" else 1e-20, dtype=dtype)

    def body(_, acc):
        # fed by the last pass (by nothing XLA can prove is zero), so every pass is computed
        return acc + f(x + acc * tiny)

    from fit_xla_ops import best_seconds

    loop = jax.jit(lambda: jax.lax.fori_loop(0, passes, body, jnp.zeros_like(x)))

    def run():
        return jax.block_until_ready(loop())

    run()  # compiled before it is timed
    return best_seconds(run, rounds) / passes / size


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--functions", default=",".join(FUNCTIONS),
                   help="comma-separated census names (default: all)")
    p.add_argument("--size", type=int, default=4000)
    p.add_argument("--passes", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", default=None, help="also write the lines here")
    args = p.parse_args(argv)
    import jax

    jax.config.update("jax_enable_x64", True)
    from fit_xla_ops import timed_line, write_lines

    from pymc_accel.machine import machine_figures

    figures = machine_figures()
    names = [n for n in args.functions.split(",") if n != "Identity"]
    lines = []
    for dtype in ("float64", "float32"):
        exp_ns = 10.0 / figures.cpu_flops[dtype] * 1e9
        loop_ns = time_function("Identity", dtype, args.size, args.passes, args.rounds) * 1e9
        for name in names:
            ns = time_function(name, dtype, args.size, args.passes, args.rounds) * 1e9 - loop_ns
            fields = {"function": name, "precision": dtype, "size": args.size,
                      "loop_ns": round(loop_ns, 3)}
            lines.append(timed_line(fields, ns, exp_ns))
    write_lines(args.out, lines)
    return lines


if __name__ == "__main__":
    main()
