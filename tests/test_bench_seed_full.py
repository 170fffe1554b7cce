"""bench/bench_seed_full.py end to end at a small size on the CPU (the lead runs it at full size
on a GPU)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "bench_seed_full.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_seed_full", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bad_sizes_are_refused_with_the_flag_to_fix():
    bench = _load()
    with pytest.raises(SystemExit):
        bench.parse(["--groups", "10", "--rows", "5"])
    assert bench.parse([]).rows == 1_000_000  # the blog's size by default


@pytest.mark.slow
def test_small_seed_model_runs_end_to_end(tmp_path, capsys):
    bench = _load()
    out = tmp_path / "seed.json"
    results = bench.main(["--rows", "3000", "--groups", "150", "--covariates", "3",
                          "--tune", "100", "--draws", "100", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "chosen:" in printed and "blog: 272 s" in printed
    assert json.loads(out.read_text())["run"]["candidate"] == results["run"]["candidate"]
    assert results["free_dimension"] == 2 + 2 * 3 + 150 * 4
    assert results["selection"]["device"] == "cpu"  # no GPU in the test run
    assert not results["blog"]["comparable"]
    run = results["run"]
    assert run["min_bulk_ess"] > 0 and run["ess_per_second"] > 0
    assert run["beta_correlation"] > 0.8  # the fixed effects are recovered
