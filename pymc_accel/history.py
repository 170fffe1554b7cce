"""Run history: what earlier runs of the same model took on this machine, per candidate.

The cost model's priors cannot know two things a finished run shows: how many leapfrog steps
per draw the sampler needs on this posterior, and what the run pays before its first draw once
the compiled artefacts (PyTensor's numba cache, nutpie's compiled model) already exist. After
every :func:`pymc_accel.sample` run the ledger keeps, per model structure and candidate, the
observed leapfrogs per draw and the wall time; the next selection for the same model structure
uses the leapfrogs, and the wall time's share the estimate puts in fixed costs, in place of the
modelled figures, labelled ``observed``.
A model's first run with a candidate compiles what later runs load from caches, so its fixed
seconds are kept but not used: the observed fixed seconds replace the modelled ones from the
second recorded run on, when they are what a run of the model pays once compiled
(:func:`fixed_seconds_usable`). Leapfrogs per
draw are partly the posterior's (its curvature sets the step size any NUTS adapts to), partly
the adaptation's, so a NUTS candidate that has not run the model takes those the NUTS runs
observed on it, weighed with the modelled figure (:data:`OBSERVED_TREES_WEIGHT`) and scaled by
how much longer its adaptation's trees are modelled to be
(:func:`pymc_accel.costmodel.nuts_trajectory`): without it, one run that observed deeper
trees than modelled made every other NUTS look cheaper than the one that ran. Effective draws
per draw follow the leapfrogs, times what the cost model gives the sampler's adaptation per
gradient against nutpie's (:data:`pymc_accel.costmodel.NUTS_GRADIENT_EFFICIENCY`).

A NUTS run also records its effective draws (:func:`observed_effective_draws`), summed with
the sampler's earlier runs' until they are enough to use (:func:`_pool_effective_draws`). The
cost model gives each adaptation one figure for the effective draws a gradient buys against
nutpie's, and per model the truth strays from it by up to 2x; once two NUTS samplers have run a
model, each is ranked on what it got, placed against the other's
(:func:`_observed_gradient_efficiency`). A
sampler the figure undervalues would never run to show it, so the selection tries a close
call's runner-up once after the leader's run (``selection._runner_up_to_try``).

The cost model's seconds per gradient can be off for a model by more than any of that: on
the demo model NumPyro's two parallel chains took 710 µs to 1.1 ms a leapfrog against 420 µs
modelled, its runs 37-60 s against 25-28 s estimated, and with the history correcting only
trees and fixed seconds it was chosen again after each run. So a run whose estimate puts most
of its time in sampling also corrects the candidate's seconds per gradient by the run's wall
time over its estimate (:func:`observed_gradient_ratio`), and lends the ratio to its twin in
the other precision, and to the candidates of a backend that names the run's as its gradient
kin (``Estimate.gradient_kin``: BlackJAX's NUTS runs NumPyro's gradient) while they have not
run the model themselves; once both have, the newer run of the gradient corrects both
(:func:`_newer_kin_entry`).

A machine's compile speed is not in its calibrated figures, and the fixed seconds it pays
differ from the modelled ones by the same factor for every model a sampler runs: nutpie's
warm fixed cost of eight schools was 1.87-2.01 s on one day's machine and 1.39 s on the
next's, against 2.57 s modelled. So a candidate that has not run the model itself takes its
fixed seconds times its *machine pace*: how much its warm runs of other models on this
machine took against their modelled fixed seconds (:func:`machine_pace`).

A model's first run on a machine also compiles its kernels, which a backend with a compile cache
on disk (PyTensor's numba linker) keeps for later runs: 1 to 29 s on the zoo, more than the rest
of a short run. The cost model charges it (``Estimate.cold_compile_seconds``) until the ledger
shows the model has run here with the backend (:func:`compiled_here`); with the ledger off it is
not known and not charged.

The ledger is a JSON file per machine in :func:`pymc_accel.machine.cache_dir`; set
``PYMC_ACCEL_HISTORY=off`` to neither read nor write it (benchmarks judging first selections do).
Written by hand: no library keeps per-model sampler timings.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pymc_accel.backend import Figure
from pymc_accel.switches import switched_on

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pymc_accel.backend import Candidate, Estimate, SampleRequest
    from pymc_accel.profile import ModelProfile

#: Entries kept per ledger file (the most recent ones).
MAX_ENTRIES = 500
#: How a figure taken from other NUTS samplers' runs is noted.
_SHARED_NOTE = "leapfrogs per draw that"
#: Weight, in logarithms, of the trees NUTS runs observed on a model against the modelled ones,
#: in the leapfrogs per draw of a NUTS sampler that has not run it
#: (:func:`_reference_leapfrogs`). An observation says both how hard the posterior is, which
#: every NUTS shares, and how the sampler that ran adapted to it, which the others do not: on
#: the zoo the modelled ``3.4 d^(1/4)`` is within about 10% of nutpie's leapfrogs everywhere
#: but the funnel (2-5x there), while an adaptation's trees stray 20-25% from its modelled
#: scale per model (``docs/results/fit-trajectories-cpu.jsonl``). Taking the observation
#: whole made nutpie look 1.4x deeper on seed_mid than it is (PyMC's NUTS adapts 1.8x nutpie's
#: trees there); ignoring it, the funnel's deep trees. Halfway, in logarithms.
OBSERVED_TREES_WEIGHT = 0.5
#: Bounds of a machine pace (:func:`machine_pace`): a pace outside them says more about one odd
#: run than about the machine.
PACE_BOUNDS = (0.33, 3.0)
#: Share of a model's first compile left to pay when another candidate of the same backend has
#: compiled it: after PyMC's NUTS had run a model in an empty PyTensor compile directory,
#: nutpie's first run of it took 1.4 s (glm_linear) and 4.0 s (seed_small) more than its
#: second, against 5.3 and 10.9 s cold (docs/results/fit-cold-compile-shared-cpu.jsonl): the
#: drivers' graphs share most fused kernels, not all.
SHARED_COMPILE_LEFT = 0.3
#: How many models' worth of weight the cost model's own fixed seconds keep in a machine pace.
PACE_PRIOR_MODELS = 1
#: Most later runs a first compile is shared with in the ranking
#: (:func:`expected_later_runs`): a run is charged at least ``1 / (1 + cap)`` of it.
LATER_RUNS_CAP = 4
#: Least share of a run's estimate in sampling for its wall time to correct the seconds per
#: gradient (:func:`observed_gradient_ratio`): a run mostly spent compiling says how far off the
#: compile was, not the gradient.
GRADIENT_SHARE = 0.5
#: Weight, in logarithms, of a run's wall time over its estimate in the seconds per gradient
#: it corrects: a run is one draw of the machine's noise, the estimate one of the cost model's
#: error. On the recorded regret runs (docs/results/regret-cpu*.json, runs over 5 s) two warm
#: runs of the same candidate differ by 1.11x at the median and 1.32x at the 90th percentile
#: (213 pairs): a run strays about 0.12 from its candidate's median in logarithms; their median
#: wall over the estimate spans 0.64-2.15 between the 10th and 90th percentiles (232 rows),
#: about 0.47. Weighted as two normal errors: 0.47^2 / (0.47^2 + 0.12^2) = 0.94.
OBSERVED_GRADIENT_WEIGHT = 0.94
#: Elements of each posterior variable whose bulk effective sample size a run's record takes
#: (evenly spaced over the variable, so the same ones for every run of a model): ArviZ's bulk
#: ESS took 0.8 ms an element on the 2-core machine (2 chains x 1000 draws: 12 elements 13 ms,
#: 612 elements 0.57 s, 5,522 elements 4.4 s), too long to add to every run for all of them. A
#: hierarchy's slowest-mixing variables are its scalars (the scales), which are taken whole.
ESS_ELEMENTS_PER_VARIABLE = 16
#: Of the elements taken, those whose bulk ESS ArviZ computes: the ones with the smallest ESS
#: of the mean (:func:`_slowest_series`). Bulk ESS rank-normalises each series first, and it
#: was most of recording a small model's run at pm.sample's defaults (eight schools: 18
#: series, 7-8 ms, where its run takes 0.28 s); the ESS of the mean skips the ranks (about
#: 0.1 ms a series) and, like bulk, splits the chains, so chains that disagree rank slow. On 15
#: models x 2 samplers (NumPyro, nutpie; bench/bench_record_ess.py) the record's figure was the
#: smallest bulk ESS over every element taken in all 30 runs, in 2.9-11 ms where every
#: element's took 3.2-33 ms (docs/benchmarks.md, "The run record's effective draws").
ESS_SCREENED_SERIES = 6
#: Fewest effective draws (the smallest bulk ESS over the elements taken, all chains together,
#: summed over a sampler's runs of the model: :func:`_pool_effective_draws`) for its effective
#: draws a gradient to be used: below it the figure is noise (the funnel's runs got 3 to 49
#: between seeds of the same sampler: docs/results/fit-trajectories-cpu.jsonl).
ESS_RECORD_MINIMUM = 100.0


def enabled() -> bool:
    """Whether the ledger is read and written (``PYMC_ACCEL_HISTORY`` is not ``off``)."""
    return switched_on("PYMC_ACCEL_HISTORY")


def model_key(profile: ModelProfile) -> str:
    """A stable key for the model's structure and sizes: the same model built again (in
    another process, from the same code and data shapes) has the same key."""
    c = profile.census
    text = json.dumps([
        sorted((k, list(v)) for k, v in profile.free_vars.items()), profile.n_observed,
        profile.float_dtype, profile.data_bytes, round(c.flops), round(c.bytes), c.kernels,
        [s.n_steps for s in c.scans],
    ])
    return hashlib.sha1(text.encode()).hexdigest()[:16]


_MACHINE_KEY: str | None = None
# (path, modification time, contents) of the ledger last read: one read per selection, not one
# per candidate
_READ: tuple[Path, int, dict[str, Any]] | None = None


def _path() -> Path:
    from pymc_accel.machine import cache_dir, machine_key

    global _MACHINE_KEY
    if _MACHINE_KEY is None:  # library versions are looked up once per process (2.5 ms each)
        _MACHINE_KEY = machine_key()
    return _ledger(cache_dir(), _MACHINE_KEY)


@functools.lru_cache(maxsize=8)
def _ledger(directory: Path, machine: str) -> Path:
    return directory / f"history-{machine}.json"


def _load() -> dict[str, Any]:
    global _READ
    path = _path()
    try:
        stamp = path.stat().st_mtime_ns
        if _READ is not None and _READ[0] == path and _READ[1] == stamp:
            return _READ[2]
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    data = data if isinstance(data, dict) else {}
    _READ = (path, stamp, data)
    return data


def lookup(profile: ModelProfile, candidate: Candidate) -> dict[str, Any] | None:
    """The latest recorded run of ``candidate`` on this model structure, or ``None``."""
    if not enabled():
        return None
    entry = _load().get(f"{model_key(profile)}|{candidate.label}")
    return entry if isinstance(entry, dict) else None


def _model_entries(profile: ModelProfile):
    """The ledger's entries of this model structure, one a candidate (history on or off)."""
    prefix = f"{model_key(profile)}|"
    for key, entry in _load().items():
        if key.startswith(prefix) and isinstance(entry, dict):
            yield entry


