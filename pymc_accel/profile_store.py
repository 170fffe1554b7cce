"""Profiles kept on disk between processes, keyed by a model's structure.

A script run again builds the same model in a new process; its selection need not profile it
again (30-250 ms on small models, most of a first selection) when a model of the same
structure (:func:`pymc_accel.profile.structure_key`: ops, shapes, dtypes, names, the values of
small data) was profiled before on this machine. One JSON file per structure in
``<cache_dir>/profiles/``; the key also holds the versions of PyMC and PyTensor (which build the
graph the census counts) and a hash of the census code, so an upgrade profiles again.

Set ``PYMC_ACCEL_PROFILE_CACHE=off`` to neither read nor write it (benchmarks timing what a
model's first selection costs do). Written by hand: no library persists PyTensor graph facts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from pymc_accel.profile import ModelProfile
from pymc_accel.switches import switched_on

#: Profile files kept; the oldest are removed when more are written.
MAX_FILES = 200


def enabled() -> bool:
    """Whether profiles are read from and written to disk (``PYMC_ACCEL_PROFILE_CACHE`` is not
    ``off``)."""
    return switched_on("PYMC_ACCEL_PROFILE_CACHE")


@functools.cache
def _code_and_versions() -> str:
    """Versions of the libraries that build the graph, and a hash of the code that counts it."""
    from pymc_accel import census, jax_support, profile, xla_series
    from pymc_accel.machine import library_versions

    digest = hashlib.sha1()
    for module in (census, jax_support, profile, xla_series):
        digest.update(Path(module.__file__).read_bytes())
    libs = library_versions(("pymc", "pytensor", "pymc-accel"))
    return json.dumps(sorted(libs.items())) + digest.hexdigest()


def _path(structure: tuple) -> Path | None:
    """The file for this structure; ``None`` when the key names an object by its address (an
    op property without a stable repr), which no other process would match."""
    from pymc_accel.machine import cache_dir

    text = repr(structure)
    if " at 0x" in text:
        return None
    text += _code_and_versions()
    return cache_dir() / "profiles" / (hashlib.sha256(text.encode()).hexdigest()[:32] + ".json")


def load(structure: tuple) -> ModelProfile | None:
    """The profile stored for a model of this structure, or ``None`` (none stored, the store is
    off, or the file is unreadable)."""
    path = _path(structure) if enabled() else None
    if path is None:
        return None
    try:
        return ModelProfile.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def save(structure: tuple, profile: ModelProfile) -> None:
    """Store ``profile`` for models of this structure (a no-op when the store is off or the
    cache directory is not writable)."""
    path = _path(structure) if enabled() else None
    if path is not None:
        write_kept(path, profile.to_dict(), MAX_FILES)


def write_kept(path: Path, payload: dict, max_files: int) -> None:
    """Write ``payload`` as JSON to ``path`` whole (through a temporary file: concurrent
    processes never read half a file) and remove the oldest JSON files beside it beyond
    ``max_files``; a cache directory that is not writable is left as it is."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(payload))
        tmp.replace(path)
        files = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in files[:-max_files]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
