"""The devices present: CPU cores, and JAX's GPUs with their memory."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from importlib.util import find_spec

from pymc_accel import xla_tuning


@dataclass(frozen=True)
class Gpu:
    """One accelerator visible to JAX."""

    id: int
    kind: str
    memory_bytes: int | None


@dataclass(frozen=True)
class Devices:
    """What this process can run on.

    Attributes
    ----------
    cpu_cores : int
        Cores this process may use (its CPU affinity, not the machine's total).
    gpus : tuple of Gpu
        Accelerators JAX can see; empty when there are none or JAX is absent.
    jax_installed : bool
        Whether JAX can be imported.
    note : str
        Why GPUs could not be listed, when that is the case.
    """

    cpu_cores: int
    gpus: tuple[Gpu, ...] = field(default=())
    jax_installed: bool = False
    note: str = ""

    @property
    def has_gpu(self) -> bool:
        """True when at least one GPU is visible."""
        return bool(self.gpus)

    def summary(self) -> str:
        """One line, e.g. ``2 CPU cores; no GPU (JAX sees cpu only)``."""
        gpu = (
            ", ".join(f"{g.kind} ({(g.memory_bytes or 0) / 2**30:.0f} GiB)" for g in self.gpus)
            if self.gpus
            else f"no GPU ({self.note})" if self.note else "no GPU"
        )
        return f"{self.cpu_cores} CPU cores; {gpu}"


def cpu_cores() -> int:
    """Cores available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _host_devices_to_ask() -> int:
    """The CPU devices pymc-accel asks XLA for: one a core, and at least four."""
    return max(4, cpu_cores())


def jax_cpu_devices() -> int:
    """The CPU devices JAX has, or will have when it starts, without starting it.

    Once JAX has started, its own count. Before, the count that ``XLA_FLAGS`` asks for
    (``--xla_force_host_platform_device_count``, which :func:`discover` sets for whenever JAX
    starts, as ``pymc.sampling.jax`` does on import). JAX reads the flag only when it starts,
    so a process that started JAX before either set it has one CPU device, and a JAX
    sampler's chains cannot run side by side there.

    Returns
    -------
    int
    """
    # JAX imported, not only registered lazily (ArviZ registers it with lazy_loader, and
    # touching such a module imports JAX: module_installed)
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is not None:
        # a JAX without the check: ask JAX, which starts it with the flags set by now
        started = getattr(bridge, "backends_are_initialized", lambda: True)()
        if started:
            import jax

            try:
                return len(jax.devices("cpu"))
            except RuntimeError:  # JAX_PLATFORMS without cpu
                return 1
    flags = os.environ.get("XLA_FLAGS", "")
    # XLA takes the last count it reads: pymc.sampling.jax puts its 100 first, before ours
    counts = re.findall(r"--xla_force_host_platform_device_count=(\d+)", flags)
    # without the flag, whatever starts JAX asks for it first: discover() or pymc.sampling.jax
    return max(1, int(counts[-1])) if counts else _host_devices_to_ask()


def host_devices_fix(chains: int) -> str:
    """How to give JAX a CPU device a chain, for warnings and the selection report."""
    return ("JAX started before pymc-accel could ask XLA for a device per core. Import "
            "pymc_accel (or pymc.sampling.jax) before anything uses JAX, or set XLA_FLAGS="
            f"--xla_force_host_platform_device_count={chains} before Python starts JAX.")


def ask_for_host_devices() -> None:
    """Before JAX starts, ask XLA for one CPU device per core (as ``pymc.sampling.jax`` does on
    import), so parallel chains can be spread over the CPU. No effect once JAX has started;
    ``XLA_FLAGS`` that already set the count are kept. Called when pymc_accel is imported and
    at device discovery."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        count = f"--xla_force_host_platform_device_count={_host_devices_to_ask()}"
        os.environ["XLA_FLAGS"] = f"{flags} {count}".strip()


def prepare_xla_flags() -> None:
    """Set pymc-accel's ``XLA_FLAGS`` for whenever JAX starts: a CPU device per core
    (:func:`ask_for_host_devices`) and CPU reductions left to XLA's own loops
    (:func:`pymc_accel.xla_tuning.keep_reductions_out_of_ynnpack`). Called when pymc_accel is
    imported and at device discovery."""
    ask_for_host_devices()
    xla_tuning.keep_reductions_out_of_ynnpack()


def _jax_gpus() -> tuple[tuple[Gpu, ...], str]:
    ask_for_host_devices()
    import jax

    try:
        found = jax.devices("gpu")
    except RuntimeError:
        return (), f"JAX sees {jax.default_backend()} only"
    gpus = []
    for d in found:
        memory = None
        try:
            memory = (d.memory_stats() or {}).get("bytes_limit")
        except Exception:  # memory_stats is optional per platform
            pass
        gpus.append(Gpu(id=d.id, kind=getattr(d, "device_kind", str(d)), memory_bytes=memory))
    return tuple(gpus), ""


#: Distributions that give JAX a non-CPU platform (a PJRT plugin, or jaxlib's TPU runtime).
_ACCELERATOR_DISTRIBUTIONS = ("jax-cuda", "jax_cuda", "jax-rocm", "jax_rocm", "jax-metal",
                              "libtpu")


def _no_accelerator_reason() -> str:
    """Why JAX cannot see a GPU, decided without importing JAX (about a third of a second of a
    process's first selection otherwise), or ``""`` when only JAX itself can tell.

    ``JAX_PLATFORMS`` set without an accelerator platform, or, when it is unset, no accelerator
    plugin installed (JAX's CPU-only wheels have no GPU platform to find). ``JAX_PLATFORMS``
    naming an accelerator is always put to JAX.
    """
    platforms = os.environ.get("JAX_PLATFORMS", "").strip().lower()
    if platforms:
        if any(p in platforms for p in ("cuda", "gpu", "rocm", "tpu", "metal")):
            return ""
        return f"JAX_PLATFORMS={platforms}"
    from importlib.metadata import PackageNotFoundError, distributions, version

    for dist in distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name.startswith(_ACCELERATOR_DISTRIBUTIONS):
            return ""
    try:  # jaxlib wheels that bundle CUDA or ROCm (before JAX's plugins)
        if any(t in version("jaxlib") for t in ("cuda", "rocm")):
            return ""
    except PackageNotFoundError:
        pass
    return "no JAX GPU plugin installed"


def module_installed(name: str) -> bool:
    """Whether the top-level module ``name`` can be imported, without importing it.

    A module already in ``sys.modules`` is installed, whether imported or only registered
    lazily: ArviZ's NumPyro converter registers ``jax`` and ``numpyro`` with ``lazy_loader``,
    and ``importlib.util.find_spec`` on such a module reads its ``__spec__``, which imports it
    (0.8 s for JAX in the demo's selection, for a run that chose nutpie on numba).
    """
    return name in sys.modules or find_spec(name) is not None


_CACHE: Devices | None = None


def discover(*, refresh: bool = False) -> Devices:
    """Find the devices present (cached for the process after the first call).

    Honours ``JAX_PLATFORMS``: with ``JAX_PLATFORMS=cpu`` no GPU is reported.
    """
    global _CACHE
    if _CACHE is not None and not refresh:
        return _CACHE
    jax_installed = module_installed("jax")
    gpus: tuple[Gpu, ...] = ()
    note = "JAX is not installed" if not jax_installed else ""
    if jax_installed:
        prepare_xla_flags()  # for whenever JAX starts, here or in a backend
        note = _no_accelerator_reason()
        if not note:
            gpus, note = _jax_gpus()
    _CACHE = Devices(cpu_cores=cpu_cores(), gpus=gpus, jax_installed=jax_installed, note=note)
    return _CACHE


def jax_device(backend: str, device: str):
    """The first JAX device of platform ``device`` ("cpu" or "gpu"), or an error naming the fix.

    For backends, built-in or plugin, that run JAX on a candidate's device.

    Parameters
    ----------
    backend : str
        The backend asking (named in the error).
    device : {"cpu", "gpu"}

    Returns
    -------
    jax.Device

    Raises
    ------
    DeviceUnavailableError
        JAX has no device of that platform.
    """
    import jax

    from pymc_accel.errors import DeviceUnavailableError

    try:
        return jax.devices(device)[0]
    except RuntimeError as exc:
        raise DeviceUnavailableError(
            f"{backend} was asked to run on {device} but JAX has no such device ({exc}). "
            "Install 'pymc-accel[gpu]' on a CUDA machine, or use device='cpu'."
        ) from None
