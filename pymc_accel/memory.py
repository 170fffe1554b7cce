"""Device memory of a NUTS run, and how to run the chains so that it fits.

A JAX NUTS sampler keeps on its device, at the peak of a run:

- the **data** the log density reads (once per device; :attr:`ModelProfile.data_bytes`);
- for every chain computing at the same time, one gradient's **intermediates** (bounded above by
  the census's bytes touched per evaluation, as if XLA fused and freed nothing) and the
  **sampler state** (NumPyro's NUTS keeps about ``16 + 2 * max_tree_depth`` vectors of the free
  dimension per chain: position, momentum and gradient at both ends of the trajectory and at the
  proposal, the momentum sums, the U-turn checkpoints of momentum and momentum sum per tree
  level, the mass matrix and its Welford accumulators);
- the **stored draws** of every chain it ran (PyMC's ``sample_jax_nuts`` keeps the raw draws of
  every free variable, whatever ``var_names`` says), and, when the draws are transformed back on
  the device, the **transformed draws** of the variables kept (``var_names``).

Pure arithmetic on a :class:`~pymc_accel.profile.ModelProfile`: no JAX, nothing is compiled. The
figures are estimates (deliberately on the high side), labelled ``modelled`` wherever reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pymc_accel.profile import ModelProfile

#: Vectors of the free dimension NumPyro's NUTS keeps per chain besides the U-turn checkpoints.
NUTS_STATE_VECTORS = 16
#: NumPyro's default maximum tree depth (two checkpoint vectors per level).
MAX_TREE_DEPTH = 10
#: Per-draw sample stats stored with each draw (steps, energies, step size, acceptance, ...).
STATS_PER_DRAW = 6
#: Share of the device's memory limit a plan may use (XLA needs room for its own buffers).
USABLE_FRACTION = 0.9
GIB = 2**30


def itemsize(precision: str) -> int:
    """Bytes of one float in ``precision``."""
    return 4 if precision == "float32" else 8


def _scale(profile: ModelProfile, precision: str) -> float:
    """How a model's bytes change when it runs in ``precision`` (JAX without x64 halves integers
    as well as floats)."""
    model = itemsize(profile.float_dtype)
    return itemsize(precision) / model


def gib(nbytes: float) -> str:
    """``nbytes`` as GiB (or MiB below one GiB), for messages."""
    if nbytes >= GIB:
        return f"{nbytes / GIB:.2f} GiB"
    return f"{nbytes / 2**20:.1f} MiB"


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak device memory of one device of a run, by what it holds.

    Attributes
    ----------
    data_bytes : float
        Data the log density reads, once.
    intermediate_bytes : float
        One gradient evaluation's working set, per chain computing at once.
    state_bytes : float
        NUTS state per chain computing at once.
    chains_at_once : int
        Chains this device computes at the same time (vectorized).
    draws_bytes : float
        Raw draws (and their sample stats) of the chains this device stores.
    transformed_bytes : float
        Draws transformed back to the model's variables on this device (0 when that happens on
        the host).
    """

    data_bytes: float
    intermediate_bytes: float
    state_bytes: float
    chains_at_once: int
    draws_bytes: float
    transformed_bytes: float = 0.0

    @property
    def total_bytes(self) -> float:
        """Peak bytes: data, the working chains, and stored plus transformed draws."""
        working = self.chains_at_once * (self.intermediate_bytes + self.state_bytes)
        return self.data_bytes + working + self.draws_bytes + self.transformed_bytes

    def describe(self) -> str:
        """E.g. ``3.10 GiB: data 80.0 MiB + 4 chains x (gradient 1.80 GiB + NUTS state ...)``."""
        text = (
            f"{gib(self.total_bytes)}: data {gib(self.data_bytes)} + {self.chains_at_once} "
            f"chain{'s' if self.chains_at_once > 1 else ''} at once x (gradient "
            f"{gib(self.intermediate_bytes)} + NUTS state {gib(self.state_bytes)}) + stored draws "
            f"{gib(self.draws_bytes)}"
        )
        if self.transformed_bytes:
            text += f" + transformed draws {gib(self.transformed_bytes)}"
        return text