def _sampler_entries(profile: ModelProfile, candidate: Candidate) -> tuple[Any, Any]:
    """The ledger entries of ``candidate`` and of its twin in the other precision
    (:func:`other_precision`) for this model (``None`` where absent)."""
    return lookup(profile, candidate), lookup(profile, other_precision(candidate))


def ran(profile: ModelProfile, candidate: Candidate) -> bool:
    """Whether the sampler of ``candidate`` (in either precision) has a recorded run of this
    model structure, or was tried on it (:func:`mark_tried`); measured mode's timings are not
    runs."""
    return any(isinstance(entry, dict) and ("wall_seconds" in entry or "tried" in entry)
               for entry in _sampler_entries(profile, candidate))


def mark_tried(profile: ModelProfile, candidate: Candidate) -> None:
    """Note that ``candidate`` starts a run of this model as a close call's runner-up, before
    it runs: a run that fails is not tried again (its successful run's record replaces the
    note). Never raises."""
    _mark(profile, candidate, "tried")


def mark_stuck(profile: ModelProfile, candidate: Candidate) -> None:
    """Note that chains of ``candidate``'s run of this model never left their start
    (:mod:`pymc_accel.stuck_chains`), in place of the run's record: its one leapfrog a draw
    would price the sampler as the fastest there is. ``auto`` leaves it out of this model's
    later selections (:func:`stuck_at`). Never raises."""
    _mark(profile, candidate, "stuck")


def stuck_at(profile: ModelProfile, candidate: Candidate) -> str | None:
    """When a run of ``candidate`` (this precision) on this model structure was marked stuck
    (:func:`mark_stuck`), or ``None``."""
    entry = lookup(profile, candidate)
    return entry.get("stuck") if entry is not None else None


def mark_wrong_gradient(profile: ModelProfile, candidate: Candidate) -> None:
    """Note that the gradient ``candidate``'s run of this model computed was not the derivative
    of its log density at the run's last draws (:mod:`pymc_accel.backends.last_gradients`), in
    place of the run's record: ``auto`` leaves it out of this model's later selections
    (:func:`wrong_gradient_at`). Never raises."""
    _mark(profile, candidate, "wrong_gradient")


def wrong_gradient_at(profile: ModelProfile, candidate: Candidate) -> str | None:
    """When a run of ``candidate`` (this precision) on this model structure was marked as
    computing a gradient that was not its log density's (:func:`mark_wrong_gradient`), or
    ``None``."""
    entry = lookup(profile, candidate)
    return entry.get("wrong_gradient") if entry is not None else None


def mark_stopped(profile: ModelProfile, candidate: Candidate) -> None:
    """Note that ``candidate``'s run of this model stopped at an error the log density raised
    where it proposed (:class:`pymc_accel.errors.SamplerStoppedError`): ``auto`` leaves it out
    of this model's later selections (:func:`stopped_at`). Never raises."""
    _mark(profile, candidate, "stopped")


def stopped_at(profile: ModelProfile, candidate: Candidate) -> str | None:
    """When a run of ``candidate`` (this precision) on this model structure stopped
    (:func:`mark_stopped`), or ``None``."""
    entry = lookup(profile, candidate)
    return entry.get("stopped") if entry is not None else None


def _mark(profile: ModelProfile, candidate: Candidate, what: str) -> None:
    """Set ``what`` to the time in ``candidate``'s entry for this model. Never raises."""
    if not enabled():
        return
    try:
        key = f"{model_key(profile)}|{candidate.label}"
        data = dict(_load())
        entry = data.pop(key, None)
        entry = dict(entry) if isinstance(entry, dict) else {"candidate": candidate.label}
        entry[what] = time.strftime("%Y-%m-%d %H:%M:%S")
        data[key] = entry
        _write(data)
    except Exception:  # a read-only cache must not fail a run
        return


def effective_draws_recorded(profile: ModelProfile, candidate: Candidate) -> bool:
    """Whether a run of the sampler of ``candidate`` (in either precision) on this model
    recorded its effective draws (:func:`observed_ess_per_draw`)."""
    return any(_positive(entry, "ess_per_gradient") is not None
               for entry in _sampler_entries(profile, candidate))


def adaptation_effective_draws_recorded(profile: ModelProfile, candidate: Candidate,
                                        estimate: Estimate) -> bool:
    """Whether runs of this model recorded the effective draws that the NUTS adaptation of
    ``candidate`` gets: its own runs or its twin's in the other precision
    (:func:`effective_draws_recorded`), or those of another sampler with the same adaptation
    (the same trajectory scale and modelled efficiency, :func:`_same_adaptation`), which
    :func:`apply` credits it with."""
    if effective_draws_recorded(profile, candidate):
        return True
    modelled = _modelled_gradient_efficiency(estimate)
    return modelled is not None and _same_adaptation(
        profile, estimate.trajectory_scale, modelled) is not None


def other_precision(candidate: Candidate) -> Candidate:
    """The same sampler, device and options at the other precision: its trees, effective draws
    and compile and start-up pace on a model are this candidate's (the precision changes what
    a gradient costs, not the path the sampler takes or the program it compiles), so where this
    candidate has not run a model its twin's run stands for it. Without this a float32
    candidate that had never run looked cheaper than its float64 twin that had (modelled
    figures against a slow machine's observed ones), and was chosen, its accuracy check paid,
    for no speed of its own."""
    twin = "float32" if candidate.precision == "float64" else "float64"
    return replace(candidate, precision=twin)


def _reference_leapfrogs(profile: ModelProfile) -> tuple[float, list[str]] | None:
    """Leapfrogs per draw nutpie's NUTS would take on this model, as the NUTS runs recorded for
    it show them: each run's observed leapfrogs over its adaptation's trajectory scale
    (geometric mean over the runs), moved from the modelled figure by
    :data:`OBSERVED_TREES_WEIGHT` in logarithms; with the candidates those runs were of.
    ``None`` when no NUTS sampler has run the model."""
    from pymc_accel.costmodel import nuts_gradients_per_draw

    observed = _geometric_mean([
        (float(entry["leapfrogs_per_draw"]) / _trajectory_scale(entry), str(entry.get("candidate")))
        for entry in _model_entries(profile) if entry.get("nuts")
        and isinstance(entry.get("leapfrogs_per_draw"), (int, float))
        and entry["leapfrogs_per_draw"] > 0])
    if observed is None:
        return None
    per_draw, seen_by = observed
    modelled = nuts_gradients_per_draw(profile).value
    return per_draw**OBSERVED_TREES_WEIGHT * modelled ** (1 - OBSERVED_TREES_WEIGHT), seen_by


def _same_adaptation_trees(profile: ModelProfile, scale: float) -> tuple[float, list[str]] | None:
    """Leapfrogs per draw that the runs of this model by NUTS samplers with the adaptation of
    trajectory scale ``scale`` observed (geometric mean), with their candidates; ``None``
    without such runs.

    An adaptation's trees follow the posterior and the adaptation, not the sampler that runs
    it: BlackJAX's NUTS and NumPyro's, both Stan's, took 15.0 and 15.1 leapfrogs a draw on
    seed_small (medians of eight seeds), 7.0 each on glm_poisson, and 47-63 against 47-66 on
    the demo model (docs/results/adaptation-ess-cpu-2026-11-29-*.md). Priced from the model's
    reference trees times its scale instead (:func:`_reference_leapfrogs`), BlackJAX was given 9
    leapfrogs a draw on logistic_31, where NumPyro's run took 7, and with them the effective
    draws of deeper trees, which share the fixed seconds over more effective draws: the
    regret bench's run history chose it over NumPyro, at a regret of 1.57. Not on a centred
    hierarchy, where every implementation is given nutpie's trees (a funnel's follow the seed:
    :func:`pymc_accel.costmodel.nuts_trajectory`).
    """
    return _geometric_mean([
        (float(entry["leapfrogs_per_draw"]), str(entry.get("candidate")))
        for entry in _model_entries(profile) if entry.get("nuts")
        and math.isclose(_trajectory_scale(entry), scale, rel_tol=1e-6)
        and _positive(entry, "leapfrogs_per_draw") is not None])


