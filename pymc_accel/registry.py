"""The registry of sampler backends: built-ins plus plugins found through entry points.

Built on pluggy, like pytest. What pluggy does not do is isolate faults: its
``load_setuptools_entrypoints`` lets one plugin's import error propagate, and calling a hook runs
every implementation until one raises. Both loops are therefore written out here (mirroring
pluggy's own) with a ``try`` around each plugin, so a broken plugin is recorded with its error and
never breaks the registry or another backend.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any

import pluggy

from pymc_accel import hookspecs
from pymc_accel.backend import Backend
from pymc_accel.errors import UnknownBackendError
from pymc_accel.switches import OFF

ENTRY_POINT_GROUP = "pymc_accel"
DISABLE_AUTOLOAD_ENV = "PYMC_ACCEL_DISABLE_PLUGIN_AUTOLOAD"
BLOCK_ENV = "PYMC_ACCEL_BLOCK_PLUGINS"
BUILTIN_PLUGIN_NAME = "builtin"


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that could not be loaded or whose hook raised."""

    name: str
    origin: str
    error: str
    stage: str  # "import", "register", "hook", "validate"


@dataclass
class Registry:
    """The backends available in this process, where each came from, and what is broken."""

    plugin_manager: pluggy.PluginManager
    backends: dict[str, Backend] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    broken: list[BrokenPlugin] = field(default_factory=list)
    plugin_origins: dict[str, str] = field(default_factory=dict)
    #: what ``blocked`` and ``PYMC_ACCEL_BLOCK_PLUGINS`` named, and which of those names matched
    #: a backend, an entry point or a distribution here
    blocked_names: set[str] = field(default_factory=set)
    blocked_matched: set[str] = field(default_factory=set)

    def names(self) -> list[str]:
        """Registered backend names, built-ins first."""
        return list(self.backends)

    def get(self, name: str) -> Backend:
        """Return the backend called ``name``.

        Raises
        ------
        UnknownBackendError
            If no backend of that name is registered; the message lists the registered ones
            and any broken plugin of that name.
        """
        try:
            return self.backends[name]
        except KeyError:
            broken = [b for b in self.broken if b.name == name]
            hint = f" Plugin {name!r} is installed but broken: {broken[0].error}" if broken else ""
            if name in self.blocked_names:
                hint += (f" {name!r} is blocked by {BLOCK_ENV} (or build_registry(blocked=...)):"
                         " take it out of that list to use it.")
            elif self.blocked_names:
                hint += (f" {BLOCK_ENV} blocks {', '.join(sorted(self.blocked_names))}, which "
                         "may hold it.")
            label = self._as_label(name)
            if label:  # idata.attrs["pymc_accel_candidate"], or a report row's name
                raise UnknownBackendError(
                    f"{name!r} is a candidate's label (backend[device,precision,options]), not "
                    f"a backend's name: to run it, pass {label}.") from None
            raise UnknownBackendError(
                f"Unknown backend {name!r}. Registered backends: "
                f"{', '.join(self.names()) or 'none'}, "
                f"or 'auto'. pymc_accel.sample (and pm.sample under enable()) also passes "
                f"PyMC's own samplers (pymc, nutpie, numpyro, blackjax) to pm.sample, which "
                f"select() and explain() cannot estimate.{hint}"
            ) from None

    def _as_label(self, name: Any) -> str | None:
        """The ``sample`` arguments that pin the candidate ``name`` labels (``Candidate.label``:
        ``"numpyro[cpu,float64,chain_method=parallel]"``), or ``None`` when ``name`` is not the
        label of a registered backend's candidate."""
        found = re.fullmatch(r"([^\[\]]+)\[([^\[\]]*)\]", name) if isinstance(name, str) else None
        if not found or found.group(1) not in self.backends:
            return None
        call = [f"nuts_sampler={found.group(1)!r}"]
        for part in filter(None, found.group(2).split(",")):
            key, sep, value = part.partition("=")
            if not sep:  # the device or the precision
                call.append(f"{'precision' if key.startswith('float') else 'device'}={key!r}")
                continue
            try:  # a number as a number (window=64)
                shown = repr(int(value))
            except ValueError:
                try:
                    shown = repr(float(value))
                except ValueError:
                    shown = repr(value)
            call.append(f"{key}={shown}")
        return ", ".join(call)

    def call_select_hook(self, **kwargs: Any) -> tuple[Any, str | None]:
        """Call ``pymc_accel_select`` plugin by plugin, isolating faults.

        Returns the first non-``None`` answer and the name of the plugin that gave it.
        """
        hook = self.plugin_manager.hook.pymc_accel_select
        # pluggy calls the most recently registered implementation first; do the same.
        for impl in reversed(hook.get_hookimpls()):
            try:
                answer = impl.function(**kwargs)
            except Exception as exc:  # a site policy must not take sampling down
                self._record(impl.plugin_name, "hook", exc)
                continue
            if answer is not None:
                return answer, impl.plugin_name
        return None, None

    def add_broken(self, broken: BrokenPlugin) -> None:
        """List a plugin's fault once, however many times it is met: a selection meets a
        backend or hook that raises every time (the report's list grew by one a selection)."""
        if broken not in self.broken:
            self.broken.append(broken)

    def _record(self, name: str, stage: str, exc: BaseException) -> None:
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        origin = self.plugin_origins.get(name, "unknown")
        self.add_broken(BrokenPlugin(name=name, origin=origin, error=last, stage=stage))


