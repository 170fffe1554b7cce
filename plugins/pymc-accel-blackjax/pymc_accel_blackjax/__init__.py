"""BlackJAX NUTS and MCLMC for pymc-accel, shipped as a separate package the way a third party
would.

Installing this package is all it takes: the entry point in group ``pymc_accel`` (see
``pyproject.toml``) makes pymc-accel discover it, ``pymc-accel backends`` lists it, and
``pymc_accel.sample(nuts_sampler="blackjax_nuts")`` or ``nuts_sampler="auto"`` can use it.

Two backends: ``blackjax_nuts`` (BlackJAX NUTS through PyMC's own JAX path) and
``blackjax_mclmc`` (BlackJAX's microcanonical Langevin sampler, which PyMC does not expose; see
:mod:`pymc_accel_blackjax.mclmc`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import warnings
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version

from pymc_accel import (
    Candidate,
    Estimate,
    Figure,
    JaxNutsBackend,
    Refusal,
    UnsupportedArgumentError,
    discover_devices,
    first_use_figures,
    hookimpl,
    jax_cpu_devices,
    limit_blas,
)
from pymc_accel_blackjax.mclmc import GRADIENTS_PER_STEP, chains_vectorized, sample_mclmc

# PyMC 6.4 passes progress_bar into blackjax.window_adaptation (it pops it a line too late),
# which BlackJAX 1.6 and newer reject from inside a jitted kernel.
FIRST_INCOMPATIBLE = (1, 6)


def _has_fastprogress() -> bool:
    return importlib.util.find_spec("fastprogress") is not None


def _blackjax_version() -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in version("blackjax").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return None


class BlackJaxNutsBackend(JaxNutsBackend):
    """BlackJAX's NUTS with window adaptation, through PyMC's JAX sampling path.

    Its gradient costs what any JAX gradient costs, and its leapfrog (tree building included)
    and its tuning's leapfrogs what NumPyro's do; its one program, adaptation and sampling loop
    together, costs more to load and trace than NumPyro's (:data:`FIXED_FACTOR`).
    """

    def __init__(self) -> None:
        super().__init__(name="blackjax_nuts", jax_sampler="blackjax")
        self.description = "BlackJAX NUTS (window adaptation) on JAX, CPU or GPU [plugin]"

    def candidates(self, profile, devices):
        """JaxNutsBackend's candidates, unless the installed BlackJAX cannot run under PyMC."""
        found = _blackjax_version()
        if found is not None and found >= FIRST_INCOMPATIBLE:
            return [Refusal(self.name, f"blackjax {'.'.join(map(str, found))} is incompatible with "
                            "PyMC 6.4's BlackJAX path: pip install 'blackjax<1.6'")]
        return super().candidates(profile, devices)

    def checks_initial_point(self, candidate):
        """True: :meth:`sample` is PyMC's ``sample_jax_nuts``, which refuses a non-finite
        jittered start with ``SamplingError`` before BlackJAX runs."""
        return True

    def sample(self, model, candidate, request):
        """PyMC's BlackJAX NUTS, which needs at least one tuning step; without its progress
        bar where ``fastprogress``, which draws it, is not installed."""
        if request.tune < 1:  # BlackJAX's window adaptation fails on zero steps
            raise UnsupportedArgumentError(
                "blackjax_nuts adapts its step size in BlackJAX's window adaptation, which needs "
                "at least one tuning step: pass tune >= 1, or use nuts_sampler='numpyro' or "
                "'numba' to sample with tune=0")
        if request.progressbar and not _has_fastprogress():
            # BlackJAX does not depend on it, and the run failed inside a JAX callback
            # ("fastprogress is required to use progress bars"): `make demo` did, 2026-11-27
            warnings.warn("BlackJAX draws its progress bar with fastprogress, which is not "
                          "installed: sampling without it (pip install fastprogress for one, "
                          "or pass progressbar=False)", UserWarning, stacklevel=2)
            request = replace(request, progressbar=False)
        return super().sample(model, candidate, request)

    def estimate(self, candidate, profile, machine):
        """NumPyro's JAX estimate: its tuning's leapfrogs (BlackJAX's window adaptation takes
        as many), :data:`LEAPFROG_FACTOR` times its leapfrog and :data:`FIXED_FACTOR` times
        its fixed and cold-compile seconds. ``chain_method="sequential"`` is refused: PyMC's
        BlackJAX path draws chains side by side only, and raised at the run."""
        if candidate.option("chain_method") == "sequential":
            raise UnsupportedArgumentError(
                "blackjax_nuts draws its chains side by side only (PyMC's BlackJAX path takes "
                "chain_method='parallel' or 'vectorized'): pass one of those, or use "
                "nuts_sampler='numpyro' for chain_method='sequential'")
        base = super().estimate(candidate, profile, machine)
        factor = FIXED_FACTOR[candidate.precision]
        fixed = Figure(base.fixed_seconds.value * factor, "modelled",
                       f"{base.fixed_seconds.note}, x {factor:g}: BlackJAX's warm fixed "
                       "seconds against NumPyro's")
        # its program goes to JAX's compile cache on disk as NumPyro's does
        # (pymc_accel.jax_cache); its adaptation and sampling loops are one program, as large
        # again as NumPyro's, so its compile is priced as its warm fixed seconds are
        cold = Figure(base.cold_compile_seconds.value * factor,
                      base.cold_compile_seconds.source, base.cold_compile_seconds.note)
        # every other figure is NumPyro's, its early tuning's leapfrogs among them (BlackJAX's
        # window adaptation takes as many); until 2026-11-29 a copy of a few fields dropped
        # the rest (the start-up pace the run history reads, among them)
        return replace(
            base,
            seconds_per_gradient=_blackjax_leapfrog(base.seconds_per_gradient),
            fixed_seconds=fixed,
            cold_compile_seconds=cold,
            # JAX's start and BlackJAX's in a new process
            **first_use_figures(*base.first_use, seconds={"blackjax": FIRST_USE_SECONDS}),
            # NumPyro's runs of a model say what a gradient costs BlackJAX there too
            gradient_kin="numpyro",
        )

    def measure(self, candidate, model, profile, machine, budget_seconds):
        """NumPyro's measured JAX gradient (the one both samplers run) times
        :data:`LEAPFROG_FACTOR`, with this backend's fixed seconds; ``None`` when its compile
        would not fit."""
        from dataclasses import replace

        measured = super().measure(candidate, model, profile, machine, budget_seconds)
        if measured is None:
            return None
        return replace(measured,
                       seconds_per_gradient=_blackjax_leapfrog(measured.seconds_per_gradient))


