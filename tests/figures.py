"""Machine figures made by hand for tests: a machine whose every rate is a round number, so that
a test of the cost model can say what a figure should be."""

from __future__ import annotations

from dataclasses import replace

from pymc_accel.machine import MachineFigures


def hand_made_machine(**changes) -> MachineFigures:
    """A CPU of 10 GFLOP/s elementwise and 10 GB/s in both precisions, 100 and 50 GFLOP/s of
    matrix products in float32 and float64, and 2.5 µs a call; ``changes`` replace any field."""
    base = MachineFigures({"float32": 1e10, "float64": 1e10}, {"float32": 1e10, "float64": 1e10},
                          {"float32": 1e11, "float64": 5e10}, cpu_call_seconds=2.5e-6)
    return replace(base, **changes)
