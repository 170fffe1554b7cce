"""The docs build without broken references, and a plugin written only from the plugin guide
installs, is discovered, passes the conformance suite and is chosen by ``auto``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "plugins.md"
FENCE = re.compile(r"^```\w*\n# file: (?P<name>\S+)\n(?P<body>.*?)^```", re.M | re.S)


def guide_files() -> dict[str, str]:
    """The files of the guide's complete plugin: code blocks whose first line is ``# file:``."""
    return {m["name"]: m["body"] for m in FENCE.finditer(GUIDE.read_text())}


def test_docs_build_strict(tmp_path):
    """MkDocs in strict mode: a broken link, anchor or nav entry fails."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(tmp_path / "site")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "plugins" / "index.html").exists()


def test_the_guide_has_a_complete_plugin_under_60_lines():
    files = guide_files()
    assert set(files) == {"pyproject.toml", "pymc_accel_pymc_c.py", "test_pymc_c.py"}
    assert len(files["pymc_accel_pymc_c.py"].splitlines()) < 60
    assert "[project.entry-points.pymc_accel]" in files["pyproject.toml"]


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """The guide's plugin written to a fresh directory and pip-installed (offline) into a
    directory of its own that is put on sys.path, so the shared environment is untouched."""
    source, target = tmp_path / "plugin", tmp_path / "site"
    source.mkdir()
    for name, body in guide_files().items():
        (source / name).write_text(body)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(source)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    monkeypatch.syspath_prepend(str(target))
    return source


def test_a_plugin_written_from_the_guide_works(installed_plugin, preimported, pytester,
                                                monkeypatch):
    import pymc_accel
    from pymc_accel.registry import build_registry
    from pymc_accel.testing import process_registry, reference_model

    # discovered through its entry point, with its distribution and version
    registry = build_registry()
    assert registry.origins["pymc_c"] == "pymc-accel-pymc-c 0.1.0"
    assert not [b for b in registry.broken if b.name == "pymc_c"]

    # passes the conformance suite, run exactly as the guide says
    pytester.makepyfile(test_pymc_c=(installed_plugin / "test_pymc_c.py").read_text())
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=14, skipped=2)  # no GPU candidate; samples discrete models

    # chosen by auto when its estimate is the best, and not when it is not
    backend = registry.backends["pymc_c"]
    cls = type(backend)
    real = cls.estimate

    def fast(self, candidate, profile, machine):
        from dataclasses import replace

        est = real(self, candidate, profile, machine)
        return replace(est, seconds_per_gradient=pymc_accel.Figure(1e-9, "modelled"),
                       fixed_seconds=pymc_accel.Figure(1e-3, "modelled"))

    model = reference_model()
    with process_registry(registry):
        assert not pymc_accel.explain(model).chosen.startswith("pymc_c[")
        monkeypatch.setattr(cls, "estimate", fast)
        idata = pymc_accel.sample(100, tune=100, chains=2, model=model, random_seed=1,
                                  progressbar=False, quiet=True, compute_convergence_checks=False)
    assert idata.attrs["pymc_accel_candidate"] == "pymc_c[cpu,float64]"
    report = pymc_accel.SelectionReport.from_idata(idata)
    assert report.chosen_by == "cost model"
    assert [r for r in report.rows if r.status == "chosen"][0].origin == "pymc-accel-pymc-c 0.1.0"