def _modelled_gradient_efficiency(estimate: Estimate) -> float | None:
    """The effective draws per gradient against nutpie's that the cost model gives a NUTS
    sampler's adaptation, before any run of the model observed them; ``None`` for a sampler
    that is not NUTS."""
    if estimate.gradient_efficiency_before_runs is not None:
        return estimate.gradient_efficiency_before_runs
    scale = estimate.trajectory_scale
    if scale is None or scale <= 0:
        return None
    return estimate.relative_efficiency.value / scale


def _positive(entry: dict[str, Any] | None, name: str) -> float | None:
    value = entry.get(name) if isinstance(entry, dict) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _reference_ess_per_gradient(profile: ModelProfile) -> tuple[float, list[str]] | None:
    """Effective draws per gradient nutpie's NUTS would get on this model, as the NUTS runs
    that recorded their effective draws show it: each run's effective draws per gradient over
    what the cost model gives its adaptation against nutpie's (geometric mean over the
    runs); with the candidates those runs were of. ``None`` when no run recorded them.

    With one sampler's runs this gives back that sampler's modelled efficiency; with two or more
    it places each sampler's observed efficiency against the others'.
    """
    return _geometric_mean([(observed / modelled, str(entry.get("candidate")))
                            for entry, observed, modelled in _effective_draw_runs(profile)])


def _effective_draw_runs(profile: ModelProfile):
    """``(entry, effective draws per gradient, the modelled efficiency of its adaptation)`` for
    each candidate whose runs of this model recorded their effective draws."""
    for entry in _model_entries(profile):
        observed = _positive(entry, "ess_per_gradient")
        modelled = _positive(entry, "gradient_efficiency")
        if observed is not None and modelled is not None:
            yield entry, observed, modelled


def _geometric_mean(seen: list[tuple[float, str]]) -> tuple[float, list[str]] | None:
    """The geometric mean of positive figures, with who gave them; ``None`` for none."""
    if not seen:
        return None
    return math.exp(sum(math.log(x) for x, _ in seen) / len(seen)), [c for _, c in seen]


def _same_sampler(entry: dict[str, Any] | None, twin_entry: dict[str, Any] | None,
                  twin_precision: str, name: str) -> tuple[float | None, str]:
    """Figure ``name`` of a sampler's latest run of the model, and of its twin's in the other
    precision (``twin_precision``), the geometric mean where both recorded it; with when it
    was recorded (``""`` for none).

    A sampler's trees and effective draws do not follow the precision, and one run's stray from
    the next's by up to 2x (the demo model's NumPyro took 31 leapfrogs a draw in one float32
    run, 58-63 in others): taking the float32 run's trees and the float64 run's effective draws
    per gradient, its float32 was priced at half the effective draws a draw of its float64 on
    the same model. Pooled, both precisions are priced from the same trees and draws.
    """
    own, other = _positive(entry, name), _positive(twin_entry, name)
    same = "the same sampler: its trees and effective draws do not follow the precision"
    if own is not None and other is not None:
        return math.sqrt(own * other), (
            f"{entry.get('recorded', 'an earlier run')} and "
            f"{twin_entry.get('recorded', 'an earlier run')} in {twin_precision}, their "
            f"geometric mean ({same})")
    if own is not None:
        return own, entry.get("recorded", "an earlier run")
    if other is not None:
        return other, f"{twin_entry.get('recorded', 'an earlier run')} in {twin_precision} ({same})"
    return None, ""


def _observed_gradient_efficiency(
    profile: ModelProfile, entry: dict[str, Any] | None, twin_entry: dict[str, Any] | None,
    twin_precision: str, scale: float, modelled: float,
) -> tuple[float, str] | None:
    """A NUTS sampler's effective draws per gradient against nutpie's on this model, from its
    own recorded runs and its twin's in ``twin_precision`` (the same algorithm:
    :func:`_twins_ess_per_gradient`), else from
    those of another sampler with the same adaptation (``scale``, its trees against nutpie's,
    and ``modelled``, its modelled efficiency: BlackJAX's NUTS and NumPyro's both run Stan's),
    against the reference the model's runs give (:func:`_reference_ess_per_gradient`), with a
    note; ``None`` when none recorded their effective draws.

    The cost model gives every adaptation one figure (``costmodel.NUTS_GRADIENT_EFFICIENCY``),
    and per model the truth strays from it by up to 2x: on the zoo's linear GLM NumPyro's runs
    got 1.5x nutpie's effective draws per draw, against the 1.17x credited, and were the
    fastest by 1.29x where nutpie was chosen (docs/benchmarks.md). Without the sharing, once
    NumPyro's runs of a held-out logistic regression showed its adaptation at 0.65x, BlackJAX,
    which had not run, kept the modelled 0.85x and was chosen over both.
    """
    reference = _reference_ess_per_gradient(profile)
    if reference is None:
        return None
    value, seen_by = reference
    nutpie = (f"nutpie's {value:.4f} effective draws a gradient as {', '.join(seen_by)} "
              "show it")
    own, recorded = _twins_ess_per_gradient(entry, twin_entry, twin_precision)
    if own is not None:
        ratio = own / value
        return ratio, (f"{ratio:.2f}x nutpie's as observed ({recorded}: "
                       f"{own:.4f} a gradient; {nutpie})")
    kin = _same_adaptation(profile, scale, modelled)
    if kin is None:
        return None
    seen, by = kin
    ratio = seen / value
    return ratio, (f"{ratio:.2f}x nutpie's as observed for its adaptation (runs of "
                   f"{', '.join(by)}: {seen:.4f} effective draws a gradient; {nutpie})")


def _twins_ess_per_gradient(entry: dict[str, Any] | None, twin_entry: dict[str, Any] | None,
                            twin_precision: str) -> tuple[float | None, str]:
    """Effective draws per gradient of a sampler's runs of the model in both precisions (the
    same algorithm: :func:`_same_sampler`), their sums pooled (:func:`_pool_effective_draws`):
    ``None`` until together they reach :data:`ESS_RECORD_MINIMUM` effective draws; with when
    they were recorded."""
    own, other = _effective_draw_sums(entry), _effective_draw_sums(twin_entry)
    if own is None and other is None:
        return None, ""
    effective = sum(s[0] for s in (own, other) if s is not None)
    gradients = sum(s[1] for s in (own, other) if s is not None)
    if effective < ESS_RECORD_MINIMUM or gradients <= 0:
        return None, ""
    runs = sum(s[2] for s in (own, other) if s is not None)
    when = [str(e.get("recorded", "an earlier run"))
            + ("" if e is entry else f" in {twin_precision}")
            for e, sums in ((entry, own), (twin_entry, other)) if sums is not None]
    return effective / gradients, (
        f"{runs} run{'s' if runs > 1 else ''}, the latest at {' and '.join(when)}, "
        f"{effective:.0f} effective draws in {gradients:.0f} gradients")


def _same_adaptation(
    profile: ModelProfile, scale: float, modelled: float,
) -> tuple[float, list[str]] | None:
    """Effective draws per gradient that the runs of NUTS samplers with the adaptation
    ``(scale, modelled)`` recorded on this model (geometric mean), with their candidates;
    ``None`` without such runs."""
    return _geometric_mean([
        (observed, str(entry.get("candidate")))
        for entry, observed, efficiency in _effective_draw_runs(profile)
        if math.isclose(efficiency, modelled, rel_tol=1e-6)
        and math.isclose(_trajectory_scale(entry), scale, rel_tol=1e-6)])


def _trajectory_scale(entry: dict[str, Any]) -> float:
    """The NUTS trajectory scale of the candidate that recorded ``entry`` (1.0 in ledgers
    written before scales were recorded)."""
    scale = entry.get("trajectory_scale")
    return float(scale) if isinstance(scale, (int, float)) and scale > 0 else 1.0


def observed_leapfrogs_per_draw(idata: Any) -> float | None:
    """Mean leapfrog steps per kept draw (``sample_stats.n_steps``), or ``None`` when the
    sampler does not report them.

    The statistic is read into NumPy before it is averaged: PyMC's JAX samplers leave their
    sample_stats as JAX arrays, whose ``mean`` JAX compiles first (about 0.1 s, the largest
    part of recording eight schools' run, measured by ``bench/bench_overhead.py``).
    """
    import numpy as np

    stats = getattr(idata, "sample_stats", None)
    if stats is None or "n_steps" not in stats:
        return None
    value = float(np.mean(np.asarray(stats["n_steps"])))
    return value if math.isfinite(value) and value > 0 else None


