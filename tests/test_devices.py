"""Device discovery: GPUs through JAX, without starting JAX where it cannot have one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pymc_accel import devices


def _discover_in_fresh_process(env: dict) -> tuple[bool, str, str]:
    code = ("import sys; from pymc_accel.devices import discover; d = discover(); "
            "print('jax' in sys.modules); print(d.note); print(d.summary())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return out[0] == "True", out[1], out[2]


def test_jax_platforms_without_an_accelerator_is_answered_without_starting_jax():
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    imported, note, summary = _discover_in_fresh_process(env)
    assert not imported
    assert note == "JAX_PLATFORMS=cpu" and "no GPU (JAX_PLATFORMS=cpu)" in summary


def test_no_gpu_plugin_is_answered_without_starting_jax():
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    probe = subprocess.run(
        [sys.executable, "-c", "from pymc_accel.devices import _no_accelerator_reason as r; print(r())"],
        env=env, capture_output=True, text=True, check=True).stdout.strip()
    if not probe:
        pytest.skip("a JAX accelerator plugin is installed here: JAX itself is asked")
    imported, note, _ = _discover_in_fresh_process(env)
    assert not imported and note == "no JAX GPU plugin installed"


def test_an_installed_gpu_plugin_means_asking_jax(monkeypatch):
    class Dist:
        def __init__(self, name):
            self.metadata = {"Name": name}

    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    monkeypatch.setattr("importlib.metadata.distributions",
                        lambda: [Dist("numpy"), Dist("jax-cuda12-plugin")])
    assert devices._no_accelerator_reason() == ""
    monkeypatch.setattr("importlib.metadata.distributions", lambda: [Dist("numpy"), Dist("jax")])
    assert devices._no_accelerator_reason() == "no JAX GPU plugin installed"
    monkeypatch.setenv("JAX_PLATFORMS", "cuda,cpu")  # asked for by name: JAX answers
    assert devices._no_accelerator_reason() == ""


def test_discovery_still_asks_xla_for_a_cpu_device_per_core(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("XLA_FLAGS", "")
    devices.discover(refresh=True)
    assert "xla_force_host_platform_device_count" in os.environ["XLA_FLAGS"]
    devices.discover(refresh=True)


def test_a_module_registered_lazily_counts_as_installed_without_being_imported():
    """ArviZ's NumPyro converter registers jax and numpyro with lazy_loader; asking
    importlib.util.find_spec about such a module imports it (0.8 s for JAX in the demo's
    selection, whatever the run then chose). Neither discovery nor the backends' install checks
    may do that."""
    code = ("import sys, arviz; assert type(sys.modules['jax']).__name__ == '_LazyModule'; "
            "from pymc_accel.devices import discover, module_installed; "
            "from pymc_accel.backends._common import missing_module; "
            "d = discover(); "
            "print(d.jax_installed, module_installed('numpyro'), missing_module('jax', 'numpyro'), "
            "'jax.numpy' in sys.modules, 'numpyro.infer' in sys.modules)")
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "None", "False", "False"]


def test_module_installed_answers_for_modules_not_imported_yet():
    assert devices.module_installed("json")
    assert not devices.module_installed("no_such_module_pymc_accel_test")
