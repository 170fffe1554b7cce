"""When pymc-accel's JAX backends run affine Scans as parallel prefixes, and how.

The rewrite (:mod:`pymc_accel.rewrites.affine_scan`) pays off where a sequential scan is bound by
per-step kernel launches: on a GPU, a scan of ``T`` steps launches its step's kernels ``T`` times
one after another, while the parallel prefix launches a few per each of ``log2 T`` rounds. On a
CPU the sequential loop is cheap per step and the prefix does more work (a matrix product per
pair instead of a matrix-vector product), so it loses there (``docs/results/scan-cpu.md``).

Policy, set by the environment variable ``PYMC_ACCEL_PARALLEL_SCANS``:

``auto`` (default)
    rewrite affine scans of at least :data:`~pymc_accel.rewrites.affine_scan.MIN_STEPS` steps
    when the backend runs on a GPU; leave them sequential on a CPU.
``on``
    rewrite them on every device.
``off``
    never rewrite.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import TYPE_CHECKING, Any

from pymc_accel.rewrites.affine_scan import MIN_STEPS, RewrittenScan, parallel_scan_output

if TYPE_CHECKING:
    import pymc as pm

    from pymc_accel.census import ScanSummary
    from pymc_accel.profile import ModelProfile

ENV_VAR = "PYMC_ACCEL_PARALLEL_SCANS"
MODES = ("auto", "on", "off")
# an empty value (``PYMC_ACCEL_PARALLEL_SCANS=``, a variable cleared in a shell) is the default
_ALIASES = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off",
            "": "auto"}


def parallel_scans_mode(mode: str | None = None) -> str:
    """The rewrite policy: ``mode`` when given, else ``$PYMC_ACCEL_PARALLEL_SCANS``, else auto.

    Parameters
    ----------
    mode : {"auto", "on", "off"}, optional

    Returns
    -------
    str
        One of :data:`MODES`.

    Raises
    ------
    ValueError
        For any other value, naming the accepted ones.
    """
    source = "mode" if mode is not None else ENV_VAR
    raw = mode if mode is not None else os.environ.get(ENV_VAR, "auto")
    value = str(raw).strip().lower()
    value = _ALIASES.get(value, value)
    if value not in MODES:
        raise ValueError(
            f"{source}={raw!r} is not a parallel-scan policy: use 'auto' (parallel prefixes on "
            "a GPU only), 'on' (every device) or 'off' (never)"
        )
    return value


def pays_off(scan: ScanSummary, device: str, mode: str | None = None) -> bool:
    """Whether a profiled scan would be rewritten for a backend running on ``device``.

    Parameters
    ----------
    scan : ScanSummary
        From the profile's census.
    device : {"cpu", "gpu"}
    mode : {"auto", "on", "off"}, optional
        Defaults to :func:`parallel_scans_mode`.

    Returns
    -------
    bool
    """
    mode = parallel_scans_mode(mode)
    if mode == "off" or not scan.affine or scan.gradient:
        return False
    if scan.n_steps is None or scan.n_steps < MIN_STEPS:
        return False
    return mode == "on" or device == "gpu"


def planned_rewrites(profile: ModelProfile, device: str, mode: str | None = None) -> list[ScanSummary]:
    """The profile's scans a JAX backend on ``device`` would run as parallel prefixes."""
    return [s for s in profile.census.scans if pays_off(s, device, mode)]


def describe_plan(profile: ModelProfile, device: str, mode: str | None = None) -> str | None:
    """One line for the selection report: the scans rewritten for ``device``, or why an affine
    scan was not; ``None`` when the model has no affine scan."""
    affine = [s for s in profile.census.scans if s.affine and not s.gradient]
    if not affine:
        return None
    planned = planned_rewrites(profile, device, mode)
    if planned:
        parts = [
            f"{s.describe()} -> parallel prefix of depth {max(1, math.ceil(math.log2(s.n_steps)))}"
            for s in planned
        ]
        return (f"parallel scans ({device}): " + "; ".join(parts)
                + f" (set {ENV_VAR}=off to keep them sequential)")
    mode = parallel_scans_mode(mode)
    why = (f"{ENV_VAR}=off" if mode == "off"
           else "sequential is faster on a CPU" if device != "gpu"
           else f"shorter than {MIN_STEPS} steps or of unknown length")
    return f"affine scans kept sequential on {device} ({why})"


