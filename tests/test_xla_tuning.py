"""XLA's CPU reductions kept out of YNNPACK: the flag set before JAX starts, only where it is
known, never over the user's own, and its effect on a compiled program."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pymc_accel import devices, xla_tuning
from pymc_accel.xla_tuning import YNN_REDUCE_OFF, keep_reductions_out_of_ynnpack


@pytest.fixture
def checked_jaxlib(monkeypatch):
    monkeypatch.setattr(xla_tuning, "jaxlib_release", lambda: (0, 12, 0, 1))
    monkeypatch.delenv(xla_tuning.SWITCH, raising=False)


def test_the_flag_is_added_once(monkeypatch, checked_jaxlib):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    assert keep_reductions_out_of_ynnpack()
    assert keep_reductions_out_of_ynnpack()
    assert os.environ["XLA_FLAGS"] == f"{YNN_REDUCE_OFF} --xla_force_host_platform_device_count=4"


def test_the_users_own_setting_is_kept(monkeypatch, checked_jaxlib):
    mine = "--xla_cpu_experimental_ynn_fusion_type=+reduce"
    monkeypatch.setenv("XLA_FLAGS", mine)
    assert not keep_reductions_out_of_ynnpack()
    assert os.environ["XLA_FLAGS"] == mine


def test_the_switch_leaves_xla_flags_alone(monkeypatch, checked_jaxlib):
    monkeypatch.setenv("XLA_FLAGS", "")
    monkeypatch.setenv(xla_tuning.SWITCH, "off")
    assert not keep_reductions_out_of_ynnpack()
    assert os.environ["XLA_FLAGS"] == ""


@pytest.mark.parametrize("release", [(0, 8, 0), (0, 7, 2), (0, 13, 0), (1, 0), None])
def test_a_jaxlib_not_checked_to_parse_the_flag_gets_none(monkeypatch, release):
    """XLA ends the process on a flag it does not know: 0.8.0 has none, and a release after
    the newest checked may have dropped it."""
    monkeypatch.setattr(xla_tuning, "jaxlib_release", lambda: release)
    monkeypatch.delenv(xla_tuning.SWITCH, raising=False)
    monkeypatch.setenv("XLA_FLAGS", "")
    assert not keep_reductions_out_of_ynnpack()
    assert os.environ["XLA_FLAGS"] == ""


@pytest.mark.parametrize("text, release", [
    ("0.12.0.1", (0, 12, 0, 1)), ("0.11.2", (0, 11, 2)), ("0.13.0rc1", (0, 13, 0)),
    ("0.8.1.dev20251101", (0, 8, 1)), ("absent", None)])
def test_the_jaxlib_release_is_read_from_its_version(monkeypatch, text, release):
    monkeypatch.setattr("pymc_accel.machine.library_versions", lambda names: {"jaxlib": text})
    assert xla_tuning.jaxlib_release() == release
    assert xla_tuning.flag_parsed_by(release) == (release is not None and release < (0, 13))


def test_device_discovery_sets_it_too(monkeypatch, checked_jaxlib):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("XLA_FLAGS", "")
    devices.discover(refresh=True)
    assert YNN_REDUCE_OFF in os.environ["XLA_FLAGS"].split()
    devices.discover(refresh=True)


# A regression's gradient: the sum over each row's covariates and, backwards, over the rows
_ROW_SUMS = """
import json, os, sys
import pymc_accel
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
x = jnp.linspace(-1.0, 1.0, 2000 * 5).reshape(2000, 5)
grad = jax.jit(jax.grad(lambda b, x: jnp.sum(jnp.sum(x * b, axis=1) ** 2)))
b = jnp.array([0.3, -0.2, 0.1, 0.5, -0.4])
program = grad.lower(b, x).compile().as_text()
print(json.dumps({"flags": os.environ.get("XLA_FLAGS", ""), "ynn": "ynn_fusion" in program,
                  "grad": [float(v) for v in grad(b, x)]}))
"""


def _row_sums_in_new_process(**env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", xla_tuning.SWITCH)}
    run = subprocess.run([sys.executable, "-c", _ROW_SUMS], env={**base, "JAX_PLATFORMS": "cpu",
                         **env}, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]  # XLA exits on a flag it does not know
    return json.loads(run.stdout.splitlines()[-1])


def test_a_program_compiled_after_import_keeps_its_reductions_out_of_ynnpack():
    release = xla_tuning.jaxlib_release()
    if not xla_tuning.flag_parsed_by(release):
        pytest.skip(f"jaxlib {release} is not one checked to parse the flag")
    tuned = _row_sums_in_new_process()
    plain = _row_sums_in_new_process(**{xla_tuning.SWITCH: "off"})
    assert YNN_REDUCE_OFF in tuned["flags"].split() and "ynn" not in plain["flags"]
    assert not tuned["ynn"]
    if release >= (0, 10, 2):  # the first release checked to hand reductions to YNNPACK
        assert plain["ynn"]
    # the sums' order may differ, so the last bits may: speed only, not the values
    assert tuned["grad"] == pytest.approx(plain["grad"], rel=1e-12)


def test_pymc_importing_its_jax_module_afterwards_keeps_the_device_count():
    """pymc.sampling.jax, on import, deletes the host device count and whatever follows it up
    to the last space, and puts a count of 100 first: a flag added after pymc-accel's count
    made JAX start with 100 CPU devices, and the flag must not move the count from last."""
    code = ("import os, pymc_accel, pymc.sampling.jax, jax; "
            "from pymc_accel.devices import _host_devices_to_ask; "
            "print(len(jax.devices('cpu')), _host_devices_to_ask(), os.environ['XLA_FLAGS'])")
    for setting in ("on", "off"):
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
        env.update(JAX_PLATFORMS="cpu", **{xla_tuning.SWITCH: setting})
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out[0] == out[1], out
        if setting == "on" and xla_tuning.flag_parsed_by(xla_tuning.jaxlib_release()):
            assert YNN_REDUCE_OFF in out[2:]
