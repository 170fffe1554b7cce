"""Laying chains over devices: groups of vectorized chains, spread over a platform's devices.

NumPyro's MCMC accepts a callable ``chain_method``: a transform of the one-chain sampler that
maps it over the leading (chain) axis of its arguments. :func:`chain_map` builds one that

- spreads the chains over the given devices with :func:`jax.pmap` (its ``devices=`` names
  them, so a CPU run on a GPU machine stays on the CPU: NumPyro's own ``"parallel"`` maps over the
  default backend's devices, and falls back to one chain after another when there are fewer
  devices than chains);
- vectorizes the chains a device runs at once with :func:`jax.vmap` (a device's one chain is
  run as it is, :func:`one_at_a_time`);
- runs groups of them one after another when not all fit at once, optionally moving each group's
  draws back to the host as soon as it finishes (so the device holds only that group's draws).

Chains that do not divide evenly are padded with copies of the first ones, run, and dropped.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np


def layout(chains: int, devices: int, chains_at_once: int) -> tuple[int, int, int]:
    """``(devices, groups, per_group)`` running ``chains`` chains on at most ``devices``
    devices, at most ``chains_at_once`` at a time on each, with as little padding as possible.

    Parameters
    ----------
    chains, devices, chains_at_once : int

    Returns
    -------
    tuple of int
        Devices used, groups run one after another, chains vectorized per group and device.
    """
    if min(chains, devices, chains_at_once) < 1:
        raise ValueError(
            f"chains, devices and chains_at_once must be >= 1, not {chains}, {devices}, "
            f"{chains_at_once}"
        )
    used = min(devices, chains)
    per_device = math.ceil(chains / used)
    groups = math.ceil(per_device / min(chains_at_once, per_device))
    return used, groups, math.ceil(per_device / groups)


def one_at_a_time(fn: Callable) -> Callable:
    """``fn`` over a chain axis of length one, without :func:`jax.vmap`.

    Batching NUTS's nested while loops is costly to trace: JAX finds which of a loop's carries
    the batch reaches by tracing its body again until that settles, at every level of nesting.
    On a CPU run of NumPyro laid out one chain per device (the layout a CPU run takes on a GPU
    machine, where NumPyro's own ``"parallel"`` would map over the GPU), the trace took
    0.5-1.1 s a run against 0.05 s unbatched, and the whole run 0.9-1.4 s against 0.3-0.4 s
    (eight schools and glm_poisson, 10 + 10 draws x 2 chains, ``docs/benchmarks.md``).
    """

    def one(args: Any) -> Any:
        out = fn(jax.tree.map(lambda x: x[0], args))
        return jax.tree.map(lambda x: x[None], out)

    return one


def chain_map(
    devices: list[Any], chains_at_once: int, *, draws_to_host: bool = False
) -> Callable[[Callable], Callable]:
    """A ``chain_method`` for NumPyro's MCMC: chains over ``devices``, vectorized in groups.

    Parameters
    ----------
    devices : list of jax.Device
        Devices to spread the chains over (one platform's).
    chains_at_once : int
        Chains each device runs at the same time.
    draws_to_host : bool, default False
        Move each group's results to host memory (NumPy) when it finishes.

    Returns
    -------
    callable
        ``transform(fn)(args)``: ``fn`` maps one chain's arguments to its results; ``args`` and
        the results are pytrees whose leaves lead with the chain axis.
    """

    def transform(fn: Callable) -> Callable:
        def run(args: Any) -> Any:
            leaves = [x for x in jax.tree.leaves(args) if hasattr(x, "shape")]
            chains = leaves[0].shape[0]
            used, groups, per_group = layout(chains, len(devices), chains_at_once)
            padded = used * groups * per_group

            def split(x):
                x = jnp.asarray(x)
                if padded > chains:
                    x = jnp.concatenate([x, x[: padded - chains]])
                return x.reshape((groups, used, per_group, *x.shape[1:]))

            grouped = jax.tree.map(split, args)
            batched = one_at_a_time(fn) if per_group == 1 else jax.vmap(fn)
            if used == 1:
                step = jax.jit(batched)

                def call(sub):
                    on_device = jax.device_put(jax.tree.map(lambda x: x[0], sub), devices[0])
                    return jax.tree.map(lambda x: x[None], step(on_device))
            else:
                call = jax.pmap(batched, devices=list(devices[:used]))
            outs = []
            for g in range(groups):
                out = call(jax.tree.map(lambda x, g=g: x[g], grouped))
                outs.append(jax.device_get(out) if draws_to_host else out)
            stack = np.stack if draws_to_host else jnp.stack

            def merge(*parts):
                whole = stack(parts)  # (groups, devices, per_group, ...)
                return whole.reshape((padded, *whole.shape[3:]))[:chains]

            return jax.tree.map(merge, *outs)

        return run

    return transform
