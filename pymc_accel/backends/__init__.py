"""pymc-accel's built-in backends, registered through the same hook a plugin uses."""

from __future__ import annotations

from pymc_accel.hookspecs import hookimpl


@hookimpl
def pymc_accel_backends():
    """Return the built-in backends (their heavy imports happen only when they sample)."""
    from pymc_accel.backends.deer_mala import DeerMalaBackend
    from pymc_accel.backends.numba_cpu import NumbaBackend
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend

    return [NumbaBackend(), NumpyroBackend(), DeerMalaBackend()]
