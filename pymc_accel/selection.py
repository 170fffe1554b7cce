"""Selection: gather candidates from every backend, estimate, rank, choose, explain.

The selector never imports JAX or samples; it asks backends (through the registry), the model
profile and the machine's figures.
"""

from __future__ import annotations

import functools
import math
import os
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pymc_accel import check_store, first_use, history, memory_maps, profile_store
from pymc_accel import measure as _measure
from pymc_accel.arguments import REQUIRED, refusal_reason, takes_argument
from pymc_accel.backend import Candidate, Estimate, Refusal, SampleRequest, ask_backend
from pymc_accel.costmodel import at_start_up_pace, guard_seconds
from pymc_accel.devices import Devices, discover, host_devices_fix, jax_cpu_devices
from pymc_accel.errors import (
    BackendUnavailableError,
    DeviceUnavailableError,
    DiscreteVariablesError,
    NoCandidateError,
    PrecisionWarning,
    UnsupportedArgumentError,
)
from pymc_accel.jax_support import (
    nan_gradient_reason,
    no_derivative_reason,
    still_without_jax,
)
from pymc_accel.jax_support import refusal_reason as jax_refusal_reason
from pymc_accel.machine import MachineFigures, machine_figures
from pymc_accel.measure import DEFAULT_BUDGET_SECONDS, measure_candidates
from pymc_accel.precision import PrecisionCheck, check_float32
from pymc_accel.profile import (
    LogpGraph,
    ModelProfile,
    data_digest,
    model_float_dtype,
    profile_and_logp,
    structure_key,
)
from pymc_accel.registry import BLOCK_ENV, BrokenPlugin, Registry, get_registry
from pymc_accel.switches import switched_on
from pymc_accel.report import Row, SelectionReport


#: Share of the measured-mode budget kept for the float32 guard (two FAST_COMPILE functions
#: and a few evaluations) when a float32 candidate might be chosen.
GUARD_RESERVE = 0.15
#: How much faster per effective draw a float32 candidate of a float64 model must be estimated
#: than the same candidate in float64 to be preferred: float32 is chosen only where it is
#: faster, and a gain within the estimate's rounding is no gain. It was 1.10 while NumPyro's
#: float32 arithmetic on the CPU was priced at float64's rate, so that float32 gained only its
#: halved bytes there and a few percent was noise. With that arithmetic priced at 1.3x
#: (costmodel.JAX_CPU_SAMPLER_FLOAT32_FLOPS_FACTOR), replaying the day's thirteen result files
#: (docs/benchmarks.md, "float32's margin") moved no zoo choice at 1.0-1.10 and mended one
#: held-out model at 1.02 or less: logistic_31, whose float32 was best in all three of its files
#: (regret 1.33-1.57 -> 1.00), estimated 1.03x faster.
FLOAT32_MIN_GAIN = 1.02
#: A runner-up estimated within this factor of the chosen candidate's time per effective draw
#: is a close call, which the report says, with how to settle it (measured mode). Replayed
#: against every recorded regret run, the estimates were 1.17x to 1.30x off a candidate's warm
#: wall time (geometric means of the error factor per result file, docs/benchmarks.md), and
#: nutpie's fixed cost varied 0.65x to 1.4x of its fit between models and days.
CLOSE_CALL = 1.25
#: Switch (``PYMC_ACCEL_TRY_RUNNER_UP``, on unless ``off``) for trying a close call's runner-up
#: once (:func:`_runner_up_to_try`).
TRY_RUNNER_UP = "PYMC_ACCEL_TRY_RUNNER_UP"
#: ``SelectionReport.chosen_by`` of a close call's runner-up chosen to run once.
TRYING_RUNNER_UP = "cost model, trying the runner-up once"


@dataclass
class _Scored:
    candidate: Candidate
    estimate: Estimate
    total: float
    key: float
    needs_guard: bool = False
    measure_note: str = ""
    # set when float32 is not enough faster than the candidate in float64 to be preferred
    behind_float64: str = ""
    # the float32 accuracy check's modelled seconds charged to this run, paid by the selection
    # before a float32 candidate of a float64 model can be chosen (_float32_check_charge); 0
    # otherwise
    check_seconds: float = 0.0
    # the later runs of the model expected to share the check (it is kept, check_store)
    check_shared_with: int = 0

    def rescore(self, steps: int, draws: int, chains: int) -> None:
        """Recompute the total and the ranking key from the estimate: the run's wall time, and
        the seconds charged to the run (:meth:`Estimate.charged_seconds`: a first compile
        shared with the model's later runs) plus the float32 check (if the candidate needs
        one) per effective draw."""
        self.total = self.estimate.total_seconds(steps, chains)
        key = self.estimate.seconds_per_effective_draw(steps, draws, chains)
        charged = self.estimate.charged_seconds(steps, chains)
        self.key = key * (charged + self.check_seconds) / charged if charged > 0 else key


def _float32_check_charge(profile: ModelProfile) -> tuple[float, int]:
    """The float32 accuracy check's modelled seconds (:func:`pymc_accel.costmodel.guard_seconds`)
    charged to this run, and the later runs expected to share it.

    The check is kept for the model's structure, data and start (:mod:`pymc_accel.check_store`),
    as a first compile is kept on disk, so it is shared as the compile is
    (:meth:`Estimate.compile_shared_seconds`): with as many later runs as the model has run
    here (:func:`pymc_accel.history.expected_later_runs`; none without the run history). Charged
    whole to every run, it kept float32 from a model whose runs it would shorten by more than
    it costs once (seed_small: float32 1.16x faster, estimated 1.09x before its 0.1 s check,
    never chosen, so never checked; docs/benchmarks.md).
    """
    seconds = guard_seconds(profile).value
    later = history.expected_later_runs(profile)[0]
    return seconds / (1 + later), later


def _precision_policy(
    c: Candidate, profile: ModelProfile, precision: str | None
) -> tuple[str | None, bool]:
    """Precision policy: an explicit choice wins; otherwise the model's own precision, or
    float32 for a float64 model when the accuracy guard vouches for it.

    Returns
    -------
    refusal : str or None
        Why the candidate is refused, if it is.
    needs_guard : bool
        True for a float32 candidate of a float64 model: usable only if
        :func:`pymc_accel.precision.check_float32` passes.
    """
    if precision is not None:
        return (None if c.precision == precision else f"precision={precision!r} was requested"), False
    if c.precision == profile.float_dtype:
        return None, False
    if profile.float_dtype == "float32":
        return (
            "the model is built in float32; to run it in float64, build it under "
            "pytensor.config.floatX='float64'"
        ), False
    return None, True


def _unknown_options(backend: Any, candidate: Candidate,
                     options: dict[str, Any] | None) -> tuple[list[str], str | None]:
    """The ``options`` that ``candidate``'s backend's optional ``known_options`` does not list,
    and the refusal that names them; ``([], None)`` when it lists them all, or the backend does
    not say (no method, ``None``, or the method raises)."""
    known = ask_backend(backend, "known_options", candidate, default=None) if options else None
    if known is None:
        return [], None
    # membership only: a sampler's full list is read (its library imported) only when needed,
    # so the candidate's own options are looked at first: ``driver="pymc"`` read nutpie's list
    # for the nutpie-driven candidate, importing nutpie, NumPyro and ArviZ (eight schools'
    # first selection in a new process 1.44 s, 0.25 s without:
    # docs/results/option-selection-cpu-2026-12-02-driver-first.md)
    mine = dict(candidate.options)
    unknown = sorted(o for o in options if o not in mine and o not in known)
    if not unknown:
        return [], None
    return unknown, (f"{candidate.label} does not take {', '.join(unknown)}; its options are "
                     f"{', '.join(sorted(known)) or 'none'}: drop the others, or name a sampler "
                     "that takes them")


def _untaken(registry: Registry, untaken: set[str], taken: set[str],
             clashed: list[Candidate], options: dict[str, Any] | None) -> set[str]:
    """The options no candidate takes, for the error that nothing can run: ``untaken`` less
    those taken by a candidate that ran (``taken``) or by one refused for an option's value
    (``clashed``), whose lists are read only here, on the way to the error."""
    left = untaken - taken
    for c in clashed:
        if not left:
            break
        unknown, why = _unknown_options(registry.backends[c.backend], c, options)
        left -= set(options or ()) - set(unknown if why else ())
    return left


