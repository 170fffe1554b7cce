"""float32 checks, and passed start checks, kept between selections, in this process and on
disk.

The float32 check (:func:`pymc_accel.precision.check_float32`) evaluates the log density and
gradient in both precisions at four points: 0.05-0.4 s on the quick zoo's models, 3 s for a
hierarchical logistic regression of 50,000 rows and 11 s at 200,000 rows (docs/benchmarks.md).
Its verdict depends only on what the model computes, so a model selected again (a script run
again, a notebook cell re-run) with the same structure (:func:`pymc_accel.profile.structure_key`),
the same data values (:func:`pymc_accel.profile.data_digest`) and the same initial values reads
it instead of checking again. The key also holds the versions of PyMC, PyTensor and NumPy and a
hash of the check's code, so an upgrade checks again. One JSON file per key in
``<cache_dir>/checks/``.

A selection with float32 candidates computes the key, to know whether their check is to be
paid: the data's hash reads every byte once (about 0.2 s for the seed blog's 1M x 20
covariates, 13 ms at 50,000 x 20), small against the runs such data take.

Only a check that evaluated all its points is kept when it passed (one cut short by measured
mode's budget vouches for fewer); a failed one is kept whatever its points. With
``PYMC_ACCEL_PROFILE_CACHE=off`` (:func:`pymc_accel.profile_store.enabled`) nothing is read
from or written to disk; :func:`forget` empties the process's store. Written by hand: no
library keeps facts about a PyTensor graph.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from pymc_accel import profile_store
from pymc_accel.precision import POINTS_CHECKED, PrecisionCheck

#: Check files kept; the oldest are removed when more are written.
MAX_FILES = 200
#: Checks kept in this process, most recent last.
_KEPT: dict[str, PrecisionCheck] = {}
_KEPT_MAX = 32


@functools.cache
def _code_and_versions() -> str:
    from pymc_accel import graph_building, precision, profile
    from pymc_accel.machine import library_versions
    from pymc_accel.rewrites import coincident_distances

    digest = hashlib.sha1()
    # the profile's: the check evaluates the log density and gradient it builds first; and the
    # rewrite of the log density it checks where a GP's kernel distances coincide
    for module in (precision, graph_building, profile, coincident_distances):
        digest.update(Path(module.__file__).read_bytes())
    libs = library_versions(("pymc", "pytensor", "numpy", "pymc-accel"))
    return json.dumps(sorted(libs.items())) + digest.hexdigest()


def check_key(model: Any, initvals: dict | None = None) -> str | None:
    """The key of the float32 check of ``model`` started from ``initvals``, or ``None`` when the
    model's graph cannot be described (an op property without a stable ``repr``)."""
    from pymc_accel.profile import data_digest, structure_key

    try:
        structure = repr(structure_key(model))
    except Exception:
        return None
    if " at 0x" in structure:
        return None
    starts = repr(sorted((str(k), repr(v)) for k, v in (initvals or {}).items()))
    text = structure + data_digest(model) + starts + _code_and_versions()
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _path(key: str) -> Path:
    from pymc_accel.machine import cache_dir

    return cache_dir() / "checks" / f"{key}.json"


def load(key: str | None) -> PrecisionCheck | None:
    """The check kept under ``key`` (this process's, else the disk's), marked ``kept``; ``None``
    when there is none."""
    return _load(_KEPT, key, PrecisionCheck)


def _load(store: dict[str, Any], key: str | None, build: Any) -> Any:
    """What ``store`` keeps under ``key``, else what the disk does (``build(**fields)``, then
    kept in ``store``); ``None`` where neither does."""
    if key is None:
        return None
    value = store.get(key)
    if value is None and profile_store.enabled():
        try:
            value = build(**json.loads(_path(key).read_text()))
        except (OSError, ValueError, TypeError):
            return None
        _put(store, key, value)
    return value


def save(key: str | None, check: PrecisionCheck) -> None:
    """Keep ``check`` under ``key``, if it is worth keeping: failed, or passed at every point."""
    if key is None or check.kept or (check.safe and check.points < POINTS_CHECKED):
        return
    kept = replace(check, kept=time.strftime("%Y-%m-%d %H:%M:%S"))
    _put(_KEPT, key, kept)
    if profile_store.enabled():
        profile_store.write_kept(_path(key), kept.to_dict(), MAX_FILES)


def _put(store: dict[str, Any], key: str, value: Any) -> None:
    """Keep ``value`` under ``key`` as the newest of ``store``'s, which holds at most
    ``_KEPT_MAX`` (the oldest go)."""
    store.pop(key, None)
    store[key] = value
    while len(store) > _KEPT_MAX:
        store.pop(next(iter(store)))