def _blackjax_leapfrog(numpyros: Figure) -> Figure:
    """BlackJAX's leapfrog from NumPyro's (modelled or measured): :data:`LEAPFROG_FACTOR` times
    it, the timed share of it kept as a share of the whole."""
    return Figure(numpyros.value * LEAPFROG_FACTOR, numpyros.source,
                  f"{numpyros.note}, x {LEAPFROG_FACTOR:g}: BlackJAX's leapfrog against NumPyro's",
                  measured_share=(numpyros.measured_share / LEAPFROG_FACTOR
                                  if numpyros.source == "measured" else numpyros.measured_share))


#: BlackJAX's NUTS leapfrog (two chains side by side, a chain per XLA CPU device) against
#: NumPyro's, whose runtime prices it. Each sampler tuned, then its kernel timed in one
#: compiled loop at two lengths (bench/fit_blackjax_leapfrog.py, the default method): on six
#: models from eight schools to groups_503, in both precisions, 0.76 to 1.15x NumPyro's,
#: median 0.96 (docs/results/fit-blackjax-leapfrog-cpu-2026-11-29-compiled-loop.jsonl). Priced
#: at 1: the median is within the timings' spread (seed_small's float32 gave 0.77 and 0.94 in
#: two runs), and at 1 a tie goes to NumPyro's lower fixed seconds. It was 2.0 until
#: 2026-11-29, from whole runs less an assumed compile: a figure that moved from 0.5 to 1.8x
#: with the run's tuning (docs/benchmarks.md) and chose NumPyro on seed_small where
#: BlackJAX's float32 was as fast and drew more effective draws.
LEAPFROG_FACTOR = 1.0
#: BlackJAX's fixed seconds against NumPyro's, by precision: warm runs of 10 tuning draws and
#: 10 draws through pymc-accel's backends (bench/fit_blackjax_leapfrog.py --method fixed), whose
#: leapfrogs take milliseconds, on the same six models: float32 1.08 to 1.64, median 1.26;
#: float64 1.56 to 1.96, median 1.65; float64 the higher on five models, equal on logistic_101
#: (docs/results/fit-blackjax-fixed-cpu-2026-11-29.jsonl). It was 1.5 for both
#: until 2026-11-29, for "two XLA programs": PyMC's BlackJAX path maps one function holding
#: the adaptation and the sampling loop, one program, larger than NumPyro's.
FIXED_FACTOR = {"float32": 1.26, "float64": 1.65}
#: Seconds BlackJAX's part of its first run in a Python process costs beyond JAX's start
#: (``pymc_accel.first_use``; NumPyro's part is 0.35 s): its first run less its second of the
#: same model, 10 + 10 draws x 2 chains in new processes, median of three, 2.45 s against
#: NumPyro's 1.68 s side by side, less JAX's 1.3 s (bench/fit_first_use.py --scenarios
#: numpyro,blackjax; docs/results/fit-first-use-cpu-2026-11-29-blackjax.jsonl). Without it
#: a new process priced BlackJAX's start 0.35 s under NumPyro's, and that chose BlackJAX's
#: float32 on eight schools and nineteen more zoo models once its leapfrog was priced right.
FIRST_USE_SECONDS = 1.15