def _options_pinned(registry: Registry, candidates: list[Candidate],
                    options: dict[str, Any] | None) -> list[Candidate]:
    """``candidates`` with each option the user gave set in those whose backend takes it
    (``known_options``) where none of the backend's candidates on that device and precision
    has the value asked for: the run takes the value, as ``pm.sample`` would.

    A candidate option with a value some candidate has picks among them instead (``driver``
    for the numba backend, ``method`` for DEER-MALA: the others are refused for it). NumPyro's
    CPU candidates all run ``chain_method="parallel"``; without this ``chain_method=
    "vectorized"``, which ``pm.sample(nuts_sampler="numpyro")`` takes, refused NumPyro."""
    if not options:
        return candidates
    out: list[Candidate] = []
    for c in candidates:
        mine = dict(c.options)
        group = [o for o in candidates
                 if (o.backend, o.device, o.precision) == (c.backend, c.device, c.precision)]
        known = None
        for name, value in options.items():
            if name not in mine or mine[name] == value:
                continue
            if any(dict(o.options).get(name) == value for o in group):
                continue  # another candidate runs it: this one is refused for it
            if known is None:
                known = ask_backend(registry.backends[c.backend], "known_options", c,
                                    default=None) or ()
            if name in known:
                mine[name] = value
        pinned = replace(c, options=tuple(mine.items()))
        if pinned not in out:
            out.append(pinned)
    return out


def _takes_per_chain_initvals(backend: Any, candidate: Candidate) -> bool:
    """The backend's optional ``takes_per_chain_initvals`` (a backend without it, or whose
    method raises, is taken at its word that it runs: its sampler says if not)."""
    return bool(ask_backend(backend, "takes_per_chain_initvals", candidate, default=True))


def _gather(
    registry: Registry, names: list[str], profile: ModelProfile, devices: Devices
) -> tuple[list[Candidate], list[Refusal]]:
    candidates: list[Candidate] = []
    refusals: list[Refusal] = []
    for name in names:
        backend = registry.backends[name]
        try:
            returned = backend.candidates(profile, devices)
            answers = [] if isinstance(returned, (str, bytes)) else list(returned)
            if not answers and returned or not all(
                    isinstance(a, (Candidate, Refusal)) for a in answers):
                raise TypeError(f"candidates() returned {returned!r:.80}, not a list of "
                                "Candidate and Refusal")
        except Exception as exc:  # a plugin's fault must not break selection
            registry.add_broken(BrokenPlugin(name, registry.origins.get(name, "unknown"),
                                             f"{type(exc).__name__}: {exc}", "candidates"))
            refusals.append(Refusal(name, f"backend raised in candidates(): {exc!r}"))
            continue
        for a in answers:
            (candidates if isinstance(a, Candidate) else refusals).append(a)
    return candidates, refusals


def _raise_specific(
    refusals: list[Refusal], profile: ModelProfile, backend: str | None,
    precision: str | None = None, untaken: set[str] | frozenset[str] = frozenset(),
    bad_values: Sequence[str] = (), has_gpu: bool = True,
) -> None:
    """Turn 'nothing can run' into the most specific actionable error.

    ``untaken`` holds the options no candidate takes (:func:`_unknown_options`): a
    candidate that takes an option and was refused for its value, or for anything else, has
    the option out of it. ``bad_values`` holds what the backends that take the user's options
    said of their values (``UnsupportedArgumentError`` from ``estimate``). Without a GPU
    (``has_gpu`` False) the GPU rows come last: they came first, above the line to act on."""
    # one line a refusal: a candidate refused by its backend and again by the selection's
    # constraints gives the same line twice
    ordered = refusals if has_gpu else sorted(refusals, key=lambda r: r.device == "gpu")
    reasons = "\n".join(dict.fromkeys(f"  - {r.label}: {r.reason}" for r in ordered))
    if profile.has_discrete:
        # PyMC's compound steps run in the model's precision: a forced other one rules them out
        forced = (f" in the model's precision (drop precision={precision!r})"
                  if precision and precision != profile.float_dtype else "")
        raise DiscreteVariablesError(
            f"The model has discrete free variables ({', '.join(profile.discrete_vars)}) and no "
            f"candidate can sample them. Use nuts_sampler='numba' with PyMC's driver{forced} "
            "(its compound steps: leave driver= out, or pass driver='pymc') or "
            "marginalize them out.\n" + reasons
        )
    if backend and any("not installed" in r.reason for r in refusals):
        raise BackendUnavailableError(
            f"Backend {backend!r} cannot run here:\n" + reasons
        )
    if bad_values:  # the samplers that take the options refused their values
        raise NoCandidateError(
            "The sampler(s) that take the options you gave refused their values: "
            + "; ".join(dict.fromkeys(bad_values)) + ".\n" + reasons)
    if untaken:  # the line to act on, first: it was buried under the GPU and float32 rows
        raise NoCandidateError(
            "No sampler that could run here takes the option(s) you gave "
            f"({', '.join(sorted(untaken))})"
            ": drop them, or check their spelling against pymc_accel.sampler_options('pymc') "
            "(or 'nutpie', 'numpyro', 'blackjax').\n"
            + reasons)
    raise NoCandidateError("No backend can run this model under these constraints:\n" + reasons)


def refuse_models_without_free_variables(model) -> None:
    """Raise ``pm.sample``'s ``SamplingError`` for a model with nothing to sample, before any
    backend meets it (NumPyro raised an IndexError, DEER-MALA's estimate a ZeroDivisionError,
    and ``explain`` chose a sampler for it)."""
    if not getattr(model, "free_RVs", True):
        import pymc as pm

        raise pm.exceptions.SamplingError(
            "Cannot sample from the model, since the model does not contain any free "
            "variables (as pm.sample says). To draw its observed variables, use "
            "pm.sample_prior_predictive() or pm.sample_posterior_predictive()."
        )


def _gradient_free_reason(profile: ModelProfile) -> str:
    return (f"the log density has no gradient for {', '.join(profile.gradient_free_vars)}, "
            "and this sampler needs one: use nuts_sampler='numba' with PyMC's driver "
            "(driver='pymc'), which gives such variables slice sampling as pm.sample does, or "
            "pm.sample_smc() for a simulator")


def refuse_float32_models_under_another_float_x(model) -> None:
    """Raise :class:`~pymc_accel.errors.UnsupportedArgumentError` naming the fix for a model
    whose free variables are float32 sampled while ``pytensor.config.floatX`` is not float32.

    PyMC builds a sampler's start and its gradient function in floatX, so every backend
    failed deep inside PyMC or PyTensor on such a model ("Invalid dtype for variable a. Can
    not cast to float64", "Cannot convert Type Scalar(float64...) into Type Scalar(float32)"),
    as ``pm.sample`` itself does: a model built under ``change_flags(floatX='float32')`` and
    sampled after the ``with`` block.
    """
    import pytensor

    float_x = pytensor.config.floatX
    if float_x != "float32" and model_float_dtype(model) == "float32":
        from pymc_accel.errors import UnsupportedArgumentError

        raise UnsupportedArgumentError(
            f"the model's free variables are float32 (it was built under "
            f"pytensor.config.floatX='float32'), but floatX is {float_x!r} now, and PyMC builds "
            "every sampler's start and gradient in floatX: sample inside "
            "`with pytensor.config.change_flags(floatX='float32'):`, as the model was built, "
            "or build the model in float64 (pymc-accel still runs it in float32 where that is "
            "faster and accurate)."
        )


#: The least value of each run-length argument. ``draws=0`` is refused with the rest: PyMC's own
#: NUTS raises "Not enough samples to build a trace" for it and NumPyro "num_samples must be a
#: positive integer greater than thinning", where nutpie returns an empty posterior.
RUN_LENGTH_LEAST = {"draws": 1, "tune": 0, "chains": 1}


def run_length(name: str, value: Any) -> int:
    """A run-length argument of ``pm.sample`` (``draws``, ``tune`` or ``chains``) as an ``int``.

    Parameters
    ----------
    name : {"draws", "tune", "chains"}
    value : int or numpy.integer
        What the caller passed (a NumPy integer too, as ``pm.sample`` takes).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``value`` is not an integer (a bool, a float, a string) or is below
        :data:`RUN_LENGTH_LEAST`, before any sampler sees it.
    """
    import numpy as np

    least = RUN_LENGTH_LEAST[name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be an integer of at least {least}, not {value!r}")
    return int(value)


def _check_measure_budget(seconds: Any) -> None:
    """Refuse a measured-mode budget that is not a number of seconds, before any work."""
    number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    if not number or not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"measure_budget={seconds!r}: give the seconds measured selection may "
                         f"take, a number of at least 0 (default {DEFAULT_BUDGET_SECONDS:g})")