def forget() -> None:
    """Forget the checks, start checks, scale spreads and posterior conditionings kept in this
    process (the disk's stay)."""
    _KEPT.clear()
    _STARTS.clear()
    _SPREADS.clear()
    _CONDITIONINGS.clear()


# The start check (pymc_accel.integration.check_initial_point) that pymc_accel.sample runs
# before a plugin's sampler: 65-230 ms on the quick zoo's models, each run, where a model built
# again or a script run again starts from the same point of the same log density. A passed
# check is kept under the float32 check's key (structure, data, initial values, versions) and
# the start check's code; a failed one is not (it raises, naming the variables, every time).
_STARTS: set[str] = set()


@functools.cache
def _start_code() -> str:
    from pymc_accel import integration

    return hashlib.sha1(Path(integration.__file__).read_bytes()).hexdigest()


def start_key(model: Any, initvals: dict | None = None) -> str | None:
    """The key of the start check of ``model`` from ``initvals``, or ``None`` when the model's
    graph or data cannot be described (the check then runs, and is not kept)."""
    try:
        key = check_key(model, initvals)
    except Exception:  # data the digest cannot read: a start check is not worth failing for
        return None
    if key is None:
        return None
    return "start-" + hashlib.sha256((key + _start_code()).encode()).hexdigest()[:32]


def start_passed(key: str | None) -> bool:
    """Whether a start check kept under ``key`` (this process's, else the disk's) passed."""
    if key is None:
        return False
    if key in _STARTS:
        return True
    if profile_store.enabled() and _path(key).exists():
        _STARTS.add(key)
        return True
    return False


def keep_start(key: str | None) -> None:
    """Keep a passed start check under ``key``."""
    if key is None:
        return
    _STARTS.add(key)
    if profile_store.enabled():
        profile_store.write_kept(_path(key), {"passed": time.strftime("%Y-%m-%d %H:%M:%S")},
                                 MAX_FILES)


# The scale spread (pymc_accel.curvature) a selection evaluated, kept under the float32 check's
# key (structure, data, initial values, versions) and the spread's code, as the start check is:
# a model selected again reads it instead of evaluating its gradient again.
_SPREADS: dict[str, Any] = {}
# The posterior's conditioning at its mode (pymc_accel.conditioning), kept as the spread is.
_CONDITIONINGS: dict[str, Any] = {}


@functools.cache
def _module_code(name: str) -> str:
    """A hash of ``pymc_accel.<name>``'s code: a figure it computes is computed again once it
    changes."""
    import importlib

    module = importlib.import_module(f"pymc_accel.{name}")
    return hashlib.sha1(Path(module.__file__).read_bytes()).hexdigest()


def _figure_key(prefix: str, check: str | None, module: str) -> str | None:
    """The key of a figure ``pymc_accel.<module>`` computes for the model whose float32 check's
    key is ``check`` (:func:`check_key`); ``None`` where that is."""
    if check is None:
        return None
    return prefix + hashlib.sha256((check + _module_code(module)).encode()).hexdigest()[:32]


def spread_key(check: str | None) -> str | None:
    """The key of the scale spread of the model whose float32 check's key is ``check``
    (:func:`check_key`); ``None`` where that is."""
    return _figure_key("spread-", check, "curvature")


def conditioning_key(check: str | None) -> str | None:
    """The key of the posterior conditioning of the model whose float32 check's key is
    ``check`` (:func:`check_key`); ``None`` where that is."""
    return _figure_key("conditioning-", check, "conditioning")


def load_conditioning(key: str | None) -> Any:
    """The :class:`~pymc_accel.conditioning.PosteriorConditioning` kept under ``key`` (this
    process's, else the disk's), or ``None``."""
    from pymc_accel.conditioning import PosteriorConditioning

    return _load(_CONDITIONINGS, key, PosteriorConditioning)


def save_conditioning(key: str | None, found: Any) -> None:
    """Keep a :class:`~pymc_accel.conditioning.PosteriorConditioning` under ``key``."""
    _save(_CONDITIONINGS, key, found)


def load_spread(key: str | None) -> Any:
    """The :class:`~pymc_accel.curvature.ScaleSpread` kept under ``key`` (this process's, else
    the disk's), or ``None``."""
    from pymc_accel.curvature import ScaleSpread

    return _load(_SPREADS, key, ScaleSpread)


def save_spread(key: str | None, spread: Any) -> None:
    """Keep a :class:`~pymc_accel.curvature.ScaleSpread` under ``key``."""
    _save(_SPREADS, key, spread)


def _save(store: dict[str, Any], key: str | None, value: Any) -> None:
    """Keep the dataclass ``value`` under ``key`` in ``store`` and on disk (nothing for a
    ``None`` of either)."""
    if key is None or value is None:
        return
    _put(store, key, value)
    if profile_store.enabled():
        profile_store.write_kept(_path(key), asdict(value), MAX_FILES)
