"""Test set-up: JAX on CPU, a private cache directory, shared reference models."""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# JAX's persistent compilation cache, private to this run: the conformance suite's seeded runs
# compile identical programs (the seed is data), which then compile once. Every compile is
# kept, not only those over JAX's default second: the suite's many small jitted calls (a
# sampler's set-up) recompile from test to test, and keeping them took a tenth off the run.
# xdist's workers inherit the directory from the process that made it, which removes it.
_JAX_CACHE_MADE_HERE = None
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    import tempfile

    _JAX_CACHE_MADE_HERE = tempfile.mkdtemp(prefix="pymc-accel-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _JAX_CACHE_MADE_HERE
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")

import pytest  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=UserWarning)


def pytest_unconfigure(config):
    if _JAX_CACHE_MADE_HERE is not None:
        import shutil

        shutil.rmtree(_JAX_CACHE_MADE_HERE, ignore_errors=True)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    os.environ["PYMC_ACCEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("pymc-accel-cache"))
    # one test's runs must not change another's selection through the run history; the tests
    # of the history switch it on themselves
    os.environ["PYMC_ACCEL_HISTORY"] = "off"
    # nor through profiles kept on disk (a reused profile's note says so); the store's tests
    # switch it on themselves
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    # nor through the samplers an earlier test ran in the same worker (xdist hands a worker its
    # files in no fixed order); the tests of first use switch it on themselves
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"


@pytest.fixture(autouse=True)
def _no_kept_float32_checks():
    """Each test starts with no float32 check kept in the process (an earlier test's check of
    the same model would otherwise be read instead of run); the store's tests keep their own."""
    from pymc_accel import check_store

    check_store.forget()


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    """A private, empty run history, switched on (the session's is off)."""
    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PYMC_ACCEL_HISTORY", raising=False)
    return tmp_path


@pytest.fixture
def start_checks(monkeypatch):
    """pymc-accel's own start checks in this test, counted: a list that grows by one per
    :func:`pymc_accel.integration.check_initial_point` call (which still runs)."""
    from pymc_accel import integration

    calls = []
    real = integration.check_initial_point

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(integration, "check_initial_point", counted)
    return calls


@pytest.fixture
def make_plugin(tmp_path, monkeypatch):
    """Install a fake plugin distribution on sys.path: ``make_plugin(name, source)``.

    It gets a ``.dist-info`` with an entry point in group ``pymc_accel``, so discovery goes
    through importlib.metadata exactly as for a pip-installed package.
    """
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name: str, source: str, version: str = "9.9") -> str:
        module = f"fakeplugin_{name}"
        (tmp_path / f"{module}.py").write_text(source)
        info = tmp_path / f"fake_plugin_{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: fake-plugin-{name}\nVersion: {version}\n"
        )
        (info / "entry_points.txt").write_text(f"[pymc_accel]\n{name} = {module}\n")
        return module

    return make


@pytest.fixture
def preimported():
    """Import what an in-process ``pytester`` run of the conformance suite uses, first.

    pytester's in-process runs drop modules first imported inside them; re-importing JAX's or
    numba's native extensions afterwards aborts the process.
    """
    import arviz  # noqa: F401
    import arviz_base  # noqa: F401
    import pymc.backends.arviz  # noqa: F401

    from pymc_accel.registry import build_registry
    from pymc_accel.selection import select
    from pymc_accel.testing import CPU_ONLY, reference_model

    select(reference_model(), registry=build_registry(autoload=False), devices=CPU_ONLY)


@pytest.fixture
def measurement_left_running():
    """A measured-mode measurement left running past its deadline (``measure._abandon``) that
    ends 0.2 s later, appending ``"measurement ended"`` to the list this yields."""
    import threading

    from pymc_accel import measure

    release, order = threading.Event(), []

    def compiling():
        release.wait(10)
        order.append("measurement ended")

    running = measure._start_measuring(compiling)
    measure._abandon({"abandoned": []}, "numba[cpu,float64]", 0.1, running)
    threading.Timer(0.2, release.set).start()
    yield order
    release.set()
    measure.wait_for_background(10)