def select(
    model=None,
    *,
    backend: str | None = None,
    device: str | None = None,
    precision: str | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    profile: ModelProfile | None = None,
    registry: Registry | None = None,
    devices: Devices | None = None,
    machine: MachineFigures | None = None,
    measure: bool = False,
    measure_budget: float = DEFAULT_BUDGET_SECONDS,
    initvals: dict | list[dict] | None = None,
    var_names: list[str] | None = None,
    options: dict[str, Any] | None = None,
    arguments: Sequence[str] = (),
    target_accept: float = 0.8,
    _logp_graph_out: list | None = None,
    _exclude: Mapping[str, str] | None = None,
) -> SelectionReport:
    """Choose the backend, device and precision that should reach the draws soonest.

    Parameters
    ----------
    model : pm.Model, optional
        Defaults to the model on the context stack.
    backend : str, optional
        Restrict to one registered backend (``None`` or ``"auto"``: all of them).
    device : {"cpu", "gpu"}, optional
        Restrict to a device.
    precision : {"float32", "float64"}, optional
        Force a precision. By default the model's own, or float32 for a float64 model when a
        float32 candidate is estimated fastest and :func:`pymc_accel.precision.check_float32`
        finds it accurate (otherwise it is refused with the measured error). A forced float32
        that fails the check is used anyway, with a :class:`PrecisionWarning`.
    draws, tune, chains : int
        The run the estimate is for.
    profile, registry, devices, machine : optional
        Precomputed inputs (for tests and tools); computed when not given. With ``profile``
        and no ``model``, float32 candidates of a float64 model are refused (nothing to check
        them on) and ``measure`` measures nothing.
    options : dict, optional
        Backend options the caller passed (``pymc_accel.sample``'s extra keyword arguments):
        a candidate whose own value of such an option differs is refused, so that, say,
        ``nuts_sampler="deer_mala", method="deer"`` runs DEER and reports it as such.
    measure : bool, default False
        Compile the candidates' gradients and time them (backends with a ``measure`` method),
        replacing modelled figures with measured ones, best modelled candidate first, within
        ``measure_budget`` seconds in all.
    measure_budget : float, default 5.0
        Seconds the whole selection may take with ``measure=True``: profiling and estimating
        count against it, and a share is kept for the float32 guard when a float32 candidate
        may need it; a candidate whose compile would not fit in what is left, or (but for the
        best candidate) would take longer than the best candidate's estimated run, is not
        measured and keeps its modelled figures (``report.measurement`` has the accounting).
    initvals : dict or list of dict, optional
        Initial values, for the float32 check; a list (one dict per chain, as ``pm.sample``
        takes) refuses the candidates that start every chain from one dict.
    var_names : list of str, optional
        Variables the run keeps (``pm.sample``'s ``var_names``), for memory estimates.
    arguments : sequence of str, optional
        ``pm.sample`` arguments the run was given that only some samplers honour
        (:data:`pymc_accel.arguments.ARGUMENTS`, e.g. ``("step",)``): a candidate that would
        drop a required one is refused, naming the fix.
    target_accept : float, default 0.8
        The run's target acceptance. A JAX sampler compiles it into its program with
        ``options`` and ``var_names``, so the run history counts that program as cached only
        after a run with the same values (:func:`pymc_accel.history.program_options_key`).
    _logp_graph_out : list, optional
        For :func:`pymc_accel.sample`: the log density graph the profile built is appended
        to it (nothing when a kept profile was reused), for the run to use
        (:attr:`pymc_accel.backend.SampleRequest.logp_graph`). Not kept on the report, whose
        reader would hold a copy of the data with it.
    _exclude : mapping of str to str, optional
        For :func:`pymc_accel.sample`: candidate labels to refuse, each with its reason (a run
        of it that just failed, whether or not the run history is kept).

    Returns
    -------
    SelectionReport
        With ``candidate`` set to the chosen :class:`~pymc_accel.backend.Candidate`.

    Raises
    ------
    UnknownBackendError, DeviceUnavailableError, DiscreteVariablesError,
    BackendUnavailableError, NoCandidateError
        When nothing can run; the message lists every refusal.
    """
    start = time.perf_counter()
    budget_start = _measure._clock()  # measured mode's budget covers the whole selection
    _check_measure_budget(measure_budget)
    # the arguments before any work (a profile of a large model takes seconds)
    draws, tune, chains = (run_length("draws", draws), run_length("tune", tune),
                           run_length("chains", chains))
    if device not in (None, "cpu", "gpu"):
        raise ValueError(f"device must be 'cpu', 'gpu' or None, not {device!r}")
    if precision not in (None, "float32", "float64"):
        raise ValueError(f"precision must be 'float32', 'float64' or None, not {precision!r}")
    registry = registry or get_registry()
    if backend in (None, "auto"):
        names, backend = registry.names(), None
    else:
        registry.get(backend)  # raises UnknownBackendError with the registered names
        names = [backend]
    if not names:
        blocked = (f": {BLOCK_ENV} blocks {', '.join(sorted(registry.blocked_names))}; take "
                   "the built-in backends (numba, numpyro, deer_mala) out of that list"
                   if registry.blocked_names else "")
        raise NoCandidateError(f"No backend is registered{blocked}.")
    if model is None and profile is None:
        import pymc as pm

        model = pm.modelcontext(None)
    if model is not None:
        refuse_models_without_free_variables(model)
    logp_graph = None  # the log density a fresh profile built, for the float32 check
    if profile is None:
        profile, logp_graph = _cached_profile_and_logp(model)
        if logp_graph is not None and _logp_graph_out is not None:
            # the log density alone (its gradient is the profile's and the float32 check's)
            _logp_graph_out.append(LogpGraph(logp_graph.value_vars, logp_graph.logp,
                                             source=logp_graph.source))
    devices = devices or discover()
    if "PYMC_ACCEL_PARALLEL_SCANS" in os.environ:  # once, not as every JAX row's refusal
        from pymc_accel.rewrites.apply import parallel_scans_mode

        parallel_scans_mode()  # raises ValueError naming the values it takes
    if device == "gpu" and not devices.has_gpu:
        raise DeviceUnavailableError(
            f"device='gpu' was requested but no GPU is visible to JAX ({devices.note or 'none'}). "
            "On a machine with a CUDA GPU: pip install 'pymc-accel[gpu]'; or drop device='gpu'."
        )
    machine = machine or machine_figures(devices=devices)
    candidates, refusals = _gather(registry, names, profile, devices)
    candidates = _options_pinned(registry, candidates, options)

    scored: list[_Scored] = []
    # options some candidate was refused for not taking, and those some candidate takes
    untaken: set[str] = set()
    taken: set[str] = set()
    clashed: list[Candidate] = []  # refused for an option's value: what they take is read late
    bad_values: list[str] = []  # what backends said of the values of options they take
    per_chain = isinstance(initvals, (list, tuple))
    if per_chain:  # the float32 check starts from one point: the first chain's
        initvals = initvals[0] if initvals else None
    kept_check = _KeptCheck(model, initvals)  # a float32 check of this model and data, if any
    if logp_graph is not None and logp_graph.initial_point is not None and not initvals:
        kept_check.start_from(logp_graph.initial_point)  # the profile evaluated it already
    check_charge = functools.cache(lambda: _float32_check_charge(profile))  # the same for all
    # the memory-map limit and the maps in use, read once, for a model with program ops only
    process_maps = functools.cache(memory_maps.process_maps)

    # what a JAX sampler's program holds besides the data (the run history's cached-program check)
    program_options = history.program_options_key(target_accept, options, var_names)

    @functools.cache
    def digest() -> str:  # the data's values, asked for by the history only where they matter
        return data_digest(model) if model is not None else ""  # a profile alone: not known

    @functools.cache
    def without_jax() -> list[str]:  # a kept profile's ops may have had a conversion since
        return still_without_jax(profile.ops_without_jax) if profile.ops_without_jax else []

    required = [a for a in arguments if a in REQUIRED]
    for c in candidates:
        dropped = [a for a in required if not takes_argument(registry.backends[c.backend], a, c)]
        if dropped:
            refusals.append(Refusal.of(c, refusal_reason(dropped, c)))
            continue
        if profile.gradient_free_vars and not ask_backend(
                registry.backends[c.backend], "samples_without_gradients", c, default=False):
            refusals.append(Refusal.of(c, _gradient_free_reason(profile)))
            continue
        if per_chain and not _takes_per_chain_initvals(registry.backends[c.backend], c):
            refusals.append(Refusal.of(
                c, f"initvals were given per chain (a list of dicts) and {c.label} "
                "starts every chain from one dict: pass one dict, or choose a sampler that takes "
                "a list (nuts_sampler='numba' with driver='pymc', or 'numpyro')"))
            continue
        if device is not None and c.device != device:
            refusals.append(Refusal.of(c, f"device={device!r} was requested"))
            continue
        # a value asked for that the candidate does not run refuses it before its other
        # options are read: driver="pymc" with one of PyMC's NUTS options imported nutpie
        clash = [k for k, v in (options or {}).items()
                 if k in dict(c.options) and dict(c.options)[k] != v]
        if clash:
            asked = ", ".join(f"{k}={options[k]!r}" for k in clash)
            refusals.append(Refusal.of(c, f"{asked} was requested"))
            clashed.append(c)
            continue
        unknown, why_unknown = _unknown_options(registry.backends[c.backend], c, options)
        if why_unknown:
            untaken.update(unknown)
            refusals.append(Refusal.of(c, why_unknown))
            continue
        # a backend that does not list its options (no known_options) counts as taking them all
        taken.update(options or ())
        why, needs_guard = _precision_policy(c, profile, precision)
        if needs_guard and backend is not None:
            why = (f"a backend named explicitly runs in the model's precision "
                   f"({profile.float_dtype}), as pm.sample does; pass precision='float32' to use "
                   "float32, or nuts_sampler='auto' to let the selector check and choose it")
        elif needs_guard and kept_check.get() is not None and not kept_check.get().safe:
            why = _unsafe_reason(kept_check.get())  # checked before: no need to rank it
        if why:
            refusals.append(Refusal.of(c, why))
            continue
        try:
            fitted, memory = _fit_memory(registry.backends[c.backend], c, profile, devices,
                                         SampleRequest(draws=draws, tune=tune, chains=chains,
                                                       var_names=var_names))
        except Exception as exc:
            refusals.append(Refusal.of(c, f"fit_memory() raised {exc!r}"))
            continue
        if isinstance(fitted, Refusal):
            refusals.append(fitted)
            continue
        c = fitted
        try:
            est = registry.backends[c.backend].estimate(c, profile, machine)
            if "jax" in est.first_use and without_jax():
                refusals.append(Refusal.of(c, jax_refusal_reason(without_jax())))
                continue
            if "jax" in est.first_use and profile.ops_without_jax_derivative:
                refusals.append(Refusal.of(
                    c, no_derivative_reason(profile.ops_without_jax_derivative)))
                continue
            if "jax" in est.first_use and c.device == "cpu" and (
                    too_many_maps := memory_maps.refusal_reason(profile, c.backend,
                                                                 process_maps)):
                refusals.append(Refusal.of(c, too_many_maps))
                continue
            if "jax" in est.first_use and backend is None and (
                    profile.nan_jax_gradient_ops or profile.switched_log_densities):
                refusals.append(Refusal.of(c, nan_gradient_reason(
                    profile.nan_jax_gradient_ops, profile.switched_log_densities)))
                continue
            if _exclude and c.label in _exclude:
                refusals.append(Refusal.of(c, _exclude[c.label]))
                continue
            if picked_by_selector(c, backend, options) and (
                    stopped_at := history.stopped_at(profile, c)):
                refusals.append(Refusal.of(
                    c, f"its run of this model stopped at an error the log density raised "
                       f"where it proposed (at {stopped_at}): name it, with its options, to "
                       "run it anyway"))
                continue
            if backend is None and (wrong_at := history.wrong_gradient_at(profile, c)):
                refusals.append(Refusal.of(
                    c, f"the gradient its run of this model computed was not the derivative of "
                       f"the log density at the run's last draws (at {wrong_at}): name it to "
                       "run it anyway"))
                continue
            if backend is None and (stuck_at := history.stuck_at(profile, c)):
                refusals.append(Refusal.of(
                    c, f"its chains never left their start, or barely moved, when it ran this "
                       f"model (at {stuck_at}): name it to run it anyway"))
                continue
            # start-up work at this machine's pace, then what an earlier run of the model observed
            est = at_start_up_pace(est, machine, c.device)
            est = history.apply(est, profile, c, run=(tune, draws, chains), data=digest,
                                options=program_options)
            if memory is not None:
                est = replace(est, memory_bytes=memory)
            check_seconds, shared_with = 0.0, 0  # a kept check costs nothing to read
            if needs_guard and kept_check.get() is None:
                check_seconds, shared_with = check_charge()
            s = _Scored(c, est, 0.0, 0.0, needs_guard, check_seconds=check_seconds,
                        check_shared_with=shared_with)
            s.rescore(tune + draws, draws, chains)
        except UnsupportedArgumentError as exc:
            if backend is not None:  # the user's own option values, for the backend they named
                raise
            bad_values.append(str(exc))
            refusals.append(Refusal.of(c, str(exc)))
            continue
        except Exception as exc:
            refusals.append(Refusal.of(c, f"estimate() raised {exc!r}"))
            continue
        if not (math.isfinite(s.total) and math.isfinite(s.key) and s.key > 0):
            # a plugin's negative seconds won auto; a NaN left the order undefined
            refusals.append(Refusal.of(
                c, f"its estimate is not a positive, finite time (total {s.total!r} s, "
                   f"{est.seconds_per_gradient.value!r} s a gradient): the backend's "
                   "estimate() is at fault"))
            registry.add_broken(BrokenPlugin(
                c.backend, registry.origins.get(c.backend, "unknown"),
                "estimate() gave a time that is not positive and finite", "estimate"))
            continue
        scored.append(s)
    if not scored:
        _raise_specific(refusals, profile, backend, precision,
                        _untaken(registry, untaken, taken, clashed, options), bad_values,
                        devices.has_gpu)
    scored.sort(key=lambda s: s.key)
    run = (tune + draws, draws, chains)
    profile = _with_scale_spread(scored, profile, model, logp_graph, kept_check, run)
    if not measure:  # measured mode evaluates it after its timings, within what is left
        profile = _with_conditioning(scored, profile, model, logp_graph, kept_check, run)
    if precision != "float32" and not any(s.needs_guard for s in scored):
        # no float32 check to come: its gradient (and data, unless the run keeps the log
        # density) freed before measuring
        logp_graph = None

    measurement = None
    if measure:
        reserve = GUARD_RESERVE * measure_budget if any(s.needs_guard for s in scored) else 0.0
        measurement = measure_candidates(
            scored, model, profile, machine, registry, budget=measure_budget,
            steps=tune + draws, draws=draws, chains=chains,
            spent_before=_measure._clock() - budget_start, reserve=reserve,
        )
        for s in scored:  # later selections of the model, in any process, use the timings
            if s.measure_note.startswith("measured"):
                history.record_measured(profile, s.candidate, s.estimate)
        scored.sort(key=lambda s: s.key)
        # timed gradients can change the leader where a modelled one could not; evaluated in
        # what the budget has left beyond the float32 check's reserve
        left = measure_budget - (_measure._clock() - budget_start) - reserve
        profile = _with_scale_spread(scored, profile, model, logp_graph, kept_check, run,
                                     may_evaluate=left >= SPREAD_SECONDS_AFTER_MEASURING)
        # and the conditioning in what is left after the spread, at most: measured mode keeps
        # to its budget
        left = measure_budget - (_measure._clock() - budget_start) - reserve
        profile = _with_conditioning(scored, profile, model, logp_graph, kept_check, run,
                                     may_evaluate=left >= CONDITIONING_BUDGET_LEAST,
                                     most_seconds=left)

    scored = _float32_only_where_faster(scored)

    check = None
    if scored[0].needs_guard:
        guard_budget = None
        if measure:  # jittered points only in what is left of the measured-mode budget
            guard_budget = max(0.0, measure_budget - (_measure._clock() - budget_start))
        check, why = _guard(model, initvals, guard_budget, kept_check, logp_graph)
        if why:
            refusals += [Refusal.of(s.candidate, why)
                         for s in scored if s.needs_guard]
            scored = [s for s in scored if not s.needs_guard]
            if not scored:
                _raise_specific(refusals, profile, backend, precision,
                                _untaken(registry, untaken, taken, clashed, options),
                                bad_values, devices.has_gpu)
    elif precision == "float32" and profile.float_dtype == "float64" and model is not None:
        # the user's choice wins; warn if unsafe, or if it could not be checked
        try:
            check = kept_check.get() or kept_check.keep(
                check_float32(model, initvals=initvals, logp_graph=logp_graph))
        except Exception as exc:
            check = None
            warnings.warn(
                f"precision='float32' was requested and is used, but its accuracy could not be "
                f"checked ({type(exc).__name__}: {str(exc)[:200]}).",
                PrecisionWarning,
                stacklevel=3,
            )
        if check is not None and not check.safe:
            warnings.warn(
                f"precision='float32' was requested and is used, but {check.summary()}. "
                "Sampling may diverge or be biased; use precision='float64' (or leave precision "
                "unset: the selector then uses float32 only where it is accurate).",
                PrecisionWarning,
                stacklevel=3,
            )

    chosen, chosen_by = scored[0], "cost model" if backend is None else "user"
    tried = _runner_up_to_try(scored, profile) if backend is None and not measure else None
    if tried is not None:
        chosen, chosen_by = tried, TRYING_RUNNER_UP
    if backend is None and len(scored) > 1:
        answer, plugin = registry.call_select_hook(
            profile=profile, candidates=[(s.candidate, s.total) for s in scored]
        )
        match = next((s for s in scored if s.candidate == answer), None)
        if match is not None:
            chosen, chosen_by = match, f"plugin {plugin}"
        elif answer is not None:  # an answer the selection cannot follow: said, not ignored
            registry.add_broken(BrokenPlugin(
                plugin or "unknown", registry.plugin_origins.get(plugin or "", "unknown"),
                f"pymc_accel_select returned {answer!r}, which is not one of the candidates it "
                "was given (return one of them, or None); the cost model chose", "hook"))

    if chosen is not tried:  # a plugin's hook overrode the trial
        tried = None
    rows = [_row(s, chosen, registry, check, scored[0] if tried else None) for s in scored]
    rows += [
        Row(r.label, r.backend, r.device, r.precision, "refused", r.reason,
            origin=registry.origins.get(r.backend, ""))
        for r in refusals
    ]
    return SelectionReport(
        chosen=chosen.candidate.label,
        chosen_by=chosen_by,
        rows=rows,
        profile=profile.summary(),
        devices=devices.summary(),
        machine=machine.describe() if hasattr(machine, "describe") else f"CPU figures {machine.source}",
        request={"draws": draws, "tune": tune, "chains": chains,
                 **({"device": device} if device else {}),
                 **({"precision": precision} if precision else {}),
                 **({"measure": True} if measure else {}),
                 **({"var_names": list(var_names)} if var_names is not None else {})},
        broken_plugins=[vars(b) for b in registry.broken],
        selection_seconds=time.perf_counter() - start,
        precision_check=check.to_dict() if check else None,
        measurement=measurement,
        notes=(_scan_notes(registry.backends[chosen.candidate.backend], chosen.candidate, profile)
               + _geometry_notes(profile)
               + _jax_device_notes(scored, devices, chains)
               + (_trial_notes(tried, scored[0]) if tried else
                  _close_call_notes(scored, chosen, measure and measurement is not None,
                                    profile))),
        process=_process_line(),
        candidate=chosen.candidate,
        estimate=chosen.estimate,
        model_profile=profile,
    )


