"""pymc-accel: the fastest correct sampler for a PyMC model on the hardware present, chosen
automatically and explained.

>>> import pymc_accel
>>> report = pymc_accel.explain(model)          # what would run, and why
>>> idata = pymc_accel.sample(model=model)      # pm.sample's signature, nuts_sampler="auto"
>>> with pymc_accel.enable():                   # or opt in to pm.sample(nuts_sampler="auto")
...     idata = pm.sample(nuts_sampler="auto")
"""

from __future__ import annotations

__version__ = "0.1.0"

from pymc_accel.backend import (
    Backend,
    Candidate,
    Estimate,
    Figure,
    Refusal,
    SampleRequest,
)
from pymc_accel.backends._common import rename_nutpie_stats
from pymc_accel.backends.blas_threads import limit_blas
from pymc_accel.backends.last_gradients import LastGradients
from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
from pymc_accel.backends.run_logp import coincident_distances_held, jaxified_logp
from pymc_accel.costmodel import xla_program_seconds
from pymc_accel import devices as _devices
from pymc_accel.devices import Devices, discover as discover_devices, jax_cpu_devices, jax_device
from pymc_accel.errors import (
    BackendUnavailableError,
    DeviceOutOfMemoryError,
    DeviceUnavailableError,
    DiscreteVariablesError,
    GradientMismatchWarning,
    NoCandidateError,
    NonFiniteInitialPointError,
    PluginError,
    PrecisionWarning,
    PymcAccelError,
    SamplerStoppedError,
    StuckChainsWarning,
    UnknownBackendError,
    UnsupportedArgumentError,
)
from pymc_accel.first_use import first_use_figures
from pymc_accel.hookspecs import hookimpl
from pymc_accel.integration import disable, enable, explain, is_enabled, sample
from pymc_accel.jax_cache import enable as enable_jax_cache
from pymc_accel.machine import DeviceFigures, MachineFigures, machine_figures
from pymc_accel.precision import PrecisionCheck, check_float32
from pymc_accel.profile import ModelProfile, profile_model
from pymc_accel.registry import Registry, build_registry, get_registry
from pymc_accel.report import SelectionReport
from pymc_accel.sampler_options import sampler_options
from pymc_accel.selection import select

# Before anything starts JAX, ask XLA for a CPU device per core (pymc.sampling.jax asks on its
# import too): JAX reads the count once, when it starts, and NumPyro's chains on the CPU run
# side by side only with a device each. And to leave CPU reductions to XLA's own loops, not
# YNNPACK's (1.4-2.1x faster gradients on regressions' row sums): xla_tuning says which jaxlib
# releases take the flag.
_devices.prepare_xla_flags()

__all__ = [
    "Backend", "BackendUnavailableError", "Candidate", "DeviceOutOfMemoryError",
    "DeviceUnavailableError", "Devices",
    "DiscreteVariablesError", "Estimate", "Figure", "GradientMismatchWarning", "JaxNutsBackend",
    "LastGradients", "MachineFigures", "ModelProfile",
    "NoCandidateError", "NonFiniteInitialPointError", "PluginError", "PrecisionCheck",
    "PrecisionWarning", "PymcAccelError", "Refusal", "DeviceFigures", "check_float32",
    "Registry", "SampleRequest", "SamplerStoppedError", "SelectionReport", "StuckChainsWarning",
    "UnknownBackendError", "UnsupportedArgumentError", "__version__", "xla_program_seconds",
    "build_registry", "coincident_distances_held", "disable", "discover_devices", "enable",
    "enable_jax_cache", "explain",
    "first_use_figures",
    "get_registry",
    "hookimpl", "is_enabled", "jax_cpu_devices", "jax_device", "jaxified_logp", "limit_blas",
    "machine_figures", "profile_model",
    "rename_nutpie_stats", "sample", "sampler_options", "select",
]
