"""Tools for plugin authors: the backend conformance suite.

One line in a plugin's own tests runs the whole backend contract against its backend::

    from pymc_accel.testing import BackendConformance

    class TestMyBackend(BackendConformance):
        backend = MyBackend()

It checks that candidates and refusals are well formed, estimates are positive and labelled,
``auto`` picks the backend when its estimate is best, ``sample`` returns ``pm.sample``-shaped
InferenceData (the model's variables, coords and dims, PyMC's sample_stats names), seeded runs
reproduce, posteriors of three reference models are right within Monte Carlo error, and bad input
produces the documented errors. See ``docs/plugins.md``.
"""

from __future__ import annotations

from pymc_accel.testing.reference import reference_answers, reference_model
from pymc_accel.testing.suite import (
    CPU_ONLY,
    ONE_GPU,
    BackendConformance,
    process_registry,
    registry_with,
)

__all__ = [
    "CPU_ONLY", "ONE_GPU", "BackendConformance", "process_registry", "reference_answers",
    "reference_model", "registry_with",
]
