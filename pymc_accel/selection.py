"""Selection: gather candidates from every backend, estimate, rank, choose, explain.

The selector never imports JAX or samples; it asks backends (through the registry), the model
profile and the machine's figures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pymc_accel.backend import Candidate, Estimate, Refusal
from pymc_accel.devices import Devices, discover
from pymc_accel.errors import (
    BackendUnavailableError,
    DeviceUnavailableError,
    DiscreteVariablesError,
    NoCandidateError,
)
from pymc_accel.machine import MachineFigures, machine_figures
from pymc_accel.profile import ModelProfile, profile_model
from pymc_accel.registry import BrokenPlugin, Registry, get_registry
from pymc_accel.report import Row, SelectionReport


@dataclass
class _Scored:
    candidate: Candidate
    estimate: Estimate
    total: float
    key: float


def _precision_refusal(c: Candidate, profile: ModelProfile, precision: str | None) -> str | None:
    """Precision policy: an explicit choice wins; otherwise the model's own precision.

    float32 where the model was built in float64 is used only on request until the float32
    accuracy guard can vouch for it.
    """
    if precision is not None:
        return None if c.precision == precision else f"precision={precision!r} was requested"
    if c.precision != profile.float_dtype:
        return (
            f"model is built in {profile.float_dtype}; pass precision='{c.precision}' to use "
            f"{c.precision} (not checked for accuracy loss automatically yet)"
        )
    return None


def _gather(
    registry: Registry, names: list[str], profile: ModelProfile, devices: Devices
) -> tuple[list[Candidate], list[Refusal]]:
    candidates: list[Candidate] = []
    refusals: list[Refusal] = []
    for name in names:
        backend = registry.backends[name]
        try:
            answers = list(backend.candidates(profile, devices))
        except Exception as exc:  # a plugin's fault must not break selection
            registry.broken.append(
                BrokenPlugin(name, registry.origins.get(name, "unknown"), repr(exc), "candidates")
            )
            refusals.append(Refusal(name, f"backend raised in candidates(): {exc!r}"))
            continue
        for a in answers:
            (candidates if isinstance(a, Candidate) else refusals).append(a)
    return candidates, refusals


def _raise_specific(
    refusals: list[Refusal], profile: ModelProfile, backend: str | None
) -> None:
    """Turn 'nothing can run' into the most specific actionable error."""
    reasons = "\n".join(f"  - {r.label}: {r.reason}" for r in refusals)
    if profile.has_discrete:
        raise DiscreteVariablesError(
            f"The model has discrete free variables ({', '.join(profile.discrete_vars)}) and no "
            "candidate can sample them. Use nuts_sampler='numba' (PyMC's compound steps) or "
            "marginalize them out.\n" + reasons
        )
    if backend and any("not installed" in r.reason for r in refusals):
        raise BackendUnavailableError(
            f"Backend {backend!r} cannot run here:\n" + reasons
        )
    raise NoCandidateError("No backend can run this model under these constraints:\n" + reasons)


def select(
    model=None,
    *,
    backend: str | None = None,
    device: str | None = None,
    precision: str | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    profile: ModelProfile | None = None,
    registry: Registry | None = None,
    devices: Devices | None = None,
    machine: MachineFigures | None = None,
) -> SelectionReport:
    """Choose the backend, device and precision that should reach the draws soonest.

    Parameters
    ----------
    model : pm.Model, optional
        Defaults to the model on the context stack.
    backend : str, optional
        Restrict to one registered backend (``None`` or ``"auto"``: all of them).
    device : {"cpu", "gpu"}, optional
        Restrict to a device.
    precision : {"float32", "float64"}, optional
        Force a precision; by default the model's own.
    draws, tune, chains : int
        The run the estimate is for.
    profile, registry, devices, machine : optional
        Precomputed inputs (for tests and tools); computed when not given.

    Returns
    -------
    SelectionReport
        With ``candidate`` set to the chosen :class:`~pymc_accel.backend.Candidate`.

    Raises
    ------
    UnknownBackendError, DeviceUnavailableError, DiscreteVariablesError,
    BackendUnavailableError, NoCandidateError
        When nothing can run; the message lists every refusal.
    """
    start = time.perf_counter()
    registry = registry or get_registry()
    if backend in (None, "auto"):
        names, backend = registry.names(), None
    else:
        registry.get(backend)  # raises UnknownBackendError with the registered names
        names = [backend]
    profile = profile or profile_model(model)
    devices = devices or discover()
    if device not in (None, "cpu", "gpu"):
        raise ValueError(f"device must be 'cpu', 'gpu' or None, not {device!r}")
    if precision not in (None, "float32", "float64"):
        raise ValueError(f"precision must be 'float32', 'float64' or None, not {precision!r}")
    if device == "gpu" and not devices.has_gpu:
        raise DeviceUnavailableError(
            f"device='gpu' was requested but no GPU is visible to JAX ({devices.note or 'none'}). "
            "On a machine with a CUDA GPU: pip install 'pymc-accel[gpu]'; or drop device='gpu'."
        )
    machine = machine or machine_figures()
    candidates, refusals = _gather(registry, names, profile, devices)

    scored: list[_Scored] = []
    for c in candidates:
        if device is not None and c.device != device:
            refusals.append(Refusal(c.backend, f"device={device!r} was requested", c.device, c.precision))
            continue
        why = _precision_refusal(c, profile, precision)
        if why:
            refusals.append(Refusal(c.backend, why, c.device, c.precision))
            continue
        try:
            est = registry.backends[c.backend].estimate(c, profile, machine)
            total = est.total_seconds(tune + draws, chains)
            key = est.seconds_per_effective_draw(tune + draws, draws, chains)
        except Exception as exc:
            refusals.append(Refusal(c.backend, f"estimate() raised {exc!r}", c.device, c.precision))
            continue
        scored.append(_Scored(c, est, total, key))
    if not scored:
        _raise_specific(refusals, profile, backend)
    scored.sort(key=lambda s: s.key)

    chosen, chosen_by = scored[0], "cost model" if backend is None else "user"
    if backend is None and len(scored) > 1:
        answer, plugin = registry.call_select_hook(
            profile=profile, candidates=[(s.candidate, s.total) for s in scored]
        )
        match = next((s for s in scored if s.candidate == answer), None)
        if match is not None:
            chosen, chosen_by = match, f"plugin {plugin}"

    rows = [_row(s, chosen, registry) for s in scored]
    rows += [
        Row(r.label, r.backend, r.device, r.precision, "refused", r.reason,
            origin=registry.origins.get(r.backend, ""))
        for r in refusals
    ]
    return SelectionReport(
        chosen=chosen.candidate.label,
        chosen_by=chosen_by,
        rows=rows,
        profile=profile.summary(),
        devices=devices.summary(),
        machine=f"CPU figures {machine.source}",
        request={"draws": draws, "tune": tune, "chains": chains,
                 **({"device": device} if device else {}),
                 **({"precision": precision} if precision else {})},
        broken_plugins=[vars(b) for b in registry.broken],
        selection_seconds=time.perf_counter() - start,
        candidate=chosen.candidate,
        estimate=chosen.estimate,
    )


def _row(s: _Scored, chosen: _Scored, registry: Registry) -> Row:
    e = s.estimate
    if s is chosen:
        status, reason = "chosen", "lowest estimated time per effective draw"
    else:
        status = "accepted"
        reason = f"estimated {s.key / chosen.key:.1f}x the chosen one's time per effective draw"
    sources: dict[str, Any] = {
        "s/grad": e.seconds_per_gradient.source,
        "grads/draw": e.gradients_per_draw.source,
        "compile": e.fixed_seconds.source,
    }
    return Row(
        s.candidate.label, s.candidate.backend, s.candidate.device, s.candidate.precision,
        status, reason, s.total, e.seconds_per_gradient.value, e.gradients_per_draw.value,
        e.fixed_seconds.value, ", ".join(f"{k} {v}" for k, v in sources.items()),
        registry.origins.get(s.candidate.backend, ""),
    )
