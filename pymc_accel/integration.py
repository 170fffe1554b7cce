"""The PyMC call people already write: ``sample()`` with pm.sample's signature, and an opt-in
``enable()`` that lets ``pm.sample(nuts_sampler="auto")`` and registered backend names work."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pymc as pm
import pymc.sampling.mcmc as _mcmc

from pymc_accel import arguments, convergence, first_use, history, result_layout
from pymc_accel.backend import SampleRequest
from pymc_accel.backends import finite_starts
from pymc_accel.backends.pm_sample_logp import handed_over
from pymc_accel.devices import cpu_cores
from pymc_accel.errors import (
    DeviceOutOfMemoryError,
    NonFiniteInitialPointError,
    PluginError,
    PymcAccelError,
    SamplerStoppedError,
    StuckChainsWarning,
)
from pymc_accel.graph_building import Evaluator, initial_point, quietly
from pymc_accel.measure import DEFAULT_BUDGET_SECONDS
from pymc_accel.precision import as_backends_rewrite
from pymc_accel.registry import BUILTIN_PLUGIN_NAME, get_registry
from pymc_accel.report import ATTRS_KEY, SelectionReport
from pymc_accel.selection import (
    TRYING_RUNNER_UP,
    picked_by_selector,
    refuse_float32_models_under_another_float_x,
    refuse_models_without_free_variables,
    run_length,
    select,
)

#: ``nuts_sampler`` values PyMC itself understands; they pass straight through to ``pm.sample``
#: unless a registered backend of the same name is asked for through :func:`sample`.
PYMC_SAMPLERS = ("pymc", "nutpie", "numpyro", "blackjax")

# pm.sample as PyMC defines it, captured before any patching by enable().
_PM_SAMPLE = _mcmc.sample

# pm.sample keywords a backend that calls pm.sample forwards unchanged.
_PYMC_ONLY_KWARGS = (
    "init", "jitter_max_retries", "n_init", "trace", "keep_warning_stat", "callback", "mp_ctx",
    "blas_cores", "compile_kwargs", "backend", "progressbar_theme", "return_inferencedata",
    "step",
)


@quietly
def check_initial_point(model: pm.Model, initvals: dict | None = None) -> None:
    """Raise :class:`NonFiniteInitialPointError` if the log density is not finite at the start.

    Each variable's log density, with PyTensor's stabilizing rewrites applied as every backend
    applies them, is evaluated at the initial point op by op in Python (no numba or JAX
    compilation, no compile at all: :class:`pymc_accel.graph_building.Evaluator`), so the
    check is cheap. Potentials are checked with the random variables.
    """
    from pymc.logprob.utils import ParameterValueError

    point = initial_point(model, initvals)
    # a starting value outside its variable's support (initvals={"sigma": -1.0}) is not finite
    # once transformed (log(-1)), and PyMC's parameter checks raise on it instead of giving -inf
    rv_names = {v.name: model.values_to_rvs[v].name for v in model.value_vars}
    outside = [rv_names.get(name, name) for name, value in point.items()
               if not np.all(np.isfinite(value))]
    if outside:
        raise NonFiniteInitialPointError(
            f"The initial point is not finite in {', '.join(outside)}: a starting value lies "
            "outside its variable's support (a negative scale, a probability outside [0, 1]). "
            "Pass initvals={...} with values inside the support, or leave them out."
        )
    terms = model.free_RVs + model.observed_RVs + model.potentials  # model.logp's order
    # the rewrites the float32 check applies, as the backends do
    logp_terms = as_backends_rewrite(model.logp(terms, sum=False))
    inputs = list(model.value_vars)
    try:
        logps = Evaluator(inputs, logp_terms)(*[point[v.name] for v in inputs])
    except ParameterValueError as exc:  # a distribution's parameter invalid at the start
        raise NonFiniteInitialPointError(
            f"The model's log density is not defined at the initial point: a parameter check "
            f"failed ({exc}). Check the priors' parameters, or pass initvals={{...}} with "
            "starting values that give valid parameters."
        ) from None
    bad = [
        (term.name, float(np.sum(lp)))
        for term, lp in zip(terms, logps, strict=True)
        if not np.all(np.isfinite(lp))
    ]
    if bad:
        listed = ", ".join(f"{name} (logp={value})" for name, value in bad)
        raise NonFiniteInitialPointError(
            f"The model's log density is not finite at the initial point: {listed}. Check that "
            "the observed data lie in each likelihood's support and the priors' parameters are "
            "valid, or pass initvals={...} with a starting value inside the support."
        )


def _check_start(model: pm.Model, initvals: dict | None, *, kept: bool = False) -> None:
    """:func:`check_initial_point`, raising only :class:`NonFiniteInitialPointError`.

    Before a sampler that does not check its start itself, a check that cannot evaluate the
    model (an op it cannot run) lets the sampler start, which then fails its own way if the
    start is bad. After a sampler that checks its own start failed, it names the variables if
    the start is the cause, and otherwise returns: the caller re-raises the sampler's own error,
    which a failing check must not hide. With ``kept``, a check passed before by a model of the
    same structure, data and initial values is not run again
    (:func:`pymc_accel.check_store.start_passed`), and a passed one is kept."""
    from pymc_accel import check_store

    key = check_store.start_key(model, initvals) if kept else None
    if check_store.start_passed(key):
        return
    try:
        check_initial_point(model, initvals)
    except NonFiniteInitialPointError:
        raise
    except Exception:
        return
    check_store.keep_start(key)


def checks_its_own_start(candidate) -> bool:
    """Whether the candidate's sampler checks the initial point itself before sampling: PyMC's
    own NUTS (``pm.sample``) and PyMC's JAX path (``sample_jax_nuts``, which the built-in
    NumPyro backend and the BlackJAX plugin drive) both evaluate the jittered start and raise
    ``SamplingError`` naming the variables, so :func:`check_initial_point` would repeat their
    work on every run (0.07 to 0.6 s on the zoo's models, more than selection itself); for them
    the check runs only when the sampler raises, to turn its error into
    :class:`NonFiniteInitialPointError`. nutpie (the numba backend's other driver) refuses a
    non-finite start too, with a RuntimeError; the check then runs the same way. Each backend
    says so with its optional ``checks_initial_point`` method
    (:class:`pymc_accel.backend.Backend`); one without it, or whose method raises, is checked
    first."""
    backend = get_registry().backends.get(candidate.backend)
    declared = getattr(backend, "checks_initial_point", None)
    if not callable(declared):
        return False
    try:
        return declared(candidate) is True
    except Exception:  # a plugin's mistake costs it the saving, never the run
        return False


def _request(draws: int, kwargs: dict[str, Any]) -> SampleRequest:
    # PyMC's default assumes half the CPUs are hyperthreads (cores=1 on a 2-CPU machine, so
    # chains run one after another); use the cores this process really has, capped at 4 as PyMC.
    cores = kwargs.pop("cores", None)
    if cores is None:
        cores = min(4, cpu_cores())
    elif isinstance(cores, bool) or not isinstance(cores, (int, np.integer)) or cores < 1:
        # some samplers divided by it, others overflowed, others ran: refuse it for all
        raise ValueError(f"cores must be a positive integer or None (PyMC's default), "
                         f"not {cores!r}")
    cores = int(cores)
    chains = kwargs.pop("chains", None)
    chains = run_length("chains", max(2, cores) if chains is None else chains)
    if kwargs.get("nuts") is not None and kwargs.get("nuts_sampler_kwargs") is not None:
        # as pm.sample: one would otherwise reach the backend as an option of that name
        raise ValueError("Cannot pass both `nuts_sampler_kwargs` and `nuts=`. Use `nuts=` only.")
    nuts = dict(kwargs.pop("nuts", None) or {})
    nuts.update(kwargs.pop("nuts_sampler_kwargs", None) or {})
    target_accept_given = "target_accept" in kwargs or "target_accept" in nuts
    target_accept = kwargs.pop("target_accept", nuts.pop("target_accept", 0.8))
    if isinstance(target_accept, bool) or not isinstance(target_accept, (int, float, np.floating)) \
            or not 0 < target_accept < 1:
        # 1.5 ran nutpie for 69 s where 3 s was estimated; 0 made every NumPyro draw divergent
        raise ValueError(f"target_accept must be a number between 0 and 1 (exclusive), e.g. "
                         f"0.8 or 0.95, not {target_accept!r}")
    tune = kwargs.pop("tune", None)
    pymc_kwargs = {k: kwargs.pop(k) for k in _PYMC_ONLY_KWARGS if k in kwargs}
    arguments.compile_mode_linker(pymc_kwargs)  # a clear error before any selection
    _check_random_seed(kwargs.get("random_seed"), chains)
    request = SampleRequest(
        draws=run_length("draws", draws),  # a NumPy integer as an int, before any sampler
        tune=run_length("tune", 1000 if tune is None else tune),
        chains=chains,
        cores=cores,
        random_seed=kwargs.pop("random_seed", None),
        initvals=kwargs.pop("initvals", None),
        target_accept=target_accept,
        target_accept_given=target_accept_given,
        var_names=kwargs.pop("var_names", None),
        progressbar=kwargs.pop("progressbar", True),
        quiet=kwargs.pop("quiet", False),
        compute_convergence_checks=kwargs.pop("compute_convergence_checks", True),
        discard_tuned_samples=kwargs.pop("discard_tuned_samples", True),
        idata_kwargs=kwargs.pop("idata_kwargs", None),
        backend_kwargs={**nuts, **kwargs},
        pymc_kwargs=pymc_kwargs,
    )
    kwargs.clear()
    return request


def sample(
    draws: int = 1000,
    *,
    nuts_sampler: str | None = "auto",
    model: pm.Model | None = None,
    device: str | None = None,
    precision: str | None = None,
    measure: bool = False,
    measure_budget: float | None = None,
    **kwargs: Any,
):
    """Draw posterior samples with the best backend for this model and machine.

    Takes every argument of :func:`pymc.sample` (``tune``, ``chains``, ``cores``,
    ``random_seed``, ``initvals``, ``var_names``, ``target_accept``, ``nuts={...}``,
    ``idata_kwargs``, ``progressbar``, ...) plus the ones below.

    Parameters
    ----------
    draws : int, default 1000
    nuts_sampler : str, default "auto"
        ``"auto"``: choose by the cost model. A registered backend name (``pymc-accel
        backends`` lists them): use that backend. One of PyMC's own samplers not registered
        here (``"pymc"``, ``"nutpie"``, ``"blackjax"``) or ``None``: call ``pm.sample``
        unchanged.
    model : pm.Model, optional
        Defaults to the model on the context stack.
    device : {"cpu", "gpu"}, optional
        Restrict selection to a device.
    precision : {"float32", "float64"}, optional
        Force a precision. By default the model's own, or float32 for a float64 model where it
        is estimated faster and :func:`pymc_accel.precision.check_float32` finds it accurate;
        such an automatic float32 run whose share of divergent transitions exceeds
        :data:`pymc_accel.precision.DIVERGENCE_FALLBACK_FRACTION` is re-run in float64, and the
        report's ``notes`` say so.
    measure : bool, default False
        Compile and time the candidates' gradients (at most about 5 s) before choosing; the
        report marks each figure measured or modelled.
    measure_budget : float, optional
        Seconds the measured selection may take (default
        :data:`pymc_accel.measure.DEFAULT_BUDGET_SECONDS`); needs ``measure=True``.

    Returns
    -------
    xarray.DataTree
        What ``pm.sample`` returns: posterior, sample_stats, observed_data, constant_data, with
        the model's coords and dims. ``attrs["pymc_accel_selection"]`` holds the selection report
        (read it back with ``SelectionReport.from_idata``).

    Raises
    ------
    UnknownBackendError, BackendUnavailableError, DeviceUnavailableError,
    DiscreteVariablesError, NonFiniteInitialPointError, PluginError
    UnsupportedArgumentError
        An argument no sampler can run with; also a model built in float32 sampled while
        ``pytensor.config.floatX`` is float64.
    pymc.exceptions.SamplingError
        The model has no free variables, as ``pm.sample`` raises.
    """
    if measure_budget is not None and not measure:
        raise ValueError(f"measure_budget={measure_budget!r} is the budget of measured "
                         "selection: pass measure=True with it, or drop it")
    if measure_budget is None:
        measure_budget = DEFAULT_BUDGET_SECONDS
    registry = get_registry()
    if nuts_sampler != "auto" and nuts_sampler not in registry.backends:
        if nuts_sampler is None or nuts_sampler in PYMC_SAMPLERS:
            if device is not None or precision is not None:
                raise ValueError(
                    f"device= and precision= need a pymc-accel backend; nuts_sampler="
                    f"{nuts_sampler!r} is PyMC's own. Use nuts_sampler='auto' or one of "
                    f"{', '.join(registry.names())}."
                )
            return _PM_SAMPLE(draws, nuts_sampler=nuts_sampler, model=model, **kwargs)
        registry.get(nuts_sampler)  # raises UnknownBackendError listing the registered names
    model = pm.modelcontext(model)
    refuse_models_without_free_variables(model)
    refuse_float32_models_under_another_float_x(model)
    request = _request(draws, kwargs)
    if request.pymc_kwargs.get("return_inferencedata", True) is False:
        raise ValueError(
            "return_inferencedata=False asks for PyMC's MultiTrace, which pymc-accel's samplers "
            "do not make (their results are InferenceData, with the selection report in its "
            "attrs) and PyMC has deprecated: drop it, or call pm.sample(nuts_sampler='pymc', "
            "return_inferencedata=False) for a MultiTrace from PyMC's own NUTS."
        )
    _check_var_names(model, request.var_names, request.idata_kwargs)
    starts = _check_initvals(model, request.initvals)
    logp_graph: list = []  # the log density the selection builds, for the run
    report = _select_for(model, request, backend=nuts_sampler, device=device,
                         precision=precision, registry=registry, measure=measure,
                         measure_budget=measure_budget, _logp_graph_out=logp_graph)
    # held for a JAX run, which jaxifies it (a frozen copy's holds a copy of the data), and for
    # a run through pm.sample where it is the model's own (pm_sample_logp: built on the model
    # itself, it holds the model's own data)
    if logp_graph and (_runs_on_jax(report) or handed_over(model, logp_graph[0])):
        request.logp_graph = logp_graph[0]
    del logp_graph
    if report.model_profile is not None:
        request.gradient_free_vars = tuple(report.model_profile.gradient_free_vars)
    arguments.warn_ignored(registry.backends[report.candidate.backend], report.candidate, request)
    sampler_checks = checks_its_own_start(report.candidate)
    if not sampler_checks:
        for initvals in starts:
            _check_start(model, initvals, kept=True)
    if not request.quiet:
        from rich.console import Console

        from rich.markup import escape

        Console(stderr=True).print(
            f"pymc-accel: sampling with [bold]{escape(report.chosen)}[/bold] "
            f"(chosen by {escape(report.chosen_by)})"
        )
    if report.chosen_by == TRYING_RUNNER_UP:  # tried once, whether or not it succeeds
        history.mark_tried(report.model_profile, report.candidate)
    try:
        try:
            idata = _run_backend(model, report, request, registry)
        except Exception as exc:
            again = dict(backend=nuts_sampler, device=device, precision=precision,
                         registry=registry, measure=measure, measure_budget=measure_budget)
            if report.chosen_by == TRYING_RUNNER_UP:
                report = _after_failed_trial(model, request, report, exc, starts, **again)
            elif isinstance(exc, SamplerStoppedError) and picked_by_selector(
                    report.candidate, nuts_sampler, request.backend_kwargs):
                report = _after_sampler_stopped(model, request, report, exc, starts, **again)
            else:
                raise
            sampler_checks = checks_its_own_start(report.candidate)
            idata = _run_backend(model, report, request, registry)
    except Exception:
        if sampler_checks:  # the sampler found no finite start: say which variable, suggest initvals
            try:
                for initvals in starts:
                    _check_start(model, initvals)
            except NonFiniteInitialPointError as named:
                # the clear error alone: the sampler's traceback above it said the same, noisily
                raise named from None
        raise
    if precision is None and _automatic_float32(report):
        idata, report = _fall_back_if_diverging(idata, report, model, request, registry, device)
    automatic = nuts_sampler == "auto" and device is None and precision is None
    idata, report = _fall_back_if_wrong_gradient(idata, report, model, request, registry,
                                                 automatic)
    idata, report = _fall_back_if_stuck(idata, report, model, request, registry, automatic)
    idata.attrs[ATTRS_KEY] = report.to_json()
    idata.attrs["pymc_accel_candidate"] = report.chosen
    return idata


def _plugin_error(backend: str, origin: str, registry, what: str) -> PluginError:
    """A :class:`PluginError` naming the backend, its distribution, how to leave it out of
    ``auto`` and the other backends."""
    others = [n for n in registry.names() if n != backend]
    return PluginError(
        f"Backend {backend!r} from plugin {origin} {what}. Meanwhile set "
        f"PYMC_ACCEL_BLOCK_PLUGINS={backend} to leave it out of nuts_sampler='auto', or name "
        f"one of {', '.join(others)}."
    )


def _check_var_names(model: pm.Model, var_names, idata_kwargs: dict | None = None) -> None:
    """Refuse ``var_names`` that name no variable of the model, before any sampler meets them:
    PyMC's JAX path raised ``TypeError: 'NoneType' object is not iterable``, PyMC's NUTS an
    ``AssertionError``, and nutpie dropped them without a word, so the same call failed or not
    by the sampler chosen. Refuse too ``var_names`` that leave out a free variable when
    ``idata_kwargs`` asks for the log prior, which is evaluated at every free variable's draws
    (``pm.sample`` raised ``KeyError`` after sampling)."""
    if var_names is None:
        return
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    left_out = [rv.name for rv in model.free_RVs if rv.name not in names]
    if (idata_kwargs or {}).get("log_prior") and left_out:
        raise ValueError(
            f"idata_kwargs={{'log_prior': True}} needs the draws of every free variable, and "
            f"var_names leaves out {', '.join(left_out)}: add them to var_names, or compute "
            "the log prior later with pm.stats.compute_log_prior(idata) on a run that keeps "
            "them.")
    transformed = {model.rvs_to_values[rv].name for rv in model.free_RVs} - set(model.named_vars)
    on_sampler_scale = [n for n in names if n in transformed]
    if on_sampler_scale:  # samplers raised TypeError, AssertionError, or kept them silently
        raise ValueError(
            f"var_names {on_sampler_scale} are values on the sampler's (transformed) scale, "
            "which var_names does not take: name the variables themselves, and pass "
            "idata_kwargs={'include_transformed': True} to keep the transformed values too.")
    known = set(model.named_vars) | {v.name for v in model.value_vars}
    unknown = [n for n in names if n not in known]
    if unknown:
        listed = ", ".join(sorted(v.name for v in model.free_RVs + model.deterministics))
        raise ValueError(f"var_names {unknown} are not variables of the model; its free and "
                         f"deterministic variables are: {listed}")


def _check_random_seed(seed, chains: int) -> None:
    """Refuse a ``random_seed`` no sampler takes before one meets it: a ``RandomState`` reached
    the plugins' samplers as a ``TypeError``, reported as the plugin's failure."""
    if seed is None or isinstance(seed, (int, np.integer, np.random.Generator)):
        if isinstance(seed, bool):
            raise TypeError("random_seed must be an int, a numpy Generator or one int per "
                            "chain, not a bool")
        _refuse_negative([seed])
        return
    if isinstance(seed, (list, tuple, np.ndarray)):
        if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in seed):
            raise TypeError("random_seed as a list must hold one int per chain")
        _refuse_negative(seed)
        if len(seed) != chains:
            raise ValueError(f"random_seed has {len(seed)} seeds for {chains} chains: give one "
                             "per chain, or a single int")
        return
    raise TypeError(f"random_seed must be an int, a numpy Generator (np.random.default_rng(...)) "
                    f"or one int per chain, not {type(seed).__name__}")


def _refuse_negative(seeds) -> None:
    """A negative seed, as ``pm.sample`` refuses it (NumPyro's and DEER-MALA's runs failed deep
    in NumPy's SeedSequence: "expected non-negative integer")."""
    negative = [int(s) for s in seeds if isinstance(s, (int, np.integer)) and s < 0]
    if negative:
        raise ValueError(f"random_seed = {negative[0]} is not allowed: seeds are non-negative "
                         "integers. Pass None to not specify a seed.")


def _check_initvals(model: pm.Model, initvals) -> list[dict | None]:
    """The starting values to check, one dict or one per chain (``pm.sample`` takes both), or
    ``[None]``; starting values that name no free variable, or whose shape is not the
    variable's, are refused before any sampler meets them: PyMC raised a bare ``KeyError`` for
    the first and a PyTensor ``TypeError`` ("Cannot convert Type Vector...") for the second."""
    if initvals is None:
        return [None]
    if isinstance(initvals, dict):
        per_chain = [initvals]
    elif isinstance(initvals, (list, tuple)) and all(isinstance(v, dict) for v in initvals):
        per_chain = list(initvals)
    else:
        raise TypeError(f"initvals must be a dict of starting values, or a list of one dict per "
                        f"chain, not {type(initvals).__name__}.")
    # a variable, or its value on the sampler's scale (``"sigma_log__"``), as PyMC takes both
    by_name = {rv.name: rv for rv in model.free_RVs}
    by_name.update({model.rvs_to_values[rv].name: model.rvs_to_values[rv] for rv in model.free_RVs})
    for start in per_chain:
        for key, value in start.items():
            name = getattr(key, "name", key)
            var = by_name.get(name)
            if var is None:
                raise ValueError(
                    f"initvals names {name!r}, which is not a free variable of the model; its "
                    f"free variables are: {', '.join(sorted(v.name for v in model.free_RVs))}")
            if isinstance(value, str) or value is None:  # PyMC's "prior", "support_point"
                continue
            shape = np.shape(value)
            static = var.type.shape
            if len(shape) != len(static) or any(
                    want is not None and got != want for got, want in zip(shape, static)):
                known = "(" + ", ".join("?" if d is None else str(d) for d in static) + ")"
                raise ValueError(
                    f"initvals[{name!r}] has shape {shape}, but {name} has shape {known}: "
                    "give an array of the variable's shape.")
    return per_chain or [None]


def _after_failed_trial(model, request, tried: SelectionReport, exc: Exception, starts,
                        **select_kwargs) -> SelectionReport:
    """The selection to run after a close call's runner-up, tried once
    (``selection._runner_up_to_try``), failed: the selector's own choice, not the user's, so the
    run goes on with the next one (marked as tried, the runner-up is not chosen again), its
    start checked where it does not check it itself, and the failure in the report's notes."""
    again = _select_for(model, request, **select_kwargs)
    note = (f"the runner-up tried once, {tried.chosen}, failed ({type(exc).__name__}: "
            f"{str(exc)[:200]}); ran {again.chosen} instead")
    _go_on_with(model, request, again, note, starts)
    again.notes = [*again.notes, note]
    return again


def _go_on_with(model, request, again: SelectionReport, note: str, starts) -> None:
    """Before running ``again`` in place of a run that went wrong: check its start where its
    sampler does not check it itself, and say ``note`` on the console."""
    if not checks_its_own_start(again.candidate):
        for initvals in starts:
            _check_start(model, initvals, kept=True)
    if not request.quiet:
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True).print(f"pymc-accel: {escape(note)}")


def _after_sampler_stopped(model, request, stopped: SelectionReport,
                           exc: SamplerStoppedError, starts, **select_kwargs
                           ) -> SelectionReport:
    """The selection to run after the selector's choice stopped at an error the log density
    raised where it proposed (:class:`~pymc_accel.errors.SamplerStoppedError`: PyMC's NUTS at
    numba's ``OverflowError``): the same selection without it, so that a sampler that counts
    such a step as divergent runs instead. The run history keeps the stop, so that later
    selections of the model leave the sampler out (:func:`pymc_accel.history.mark_stopped`),
    and the report's notes and refusals say why."""
    error = type(exc.error).__name__ if exc.error is not None else "an error"
    if stopped.model_profile is not None:
        history.mark_stopped(stopped.model_profile, stopped.candidate)
    reason = (f"its run stopped: the log density raised {error} at a point it proposed, "
              "where other samplers count the step as divergent")
    again = _select_for(model, request, profile=stopped.model_profile,
                        _exclude={stopped.candidate.label: reason}, **select_kwargs)
    note = (f"{stopped.chosen} stopped ({error} in the log density at a proposed point); "
            f"ran {again.chosen} instead")
    _go_on_with(model, request, again, note, starts)
    again.notes = [*stopped.notes, note]
    return again


def _automatic_float32(report: SelectionReport) -> bool:
    """Whether float32 was chosen by the selector for a model built in float64."""
    return (
        report.candidate.precision == "float32"
        and report.profile.get("precision of model") == "float64"
    )


def _fall_back_if_diverging(idata, report, model, request, registry, device):
    """Re-run in float64 when an automatically chosen float32 run diverged heavily."""
    from pymc_accel.precision import DIVERGENCE_FALLBACK_FRACTION, divergence_fraction

    fraction, where = divergence_fraction(idata)
    if not fraction > DIVERGENCE_FALLBACK_FRACTION:
        return idata, report
    first = report.chosen
    backend = report.candidate.backend if report.chosen_by == "user" else None
    report64 = select(
        model, backend=backend, device=device, precision="float64", draws=request.draws,
        tune=request.tune, chains=request.chains, registry=registry,
        profile=report.model_profile, arguments=arguments.given(request),
    )
    note = (
        f"float32 run with {first} had {fraction:.0%} divergent transitions in its {where} "
        f"(threshold {DIVERGENCE_FALLBACK_FRACTION:.0%}); re-ran in float64 with "
        f"{report64.chosen}"
    )
    return _re_run(model, request, registry, report, report64, note)


def _re_run(model, request, registry, first: SelectionReport, again: SelectionReport,
            note: str):
    """Run ``again`` after ``first``'s run went wrong: ``note`` said on the console and kept
    in the report with ``first``'s notes and float32 check, the start checked where the new
    sampler does not check it itself."""
    _go_on_with(model, request, again, note, _check_initvals(model, request.initvals))
    idata = _run_backend(model, again, request, registry)
    again.notes = [*first.notes, note]
    again.precision_check = first.precision_check
    return idata, again


#: How a user evaluates the gradient at the model's start, named in the stuck-chain warnings.
_GRADIENT_AT_START = "model.compile_dlogp()(model.initial_point())"


def _numba_re_run(model, request, registry, report, tries: list[dict]):
    """The selection, on the numba backend on the CPU, for a re-run of a run that went wrong:
    the first of ``tries`` (extra arguments of the selection, such as a driver) the backend
    can run, or ``None`` where it is not registered or can run none of them."""
    if "numba" not in registry.backends:
        return None
    for extra in tries:
        try:
            return _select_for(model, request, backend="numba", device="cpu",
                               registry=registry, profile=report.model_profile, **extra)
        except PymcAccelError:  # numba (or its nutpie driver) cannot run this model
            continue
    return None


def _fall_back_if_wrong_gradient(idata, report, model, request, registry, automatic: bool):
    """Re-run on PyTensor's gradient when the gradient an automatically chosen JAX run computed
    was not the derivative of its log density at the run's last draws
    (:mod:`pymc_accel.backends.last_gradients`); otherwise warn, naming the fix. Either way the
    report's notes say so.

    A JAX sampler differentiates the jaxified log density inside the program XLA compiles, and
    that gradient was wrong by orders of magnitude on sparse GPs whose inducing points sit on
    data inputs until :mod:`pymc_accel.rewrites.coincident_distances` held their distances: a
    run on it goes on to return draws, with no error, that are not the posterior's.
    ``automatic``: as for :func:`_fall_back_if_stuck`.
    """
    from pymc_accel.backends.last_gradients import LastGradients
    from pymc_accel.errors import GradientMismatchWarning

    check = LastGradients.from_idata(idata)
    if check is None or check.agrees:
        return idata, report
    problem = f"In the run with {report.chosen}, {check.describe()}"
    again = _numba_re_run(model, request, registry, report, [{}]) if automatic else None
    if again is None:
        fix = ("its draws may not be the posterior's. Sample with nuts_sampler='numba' (or "
               "'pymc'), whose gradient is PyTensor's, as pm.sample's is, and please report the "
               "model to pymc-accel")
        report.notes = [*report.notes, f"{problem}: {fix}"]
        warnings.warn(f"{problem}: {fix}.", GradientMismatchWarning, stacklevel=3)
        return idata, report
    note = (f"{problem}, so its draws may not be the posterior's; re-ran with {again.chosen}, "
            "whose gradient is PyTensor's")
    return _re_run(model, request, registry, report, again, note)


def _fall_back_if_stuck(idata, report, model, request, registry, automatic: bool):
    """Re-run on PyMC's own gradient when chains of an automatically chosen JAX run never left
    their start (:func:`pymc_accel.stuck_chains.stuck_chains`); otherwise warn, naming the fix.

    JAX differentiates the log density itself, and its derivative can be NaN where PyTensor's
    symbolic gradient, which PyMC's NUTS and nutpie run, is finite: PyMC's normal log-CDF (a
    censored or truncated normal) in the far tail is one known case (pymc-devs/pymc#7980). Such
    a run returns its chains' starts repeated, with PyMC's convergence warnings and no error.
    Chains that barely moved (:func:`pymc_accel.stuck_chains.frozen_chains`: NUTS whose step
    size collapsed in tuning, as NumPyro's and BlackJAX's did on a latent Student-t process
    whose JAX gradient was wrong, before its kernel's coinciding distances were held) are re-run
    or warned of the same way.
    ``automatic``: the caller left backend, device and precision to the selector, so the
    fallback (the numba backend, on the CPU, in the model's precision) is the selector's to
    choose.
    """
    from pymc_accel.stuck_chains import frozen_chains, stuck_chains

    stuck, frozen = stuck_chains(idata), []
    if not stuck:
        frozen = frozen_chains(idata)
        if not frozen:
            return idata, report
    chains = ("chain " if len(stuck or frozen) == 1 else "chains ") + ", ".join(
        map(str, stuck or frozen))
    if frozen:
        never_moved = (f"{chains} of the run with {report.chosen} barely moved (every draw at "
                       "the maximum tree depth, and a spread under 1% of the run's: a step "
                       "size that collapsed in tuning)")
    else:
        never_moved = (f"{chains} of the run with {report.chosen} never left "
                       f"{'its' if len(stuck) == 1 else 'their'} start (every draw the same)")
    if not request.tune:  # no adaptation: the first step size kept, and far too long
        warnings.warn(
            f"{never_moved}: with tune=0 the step size is never adapted, and NUTS rejected "
            "every proposal from its first one. Pass tune (pm.sample's default is 1000).",
            StuckChainsWarning, stacklevel=3)
        return idata, report
    problem = (f"{never_moved}, as NUTS does where its adaptation fails" if frozen
               else f"{never_moved}, as a chain does where the gradient is not finite")
    on_jax = _runs_on_jax(report)
    again = None
    nutpie_ran = (report.candidate is not None and report.candidate.backend == "numba"
                  and report.candidate.option("driver") == "nutpie")
    if automatic and (on_jax or (stuck and not nutpie_ran)):
        # a chain that never left its start: nutpie draws a start again until the log
        # density and its gradient are finite there, where PyMC's jitter (PyMC's NUTS, and
        # the JAX samplers through sample_jax_nuts) checks the log density only
        tries = ([{"options": {"driver": "nutpie"}}] if stuck else []) + ([{}] if on_jax else [])
        again = _numba_re_run(model, request, registry, report, tries)
    if again is None:
        if frozen and on_jax:
            fix = ("sample with another sampler (nuts_sampler='numba': PyMC's NUTS and nutpie "
                   "adapt their step size and mass matrix otherwise), or reparameterize the "
                   "model")
        elif frozen:  # the numba backend's own run: the other driver, or the model
            fix = ("sample with the other driver or another sampler, or reparameterize the "
                   "model")
        elif on_jax:
            fix = ("JAX's derivative of the log density can be NaN where PyTensor's gradient "
                   "is finite (PyMC's normal log-CDF in the far tail is one known case, "
                   "pymc-devs/pymc#7980): sample with nuts_sampler='numba', whose gradient is "
                   "PyTensor's, as pm.sample's is")
            if report.candidate.precision == "float32":
                fix += ", or with precision='float64'"
        else:
            fix = ("the log density's gradient is not finite there: check it near the start "
                   f"({_GRADIENT_AT_START}) and pass initvals nearer the posterior")
            if not nutpie_ran:
                fix += (", or sample with nuts_sampler='numba', driver='nutpie', which draws a "
                        "start again until the gradient there is finite")
        what = "barely moved from where tuning left them" if frozen else "that start repeated"
        warnings.warn(f"{problem}. Its draws {what}; {fix}.", StuckChainsWarning, stacklevel=3)
        return idata, report
    if frozen:
        note = f"{problem}; re-ran with {again.chosen}"
    elif again.candidate is not None and again.candidate.option("driver") == "nutpie":
        note = (f"{problem}; re-ran with {again.chosen}, whose gradient is PyTensor's and "
                "whose start is drawn again until the log density and its gradient are "
                "finite there")
    else:
        note = f"{problem}; re-ran with {again.chosen}, whose gradient is PyTensor's"
    idata, again = _re_run(model, request, registry, report, again, note)
    left = stuck_chains(idata)
    if left:  # the re-run's chains too: warn rather than hand the draws back unremarked
        chains = ("chain " if len(left) == 1 else "chains ") + ", ".join(map(str, left))
        warnings.warn(
            f"{problem}; re-ran with {again.chosen}, and {chains} of that run never left "
            f"{'its' if len(left) == 1 else 'their'} start either: the log density's gradient "
            f"is not finite where they started. Check the gradient near the start "
            f"({_GRADIENT_AT_START}) and pass initvals nearer the posterior, or write the log "
            "density so its gradient is finite there.",
            StuckChainsWarning, stacklevel=3)
    return idata, again


def _runs_on_jax(report: SelectionReport) -> bool:
    """Whether the chosen candidate's run starts JAX (its estimate says so)."""
    return report.estimate is not None and "jax" in report.estimate.first_use


def _nan_jax_gradient_hint(report: SelectionReport) -> str:
    """For a run on JAX of a log density whose JAX derivative the profile found can be NaN
    where PyTensor's is finite, a sentence saying so, with the fix; else ``""``. nutpie on
    JAX, named, stopped at "All initialization points failed" on a threshold regression (a
    square root in a switch's branch not taken), reported as the plugin's failure."""
    profile = report.model_profile
    if profile is None or not _runs_on_jax(report):
        return ""
    found = [*profile.nan_jax_gradient_ops, *profile.switched_log_densities]
    if not found:
        return ""
    return (f"The log density has {', '.join(found)}, where JAX's derivative can be NaN and "
            "PyTensor's gradient is finite, so a sampler on JAX can find no start with a finite "
            "gradient: sample with nuts_sampler='numba', whose gradient is PyTensor's. ")


def _run_backend(model, report: SelectionReport, request: SampleRequest, registry):
    candidate = report.candidate
    # idata_kwargs={"log_prior": True}: ArviZ's from_dict, which PyMC's JAX path and
    # pymc-accel's results are built with, refused it (TypeError), and PyMC's nutpie path
    # ignores it with a warning; stored after every backend's run instead, with PyMC's own
    # compute_log_prior, which is what pm.sample's own sampler stores
    log_prior = bool((request.idata_kwargs or {}).get("log_prior"))
    if request.idata_kwargs and "log_prior" in request.idata_kwargs:
        request = replace(request, idata_kwargs={
            k: v for k, v in request.idata_kwargs.items() if k != "log_prior"})
    # a variable whose dims repeat a name: PyMC's checks, which pm.sample runs after its NUTS
    # and after NumPyro's and BlackJAX's, raised from xarray once the run had finished; run
    # here instead, on a view xarray takes (pymc_accel.convergence)
    checks_here = request.compute_convergence_checks and bool(
        convergence.repeated_dims(model, request.idata_kwargs))
    if checks_here:
        request = replace(request, compute_convergence_checks=False)
    backend = registry.backends[candidate.backend]
    origin = registry.origins.get(candidate.backend, "")
    builtin = origin.endswith("(built-in)") or BUILTIN_PLUGIN_NAME in origin
    if _runs_on_jax(report):
        from pymc_accel import jax_cache

        jax_cache.enable()  # a plugin's XLA programs too, from disk when run before
    start = time.perf_counter()
    try:
        with finite_starts.counted_redraws() as redrawn:
            idata = backend.sample(model, candidate, request)
    except DeviceOutOfMemoryError as exc:
        memory = report.estimate.memory_bytes if report.estimate is not None else None
        if memory is None or not memory.note:
            raise
        raise DeviceOutOfMemoryError(
            f"{exc}\npymc-accel estimated this run's peak at {memory.note}; the estimate was "
            "short, so leave more margin than it suggests."
        ) from exc
    except (PymcAccelError, pm.exceptions.SamplingError):
        raise  # about the model or the machine, not the backend: sample() explains it
    except Exception as exc:
        if builtin:
            raise
        raise _plugin_error(candidate.backend, origin, registry,
                            f"failed while sampling: {type(exc).__name__}: {exc}. "
                            f"{_nan_jax_gradient_hint(report)}If the error "
                            "is about the model or the arguments given, fix those; otherwise "
                            "report it to the plugin's authors") from exc
    if not (hasattr(idata, "attrs") and hasattr(idata, "children")):
        # what pm.sample returns (a DataTree, or an InferenceData-like tree): a plugin that
        # returned anything else failed later on its missing attributes, unnamed
        if builtin:
            raise TypeError(f"backend {candidate.backend!r} returned {type(idata).__name__}")
        raise _plugin_error(candidate.backend, origin, registry,
                            f"returned {type(idata).__name__}, not the DataTree pm.sample "
                            "returns; report it to the plugin's authors")
    wall = time.perf_counter() - start
    if checks_here:
        convergence.run_convergence_checks(idata, model, quiet=request.quiet)
    if redrawn[0]:
        report.notes = [*report.notes, (
            f"{redrawn[0]} chain start{'s' if redrawn[0] > 1 else ''} drawn again where the log "
            "density was finite and its gradient was not (PyMC's start jitter checks the log "
            "density only, and a chain started there never moves): the model's gradient is not "
            "finite in part of the region PyMC jitters its starts in")]
    if report.estimate is not None:  # its runtimes have started: later runs skip their first use
        first_use.mark_used(report.estimate.first_use)
    idata.attrs["pymc_accel_wall_seconds"] = round(wall, 3)
    # a run with step methods given is not the NUTS run the history predicts the next from;
    # nor is a forced float32 run that failed the accuracy check (its trees, often at the
    # depth limit, were lent to float64 and credited as effective draws: 5.5x nutpie's)
    unsafe = report.precision_check is not None and not report.precision_check.get("safe", True)
    if (report.model_profile is not None and request.pymc_kwargs.get("step") is None
            and not (unsafe and candidate.precision == "float32")):
        data = options = None
        if report.estimate is not None and report.estimate.whole_program_cached:
            from pymc_accel.profile import data_digest

            data = data_digest(model)  # the compiled program holds the data's values
            options = history.program_options_key(  # and the sampler's options
                request.target_accept, request.backend_kwargs, request.var_names)
        from pymc_accel.backends.last_gradients import LastGradients
        from pymc_accel.stuck_chains import frozen_chains, stuck_chains

        gradients = LastGradients.from_idata(idata)
        if gradients is not None and not gradients.agrees:  # its speed is not the model's
            history.mark_wrong_gradient(report.model_profile, candidate)
        elif not stuck_chains(idata) and not frozen_chains(idata):
            history.record(report.model_profile, candidate, report.estimate, request, wall,
                           idata, data=data, options=options)
        elif request.tune:  # with tune=0 no sampler adapts: not the sampler's failure
            history.mark_stuck(report.model_profile, candidate)
    if log_prior and "log_prior" not in idata.children:  # var_names keep every free variable
        pm.stats.compute_log_prior(idata, model=model, extend_inferencedata=True,
                                   progressbar=False)
    # as pm.sample's own sampler lays its result out (nutpie's path does not)
    result_layout.keep_var_names(idata, model, request.var_names)
    result_layout.apply_coords_and_dims(idata, request.idata_kwargs)
    _match_pm_sample_groups(idata)
    return idata


def _match_pm_sample_groups(idata) -> None:
    """Give every result the groups of ``pm.sample()``'s default path (nutpie), whichever
    backend ran: PyMC's own NUTS omits an empty ``constant_data`` group that nutpie and
    NumPyro include."""
    import xarray as xr

    if "constant_data" not in idata.children:
        idata["constant_data"] = xr.Dataset()


def _routed_pm_sample(draws: int = 1000, *args: Any, nuts_sampler: str | None = None, **kwargs: Any):
    """``pm.sample`` while pymc-accel is enabled: "auto" and pymc-accel-only backend names go
    to :func:`sample`; everything else (PyMC's own names included) is PyMC's, untouched."""
    if args:  # pm.sample takes only draws positionally; let PyMC say so
        return _PM_SAMPLE(draws, *args, nuts_sampler=nuts_sampler, **kwargs)
    registry = get_registry()
    registered = registry.backends
    if nuts_sampler == "auto" or (nuts_sampler in registered and nuts_sampler not in PYMC_SAMPLERS):
        return sample(draws, nuts_sampler=nuts_sampler, **kwargs)
    if isinstance(nuts_sampler, str) and nuts_sampler not in PYMC_SAMPLERS:
        # a misspelt name: PyMC's error listed its own four, not "auto" or pymc-accel's backends
        registry.get(nuts_sampler)  # raises UnknownBackendError naming them all
    return _PM_SAMPLE(draws, nuts_sampler=nuts_sampler, **kwargs)


_routed_pm_sample.__doc__ = (_PM_SAMPLE.__doc__ or "") + "\n\n(Routed through pymc-accel.)"
_enabled_depth = 0


class _Enabled:
    """Returned by :func:`enable`; as a context manager it disables on exit."""

    def __enter__(self) -> _Enabled:
        return self

    def __exit__(self, *exc: object) -> None:
        disable()


def enable() -> _Enabled:
    """Let ``pm.sample(nuts_sampler="auto")`` and pymc-accel backend names work.

    Only calls naming ``"auto"`` or a backend PyMC does not know are routed to pymc-accel;
    every other ``pm.sample`` call is left exactly as PyMC does it. Importing pymc-accel changes
    nothing; this call does, until :func:`disable`. Usable as a context manager::

        with pymc_accel.enable():
            idata = pm.sample(nuts_sampler="auto")
    """
    global _enabled_depth
    _enabled_depth += 1
    pm.sample = _routed_pm_sample
    pm.sampling.sample = _routed_pm_sample
    _mcmc.sample = _routed_pm_sample
    return _Enabled()


def disable() -> None:
    """Undo :func:`enable` (nested enables are undone by the same number of disables)."""
    global _enabled_depth
    _enabled_depth = max(0, _enabled_depth - 1)
    if _enabled_depth == 0:
        pm.sample = _PM_SAMPLE
        pm.sampling.sample = _PM_SAMPLE
        _mcmc.sample = _PM_SAMPLE


def is_enabled() -> bool:
    """Whether ``pm.sample`` is currently routed through pymc-accel."""
    return pm.sample is _routed_pm_sample


def explain(model: pm.Model | None = None, **kwargs: Any) -> SelectionReport:
    """Profile the model and select, without sampling; return the report.

    Parameters
    ----------
    model : pm.Model, optional
        Defaults to the model on the context stack.
    **kwargs
        What :func:`sample` takes (``draws``, ``tune``, ``chains``, ``cores``, ``nuts_sampler``,
        ``device``, ``precision``, ``measure``, ``initvals``, ``var_names``, ``target_accept``,
        ``nuts={...}``, ``random_seed``, ...): the report is of the choice that call would
        make. :func:`pymc_accel.select`'s names are taken too (``backend`` for
        ``nuts_sampler``, ``options`` for ``nuts``); ``backend`` is ``pm.sample``'s compile
        mode instead where ``nuts_sampler`` is given too, or where it names no registered
        backend (``backend="jax"``).

    Returns
    -------
    SelectionReport
        Print it for a table; ``to_dict()`` / ``to_json()`` for data.
    """
    if model is not None and not isinstance(model, pm.Model):
        raise TypeError(
            f"explain() takes a pm.Model, not {type(model).__name__}: build the model first, "
            "or explain a model file from the shell with `pymc-accel explain FILE`.")
    model = pm.modelcontext(model)
    refuse_models_without_free_variables(model)
    refuse_float32_models_under_another_float_x(model)  # as sample() would raise
    # backend= is select()'s name for nuts_sampler, and pm.sample's for a compile mode: the
    # compile mode beside nuts_sampler, or where it names no registered backend ("jax", "c")
    compile_mode = None
    if "backend" in kwargs and ("nuts_sampler" in kwargs or kwargs["backend"] not in (
            "auto", *(kwargs.get("registry") or get_registry()).backends)):
        compile_mode = kwargs.pop("backend")
    if "nuts_sampler" in kwargs:  # pm.sample's name: explain what that call would choose
        kwargs["backend"] = kwargs.pop("nuts_sampler")
    chosen = {k: kwargs.pop(k) for k in _SELECT_ONLY if k in kwargs}
    if compile_mode is not None:
        kwargs["backend"] = compile_mode
    request = _request(kwargs.pop("draws", 1000), kwargs)  # as sample() reads its arguments
    _check_var_names(model, request.var_names, request.idata_kwargs)
    starts = _check_initvals(model, request.initvals)
    if request.initvals:  # a start the user gave outside the support: sample() would raise
        for start in starts:
            _check_start(model, start, kept=True)
    return _select_for(model, request, **chosen)


def _select_for(model: pm.Model, request: SampleRequest, *, options: dict | None = None,
                **choices: Any) -> SelectionReport:
    """:func:`select` for the run ``request`` describes (its checked arguments), with the
    caller's ``choices`` (backend, device, precision, ...): what :func:`sample` runs and
    :func:`explain` reports."""
    return select(
        model,
        draws=request.draws,
        tune=request.tune,
        chains=request.chains,
        initvals=request.initvals,  # None, a dict or a list of them: _check_initvals saw to it
        var_names=request.var_names,
        options={**request.backend_kwargs, **(options or {})},
        arguments=arguments.given(request),
        target_accept=request.target_accept,
        **choices,
    )


#: :func:`select`'s keywords that :func:`explain` passes on as they are.
_SELECT_ONLY = ("backend", "device", "precision", "measure", "measure_budget", "options",
                "profile", "registry", "devices", "machine")