def observed_ess_per_draw(idata: Any) -> float | None:
    """The smallest bulk effective sample size over the posterior's variables
    (:func:`observed_effective_draws`), per kept draw of all chains. ``None`` when there is no
    posterior, or under :data:`ESS_RECORD_MINIMUM` effective draws (one run's figure is noise
    there: a run's record pools it with the sampler's other runs, :func:`_pool_effective_draws`).
    """
    seen = observed_effective_draws(idata)
    if seen is None or seen[0] < ESS_RECORD_MINIMUM:
        return None
    return seen[0] / seen[1]


def observed_effective_draws(idata: Any) -> tuple[float, int] | None:
    """The smallest bulk effective sample size over the posterior's variables, all chains
    together, and the draws kept (chains x draws): every element of a variable with up to
    :data:`ESS_ELEMENTS_PER_VARIABLE` elements, that many evenly spaced ones of a larger
    variable. ``None`` when there is no posterior or the ESS is not finite.

    ArviZ computes the ESS; only the choice of elements is this function's (a run of a model
    with thousands of parameters would otherwise spend seconds on it): evenly spaced ones of a
    large variable, then the :data:`ESS_SCREENED_SERIES` with the smallest ESS of the mean
    (:func:`_slowest_series`), whose bulk ESS is computed.
    """
    import numpy as np
    # ArviZ's statistics on NumPy arrays, without its plotting (0.6 s to import)
    from arviz_stats.base import array_stats

    posterior = getattr(idata, "posterior", None)
    if posterior is None:
        return None
    dataset = posterior.to_dataset() if hasattr(posterior, "to_dataset") else posterior
    taken = []
    for var in dataset.data_vars.values():
        if var.dims[:2] != ("chain", "draw") or not np.issubdtype(var.dtype, np.floating):
            continue
        elements = math.prod(var.shape[2:])
        picks = (np.linspace(0, elements - 1, ESS_ELEMENTS_PER_VARIABLE).round().astype(int)
                 if elements > ESS_ELEMENTS_PER_VARIABLE else slice(None))
        taken.append(np.concatenate(
            [block.reshape(block.shape[0], block.shape[1], -1)[:, :, picks]
             for block in _chain_blocks(var.data)], axis=0).astype(np.float64, copy=False))
    if not taken:
        return None
    series = _slowest_series(np.concatenate(taken, axis=2), ESS_SCREENED_SERIES)
    chains, draws = series.shape[:2]
    smallest = float(np.nanmin(array_stats.ess(series, chain_axis=0, draw_axis=1,
                                                 method="bulk")))
    if not math.isfinite(smallest) or smallest <= 0:
        return None
    return smallest, chains * draws


def _chain_blocks(data: Any) -> list:
    """A posterior variable's values as NumPy arrays that together cover its chains in order,
    read without copying where they are in host memory, so that the elements a record takes
    are picked before anything is copied.

    PyMC's JAX samplers leave the posterior as JAX arrays, their chains sharded over the XLA
    CPU devices. Turned into one NumPy array, a large deterministic was copied whole: with the
    ordered logistic model's 2,000 x 5 category probabilities (80 MB), recording a run at
    ``pm.sample``'s defaults took 22-110 ms, and takes 7-11 ms reading them in place
    (``bench/time_run_record.py``). Each CPU shard is read in place through DLPack (JAX has
    no way to take a few elements of a sharded array without compiling a gather). An array
    whose shards do not split the chains alone, or that cannot be read in place (on a GPU),
    is copied as before.
    """
    import numpy as np

    if isinstance(data, np.ndarray):
        return [data]
    shards = getattr(data, "addressable_shards", None)
    try:
        if shards:
            shape = tuple(data.shape)
            spans = []
            for shard in shards:
                first, *rest = shard.index
                if any(r != slice(None) and (r.start, r.stop) not in ((None, None), (0, n))
                       for r, n in zip(rest, shape[1:])):
                    raise ValueError("sharded beyond the chain axis")
                start = first.start or 0
                stop = shape[0] if first.stop is None else first.stop
                spans.append((start, stop, shard))
            spans.sort(key=lambda span: span[0])
            if spans[0][:2] == (0, shape[0]):  # replicated: every shard holds all the chains
                return [np.from_dlpack(spans[0][2].data)]
            starts, stops = [s[0] for s in spans], [s[1] for s in spans]
            if starts == [0, *stops[:-1]] and stops[-1] == shape[0]:  # chains split, in order
                return [np.from_dlpack(shard.data) for _, _, shard in spans]
    except Exception:  # a GPU's buffers, a layout not foreseen: copy it whole
        pass
    return [np.asarray(data)]


def _slowest_series(values, keep: int):
    """The ``keep`` series of ``values`` (chains, draws, series) with the smallest ESS of the
    mean, ArviZ's, which screens for the smallest bulk ESS at a fraction of its cost
    (:data:`ESS_SCREENED_SERIES`); all of them when there are no more than ``keep``."""
    import numpy as np
    from arviz_stats.base import array_stats

    if values.shape[2] <= keep:
        return values
    screen = array_stats.ess(values, chain_axis=0, draw_axis=1, method="mean")
    return values[:, :, np.argsort(np.nan_to_num(screen, nan=0.0), kind="stable")[:keep]]


def record(
    profile: ModelProfile, candidate: Candidate, estimate: Estimate | None,
    request: SampleRequest, wall_seconds: float, idata: Any, data: str | None = None,
    options: str | None = None,
) -> None:
    """Keep what a finished run took (never raises: the ledger is advice, not a result).

    Parameters
    ----------
    profile : ModelProfile
    candidate : Candidate
    estimate : Estimate or None
        The selection's estimate for the run; with the observed leapfrogs it splits the wall
        time into gradient work and the rest (compile, start-up, conversion).
    request : SampleRequest
    wall_seconds : float
        Wall time of the backend's ``sample``.
    idata : InferenceData or DataTree
    data : str, optional
        The digest of the model's data values (:func:`pymc_accel.profile.data_digest`), kept
        for a runtime whose compiled program holds the data (``estimate.whole_program_cached``).
    options : str, optional
        :func:`program_options_key` of the run's sampler options, kept with ``data``: they
        are constants of such a program too.
    """
    if not enabled() or estimate is None:
        return
    try:
        per_draw = observed_leapfrogs_per_draw(idata)
        # the run is split by the estimate before earlier runs corrected its seconds per
        # gradient and its fixed seconds, as apply() splits it: split by the corrected
        # figures, a run's slowness that an earlier run had already put in the fixed seconds
        # would leave its gradient ratio too small and compound into its fixed ratio
        seen = estimate if estimate.seconds_per_gradient_before_runs is None else replace(
            estimate, seconds_per_gradient=Figure(estimate.seconds_per_gradient_before_runs))
        if (estimate.fixed_seconds.source == "observed"
                and estimate.modelled_fixed_seconds is not None):
            seen = replace(seen, fixed_seconds=Figure(estimate.modelled_fixed_seconds))
        if per_draw is not None:
            seen = replace(seen, gradients_per_draw=Figure(per_draw, "observed"))
        entry = {
            "candidate": candidate.label, "recorded": time.strftime("%Y-%m-%d %H:%M:%S"),
            "steps": request.steps, "tune": request.tune, "draws": request.draws,
            "chains": request.chains, "data": data, "options": options,
            "wall_seconds": wall_seconds,
            "leapfrogs_per_draw": per_draw,
            "first_use_seconds": estimate.first_use_seconds.value,
            "cold_compile_seconds": estimate.cold_compile_seconds.value,
        }
        if estimate.precompiled_seconds > 0:  # measured mode's compile, which the run used
            entry["precompiled_seconds"] = estimate.precompiled_seconds
        entry["fixed_seconds"] = _observed_fixed_seconds(entry, seen) or 0.0  # for the listing
        modelled = (estimate.modelled_fixed_seconds if estimate.modelled_fixed_seconds is not None
                    else estimate.fixed_seconds.value)
        if modelled > 0 and entry["fixed_seconds"] > 0:  # this machine's pace, for other models
            entry["modelled_fixed_seconds"] = modelled
            entry["fixed_ratio"] = entry["fixed_seconds"] / modelled
            # the start-up pace the modelled figure carries (fixed_ratio_now reads it)
            entry["start_up_pace"] = estimate.start_up_pace
        ratio = observed_gradient_ratio(entry, seen)
        if ratio is not None:  # for the twin in the other precision (_gradient_from_runs)
            entry["gradient_ratio"] = ratio
        efficiency = _modelled_gradient_efficiency(estimate)
        # a NUTS run: its effective draws, where ArviZ's statistics are loaded already (PyMC's
        # convergence checks, on by default, load them; a run without them would pay the
        # import, 0.3-1.6 s on the 2-core machine, for the record)
        effective = None
        if per_draw is not None and efficiency is not None and "arviz_stats" in sys.modules:
            seen = observed_effective_draws(idata)
            if seen is not None:  # pooled with the earlier runs below, under the minimum too
                entry["ess_per_draw"] = seen[0] / seen[1]
                entry["gradient_efficiency"] = efficiency
                effective = (seen[0], seen[1] * per_draw)
        key = f"{model_key(profile)}|{candidate.label}"
        data = dict(_load())
        previous = data.pop(key, None)  # re-inserted last: the oldest entries are dropped first
        # a NUTS sampler: its estimate's leapfrogs were the NUTS model's, or taken from a NUTS run
        entry["nuts"] = estimate.trajectory_scale is not None
        if entry["nuts"]:  # its trees against nutpie's, for sharing them with other NUTS
            entry["trajectory_scale"] = estimate.trajectory_scale
        if estimate.gradient_kin:  # the backend it shares its gradient with (_newer_kin_entry)
            entry["gradient_kin"] = estimate.gradient_kin
        ran_before = isinstance(previous, dict) and "wall_seconds" in previous
        runs = previous.get("runs", 1) if ran_before else 0
        entry["runs"] = (runs if isinstance(runs, int) else 1) + 1
        if isinstance(previous, dict) and isinstance(previous.get("measured"), dict):
            entry["measured"] = previous["measured"]  # measured mode's figures stay
        _pool_effective_draws(entry, previous, effective)
        if entry["data"]:  # a whole compiled program (JAX's), which the cache on disk keeps
            program = {k: entry[k] for k in (*_PROGRAM_FIELDS, "recorded")}
            earlier = _programs(previous) if isinstance(previous, dict) else []
            same = tuple(program[k] for k in _PROGRAM_FIELDS)  # kept once, as the latest
            earlier = [p for p in earlier
                       if p.get("data") and tuple(p.get(k) for k in _PROGRAM_FIELDS) != same]
            entry["programs"] = (earlier + [program])[-PROGRAMS_KEPT:]
        data[key] = entry
        _write(data)
    except Exception:  # a read-only cache or an odd idata must not fail a finished run
        return


