"""nutpie's Rust NUTS driving a JAX-compiled log density, as a pymc-accel plugin.

nutpie compiles the model's log density and its gradient with JAX
(``nutpie.compile_pymc_model(model, backend="jax", gradient_backend="jax")``) and runs its own
NUTS in Rust, calling back into JAX for every gradient. Its mass matrix is adapted as nutpie
adapts it by default (diagonal, from draws and gradients), which is what its estimate prices;
``nuts={"adaptation": "low_rank"}`` asks for nutpie's low-rank modification. Runs on the CPU, or
on a GPU when JAX has one.

Installing the package is all it takes: the entry point in group ``pymc_accel`` registers the
``nutpie_jax`` backend.
"""

from __future__ import annotations

from pymc_accel import hookimpl
from pymc_accel_nutpie_jax.backend import NutpieJaxBackend

__all__ = ["NutpieJaxBackend", "pymc_accel_backends"]


@hookimpl
def pymc_accel_backends():
    """The backends this plugin provides."""
    return [NutpieJaxBackend()]
