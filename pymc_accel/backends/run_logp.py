"""The JAX runs' log density: the graph the selection's profile built, jaxified.

PyMC's ``sample_jax_nuts`` starts by building the model's log density (``model.logp()``),
putting its data in as constants and having PyTensor rewrite and jaxify it. The selection's
profile has just built that log density, on a copy of the model with dims and data frozen
(:func:`pymc_accel.profile.log_density_graph`). A run handed that graph
(:attr:`pymc_accel.backend.SampleRequest.logp_graph`) jaxifies it instead of building its own:
17-42 ms less than PyMC's path on eight zoo models (``bench/time_run_logp.py``,
docs/results/run-logp-cpu-2026-11-28.md), with the same compile and the same seconds a call.
On a CPU the graph's products of a tall, narrow data matrix with a vector are then held
transposed (:mod:`pymc_accel.rewrites.tall_products`), where XLA runs them faster: a
regression's leapfrog in NumPyro took 1.4x to 2.7x less time in float32.

A run that is handed no graph (its selection reused a kept profile, or it samples a rewritten
copy of the model) builds one with the same function, so the program a seeded run compiles, and
its draws, do not depend on what the selection kept. The graph's constants are a copy of the
data (``freeze_dims_and_data`` copies it), held while the run lasts, where PyMC's own path puts
the data containers' arrays in without copying: one more host copy of the data during a JAX
run, which the profile held while it ran too. :mod:`pymc_accel.memory` plans device memory and
does not count it.

No public PyMC hook takes a log density, so :func:`jax_runs_use` swaps the module function that
``sample_jax_nuts`` calls (``pymc.sampling.jax.get_jaxified_logp``) for one that answers, in the
thread that opened the block, for the given model from its graph and passes every other call to
PyMC's, while the block is open, as :mod:`pymc_accel.backends.flat_position` swaps the sampler
function.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pymc_accel.backends.swaps import swapped
from pymc_accel.graph_building import quietly
from pymc_accel.profile import LogpGraph, log_density_graph

#: Whether :func:`jaxified_logp` compiles the log density as one XLA program (``jax.jit``).
#: PyMC's ``get_jaxified_logp`` does not, and ``sample_jax_nuts`` evaluates it at each chain's
#: initial point outside any compiled program, so JAX compiled every op of the log density as
#: a program of its own: seed_small's NumPyro run compiled 95 programs, 38 with the log density
#: compiled whole, and took 7.84 s in a new process where 6.54 s (an empty compile cache; 2.40
#: s and 2.06 s with the run's programs cached), with the same draws: inside the sampler's own
#: compiled program the log density is inlined either way (``bench/bench_jit_logp.py``;
#: docs/benchmarks.md, "What a run builds and compiles again"). A benchmark sets it False to
#: time PyMC's way.
JIT_LOGP = True
#: Whether a GP kernel's squared distance between coinciding inputs is held at an exact zero
#: (:mod:`pymc_accel.rewrites.coincident_distances`), so that JAX's compiled gradient of PyMC's
#: ``sqrt(clip(sqd, 0, inf) + 1e-12)`` is the log density's. A benchmark sets it False to see
#: the gradient without it.
ZERO_COINCIDENT_DISTANCES = True

# each thread's open blocks: id(model) -> [model, graph or None, blocks]. Thread-local, since
# sample_jax_nuts asks for the log density in the thread that runs it, and another thread's run
# of the same model may hold other data.
_local = threading.local()


def run_graph(model: Any, graph: LogpGraph | None = None) -> LogpGraph:
    """The log density a JAX run of ``model`` jaxifies.

    Parameters
    ----------
    model : pm.Model
    graph : LogpGraph, optional
        The log density the selection's profile built for ``model``.

    Returns
    -------
    LogpGraph
        ``graph`` where one is given, else the model's log density built as the profile builds
        it (:func:`pymc_accel.profile.log_density_graph`).

    Raises
    ------
    ValueError
        ``graph`` was built from another model.
    """
    if graph is not None:
        _refuse_other_models(graph, model)
        return graph
    return quietly(log_density_graph)(model)[0]


def _refuse_other_models(graph: LogpGraph, model: Any) -> None:
    """Raise a ValueError naming the fix when ``graph`` was not built from ``model``."""
    if not graph.built_from(model):
        raise ValueError(
            "the log density graph given was built from another model: pass the "
            "SampleRequest's logp_graph only to a run of the model it was selected for, or "
            "None to build it from this one")


def jaxified_logp(model: Any, graph: LogpGraph | None = None, *,
                  negative_logp: bool = True, device: str | None = None) -> Callable[[Any], Any]:
    """PyMC's ``get_jaxified_logp(model, negative_logp)`` on :func:`run_graph`'s log density.

    For a CPU, the products of a tall, narrow data matrix with a vector (a regression's
    ``X @ beta``) hold the matrix transposed, which XLA's CPU dot reads up to 5x faster
    (2000 x 10: 2.0x in float64, 3.8x in float32; :mod:`pymc_accel.rewrites.tall_products`).
    On every device, a GP kernel's distance between coinciding inputs is an exact zero
    (:data:`ZERO_COINCIDENT_DISTANCES`): XLA computed PyMC's cancelling form of it with other
    roundings in each place it used it, and JAX's gradient of a sparse GP was wrong by orders
    of magnitude (:mod:`pymc_accel.rewrites.coincident_distances`).

    Parameters
    ----------
    model : pm.Model
    graph : LogpGraph, optional
        The log density the selection's profile built for ``model``
        (:attr:`pymc_accel.SampleRequest.logp_graph`); built the same way when not given.
    negative_logp : bool, default True
        As PyMC's flag, inverted from its name: True gives ``log p`` (BlackJAX's log density),
        False gives ``-log p`` (NumPyro's potential energy).
    device : {"cpu", "gpu"}, optional
        Where the function will run; by default the platform of JAX's default device (the
        device of an open ``jax.default_device`` block, else JAX's default backend's).

    Returns
    -------
    callable
        ``x -> value`` for ``x`` a list of arrays, one per value variable in
        ``model.value_vars``' order (the frozen copy lists them in an order of its own).

    Raises
    ------
    ValueError
        ``graph`` was built from another model.
    """
    from pymc.sampling.jax import get_jaxified_graph

    graph = run_graph(model, graph)
    by_name = {v.name: v for v in graph.value_vars}
    inputs = [by_name[v.name] for v in model.value_vars]
    logp = graph.logp if negative_logp else -graph.logp
    if _runs_on_cpu(device):
        from pymc_accel.rewrites.tall_products import transposed_tall_products

        logp = transposed_tall_products([logp])[0][0]
    if ZERO_COINCIDENT_DISTANCES:
        from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

        logp = zeroed_coincident_distances([logp], inputs, judging_points(model))[0][0]
    fn = get_jaxified_graph(inputs=inputs, outputs=[logp])
    if JIT_LOGP:
        import jax

        fn = jax.jit(fn)

    def logp_fn(x: Any) -> Any:
        return fn(*x)[0]

    return logp_fn


@contextlib.contextmanager
def coincident_distances_held() -> Iterator[None]:
    """Inside the block, ``model.logp()`` of every PyMC model holds a GP kernel's distance
    between coinciding inputs at an exact zero, as :func:`jaxified_logp` does
    (:mod:`pymc_accel.rewrites.coincident_distances`), while :data:`ZERO_COINCIDENT_DISTANCES`
    is on.

    For a backend that hands a model to a sampler that builds and jaxifies its log density
    itself: nutpie's JAX backend calls ``model.logp()`` on its own frozen copy of the model,
    and its JAX gradient of the user sweep's VFE sparse GP was as wrong as PyMC's NumPyro
    path's of the FITC one (a chain that barely moved in 280 s; docs/benchmarks.md). The value
    of every log density is the same to rounding; a graph without a guarded distance is
    returned as built. No public PyMC hook rewrites a model's log density, so the method is
    swapped on ``pm.Model`` while any such block is open (:func:`~pymc_accel.backends.swaps.
    swapped`).

    Yields
    ------
    None
    """
    import pymc as pm

    with swapped(pm.Model, "logp", _logp_holding_distances):
        yield


def _logp_holding_distances(pymcs: Callable) -> Callable:
    """``pm.Model.logp`` (``pymcs``) with its outputs' coinciding distances held."""

    def logp(self: Any, *args: Any, **kwargs: Any) -> Any:
        built = pymcs(self, *args, **kwargs)
        if not ZERO_COINCIDENT_DISTANCES:
            return built
        from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

        outputs = list(built) if isinstance(built, (list, tuple)) else [built]

        held, _ = zeroed_coincident_distances(outputs, list(self.value_vars),
                                              judging_points(self))
        return held if isinstance(built, (list, tuple)) else held[0]

    return logp