#: Seconds a kernel of the model's log density and gradient (``census.compiled_kernels``) adds
#: to a MCLMC run beyond NumPyro's fixed seconds, at the pace of the machine pymc-accel's fixed
#: seconds were fitted on (the selection scales it to this machine's, as it does every fixed
#: figure). A run traces the log density's value and gradient about 17 times (BlackJAX's three
#: tuning stages and its sampling loop each trace the integrator), about 30 ms each on the
#: 216-kernel seed models; XLA's programs come from JAX's compile cache. Fitted on four models'
#: later runs of 500 + 500 draws x 2 chains on two CPU devices, less their modelled sampling
#: and NumPyro's fixed seconds, at a start-up pace of 0.50: 8.9 to 13.0 ms a kernel
#: (bench/bench_one_device_estimate.py --backend blackjax_mclmc, docs/benchmarks.md, "MCLMC's
#: chains and its compile").
TRACE_PER_KERNEL = 0.0105
#: What tracing MCLMC batched over a device's chains adds, as a share of its tracing
#: (:data:`TRACE_PER_KERNEL`): where a device runs two or more chains under ``jax.vmap``
#: (:func:`~pymc_accel_blackjax.mclmc.chains_vectorized`; a CPU with fewer JAX devices than
#: chains, one GPU). Four models' runs of 500 + 500 draws x 2 chains, on one CPU device against
#: two, less what the estimates already gave the one-device layout: 0.24-0.71 of the tracing,
#: median 0.42 (docs/results/one-device-estimate-mclmc-cpu-2026-11-27.json, "MCLMC's chains on
#: one device" in docs/benchmarks.md).
VMAP_TRACE_SHARE = 0.42