def _pool_effective_draws(entry: dict[str, Any], previous: Any,
                          run: tuple[float, float] | None) -> None:
    """Fold this run's effective draws and gradients (``run``: the smallest bulk ESS and the
    leapfrogs of all its chains; ``None`` where it recorded none) into the earlier runs' sums
    (:func:`_effective_draw_sums`), and set ``entry``'s ``ess_per_gradient`` to their ratio
    once the sum reaches :data:`ESS_RECORD_MINIMUM`.

    One seed's effective draws stray up to 1.5x from the next's at these lengths (the regret
    bench's runs), and a close call decided on one run's can go either way (groups_53: NumPyro
    chosen on one run's, 1.26x slower): the runs are pooled. They are summed, not averaged,
    and a run under the minimum counts: when runs under it were dropped, the figure kept was
    the lucky seeds'. On the demo model (500 + 500 draws x 2 chains) σ_γ's bulk ESS ran from 57
    to 111 over six seeds of NumPyro and 20 to 67 of nutpie; NumPyro's record kept its demo
    runs, 121 each on the demo's seed (0.0019 effective draws a gradient, where its six seeds
    together got 0.0015), and nutpie's demo runs (58 each) and BlackJAX's (97) none
    (docs/benchmarks.md, "The demo's choice on this machine's run history"). A sum of runs'
    effective draws is as noisy as one run's of that size, so the minimum applies to the sum.
    """
    sums = _effective_draw_sums(previous) if isinstance(previous, dict) else None
    if sums is not None and "gradient_efficiency" not in entry:
        entry["gradient_efficiency"] = previous.get("gradient_efficiency")
    if run is not None:
        effective, gradients = run
        runs = 1
        if sums is not None:
            effective, gradients, runs = (sums[0] + effective, sums[1] + gradients,
                                          sums[2] + 1)
    elif sums is not None:
        effective, gradients, runs = sums
    else:
        return
    entry["ess_effective_draws"], entry["ess_gradients"] = effective, gradients
    entry["ess_runs"] = runs
    if effective >= ESS_RECORD_MINIMUM and gradients > 0:
        entry["ess_per_gradient"] = effective / gradients


def _effective_draw_sums(entry: dict[str, Any] | None) -> tuple[float, float, int] | None:
    """The effective draws and gradients that a candidate's recorded runs of a model got, summed
    over them, and how many runs: ``None`` for none. A ledger written before the sums were kept
    holds the runs' pooled ``ess_per_gradient`` alone; it stands for ``ess_runs`` runs of the
    latest one's length."""
    if not isinstance(entry, dict):
        return None
    runs = entry.get("ess_runs", 1)
    runs = runs if isinstance(runs, int) and runs > 0 else 1
    effective, gradients = _positive(entry, "ess_effective_draws"), _positive(
        entry, "ess_gradients")
    if effective is not None and gradients is not None:
        return effective, gradients, runs
    per_gradient = _positive(entry, "ess_per_gradient")
    if per_gradient is None:
        return None
    sizes = [_positive(entry, name) for name in ("leapfrogs_per_draw", "draws", "chains")]
    if None in sizes:  # the length unknown: as runs of the fewest effective draws kept
        gradients = runs * ESS_RECORD_MINIMUM / per_gradient
    else:
        gradients = runs * math.prod(sizes)
    return per_gradient * gradients, gradients, runs


def _write(data: dict[str, Any]) -> None:
    """Write the ledger, the oldest entries dropped beyond :data:`MAX_ENTRIES`."""
    while len(data) > MAX_ENTRIES:
        data.pop(next(iter(data)))
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)  # atomic: a concurrent reader sees the old or the new ledger


def record_measured(profile: ModelProfile, candidate: Candidate, estimate: Estimate) -> None:
    """Keep what measured mode timed for this model and candidate, for later selections of the
    model in any process (:func:`apply`): the seconds per gradient, and the fixed seconds of
    a run where it compiled the sampler's own artefact (nutpie's model: the compile and the
    start-up left, what a run that compiles pays). Never raises.

    Parameters
    ----------
    profile : ModelProfile
    candidate : Candidate
    estimate : Estimate
        The candidate's estimate after measuring; figures not labelled ``measured`` are not
        kept.
    """
    if not enabled():
        return
    try:
        measured: dict[str, Any] = {}
        grad = estimate.seconds_per_gradient
        if grad.source == "measured" and grad.value > 0:
            measured["seconds_per_gradient"] = grad.value
            measured["gradient_note"] = grad.note
        fixed = estimate.fixed_seconds
        if fixed.source == "measured" and estimate.precompiled_seconds > 0:
            measured["fixed_seconds"] = fixed.value + estimate.precompiled_seconds
        if not measured:
            return
        measured["recorded"] = time.strftime("%Y-%m-%d %H:%M:%S")
        key = f"{model_key(profile)}|{candidate.label}"
        data = dict(_load())
        previous = data.pop(key, None)
        entry = dict(previous) if isinstance(previous, dict) else {"candidate": candidate.label}
        entry["measured"] = measured
        data[key] = entry
        _write(data)
    except Exception:  # a read-only cache must not fail a selection
        return


def fixed_seconds_usable(entry: dict[str, Any]) -> bool:
    """Whether an entry's fixed seconds are what the next run pays: recorded by a run after the
    model's first with the candidate (the first compiled what later runs load from caches).

    A JAX sampler compiles in every run, so its first run's fixed seconds are in principle
    every run's too. Using them at once was tried (2026-11-25, ``docs/benchmarks.md``, "A JAX
    sampler's first run as its fixed seconds"): on the quick zoo in a slow stretch of the
    machine the second run's choice improved on pk_scan (regret 1.42 to 1.09) and worsened on
    seed_small (1.00 to 1.84) and seed_mid. One run's fixed share strays 30% from the next's,
    and the sampler that ran was priced at the hour's pace while the others kept the cost
    model's; so the rule waits for a second run for every sampler.
    """
    return isinstance(entry.get("runs"), int) and entry["runs"] >= 2