def nuts_memory(
    profile: ModelProfile,
    precision: str,
    *,
    draws: int,
    chains_at_once: int,
    chains_stored: int,
    transformed_dim: int | None = None,
    transform_on_device: bool = True,
    max_tree_depth: int = MAX_TREE_DEPTH,
) -> MemoryEstimate:
    """Peak memory of one device running NUTS on ``profile``.

    Parameters
    ----------
    profile : ModelProfile
    precision : {"float32", "float64"}
        Precision the sampler runs in.
    draws : int
        Draws kept per chain (tuning draws are not stored).
    chains_at_once : int
        Chains the device computes at the same time.
    chains_stored : int
        Chains whose draws the device holds at the peak.
    transformed_dim : int, optional
        Values per draw of the variables kept (``var_names``); the free dimension when None.
    transform_on_device : bool, default True
        Whether draws are transformed back to the model's variables on the device.
    max_tree_depth : int, default 10

    Returns
    -------
    MemoryEstimate
    """
    size = itemsize(precision)
    scale = _scale(profile, precision)
    per_draw = profile.n_free * size + STATS_PER_DRAW * 8
    kept = profile.n_free if transformed_dim is None else transformed_dim
    return MemoryEstimate(
        data_bytes=profile.data_bytes * scale,
        intermediate_bytes=profile.census.bytes * scale,
        state_bytes=(NUTS_STATE_VECTORS + 2 * max_tree_depth) * profile.n_free * size,
        chains_at_once=chains_at_once,
        draws_bytes=chains_stored * draws * per_draw,
        transformed_bytes=chains_stored * draws * kept * size if transform_on_device else 0.0,
    )


def kept_dimension(profile: ModelProfile, var_names: list[str] | None) -> int | None:
    """Values per draw of the free variables named in ``var_names`` (their value variables,
    e.g. ``sigma_log__`` for ``sigma``); None (all of them) without ``var_names``."""
    if var_names is None:
        return None
    wanted = set(var_names)
    return sum(
        math.prod(shape)
        for name, shape in profile.free_vars.items()
        if name in wanted or _base_name(name) in wanted
    )


def _base_name(value_name: str) -> str:
    """``sigma_log__`` -> ``sigma`` (PyMC names a transformed value ``<name>_<transform>__``)."""
    if value_name.endswith("__"):
        return value_name[:-2].rsplit("_", 1)[0]
    return value_name


@dataclass(frozen=True)
class ChainPlan:
    """How a run's chains are laid out on a platform's devices, and what that needs.

    Attributes
    ----------
    chain_method : {"vectorized", "parallel", "sequential"}
        ``vectorized``: every chain at once on one device; ``parallel``: chains spread over
        ``devices`` devices, vectorized within each; ``sequential``: one chain at a time.
    devices : int
        Devices used.
    chains_at_once : int
        Chains each device computes at the same time.
    draws_to_host : bool
        Each group's draws go back to the host as soon as it finishes (and are transformed there),
        so the device holds only the draws of the chains it is running.
    memory : MemoryEstimate
        Peak of the busiest device.
    limit_bytes : float or None
        The device's memory limit (None: unknown, nothing checked).
    fits : bool
        Whether ``memory`` fits in the usable share of ``limit_bytes``.
    reason : str
        With ``fits`` false: the figures (needed against available) and what to change.
    """

    chain_method: str
    devices: int
    chains_at_once: int
    draws_to_host: bool
    memory: MemoryEstimate
    limit_bytes: float | None
    fits: bool = True
    reason: str = ""

    def describe(self) -> str:
        """One line for the report: the layout and the memory against the limit."""
        layout = {
            "vectorized": f"{self.chains_at_once} chains vectorized",
            "parallel": f"chains over {self.devices} devices, {self.chains_at_once} vectorized each",
            "sequential": f"{self.chains_at_once} chain{'s' if self.chains_at_once > 1 else ''} "
                          "at a time",
        }[self.chain_method]
        if self.draws_to_host:
            layout += ", draws streamed to the host"
        limit = f" of {gib(self.limit_bytes)} available" if self.limit_bytes else ""
        return f"{self.memory.describe()}{limit} ({layout})"


def _usable(limit: float | None) -> float:
    return math.inf if not limit else USABLE_FRACTION * limit


