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
the directory to :data:`MAX_BYTES`, the least recently used out first.

JAX's own mechanism; written here is only the choice of directory and sizes.
"""

from __future__ import annotations

from pathlib import Path

from pymc_accel.switches import switched_on

#: The switch that keeps pymc-accel from setting up JAX's cache.
SWITCH = "PYMC_ACCEL_JAX_CACHE"
#: Largest size of the cache directory pymc-accel sets up (JAX drops least recently used
#: executables beyond it).
MAX_BYTES = 2 * 2**30

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
        if jax.config.jax_compilation_cache_max_size == -1 and _has_filelock():
            # JAX's size limit locks the directory with filelock (PyTensor requires it), and
            # fails the first compile without it
            jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
        _ours = path
    return _ours


def _has_filelock() -> bool:
    import importlib.util

    return importlib.util.find_spec("filelock") is not None


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
