"""A model's JAX gradient timed on one XLA CPU device and on two side by side, as NumPyro's chains
run: where a sampler's leapfrog costs more than its gradient, is it the devices? And what does
float32 gain?

NumPyro under PyMC runs each chain on its own XLA CPU device (``chain_method="parallel"``,
``jax.pmap`` over ``--xla_force_host_platform_device_count`` devices), and its leapfrog inside one
compiled loop. This jaxifies the model's log density as PyMC's JAX samplers do
(``pymc.sampling.jax.get_jaxified_logp``; with ``--logp run``, as pymc-accel's CPU runs do) and
runs its gradient ``--passes`` times inside one
``lax.fori_loop``, each pass fed by the last, jitted on one device and ``pmap``-ed over two.
Best of ``--rounds``, in µs a gradient, beside the cost model's modelled gradient
(``costmodel.JAX_CPU_SAMPLER``, one chain and two side by side) as a Markdown table, in each of
``--precisions`` (float32 as the JAX samplers run it: 64-bit types off,
``pymc_accel.backends.jax_model.jax_precision``):

    JAX_PLATFORMS=cpu python bench/time_gradient_devices.py --models lkj_20,groups_503,negbin_12
    JAX_PLATFORMS=cpu python bench/time_gradient_devices.py --models seed_mid --logp run \\
        --precisions float64,float32

The device count is set before JAX starts, so run it in its own process.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="lkj_20,groups_503")
    p.add_argument("--passes", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--precisions", default="float64")
    p.add_argument("--logp", choices=["pymc", "run"], default="pymc",
                   help="PyMC's get_jaxified_logp, or the log density pymc-accel's CPU runs "
                        "jaxify (fit_numpyro_tuning.numpyro_inputs)")
    return p.parse_args(argv)


def _best_seconds(fn, arg, rounds: int) -> float:
    """The least seconds of ``rounds`` calls of the jitted ``fn`` on ``arg``, compiled first."""
    import jax
    from fit_xla_ops import best_seconds

    def run():
        return jax.block_until_ready(fn(arg))

    run()
    return best_seconds(run, rounds)


def time_model(model, passes: int, rounds: int, precision: str = "float64",
               logp_source: str = "pymc") -> dict[str, float]:
    """Seconds a gradient of ``model`` on one device and on each of two side by side, in
    ``precision``, of PyMC's jaxified log density or (``logp_source`` "run") the one
    pymc-accel's CPU runs jaxify."""
    from pymc_accel.backends.jax_model import jax_precision

    with jax_precision(precision):
        return _time_model(model, passes, rounds, precision, logp_source)


def _time_model(model, passes: int, rounds: int, precision: str,
                logp_source: str) -> dict[str, float]:
    import jax
    import jax.numpy as jnp
    from fit_numpyro_tuning import numpyro_inputs

    logp, x = numpyro_inputs(model, precision, layout="per_variable", logp_source=logp_source)
    gradient = jax.grad(lambda xs: logp(xs))

    def body(_, xs):  # fed by the last pass, so that XLA computes every one
        return [a + 1e-12 * g for a, g in zip(xs, gradient(xs), strict=True)]

    def loop(xs):
        return jax.lax.fori_loop(0, passes, body, xs)

    one = _best_seconds(jax.jit(loop), x, rounds) / passes
    two = _best_seconds(jax.pmap(loop), [jnp.stack([a, a]) for a in x], rounds) / passes
    return {"one_device": one, "two_devices": two}


def main(argv=None) -> list[dict]:
    args = _parse(argv)
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count=2".strip()
    import pymc_accel  # noqa: F401  before JAX starts: the XLA flags its users' runs get

    import jax

    jax.config.update("jax_enable_x64", True)
    if len(jax.devices("cpu")) < 2:
        raise SystemExit("JAX started with one CPU device: run this script in its own process")
    from zoo import named

    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    factories = named()
    figures = machine_figures()
    rows = []
    print("| model | precision | one device (µs) | two devices, each (µs) | two / one "
          "| modelled, one chain (µs) | modelled, two side by side (µs) |"
          "\n|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        profile = profile_model(factories[name]())
        for precision in args.precisions.split(","):
            timed = time_model(factories[name](), args.passes, args.rounds, precision, args.logp)
            modelled = [costmodel.cpu_gradient_seconds(profile, figures, precision,
                                                       costmodel.JAX_CPU_SAMPLER, chains).value
                        for chains in (1, 2)]
            row = {"model": name, "precision": precision, **timed,
                   "modelled_one": modelled[0], "modelled_two": modelled[1]}
            rows.append(row)
            print(f"| {name} | {precision} | {timed['one_device'] * 1e6:.1f} "
                  f"| {timed['two_devices'] * 1e6:.1f} "
                  f"| {timed['two_devices'] / timed['one_device']:.2f} "
                  f"| {modelled[0] * 1e6:.1f} | {modelled[1] * 1e6:.1f} |", flush=True)
    return rows


if __name__ == "__main__":
    main()