def _scan_notes(backend, candidate: Candidate, profile: ModelProfile) -> list[str]:
    """The scans the chosen backend runs as parallel prefixes (or keeps sequential, and why)."""
    if not getattr(backend, "parallel_scans", False):
        return []
    from pymc_accel.rewrites.apply import describe_plan

    line = describe_plan(profile, candidate.device)
    return [line] if line else []


def _sampler(candidate: Candidate) -> tuple:
    """A candidate without its precision: the same sampler on the same device."""
    return candidate.backend, candidate.device, candidate.options


def _close_call_notes(scored: list[_Scored], chosen: _Scored, measured: bool,
                      profile: ModelProfile) -> list[str]:
    """A note when another backend or driver is estimated within :data:`CLOSE_CALL` of the
    chosen one (a float32 twin of the same sampler is not a rival: its own rule decides it):
    the estimates cannot tell such candidates apart, and measured mode can time both. In
    measured mode, which candidates' figures stayed modelled. Where the chosen sampler has not
    run the model and the rival has, recording its effective draws, the note says this run
    records the chosen one's: on censored_6 and weibull_5 (2026-11-30) nutpie's first run
    moved the second selection to PyMC's NUTS on modelled effective draws, 1.17x to 1.35x
    slower, and the third went back to nutpie on both samplers' observed ones."""
    rivals = [s for s in scored
              if s is not chosen and _sampler(s.candidate) != _sampler(chosen.candidate)
              and s.key <= chosen.key * CLOSE_CALL]
    if not rivals:
        return []
    best = min(rivals, key=lambda s: s.key)
    ratio = best.key / chosen.key
    line = (f"close call: {best.candidate.label} is estimated at {ratio:.2f}x "
            f"{chosen.candidate.label}'s time per effective draw, within the estimates' "
            f"typical error")
    if measured:
        modelled = [s.candidate.label for s in (chosen, best) if not s.measure_note.startswith(
            "measured")]
        if modelled:
            line += f"; {', '.join(modelled)} could not be measured within the budget"
        return [line]
    if (history.enabled() and not history.ran(profile, chosen.candidate)
            and history.effective_draws_recorded(profile, best.candidate)):
        line += (f"; {best.candidate.label} has run this model and recorded its effective "
                 f"draws, {chosen.candidate.label} has not, and its effective draws are "
                 "modelled: this run records them, and later runs choose between observed "
                 "figures")
    return [line + "; measure=True (pymc_accel.sample or select) times both on this machine "
            "within a few seconds"]