def apply(estimate: Estimate, profile: ModelProfile, candidate: Candidate,
          run: tuple[int, int, int] | None = None,
          data: Callable[[], str] | None = None, options: str | None = None) -> Estimate:
    """``estimate`` with what earlier runs of this model observed, where there were any.

    - A NUTS sampler (``estimate.trajectory_scale`` set) takes its own observed leapfrogs per
      draw, or, if it has not run the model, those of the samplers with its adaptation that
      have (:func:`_same_adaptation_trees`), or else the leapfrogs nutpie's NUTS would take as
      the model's NUTS runs show them (:func:`_reference_leapfrogs`) times its adaptation's scale;
      its effective draws per draw become its leapfrogs over that reference, since NUTS
      implementations get about the same effective draws per gradient
      (:func:`pymc_accel.costmodel.nuts_trajectory`).
    - Any other sampler takes its own observed leapfrogs per draw.
    - A candidate's leapfrogs per draw are those of its latest run and its twin's in the other
      precision (:func:`other_precision`) together: the geometric mean where both ran, either
      where one did (:func:`_same_sampler`); its effective draws per gradient are those of all
      its runs and its twin's, summed (:func:`_twins_ess_per_gradient`). A candidate
      that has not run the model takes its twin's fixed seconds' ratio to the modelled ones.
    - Seconds per gradient that ``measure=True`` timed for the model and candidate
      (:func:`record_measured`), where the estimate's own are modelled.
    - Those seconds per gradient times the model's latest run's wall time over its estimate,
      where the estimate put most of the run in sampling, or else times the ratio its twin's
      run in the other precision recorded (:func:`_gradient_from_runs`).
    - Once the model has run more than once with the candidate, the fixed seconds (compile,
      start-up) of its latest run, which found its compiled artefacts cached.
    - Otherwise the fixed seconds ``measure=True`` timed (nutpie's compile), if it did.
    - Otherwise, once the candidate has run other models on this machine with their compiled
      artefacts cached, the modelled fixed seconds times its pace on them
      (:func:`machine_pace`).
    - The first compile of the model's kernels (``cold_compile_seconds``) is not charged once
      the model has run on this machine with the candidate's backend (:func:`compiled_here`),
      nor with the history off, where it is not known. Where the model has run here with
      other backends, the ranking shares what is left of it with the later runs expected to
      reuse it (:func:`expected_later_runs`). A cache of whole programs
      (``estimate.whole_program_cached``) holds this run's only after a run of the candidate
      with the same ``run``, ``(tune, draws, chains)``, data (``data`` gives the digest of
      this model's, :func:`pymc_accel.profile.data_digest`, asked for only then) and sampler
      options (``options``, :func:`program_options_key`; not compared when ``None``).

    Unchanged without a recorded run.
    """
    entry = lookup(profile, candidate)
    when = entry.get("recorded", "an earlier run") if entry else ""
    twin = other_precision(candidate)
    twin_entry = lookup(profile, twin)
    # the leapfrogs taken, and when they were recorded (the fixed seconds' note keeps ``when``)
    own, ran = _same_sampler(entry, twin_entry, twin.precision, "leapfrogs_per_draw")
    out = estimate
    if estimate.trajectory_scale is not None and enabled():
        reference = _reference_leapfrogs(profile)
        if reference is not None:
            per_draw, seen_by = reference
            adaptation_trees = (None if own is not None or profile.centred_hierarchies
                                else _same_adaptation_trees(profile, estimate.trajectory_scale))
            if own is not None:
                steps = Figure(own, "observed", f"leapfrogs per draw of this model's run at {ran}")
            elif adaptation_trees is not None:
                steps = Figure(adaptation_trees[0], "observed",
                               f"{_SHARED_NOTE} {', '.join(adaptation_trees[1])} observed on this "
                               "model, the same adaptation")
            else:
                scale = estimate.trajectory_scale
                steps = Figure(per_draw * scale, "observed",
                               f"{_SHARED_NOTE} {', '.join(seen_by)} observed on this model, "
                               f"weighed with the modelled, x {scale:g} for this sampler's "
                               "adaptation")
            # effective draws per gradient against nutpie's, as the cost model has them for
            # this sampler's adaptation (costmodel.NUTS_GRADIENT_EFFICIENCY)
            modelled = (estimate.relative_efficiency.value / estimate.trajectory_scale
                        if estimate.trajectory_scale > 0 else 1.0)
            per_gradient, efficiency_note = modelled, f"{modelled:.2f}x nutpie's"
            seen_efficiency = _observed_gradient_efficiency(
                profile, entry, twin_entry, twin.precision, estimate.trajectory_scale, modelled)
            if seen_efficiency is not None:
                per_gradient, efficiency_note = seen_efficiency
            out = replace(out, gradients_per_draw=steps, relative_efficiency=Figure(
                per_gradient * steps.value / per_draw, "observed",
                f"effective draws per gradient {efficiency_note}; nutpie's NUTS "
                f"{per_draw:.1f} leapfrogs per draw on this model"),
                gradient_efficiency_before_runs=modelled)
    elif own is not None:
        out = replace(out, gradients_per_draw=Figure(
            own, "observed", f"leapfrogs per draw of this model's run at {ran}"))
    measured = entry.get("measured") if entry else None
    measured = measured if isinstance(measured, dict) else {}
    grad = measured.get("seconds_per_gradient")
    if (isinstance(grad, (int, float)) and grad > 0
            and out.seconds_per_gradient.source == "modelled"):
        out = replace(out, seconds_per_gradient=Figure(
            float(grad), "measured", f"measure=True at {measured.get('recorded', '?')}: "
            f"{measured.get('gradient_note', '')}"))
    # the estimate a run's wall time is split by, before the run corrects it, at the leapfrogs
    # that run took (a pooled figure is for the next run: _same_sampler)
    split_by = out
    taken = _positive(entry, "leapfrogs_per_draw")
    if taken is not None and taken != out.gradients_per_draw.value:
        split_by = replace(out, gradients_per_draw=Figure(taken, "observed"))
    out = _gradient_from_runs(out, split_by, entry, twin_entry, twin, when,
                              _kin_entry(profile, candidate, estimate.gradient_kin),
                              _newer_kin_entry(profile, candidate, estimate.gradient_kin, entry))
    fixed_measured = measured.get("fixed_seconds")
    if (entry is not None and fixed_seconds_usable(entry)
            and (fixed := _observed_fixed_seconds(entry, split_by)) is not None):
        out = replace(out, fixed_seconds=Figure(
            fixed, "observed",
            f"run at {when}: {entry.get('wall_seconds', 0):.1f} s, its fixed share "
            f"({estimate.fixed_seconds.value:.1f} s modelled); compiled artefacts cached since"),
            modelled_fixed_seconds=estimate.fixed_seconds.value)
    elif (isinstance(fixed_measured, (int, float)) and fixed_measured > 0
          and estimate.fixed_seconds.source == "modelled"):
        out = replace(out, fixed_seconds=Figure(
            float(fixed_measured), "measured",
            f"measure=True at {measured.get('recorded', '?')} compiled it in this time "
            f"({estimate.fixed_seconds.value:.1f} s modelled)"),
            modelled_fixed_seconds=estimate.fixed_seconds.value)
    elif (estimate.fixed_seconds.source == "modelled" and twin_entry is not None
          and fixed_seconds_usable(twin_entry)
          and (twin_ratio := fixed_ratio_now(twin_entry, estimate.start_up_pace)) is not None):
        out = replace(out, fixed_seconds=Figure(
            estimate.fixed_seconds.value * float(twin_ratio), "observed",
            f"{estimate.fixed_seconds.value:.1f} s modelled x {twin_ratio:.2f}, what this "
            f"model's cached run in {twin.precision} at "
            f"{twin_entry.get('recorded', 'an earlier run')} took against its modelled fixed "
            "seconds"),
            modelled_fixed_seconds=estimate.fixed_seconds.value)
    elif (pace := machine_pace(profile, candidate, estimate.start_up_pace)) is not None:
        ratio, models = pace
        out = replace(out, fixed_seconds=Figure(
            estimate.fixed_seconds.value * ratio, "observed",
            f"{estimate.fixed_seconds.value:.1f} s modelled x {ratio:.2f}, this machine's pace: "
            f"what this sampler's cached runs of {models} other model"
            f"{'s' if models > 1 else ''} here took against their modelled fixed seconds"),
            modelled_fixed_seconds=estimate.fixed_seconds.value)
    if out.cold_compile_seconds.value > 0:
        if not enabled():
            out = replace(out, cold_compile_seconds=Figure(
                0.0, "modelled", "not charged: without the run history (PYMC_ACCEL_HISTORY=off) "
                "whether this model's kernels are cached is not known"))
        else:
            out = replace(out, cold_compile_seconds=cold_compile_left(
                out.cold_compile_seconds, profile, candidate,
                run=run if out.whole_program_cached else None,
                whole_program=out.whole_program_cached, data=data, options=options))
            later, why = (expected_later_runs(profile) if out.cold_compile_seconds.value > 0
                          else (0, ""))
            if later:
                out = replace(out, later_runs_sharing_compile=Figure(float(later), "observed",
                                                                      why))
    return out


def _kin_entry(profile: ModelProfile, candidate: Candidate,
               kin: str | None) -> dict[str, Any] | None:
    """The latest recorded run of this model by the backend ``kin`` (``Estimate.gradient_kin``)
    with the candidate's device, precision and options, else in the other precision; ``None``
    without ``kin`` or such a run."""
    if not kin:
        return None
    same = replace(candidate, backend=kin)
    return lookup(profile, same) or lookup(profile, other_precision(same))


def _newer_kin_entry(profile: ModelProfile, candidate: Candidate, kin: str | None,
                     entry: dict[str, Any] | None) -> dict[str, Any] | None:
    """The newest run of this model, in the candidate's device, precision and options, by a
    backend that runs the candidate's gradient (its ``kin``, or one that names the
    candidate's backend its kin: a run records its ``gradient_kin``), recorded after the
    candidate's own latest run ``entry``; ``None`` without one, or without ``entry``."""
    if entry is None:
        return None
    own = str(entry.get("recorded", ""))
    found = [lookup(profile, replace(candidate, backend=kin))] if kin else []
    for other in _model_entries(profile):
        label = str(other.get("candidate", ""))
        backend = label.split("[", 1)[0]
        if (other.get("gradient_kin") == candidate.backend and backend
                and label == replace(candidate, backend=backend).label):
            found.append(other)
    newer = [e for e in found if isinstance(e, dict) and str(e.get("recorded", "")) > own
             and isinstance(e.get("gradient_ratio"), (int, float)) and e["gradient_ratio"] > 0]
    return max(newer, key=lambda e: str(e.get("recorded", "")), default=None)


