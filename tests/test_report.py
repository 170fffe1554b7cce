"""The selection report as people read it: figures in a table, reasons in full under it."""

from __future__ import annotations

import io

from rich.console import Console

from pymc_accel.devices import Devices
from pymc_accel.models import eight_schools
from pymc_accel.registry import build_registry
from pymc_accel.selection import select

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")


def _text(report, width: int) -> str:
    out = io.StringIO()
    Console(width=width, file=out, color_system=None).print(report)
    return out.getvalue()


def test_every_label_and_reason_is_shown_whole_and_numbered():
    """A table column squeezed the labels to 'numpyro[cpu,flo…' (float32 and float64 rows
    alike) and each reason into a column a few words wide; the labels are folded, never cut,
    and the reasons are listed under the table with the rows' numbers."""
    report = select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
                    chains=2)
    for width in (100, 150):
        text = _text(report, width)
        assert "…" not in text
        flat = " ".join(line.strip() for line in text.splitlines())
        for i, row in enumerate(report.rows, 1):
            assert f"{i}. {row.label} ({row.status}):" in flat
    assert "1. " in str(report)


def test_the_gradient_source_column_reads_a_value_with_a_comma():
    """'measured 4%, modelled 96%' left the s/grad is cell empty."""
    from pymc_accel.report import _grad_source

    assert _grad_source("s/grad measured, grads/draw modelled, compile modelled") == "measured"
    assert _grad_source("s/grad measured 4%, modelled 96%, grads/draw observed, compile "
                        "measured") == "measured 4%, modelled 96%"
    assert _grad_source("grads/draw modelled") == ""