def _runner_up_to_try(scored: list[_Scored], profile: ModelProfile) -> _Scored | None:
    """A close call's runner-up to run once in place of the leader, or ``None``.

    The cost model gives each NUTS adaptation one figure for the effective draws a gradient
    buys, and per model the truth strays from it by up to 2x; a run records its own
    (:func:`pymc_accel.history.observed_ess_per_draw`), but only of the sampler that ran, so a
    sampler the estimates undervalue would never run and never show it. On the zoo's linear
    GLM nutpie was chosen in every benchmark run, estimated 1.2x faster per effective draw than
    NumPyro, which was the faster by 1.29x: NumPyro gets 1.5x nutpie's effective draws per draw
    there, against the 1.17x credited (docs/benchmarks.md).

    So once the leader has run the model and recorded its effective draws, a NUTS rival that is
    a close call (within :data:`CLOSE_CALL` of its time per effective draw, another sampler, in
    the model's precision) and has never run the model runs once, and records its own, unless
    the history holds them already: a rival with an adaptation that has run (nutpie's on a JAX
    gradient after nutpie, BlackJAX's NUTS after NumPyro's, a twin in the other precision) is
    credited with its effective draws, and a trial would teach the ranking nothing. On the
    2-core machine's run history the demo's fourth run (2026-11-29) tried the nutpie_jax plugin,
    1.20x the leader's time per effective draw with nutpie's recorded effective draws credited
    to it: 45.0 s, where nutpie's runs of the demo took 22.6-23.5 s (docs/benchmarks.md). From
    then on both are ranked on observed effective draws (:func:`pymc_accel.history.apply`),
    and the faster one is chosen. Each rival is tried at most once per model structure (marked
    as tried before it runs: :func:`pymc_accel.history.mark_tried`), and a tried run that fails
    falls back to the leader (:func:`pymc_accel.integration.sample`); with
    the run history off (``PYMC_ACCEL_HISTORY=off``) or ``PYMC_ACCEL_TRY_RUNNER_UP=off``, the
    leader always runs.
    """
    if len(scored) < 2 or not history.enabled() or not switched_on(TRY_RUNNER_UP):
        return None
    leader = scored[0]
    if (leader.estimate.trajectory_scale is None
            or not history.effective_draws_recorded(profile, leader.candidate)):
        return None
    rivals = [s for s in scored[1:]
              if _sampler(s.candidate) != _sampler(leader.candidate)
              and s.estimate.trajectory_scale is not None and not s.needs_guard
              and s.key <= leader.key * CLOSE_CALL and not history.ran(profile, s.candidate)
              and not history.adaptation_effective_draws_recorded(profile, s.candidate,
                                                                  s.estimate)]
    return min(rivals, key=lambda s: s.key, default=None)


def picked_by_selector(candidate: Candidate, backend: str | None,
                       options: Mapping[str, Any] | None) -> bool:
    """Whether the selector, not the caller, picks ``candidate``: no backend was named
    (``None`` or ``"auto"``), or one was and ``candidate`` has options (the numba backend's
    ``driver``) the caller did not give."""
    return backend in (None, "auto") or any(
        name not in (options or {}) for name, _ in candidate.options)


def _trial_notes(tried: _Scored, leader: _Scored) -> list[str]:
    """Why a close call's runner-up runs in place of the leader (:func:`_runner_up_to_try`)."""
    return [f"trying the runner-up once: {tried.candidate.label} is estimated at "
            f"{tried.key / leader.key:.2f}x {leader.candidate.label}'s time per effective "
            "draw, within the estimates' typical error, and has not run this model; "
            f"{leader.candidate.label} has, and recorded its effective draws. This run records "
            f"{tried.candidate.label}'s, and later runs of the model choose between observed "
            f"figures ({TRY_RUNNER_UP}=off always runs the lowest estimate)"]