def _gradient_from_runs(
    estimate: Estimate, split_by: Estimate, entry: dict[str, Any] | None,
    twin_entry: dict[str, Any] | None, twin: Candidate, when: str,
    kin_entry: dict[str, Any] | None = None, newer_kin: dict[str, Any] | None = None,
) -> Estimate:
    """``estimate`` with its seconds per gradient corrected by the model's latest run with the
    candidate (:func:`observed_gradient_ratio` of that run against ``split_by``, the estimate
    at the run's own leapfrogs), or by ``newer_kin``'s, a later run in the same precision of a
    backend that runs the same gradient (:func:`_newer_kin_entry`), or else by its twin's in
    the other precision (the ratio it recorded: a precision changes what a gradient costs, not
    how far the cost model is off for the model's program), or else by ``kin_entry``'s, a run
    of the backend whose gradient this candidate's is (``Estimate.gradient_kin``), weighed with
    :data:`OBSERVED_GRADIENT_WEIGHT`. The candidate's own timing in measured mode is not
    replaced by another's run.

    Without the kin's ratio, on the demo model NumPyro's run (73.8 s, 1.5x its estimate a
    gradient) corrected NumPyro alone, and BlackJAX's NUTS, which had not run it and runs the
    same gradient at the same cost a leapfrog, was chosen at its modelled figure and took
    47 s where nutpie takes 22-27 s (docs/benchmarks.md, 2026-11-29). Once BlackJAX had run
    it in 42 s (its ratio 1.02), NumPyro kept the 1.85 of its one slow run, and was not chosen
    again to correct it: run side by side, the two took 41-43 s each, and NumPyro was the
    faster to the demo's effective draws. A machine's pace moves by the hour (this 2-core
    machine's by 20-50%), so the newest run of the same gradient is the one taken.
"""
    def lent(other: dict[str, Any] | None) -> float | None:
        ratio = other.get("gradient_ratio") if other is not None else None
        return (float(ratio) if estimate.seconds_per_gradient.source != "measured"
                and isinstance(ratio, (int, float)) and ratio > 0 else None)

    if entry is not None and (ratio := lent(newer_kin)) is not None:
        where = (f"this model's run with {newer_kin.get('candidate', '?')} (the same gradient) "
                 f"at {newer_kin.get('recorded', '?')}, after this candidate's at {when}")
    elif entry is not None:
        ratio = observed_gradient_ratio(entry, split_by)
        where = f"this model's run at {when}"
    elif (ratio := lent(twin_entry)) is not None:
        where = f"this model's run in {twin.precision} at {twin_entry.get('recorded', '?')}"
    elif (ratio := lent(kin_entry)) is not None:
        where = (f"this model's run with {kin_entry.get('candidate', '?')} (the same gradient) "
                 f"at {kin_entry.get('recorded', '?')}")
    else:
        return estimate
    if ratio is None:
        return estimate
    before = estimate.seconds_per_gradient
    factor = ratio ** OBSERVED_GRADIENT_WEIGHT
    return replace(estimate, seconds_per_gradient=Figure(
        before.value * factor, "observed",
        f"{before.value * 1e6:.0f} µs {before.source} x {factor:.2f}: {where} took {ratio:.2f}x "
        "its estimate"), seconds_per_gradient_before_runs=before.value)


def cold_compile_left(cold: Figure, profile: ModelProfile, candidate: Candidate,
                      run: tuple[int, int, int] | None = None,
                      whole_program: bool = False,
                      data: Callable[[], str] | None = None,
                      options: str | None = None) -> Figure:
    """What is left of ``cold`` (the candidate's first compile of the model's kernels) as the
    run history knows it: nothing once the model has run here with the candidate,
    :data:`SHARED_COMPILE_LEFT` of it once another candidate of the backend ran it
    (:func:`compiled_here`), all of it otherwise.

    With ``whole_program`` (a cache of whole compiled runs, JAX's: ``cold`` is the run's
    program), nothing only once the candidate ran the model with the same ``run``,
    ``(tune, draws, chains)``, the same data values (``data``: their digest) and the same
    sampler options (``options``), which its program holds; all of it otherwise."""
    if whole_program:
        when = (program_compiled_here(profile, candidate, run, data, options)
                if run is not None and data is not None else None)
        if when is None:
            return cold
        return Figure(0.0, "observed", f"this run (tune {run[0]}, draws {run[1]}, chains "
                      f"{run[2]}, the same data and sampler options) ran here at {when}: its "
                      "compiled program is cached")
    seen = compiled_here(profile, candidate)
    if seen is None:
        return cold
    when = (_load().get(f"{model_key(profile)}|{seen}") or {}).get("recorded", "an earlier run")
    if seen == candidate.label:
        return Figure(0.0, "observed", f"this model ran here at {when}: its kernels are cached")
    return Figure(cold.value * SHARED_COMPILE_LEFT, "observed",
                  f"this model ran here with {seen} at {when}, whose cached kernels this "
                  f"candidate shares but for {SHARED_COMPILE_LEFT:.0%}")


def compiled_here(profile: ModelProfile, candidate: Candidate) -> str | None:
    """The label of a recorded run of this model structure on this machine by the candidate's
    backend, whose disk cache then holds the model's compiled kernels: the candidate's own
    where there is one, else another of the backend's (the numba backend's two drivers compile
    the model with PyTensor's numba linker, which caches kernels per operation, and share most
    of them: :data:`SHARED_COMPILE_LEFT`); ``None`` without such a run."""
    model = model_key(profile)
    data = _load()
    if _compiled(data.get(f"{model}|{candidate.label}")):
        return candidate.label
    prefix = f"{model}|{candidate.backend}["
    for key, entry in data.items():
        if key.startswith(prefix) and _compiled(entry):
            return key.split("|", 1)[1]
    return None


def program_compiled_here(profile: ModelProfile, candidate: Candidate,
                          run: tuple[int, int, int], data: Callable[[], str],
                          options: str | None = None) -> str | None:
    """When one of the candidate's last :data:`PROGRAMS_KEPT` recorded runs of this model had
    ``run``'s tuning steps, draws and chains, the sampler options of key ``options``
    (:func:`program_options_key`; not compared when ``None``) and the data whose digest
    ``data()`` gives, which a cache of whole compiled programs (JAX's: the data and the options
    are constants of the program) then holds: its time, else ``None``. The digest is asked for
    only where the rest matches."""
    entry = lookup(profile, candidate)
    if not (isinstance(entry, dict) and "wall_seconds" in entry):
        return None
    digest = None
    for program in reversed(_programs(entry)):
        if (program.get("tune"), program.get("draws"), program.get("chains")) != tuple(run):
            continue
        if options is not None and program.get("options") != options:
            continue
        if not program.get("data"):
            continue
        digest = data() if digest is None else digest
        if program["data"] == digest:
            return str(program.get("recorded", "an earlier run"))
    return None


#: How many of a candidate's distinct compiled programs of a model (runs with other lengths,
#: data or sampler options) the run history keeps for :func:`program_compiled_here`: JAX's
#: cache on disk holds them all (up to its size limit), so a user going back to an earlier
#: setting loads its program.
PROGRAMS_KEPT = 8

_PROGRAM_FIELDS = ("tune", "draws", "chains", "data", "options")