def _blocked_names(blocked: tuple[str, ...] | None) -> set[str]:
    """What ``blocked`` and ``PYMC_ACCEL_BLOCK_PLUGINS`` name: entry-point names, distribution
    names (``pymc-accel-blackjax``) or backend names (``blackjax_nuts``), since a user sees the
    last two (``pymc-accel backends``, a ``PluginError``) and not the first."""
    names = set(blocked or ())
    names.update(n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip())
    return names


def _load_entry_points(registry: Registry, blocked: set[str]) -> None:
    """Import and register the plugins of group :data:`ENTRY_POINT_GROUP`.

    The entry points are found with ``importlib.metadata.entry_points(group=...)``, which reads
    each installed distribution's ``entry_points.txt`` only; a distribution's name and version
    (its ``METADATA``, parsed as an e-mail message) are read for those in the group. Reading them
    for every installed distribution made ``build_registry`` take 88-91 ms in a new process with
    78 distributions installed; it takes 23-26 ms this way, the plugins' imports included.
    """
    pm = registry.plugin_manager
    seen: dict[str, str] = {}  # entry-point name -> the distribution that registered it
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist_name = ep.dist.metadata["Name"] if ep.dist is not None else ep.value
        origin = f"{dist_name} {ep.dist.version}" if ep.dist is not None else ep.value
        if ep.name in seen:
            if seen[ep.name] != origin:  # not the same distribution listed twice
                registry.add_broken(BrokenPlugin(
                    ep.name, origin, f"entry point name {ep.name!r} is already used by "
                    f"{seen[ep.name]}; this one is not loaded: rename one of them",
                    "import"))
            continue
        seen[ep.name] = origin
        named = {ep.name, dist_name} & blocked
        registry.blocked_matched |= named
        if pm.has_plugin(ep.name) or pm.is_blocked(ep.name) or named:
            continue
        registry.plugin_origins[ep.name] = origin
        try:
            plugin = ep.load()
        except Exception as exc:
            registry._record(ep.name, "import", exc)
            continue
        try:
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # e.g. pluggy's PluginValidationError
            registry._record(ep.name, "register", exc)


def _collect_backends(registry: Registry, blocked: set[str]) -> None:
    hook = registry.plugin_manager.hook.pymc_accel_backends
    for impl in hook.get_hookimpls():
        name = impl.plugin_name
        try:
            provided = list(impl.function())
        except Exception as exc:
            registry._record(name, "hook", exc)
            continue
        for backend in provided:
            if getattr(backend, "name", None) in blocked:
                registry.blocked_matched.add(backend.name)
                continue
            problem = _validate(backend, registry)
            if problem:
                registry.add_broken(
                    BrokenPlugin(name, registry.plugin_origins.get(name, "unknown"), problem, "validate")
                )
                continue
            registry.backends[backend.name] = backend
            registry.origins[backend.name] = registry.plugin_origins.get(name, "unknown")


def _validate(backend: object, registry: Registry) -> str | None:
    if not isinstance(backend, Backend):
        return (
            f"{backend!r} does not implement the Backend protocol "
            "(name, description, candidates, estimate, sample)"
        )
    if (not isinstance(backend.name, str) or not backend.name
            or any(c in backend.name for c in "[], \t\n")):
        return (f"backend name {backend.name!r} is not a plain name: labels write options in "
                "brackets after it, separated by commas (use letters, digits, _ or -)")
    if backend.name in registry.backends:
        return f"backend name {backend.name!r} is already registered by {registry.origins[backend.name]}"
    if backend.name == "auto":
        return "'auto' is reserved for automatic selection"
    return None


def build_registry(
    *, autoload: bool | None = None, blocked: tuple[str, ...] | None = None, builtins: bool = True
) -> Registry:
    """Build a fresh registry.

    Parameters
    ----------
    autoload : bool, optional
        Load plugins from the ``pymc_accel`` entry-point group. Defaults to true unless
        ``PYMC_ACCEL_DISABLE_PLUGIN_AUTOLOAD`` is set to a value other than ``0``, ``false``,
        ``no``, ``off`` or the empty string.
    blocked : tuple of str, optional
        Entry-point, distribution or backend names not to load, in addition to
        ``PYMC_ACCEL_BLOCK_PLUGINS``.
    builtins : bool, default True
        Register pymc-accel's built-in backends first.

    Returns
    -------
    Registry
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    registry = Registry(plugin_manager=pm)
    blocked_names = _blocked_names(blocked)
    for name in blocked_names:
        pm.set_blocked(name)
    if builtins:
        from pymc_accel import backends as builtin_backends

        from pymc_accel import __version__

        registry.plugin_origins[BUILTIN_PLUGIN_NAME] = f"pymc-accel {__version__} (built-in)"
        pm.register(builtin_backends, name=BUILTIN_PLUGIN_NAME)
    if autoload is None:
        autoload = os.environ.get(DISABLE_AUTOLOAD_ENV, "").strip().lower() in OFF | {""}
    if autoload:
        _load_entry_points(registry, blocked_names)
    _collect_backends(registry, blocked_names)
    registry.blocked_names = blocked_names
    unmatched = blocked_names - registry.blocked_matched
    if unmatched and autoload:  # without autoload, entry points are not seen to match
        warnings.warn(
            f"{BLOCK_ENV} (or blocked=) names {', '.join(sorted(unmatched))}, which no backend, "
            f"plugin entry point or distribution here is called: check the spelling "
            f"(`pymc-accel backends` lists the backends and their distributions).",
            UserWarning, stacklevel=2)
    return registry


_REGISTRY: Registry | None = None


def get_registry(*, refresh: bool = False) -> Registry:
    """Return the process-wide registry, building it on first use (or when ``refresh``)."""
    global _REGISTRY
    if _REGISTRY is None or refresh:
        _REGISTRY = build_registry()
    return _REGISTRY