def _jax_device_notes(scored: list[_Scored], devices: Devices, chains: int) -> list[str]:
    """A note, with the fix, where JAX has fewer CPU devices than the run has chains side by
    side, and so a JAX sampler's CPU chains are priced (and will run) in turn."""
    side_by_side = min(chains, devices.cpu_cores)
    if not devices.jax_installed or side_by_side < 2:
        return []
    def held(vectorized: bool) -> list[str]:  # backends, in rank order, once each
        return list(dict.fromkeys(
            s.candidate.backend for s in scored
            if s.candidate.device == "cpu" and s.estimate.chain_parallelism < side_by_side
            and (s.candidate.option("chain_method") == "vectorized") == vectorized))

    in_turn, batched = held(False), held(True)
    count = jax_cpu_devices()
    if not (in_turn or batched) or count >= side_by_side:
        return []
    how = []
    if in_turn:
        how.append(f"the {chains} chains of {', '.join(in_turn)} on the CPU are priced to run "
                   f"{count} at a time, as they will")
    if batched:
        how.append(f"{', '.join(batched)} vectorize{'s' if len(batched) == 1 else ''} "
                   f"{'its' if len(batched) == 1 else 'their'} {chains} chains on one CPU "
                   "device, and are priced so")
    return [f"JAX has {count} CPU device{'s' if count > 1 else ''} for {devices.cpu_cores} "
            f"cores, so {'; '.join(how)}: {host_devices_fix(chains)}"]


def _geometry_notes(profile: ModelProfile) -> list[str]:
    """Advice on a posterior no sampler choice mends: a centred hierarchy's funnel."""
    if not profile.centred_hierarchies:
        return []
    names = ", ".join(profile.centred_hierarchies)
    return [f"centred hierarchy: the spread of {names} depends on other free variables (a "
            "funnel); NUTS may diverge in its neck and take trees of any length, so the "
            "estimates in the table give every NUTS the same trees. A non-centred "
            "parameterisation (x = mu + sigma * z, z ~ Normal(0, 1)) usually samples it many "
            "times faster"]


# model -> (fingerprint, profile): a model selected for again (explain() then sample(), a second
# pm.sample in a notebook) is profiled once while its variables and data shapes are unchanged.
_PROFILES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def model_fingerprint(model) -> tuple:
    """What a profile depends on: the model's variables (by identity), its data's shapes and
    dtypes, its dimension lengths, its initial values and the float precision."""
    import numpy as np
    import pytensor

    def data_of(v):
        return v.get_value(borrow=True) if hasattr(v, "get_value") else getattr(v, "data", v)

    def shape(v):
        data = data_of(v)
        return np.shape(data), str(getattr(data, "dtype", type(data).__name__))

    dims = tuple(sorted((k, repr(data_of(v))) for k, v in model.dim_lengths.items()))
    return (
        tuple(map(id, model.free_RVs)), tuple(map(id, model.observed_RVs)),
        tuple(map(id, model.potentials)), tuple(map(id, model.value_vars)),
        tuple(shape(d) for d in model.data_vars), dims,
        tuple((id(k), repr(v)) for k, v in model.rvs_to_initial_values.items()),
        pytensor.config.floatX,
    )


# structure_key(model) -> profile, most recent last: a model built again by the same code (a
# notebook cell run again) is not profiled again in the same process.
_BY_STRUCTURE: dict[tuple, ModelProfile] = {}
_BY_STRUCTURE_MAX = 32


def forget_profiles() -> None:
    """Forget the profiles and float32 checks kept in this process for models of a structure
    seen before (benchmarks timing what a first selection costs also set
    ``PYMC_ACCEL_PROFILE_CACHE=off``, which keeps :mod:`pymc_accel.profile_store` and
    :mod:`pymc_accel.check_store` from reading those of earlier processes)."""
    _BY_STRUCTURE.clear()
    check_store.forget()


def cached_profile(model) -> ModelProfile:
    """:func:`pymc_accel.profile.profile_model`, reused for the same model while its fingerprint is unchanged, and
    for a model of the same structure (:func:`pymc_accel.profile.structure_key`) profiled
    earlier in this process or, through :mod:`pymc_accel.profile_store`, in an earlier one;
    the reused profile's ``profile_seconds`` is what the lookup took."""
    return _cached_profile_and_logp(model)[0]


def _cached_profile_and_logp(model) -> tuple[ModelProfile, LogpGraph | None]:
    """:func:`cached_profile`, with the log density graph where the model was profiled now
    (``None`` for a reused profile)."""
    try:
        key = model_fingerprint(model)
        hit = _PROFILES.get(model)
    except TypeError:  # not weak-referenceable: profile every time
        return profile_and_logp(model)
    if hit is not None and hit[0] == key:
        return hit[1], None
    start = time.perf_counter()
    try:
        structure = structure_key(model)
    except Exception:  # an unusual graph: profile it, unshared
        structure = None
    kept = _BY_STRUCTURE.pop(structure, None) if structure is not None else None
    where = "in this process"
    if kept is None and structure is not None:
        kept, where = profile_store.load(structure), "in an earlier process"
    graph = None
    if kept is not None:  # the kept profile stays as profiled; the copy says it was reused
        profile = replace(kept, profile_seconds=time.perf_counter() - start,
                          note=(kept.note + "; " if kept.note else "")
                          + f"reused: a model of the same structure was profiled {where}")
    else:
        kept, graph = profile_and_logp(model)
        profile = kept
        if structure is not None:
            profile_store.save(structure, kept)
    if structure is not None:
        _BY_STRUCTURE[structure] = kept  # re-inserted last: the oldest is dropped first
        while len(_BY_STRUCTURE) > _BY_STRUCTURE_MAX:
            _BY_STRUCTURE.pop(next(iter(_BY_STRUCTURE)))
    _PROFILES[model] = (key, profile)
    return profile, graph


def _fit_memory(backend, candidate: Candidate, profile: ModelProfile, devices: Devices,
                run: SampleRequest) -> tuple[Candidate | Refusal, Any]:
    """A backend's optional ``fit_memory``: the candidate laid out to fit the device's memory
    (or refused with the figures), and its memory figure; unchanged without the method."""
    fit = getattr(backend, "fit_memory", None)
    if fit is None:
        return candidate, None
    return fit(candidate, profile, devices, run)


def _float32_only_where_faster(scored: list[_Scored]) -> list[_Scored]:
    """``scored`` (ranked) with every float32 candidate that is not :data:`FLOAT32_MIN_GAIN`
    faster than the same candidate in float64 ranked just behind it, and noted so: float32 is
    chosen only where it is faster, and the accuracy check is not run for a gain within the
    estimates' error."""
    def twin(s: _Scored) -> _Scored | None:
        c = s.candidate
        return next((o for o in scored if not o.needs_guard
                     and _sampler(o.candidate) == _sampler(c)
                     and o.candidate.precision != c.precision), None)

    keys = {}
    for s in scored:
        other = twin(s) if s.needs_guard else None
        if other is not None and s.key * FLOAT32_MIN_GAIN > other.key:
            s.behind_float64 = (f"float32 estimated {other.key / s.key:.2f}x as fast as "
                                f"{other.candidate.precision}, under the {FLOAT32_MIN_GAIN:.2f}x "
                                "it must gain to be preferred")
            keys[id(s)] = (other.key, 1)
        else:
            keys[id(s)] = (s.key, 0)
    return sorted(scored, key=lambda s: keys[id(s)])


#: The scale spread up to which a leader must keep its lead for the spread not to be evaluated
#: (:func:`_with_scale_spread`): above the largest of the 17 models NumPyro's early tuning was
#: counted on (groups_503, 64). Where NumPyro leads by a margin only a larger spread would
#: overturn, the evaluation (14-349 ms in first selections of the quick zoo and held-out
#: models, most where no float32 check shares its compile) would not pay for itself.
SPREAD_WORTH_EVALUATING = 100.0
#: Seconds measured mode's budget must have left, beyond the float32 check's reserve, for the
#: scale spread to be evaluated after the timings: above the most it took on the quick zoo and
#: held-out models (0.35 s, the pharmacokinetic Scan model's).
SPREAD_SECONDS_AFTER_MEASURING = 0.5


