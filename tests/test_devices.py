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


def _jax_cpu_devices_in_fresh_process(code: str, xla_flags: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.split()


def test_jax_cpu_devices_reads_the_flag_before_jax_starts_and_jax_after():
    code = ("import sys; from pymc_accel.devices import jax_cpu_devices; "
            "before = jax_cpu_devices(); started = 'jax' in sys.modules; "
            "import jax; imported = jax_cpu_devices(); jax.devices(); "
            "print(before, started, imported, jax_cpu_devices())")
    flags = "--xla_force_host_platform_device_count=3"
    assert _jax_cpu_devices_in_fresh_process(code, flags) == ["3", "False", "3", "3"]


def test_jax_started_before_pymc_accel_has_one_cpu_device():
    """JAX reads XLA's host device count when it starts: started first, it has one CPU
    device whatever pymc-accel asks for afterwards, and its chains run one after another."""
    code = ("import jax; jax.devices(); from pymc_accel.devices import discover, "
            "jax_cpu_devices; discover(refresh=True); print(jax_cpu_devices())")
    assert _jax_cpu_devices_in_fresh_process(code, None) == ["1"]
    code = ("from pymc_accel.devices import jax_cpu_devices, cpu_cores; "
            "print(jax_cpu_devices() >= cpu_cores())")  # JAX not started: discovery's count
    assert _jax_cpu_devices_in_fresh_process(code, None) == ["True"]


def test_a_module_registered_lazily_counts_as_installed_without_being_imported():
    """ArviZ's NumPyro converter registers jax and numpyro with lazy_loader; asking
    importlib.util.find_spec about such a module imports it (0.8 s for JAX in the demo's
    selection, whatever the run then chose). Neither discovery nor the backends' install checks
    may do that, nor counting JAX's CPU devices for an estimate."""
    code = ("import sys, arviz; assert type(sys.modules['jax']).__name__ == '_LazyModule'; "
            "from pymc_accel.devices import discover, module_installed, jax_cpu_devices; "
            "from pymc_accel.backends._common import missing_module; "
            "d = discover(); jax_cpu_devices(); "
            "print(d.jax_installed, module_installed('numpyro'), missing_module('jax', 'numpyro'), "
            "'jax.numpy' in sys.modules, 'numpyro.infer' in sys.modules)")
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "None", "False", "False"]


def test_module_installed_answers_for_modules_not_imported_yet():
    assert devices.module_installed("json")
    assert not devices.module_installed("no_such_module_pymc_accel_test")


def test_jax_cpu_devices_reads_the_count_xla_takes_after_pymc_put_its_own_first():
    """pymc.sampling.jax puts a count of 100 first in XLA_FLAGS on import; XLA takes the last
    count, pymc-accel's, and so must the estimate made before JAX starts."""
    code = ("import pymc_accel, pymc.sampling.jax; from pymc_accel.devices import "
            "jax_cpu_devices; before = jax_cpu_devices(); import jax; "
            "print(before, len(jax.devices('cpu')))")
    before, started = _jax_cpu_devices_in_fresh_process(code, None)
    assert before == started
