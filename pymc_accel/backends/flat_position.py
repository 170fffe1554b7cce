"""PyMC's JAX NUTS with the sampler's position as one flat array.

PyMC's ``sample_jax_nuts`` hands NumPyro and BlackJAX the position as a list of arrays, one per
value variable. Both samplers treat it as a pytree: every leaf is a separate operand of each
leapfrog and of every step of the tree building, so the XLA program they compile grows with the
number of value variables. Measured on this project's 2-core machine
(``bench/fit_numpyro_leaves.py``): NumPyro's 20 + 20-draw run took 1.8 s with one leaf and 34 s
with 60, on a trivial potential, and PyMC's run of a model of 60 scalar variables 38 s where the
same run on one flat vector took 11 s, with the same draws (docs/benchmarks.md).

:func:`flat_position` runs ``sample_jax_nuts`` with the position raveled into one vector (the
jaxified log density unravels it, inside the compiled program) and splits the draws back into
one array per value variable before PyMC post-processes them, so the InferenceData is the one
``sample_jax_nuts`` returns. The mass matrix, the momentum and the tree are NumPyro's and
BlackJAX's own either way: both already ravel the position for their mass matrix, so the
sampler is the same algorithm on the same vector, and its draws differ from the pytree
position's only by the floating-point rounding of a differently fused program.

No public PyMC hook takes a sampler function, so the context swaps the module function that
``sample_jax_nuts`` calls (``pymc.sampling.jax._sample_numpyro_nuts`` or
``_sample_blackjax_nuts``) for a flattening wrapper while it is open, and puts it back after.
The wrapper is transparent to any caller, so another thread's ``sample_jax_nuts`` during the
swap samples the same way. A PyMC without that function samples as PyMC does.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pymc_accel.backends.last_gradients import take_blackjax_last_state
from pymc_accel.backends.swaps import swapped

#: The function of ``pymc.sampling.jax`` that runs each JAX sampler.
SAMPLER_FUNCTIONS = {"numpyro": "_sample_numpyro_nuts", "blackjax": "_sample_blackjax_nuts"}


@contextlib.contextmanager
def flat_position(jax_sampler: str) -> Iterator[bool]:
    """Run PyMC's ``sample_jax_nuts`` for ``jax_sampler`` on a flat position inside the block.

    Parameters
    ----------
    jax_sampler : {"numpyro", "blackjax"}

    Yields
    ------
    bool
        Whether the position is flattened: False where the installed PyMC has no such sampler
        function (it then samples as PyMC does).
    """
    import pymc.sampling.jax as pmjax

    name = SAMPLER_FUNCTIONS[jax_sampler]
    if not hasattr(pmjax, name):
        yield False
        return
    with swapped(pmjax, name, flattening):  # the first block swaps it, the last puts it back
        yield True


def flattening(sampler_fn: Callable) -> Callable:
    """Wrap one of PyMC's JAX sampler functions to sample a flat position.

    Parameters
    ----------
    sampler_fn : callable
        ``pymc.sampling.jax._sample_numpyro_nuts`` or ``_sample_blackjax_nuts``, called with
        keywords only (as ``sample_jax_nuts`` calls it) and returning
        ``(draws, sample_stats, library)`` with ``draws`` one array per value variable.

    Returns
    -------
    callable
        The same signature and result; the sampler sees a one-leaf position.
    """

    @functools.wraps(sampler_fn)
    def run(*, initial_points, logp_fn, chains, **kwargs):
        flat, leaves = flatten_points(initial_points, chains)
        unravel = leaves.unravel

        def flat_logp(position):
            return logp_fn(unravel(position[0]))

        draws, stats, library = sampler_fn(
            initial_points=[flat], logp_fn=flat_logp, chains=chains, **kwargs)
        # a BlackJAX run's last state, returned among its statistics for the gradient's check
        stats = take_blackjax_last_state(stats, chains)
        return leaves.split(draws[0]), stats, library

    run.flattens_position = True
    return run


class Leaves:
    """Shapes and dtypes of a position's arrays, and the maps to and from its flat vector.

    Parameters
    ----------
    prototype : list of array
        One chain's position, one array per value variable.
    dtype : str, optional
        The arrays' dtype; by default what JAX makes of them (float32 with 64-bit types off).
    """

    def __init__(self, prototype: list[Any], dtype: str | None = None) -> None:
        import jax.numpy as jnp
        from jax.flatten_util import ravel_pytree

        arrays = [jnp.asarray(p, dtype=dtype) for p in prototype]
        flat, self.unravel = ravel_pytree(arrays)  # traced inside the log density
        self.dtype = np.dtype(flat.dtype)
        self.shapes = [tuple(a.shape) for a in arrays]
        self.dtypes = [np.dtype(a.dtype) for a in arrays]

    def split(self, draws):
        """``draws`` of shape ``(..., dim)`` as one array per leaf, ``(..., *shape)``.

        Slices, so a host (NumPy) array stays on the host and a device array on its device:
        a run that streams its draws to the host (:mod:`pymc_accel.memory`) must not send
        them back.
        """
        out, start = [], 0
        lead = tuple(draws.shape[:-1])
        for shape, dtype in zip(self.shapes, self.dtypes, strict=True):
            size = math.prod(shape)
            part = draws[..., start:start + size].reshape(lead + shape)
            out.append(part if part.dtype == dtype else part.astype(dtype))
            start += size
        return out


def flatten_points(initial_points, chains: int,
                   dtype: str | None = None) -> tuple[np.ndarray, Leaves]:
    """PyMC's batched initial points as one flat array and the leaves it came from.

    Parameters
    ----------
    initial_points : list of array
        As ``sample_jax_nuts`` passes them: per value variable, ``(chains, *shape)``, or
        ``shape`` for a single chain.
    chains : int
    dtype : str, optional
        As for :class:`Leaves`.

    Returns
    -------
    (np.ndarray, Leaves)
        ``(chains, dim)`` (``(dim,)`` for a single chain), in the leaves' common dtype.
    """
    points = [np.asarray(p) for p in initial_points]
    if chains == 1:
        leaves = Leaves(points, dtype)
        return np.concatenate([p.reshape(-1) for p in points]).astype(leaves.dtype), leaves
    leaves = Leaves([p[0] for p in points], dtype)
    flat = np.concatenate([p.reshape(chains, -1) for p in points], axis=1)
    return flat.astype(leaves.dtype), leaves