def _with_scale_spread(scored: list[_Scored], profile: ModelProfile, model: Any,
                       logp_graph: LogpGraph | None, kept: _KeptCheck,
                       run: tuple[int, int, int], may_evaluate: bool = True) -> ModelProfile:
    """The profile with the model's scale spread (:mod:`pymc_accel.curvature`) where it could
    change the choice, and ``scored`` re-ranked with it (in place).

    Candidates whose early tuning is priced as NumPyro's
    (:func:`~pymc_accel.costmodel.stan_tuning_extra_gradients`) are ranked with the spread at
    its least (1, variables alike) and at :data:`SPREAD_WORTH_EVALUATING`; only where the
    leader differs between the two is the spread evaluated, a gradient per variable at the
    initial point, or read where this model, data and start had it evaluated before
    (:mod:`pymc_accel.check_store`). A model whose spread cannot be evaluated, or need not be
    (``may_evaluate`` False: measured mode's budget is spent) and was not kept, keeps the
    dimension's law."""
    from pymc_accel import costmodel

    if model is None or profile.scale_spread is not None or len(scored) < 2:
        return profile
    law = costmodel.stan_tuning_extra_gradients(profile)
    priced = {id(s) for s in scored if s.estimate.extra_gradients == law}
    if not priced:
        return profile

    def leader(spread: float) -> Candidate:
        figure = costmodel.stan_tuning_extra_gradients(replace(profile, scale_spread=spread))
        keys = []
        for s in scored:
            if id(s) in priced:
                s = replace(s, estimate=replace(s.estimate, extra_gradients=figure))
                s.rescore(*run)
            keys.append((s.key, s.candidate.label))
        return min(keys)[1]

    if leader(1.0) == leader(SPREAD_WORTH_EVALUATING):
        return profile
    spread = _kept_scale_spread(model, profile, logp_graph, kept, may_evaluate)
    if spread is None:
        return profile
    profile = replace(profile, scale_spread=spread.value, scale_spread_note=spread.describe())
    figure = costmodel.stan_tuning_extra_gradients(profile)
    for s in scored:
        if id(s) in priced:
            s.estimate = replace(s.estimate, extra_gradients=figure)
            s.rescore(*run)
    scored.sort(key=lambda s: s.key)
    return profile


#: The posterior conditioning (the spread of its correlation scales) up to which a leader must
#: keep its lead for the conditioning not to be evaluated (:func:`_with_conditioning`):
#: NumPyro's trees priced 3.1x, PyMC's 2.9x and nutpie's 2.0x longer there
#: (:data:`pymc_accel.costmodel.CONDITIONING_EXPONENT`), as at ``cond(R)`` 1,000 before; the
#: spline, adstock, skew-t, hsgp and horseshoe models, whose trees ran 2.2x-16x their price,
#: sit at 14.6-48.8 (docs/results/fit-tree-length-cpu-2026-12-02-spread.txt).
CONDITIONING_WORTH_EVALUATING = 8.0
#: What the conditioning's evaluation may take, as a share of the leader's estimated run, and
#: at least: it is evaluated only where it could change the choice, which on the spline was
#: worth 1.47x of its run, and it took 0.04-0.51 s on the five models whose trees ran 2x-16x
#: their price (43-348 evaluations; 0.51 s on the adstock model, whose float64 run took 2.0 s:
#: docs/results/fit-tree-length-cpu-2026-12-02-mode-forward.txt). Kept for the model, data and
#: start, a later selection of the same model reads it. A floor of 0.1 s, its evaluations capped at
#: the first one's pace, left the spline without it in the regret benchmark's process
#: (docs/results/regret-cpu-1000-2026-12-02-conditioning.md: 1.45), so it runs to the budget.
CONDITIONING_BUDGET_SHARE = 0.15
CONDITIONING_BUDGET_LEAST = 0.2


def _with_conditioning(scored: list[_Scored], profile: ModelProfile, model: Any,
                       logp_graph: LogpGraph | None, kept: _KeptCheck,
                       run: tuple[int, int, int], may_evaluate: bool = True,
                       most_seconds: float = math.inf) -> ModelProfile:
    """The profile with the posterior's conditioning at its mode
    (:mod:`pymc_accel.conditioning`) where it could change the choice, and ``scored``
    re-ranked with it (in place), as :func:`_with_scale_spread` does with the scale spread.

    Candidates whose trees are priced by the dimension's law
    (:func:`~pymc_accel.costmodel.nuts_trajectory`; not where the run history has observed
    them) are ranked with the conditioning at its least (1) and at
    :data:`CONDITIONING_WORTH_EVALUATING`; only where the leader differs between the two is it
    evaluated, within :data:`CONDITIONING_BUDGET_SHARE` of the leader's estimated run (at least
    :data:`CONDITIONING_BUDGET_LEAST`) and ``most_seconds`` (what measured mode's budget has
    left), or read where this model, data and start had it evaluated before
    (:mod:`pymc_accel.check_store`)."""
    from pymc_accel import conditioning, costmodel

    if (model is None or profile.posterior_conditioning is not None or len(scored) < 2
            or profile.centred_hierarchies or profile.n_free > conditioning.MAX_DIM):
        return profile
    adaptations = {scale: name for name, scale in costmodel.NUTS_TRAJECTORY_SCALE.items()}
    priced = {}
    for s in scored:
        adaptation = adaptations.get(s.estimate.trajectory_scale)
        law = (costmodel.nuts_trajectory(profile, adaptation)["gradients_per_draw"]
               if adaptation else None)
        if law is not None and s.estimate.gradients_per_draw == law:
            priced[id(s)] = adaptation
    if not priced:
        return profile

    def trees(at: ModelProfile, s: _Scored) -> _Scored:
        steps = costmodel.nuts_trajectory(at, priced[id(s)])["gradients_per_draw"]
        return replace(s, estimate=replace(s.estimate, gradients_per_draw=steps))

    def leader(cond: float) -> str:
        """The candidate chosen at conditioning ``cond``: float32 behind float64 where it
        gains too little (:func:`_float32_only_where_faster`), as the choice is made."""
        at = replace(profile, posterior_conditioning=cond)
        ranked = []
        for s in scored:
            s = trees(at, s) if id(s) in priced else replace(s)
            s.rescore(*run)
            ranked.append(s)
        return _float32_only_where_faster(ranked)[0].candidate.label

    if leader(1.0) == leader(CONDITIONING_WORTH_EVALUATING):
        return profile
    budget = min(most_seconds,
                 max(CONDITIONING_BUDGET_LEAST, CONDITIONING_BUDGET_SHARE * scored[0].total))
    found = _kept_conditioning(model, profile, logp_graph, kept, budget, may_evaluate)
    if found is None:
        return profile
    profile = replace(profile, posterior_conditioning=found.value,
                      posterior_conditioning_note=found.describe())
    for s in scored:
        if id(s) in priced:
            s.estimate = trees(profile, s).estimate
            s.rescore(*run)
    scored.sort(key=lambda s: s.key)
    return profile


def _kept_conditioning(model: Any, profile: ModelProfile, logp_graph: LogpGraph | None,
                       kept: _KeptCheck, budget_seconds: float, may_evaluate: bool = True
                       ) -> Any:
    """The model's :class:`~pymc_accel.conditioning.PosteriorConditioning`, as
    :func:`_kept_figure` keeps it, evaluated within ``budget_seconds``."""
    from pymc_accel import conditioning

    return _kept_figure(
        model, profile, logp_graph, kept, check_store.conditioning_key(kept.key()),
        check_store.load_conditioning, check_store.save_conditioning,
        lambda graph, start: conditioning.posterior_conditioning(graph, start, budget_seconds),
        may_evaluate)


def _kept_scale_spread(model: Any, profile: ModelProfile, logp_graph: LogpGraph | None,
                       kept: _KeptCheck, may_evaluate: bool = True) -> Any:
    """The model's :class:`~pymc_accel.curvature.ScaleSpread` at its initial point, as
    :func:`_kept_figure` keeps it."""
    from pymc_accel import curvature

    return _kept_figure(model, profile, logp_graph, kept, check_store.spread_key(kept.key()),
                        check_store.load_spread, check_store.save_spread,
                        curvature.scale_spread, may_evaluate)


def _kept_figure(model: Any, profile: ModelProfile, logp_graph: LogpGraph | None,
                 kept: _KeptCheck, key: str | None, load: Any, save: Any, evaluate: Any,
                 may_evaluate: bool = True) -> Any:
    """A figure of the model's log density from its start (the scale spread, the posterior's
    conditioning): kept from an earlier selection of this model, data and start (``load(key)``),
    else (if ``may_evaluate``) ``evaluate(graph, start)`` on the profile's log density and
    gradient (built again, once a selection, where the profile was reused:
    :meth:`_KeptCheck.gradient_graph`) and kept (``save``); ``None`` where it cannot be had or
    the model reads more data than :data:`pymc_accel.curvature.MAX_DATA_BYTES`."""
    from pymc_accel import curvature

    if profile.data_bytes > curvature.MAX_DATA_BYTES:
        return None
    found = load(key)
    if found is not None or not may_evaluate:
        return found
    try:
        found = evaluate(kept.gradient_graph(profile, logp_graph), kept.start_point())
    except Exception:  # a graph the evaluation cannot build: the dimension's law
        return None
    save(key, found)
    return found