def plan_chains(
    profile: ModelProfile,
    precision: str,
    *,
    draws: int,
    chains: int,
    limit_bytes: float | None,
    devices: int = 1,
    var_names: list[str] | None = None,
) -> ChainPlan:
    """The fastest chain layout whose memory fits the device, or why none does.

    Tried in order, the first that fits wins: every chain at once (vectorized on one device,
    spread over ``devices`` when there are several); fewer chains at once, in groups run one after
    another; the same with each group's draws streamed back to the host; one chain at a time with
    its draws streamed back. When even that does not fit, the plan has ``fits=False`` and a
    ``reason`` with the figures and what to change.

    Parameters
    ----------
    profile : ModelProfile
    precision : {"float32", "float64"}
    draws, chains : int
        Draws kept per chain; chains in all.
    limit_bytes : float or None
        Memory of one device (``Gpu.memory_bytes``); None when unknown (the first layout is
        returned, unchecked).
    devices : int, default 1
        Devices of the platform the chains may be spread over.
    var_names : list of str, optional
        Variables kept (``pm.sample``'s ``var_names``).

    Returns
    -------
    ChainPlan
    """
    if chains < 1 or draws < 0:
        raise ValueError(f"chains must be >= 1 and draws >= 0, not chains={chains}, draws={draws}")
    devices = max(1, min(devices, chains))
    per_device = math.ceil(chains / devices)
    kept = kept_dimension(profile, var_names)
    usable = _usable(limit_bytes)

    def memory(at_once: int, to_host: bool) -> MemoryEstimate:
        # Draws are gathered on the first device to be transformed unless they go to the host.
        stored = at_once if to_host else chains if devices == 1 else per_device
        est = nuts_memory(profile, precision, draws=draws, chains_at_once=at_once,
                          chains_stored=stored, transformed_dim=kept,
                          transform_on_device=not to_host)
        if not to_host and devices > 1:  # the gathering device holds every chain's raw draws
            gathered = nuts_memory(profile, precision, draws=draws, chains_at_once=0,
                                   chains_stored=chains, transformed_dim=kept)
            if gathered.total_bytes > est.total_bytes:
                est = replace(est, draws_bytes=gathered.draws_bytes,
                              transformed_bytes=gathered.transformed_bytes)
        return est

    def plan(at_once: int, to_host: bool) -> ChainPlan:
        if devices > 1:
            method = "parallel"
        elif at_once == chains and not to_host:
            method = "vectorized"
        else:
            method = "sequential"
        est = memory(at_once, to_host)
        return ChainPlan(method, devices, at_once, to_host, est, limit_bytes,
                         fits=est.total_bytes <= usable)

    first = plan(per_device, False)
    if first.fits:
        return first
    for to_host in (False, True):
        for at_once in range(per_device - (0 if to_host else 1), 0, -1):
            candidate = plan(at_once, to_host)
            if candidate.fits:
                return candidate
    smallest = plan(1, True)
    return replace(smallest, fits=False, reason=_refusal(profile, precision, draws, chains,
                                                         smallest, usable, kept))


def _refusal(profile, precision, draws, chains, smallest: ChainPlan, usable: float,
             kept: int | None) -> str:
    est = smallest.memory
    fixed = est.data_bytes + est.intermediate_bytes + est.state_bytes
    fixes = []
    per_draw = (est.draws_bytes / max(draws, 1)) if draws else 0.0
    if fixed < usable and per_draw > 0:
        most = int((usable - fixed) / per_draw)
        fixes.append(f"draws={most} or fewer per chain (each chain's draws stay on the device "
                     "until it finishes)")
    if precision == "float64":
        est32 = nuts_memory(profile, "float32", draws=draws, chains_at_once=1, chains_stored=1,
                            transformed_dim=kept, transform_on_device=False)
        fixes.append(f"precision='float32' ({gib(est32.total_bytes)})")
    fixes.append("device='cpu'")
    head = (
        f"needs {gib(est.total_bytes)} of device memory with one chain at a time and its draws "
        f"streamed to the host ({est.describe()}), more than the {gib(usable)} usable"
    )
    if fixed >= usable:
        head += "; one gradient evaluation alone does not fit"
    return f"{head}. Use {', or '.join(fixes)}"


#: What XLA's allocator says when a device is out of memory.
OUT_OF_MEMORY_MARKERS = ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory")


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is a device running out of memory (XLA's ``RESOURCE_EXHAUSTED``)."""
    text = f"{type(exc).__name__}: {exc}"
    return any(marker in text for marker in OUT_OF_MEMORY_MARKERS)


def out_of_memory_error(exc: BaseException, backend: str, candidate, request):
    """The :class:`~pymc_accel.errors.DeviceOutOfMemoryError` for an out-of-memory error raised
    while ``backend`` sampled ``candidate``, or None when ``exc`` is something else.

    Parameters
    ----------
    exc : BaseException
        What sampling raised.
    backend : str
    candidate : Candidate
    request : SampleRequest

    Returns
    -------
    DeviceOutOfMemoryError or None
    """
    from pymc_accel.errors import DeviceOutOfMemoryError

    if isinstance(exc, DeviceOutOfMemoryError) or not is_out_of_memory(exc):
        return None
    said = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    fixes = []
    if request.chains > 1:
        fixes.append(f"fewer chains at once (chains < {request.chains}; with numpyro, "
                     "nuts={'chain_method': 'sequential'})")
    fixes.append(f"fewer draws (draws < {request.draws}; every kept draw stays on the device)")
    if candidate.precision == "float64":
        fixes.append("precision='float32' (half the memory)")
    if candidate.device != "cpu":
        fixes.append("device='cpu'")
    return DeviceOutOfMemoryError(
        f"{candidate.label} ran out of {candidate.device.upper()} memory while sampling "
        f"{request.chains} chain(s) x {request.draws} draws (+{request.tune} tuning). "
        f"Try {'; or '.join(fixes)}. The device said: {said}"
    )
