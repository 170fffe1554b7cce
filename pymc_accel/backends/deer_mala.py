"""DEER-MALA: parallel-in-time MALA (:mod:`pymc_accel.deer`) for any PyMC model, CPU or GPU.

A thin adapter: the log density comes from PyMC's jaxified graph on the unconstrained space
(:mod:`pymc_accel.backends.jax_model`); tuning runs sequential MALA (dual averaging to an
acceptance of 0.574, diagonal preconditioner from the tuning draws); sampling runs DEER window by
window, all chains vectorized; draws go back through PyMC's own transforms into the
InferenceData ``pm.sample`` returns, with sample_stats ``acceptance_rate``, ``step_size``,
``lp``, ``diverging`` and ``newton_iterations`` (of each draw's window).
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from pymc_accel import costmodel
from pymc_accel.backend import Candidate, Estimate, Figure, Refusal, SampleRequest
from pymc_accel.backends._common import (
    discrete_refusal,
    missing_module,
    missing_refusal,
    no_gpu_refusal,
    pymc_chain_seed,
    run_precisions,
)
from pymc_accel.first_use import first_use_figures

if TYPE_CHECKING:
    from pymc_accel.devices import Devices
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile

#: Options a user may pass (``pymc_accel.sample(..., nuts_sampler="deer_mala", window=32)``).
OPTIONS = (
    "jacobian", "window", "num_probes", "damping", "jacobian_clip", "tol_abs", "tol_rel",
    "max_iterations", "method", "target_acceptance",
)
DEFAULT_WINDOW = 64
FULL_JACOBIAN_MAX_DIM = 8
# Newton iterations per window as a fraction of the window, measured by bench/bench_deer.py on
# an H100 at T = 64 and the tuned step size (docs/benchmarks.md, "DEER-MALA"): full Jacobians
# 22 of 64 (d = 10), exact diagonals 33 (d = 10), one Hutchinson probe 35 (d = 10) to 42
# (the seed hierarchical model, d = 612).
ITERATIONS_PER_WINDOW = {"full": 0.35, "diag": 0.5, "stoch_diag": 0.6}
# the solver's JACOBIAN_MODES (pymc_accel.deer.solver), read here without importing JAX
_JACOBIAN_MODES = tuple(ITERATIONS_PER_WINDOW)
# Vectorized chains the estimate assumes (pm.sample's default of 4).
ASSUMED_CHAINS = 4


#: Options of the chain itself, which the sequential method takes too (the window splits its
#: random keys, so it changes the draws).
SEQUENTIAL_OPTIONS = ("window", "method", "target_acceptance")


def _option_problems(options: dict[str, Any], request: SampleRequest | None) -> list[str]:
    """What is wrong with DEER-MALA's option values, each with the values it takes: checked
    before sampling, where ``window=0`` raised a ZeroDivisionError, ``window=2.7`` ran with
    2 under a label of 2.7, and ``target_acceptance=1.5`` sampled a wrong posterior."""
    problems = []
    window = options.get("window", DEFAULT_WINDOW)
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        problems.append(f"window must be a whole number of draws of at least 1, not {window!r}")
    target = options.get("target_acceptance")
    if target is not None and (isinstance(target, bool) or not isinstance(
            target, (int, float, np.floating)) or not 0 < target < 1):
        problems.append(f"target_acceptance must be between 0 and 1 (exclusive; MALA's optimum "
                        f"is 0.574), not {target!r}")
    method = options.get("method", "deer")
    if method not in ("deer", "sequential"):
        problems.append(f"method must be 'deer' or 'sequential', not {method!r}")
    jacobian = options.get("jacobian")
    if jacobian is not None and jacobian not in _JACOBIAN_MODES:
        problems.append(f"jacobian must be one of {', '.join(map(repr, _JACOBIAN_MODES))}, "
                        f"not {jacobian!r}")
    probes = options.get("num_probes")
    if probes is not None and (isinstance(probes, bool) or not isinstance(
            probes, (int, np.integer)) or probes < 1):
        # 0 probes estimate a zero Jacobian: DEER then ran the sequential chain unannounced
        problems.append(f"num_probes must be a whole number of at least 1, not {probes!r}")
    if request is not None and request.tune < 1:
        problems.append("tune=0 leaves MALA's step size and preconditioner untuned (its chains "
                        "barely move): give tune of at least a few hundred draws")
    return problems


def default_jacobian(dim: int) -> str:
    """``full`` for small dimensions (few Newton iterations, d^3 scan cost), else ``stoch_diag``."""
    return "full" if dim <= FULL_JACOBIAN_MAX_DIM else "stoch_diag"


def evaluations_per_step(jacobian: str, dim: int, num_probes: int = 1) -> float:
    """Gradient-equivalents to linearise one MALA step: two value-and-gradients, plus a
    forward-mode pass (about two gradients) per probe (stoch_diag) or per dimension."""
    directions = num_probes if jacobian == "stoch_diag" else dim
    return 2.0 * (1.0 + 2.0 * directions)


#: Effective draws per MALA draw against nutpie's NUTS, times d^(1/3). The regret runs at
#: 500 + 500 draws (docs/results/regret-cpu-500-all.json, 3 seeds) got 0.042-0.047 on the
#: Poisson GLM (d = 21) and 0.035-0.039 on pk_scan (d = 17): 0.12 and 0.095 times d^(-1/3),
#: where 0.5 was modelled (the funnel left out: no sampler's ESS reached 100 there). At 0.5
#: DEER-MALA's sequential chain tied nutpie on the marginal GP at N = 1000 (d = 3), where
#: its draws buy a tenth of what was credited.
MALA_EFFICIENCY = 0.11


def mala_relative_efficiency(dim: int) -> Figure:
    """Effective draws per MALA draw relative to NUTS, modelled: MALA's optimal step shrinks as
    d^(-1/3) while NUTS keeps ESS per draw near 1 (Roberts & Rosenthal 1998); the constant
    (:data:`MALA_EFFICIENCY`) from the regret runs."""
    return Figure(min(1.0, MALA_EFFICIENCY * dim ** (-1.0 / 3.0)), "modelled",
                  f"{MALA_EFFICIENCY:g} d^(-1/3)")


def _batched(profile: ModelProfile, width: float) -> ModelProfile:
    """The profile of ``width`` gradient evaluations run as one batch: the same kernels
    (launched once), ``width`` times the flops and bytes."""
    census = dataclasses.replace(
        profile.census, flops=profile.census.flops * width, bytes=profile.census.bytes * width,
        flops_by_category={k: v * width for k, v in profile.census.flops_by_category.items()},
    )
    return dataclasses.replace(profile, census=census)


class DeerMalaBackend:
    """The built-in ``deer_mala`` backend."""

    name = "deer_mala"
    description = "DEER-MALA: MALA solved in parallel over time windows on JAX (CPU or GPU)"
    #: Runs affine Scans as parallel prefixes where that pays off (:mod:`pymc_accel.rewrites.apply`).
    parallel_scans = True

    def candidates(self, profile: ModelProfile, devices: Devices) -> list[Candidate | Refusal]:
        """CPU and (when present) GPU, in float64 and float32, with the default Jacobian mode."""
        missing = missing_module("jax")
        if missing:
            return [missing_refusal(self.name, missing)]
        if profile.has_discrete:
            return [discrete_refusal(self.name, profile)]
        parallel = (("method", "deer"), ("jacobian", default_jacobian(profile.n_free)),
                    ("window", DEFAULT_WINDOW))
        # The same chain run step by step: where DEER's Newton iterations cannot pay for
        # themselves (every model measured so far, docs/benchmarks.md) the selector can still
        # choose MALA itself.
        sequential = (("method", "sequential"), ("window", DEFAULT_WINDOW))  # its keys' chunks
        precisions, out = run_precisions(self.name, profile)
        for precision in precisions:
            for options in (parallel, sequential):
                out.append(Candidate(self.name, "cpu", precision, options))
                if devices.has_gpu:
                    out.append(Candidate(self.name, "gpu", precision, options))
        if not devices.has_gpu:
            out.append(no_gpu_refusal(self.name, devices))
        return out

    def takes_argument(self, name: str, candidate: Candidate) -> bool:
        """A compile mode that compiles with JAX, which the log density is jaxified with
        (:mod:`pymc_accel.arguments`); none of ``pm.sample``'s other such arguments."""
        return name == "compile_mode:jax"

    def checks_initial_point(self, candidate: Candidate) -> bool:
        """True: its chains start where PyMC's JAX path starts NumPyro's
        (:func:`pymc_accel.backends.jax_model.flatten_model`): PyMC's jittered starts, each
        evaluated with the jaxified log density and drawn again up to ten times, raising
        ``SamplingError`` where none is finite. pymc-accel's own check, run before, looked
        at the start before its jitter only, and refused a model whose log density is -inf
        there and finite at every jittered start (a prior on a vector's length, whose start
        is the zero vector), which PyMC, NumPyro and nutpie sample (2026-12-01)."""
        return True

    def _gradient(self, profile, machine, candidate) -> Figure:
        if candidate.device == "gpu":
            return costmodel.gpu_gradient_seconds(profile, candidate.precision, machine)
        return costmodel.cpu_gradient_seconds(
            profile, machine, candidate.precision, costmodel.JAX_CPU
        )

    def estimate(
        self, candidate: Candidate, profile: ModelProfile, machine: MachineFigures
    ) -> Estimate:
        """Sequential tuning, then DEER windows whose Newton iterations each cost one batch of
        ``window x evaluations x chains`` gradients (launched once on a GPU).

        Assumes as many tuning steps as draws (pm.sample's default) and four vectorized chains.
        """
        from pymc_accel.errors import UnsupportedArgumentError

        problems = _option_problems(dict(candidate.options), None)
        if problems:  # the user's values, pinned on the candidate
            raise UnsupportedArgumentError(f"deer_mala: {'; '.join(problems)}")

        from pymc_accel.rewrites.apply import with_parallel_scans

        profile = with_parallel_scans(profile, candidate.device)
        tune_step = self._gradient(_batched(profile, ASSUMED_CHAINS), machine, candidate)
        if candidate.option("method", "deer") == "sequential":
            per_draw = Figure(1.0, "modelled", "sequential MALA: 1 gradient per step")
            jacobian, window = "diag", 1
        else:
            jacobian = candidate.option("jacobian", default_jacobian(profile.n_free))
            window = candidate.option("window", DEFAULT_WINDOW)
            per_step = evaluations_per_step(jacobian, profile.n_free)
            iteration = self._gradient(
                _batched(profile, ASSUMED_CHAINS * window * per_step), machine, candidate
            ).value
            iterations = ITERATIONS_PER_WINDOW[jacobian] * window
            draw_cost = iterations * iteration / window / tune_step.value
            per_draw = Figure(
                0.5 * (1.0 + draw_cost),
                "modelled",
                f"tuning 1 gradient/step; sampling {iterations:.0f} Newton iterations per "
                f"{window}-step window of {per_step:.0f} evaluations/step ({jacobian})",
            )
        return Estimate(
            seconds_per_gradient=Figure(
                tune_step.value, tune_step.source, f"{ASSUMED_CHAINS} chains batched; {tune_step.note}"
            ),
            gradients_per_draw=per_draw,
            fixed_seconds=costmodel.compile_seconds(profile, costmodel.JAX_CPU),
            chain_parallelism=ASSUMED_CHAINS,
            memory_bytes=Figure(
                costmodel.state_memory_bytes(profile, candidate.precision, ASSUMED_CHAINS, 1000).value
                + 8.0 * ASSUMED_CHAINS * window * profile.n_free
                * (profile.n_free if jacobian == "full" else 3),
                "modelled",
            ),
            relative_efficiency=mala_relative_efficiency(profile.n_free),
            **first_use_figures(*costmodel.JAX_CPU.first_use),
        )

    def sample(self, model, candidate: Candidate, request: SampleRequest):
        """Tune sequentially, sample by DEER, return ``pm.sample``-shaped InferenceData."""
        import jax

        from pymc_accel.backends.jax_model import jax_device, jax_precision
        from pymc_accel.jax_cache import enable as enable_jax_cache
        from pymc_accel.rewrites.apply import rewrite_model

        enable_jax_cache()  # its XLA programs from disk when this run was run before
        options = self._options(candidate, request)
        device = jax_device(self.name, candidate.device)
        rewritten, _ = rewrite_model(model, candidate.device)  # affine scans -> parallel prefixes
        # the selection's log density, where the run samples the model it was built from
        logp_graph = request.logp_graph if rewritten is model else None
        with jax_precision(candidate.precision), jax.default_device(device):
            try:
                return self._sample(rewritten, candidate, request, options, logp_graph)
            except Exception as exc:
                from pymc_accel.memory import out_of_memory_error

                oom = out_of_memory_error(exc, self.name, candidate, request)
                if oom is None:
                    raise
                raise oom from exc

    def known_options(self, candidate: Candidate) -> tuple[str, ...]:
        """The sampler options the candidate takes: :data:`OPTIONS` for DEER, those of the chain
        itself (:data:`SEQUENTIAL_OPTIONS`) for the sequential method, so that a DEER-only
        option (``jacobian="full"``) picks DEER rather than being dropped; ``auto`` does not
        choose DEER-MALA for a run given others (a NUTS option such as ``max_treedepth``)."""
        if candidate.option("method") == "sequential":
            return SEQUENTIAL_OPTIONS
        return OPTIONS

    def _options(self, candidate: Candidate, request: SampleRequest) -> dict[str, Any]:
        from pymc_accel.errors import UnsupportedArgumentError

        unknown = sorted(set(request.backend_kwargs) - set(self.known_options(candidate)))
        if unknown:
            raise UnsupportedArgumentError(
                f"{candidate.label} does not take {', '.join(unknown)}; its options are "
                f"{', '.join(self.known_options(candidate))} (DEER's own, such as jacobian, "
                "need method='deer')"
            )
        options = {**dict(candidate.options), **request.backend_kwargs}
        problems = _option_problems(options, request)
        if problems:
            raise UnsupportedArgumentError(f"deer_mala: {'; '.join(problems)}")
        return options

    def _sample(self, model, candidate, request, options, logp_graph=None):
        import jax
        import jax.numpy as jnp
        from pymc.util import _get_seeds_per_chain

        import pymc_accel
        from pymc_accel import deer
        from pymc_accel.backends.jax_model import draws_to_idata, flatten_model

        seed = pymc_chain_seed(request.random_seed, request.chains)
        (init_seed,) = _get_seeds_per_chain(seed, 1)
        chains = request.chains
        flat = flatten_model(
            model, chains=chains, initvals=request.initvals, random_seed=init_seed,
            dtype=candidate.precision, logp_graph=logp_graph,
        )
        jacobian = options.pop("jacobian", default_jacobian(flat.dim))
        window = int(options.pop("window", DEFAULT_WINDOW))
        method = options.pop("method", "deer")
        # MALA's own target (0.574) unless the caller gave pm.sample's target_accept
        default = request.target_accept if request.target_accept_given else deer.OPTIMAL_ACCEPTANCE
        target = float(options.pop("target_acceptance", default))
        tune_key, sample_key = jax.random.split(jax.random.key(seed))
        start = time.perf_counter()

        tune = jax.jit(
            jax.vmap(
                lambda k, x: deer.tune(
                    k, x, flat.logdensity, max(request.tune, 1), target_acceptance=target
                )
            )
        )
        positions = jnp.asarray(flat.initial_positions, dtype=candidate.precision)
        tuned = tune(jax.random.split(tune_key, chains), positions)
        sampler = deer.build_sampler(
            flat.logdensity, num_steps=request.draws, window=window, method=method,
            jacobian=jacobian, **options,
        )
        args = (jax.random.split(sample_key, chains), tuned.state.position, tuned.step_size,
                tuned.inverse_mass)
        try:
            result = sampler(*args)
        # what JAX raises tracing a derivative it has no rule for; not a device's OOM (an
        # XlaRuntimeError), which the caller turns into DeviceOutOfMemoryError
        except (AssertionError, NotImplementedError, TypeError, ValueError) as exc:
            if method != "deer":
                raise
            # DEER's Newton iterations differentiate the MALA step, so the log density twice;
            # JAX cannot for some ops (erfcx's gradient, in pm.Truncated's normal, raised a
            # bare AssertionError). The sequential chain is the chain DEER solves for.
            import warnings

            warnings.warn(
                "DEER-MALA's Newton iterations need second derivatives of the log density, "
                f"which JAX could not take here ({type(exc).__name__}: "
                f"{str(exc)[:120] or 'no message'}); the sequential chain ran instead (the "
                "chain DEER solves for). Pass method='sequential' to skip the attempt.",
                UserWarning, stacklevel=2)
            sampler = deer.build_sampler(flat.logdensity, num_steps=request.draws,
                                         window=window, method="sequential")
            result = sampler(*args)
        jax.block_until_ready(result.positions)
        seconds = time.perf_counter() - start

        per_draw_window = jnp.arange(request.draws) // window
        stats = {
            "acceptance_rate": result.info.acceptance_rate,
            "diverging": result.info.diverging,
            "lp": result.info.logdensity,
            "step_size": jnp.broadcast_to(tuned.step_size[:, None], (chains, request.draws)),
            "newton_iterations": result.newton_iterations[:, per_draw_window],
        }
        return draws_to_idata(
            model, flat, result.positions, stats, var_names=request.var_names,
            idata_kwargs=request.idata_kwargs, library=pymc_accel, sampling_seconds=seconds,
            tune=request.tune, compute_convergence_checks=request.compute_convergence_checks,
            quiet=request.quiet, postprocessing_backend=candidate.device,
        )
