"""NUTS on the CPU with the log density and gradient compiled by PyTensor's numba linker.

Two drivers, each a candidate: nutpie's Rust NUTS (fast per step, slower to compile) and
PyMC's own NUTS (quick to start; also samples discrete variables with compound steps).
Sampling goes through ``pm.sample`` itself, so results are exactly PyMC's; this backend adds
the choice of driver and renames nutpie's sample_stats to PyMC's names.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import pymc as pm

from pymc_accel import costmodel, history
from pymc_accel.backend import Candidate, Estimate, Figure, Refusal, SampleRequest
from pymc_accel.backends import nutpie_compiled, pymc_compiled
from pymc_accel.backends._common import (
    missing_module,
    rename_nutpie_stats,
    without_nutpie_ignored_layout,
)
from pymc_accel.backends.blas_threads import limit_blas
from pymc_accel.backends.finite_starts import finite_gradient_starts
from pymc_accel.backends.pm_sample_logp import pm_sample_uses
from pymc_accel.devices import cpu_cores
from pymc_accel.errors import SamplerStoppedError
from pymc_accel.first_use import first_use_figures
from pymc_accel.measure import wait_for_background
from pymc_accel.sampler_options import SamplerOptions, sampler_options

if TYPE_CHECKING:
    from pymc_accel.devices import Devices
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile


class NumbaBackend:
    """The built-in ``numba`` backend: numba-compiled gradient, nutpie or PyMC NUTS driver."""

    name = "numba"
    description = "NUTS on CPU, gradient compiled by PyTensor's numba linker; nutpie or PyMC driver"

    def candidates(self, profile: ModelProfile, devices: Devices) -> list[Candidate | Refusal]:
        """CPU only, in the precision the model was built in; nutpie when it can take the model."""
        if missing_module("numba"):
            return [Refusal(self.name, "numba is not installed: pip install numba")]
        precision = profile.float_dtype
        other = "float32" if precision == "float64" else "float64"
        out: list[Candidate | Refusal] = []
        if profile.has_discrete:
            out.append(
                Refusal(
                    self.name,
                    f"nutpie needs gradients of every variable; the model has discrete ones "
                    f"({', '.join(profile.discrete_vars)}); PyMC's driver samples them with "
                    "compound steps",
                    device="cpu",
                    precision=precision,
                )
            )
        elif missing_module("nutpie"):
            out.append(
                Refusal(self.name, "nutpie is not installed: pip install nutpie", "cpu", precision)
            )
        else:
            out.append(Candidate(self.name, "cpu", precision, (("driver", "nutpie"),)))
        out.append(Candidate(self.name, "cpu", precision, (("driver", "pymc"),)))
        out.append(
            Refusal(
                self.name,
                f"the numba backend computes in the precision the model was built in "
                f"({precision}); build the model under pytensor.config.floatX='{other}' to run "
                f"it in {other}",
                device="cpu",
                precision=other,
            )
        )
        if devices.has_gpu:
            out.append(Refusal(self.name, "numba runs on the CPU only", device="gpu"))
        return out

    def checks_initial_point(self, candidate: Candidate) -> bool:
        """True: PyMC's NUTS raises ``SamplingError`` at a non-finite start, and nutpie refuses
        one too ("All initialization points failed", a RuntimeError)."""
        return True

    def samples_without_gradients(self, candidate: Candidate) -> bool:
        """PyMC's driver is ``pm.sample``, whose step assignment gives a variable without a
        gradient slice sampling; nutpie's NUTS needs the gradient of every variable."""
        return candidate.option("driver", "nutpie") == "pymc"

    def takes_per_chain_initvals(self, candidate: Candidate) -> bool:
        """PyMC's driver starts each chain from its own initvals; nutpie takes one dict."""
        return candidate.option("driver", "nutpie") == "pymc"

    def known_options(self, candidate: Candidate) -> SamplerOptions | None:
        """The options the candidate's driver takes in ``nuts={...}``: PyMC's NUTS's or
        nutpie's (:func:`pymc_accel.sampler_options.sampler_options`)."""
        return sampler_options(candidate.option("driver", "nutpie"))

    def takes_argument(self, name: str, candidate: Candidate) -> bool:
        """PyMC's driver is ``pm.sample`` itself and honours every argument but a compile mode
        that does not compile with numba; nutpie's keeps the tuning draws (``save_warmup``)
        and, through ``pm.sample``, warns that it ignores ``init``
        (:mod:`pymc_accel.arguments`)."""
        if name.startswith("compile_mode:"):  # both drivers compile with numba
            return name == "compile_mode:numba"
        if candidate.option("driver", "nutpie") == "pymc":
            return True
        return name in ("discard_tuned_samples", "init")

    def estimate(
        self, candidate: Candidate, profile: ModelProfile, machine: MachineFigures
    ) -> Estimate:
        """numba roofline per gradient plus the driver's per-step and start-up costs."""
        pymc = candidate.option("driver") == "pymc"
        runtime = costmodel.NUMBA_PYMC if pymc else costmodel.NUMBA_NUTPIE
        cores = cpu_cores()
        extra = costmodel.pymc_tuning_extra_gradients(profile) if pymc else Figure(0.0)
        start = costmodel.pymc_draw_start_gradients() if pymc else Figure(0.0)
        return Estimate(
            seconds_per_gradient=costmodel.cpu_gradient_seconds(
                profile, machine, candidate.precision, runtime, parallel_chains=cores
            ),
            fixed_seconds=costmodel.compile_seconds(profile, runtime),
            cold_compile_seconds=costmodel.cold_compile_seconds(
                profile, runtime, history.models_run_here(profile, self.name)),
            chain_parallelism=cores,
            memory_bytes=costmodel.state_memory_bytes(profile, candidate.precision, 4, 1000),
            extra_gradients=extra,
            draw_start_gradients=start,
            **costmodel.nuts_trajectory(profile, "pymc" if pymc else "nutpie"),
            **first_use_figures(*runtime.first_use),
        )

    def measure(
        self, candidate: Candidate, model, profile: ModelProfile, machine: MachineFigures,
        budget_seconds: float,
    ) -> Estimate | None:
        """Compile the numba gradient and time it (once for both drivers); ``None`` when
        its modelled compile would not fit in ``budget_seconds``."""
        from pymc_accel.backends._measure import kernel_seconds, numba_measure

        runtime = (
            costmodel.NUMBA_PYMC if candidate.option("driver") == "pymc" else costmodel.NUMBA_NUTPIE
        )
        began = time.perf_counter()
        # at the machine's start-up pace, as the selection's estimate: the kept compile's credit
        # comes off these fixed seconds, which become measured ones
        modelled = costmodel.at_start_up_pace(self.estimate(candidate, profile, machine),
                                              machine, candidate.device)
        cold = _cold_compile_left(modelled, profile, candidate)
        measured = numba_measure(candidate, model, profile, machine, budget_seconds, modelled,
                                 runtime, modelled.chain_parallelism,
                                 _measuring_cold_left(self, candidate, profile, machine))
        if measured is None:
            return None
        if candidate.option("driver", "nutpie") == "pymc":
            return _with_pymc_function_kept(model, measured, costmodel.gradient_compile_seconds(
                profile, runtime))
        kept = _with_nutpie_compiled(model, measured, cold,
                                     budget_seconds - (time.perf_counter() - began))
        if kept is measured:
            return measured
        timed = nutpie_compiled.time_gradient(
            model, max(0.0, min(0.2, budget_seconds - (time.perf_counter() - began))))
        if timed is None:
            return kept
        call, calls = timed
        kernel = kernel_seconds(call, machine)
        return replace(kept, seconds_per_gradient=costmodel.measured_cpu_gradient_seconds(
            kernel, profile, machine, candidate.precision, runtime, modelled.chain_parallelism,
            note=f"nutpie's own gradient function timed: {kernel * 1e6:.1f} µs median of "
                 f"{calls} calls, {runtime.name}"))

    def sample(self, model, candidate: Candidate, request: SampleRequest):
        """Call ``pm.sample`` with the candidate's driver and the numba backend."""
        driver = candidate.option("driver", "nutpie")
        if driver == "nutpie":
            request = replace(request, idata_kwargs=without_nutpie_ignored_layout(
                request.idata_kwargs))
        kwargs = dict(request.pymc_kwargs)
        # driver= picked the candidate (selection's options); the samplers do not take it
        sampler_kwargs = {k: v for k, v in request.backend_kwargs.items() if k != "driver"}
        if sampler_kwargs:
            kwargs["nuts"] = sampler_kwargs
        # with step methods given, pm.sample takes NUTS settings only for the variables left
        # to NUTS, and refuses them ("Invalid key ... nuts") when there are none: pass
        # target_accept only where the caller gave it, as a direct pm.sample call would
        # (a model of discrete variables only has no NUTS step either, nor one whose
        # continuous variables have no gradient)
        continuous = any(not v.dtype.startswith(("int", "uint", "bool"))
                         and v.name not in request.gradient_free_vars for v in model.value_vars)
        if (kwargs.get("step") is None and continuous) or request.target_accept_given:
            kwargs.setdefault("nuts", {}).setdefault("target_accept", request.target_accept)
        wait_for_background()  # a measurement's compile left running: the run's own, or first
        reuse = (nutpie_compiled.reused_by_pm_sample(model) if driver == "nutpie"
                 else pymc_compiled.reused_by_pm_sample(model))
        # the selection's log density, where it is the model's own, for pm.sample's two builds
        handed = pm_sample_uses(model, request.logp_graph)
        # PyMC's NUTS draws a start again where its gradient is not finite, as nutpie does
        starts = (finite_gradient_starts(model) if driver == "pymc"
                  else contextlib.nullcontext())
        blas = limit_blas(kwargs.get("blas_cores", "auto"), request.cores, request.chains)
        if driver == "nutpie":
            # nutpie's chains are threads of this process, held by the limit above; pm.sample,
            # where its start method is not fork (Windows, an Intel Mac, a user's mp_ctx), sets
            # blas_cores for each call inside it, a thread a core a chain again
            kwargs["blas_cores"] = None
        with blas, reuse, handed, starts:
            try:
                idata = self._pm_sample(model, driver, request, kwargs)
            except Exception as exc:
                arithmetic = _arithmetic_error(exc) if driver == "pymc" else None
                if arithmetic is None:
                    raise
                raise SamplerStoppedError(
                    f"PyMC's NUTS stopped: the log density, compiled with numba, raised "
                    f"{type(arithmetic).__name__} ({str(arithmetic)[:80] or 'no message'}) at "
                    "a point NUTS proposed, and PyMC's driver ends a chain at any error there, "
                    "where nutpie and the JAX samplers count the step as divergent (PyTensor's "
                    "numba matrix exponential overflows far out in the tails). Sample with "
                    "driver='nutpie' or nuts_sampler='numpyro', or give the parameters priors "
                    "that keep them where the model computes", arithmetic) from exc
        if driver == "nutpie":
            rename_nutpie_stats(idata)
        return idata

    @staticmethod
    def _pm_sample(model, driver: str, request: SampleRequest, kwargs: dict):
        # a compile mode the caller gave compiles with numba (selection refuses this backend
        # for any other) and is passed as given; pm.sample takes one mode, not two
        given = "backend" in kwargs or "mode" in (kwargs.get("compile_kwargs") or {})
        return pm.sample(
            **request.pm_sample_kwargs(),
            nuts_sampler=driver,
            **({} if given else {"backend": "numba"}),
            model=model,
            **kwargs,
        )


