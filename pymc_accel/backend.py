"""The backend contract: what a sampler backend answers and does.

A backend answers three questions and does one thing (see ``docs/architecture.md``):

1. :meth:`Backend.candidates`: which (device, precision) pairs it can run for a model, or a
   :class:`Refusal` with a reason a person can act on;
2. :meth:`Backend.estimate`: how long a candidate would take, each figure labelled measured or
   modelled;
3. :meth:`Backend.sample`: run a candidate and return the InferenceData (an ``xarray.DataTree``)
   that ``pm.sample`` returns.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import pymc as pm
    from xarray import DataTree

    from pymc_accel.devices import Devices
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile

Precision = Literal["float32", "float64"]
Source = Literal["measured", "modelled", "observed"]


@dataclass(frozen=True)
class Candidate:
    """One way to run a model: a backend on a device at a precision, with backend options.

    Parameters
    ----------
    backend : str
        Registered backend name.
    device : str
        ``"cpu"`` or ``"gpu"``.
    precision : {"float32", "float64"}
        Floating point precision of the log density and its gradient.
    options : tuple of (str, object) pairs
        Backend-specific choices that distinguish candidates (e.g. ``("driver", "nutpie")``).
    """

    backend: str
    device: str
    precision: Precision
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        """Short human-readable name, e.g. ``numba[cpu,float64,driver=nutpie]``."""
        extras = "".join(f",{k}={v}" for k, v in self.options)
        return f"{self.backend}[{self.device},{self.precision}{extras}]"

    def option(self, name: str, default: Any = None) -> Any:
        """Return the value of backend option ``name``, or ``default``."""
        return dict(self.options).get(name, default)


@dataclass(frozen=True)
class Refusal:
    """A backend's reason for not running a model, phrased so a person can act on it."""

    backend: str
    reason: str
    device: str | None = None
    precision: Precision | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, candidate: Candidate, reason: str) -> Refusal:
        """The refusal of ``candidate``, labelled with its device, precision and options."""
        return cls(candidate.backend, reason, candidate.device, candidate.precision,
                   candidate.options)

    @property
    def label(self) -> str:
        """Short name of what was refused, e.g. ``numba[cpu,float64,driver=pymc]``."""
        parts = [p for p in (self.device, self.precision) if p]
        parts += [f"{k}={v}" for k, v in self.options]
        return f"{self.backend}[{','.join(parts)}]" if parts else self.backend


@dataclass(frozen=True)
class Figure:
    """A number with its provenance: ``measured`` on this machine, ``modelled``, or ``observed``
    in an earlier run of the same model (:mod:`pymc_accel.history`)."""

    value: float
    source: Source = "modelled"
    note: str = ""
    #: for a ``measured`` figure, the share of ``value`` that was timed (the rest modelled: a
    #: driver's work around a timed gradient)
    measured_share: float = 1.0


