"""How much a device's calibrated loop iteration and call move between calibrations: the data
for choosing how :mod:`pymc_accel.calibration_jax` should summarise its timings.

The fifth H200 lease (2026-11-30) calibrated its GPU three times, on two machines: a loop
iteration of 10.1, 8.9 and 6.0 µs, a jitted call of 140, 79 and 54 µs (the first right after
the machine started; the last two on one machine two minutes apart). NumPyro's GPU leapfrog is
priced in loop iterations (``costmodel.gpu_nuts_leapfrog_seconds``), so its estimate moved as
much; the sampler's own leapfrogs moved less (``docs/benchmarks.md``, "The GPU regret, fifth
lease"). The calibration takes the median of 5 loop timings and of 200 calls, after one warm-up
each.

Here, ``--rounds`` times over (a second apart): the calibration's own loop and call, each timed
``--repeats`` times, printed as min / median / max, with the full calibration
(:func:`pymc_accel.calibration_jax.calibrate_jax_device`) run once first, cold, as a selection
would. One JSON line per round; the last line summarises the rounds' medians and minima:

    python bench/gpu_calibration_spread.py [--platform gpu] [--rounds 5] [--repeats 15]

Whether the minimum of many timings is steadier between rounds than the median of five is what
this decides; a calibration summarised differently would then need the GPU leapfrog's constants
refitted (``bench/fit_gpu_leapfrog.py``) on the same lease.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def _timings(fn, repeats: int) -> list[float]:
    fn()  # compile and warm up, as the calibration does
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def one_round(platform: str, repeats: int, calls: int, steps: int) -> dict:
    """The loop iteration and the call, each timed ``repeats`` times, in seconds."""
    import jax
    import jax.numpy as jnp

    device = jax.devices(platform)[0]
    with jax.default_device(device):
        x = jnp.ones(8, dtype=jnp.float32)
        tiny = jax.jit(lambda v: v * 1.0001 + 1.0)
        loop = jax.jit(lambda v: jax.lax.fori_loop(0, steps, lambda i, w: w * 1.0001 + 1.0, v))
        iteration = [t / steps for t in _timings(lambda: loop(x).block_until_ready(), repeats)]
        # each call timing is the mean of ``calls`` calls, so that a repeat is long enough to time
        call = [t / calls for t in _timings(
            lambda: [tiny(x).block_until_ready() for _ in range(calls)], repeats)]
    return {"iteration": iteration, "call": call}


def _summary(xs: list[float]) -> dict:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--platform", default="gpu")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--steps", type=int, default=2000)
    args = p.parse_args(argv)

    from pymc_accel.calibration_jax import calibrate_jax_device

    scale = 1.0 if args.platform == "gpu" else 1 / 64
    full = calibrate_jax_device(args.platform, scale=scale)
    print(json.dumps({"calibration": {"launch_seconds": full.launch_seconds,
                                      "call_seconds": full.call_seconds,
                                      "seconds": full.calibration_seconds}}), flush=True)
    rounds = []
    for r in range(args.rounds):
        if r:
            time.sleep(1.0)
        timed = one_round(args.platform, args.repeats, args.calls, args.steps)
        line = {"round": r, **{k: _summary(v) for k, v in timed.items()}}
        rounds.append(line)
        print(json.dumps(line), flush=True)
    spread = {}
    for what in ("iteration", "call"):
        for stat in ("min", "median"):
            xs = [r[what][stat] for r in rounds]
            spread[f"{what}_{stat}"] = {"low": min(xs), "high": max(xs),
                                        "high_over_low": max(xs) / min(xs)}
    print(json.dumps({"rounds": len(rounds), "spread_between_rounds": spread}), flush=True)


if __name__ == "__main__":
    main()