class BlackJaxMclmcBackend(JaxNutsBackend):
    """BlackJAX MCLMC with BlackJAX's tuning of ``L``, step size and a diagonal preconditioner.

    Same devices, precisions and JAX gradient as the NUTS backends; one integrator step (two
    gradients) per draw, no accept/reject. Estimate: its effective draws per *gradient* are
    taken to equal NUTS's (published comparisons report MCLMC ahead by 2x or more above a
    hundred dimensions; this model does not count on it), so ``relative_efficiency`` is
    ``2 x`` NUTS's effective draws per gradient, and its fixed cost is one XLA program.
    """

    #: One iteration of the sampling loop (a ``lax.scan``) a step, i.e. per its two gradients,
    #: where a NUTS leapfrog pays its tree-building and U-turn while loops
    #: (``costmodel.NUTS_GPU_LOOP_ITERATIONS``); not yet timed on a GPU.
    gpu_loop_iterations = 1.0 / GRADIENTS_PER_STEP

    def __init__(self) -> None:
        super().__init__(name="blackjax_mclmc", jax_sampler="blackjax")
        self.description = "BlackJAX MCLMC (tuned L, step size, diagonal preconditioner) on JAX [plugin]"

    def candidates(self, profile, devices):
        """JAX's candidates, without the NUTS chain method; refused below two dimensions."""
        if profile.n_free < 2 and not profile.has_discrete:  # discrete: JAX's refusal says why
            return [Refusal(self.name, f"MCLMC needs at least 2 free dimensions; this model has "
                            f"{profile.n_free}: use nuts_sampler='blackjax_nuts' or 'numba'")]
        return [
            Candidate(self.name, a.device, a.precision) if isinstance(a, Candidate) else a
            for a in super().candidates(profile, devices)
        ]

    def checks_initial_point(self, candidate):
        """True: :func:`~pymc_accel_blackjax.mclmc.sample_mclmc` starts from PyMC's
        ``_get_batched_jittered_initial_points`` with the log density, which refuses a
        non-finite start with ``SamplingError``."""
        return True

    def known_options(self, candidate):
        """The options :func:`~pymc_accel_blackjax.mclmc.sample_mclmc` takes (no NUTS ones)."""
        return ("desired_energy_var", "diagonal_preconditioning")

    def fit_memory(self, candidate, profile, devices, run):
        """The run's chain layout (:func:`~pymc_accel_blackjax.mclmc.map_chains` spreads the
        chains over the platform's devices): a candidate whose device will run two or more
        chains under ``jax.vmap`` says so (``chains_vectorized``), which its estimate prices."""
        available = jax_cpu_devices() if candidate.device == "cpu" else max(1, len(devices.gpus))
        if chains_vectorized(run.chains, available):
            candidate = replace(candidate, options=(*candidate.options, ("chains_vectorized", True)))
        return candidate, None

    def estimate(self, candidate, profile, machine):
        """A JAX gradient per integrator step; ESS per gradient modelled equal to NUTS's; the
        fixed seconds of NumPyro's sampler plus MCLMC's tracing (:data:`TRACE_PER_KERNEL`), and
        its batched tracing where a device vectorizes chains (:data:`VMAP_TRACE_SHARE`)."""
        base = super().estimate(candidate, profile, machine)
        # effective draws per gradient of NumPyro's NUTS, whose estimate this is
        per_gradient = base.relative_efficiency.value / max(base.gradients_per_draw.value, 1.0)
        trace = TRACE_PER_KERNEL * profile.census.compiled_kernels  # a Scan's step traced once
        note = "MCLMC's tuning stages and sampling loop"
        if candidate.option("chains_vectorized"):
            trace *= 1.0 + VMAP_TRACE_SHARE
            note += f", x {1.0 + VMAP_TRACE_SHARE:g} batched over a device's chains"
        fixed = Figure(base.fixed_seconds.value + trace, "modelled",
                       f"{base.fixed_seconds.note}; + {trace:.2f} s tracing the log density for "
                       f"{note}")
        return Estimate(
            seconds_per_gradient=base.seconds_per_gradient,
            gradients_per_draw=Figure(float(GRADIENTS_PER_STEP), "modelled",
                                      "one McLachlan step per draw"),
            fixed_seconds=fixed,
            cold_compile_seconds=base.cold_compile_seconds,
            whole_program_cached=base.whole_program_cached,
            chain_parallelism=base.chain_parallelism,
            memory_bytes=base.memory_bytes,
            relative_efficiency=Figure(GRADIENTS_PER_STEP * per_gradient, "modelled",
                                       "effective draws per gradient taken equal to NUTS's"),
            first_use_seconds=base.first_use_seconds,  # JAX's start in a new process
            first_use=base.first_use,
        )

    def sample(self, model, candidate, request):
        """Run :func:`~pymc_accel_blackjax.mclmc.sample_mclmc` on the candidate's device, its
        chains spread over the platform's devices (a CPU's: one a core, as pymc-accel asks
        XLA for them), its XLA program kept in pymc-accel's JAX compile cache."""
        import jax

        from pymc_accel import enable_jax_cache, jax_device

        # pymc_accel.sample sets it up too; called on its own, without it every run compiled
        # the sampler anew (eight schools' later runs: 5.3 s against 1.0 s; docs/benchmarks.md)
        enable_jax_cache()
        platform = "gpu" if candidate.device == "gpu" else "cpu"
        device = jax_device(self.name, platform)
        options = dict(request.backend_kwargs)
        if request.target_accept_given:
            import warnings

            warnings.warn(
                "target_accept is ignored by blackjax_mclmc, which has no accept step: its step "
                "size follows desired_energy_var (default 5e-4 per dimension); pass "
                "desired_energy_var=... to change it", UserWarning, stacklevel=2)
        # the chains on XLA's CPU devices call LAPACK (a GP's Cholesky) at the same time, and
        # OpenBLAS starts a thread per core for each call: BLAS shared among them, as in
        # pymc-accel's NumPyro runs (docs/benchmarks.md, "The nutpie-on-JAX plugin's chains")
        blas = contextlib.nullcontext()
        if platform == "cpu":
            side_by_side = min(request.chains, len(jax.devices("cpu")))
            blas = limit_blas(request.pymc_kwargs.get("blas_cores", "auto"),
                              discover_devices().cpu_cores, side_by_side)
        with jax.enable_x64(candidate.precision == "float64"), jax.default_device(device), blas:
            return sample_mclmc(
                model,
                draws=request.draws,
                tune=request.tune,
                chains=request.chains,
                random_seed=request.random_seed,
                initvals=request.initvals,
                var_names=request.var_names,
                idata_kwargs=request.idata_kwargs,
                compute_convergence_checks=request.compute_convergence_checks,
                quiet=request.quiet,
                postprocessing_backend=platform,
                devices=jax.devices(platform),
                logp_graph=request.logp_graph,  # the selection's log density, jaxified
                **options,
            )


@hookimpl
def pymc_accel_backends():
    """The backends this plugin provides."""
    return [BlackJaxNutsBackend(), BlackJaxMclmcBackend()]
