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


def test_a_reason_several_candidates_share_is_written_once_and_referred_to_by_number():
    """A censored model refused every JAX candidate with one 400-character reason, printed
    eleven times over; each reason is written in full once, and a later row sharing it refers
    to the first row's number."""
    from pymc_accel.report import Row, SelectionReport

    why = "the log density has censored variables (y): JAX differentiates the branch not taken"
    rows = [Row("a[cpu]", "a", "cpu", "float64", "chosen", "lowest estimated time"),
            Row("b[cpu,float64]", "b", "cpu", "float64", "refused", why),
            Row("b[cpu,float32]", "b", "cpu", "float32", "refused", why),
            Row("c[cpu]", "c", "cpu", "float64", "refused", "not installed"),
            Row("d[cpu]", "d", "cpu", "float64", "refused", why)]
    report = SelectionReport(chosen="a[cpu]", chosen_by="cost model", rows=rows, profile={},
                             devices="2 CPU cores", machine="test", request={})
    flat = " ".join(line.strip() for line in _text(report, 150).splitlines())
    assert flat.count(why) == 1
    assert f"2. b[cpu,float64] (refused): {why}" in flat
    assert "3. b[cpu,float32] (refused): as 2." in flat
    assert "4. c[cpu] (refused): not installed" in flat
    assert "5. d[cpu] (refused): as 2." in flat
