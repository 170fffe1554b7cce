"""JAX's persistent compilation cache for the samplers pymc-accel runs on JAX.

XLA compiles a NumPyro or BlackJAX sampler anew in every run: PyMC jaxifies the model again
each time, so JAX's in-memory cache (keyed by the Python function) never hits, and a script run
again starts a new process. On the 2-core machine, NumPyro's run of eight schools at
``pm.sample``'s defaults, in a new process, took 8.5 s, 3.2 s of it compiling 41 XLA programs;
with JAX's persistent cache holding them, 2.4 s with the same draws (``bench/bench_jax_cache.py``;
docs/benchmarks.md, "JAX's compile cache on disk").

JAX keys a cached executable by the compiled program itself (its constants, which hold the
model's data, included), the compile options, the devices and JAX's version, so a hit is always
the same program: a run of another model, other data, other draws or another
``target_accept`` compiles anew. :func:`enable` points JAX at ``<cache_dir>/jax-compile`` before
a JAX sampler runs, unless the user has set JAX's ``jax_compilation_cache_dir`` (their cache
then serves) or ``PYMC_ACCEL_JAX_CACHE=off``. It caches every program (JAX's default keeps only
those that took a second to compile: a sampler's 40 small ones took 1.6 s together) and keeps
the directory to :data:`MAX_BYTES` (:func:`prune`).

Not with JAX's own size limit (``jax_compilation_cache_max_size``), which pymc-accel set until
2026-11-30: on every program it writes, JAX then reads the size and last-use stamp of every
entry in the directory to find what to drop. A NumPyro run writes dozens of programs (PyMC
evaluated the jaxified log density op by op at the initial points). With 1,133 programs in
the directory, as a few days of runs had left on the 2-core machine, NumPyro's runs at
``pm.sample``'s defaults in a new process took 1.25-1.39x as long as without the limit, and
without it as long as with an empty cache (``bench/bench_jax_cache_size.py``;
docs/benchmarks.md, "What a run builds and compiles again"). Without a limit JAX writes a
program and nothing else. :func:`enable` instead prunes the directory itself, at most once a day
(:data:`PRUNE_EVERY`), oldest programs out first, in one pass over the directory's entries.

JAX's own mechanism; written here are the choice of directory and sizes, and the pruning.
"""

from __future__ import annotations

from pathlib import Path

from pymc_accel.switches import switched_on

#: The switch that keeps pymc-accel from setting up JAX's cache.
SWITCH = "PYMC_ACCEL_JAX_CACHE"
#: Largest size of the cache directory pymc-accel sets up (:func:`prune` drops the oldest
#: programs beyond it).
MAX_BYTES = 2 * 2**30

#: Seconds between two prunings of the directory (:func:`prune`): a day.
PRUNE_EVERY = 24 * 3600.0

#: The file whose modification time says when the directory was last pruned.
_PRUNED_STAMP = ".pymc-accel-pruned"

_ours: Path | None = None  # the directory enable() set, if it set one


def enabled() -> bool:
    """Whether pymc-accel sets up JAX's persistent cache (``PYMC_ACCEL_JAX_CACHE`` is not
    ``off``)."""
    return switched_on(SWITCH)


def directory() -> Path:
    """The directory pymc-accel gives JAX's persistent compilation cache."""
    from pymc_accel.machine import cache_dir

    return cache_dir() / "jax-compile"


def enable() -> Path | None:
    """Point JAX's persistent compilation cache at :func:`directory`, once per process.

    Leaves JAX as it is when the switch is off or the user has set
    ``jax_compilation_cache_dir`` themselves.

    Returns
    -------
    Path or None
        The directory JAX caches compiled programs in (the user's own, when set), or ``None``
        when it caches none.
    """
    global _ours
    import jax

    current = jax.config.jax_compilation_cache_dir
    if current and (_ours is None or Path(current) != _ours):
        return Path(current)  # the user's cache
    if not enabled():
        return None
    if _ours is None:
        path = directory()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None  # a read-only home: compile as before
        jax.config.update("jax_compilation_cache_dir", str(path))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        # JAX's own size limit, where the user set one (JAX_COMPILATION_CACHE_MAX_SIZE), keeps
        # the directory instead: it reads every entry on each write (see the module docstring)
        if jax.config.jax_compilation_cache_max_size == -1:
            prune_if_due(path)
        _ours = path
    return _ours


def prune_if_due(path: Path, max_bytes: int = MAX_BYTES, every: float = PRUNE_EVERY) -> int:
    """:func:`prune` ``path`` when it was last pruned ``every`` seconds ago or more (or never).

    Returns
    -------
    int
        Bytes deleted (0 when not due).
    """
    import time

    stamp = path / _PRUNED_STAMP
    try:
        if time.time() - stamp.stat().st_mtime < every:
            return 0
    except OSError:  # never pruned
        pass
    deleted = prune(path, max_bytes)
    try:
        stamp.touch()
    except OSError:
        pass
    return deleted


def prune(path: Path, max_bytes: int = MAX_BYTES) -> int:
    """Delete JAX's cached programs in ``path``, oldest written first, until the rest take at
    most ``max_bytes``; and the last-use stamps JAX's size limit wrote (``*-atime``), which
    nothing reads without it. Never raises: a file another process deleted, or one that cannot
    be deleted, is passed over.

    Parameters
    ----------
    path : Path
        The cache directory.
    max_bytes : int, default :data:`MAX_BYTES`

    Returns
    -------
    int
        Bytes deleted.
    """
    import os

    programs, total, deleted = [], 0, 0
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    if entry.name.endswith("-atime"):
                        deleted += entry.stat().st_size
                        os.remove(entry.path)
                    elif entry.name.endswith("-cache") and entry.is_file():
                        st = entry.stat()
                        programs.append((st.st_mtime, st.st_size, entry.path))
                        total += st.st_size
                except OSError:
                    continue
    except OSError:
        return deleted
    programs.sort()  # oldest first
    for _, size, name in programs:
        if total <= max_bytes:
            break
        try:
            os.remove(name)
        except OSError:
            continue
        total -= size
        deleted += size
    return deleted


def in_use() -> bool:
    """Whether JAX has a persistent cache directory (pymc-accel's or the user's), without
    importing JAX when nothing has."""
    import sys

    if _ours is not None:
        return True
    jax = sys.modules.get("jax")
    return bool(jax is not None and jax.config.jax_compilation_cache_dir)


def will_cache() -> bool:
    """Whether a JAX sampler's run will find its programs on disk when run again: pymc-accel
    sets up JAX's cache (:func:`enable`) or the user has their own (``jax_compilation_cache_dir``
    set, or ``JAX_COMPILATION_CACHE_DIR`` in the environment). Imports nothing."""
    import os
    import sys

    if enabled() or os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return True
    jax = sys.modules.get("jax")
    return bool(jax is not None and jax.config.jax_compilation_cache_dir)