def with_parallel_scans(profile: ModelProfile, device: str, mode: str | None = None) -> ModelProfile:
    """The profile a JAX backend on ``device`` actually runs: each rewritten scan's ``T``
    sequential steps (and its reverse scan in the gradient) become ``log2 T`` rounds of a few
    batched kernels, doing about twice the work. Unchanged when nothing is rewritten.

    Parameters
    ----------
    profile : ModelProfile
    device : {"cpu", "gpu"}
    mode : {"auto", "on", "off"}, optional

    Returns
    -------
    ModelProfile
    """
    planned = planned_rewrites(profile, device, mode)
    if not planned:
        return profile
    c = profile.census
    removed = sum(s.n_steps * s.inner_kernels for s in planned)
    if _reverse_scans_go(profile, planned):
        removed += sum((s.n_steps or 1) * s.inner_kernels for s in c.scans if s.gradient)
    added = sum(2 * 6 * max(1, math.ceil(math.log2(s.n_steps))) for s in planned)
    extra_flops = sum(s.n_steps * s.inner_flops for s in planned)
    census = dataclasses.replace(
        c,
        kernels=max(1, c.kernels - removed + added),
        flops=c.flops + extra_flops,
        flops_by_category={**c.flops_by_category, "scan": c.flops_by_category["scan"] + extra_flops},
    )
    return dataclasses.replace(profile, census=census)


def sequential_scan_steps(profile: ModelProfile, device: str, mode: str | None = None) -> int:
    """Steps of one gradient's scans that a JAX backend on ``device`` runs one after another:
    every scan's, less those rewritten as parallel prefixes (:func:`planned_rewrites`) and,
    when every forward scan is, their reverse scans too. A reverse scan whose length the graph
    does not fix is taken as long as the longest forward scan (it runs a forward scan's steps
    backwards); another scan of unknown length counts one step."""
    planned = planned_rewrites(profile, device, mode)
    reverse_go = _reverse_scans_go(profile, planned)
    rewritten = {id(s) for s in planned}
    longest = max((s.n_steps or 1 for s in profile.census.scans if not s.gradient), default=1)
    return sum(s.n_steps or (longest if s.gradient else 1) for s in profile.census.scans
               if id(s) not in rewritten and not (s.gradient and reverse_go))


def _reverse_scans_go(profile: ModelProfile, planned: list[ScanSummary]) -> bool:
    """Whether the gradient's reverse scans go with the rewrite: when every forward scan is
    rewritten, JAX differentiates the parallel prefixes instead."""
    forward = [s for s in profile.census.scans if not s.gradient]
    return bool(planned) and len(planned) == len(forward)


def _has_scan(model: pm.Model) -> bool:
    from pytensor.graph.traversal import applys_between, graph_inputs

    outputs = [*model.basic_RVs, *model.deterministics, *model.potentials]
    return any(
        type(node.op).__name__ == "Scan"
        for node in applys_between(list(graph_inputs(outputs)), outputs)
    )


def rewrite_model(
    model: pm.Model, device: str, mode: str | None = None
) -> tuple[pm.Model, list[RewrittenScan]]:
    """A copy of ``model`` whose affine Scans are parallel prefixes, where that pays off.

    The copy (PyMC's ``fgraph_from_model`` / ``model_from_fgraph``) has the same variables,
    names, coords, dims and data; only the Scans of its graphs differ. The log density and its
    gradient equal the original's to float tolerance.

    Parameters
    ----------
    model : pm.Model
    device : {"cpu", "gpu"}
        Where the backend runs: in ``auto`` mode only a GPU gets the rewrite.
    mode : {"auto", "on", "off"}, optional
        Defaults to ``$PYMC_ACCEL_PARALLEL_SCANS`` (``auto``).

    Returns
    -------
    (pm.Model, list of RewrittenScan)
        ``model`` itself and ``[]`` when nothing was rewritten.
    """
    if device not in ("cpu", "gpu"):
        raise ValueError(f"device must be 'cpu' or 'gpu', not {device!r}")
    mode = parallel_scans_mode(mode)
    if mode == "off" or (mode == "auto" and device != "gpu") or not _has_scan(model):
        return model, []
    try:
        return _rewritten_copy(model)
    except Exception as exc:  # a model PyMC cannot copy, or a graph the rewrite trips on
        import warnings

        warnings.warn(
            f"pymc-accel could not run this model's affine scans as parallel prefixes "
            f"({type(exc).__name__}: {exc}); they run sequentially. Set {ENV_VAR}=off to skip "
            "the attempt.",
            RuntimeWarning,
            stacklevel=3,
        )
        return model, []


def _rewritten_copy(model: pm.Model) -> tuple[pm.Model, list[RewrittenScan]]:
    from pymc.model.fgraph import fgraph_from_model, model_from_fgraph

    fgraph, _ = fgraph_from_model(model, inlined_views=True)
    replacements: list[tuple[Any, Any]] = []
    done: list[RewrittenScan] = []
    for node in fgraph.toposort():
        if type(node.op).__name__ != "Scan":
            continue
        found = parallel_scan_output(node, MIN_STEPS)
        if found is not None:
            replacements.append((node.outputs[0], found[0]))
            done.append(found[1])
    if not replacements:
        return model, []
    fgraph.replace_all(replacements, import_missing=True, reason="pymc_accel_parallel_scans")
    return model_from_fgraph(fgraph, mutate_fgraph=True), done