#: Errors of arithmetic that a compiled log density can raise at a point far out in the tails.
_ARITHMETIC_ERRORS = (OverflowError, FloatingPointError, ZeroDivisionError)


def _arithmetic_error(exc: BaseException) -> BaseException | None:
    """The arithmetic error (:data:`_ARITHMETIC_ERRORS`) among ``exc`` and its causes, as
    PyMC's parallel sampling chains them (``ParallelSamplingError`` from the chain's own
    error), or ``None``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, _ARITHMETIC_ERRORS):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


#: What a nutpie run pays besides ``nutpie.compile_pymc_model`` and its leapfrogs when its
#: compiled model was kept from measured mode: ``pm.sample``'s own start-up (initial point,
#: checks) and the conversion to InferenceData. Timed on the quick zoo at 10 + 10 draws
#: (``bench/fit_measured_compiles.py``, ``docs/results/fit-measured-compiles-cpu.jsonl``):
#: 0.07 to 0.38 s, median 0.15 s, on the models whose 10 + 10 draws' leapfrogs are negligible.
NUTPIE_KEPT_MODEL_RUN_SECONDS = 0.15
#: nutpie's compile (``nutpie.compile_pymc_model``) against the numba gradient compile measured
#: mode times first (PyMC's gradient function), both with the model's kernels cached: 3.4x
#: (gp_200) to 6.9x (pk_scan) on the quick zoo (``bench/fit_measured_compiles.py``,
#: ``docs/results/fit-measured-compiles-pymc-function-cpu.jsonl``). Measured mode compiles
#: nutpie's model only where this many times the gradient's compile fits in what is left of its
#: budget.
NUTPIE_COMPILE_PER_GRADIENT_COMPILE = 7.0


def _measuring_cold_left(backend: NumbaBackend, candidate: Candidate, profile: ModelProfile,
                         machine: MachineFigures) -> float:
    """What compiling kernels not yet cached adds to measured mode's gradient compile, for
    either driver's candidate: the timed function is PyMC's own
    (:func:`pymc_accel.backends._measure.pymc_gradient_function`), whose kernels a run of the
    PyMC driver has cached and a run of nutpie's only partly (its graph is nutpie's). Predicted
    from nutpie's run as if it were PyMC's, measured mode compiled for 10.5 s on the demo model
    with a 4.2 s budget left (docs/benchmarks.md)."""
    twin = Candidate(candidate.backend, candidate.device, candidate.precision,
                     (("driver", "pymc"),))
    return _cold_compile_left(costmodel.at_start_up_pace(
        backend.estimate(twin, profile, machine), machine, candidate.device), profile, twin)


def _cold_compile_left(modelled: Estimate, profile: ModelProfile, candidate: Candidate) -> float:
    """What compiling the model's kernels not yet in PyTensor's cache adds to a compile, as
    the run history knows it (:func:`pymc_accel.history.cold_compile_left`): nothing once this candidate
    ran the model here, a share once the other driver did; all of the modelled first compile
    when the history is off, where it is not known (measured mode must not overrun)."""
    if not history.enabled():
        return modelled.cold_compile_seconds.value
    return history.cold_compile_left(modelled.cold_compile_seconds, profile, candidate).value


#: Share of measured mode's gradient compile a PyMC NUTS run saves by using the kept function
#: (the rest is building the graph, which the timing includes and the run does anyway): runs of
#: 10 + 10 draws x 2 chains took 0.17 s (funnel) to 0.91 s (pk_scan) less with it, 0.74x to
#: 0.88x of the compile, median 0.81 (``bench/fit_measured_compiles.py``,
#: ``docs/results/fit-measured-compiles-pymc-function-cpu.jsonl``).
PYMC_KEPT_FUNCTION_SAVING = 0.8
#: Least fixed seconds of a PyMC NUTS run whose gradient function measured mode kept: its
#: initial point, jitter checks and conversion to InferenceData.
PYMC_KEPT_FUNCTION_RUN_SECONDS = 0.1
#: Most a kept compile is credited, as a multiple of the warm compile modelled for the model
#: (``costmodel.gradient_compile_seconds``): in the 1000 + 1000 regret run of 2026-11-24's
#: evening measured mode's compile took 0.80 s on glm_linear and 1.53 s on seed_small where
#: it takes 0.38 and 0.61 s, and crediting all of it priced PyMC's NUTS at its floor on both
#: (regret 1.37 and 1.54). A run's own compile is not slowed by what slowed the measurement.
PYMC_KEPT_CREDIT_LIMIT = 1.5


def _with_pymc_function_kept(model, measured: Estimate, modelled_compile: float = math.inf
                             ) -> Estimate:
    """``measured`` (a PyMC NUTS candidate's measured estimate) less the gradient compile
    measured mode kept for the run (:mod:`pymc_accel.backends.pymc_compiled`): its fixed
    seconds lose what the kept compile saves the run (:data:`PYMC_KEPT_FUNCTION_SAVING` of its
    measured seconds, at most :data:`PYMC_KEPT_CREDIT_LIMIT` times ``modelled_compile``, the
    warm compile modelled), which becomes its ``precompiled_seconds``, and the kernels that
    compile put in PyTensor's cache are no longer a first compile to pay."""
    seconds = pymc_compiled.compile_seconds(model)  # 0 when none is kept, or it is stale
    if seconds <= 0:
        return measured
    full = measured.fixed_seconds.value
    credited = min(seconds, PYMC_KEPT_CREDIT_LIMIT * modelled_compile)
    left = max(PYMC_KEPT_FUNCTION_RUN_SECONDS, full - PYMC_KEPT_FUNCTION_SAVING * credited)
    return _kept_for_the_run(
        measured, left, full - left,
        f"PyMC's gradient function compiled by measured mode in {seconds:.2f} s and kept for "
        f"the run ({full:.2f} s modelled in all); the run's other start-up left")


def _kept_for_the_run(measured: Estimate, fixed: float, precompiled: float, note: str
                      ) -> Estimate:
    """``measured`` with what measured mode compiled kept for the run: ``fixed`` seconds of
    start-up left (measured), ``precompiled`` seconds paid before it, no first compile."""
    return replace(
        measured,
        fixed_seconds=Figure(fixed, "measured", note),
        cold_compile_seconds=Figure(0.0, "measured", "compiled by measured mode"),
        precompiled_seconds=precompiled,
        modelled_fixed_seconds=measured.fixed_seconds.value,
    )


def _with_nutpie_compiled(model, measured: Estimate, cold_seconds: float,
                          budget_seconds: float) -> Estimate:
    """``measured`` (a nutpie candidate's measured estimate) with nutpie's compiled model built
    now and kept for the run (:mod:`pymc_accel.backends.nutpie_compiled`), when the compile
    (modelled: the fixed seconds, nutpie's first use in this process if unpaid, and
    ``cold_seconds`` of kernels not yet cached) is predicted to fit in ``budget_seconds``:
    its fixed seconds become the run's start-up beyond the compile, and the compile's measured
    seconds its ``precompiled_seconds``. A compile over budget leaves ``measured`` as it is."""
    from pymc_accel import first_use
    from pymc_accel.backends import _measure

    full = measured.fixed_seconds.value
    if nutpie_compiled.kept(model) is None:
        unpaid = (first_use_figures("nutpie-numba")["first_use_seconds"].value
                  * measured.start_up_pace)
        gradient = _measure.numba_gradient_compile_seconds(model)
        if gradient is not None:  # just timed: the model's kernels are in the cache now
            predicted = NUTPIE_COMPILE_PER_GRADIENT_COMPILE * gradient + unpaid
        else:
            predicted = _measure.predicted_compile_seconds("nutpie", full + unpaid + cold_seconds)
        load = _measure.load_factor()
        if predicted * load > budget_seconds:
            return measured
        seconds = nutpie_compiled.compile_for_run(model)
        first_use.mark_used(("nutpie-numba",))
        _measure.record_compile("nutpie", full + unpaid, seconds, load)
    else:
        seconds = nutpie_compiled.compile_seconds(model)
    return _kept_for_the_run(
        measured, NUTPIE_KEPT_MODEL_RUN_SECONDS, seconds,
        f"nutpie's model compiled by measured mode in {seconds:.2f} s and kept for the run "
        f"({full:.2f} s modelled); pm.sample's own start-up left")
