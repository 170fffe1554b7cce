"""NumPyro NUTS on JAX, on CPU or GPU, in float32 or float64.

Sampling goes through PyMC's own ``pymc.sampling.jax.sample_jax_nuts`` (jaxified graph,
initial points, post-processing, InferenceData); this backend adds the device, the precision,
the chain method and a flat position (:mod:`pymc_accel.backends.flat_position`) around it.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING

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
from pymc_accel.backends.blas_threads import limit_blas
from pymc_accel.devices import cpu_cores, host_devices_fix, jax_cpu_devices
from pymc_accel.first_use import first_use_figures
from pymc_accel.memory import out_of_memory_error, plan_chains
from pymc_accel.sampler_options import SamplerOptions, sampler_options

if TYPE_CHECKING:
    from pymc_accel.devices import Devices
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile

#: Seconds of NUTS bookkeeping per leapfrog step and free dimension on a GPU (see estimate()).
NUTS_GPU_SECONDS_PER_DIMENSION = {"float32": 1.3e-10, "float64": 1.8e-10}


class JaxNutsBackend:
    """A NUTS sampler of PyMC's JAX path (``nuts_sampler`` of ``sample_jax_nuts``).

    Parameters
    ----------
    name : str
        Registered backend name.
    jax_sampler : {"numpyro", "blackjax"}
        Which of PyMC's JAX NUTS implementations to drive.
    """

    #: The NUTS adaptation the sampler runs, which sets its trees' length against nutpie's
    #: (:data:`pymc_accel.costmodel.NUTS_TRAJECTORY_SCALE`): NumPyro's and BlackJAX's window
    #: adaptation is Stan's; a subclass driving another sampler sets its own.
    adaptation: str = "stan"
    #: Loop iterations a gradient of the sampler pays on a GPU beyond its kernels
    #: (:func:`pymc_accel.costmodel.gpu_nuts_leapfrog_seconds`): a NUTS leapfrog's tree-building
    #: and U-turn while loops; a subclass whose sampler loops otherwise sets its own, and one
    #: that calls the gradient from outside XLA (a jitted call a gradient, each kernel a launch:
    #: :func:`pymc_accel.costmodel.gpu_gradient_seconds`) sets ``None``.
    gpu_loop_iterations: float | None = costmodel.NUTS_GPU_LOOP_ITERATIONS

    @property
    def parallel_scans(self) -> bool:
        """Whether :meth:`sample` runs affine Scans as parallel prefixes where that pays off
        (:mod:`pymc_accel.rewrites.apply`): true unless a subclass samples its own way."""
        return type(self).sample is JaxNutsBackend.sample

    def checks_initial_point(self, candidate: Candidate) -> bool:
        """Whether :meth:`sample` refuses a non-finite start itself: PyMC's ``sample_jax_nuts``
        evaluates each chain's jittered start with the jaxified log density and raises
        ``SamplingError`` naming the variables (``pymc.sampling.mcmc._init_jitter``), for
        NumPyro and BlackJAX alike. True unless a subclass samples its own way."""
        return self.parallel_scans  # both hold while sample is PyMC's sample_jax_nuts

    def takes_argument(self, name: str, candidate: Candidate) -> bool:
        """A compile mode that compiles with JAX, which the log density is jaxified with
        (:mod:`pymc_accel.arguments`); no step method, callback, trace backend or tuning draws,
        and ``init`` is ignored, as PyMC's JAX path does."""
        return name == "compile_mode:jax"

    def known_options(self, candidate: Candidate) -> SamplerOptions | None:
        """The options PyMC's path to this JAX sampler takes in ``nuts={...}``, with
        ``chain_method`` (:func:`pymc_accel.sampler_options.sampler_options`)."""
        return sampler_options(self.jax_sampler)

    def __init__(self, name: str = "numpyro", jax_sampler: str = "numpyro") -> None:
        self.name = name
        self.jax_sampler = jax_sampler
        self.description = f"{jax_sampler} NUTS on JAX (CPU or GPU), via PyMC's sample_jax_nuts"

    def candidates(self, profile: ModelProfile, devices: Devices) -> list[Candidate | Refusal]:
        """CPU and (when present) GPU, each in float64 and float32 (a model built in float32:
        float32 only, :func:`~pymc_accel.backends._common.run_precisions`)."""
        missing = missing_module("jax", self.jax_sampler)
        if missing:
            return [missing_refusal(self.name, missing)]
        if profile.has_discrete:
            return [discrete_refusal(self.name, profile)]
        precisions, out = run_precisions(self.name, profile)
        for precision in precisions:
            out.append(Candidate(self.name, "cpu", precision, (("chain_method", "parallel"),)))
            if devices.has_gpu:
                method = "parallel" if len(devices.gpus) > 1 else "vectorized"
                out.append(Candidate(self.name, "gpu", precision, (("chain_method", method),)))
        if not devices.has_gpu:
            out.append(no_gpu_refusal(self.name, devices))
        return out

    def cpu_chains_at_once(self) -> int:
        """Chains that run side by side on the CPU: one a JAX CPU device, at most one a core.

        A CPU device runs one chain at a time (:func:`runnable_chain_method`): with fewer JAX
        CPU devices than cores (JAX started before pymc-accel could ask for one a core) the
        chains run in rounds of one a device (:func:`pymc_accel.devices.jax_cpu_devices`).
        A subclass whose sampler runs its chains in threads of its own overrides this.
        """
        return min(cpu_cores(), jax_cpu_devices())

    def estimate(
        self, candidate: Candidate, profile: ModelProfile, machine: MachineFigures
    ) -> Estimate:
        """Roofline gradient time for JAX on the device; XLA compile of the whole sampler.
        Affine scans the backend runs as parallel prefixes are costed as such."""
        from pymc_accel.rewrites.apply import sequential_scan_steps, with_parallel_scans

        as_built = profile
        if self.parallel_scans:
            profile = with_parallel_scans(profile, candidate.device)
        # chains vectorized on one CPU device run as one batch there: each batched leapfrog
        # computes every chain's gradient, so they are priced as chains in turn, then scaled
        batched_on_cpu = _cpu_vectorized(candidate)
        if candidate.device == "gpu":
            # each sequential scan step a loop iteration of its own (none rewritten: "off")
            scan_steps = sequential_scan_steps(as_built, "gpu",
                                               None if self.parallel_scans else "off")
            # the sampler's loops and the gradient's kernels inside them, then NUTS's vector work
            grad = _with_nuts_vector_work(
                costmodel.gpu_gradient_seconds(profile, candidate.precision, machine)
                if self.gpu_loop_iterations is None else costmodel.gpu_nuts_leapfrog_seconds(
                    profile, candidate.precision, machine, scan_steps, self.gpu_loop_iterations),
                profile, candidate.precision)
            parallel = 4  # vectorized chains share the device
            if candidate.option("chain_method") == "sequential":  # memory allows fewer at once
                parallel = int(candidate.option("chains_at_once", 1))
        else:
            parallel = 1 if batched_on_cpu else self.cpu_chains_at_once()
            grad = costmodel.cpu_gradient_seconds(
                profile, machine, candidate.precision, costmodel.JAX_CPU_SAMPLER,
                parallel_chains=parallel,
            )
            if batched_on_cpu:
                grad = _vectorized_on_one_cpu_device(grad, self.jax_sampler)
            elif parallel < cpu_cores():
                grad = Figure(grad.value, grad.source,
                              f"{grad.note}; {parallel} chain(s) at a time: JAX has "
                              f"{parallel} CPU device(s) for {cpu_cores()} cores")
        fixed, cold = _fixed_and_cold_seconds(profile, candidate.device)
        if candidate.device == "gpu":
            fixed = Figure(fixed.value + costmodel.GPU_PROGRAM_LOAD_SECONDS, fixed.source,
                           f"{fixed.note}; + {costmodel.GPU_PROGRAM_LOAD_SECONDS:.2f} s loading "
                           "its programs onto the GPU")
        trees = Figure(1.0)
        # chains side by side under jax.vmap: one GPU's (several GPUs seat one chain each, unless
        # the memory plan puts more than one at once on a device)
        at_once = candidate.option("chains_at_once")
        vmapped = (candidate.option("chain_method") == "vectorized"
                   or (at_once is not None and int(at_once) > 1))
        if candidate.device == "gpu" and parallel > 1 and vmapped:
            trees = Figure(costmodel.VECTORIZED_TREE_FACTOR, "modelled",
                           "vectorized chains: each draw costs the largest of their trees")
        if vmapped and (parallel > 1 or batched_on_cpu):
            fixed = Figure(fixed.value + costmodel.VMAP_TRACE_SECONDS, fixed.source,
                           f"{fixed.note}; + {costmodel.VMAP_TRACE_SECONDS:.1f} s tracing the "
                           "sampler batched over the chains")
        return Estimate(
            seconds_per_gradient=grad,
            **costmodel.nuts_trajectory(profile, self.adaptation),
            fixed_seconds=fixed,
            cold_compile_seconds=cold,
            whole_program_cached=True,
            # BlackJAX's window adaptation (Stan's, as NumPyro's) took 0.94-1.06x NumPyro's
            # tuning leapfrogs on six models (bench/fit_blackjax_leapfrog.py --method tuning)
            extra_gradients=costmodel.stan_tuning_extra_gradients(profile),
            chain_parallelism=parallel,
            vectorized_trees=trees,
            memory_bytes=costmodel.state_memory_bytes(profile, candidate.precision, 4, 1000),
            **first_use_figures(*costmodel.JAX_CPU_SAMPLER.first_use, self.jax_sampler),
        )

    def fit_memory(
        self, candidate: Candidate, profile: ModelProfile, devices: Devices, run: SampleRequest
    ) -> tuple[Candidate | Refusal, Figure | None]:
        """Lay the run's chains out so that its memory fits the GPU (:mod:`pymc_accel.memory`):
        every chain at once where it fits, fewer at once (draws streamed to the host) where not;
        a refusal with the figures when not even one chain fits. CPU candidates are unchanged.

        On the CPU, PyMC's BlackJAX path maps its chains with ``jax.pmap`` (a device each) or
        ``jax.vmap``: with fewer JAX CPU devices than chains (JAX started before pymc-accel
        could ask for a device per core) :meth:`sample` vectorizes them on one device, and the
        candidate says so (``chain_method="vectorized"``), which its estimate prices.

        Returns
        -------
        (Candidate or Refusal, Figure or None)
            The candidate with its chain layout in its options (or why it cannot run), and the
            estimated peak memory of one device.
        """
        if (candidate.device == "cpu" and self.jax_sampler == "blackjax" and run.chains > 1
                and candidate.option("chain_method") == "parallel"
                and jax_cpu_devices() < run.chains):
            options = dict(candidate.options) | {"chain_method": "vectorized"}
            return replace(candidate, options=tuple(options.items())), None
        own_sampler = type(self).sample is JaxNutsBackend.sample and self.jax_sampler == "numpyro"
        if candidate.device != "gpu" or not devices.gpus or not own_sampler:
            return candidate, None  # the memory model is NumPyro's NUTS under sample_jax_nuts
        limit = min((g.memory_bytes for g in devices.gpus if g.memory_bytes), default=None)
        plan = plan_chains(
            profile, candidate.precision, draws=run.draws, chains=run.chains,
            limit_bytes=limit, devices=len(devices.gpus), var_names=run.var_names,
        )
        figure = Figure(plan.memory.total_bytes, "modelled", plan.describe())
        if not plan.fits:
            return Refusal.of(candidate, plan.reason), figure
        options: tuple = (("chain_method", plan.chain_method),)
        if plan.chain_method == "sequential" or (
            plan.chain_method == "parallel" and plan.chains_at_once * plan.devices < run.chains
        ):
            options += (("chains_at_once", plan.chains_at_once),)
        if plan.draws_to_host:
            options += (("draws_to_host", True),)
        return replace(candidate, options=options), figure

    def measure(
        self, candidate: Candidate, model, profile: ModelProfile, machine: MachineFigures,
        budget_seconds: float,
    ) -> Estimate | None:
        """jit-compile the JAX gradient on the candidate's device and precision and time it;
        ``None`` when its modelled compile would not fit in ``budget_seconds``."""
        from pymc_accel.backends._measure import jax_measure

        if self.parallel_scans:  # time the gradient sample() runs: affine scans rewritten
            from pymc_accel.rewrites.apply import rewrite_model

            model, _ = rewrite_model(model, candidate.device)
        modelled = self.estimate(candidate, profile, machine)
        measured = jax_measure(candidate, model, profile, machine, budget_seconds, modelled,
                               modelled.chain_parallelism, runtime=costmodel.JAX_CPU_SAMPLER)
        if measured is not None and candidate.device == "gpu" and self.gpu_loop_iterations:
            measured = replace(measured, seconds_per_gradient=_gpu_leapfrog_from_timed_gradient(
                measured.seconds_per_gradient, profile, candidate.precision, machine,
                self.gpu_loop_iterations))
        if measured is not None and _cpu_vectorized(candidate):  # one chain's gradient timed
            measured = replace(measured, seconds_per_gradient=_vectorized_on_one_cpu_device(
                measured.seconds_per_gradient, self.jax_sampler))
        return measured

    def sample(self, model, candidate: Candidate, request: SampleRequest):
        """Run PyMC's ``sample_jax_nuts`` on the candidate's device and precision, with the
        sampler's position one flat array (:mod:`pymc_accel.backends.flat_position`)."""
        import jax
        from pymc.sampling.jax import sample_jax_nuts

        from pymc_accel.backends.finite_starts import finite_gradient_starts
        from pymc_accel.backends.flat_position import flat_position
        from pymc_accel.backends.jax_model import jax_precision
        from pymc_accel.backends.last_gradients import recording_last_states
        from pymc_accel.backends.run_logp import jax_runs_use
        from pymc_accel.devices import jax_device
        from pymc_accel.jax_cache import enable as enable_jax_cache
        from pymc_accel.rewrites.apply import rewrite_model

        enable_jax_cache()  # the sampler's XLA programs from disk when this run was run before
        platform = "gpu" if candidate.device == "gpu" else "cpu"
        rewritten, _ = rewrite_model(model, platform)  # affine scans -> parallel prefixes
        # the selection's log density, where the run samples the model it was built from
        logp_graph = request.logp_graph if rewritten is model else None
        model = rewritten
        device = jax_device(self.name, platform)
        kwargs = dict(request.backend_kwargs)
        if "max_treedepth" in kwargs:  # PyMC's name (nutpie's driver translates it too)
            kwargs[MAX_TREEDEPTH_NAMES[self.jax_sampler]] = kwargs.pop("max_treedepth")
        to_host = bool(kwargs.pop("draws_to_host", candidate.option("draws_to_host", False)))
        asked = kwargs.get("chain_method", "parallel")  # by the user, not by the layout
        requested = kwargs.pop("chain_method", candidate.option("chain_method", "parallel"))
        at_once = kwargs.pop("chains_at_once", candidate.option("chains_at_once"))
        n_devices = len(jax.devices(platform))
        if self.jax_sampler == "numpyro":
            chain_method = numpyro_chain_method(
                requested, platform=platform, chains=request.chains, chains_at_once=at_once,
                draws_to_host=to_host,
            )
            layout = runnable_chain_method(requested, n_devices=n_devices,
                                           chains=request.chains, platform=platform)
        else:  # PyMC's BlackJAX path takes "parallel" (a device per chain) or "vectorized"
            chain_method = "vectorized" if n_devices < request.chains else requested
            warn_one_cpu_device(platform, asked, n_devices, request.chains,
                                "are vectorized on it")
            to_host = False
            layout = chain_method
        # chains on XLA CPU devices of their own call LAPACK at the same time: BLAS threads
        # shared among them, as pm.sample shares them among its chains
        side_by_side = min(request.chains, n_devices) if layout == "parallel" else 1
        blas = (limit_blas(request.pymc_kwargs.get("blas_cores", "auto"), cpu_cores(),
                           side_by_side)
                if platform == "cpu" else contextlib.nullcontext())
        idata_kwargs = dict(request.idata_kwargs or {})
        # pm.sample's idata_kwargs name for what sample_jax_nuts calls keep_untransformed
        keep_untransformed = bool(idata_kwargs.pop("include_transformed", False))
        try:
            with (jax_precision(candidate.precision), jax.default_device(device),
                  flat_position(self.jax_sampler),  # one array, not one per variable
                  jax_runs_use(model, logp_graph),  # the log density the profile built
                  finite_gradient_starts(model, logp_graph, jax=True),
                  recording_last_states() as last_states,  # for the gradient's check
                  blas):
                idata = wait_for_draws(sample_jax_nuts(
                    draws=request.draws,
                    tune=request.tune,
                    chains=request.chains,
                    target_accept=request.target_accept,
                    random_seed=pymc_chain_seed(request.random_seed, request.chains),
                    initvals=request.initvals,
                    model=model,
                    var_names=request.var_names,
                    nuts_kwargs=kwargs,
                    # NumPyro's progress bar cannot run inside a custom chain map
                    progressbar=bool(request.progressbar) and isinstance(chain_method, str),
                    quiet=request.quiet,
                    chain_method=chain_method,
                    postprocessing_backend="cpu" if to_host else platform,
                    idata_kwargs=idata_kwargs,
                    keep_untransformed=keep_untransformed,
                    compute_convergence_checks=request.compute_convergence_checks,
                    nuts_sampler=self.jax_sampler,
                ))
                _check_last_gradients(idata, last_states, model, candidate.precision)
                return idata
        except Exception as exc:
            oom = out_of_memory_error(exc, self.name, candidate, request)
            if oom is None:
                raise
            raise oom from exc


