"""The plugin contract of pymc-accel: read this module to write a plugin.

A plugin is any module or object with functions marked by :data:`hookimpl` whose names are the
hooks below. Register it for automatic discovery with an entry point in group ``pymc_accel``::

    [project.entry-points.pymc_accel]
    mybackend = "my_package.plugin"

Entry-point loading can be turned off with ``PYMC_ACCEL_DISABLE_PLUGIN_AUTOLOAD=1``, and single
plugins blocked by name with ``PYMC_ACCEL_BLOCK_PLUGINS=name1,name2`` (checked before the plugin is
imported, so a plugin that crashes on import can be switched off).

A plugin that fails to import or whose hook raises is reported as broken, with its error, by
``pymc-accel backends`` and in every selection report; the other backends keep working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pymc_accel.backend import Backend, Candidate
    from pymc_accel.profile import ModelProfile

PROJECT = "pymc_accel"

hookspec = pluggy.HookspecMarker(PROJECT)
#: Marker for plugin implementations: ``@pymc_accel.hookimpl``.
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def pymc_accel_backends() -> list[Backend]:
    """Return the sampler backends this plugin provides.

    Returns
    -------
    list of Backend
        Objects implementing :class:`pymc_accel.backend.Backend`. Each ``name`` must be unique
        across all plugins; a duplicate is reported as broken and the first one kept. A backend
        may also implement the optional ``measure(candidate, model, profile, machine,
        budget_seconds) -> Estimate | None`` (see :class:`~pymc_accel.backend.Backend`), which
        measured mode calls to replace modelled figures with timed ones.
    """


@hookspec(firstresult=True)
def pymc_accel_select(
    profile: ModelProfile, candidates: list[tuple[Candidate, float]]
) -> Candidate | None:
    """Override the built-in ranking (a site policy), or return ``None`` to leave it alone.

    Parameters
    ----------
    profile : ModelProfile
        The profile of the model being sampled.
    candidates : list of (Candidate, float)
        Every runnable candidate with its estimated wall time in seconds, best first.

    Returns
    -------
    Candidate or None
        One of ``candidates``' candidates, or ``None``. The first plugin to return a candidate
        wins; the report records which plugin chose it.
    """