def judging_points(model: Any, start: dict | None = None) -> Callable[[], list[list[Any]]]:
    """The points a run's coinciding distances are judged at, for
    :func:`~pymc_accel.rewrites.coincident_distances.zeroed_coincident_distances`: the model's
    initial point (``start`` where the caller has evaluated it: no ``initvals``, seed 0) and one
    copy jittered as PyMC jitters a chain's start, each a list of values in
    ``model.value_vars``' order; computed only when called. The profile judges at the same
    points (:func:`pymc_accel.profile.held_log_density`)."""

    def points() -> list[list[Any]]:
        from pymc_accel.precision import _points

        return [[point[v.name] for v in model.value_vars]
                for point in _points(model, 1, None, 0, start)]

    return points


def _runs_on_cpu(device: str | None) -> bool:
    """Whether a function jaxified now runs on a CPU: ``device`` when given, else the platform
    of JAX's default device (an open ``jax.default_device`` block's, a device or a platform
    name, else the default backend's)."""
    if device is not None:
        return device == "cpu"
    import jax

    default = jax.config.jax_default_device
    if default is None:
        return jax.default_backend() == "cpu"
    return getattr(default, "platform", default) == "cpu"


def _held() -> dict[int, list]:
    if not hasattr(_local, "held"):
        _local.held = {}
    return _local.held