def _check_last_gradients(idata, last_states: list[dict], model, precision: str) -> None:
    """Store in ``idata``'s attributes whether the gradient the run computed at its chains'
    last draws is the derivative of its log density there
    (:mod:`pymc_accel.backends.last_gradients`), inside the run's
    :func:`~pymc_accel.backends.run_logp.jax_runs_use` block, whose compiled log density it
    evaluates (NumPyro's potential energy; BlackJAX's log density, negated). Where the run kept
    no state nothing is stored."""
    from pymc_accel.backends.last_gradients import (
        ATTRS_KEY,
        check_last_gradients,
        value_shapes,
    )
    from pymc_accel.backends.run_logp import held_graph, held_logp_function

    potential, graph = held_logp_function(model, negative_logp=False), held_graph(model)
    if potential is None:  # BlackJAX's run: PyMC jaxified log p
        log_density = held_logp_function(model, negative_logp=True)
        potential = (None if log_density is None
                     else lambda values: -log_density(values))
    if not last_states or potential is None or graph is None:
        return
    try:
        shapes = value_shapes(model, graph)
        check = (check_last_gradients(last_states[-1], potential, shapes, precision)
                 if shapes is not None else None)
    except Exception:  # a check that cannot run must not cost the run its draws
        return
    if check is not None:
        idata.attrs[ATTRS_KEY] = check.to_json()


