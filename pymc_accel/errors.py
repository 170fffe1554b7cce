"""Errors a user can act on.

Every error pymc-accel raises on purpose derives from :class:`PymcAccelError` and says, in its
message, what to change. Library internals (JAX, numba, PyTensor) never surface as the first thing
a user reads for a problem we can recognise.
"""

from __future__ import annotations

from pymc.exceptions import SamplingError


class PymcAccelError(Exception):
    """Base class of every error pymc-accel raises on purpose."""


class UnknownBackendError(PymcAccelError, ValueError):
    """A backend name that is neither registered nor one of PyMC's own samplers."""


class BackendUnavailableError(PymcAccelError, ImportError):
    """A registered backend whose optional dependency is missing, or that refused the model."""


class DiscreteVariablesError(PymcAccelError, ValueError):
    """The model has discrete free variables and the backend needs gradients of all of them."""


class DeviceUnavailableError(PymcAccelError, RuntimeError):
    """A device (a GPU) was asked for and none is present."""


class DeviceOutOfMemoryError(PymcAccelError, MemoryError):
    """A device ran out of memory while sampling; the message names the estimate and what to
    change (fewer chains at once, fewer draws, float32, another device)."""


class NonFiniteInitialPointError(PymcAccelError, ValueError):
    """The model's log density is not finite at the initial point."""


class NoCandidateError(PymcAccelError, RuntimeError):
    """No registered backend can run this model under the constraints given."""


class PluginError(PymcAccelError, RuntimeError):
    """A third-party plugin raised while it was asked for something."""


class UnsupportedArgumentError(PymcAccelError, ValueError):
    """A sampler cannot run with an argument the caller gave; the message names the fix."""


class SamplerStoppedError(PymcAccelError, SamplingError):
    """A sampler's driver ended a chain at an error the compiled log density raised at a
    point it proposed (PyMC's NUTS at numba's ``OverflowError``), where other drivers count
    the step as divergent. A ``pm.exceptions.SamplingError``, as PyMC's own failed runs are;
    the message names the samplers that go on. Where the sampler was the selector's choice,
    :func:`pymc_accel.sample` runs the next one instead and says so.

    Parameters
    ----------
    message : str
        What stopped, and the fix.
    error : BaseException, optional
        The error the log density raised (``OverflowError``, ...).
    """

    def __init__(self, message: str, error: BaseException | None = None):
        super().__init__(message)
        self.error = error


class PrecisionWarning(UserWarning):
    """float32 was forced on a model whose float32 log density or gradient is inaccurate."""


class StuckChainsWarning(UserWarning):
    """Chains of a run never left their start (every draw the same), and pymc-accel did not
    re-run it on its own: the sampler was the caller's choice, or no other could run."""


class GradientMismatchWarning(UserWarning):
    """The gradient a JAX run computed was not the derivative of its log density at the run's
    last draws (:mod:`pymc_accel.backends.last_gradients`), and pymc-accel did not re-run it on
    its own: the sampler was the caller's choice, or no other could run. Its draws may not be
    the posterior's."""
