from __future__ import annotations

import subprocess
import sys

import pytest

from pymc_accel.cli import main

MODEL_FILE = '''
import numpy as np
import pymc as pm
with pm.Model() as my_model:
    mu = pm.Normal("mu", 0, 1)
    pm.Normal("y", mu, 1, observed=np.zeros(5))
'''


def test_backends_lists_builtins_and_the_plugin_with_origin(capsys):
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    for text in ("numba", "numpyro", "blackjax_nuts", "pymc-accel-blackjax"):
        assert text in out


def test_backends_lists_a_blocked_plugin_as_blocked(capsys, monkeypatch):
    """A blocked plugin vanished from the listing, with nothing to say why."""
    from pymc_accel import registry

    monkeypatch.setenv("PYMC_ACCEL_BLOCK_PLUGINS", "blackjax_nuts")
    monkeypatch.setattr(registry, "_REGISTRY", None)
    try:
        assert main(["backends"]) == 0
        out = capsys.readouterr().out
    finally:
        monkeypatch.delenv("PYMC_ACCEL_BLOCK_PLUGINS")
        registry.get_registry(refresh=True)
    row = next(line for line in out.splitlines() if "blackjax_nuts" in line)
    assert "blocked" in row


def test_explain_a_model_file(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(MODEL_FILE)
    assert main(["explain", f"{path}:my_model", "--chains", "2"]) == 0
    out = capsys.readouterr().out
    assert "chosen" in out and "free dimension: 1" in out
    assert main(["explain", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"chosen"' in out
    # chains left out: pm.sample's default, as pymc_accel.explain reads it (the CLI said 4)
    import json

    import pymc_accel
    from pymc_accel.cli import load_model

    expected = pymc_accel.explain(load_model(str(path))).request["chains"]
    assert json.loads(out)["request"]["chains"] == expected
    # a file with no model says how to give one
    (tmp_path / "none.py").write_text("x = 1\n")
    with pytest.raises(SystemExit, match="defines no pm.Model at module level.*none.py:NAME"):
        load_model(str(tmp_path / "none.py"))


def test_cli_error_is_a_message_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(MODEL_FILE)
    assert main(["explain", str(path), "--device", "gpu"]) == 2
    assert "no GPU" in capsys.readouterr().out
    # calibrate names the extra to install, as sample and explain do
    assert main(["calibrate", "--device", "gpu"]) == 2
    assert "pip install 'pymc-accel[gpu]'" in capsys.readouterr().out.replace("\n", "")


def test_demo_runs_end_to_end_at_small_size():
    out = subprocess.run(
        [sys.executable, "-m", "pymc_accel.cli", "demo", "--rows", "400", "--groups", "20",
         "--covariates", "3", "--draws", "150", "--tune", "150"],  # with progress bars
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Selection:" in out.stdout and "Fixed-effect recovery" in out.stdout
    # a NumPyro run's gradient check is shown; other samplers' runs have none
    text = " ".join(out.stdout.split())  # as rich wrapped it at the console's width
    on_numpyro = "sampled with numpyro" in text
    assert on_numpyro == ("last draws: the derivative of its log density" in text)


def test_history_lists_and_forgets_recorded_runs(tmp_path, monkeypatch, capsys):
    import numpy as np
    import xarray as xr

    from pymc_accel import history
    from pymc_accel.backend import Candidate, Estimate, Figure, SampleRequest
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "on")
    monkeypatch.setattr(history, "_MACHINE_KEY", None)
    assert main(["history"]) == 0
    assert "no runs recorded yet" in capsys.readouterr().out
    result = type("R", (), {"sample_stats": xr.Dataset(
        {"n_steps": (("chain", "draw"), np.full((2, 10), 7.0))})})()
    history.record(profile_model(eight_schools()), Candidate("numba", "cpu", "float64"),
                   Estimate(Figure(1e-5), Figure(9.0), Figure(1.0)),
                   SampleRequest(draws=10, tune=10, chains=2), 1.5, result)
    assert main(["history"]) == 0
    out = capsys.readouterr().out
    assert "numba[cpu,float64]" in out and "7.0" in out and "1.5 s" in out
    # what measure=True timed is listed too, for a candidate that has not run the model
    history.record_measured(profile_model(eight_schools()), Candidate("numpyro", "cpu", "float64"),
                            Estimate(Figure(2.5e-5, "measured"), Figure(9.0), Figure(1.0)))
    assert main(["history"]) == 0
    out = capsys.readouterr().out
    assert "numpyro[cpu,float64]" in out and "25.0 µs/grad" in out
    # a NUTS run's effective draws per draw (recorded where ArviZ's statistics are loaded, as
    # PyMC's convergence checks load them), and a runner-up's trial that did not finish
    import arviz_stats  # noqa: F401

    from tests.test_history import _Run

    nutpie = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    history.record(profile_model(eight_schools()), nutpie,
                   Estimate(Figure(1e-5), Figure(9.0), Figure(1.0), trajectory_scale=1.0),
                   SampleRequest(draws=1000, tune=10, chains=2), 1.5, _Run(6.0, 0.0))
    history.mark_tried(profile_model(eight_schools()), Candidate("deer_mala", "cpu", "float64"))
    assert main(["history"]) == 0
    out = capsys.readouterr().out
    ess = history.lookup(profile_model(eight_schools()), nutpie)["ess_per_draw"]
    assert f"(ESS {ess:.2f})" in out and "0 (tried)" in out
    assert main(["history", "--clear"]) == 0
    assert "forgot" in capsys.readouterr().out and not list(tmp_path.glob("history-*.json"))
    assert main(["history", "--clear"]) == 0
    assert "no run history to forget" in capsys.readouterr().out


def test_explain_names_a_missing_file_and_the_models_a_file_defines(tmp_path):
    """A missing file gave a FileNotFoundError traceback; a missing NAME did not say what the
    file defines."""
    from pymc_accel.cli import load_model

    with pytest.raises(SystemExit, match="no model file 'nowhere.py'"):
        load_model("nowhere.py")
    path = tmp_path / "models.py"
    path.write_text("import pymc as pm\n\ndef build():\n    with pm.Model() as m:\n"
                    "        pm.Normal('x')\n    return m\n\nfitted = build()\n")
    with pytest.raises(SystemExit, match="defines no 'nope'; it defines build, fitted"):
        load_model(f"{path}:nope")
    # the file's own errors in one line, not a traceback through runpy
    (tmp_path / "raises.py").write_text("raise ValueError('bad data path')\n")
    with pytest.raises(SystemExit, match="raises.py raised ValueError: bad data path"):
        load_model(str(tmp_path / "raises.py"))
    (tmp_path / "needs.py").write_text("def build(n):\n    pass\n")
    with pytest.raises(SystemExit, match=r"calling .*needs.py:build\(\) raised TypeError"):
        load_model(f"{tmp_path / 'needs.py'}:build")


@pytest.mark.parametrize("bad", [["--draws", "-1"], ["--chains", "0"], ["--tune", "x"]])
def test_explain_refuses_bad_numbers_in_one_line(tmp_path, capsys, bad):
    """--draws -1 printed the selector's ValueError with a traceback."""
    path = tmp_path / "m.py"
    path.write_text(MODEL_FILE)
    with pytest.raises(SystemExit) as exit_:
        main(["explain", str(path), *bad])
    assert exit_.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_history_lists_a_ledger_with_fields_of_the_wrong_type(tmp_path, monkeypatch, capsys):
    """"wall_seconds": "3.0" (a hand-edited file) crashed the listing on its format code."""
    from pymc_accel import history

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "on")
    monkeypatch.setattr(history, "_MACHINE_KEY", None)
    monkeypatch.setattr(history, "entries", lambda: [
        {"model": "m", "candidate": "numba[cpu,float64]", "runs": 2, "wall_seconds": "3.0",
         "fixed_seconds": None, "leapfrogs_per_draw": "x", "steps": 10, "chains": 2}])
    assert main(["history"]) == 0
    assert "'3.0'" in capsys.readouterr().out