class _KeptCheck:
    """The float32 check of one selection's model: read from :mod:`pymc_accel.check_store` at
    most once (its key hashes the model's data), and kept there once run; with the model's
    initial point, which the check, the scale spread and the conditioning start from, and its
    log density and gradient where the profile was reused without them."""

    def __init__(self, model, initvals):
        self.model, self.initvals = model, initvals
        self._key: str | None = None
        self._keyed = False
        self._loaded = False
        self._check: PrecisionCheck | None = None
        self._start: dict | None = None
        self._graph: LogpGraph | None = None

    def get(self) -> PrecisionCheck | None:
        """The kept check of this model, data and start, or ``None``."""
        if not self._loaded:
            self._loaded = True
            self._check = check_store.load(self.key())
        return self._check

    def key(self) -> str | None:
        """The check's key (:func:`pymc_accel.check_store.check_key`), computed once; ``None``
        for an unusual graph, which is checked every time."""
        if not self._keyed:
            self._keyed = True
            if self.model is not None:
                try:
                    self._key = check_store.check_key(self.model, self.initvals)
                except Exception:
                    self._key = None
        return self._key

    def start_point(self) -> dict:
        """The model's initial point from the selection's ``initvals``, evaluated once for the
        scale spread and the float32 check (7-12 ms a second time on ordinal_9 and
        groups_503)."""
        if self._start is None:
            from pymc_accel.graph_building import initial_point

            self._start = initial_point(self.model, self.initvals)
        return self._start

    def start_from(self, point: dict) -> None:
        """Take ``point`` as the initial point without ``initvals``, evaluated already."""
        self._start = point

    def gradient_graph(self, profile: ModelProfile, logp_graph: LogpGraph | None) -> LogpGraph:
        """``logp_graph``, or where the profile was reused without one (or without its
        gradient) the model's log density and gradient built again, once for the scale spread
        and the conditioning both."""
        if logp_graph is not None and logp_graph.grads is not None:
            return logp_graph
        if self._graph is None:
            import pytensor

            logp = self.model.logp()
            value_vars = list(self.model.value_vars)
            self._graph = LogpGraph(value_vars, logp, pytensor.grad(logp, value_vars),
                                    profile.data_bytes)
        return self._graph

    def keep(self, check: PrecisionCheck) -> PrecisionCheck:
        """Keep a check just run for the next selection of this model; return it."""
        self.get()
        check_store.save(self._key, check)
        return check


def _unsafe_reason(check: PrecisionCheck) -> str:
    return f"{check.summary()}; float64 is used instead"


def _guard(model, initvals, budget_seconds: float | None = None,
           kept: _KeptCheck | None = None,
           logp_graph: LogpGraph | None = None) -> tuple[PrecisionCheck | None, str | None]:
    """Run the float32 accuracy guard, or read it where ``kept`` holds this model's; return the
    check and, if float32 must be refused, why. ``budget_seconds`` bounds its jittered points
    (the initial point is always checked); ``logp_graph``, the log density the model's profile
    built, saves building it again."""
    if model is None:
        return None, (
            "float32 accuracy not checked: select() was given a profile without its model; "
            "pass the model, or precision='float32' to use float32 unchecked"
        )
    check = kept.get() if kept is not None else None
    if check is None:
        kwargs = {} if budget_seconds is None else {"budget_seconds": budget_seconds}
        try:
            if kept is not None:
                kwargs["start_point"] = kept.start_point()
            check = check_float32(model, initvals=initvals, logp_graph=logp_graph, **kwargs)
        except Exception as exc:  # an op the check cannot evaluate: float64, not a failure
            return None, (f"float32 accuracy could not be checked ({type(exc).__name__}: "
                          f"{str(exc)[:200]}); float64 is used instead")
        if kept is not None:
            kept.keep(check)
    if check.safe:
        return check, None
    return check, _unsafe_reason(check)


def _process_line() -> str:
    """What the report says of this process's runtimes (:mod:`pymc_accel.first_use`)."""
    if not first_use.enabled():
        return "first use of samplers not charged (PYMC_ACCEL_FIRST_USE=off)"
    ran = sorted(first_use.used())
    if not ran:
        return ("no sampler has run in this process yet: estimates include each one's first "
                "use (1st use)")
    return (f"already run here: {', '.join(ran)}; estimates include the first use of the "
            "others (1st use)")


def _row(s: _Scored, chosen: _Scored, registry: Registry, check: PrecisionCheck | None,
         leader: _Scored | None = None) -> Row:
    """The report's row of a ranked candidate; ``leader`` is the lowest estimate where a close
    call's runner-up was chosen to run once in its place (:func:`_runner_up_to_try`)."""
    e = s.estimate
    if s is chosen and leader is not None:
        status = "chosen"
        reason = (f"tried once: estimated {s.key / leader.key:.2f}x the lowest estimate's time "
                  "per effective draw, a close call, and has not run this model")
    elif s is chosen:
        status, reason = "chosen", "lowest estimated time per effective draw"
    elif s is leader:
        status = "accepted"
        reason = (f"lowest estimated time per effective draw ({s.key / chosen.key:.2f}x the "
                  "chosen one's); its run of this model recorded its effective draws, and the "
                  "runner-up runs once to record its own")
    else:
        status = "accepted"
        reason = f"estimated {s.key / chosen.key:.1f}x the chosen one's time per effective draw"
    if s.behind_float64:
        reason += f"; {s.behind_float64}"
    elif s.needs_guard:
        reason += (f"; {check.summary()}" if check else
                   "; float32 accuracy is checked only when float32 would be chosen")
    if s.check_seconds:
        reason += f"; ranked with the float32 check's {s.check_seconds:.2f} s (modelled) added"
        if s.check_shared_with:
            later = s.check_shared_with
            reason += (f" (its share: the check is kept for the model, and {later} later "
                       f"run{' is' if later == 1 else 's are'} expected to reuse it)")
    if s.measure_note:
        reason += f"; {s.measure_note}"
    seen = []
    if e.gradients_per_draw.source == "observed":
        seen.append(f"{e.gradients_per_draw.value:.0f} grads/draw ({e.gradients_per_draw.note})")
    if e.fixed_seconds.source == "observed":
        seen.append(f"{e.fixed_seconds.value:.1f} s fixed ({e.fixed_seconds.note})")
    if "as observed" in e.relative_efficiency.note:  # its own run's effective draws
        seen.append(e.relative_efficiency.note)
    if seen:
        reason += "; observed: " + " and ".join(seen)
    if e.cold_compile_seconds.value > 0:
        what = "this run's program" if e.whole_program_cached else "this model's kernels"
        reason += (f"; includes {e.cold_compile_seconds.value:.1f} s compiling {what} "
                   f"({e.cold_compile_seconds.note})")
        if (shared := e.compile_shared_seconds()) > 0:
            reason += (f", ranked with {e.cold_compile_seconds.value - shared:.1f} s of it: "
                       f"{e.later_runs_sharing_compile.note or 'later runs share the rest'}")
    grad = e.seconds_per_gradient
    sources: dict[str, Any] = {
        # a timed gradient under a modelled driver is mostly modelled where the driver dominates
        "s/grad": (f"measured {grad.measured_share:.0%}, modelled {1 - grad.measured_share:.0%}"
                   if grad.source == "measured" and grad.measured_share < 0.5 else grad.source),
        "grads/draw": e.gradients_per_draw.source,
        "compile": e.fixed_seconds.source,
    }
    planned = bool(e.memory_bytes.note)  # a backend's memory plan, not the generic default
    return Row(
        s.candidate.label, s.candidate.backend, s.candidate.device, s.candidate.precision,
        status, reason, s.total, e.seconds_per_gradient.value, e.gradients_per_draw.value,
        e.fixed_seconds.value, ", ".join(f"{k} {v}" for k, v in sources.items()),
        registry.origins.get(s.candidate.backend, ""),
        memory_bytes=e.memory_bytes.value if planned else None,
        memory=e.memory_bytes.note if planned else "",
        relative_efficiency=e.relative_efficiency.value,
        first_use_seconds=e.first_use_seconds.value,
        cold_compile_seconds=e.cold_compile_seconds.value,
        cost_per_effective_draw=s.key / chosen.key if chosen.key > 0 else None,
    )
