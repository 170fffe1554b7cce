"""Compiled artefacts measured mode built, kept per model for the run that follows.

Measured mode compiles what it times (PyMC's numba gradient function, nutpie's compiled model)
the way the run will compile it; keeping the result lets the run use it instead of compiling
again, so the seconds measuring took are not paid twice. A kept artefact is handed out only
while the PyMC model is unchanged: the same variables, initial values, precision and data
arrays (``pm.set_data`` replaces an array, which makes it stale). Written by hand: a mutable
PyMC model compiles its functions again on every call, and nutpie keeps nothing between calls.
"""

from __future__ import annotations

import weakref
from typing import Any


def validity_key(model: Any) -> tuple:
    """What a compiled artefact of ``model`` depends on: the profile's fingerprint of the model
    (variables, data shapes, dims, initial values, precision) and the identity of each data
    array (the arrays themselves ride along, so the identities stay valid)."""
    from pymc_accel.selection import model_fingerprint

    arrays = tuple(
        d.get_value(borrow=True) if hasattr(d, "get_value") else getattr(d, "data", d)
        for d in model.data_vars
    )
    return model_fingerprint(model), tuple(map(id, arrays)), arrays


class KeptPerModel:
    """One compiled artefact per model, with the seconds its compile took; see the module."""

    def __init__(self) -> None:
        # model -> (validity key, artefact, compile seconds)
        self._kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def put(self, model: Any, artefact: Any, seconds: float) -> None:
        """Keep ``artefact``, compiled in ``seconds``, for ``model`` as it is now."""
        self._kept[model] = (validity_key(model), artefact, seconds)

    def get(self, model: Any) -> Any | None:
        """The artefact kept for ``model``, or ``None`` if there is none or the model changed
        since it was compiled (a stale one is dropped)."""
        try:
            hit = self._kept.get(model)
        except TypeError:  # not weak-referenceable
            return None
        if hit is None:
            return None
        now = validity_key(model)
        if hit[0][0] != now[0] or hit[0][1] != now[1]:
            del self._kept[model]
            return None
        return hit[1]

    def seconds(self, model: Any) -> float:
        """Seconds the compile of the artefact kept for ``model`` took (0 when none is kept,
        or it is stale)."""
        if self.get(model) is None:
            return 0.0
        return self._kept[model][2]

    def forget(self, model: Any | None = None) -> None:
        """Drop the artefact kept for ``model`` (every one when ``None``)."""
        if model is None:
            self._kept.clear()
        else:
            self._kept.pop(model, None)