@dataclass(frozen=True)
class Estimate:
    """A backend's estimate of what running a candidate costs.

    The wall time to the requested draws is
    ``fixed_seconds + first_use_seconds + cold_compile_seconds + (steps * (gradients_per_draw
    + draw_start_gradients) + extra_gradients) * seconds_per_gradient * chain_rounds`` where
    ``steps = tune + draws`` and ``chain_rounds`` is how many times the chains must run one after another given the
    device's parallelism; chains vectorized on one device (two or more at once) multiply the
    sampling by ``vectorized_trees``. ``relative_efficiency`` scales effective
    draws per draw against nutpie's NUTS (1.0); a NUTS whose adaptation takes longer trees
    reports more (:func:`pymc_accel.costmodel.nuts_trajectory`), samplers with worse mixing less.

    Parameters
    ----------
    seconds_per_gradient : Figure
        One log density and gradient evaluation, including the driver's per-step overhead.
    gradients_per_draw : Figure
        Gradient evaluations per MCMC draw (leapfrog steps for NUTS).
    fixed_seconds : Figure
        Compile and start-up time paid once.
    chain_parallelism : int
        How many chains run at the same time.
    vectorized_trees : Figure
        Leapfrogs that chains run side by side under ``jax.vmap`` pay over those they use: a
        batched tree-building loop runs until every chain's tree is done, so each draw costs
        the largest of the group's trees (:data:`pymc_accel.costmodel.VECTORIZED_TREE_FACTOR`).
        1.0 for chains that run on devices of their own, or one after another; applied when
        two or more chains share the device.
    memory_bytes : Figure
        Memory needed on the device.
    relative_efficiency : Figure
        Effective draws per draw relative to nutpie's NUTS.
    extra_gradients : Figure
        Gradient evaluations per chain beyond ``steps * gradients_per_draw``, paid once
        whatever the run's length (a sampler whose early tuning takes deep trees).
    draw_start_gradients : Figure
        Gradient evaluations per draw besides its leapfrog steps: PyMC's NUTS evaluates the log
        density and gradient at the draw's starting point again at every draw.
    trajectory_scale : float or None
        For a NUTS sampler: its adaptation's leapfrogs per draw against nutpie's
        (:data:`pymc_accel.costmodel.NUTS_TRAJECTORY_SCALE`), which the run history uses to
        share what one NUTS sampler observed on a model with the others; ``None`` otherwise.
    first_use_seconds : Figure
        Start-up paid once per Python process, whatever the model, by the runtimes of
        ``first_use`` that have not run in this process yet (:mod:`pymc_accel.first_use`).
    first_use : tuple of str
        The runtimes the candidate starts (``"numba"``, ``"nutpie-numba"``, ``"jax"``, ...):
        marked as run in this process once its run succeeds.
    modelled_fixed_seconds : float or None
        The cost model's fixed seconds where the run history replaced them in
        ``fixed_seconds`` (:func:`pymc_accel.history.apply`); ``None`` where ``fixed_seconds``
        is the modelled figure.
    cold_compile_seconds : Figure
        What the run pays beyond ``fixed_seconds`` if the model's compiled kernels are not in
        the runtime's disk cache yet (a new or changed model: PyTensor's numba kernels);
        :func:`pymc_accel.history.apply` sets it to zero once the model has run on this
        machine with the backend.
    precompiled_seconds : float
        Compile seconds paid before the run, by measured mode, for an artefact the run uses
        again (nutpie's compiled model: :mod:`pymc_accel.backends.nutpie_compiled`): not in
        ``fixed_seconds``, and added back when the run history records what the run's fixed
        costs are without it.
    seconds_per_gradient_before_runs : float or None
        The seconds per gradient (modelled, or timed by measured mode) where the model's
        earlier runs corrected them in ``seconds_per_gradient``
        (:func:`pymc_accel.history.apply`); ``None`` where no run did.
    gradient_efficiency_before_runs : float or None
        For a NUTS sampler whose effective draws per gradient the model's earlier runs observed
        (:func:`pymc_accel.history.apply`): the figure the cost model gives its adaptation
        against nutpie's, which a run's record compares its observed effective draws with;
        ``None`` where no run observed them.
    whole_program_cached : bool
        Whether the runtime's disk cache holds the run's whole compiled program (JAX's
        persistent cache, :mod:`pymc_accel.jax_cache`), keyed by everything the program fixes:
        ``cold_compile_seconds`` is then left out only after a run of this candidate with the
        same tuning steps, draws and chains; where False it holds the model's kernels, which
        any run of the model with the backend compiled (:func:`pymc_accel.history.compiled_here`).
    later_runs_sharing_compile : Figure
        How many later runs of the model are expected to load ``cold_compile_seconds``' compile
        from the disk cache, and why (:func:`pymc_accel.history.expected_later_runs`): the
        ranking charges this run ``1 / (1 + later)`` of that compile (:meth:`charged_seconds`),
        while ``total_seconds`` stays the run's predicted wall time.
    start_up_pace : float
        The factor the selection put on the modelled start-up figures (fixed seconds, first
        use, a CPU's first compile) for this machine's pace at start-up work
        (:func:`pymc_accel.costmodel.start_up_pace`); 1.0 where it put none. The run history
        records it, so that fixed seconds observed against paced figures compare with later
        ones.
    gradient_kin : str or None
        Another backend whose runs pay what this candidate's do a gradient (the same compiled
        gradient and a leapfrog timed alike: BlackJAX's NUTS and NumPyro's on JAX): where
        neither this candidate nor its twin in the other precision has run a model, the run
        history corrects its seconds per gradient by that backend's recorded runs of it, and
        where both have run it, by the newer run in the candidate's precision
        (:func:`pymc_accel.history.apply`). ``None``: only its own runs do.
    """

    seconds_per_gradient: Figure
    gradients_per_draw: Figure
    fixed_seconds: Figure
    chain_parallelism: int = 1
    memory_bytes: Figure = field(default_factory=lambda: Figure(0.0))
    relative_efficiency: Figure = field(default_factory=lambda: Figure(1.0))
    extra_gradients: Figure = field(default_factory=lambda: Figure(0.0))
    draw_start_gradients: Figure = field(default_factory=lambda: Figure(0.0))
    trajectory_scale: float | None = None
    first_use_seconds: Figure = field(default_factory=lambda: Figure(0.0))
    first_use: tuple[str, ...] = ()
    modelled_fixed_seconds: float | None = None
    cold_compile_seconds: Figure = field(default_factory=lambda: Figure(0.0))
    precompiled_seconds: float = 0.0
    seconds_per_gradient_before_runs: float | None = None
    later_runs_sharing_compile: Figure = field(default_factory=lambda: Figure(0.0))
    start_up_pace: float = 1.0
    gradient_efficiency_before_runs: float | None = None
    whole_program_cached: bool = False
    vectorized_trees: Figure = field(default_factory=lambda: Figure(1.0))
    gradient_kin: str | None = None

    def gradients_per_chain(self, steps: int) -> float:
        """Gradient evaluations one chain makes in ``steps`` iterations."""
        per_draw = self.gradients_per_draw.value + self.draw_start_gradients.value
        return steps * per_draw + self.extra_gradients.value

    def sampling_seconds(self, steps: int, chains: int) -> float:
        """Seconds spent sampling ``steps`` iterations of ``chains`` chains, compile excluded."""
        rounds = math.ceil(chains / max(1, self.chain_parallelism))
        side_by_side = min(chains, self.chain_parallelism) > 1
        trees = self.vectorized_trees.value if side_by_side else 1.0
        return rounds * self.gradients_per_chain(steps) * self.seconds_per_gradient.value * trees

    def total_seconds(self, steps: int, chains: int) -> float:
        """Estimated wall time: fixed costs, first use in this process, a first compile of the
        model on this machine and sampling."""
        return (self.fixed_seconds.value + self.first_use_seconds.value
                + self.cold_compile_seconds.value + self.sampling_seconds(steps, chains))

    def compile_shared_seconds(self) -> float:
        """The part of the first compile (``cold_compile_seconds``) charged to the later runs
        expected to reuse it (``later_runs_sharing_compile``), not to this one."""
        later = max(0.0, self.later_runs_sharing_compile.value)
        return self.cold_compile_seconds.value * later / (1.0 + later)

    def charged_seconds(self, steps: int, chains: int) -> float:
        """The seconds the ranking charges this run: its predicted wall time less the share of
        a first compile that later runs of the model share (:meth:`compile_shared_seconds`)."""
        return self.total_seconds(steps, chains) - self.compile_shared_seconds()

    def seconds_per_effective_draw(self, steps: int, draws: int, chains: int) -> float:
        """Charged seconds (:meth:`charged_seconds`) divided by the effective draws they buy:
        the ranking key (lower is better)."""
        effective = max(draws * chains * self.relative_efficiency.value, 1e-12)
        return self.charged_seconds(steps, chains) / effective

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form, for reports and JSON."""
        return asdict(self)


def ask_backend(backend: Any, method: str, *args: Any, default: Any) -> Any:
    """What a backend's optional ``method`` answers for ``args``; ``default`` when the backend
    has no such method or the method raises (a plugin's bug must not break selection)."""
    fn = getattr(backend, method, None)
    if fn is None:
        return default
    try:
        return fn(*args)
    except Exception:
        return default


@dataclass
class SampleRequest:
    """``pm.sample``'s arguments, as a backend receives them.

    ``backend_kwargs`` holds what the user passed for the sampler itself (``nuts={...}`` or
    unrecognised keywords); ``pymc_kwargs`` holds ``pm.sample`` arguments a backend that calls
    ``pm.sample`` should forward unchanged.
    """

    draws: int = 1000
    tune: int = 1000
    chains: int = 4
    cores: int | None = None
    random_seed: Any = None
    initvals: Any = None
    target_accept: float = 0.8
    # whether the caller gave target_accept (pm.sample's default is 0.8); a sampler whose own
    # default differs (MALA's 0.574) uses it only when given
    target_accept_given: bool = False
    var_names: list[str] | None = None
    progressbar: Any = True
    quiet: bool = False
    compute_convergence_checks: bool = True
    discard_tuned_samples: bool = True
    idata_kwargs: dict[str, Any] | None = None
    backend_kwargs: dict[str, Any] = field(default_factory=dict)
    pymc_kwargs: dict[str, Any] = field(default_factory=dict)
    #: The model's log density as the selection's profile built it
    #: (:class:`pymc_accel.profile.LogpGraph`: dims and data frozen), for a backend that builds
    #: the log density to use instead of building it again; ``None`` where the selection built
    #: none (it reused a kept profile). The JAX backends jaxify it
    #: (:func:`pymc_accel.backends.run_logp.jaxified_logp`); a backend may ignore it.
    logp_graph: Any = field(default=None, repr=False, compare=False)
    #: Free variables the log density has no gradient for
    #: (:attr:`pymc_accel.profile.ModelProfile.gradient_free_vars`): ``pm.sample`` gives them
    #: slice sampling, and has no NUTS step to take NUTS settings where every variable is one.
    gradient_free_vars: tuple[str, ...] = ()

    @property
    def steps(self) -> int:
        """Iterations per chain: tuning plus draws."""
        return self.tune + self.draws

    def pm_sample_kwargs(self) -> dict[str, Any]:
        """The request as keyword arguments of ``pm.sample``, for a backend that calls it.

        The sampler's own settings (``nuts_sampler``, ``nuts``, ``target_accept``) and
        ``pymc_kwargs`` are left to the backend, which knows how its driver takes them.

        Returns
        -------
        dict
        """
        return {
            "draws": self.draws, "tune": self.tune, "chains": self.chains, "cores": self.cores,
            "random_seed": self.random_seed, "initvals": self.initvals,
            "var_names": self.var_names, "progressbar": self.progressbar, "quiet": self.quiet,
            "compute_convergence_checks": self.compute_convergence_checks,
            "discard_tuned_samples": self.discard_tuned_samples,
            "idata_kwargs": self.idata_kwargs,
        }


@runtime_checkable
class Backend(Protocol):
    """What a sampler backend provides. Implement it and return it from the
    ``pymc_accel_backends`` hook (see :mod:`pymc_accel.hookspecs`).

    Optional method (measured mode, ``select(..., measure=True)``); a backend without it keeps
    its modelled estimates and still works::

        def measure(self, candidate, model, profile, machine, budget_seconds) -> Estimate | None:
            # Compile the candidate's gradient for the model, time it, and return the
            # estimate with the timed figures labelled "measured". Return None without
            # compiling when the compile would not fit in budget_seconds (the seconds left of
            # the whole measurement budget, and for any candidate but the best so far no more
            # than the best one's estimated run); the selector then keeps the modelled
            # estimate.
            # It is called in a worker thread (the model's context and JAX's thread-local
            # settings are not the caller's; change no process-wide setting a run depends
            # on), and a call still running at the budget's end is left to finish in the
            # background while the selection returns without it.

    Optional method (device memory); a backend without it is never refused for memory::

        def fit_memory(self, candidate, profile, devices, run) -> tuple[Candidate | Refusal, Figure | None]:
            # Lay out run's chains (run is a SampleRequest: draws, tune, chains, var_names) so
            # its memory fits the device (pymc_accel.memory): return the candidate with its
            # layout in its options and the estimated peak memory (the Figure's note says what
            # it holds; the report shows it), or a Refusal naming the figures and what to change.

    Optional method (gradient-free variables); a backend without it is refused for a model
    whose log density has no gradient for some variable (a ``pm.Simulator``, an op without
    one)::

        def samples_without_gradients(self, candidate) -> bool:
            # True if the candidate's run gives such variables steps that need no gradient,
            # as pm.sample's step assignment does (slice sampling).

    Optional method (per-chain initial values); a backend without it is assumed to take them::

        def takes_per_chain_initvals(self, candidate) -> bool:
            # Whether the candidate starts each chain from its own dict of initvals (pm.sample's
            # initvals=[{...}, {...}]); a candidate that does not is refused when they are given.

    Optional method (``pm.sample`` arguments only PyMC's own sampler honours); a backend without
    it honours none of them, and is refused when one is given (and warned about for ``init``)::

        def takes_argument(self, name, candidate) -> bool:
            # name is one of pymc_accel.arguments.ARGUMENTS: "step", "callback", "trace",
            # "discard_tuned_samples" (given as False), "init" (given other than "auto"), or
            # "compile_mode:numba" / ":jax" / ":other" (backend= or compile_kwargs["mode"],
            # by the linker it compiles with). True if the candidate's run does with it what
            # pm.sample does.

    Optional method (the start check); a backend without it has its start checked by
    pymc-accel before every run (:func:`pymc_accel.integration.check_initial_point`)::

        def checks_initial_point(self, candidate) -> bool:
            # True if the candidate's sampler evaluates the log density at its start and
            # raises when it is not finite (PyMC's samplers do): pymc-accel then checks the
            # start only after the sampler has failed, to name the variables, and saves the
            # check (a log density built and evaluated, 0.05-0.6 s) on every good run.

    Optional method (sampler options); a backend without it, or returning ``None``, takes any
    option and reports those it does not know when it samples::

        def known_options(self, candidate) -> Collection[str] | None:
            # The names the candidate's sampler takes in nuts={...} (or as pymc_accel.sample's
            # extra keywords); a candidate is refused for a run given any other.
    """

    name: str
    description: str

    def candidates(
        self, profile: ModelProfile, devices: Devices
    ) -> list[Candidate | Refusal]:
        """Every (device, precision, options) this backend can run for ``profile``; a
        :class:`Refusal` for each it cannot, with the reason and the fix."""
        ...

    def estimate(
        self, candidate: Candidate, profile: ModelProfile, machine: MachineFigures
    ) -> Estimate:
        """Estimated cost of ``candidate`` on this machine."""
        ...

    def sample(
        self, model: pm.Model, candidate: Candidate, request: SampleRequest
    ) -> DataTree:
        """Sample ``model`` as ``candidate`` and return ``pm.sample``-shaped InferenceData."""
        ...
