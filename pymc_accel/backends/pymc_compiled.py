"""PyMC's numba gradient function, compiled by measured mode and used again by PyMC's NUTS.

Measured mode times a numba candidate on the function ``pm.sample(nuts_sampler="pymc",
backend="numba")`` compiles (``model.logp_dlogp_function(ravel_inputs=True, mode="NUMBA")``,
:func:`pymc_accel.backends._measure.pymc_gradient_function`). A mutable PyMC model compiles it
again on every ``pm.sample`` call; :func:`reused_by_pm_sample` hands PyMC's NUTS a copy of the
one measured mode compiled instead (``ValueGradFunction.copy``: the compiled graph shared,
its shared variables its own), while the model is unchanged (:mod:`pymc_accel.backends.kept`).
Any other call, and any other model, compiles as before.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pymc_accel.backends.kept import KeptPerModel

_KEPT = KeptPerModel()


def keep(model: Any, function: Any, seconds: float) -> None:
    """Keep ``function`` (PyMC's ``ValueGradFunction`` of ``model`` under the numba linker,
    compiled in ``seconds``) for ``model``'s next PyMC NUTS run."""
    _KEPT.put(model, function, seconds)


#: The compiled function kept for a model, or ``None`` if there is none or the model changed
#: since it was compiled; the seconds its compile took (0 when none is kept); dropping it.
kept = _KEPT.get
compile_seconds = _KEPT.seconds
forget = _KEPT.forget


def _default_numba_mode(mode: Any) -> bool:
    """Whether ``mode`` is PyTensor's predefined numba mode (``backend="numba"``), the one the
    kept function was compiled in: a numba mode of the user's own may rewrite differently."""
    from pytensor.compile.mode import get_mode

    try:
        return get_mode(mode) is get_mode("NUMBA")
    except Exception:  # a mode PyTensor does not know: not ours to answer
        return False


@contextlib.contextmanager
def reused_by_pm_sample(model: Any):
    """Within the block, ``model.logp_dlogp_function`` called as PyMC's NUTS initialisation
    calls it (all free variables, not tempered, raveled inputs, PyTensor's numba mode and
    nothing else) returns a copy of the function kept for ``model`` with the extra values of
    the initial point set; every other call compiles as before. Yields whether a kept
    function is in place."""
    function = kept(model)
    if function is None:
        yield False
        return
    original = model.logp_dlogp_function

    def logp_dlogp_function(grad_vars=None, tempered=False, initial_point=None,
                            ravel_inputs=None, **kwargs):
        if (grad_vars is None and not tempered and ravel_inputs and set(kwargs) == {"mode"}
                and _default_numba_mode(kwargs["mode"])):
            copy = function.copy()
            copy.set_extra_values(initial_point if initial_point is not None
                                  else model.initial_point(0))
            return copy
        return original(grad_vars, tempered=tempered, initial_point=initial_point,
                        ravel_inputs=ravel_inputs, **kwargs)

    model.__dict__["logp_dlogp_function"] = logp_dlogp_function  # shadows the method
    try:
        yield True
    finally:
        model.__dict__.pop("logp_dlogp_function", None)
