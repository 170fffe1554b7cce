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
    assert got["max_size"] > 0
    assert got["in_use"]


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