@contextlib.contextmanager
def jax_runs_use(model: Any, graph: LogpGraph | None = None) -> Iterator[None]:
    """Inside the block, ``pymc.sampling.jax.get_jaxified_logp(model, ...)`` called in this
    thread answers with :func:`jaxified_logp` on ``graph`` (or on the graph :func:`run_graph`
    builds, once for the block, when ``graph`` is None); every other call gets PyMC's own.

    Parameters
    ----------
    model : pm.Model
        The model the run samples (the rewritten copy, where the run samples one).
    graph : LogpGraph, optional
        ``model``'s log density, as the selection's profile built it. A block opened inside
        another of the same model and thread keeps the outer block's graph.

    Yields
    ------
    None
    """
    import pymc.sampling.jax as pmjax

    if graph is not None:
        _refuse_other_models(graph, model)
    held = _held()
    entry = held.get(id(model))
    if entry is not None and entry[0] is model:
        entry[2] += 1
    else:
        entry = held[id(model)] = [model, graph, 1, {}]
    try:
        # the first block in any thread swaps PyMC's function, the last puts it back
        with swapped(pmjax, "get_jaxified_logp", _answering):
            yield
    finally:
        entry[2] -= 1
        if not entry[2]:
            held.pop(id(model), None)


def held_graph(model: Any) -> LogpGraph | None:
    """The log density an open :func:`jax_runs_use` block of this thread holds for ``model``
    (given to it, or built at the run's first ask), or ``None``."""
    entry = _held().get(id(model))
    return entry[1] if entry is not None and entry[0] is model else None


def held_logp_function(model: Any, negative_logp: bool = False) -> Callable[[Any], Any] | None:
    """The log density function (``negative_logp`` as for :func:`jaxified_logp`: False gives
    ``-log p``, NumPyro's potential energy) that an open :func:`jax_runs_use` block of this
    thread last handed PyMC for ``model``, or ``None``. PyMC evaluates it at the chains'
    starts, so it is compiled (:data:`JIT_LOGP`) for one chain's position in the run's
    precision: evaluating it again costs no compilation."""
    entry = _held().get(id(model))
    return entry[3].get(negative_logp) if entry is not None and entry[0] is model else None


def _answering(pymcs: Callable) -> Callable:
    """The ``get_jaxified_logp`` swapped in for PyMC's (``pymcs``): from the graph this thread
    holds for the model, or PyMC's."""

    def get_jaxified_logp(model: Any, negative_logp: bool = True) -> Callable[[Any], Any]:
        entry = _held().get(id(model))
        if entry is None or entry[0] is not model:
            return pymcs(model, negative_logp)
        if entry[1] is None:  # built once for the block, and kept for a second call in it
            entry[1] = run_graph(model)
        fn = jaxified_logp(model, entry[1], negative_logp=negative_logp)
        entry[3][negative_logp] = fn  # for the check of the run's last gradients
        return fn

    return get_jaxified_logp
