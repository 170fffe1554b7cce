"""bench/bench_scan.py: arguments, and one tiny configuration end to end (no NUTS)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_scan  # noqa: E402


def test_arguments_and_their_errors():
    quick = bench_scan._parse(["--quick"])
    assert quick.steps == [10, 100, 1000] and quick.budget == 1200.0 and quick.chains == 2
    assert bench_scan._parse(["--device", "gpu"]).budget == 170.0  # gpu_session.sh's limit
    with pytest.raises(SystemExit):
        bench_scan._parse(["--steps", "4"])


def test_tiny_run_writes_the_table_and_json(tmp_path, capsys):
    import jax

    out = tmp_path / "scan.json"
    x64 = jax.config.jax_enable_x64
    try:
        result = bench_scan.main(["--subjects", "2", "--steps", "16", "--no-ess", "--quick",
                                  "--out", str(out)])
    finally:  # the bench turns float64 on for the process
        jax.config.update("jax_enable_x64", x64)
    (row,) = result["rows"]
    assert row["subjects"] == 2 and row["steps"] == 16 and row["max_rel_diff"] < 1e-9
    assert row["sequential"]["grad_s"] > 0 and row["parallel"]["ess_skipped"] == "--no-ess"
    assert json.loads(out.read_text())["machine"]["device"] == "cpu"
    assert "| 2 | 16 |" in capsys.readouterr().out
