"""A module's function swapped for a wrapper of it while any of several blocks is open.

PyMC's ``sample_jax_nuts`` takes no sampler function and no log density; the JAX backends swap
the module functions it calls (:mod:`pymc_accel.backends.flat_position`,
:mod:`pymc_accel.backends.run_logp`). Runs may overlap (two threads, or a run inside another's
block), so the swap is counted: made by the first block, undone by the last. Written by hand:
``unittest.mock.patch`` undoes each block's patch on its exit, under any block still open.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.Lock()
_held: dict[tuple[int, str], list] = {}  # (id(module), name) -> [module, original, open blocks]


@contextlib.contextmanager
def swapped(module: Any, name: str, wrapper_of: Callable[[Callable], Callable]
            ) -> Iterator[Callable]:
    """Inside the block, ``module.name`` is ``wrapper_of(original)``.

    Parameters
    ----------
    module : module
    name : str
        The function's name in ``module``.
    wrapper_of : callable
        Makes the function to put in its place from the original; called by the first block
        only (an overlapping block shares the first one's wrapper).

    Yields
    ------
    callable
        The original function.
    """
    key = (id(module), name)
    with _lock:
        held = _held.get(key)
        if held is None:
            original = getattr(module, name)
            # the wrapper is made and put in before the entry is kept, so a wrapper_of that
            # raises leaves nothing held and the next block swaps afresh
            setattr(module, name, wrapper_of(original))
            held = _held[key] = [module, original, 0]
        held[2] += 1
    try:
        yield held[1]
    finally:
        with _lock:
            held[2] -= 1
            if not held[2]:
                del _held[key]
                setattr(module, name, held[1])
