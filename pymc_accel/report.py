"""SelectionReport: what was chosen, what every alternative was estimated to cost, and why."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from pymc_accel.backend import Candidate, Estimate

ATTRS_KEY = "pymc_accel_selection"


@dataclass
class Row:
    """One line of the report: a candidate (with its estimate) or a refusal."""

    label: str
    backend: str
    device: str | None
    precision: str | None
    status: str  # "chosen", "accepted", "refused"
    reason: str
    total_seconds: float | None = None
    seconds_per_gradient: float | None = None
    gradients_per_draw: float | None = None
    fixed_seconds: float | None = None
    sources: str = ""
    origin: str = ""
    memory_bytes: float | None = None  # peak device memory of a backend's memory plan
    memory: str = ""  # that plan: what the memory holds, and the chain layout
    relative_efficiency: float | None = None  # effective draws per draw against nutpie's NUTS
    first_use_seconds: float | None = None  # start-up its runtimes pay once in this process
    cold_compile_seconds: float | None = None  # compiling the model's kernels the first time
    # estimated time per effective draw against the chosen candidate's: what the ranking sorts
    # by (a candidate fast to finish but poor per draw, as MALA, ranks far behind)
    cost_per_effective_draw: float | None = None


@dataclass
class SelectionReport:
    """The result of a selection; prints as a table, converts to dict/JSON.

    Attributes
    ----------
    chosen : str
        Label of the chosen candidate (``backend[device,precision,...]``).
    chosen_by : str
        ``"cost model"``, ``"user"`` or ``"plugin <name>"``.
    rows : list of Row
        Every candidate and refusal, best estimate first.
    profile, devices, request : dict
        What the choice was based on.
    broken_plugins : list of dict
        Plugins that failed, with their errors.
    selection_seconds : float
        Time spent profiling and selecting (measurement and the float32 check included).
    precision_check : dict or None
        The float32 accuracy check (:class:`pymc_accel.precision.PrecisionCheck` as data), when
        one ran: float32 was the fastest candidate of a float64 model, or was forced.
    measurement : dict or None
        With ``measure=True``: the budget, the time spent, which candidates were measured and
        why the others were not.
    notes : list of str
        What happened after selection (e.g. a float32 run that diverged and was re-run), and
        the Scans the chosen backend runs as parallel prefixes.
    process : str
        Which samplers' runtimes this Python process had already run, whose first use
        (:mod:`pymc_accel.first_use`) the estimates therefore leave out.
    """

    chosen: str
    chosen_by: str
    rows: list[Row]
    profile: dict[str, Any]
    devices: str
    machine: str
    request: dict[str, Any]
    broken_plugins: list[dict[str, str]] = field(default_factory=list)
    selection_seconds: float = 0.0
    precision_check: dict[str, Any] | None = None
    measurement: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    process: str = ""
    candidate: Candidate | None = field(default=None, repr=False, compare=False)
    estimate: Estimate | None = field(default=None, repr=False, compare=False)
    model_profile: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (what is stored with sampling results)."""
        hidden = {"candidate": self.candidate, "estimate": self.estimate,
                  "model_profile": self.model_profile}
        self.candidate = self.estimate = self.model_profile = None
        try:
            d = asdict(self)
        finally:
            self.candidate, self.estimate = hidden["candidate"], hidden["estimate"]
            self.model_profile = hidden["model_profile"]
        for key in hidden:
            d.pop(key)
        if self.candidate is not None:  # what ran, for from_dict to give back
            c = self.candidate
            d["chosen_candidate"] = {"backend": c.backend, "device": c.device,
                                     "precision": c.precision,
                                     "options": [[k, v] for k, v in c.options]}
        return d

    def to_json(self) -> str:
        """JSON form."""
        return json.dumps(self.to_dict(), default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SelectionReport:
        """Rebuild a report from :meth:`to_dict`'s output."""
        data = dict(data)
        data["rows"] = [Row(**r) for r in data["rows"]]
        chosen = data.pop("chosen_candidate", None)
        if isinstance(chosen, dict):
            data["candidate"] = Candidate(
                chosen["backend"], chosen["device"], chosen["precision"],
                tuple((k, v) for k, v in chosen.get("options", ())))
        return cls(**data)

    @classmethod
    def from_idata(cls, idata) -> SelectionReport:
        """The report stored with a result by :func:`pymc_accel.sample`.

        Raises
        ------
        KeyError
            If the result was not produced by pymc-accel.
        """
        try:
            stored = idata.attrs[ATTRS_KEY]
        except KeyError:
            raise KeyError(
                f"this result holds no pymc-accel selection report (attrs[{ATTRS_KEY!r}]): it "
                "was not made by pymc_accel.sample, or by pm.sample under pymc_accel.enable() "
                "with a pymc-accel backend") from None
        return cls.from_dict(json.loads(stored))

    def table(self):
        """The candidates' figures as a ``rich.table.Table``, one numbered row per candidate
        (the reasons are in :meth:`reasons`, under the same numbers)."""
        from rich.markup import escape
        from rich.table import Table

        table = Table(
            title=escape(f"Selection: {self.chosen} (by {self.chosen_by})"), title_justify="left",
            caption="time/ESS: estimated time per effective draw against the chosen one's (the "
                    "ranking; a float32 row that would gain too little over the same sampler in "
                    "float64 ranks just behind it, as its reason says); est. total: the run's "
                    "predicted wall time",
            caption_justify="left",
        )
        # a narrow terminal folds the cells rather than cutting them: a cut label hid float32
        # from float64 ("numpyro[cpu,flo…") and a cut figure its unit; a column no candidate
        # has a figure for (memory, on a CPU) is left out
        right = {"justify": "right", "overflow": "fold"}
        columns = [
            ("#", {"justify": "right", "no_wrap": True}, lambda i, r: str(i)),
            ("candidate", {"overflow": "fold"}, lambda i, r: escape(r.label)),
            ("status", {"overflow": "fold"}, lambda i, r: r.status),
            ("time/ESS", right, lambda i, r: (f"{r.cost_per_effective_draw:.2f}x"
                                              if r.cost_per_effective_draw else "")),
            ("est. total", right, lambda i, r: _fmt_s(r.total_seconds)),
            ("s/grad", right, lambda i, r: _fmt_s(r.seconds_per_gradient)),
            ("grads/draw", right,
             lambda i, r: f"{r.gradients_per_draw:.0f}" if r.gradients_per_draw else ""),
            ("ESS/draw", right,
             lambda i, r: f"{r.relative_efficiency:.2f}x" if r.relative_efficiency else ""),
            ("compile", right,
             lambda i, r: _fmt_s(r.fixed_seconds) + (f" +{_fmt_s(r.cold_compile_seconds)} cold"
                                                     if r.cold_compile_seconds else "")),
            ("1st use", right,
             lambda i, r: _fmt_s(r.first_use_seconds) if r.first_use_seconds else ""),
            ("memory", right, lambda i, r: _fmt_bytes(r.memory_bytes)),
            ("s/grad is", {"overflow": "fold"}, lambda i, r: _grad_source(r.sources)),
        ]
        cells = [[cell(i, r) for _, _, cell in columns] for i, r in enumerate(self.rows, 1)]
        keep = [j for j, (name, _, _) in enumerate(columns)
                if name in ("#", "candidate", "status") or any(row[j] for row in cells)]
        for j in keep:
            table.add_column(columns[j][0], **columns[j][1])
        for r, row in zip(self.rows, cells, strict=True):
            table.add_row(*(row[j] for j in keep), style=_STATUS_STYLE.get(r.status, ""))
        return table

    def reasons(self):
        """Why each candidate was chosen, accepted or refused, numbered as in :meth:`table`,
        as a ``rich`` grid: full-width text, which a table column would squeeze."""
        from rich.markup import escape
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right")
        grid.add_column(overflow="fold")
        # a reason given already is referred to by its number: a model JAX must not
        # differentiate refused eleven candidates with one 400-character reason, eleven times
        first: dict[tuple[str, str], int] = {}
        for i, r in enumerate(self.rows, 1):
            said = first.setdefault((r.status, r.reason), i)
            reason = escape(r.reason) if said == i else f"as {said}."
            grid.add_row(f"{i}.", f"{escape(r.label)} ({r.status}): {reason}",
                         style=_STATUS_STYLE.get(r.status, ""))
        return grid

    def __rich_console__(self, console, options):
        from rich.markup import escape
        from rich.table import Table
        from rich.text import Text

        facts = Table.grid(padding=(0, 2))
        facts.add_row("model", escape(", ".join(f"{k}: {v}" for k, v in self.profile.items())))
        facts.add_row("devices", self.devices)
        facts.add_row("machine figures", self.machine)
        facts.add_row("request", ", ".join(f"{k}={v}" for k, v in self.request.items()))
        facts.add_row("selection took", f"{self.selection_seconds:.2f} s")
        if self.process:
            facts.add_row("this process", escape(self.process))
        chosen = next((r for r in self.rows if r.status == "chosen"), None)
        if chosen is not None and chosen.memory:
            facts.add_row("device memory", escape(chosen.memory))
        if self.precision_check:
            facts.add_row("float32 check", escape(_precision_line(self.precision_check)))
        if self.measurement:
            m = self.measurement
            facts.add_row(
                "measured mode",
                f"{len(m['measured'])} measured, {len(m['not_measured'])} modelled; measuring "
                f"took {m['spent_seconds']:.2f} s, selection before it "
                f"{m.get('spent_before_seconds', 0.0):.2f} s, of a {m['budget_seconds']:g} s "
                "budget" + (f" (overran by {m['overran_seconds']:.2f} s)"
                            if m.get("overran_seconds") else "")
                + "".join(f"; {a['candidate']} still measuring at the budget's end, left to "
                          "finish in the background" for a in m.get("abandoned", ())),
            )
        for note in self.notes:
            facts.add_row("[yellow]note[/yellow]", escape(note))
        for b in self.broken_plugins:
            facts.add_row("[red]broken plugin[/red]", escape(f"{b['name']} ({b['origin']}): {b['error']}"))
        yield facts
        yield self.table()
        yield Text("Why:")
        yield self.reasons()

    def __str__(self) -> str:
        from rich.console import Console

        console = Console(width=150, record=True, file=_NullFile(), color_system=None)
        console.print(self)
        return console.export_text()

    def _repr_pretty_(self, p, cycle):  # IPython
        p.text(str(self))


_STATUS_STYLE = {"chosen": "bold green", "accepted": "", "refused": "dim"}


class _NullFile:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def _grad_source(sources: str) -> str:
    """The ``s/grad`` part of a row's sources (``"s/grad measured, grads/draw modelled, ..."``);
    its value may itself hold a comma (``"measured 4%, modelled 96%"``)."""
    found = re.search(r"(?:^|, )s/grad (.*?)(?=, grads/draw |, compile |$)", sources)
    return found.group(1) if found else ""


def _precision_line(check: dict[str, Any]) -> str:
    from pymc_accel.precision import PrecisionCheck

    return PrecisionCheck(**check).summary()


def _fmt_bytes(nbytes: float | None) -> str:
    if nbytes is None:
        return ""
    from pymc_accel.memory import gib

    return gib(nbytes)


def _fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.1f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f} ms" if seconds >= 1e-2 else f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} µs"
