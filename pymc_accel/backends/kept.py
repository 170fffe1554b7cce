"""Compiled artefacts measured mode built, kept per model for the run that follows.

Measured mode compiles what it times (PyMC's numba gradient function, nutpie's compiled model)
the way the run will compile it; keeping the result lets the run use it instead of compiling
again, so the seconds measuring took are not paid twice. A kept artefact is handed out only
while the PyMC model is unchanged: the same variables, initial values, precision and data
(``pm.set_data``, ``set_value`` or an edit in place makes it stale). Written by hand: a mutable
PyMC model compiles its functions again on every call, and nutpie keeps nothing between calls.
"""

from __future__ import annotations

import weakref
from typing import Any


def validity_key(model: Any) -> tuple:
    """What a compiled artefact of ``model`` depends on: the profile's fingerprint of the model
    (variables, data shapes, dims, initial values, precision) and a digest of the contents of
    every shared array its graph reads: ``pm.Data`` containers, a plain ``pytensor.shared``
    (which ``model.data_vars`` does not list) and observed data held in one. Contents, not
    identities: an array edited in place, or replaced by ``set_value``, made nutpie's kept
    model sample the old data (its compile holds the values it was given). Hashing reads the
    data once, about 0.2 s for 160 MB, against the seconds of compile the kept artefact saves.
    """
    import hashlib

    import numpy as np

    from pymc_accel.selection import model_fingerprint

    digest = hashlib.blake2b(digest_size=16)
    for var in _shared_inputs(model):
        value = np.asarray(var.get_value(borrow=True))
        digest.update(f"{var.name}:{value.dtype}:{value.shape};".encode())
        digest.update(np.ascontiguousarray(value).view(np.uint8).reshape(-1) if value.size
                      else b"")
    return model_fingerprint(model), digest.hexdigest()


def _shared_inputs(model: Any) -> list:
    """The shared variables (random generators aside) the model's variables and observed data
    read, in a fixed order."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.traversal import graph_inputs
    from pytensor.tensor.random.type import RandomType

    roots = [*model.basic_RVs, *model.potentials, *model.deterministics,
             *(model.rvs_to_values[rv] for rv in model.observed_RVs)]
    seen, out = set(), []
    for var in graph_inputs(roots):
        if (isinstance(var, SharedVariable) and not isinstance(var.type, RandomType)
                and id(var) not in seen):
            seen.add(id(var))
            out.append(var)
    return out


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
        if hit[0] != validity_key(model):
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