def wait_for_draws(idata):
    """``idata`` once every JAX array in it is computed.

    PyMC's ``sample_jax_nuts`` returns the draws as JAX arrays, whose computation JAX
    dispatches without waiting: with BlackJAX the whole of sampling is still running when it
    returns. On the 5,522-parameter seed model the call returned after 10.7 s and the first
    use of the draws waited 93.6 s more, so the run's wall time, the run history's record of
    it and the benchmarks' timings of BlackJAX counted compile and tuning only.

    Parameters
    ----------
    idata : DataTree or InferenceData

    Returns
    -------
    The same object.
    """
    import jax

    for node in getattr(idata, "subtree", [idata]):
        for var in getattr(node, "data_vars", {}).values():
            if isinstance(var.data, jax.Array):
                jax.block_until_ready(var.data)
    return idata


#: PyMC's NUTS option ``max_treedepth`` as each JAX sampler's NUTS kernel names it.
MAX_TREEDEPTH_NAMES = {"numpyro": "max_tree_depth", "blackjax": "max_num_doublings"}


def numpyro_chain_method(
    requested: str, *, platform: str, chains: int, chains_at_once: int | None = None,
    draws_to_host: bool = False,
):
    """The ``chain_method`` to give NumPyro for a candidate's chain layout.

    NumPyro's own ``"vectorized"`` and ``"sequential"`` where they match the layout, and its
    ``"parallel"`` where it maps over the right devices (the default backend is ``platform`` and
    there is a device per chain); otherwise :func:`~pymc_accel.backends.chains.chain_map` over
    ``jax.devices(platform)``: chains spread over the devices, vectorized in groups of
    ``chains_at_once``, draws moved to the host after each group when ``draws_to_host``.
    A CPU never vectorizes chains unless asked to: a CPU device's extra chains run one after
    another (:func:`runnable_chain_method`).

    Parameters
    ----------
    requested : {"parallel", "vectorized", "sequential"}
    platform : {"cpu", "gpu"}
    chains : int
    chains_at_once : int, optional
        Chains a device runs at the same time (by default all of its share on a GPU, one on a
        CPU; 1 for sequential).
    draws_to_host : bool, default False

    Returns
    -------
    str or callable
    """
    import jax

    from pymc_accel.backends.chains import chain_map

    if requested not in ("parallel", "vectorized", "sequential"):
        raise ValueError(
            f"chain_method must be 'parallel', 'vectorized' or 'sequential', not {requested!r}"
        )
    devices = jax.devices(platform)
    method = runnable_chain_method(requested, n_devices=len(devices), chains=chains,
                                   platform=platform)
    if chains == 1:
        return "sequential"
    warn_one_cpu_device(platform, requested, len(devices), chains, "run one after another")
    if not draws_to_host and chains_at_once is None:
        if method in ("vectorized", "sequential"):
            return method
        if len(devices) >= chains and jax.default_backend() == platform:
            return "parallel"  # NumPyro's pmap over the default backend's devices
    if method == "parallel":
        at_once = chains_at_once or (1 if platform == "cpu" else -(-chains // len(devices)))
        return chain_map(devices, at_once, draws_to_host=draws_to_host)
    if method == "sequential" and chains_at_once in (None, 1) and not draws_to_host:
        return "sequential"
    at_once = chains_at_once or (chains if method == "vectorized" else 1)
    return chain_map(devices[:1], at_once, draws_to_host=draws_to_host)


def warn_one_cpu_device(platform: str, requested: str, n_devices: int, chains: int,
                        how: str) -> None:
    """Where a run asks for its ``chains`` in parallel on a CPU whose JAX has one device, warn
    that they cannot run side by side (they ``how``), and name the fix: JAX started before
    pymc-accel could ask XLA for a device per core (:func:`pymc_accel.devices.discover`).
    The one check for NumPyro's layout and PyMC's BlackJAX path alike."""
    if platform == "cpu" and requested == "parallel" and n_devices < 2 and chains > 1:
        warnings.warn(f"JAX has one CPU device, so the {chains} chains {how}: "
                      f"{host_devices_fix(chains)}", UserWarning, stacklevel=4)


def runnable_chain_method(requested: str, *, n_devices: int, chains: int,
                          platform: str = "gpu") -> str:
    """``"parallel"`` needs several devices: with one, chains are vectorized on a GPU and run
    one after another on a CPU. With fewer devices than chains (but more than one) it stays
    ``"parallel"``: the chains are split into groups, one per device, vectorized within each on
    a GPU and run in turn on a CPU (:func:`numpyro_chain_method`).

    A CPU runs vmapped NUTS chains slower than the same chains one after another: at 500 + 500
    draws, 1.7-1.8x slower for two chains on JAX's one CPU device and 1.7-3.4x for four chains
    on two devices in vectorized pairs against rounds of one a device (seed_mid, eight schools,
    glm_poisson; ``bench/bench_cpu_chain_layout.py``, docs/benchmarks.md): the batched trees
    wait for the longest, the batched loops select over the whole state, and a chain alone has
    XLA's intra-op threads to itself. JAX has one CPU device where it started before pymc-accel
    could ask for one per core."""
    if requested == "parallel" and chains > 1 and n_devices < 2:
        return "sequential" if platform == "cpu" else "vectorized"
    return requested


def _cpu_vectorized(candidate: Candidate) -> bool:
    """Whether ``candidate`` runs its chains under ``jax.vmap`` on one CPU device: NumPyro where
    asked to (``chain_method="vectorized"``), PyMC's BlackJAX path wherever JAX has fewer CPU
    devices than chains (:meth:`JaxNutsBackend.fit_memory` says so in the options)."""
    return candidate.device == "cpu" and candidate.option("chain_method") == "vectorized"


def _vectorized_on_one_cpu_device(grad: Figure, jax_sampler: str) -> Figure:
    """A chain's gradient (its seconds priced as if the chains ran in turn) times
    :data:`~pymc_accel.costmodel.CPU_VECTORIZED_FACTOR` of ``jax_sampler``: what each chain's
    gradient costs when the chains run as one batch under ``jax.vmap`` on one CPU device."""
    factor = costmodel.CPU_VECTORIZED_FACTOR.get(jax_sampler, costmodel.VECTORIZED_TREE_FACTOR)
    return Figure(grad.value * factor, grad.source,
                  f"{grad.note}; x {factor:g}: the chains vectorized on one CPU device (each "
                  "batched leapfrog computes every chain's gradient, waits for the longest "
                  "tree and selects over the whole state)",
                  measured_share=grad.measured_share)


class NumpyroBackend(JaxNutsBackend):
    """NumPyro NUTS on JAX: the built-in ``numpyro`` backend."""

    def __init__(self) -> None:
        super().__init__("numpyro", "numpyro")


def _with_nuts_vector_work(grad: Figure, profile: ModelProfile, precision: str) -> Figure:
    """``grad`` plus NUTS's own vector work per leapfrog on a GPU (momentum, energy, U-turn
    checks over the whole state), measured on an H100 on the 2.1M-parameter seed model: 127 s
    for 204,600 leapfrogs with a 0.35 ms gradient in float32 and 225 s with 0.72 ms in float64,
    i.e. 1.3e-10 / 1.8e-10 s per dimension (docs/benchmarks.md)."""
    per_dim = NUTS_GPU_SECONDS_PER_DIMENSION[precision]
    return Figure(grad.value + per_dim * profile.n_free, grad.source,
                  f"{grad.note} + NUTS steps {per_dim:.1e} s x {profile.n_free} dims",
                  measured_share=grad.measured_share)


def _gpu_leapfrog_from_timed_gradient(
    timed: Figure, profile: ModelProfile, precision: str, machine: MachineFigures,
    loop_iterations: float = costmodel.NUTS_GPU_LOOP_ITERATIONS,
) -> Figure:
    """A GPU leapfrog from measured mode's gradient, timed as a standalone jitted call: the
    sampler runs it inside its while loops, whose iterations
    (:func:`pymc_accel.costmodel.nuts_gpu_loop_seconds`) a standalone call does not pay. On the
    third H200 lease, seed_mid's gradient timed at 67 µs where the sampler's leapfrog took about
    163 µs, and measured mode chose the GPU at a regret of 1.87 (docs/benchmarks.md)."""
    loop = costmodel.nuts_gpu_loop_seconds(machine, loop_iterations)
    total = timed.value + loop
    grad = Figure(total, "measured",
                  f"{timed.note} + {loop * 1e6:.0f} µs of the sampler's loop iterations "
                  f"({loop_iterations:g}, modelled)",
                  measured_share=timed.measured_share * timed.value / max(total, 1e-12))
    return _with_nuts_vector_work(grad, profile, precision)


def _fixed_and_cold_seconds(profile: ModelProfile, device: str = "cpu") -> tuple[Figure, Figure]:
    """The sampler's fixed seconds with its XLA programs in JAX's disk cache, and what compiling
    them adds (:func:`pymc_accel.costmodel.cold_compile_seconds`; on a GPU
    :func:`~pymc_accel.costmodel.gpu_cold_compile_seconds`), which the run history leaves
    out once this run's program ran here (:func:`pymc_accel.history.apply`). Without a cache on
    disk (``PYMC_ACCEL_JAX_CACHE=off`` and none of the user's own) every run compiles: the
    compile is in the fixed seconds."""
    from pymc_accel import jax_cache

    fixed = costmodel.compile_seconds(profile, costmodel.JAX_CPU_SAMPLER)
    cold = (costmodel.gpu_cold_compile_seconds(profile) if device == "gpu"
            else costmodel.cold_compile_seconds(profile, costmodel.JAX_CPU_SAMPLER))
    if jax_cache.will_cache():
        return fixed, Figure(cold.value, cold.source,
                             "XLA compiles the sampler's program: not yet in JAX's compile cache")
    return (Figure(fixed.value + cold.value, "modelled",
                   f"{fixed.note}, and XLA's compile of the sampler: every run compiles without "
                   f"a compile cache on disk ({jax_cache.SWITCH}=off)"),
            Figure(0.0, "modelled", "no compile cache on disk"))
