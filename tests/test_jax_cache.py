"""JAX's persistent compilation cache as pymc-accel sets it up (pymc_accel/jax_cache.py).

Each test runs in a new Python process: JAX's cache settings are the process's, and the test
session sets its own (tests/conftest.py) that these must not see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str, cache_dir, **env) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_PERSISTENT")
               and k != "JAX_COMPILATION_CACHE_DIR"}
    environ.update(PYMC_ACCEL_CACHE_DIR=str(cache_dir), JAX_PLATFORMS="cpu", **env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


SETTINGS = """
    import json, jax
    from pymc_accel import jax_cache
    path = jax_cache.enable()
    again = jax_cache.enable()
    print(json.dumps({"path": str(path) if path else None, "again": str(again) if again else None,
                      "dir": jax.config.jax_compilation_cache_dir,
                      "min_seconds": jax.config.jax_persistent_cache_min_compile_time_secs,
                      "max_size": jax.config.jax_compilation_cache_max_size,
                      "in_use": jax_cache.in_use()}))
"""


def test_enable_points_jax_at_the_pymc_accel_cache_and_keeps_every_program(tmp_path):
    got = _run(SETTINGS, tmp_path)
    assert got["path"] == got["again"] == got["dir"] == str(tmp_path / "jax-compile")
    assert got["min_seconds"] == 0.0
    # no size limit of JAX's: it read every entry of the directory on each program it wrote
    # (70 ms a write with 1,133 programs); enable() prunes the directory itself
    assert got["max_size"] == -1
    assert got["in_use"]


def test_a_size_limit_the_user_set_is_left_to_jax(tmp_path):
    got = _run(SETTINGS, tmp_path, JAX_COMPILATION_CACHE_MAX_SIZE=str(2**20))
    assert got["dir"] == str(tmp_path / "jax-compile") and got["max_size"] == 2**20
    assert not (tmp_path / "jax-compile" / ".pymc-accel-pruned").exists()  # JAX's to keep


def _programs(path, sizes_by_age):
    """Cache files as JAX writes them, the first the oldest, with the last-use stamps JAX's
    size limit wrote beside them."""
    path.mkdir(parents=True, exist_ok=True)
    for age, size in enumerate(sizes_by_age):
        program = path / f"jit_f-{age:064x}-cache"
        program.write_bytes(b"x" * size)
        os.utime(program, (1_000_000 + age, 1_000_000 + age))
        (path / f"jit_f-{age:064x}-atime").write_bytes(b"\0" * 8)


def test_prune_drops_the_oldest_programs_beyond_the_size_and_every_stamp(tmp_path):
    from pymc_accel.jax_cache import prune

    _programs(tmp_path, [400, 300, 200, 100])
    assert prune(tmp_path, max_bytes=350) == 700 + 4 * 8  # the two oldest, and the stamps
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [f"jit_f-{2:064x}-cache", f"jit_f-{3:064x}-cache"]
    assert prune(tmp_path, max_bytes=350) == 0
    assert prune(tmp_path / "missing") == 0  # never raises


def test_the_directory_is_pruned_at_most_once_a_day(tmp_path):
    from pymc_accel.jax_cache import prune_if_due

    _programs(tmp_path, [100, 100])
    assert prune_if_due(tmp_path, max_bytes=100) == 100 + 2 * 8  # due: never pruned
    _programs(tmp_path, [100, 100, 100])
    assert prune_if_due(tmp_path, max_bytes=100) == 0  # pruned a moment ago
    assert prune_if_due(tmp_path, max_bytes=100, every=0.0) > 0


def test_a_cache_directory_of_the_users_own_is_left_as_it_is(tmp_path):
    own = tmp_path / "mine"
    got = _run(SETTINGS, tmp_path / "accel", JAX_COMPILATION_CACHE_DIR=str(own))
    assert got["path"] == got["dir"] == str(own)
    assert got["min_seconds"] == 1.0  # JAX's default, not ours
    assert not (tmp_path / "accel" / "jax-compile").exists()


def test_the_switch_off_leaves_jax_without_a_cache(tmp_path):
    got = _run(SETTINGS, tmp_path, PYMC_ACCEL_JAX_CACHE="off")
    assert got["path"] is None and got["dir"] is None and not got["in_use"]


RUN_TWICE = """
    import json, warnings
    warnings.filterwarnings("ignore")
    import jax.monitoring
    import pymc_accel
    from pymc_accel.models import eight_schools

    events = []
    jax.monitoring.register_event_listener(lambda name, **_: events.append(name))
    compiled = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda name, seconds, **_: compiled.append(seconds)
        if name.endswith("backend_compile_duration") else None)
    runs = []
    for _ in range(2):
        events.clear(); compiled.clear()
        idata = pymc_accel.sample(model=eight_schools(), nuts_sampler="numpyro", tune=30,
                                  draws=20, chains=2, random_seed=3, progressbar=False,
                                  compute_convergence_checks=False)
        runs.append({"hits": events.count("/jax/compilation_cache/cache_hits"),
                     "misses": events.count("/jax/compilation_cache/cache_misses"),
                     "programs": len(compiled), "seconds": sum(compiled),
                     "mu": idata.posterior["mu"].values.tolist()})
    print(json.dumps(runs))
"""


@pytest.mark.parametrize("switch", ["on", "off"])
def test_numpyros_second_run_of_a_model_loads_its_programs_from_disk(tmp_path, switch):
    """A new model object jaxifies to a new log density, so the sampler's programs that hold
    it are not in JAX's memory (its helpers' are): without the disk cache they compile again."""
    first, second = _run(RUN_TWICE, tmp_path, PYMC_ACCEL_JAX_CACHE=switch)
    assert first["programs"] > second["programs"] > 0
    if switch == "on":
        assert first["misses"] > 0
        assert second["hits"] == second["programs"] and second["misses"] == 0
        assert second["seconds"] < first["seconds"] / 3
    else:
        assert first["misses"] == second["hits"] == 0
    assert second["mu"] == first["mu"]  # the same program: the same draws