def _programs(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The programs an entry's runs compiled, oldest first; an entry recorded before the list
    was kept stands for its own run's."""
    kept = entry.get("programs")
    if isinstance(kept, list):
        return [p for p in kept if isinstance(p, dict)]
    return [{k: entry.get(k) for k in (*_PROGRAM_FIELDS, "recorded")}]


def program_options_key(target_accept: float, options: Mapping[str, Any] | None = None,
                        var_names: Sequence[str] | None = None) -> str:
    """A key of a run's sampler options, as a JAX sampler's compiled program holds them.

    NumPyro's NUTS compiles the target acceptance and its keyword arguments (``dense_mass``,
    ``max_tree_depth``, ...) into the program as constants, and the variables kept into the
    transform of the draws, so a run with other values compiles anew (on the 2-core machine,
    eight schools at 200 + 200 draws took 3.1-4.2 s at ``target_accept=0.95`` after runs of
    0.9-1.0 s at the default: ``bench/bench_program_options.py``).
    The random seed and the initial values are arguments of the program, not constants.

    Parameters
    ----------
    target_accept : float
    options : mapping, optional
        The sampler's keyword arguments (``nuts={...}`` and ``pymc_accel.sample``'s extra
        ones).
    var_names : sequence of str, optional

    Returns
    -------
    str
        Sixteen hexadecimal digits; equal options give equal keys in any process.
    """
    text = json.dumps({"target_accept": float(target_accept),
                       "options": {str(k): _option_text(v)
                                   for k, v in sorted((options or {}).items())},
                       "var_names": list(var_names) if var_names else None}, sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _option_text(value: Any) -> str:
    """An option's value as text for :func:`program_options_key`: an array by its dtype, shape
    and bytes (NumPy's ``repr`` elides the middle of a large one, an inverse mass matrix say)."""
    import numpy as np

    if hasattr(value, "__array__"):  # NumPy's arrays and JAX's
        array = np.asarray(value)
        digest = hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=8).hexdigest()
        return f"array {array.dtype} {array.shape} {digest}"
    return repr(value)


def _compiled(entry: Any) -> bool:
    """Whether a ledger entry stands for a compile of its model: a run, or measured mode's
    timings; not a runner-up's trial that did not finish (:func:`mark_tried`)."""
    return isinstance(entry, dict) and ("wall_seconds" in entry or "measured" in entry)


def models_run_here(profile: ModelProfile, backend: str) -> int:
    """How many models other than ``profile``'s the run history holds for ``backend`` (a run or
    measured mode's timings of any of its candidates) on this machine: each compiled its kernels
    into the backend's disk cache, which a new model's first compile then partly finds there
    (:func:`pymc_accel.costmodel.cold_compile_seconds`). 0 with the history off."""
    if not enabled():
        return 0
    own = model_key(profile)
    models = {key.split("|", 1)[0] for key, entry in _load().items()
              if _compiled(entry) and "|" in key
              and key.split("|", 1)[1].startswith(f"{backend}[")}
    models.discard(own)
    return len(models)


def model_runs_here(profile: ModelProfile) -> int:
    """How many runs of ``profile``'s model structure the run history holds on this machine,
    with any candidate (each ledger entry counts its candidate's runs); 0 with the history
    off."""
    if not enabled():
        return 0
    return sum(entry["runs"] for entry in _model_entries(profile)
               if isinstance(entry.get("runs"), int) and entry["runs"] > 0)


def expected_later_runs(profile: ModelProfile) -> tuple[int, str]:
    """How many later runs of this model are expected to share a compile that this run would
    leave in a disk cache, and why: as many as the model has already run here
    (:func:`model_runs_here`), at most :data:`LATER_RUNS_CAP`.

    A compile kept on disk (PyTensor's numba kernels) is paid by the model's first run with
    the backend and saved by every later one, so charging it whole to one run prices it as if
    the model would never run again. On the demo model that kept the selector off nutpie for
    good: 15.5 s of first use and first compile made it the slowest first run, though its runs
    with the kernels cached take 15 s against 28-39 s for the samplers chosen instead
    (docs/benchmarks.md). How often a model will run again is not known; the runs so far are
    the evidence. Taking the number of later runs to be the number so far is the
    scale-free (Lindy, or Gott's delta-t) guess: a model that has run once is as likely as not
    to run once more; a new model (no runs) is charged its whole compile, as before.
    Written by hand: no library models reuse of a compile cache.

    Returns
    -------
    (int, str)
        The later runs expected (0 for a model that has not run here) and a note for the
        report.
    """
    runs = model_runs_here(profile)
    later = min(runs, LATER_RUNS_CAP)
    if later == 0:
        return 0, ""
    return later, (f"the model has run here {runs} time{'s' if runs != 1 else ''}, so "
                   f"{later} later run{' is' if later == 1 else 's are'} expected to load "
                   "the rest from the cache")


def fixed_ratio_now(entry: dict[str, Any], start_up_pace: float = 1.0) -> float | None:
    """A recorded run's observed fixed seconds over the modelled ones, set against modelled
    figures at ``start_up_pace`` (:func:`pymc_accel.costmodel.start_up_pace`): the entry's
    ratio was taken against figures at the pace it records (1.0 where it records none: a run
    before the selection paced them), so the ratio times that pace over this one. ``None``
    where the entry has no usable ratio."""
    ratio = entry.get("fixed_ratio")
    if not isinstance(ratio, (int, float)) or ratio <= 0:
        return None
    then = entry.get("start_up_pace", 1.0)
    then = float(then) if isinstance(then, (int, float)) and then > 0 else 1.0
    return float(ratio) * then / (start_up_pace if start_up_pace > 0 else 1.0)


def machine_pace(profile: ModelProfile, candidate: Candidate,
                 start_up_pace: float = 1.0) -> tuple[float, int] | None:
    """How fast this machine pays ``candidate``'s fixed costs against the cost model, from its
    recorded runs of *other* models: the geometric mean over those models of their latest
    cached run's observed fixed seconds over the modelled ones, shrunk towards 1 as if
    :data:`PACE_PRIOR_MODELS` more models had run at the modelled pace, within
    :data:`PACE_BOUNDS`.

    The fixed costs are compile and start-up work (PyTensor's rewrites, numba and LLVM, XLA),
    which the machine calibration does not time; a machine that compiles one model fast
    compiles the others fast. Only runs after a model's first with the candidate count (the
    first compiled what the later ones load from caches), and only the candidate's own runs, or
    its twin's in the other precision (:func:`other_precision`): each runtime compiles
    differently.

    The ratios are set against modelled figures at ``start_up_pace``, the pace the selection
    put on the estimate (:func:`fixed_ratio_now`).

    Returns
    -------
    (float, int) or None
        The pace and the number of models it was taken from; ``None`` without such runs or
        with the history off.
    """
    if not enabled():
        return None
    own = f"{model_key(profile)}|"
    twin = other_precision(candidate).label
    by_model: dict[str, dict[str, float]] = {}
    for key, entry in _load().items():
        if (isinstance(entry, dict) and not key.startswith(own)
                and entry.get("candidate") in (candidate.label, twin)
                and fixed_seconds_usable(entry)
                and (ratio := fixed_ratio_now(entry, start_up_pace)) is not None):
            by_model.setdefault(key.split("|", 1)[0], {})[entry["candidate"]] = ratio
    # a model's run with the candidate itself, else with its twin in the other precision
    # (:func:`other_precision`): one ratio a model
    ratios = [seen.get(candidate.label, seen.get(twin)) for seen in by_model.values()]
    if not ratios:
        return None
    # the cost model's own figure (pace 1) counts as PACE_PRIOR_MODELS models' worth: one model's
    # fixed seconds stray from the model by as much as a machine does (on the zoo 1.2x to 1.5x
    # per model either way after the pace, against 1.45x for nutpie's bias on one machine)
    weight = len(ratios) / (len(ratios) + PACE_PRIOR_MODELS)
    pace = math.exp(weight * sum(math.log(r) for r in ratios) / len(ratios))
    return min(PACE_BOUNDS[1], max(PACE_BOUNDS[0], pace)), len(ratios)


def _observed_fixed_seconds(entry: dict[str, Any], estimate: Estimate) -> float | None:
    """The fixed seconds a recorded run shows: its wall time's share that the estimate (with the
    observed leapfrogs) puts in fixed costs. A run's time beyond or short of its estimate is
    shared between fixed and gradient work in proportion to their estimated seconds, since
    either may be what was off: taking all of it as fixed cost, as this did before, turned the
    demo's nutpie run in a slow hour of the machine (23.6 s against 10.6 s estimated) into
    17.5 s of start-up against 4.2 s modelled, and the next selection chose a sampler 1.5x
    slower. The gradient seconds stay modelled, as for the candidates that have not run. A run
    that was its sampler's first in its process also paid the first use it was charged
    (``first_use_seconds``, :mod:`pymc_accel.first_use`), and a model's first run on the machine
    the first compile of its kernels it was charged (``cold_compile_seconds``): each takes its
    share the same way and is not a fixed cost of later runs.
    A compile that measured mode paid before the run and the run used again
    (``precompiled_seconds``, :mod:`pymc_accel.backends.nutpie_compiled`) is a fixed cost of
    runs without it: it counts in the wall time and in the estimate's fixed seconds.
    Entries without the run's length give their recorded fixed seconds."""
    split = _run_split(entry, estimate)
    if split is None:
        fixed = entry.get("fixed_seconds")
        return float(fixed) if isinstance(fixed, (int, float)) and fixed >= 0 else None
    wall, fixed, total, _ = split
    return wall * fixed / total


def _run_split(
    entry: dict[str, Any], estimate: Estimate,
) -> tuple[float, float, float, float] | None:
    """A recorded run's wall time (with the compile measured mode paid for it) and what
    ``estimate`` puts in it at the run's length: fixed seconds, the total, and sampling.
    The total includes the first use and first compile the run was charged. ``None`` for an
    entry without the run's length, or an estimate of nothing."""
    wall, steps, chains = (entry.get(k) for k in ("wall_seconds", "steps", "chains"))
    if not all(isinstance(v, (int, float)) and v > 0 for v in (wall, steps, chains)):
        return None
    pre = entry.get("precompiled_seconds")
    wall = float(wall) + (float(pre) if isinstance(pre, (int, float)) and pre > 0 else 0.0)
    modelled_fixed = estimate.fixed_seconds.value + estimate.precompiled_seconds
    once = 0.0  # first use in the process, first compile on the machine: not paid again
    for key in ("first_use_seconds", "cold_compile_seconds"):
        value = entry.get(key)
        once += float(value) if isinstance(value, (int, float)) and value > 0 else 0.0
    sampling = estimate.sampling_seconds(int(steps), int(chains))
    total = modelled_fixed + once + sampling
    return (wall, modelled_fixed, total, sampling) if total > 0 else None


def observed_gradient_ratio(entry: dict[str, Any], estimate: Estimate) -> float | None:
    """A recorded run's wall time over what ``estimate`` (with the run's observed leapfrogs)
    gives it, where the estimate puts at least :data:`GRADIENT_SHARE` of it in sampling;
    ``None`` otherwise. Split as :func:`_observed_fixed_seconds` splits it, in proportion to the
    estimated seconds, the sampling's share of the run is this ratio times its estimate: the
    ratio by which the run's seconds per gradient (the driver's step included) differed from
    the estimate's."""
    split = _run_split(entry, estimate)
    if split is None:
        return None
    wall, _, total, sampling = split
    return wall / total if sampling >= GRADIENT_SHARE * total else None


def entries() -> list[dict[str, Any]]:
    """Every recorded run on this machine, oldest first, each with its ``model`` key."""
    return [{"model": key.split("|", 1)[0], **value} for key, value in _load().items()
            if isinstance(value, dict)]


def clear() -> Path | None:
    """Forget every recorded run on this machine; returns the ledger removed, if there was one."""
    path = _path()
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


def ledger_path() -> Path:
    """Where this machine's run history is kept."""
    return _path()
