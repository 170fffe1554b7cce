"""Chain starts drawn again where the log density's gradient is not finite.

PyMC draws each chain's start by jittering the initial point by U(-1, 1) on the unconstrained
scale, and draws again, up to ``jitter_max_retries`` times, where the log density is not finite
there (``pymc.sampling.mcmc._init_jitter``). It does not look at the gradient. Where the log
density is finite at a start and its gradient is not, every NUTS step from it diverges, tuning
shrinks the step size to nothing, and the chain returns that start repeated
(:mod:`pymc_accel.stuck_chains`). The held-out ``intervals_2`` (waiting times known to whole
units, two nodes of ``gammainc``) does that: the derivative of ``gammainc`` in ``x`` is infinite
at ``x = 0``, an interval's lower bound is 0, and the gradient is NaN where the shape is under
1, which PyMC's jitter reaches for about one chain in six. PyMC's NUTS's run took 369 s with a
chain stuck, and NumPyro's chains stuck in two seeds of four (docs/benchmarks.md, "A new
held-out model, and what it found"). nutpie draws a start again where either is not finite.

Inside :func:`finite_gradient_starts`, PyMC's jitter draws a start of the model again where its
gradient is not finite as well:

- PyMC's NUTS (``init_nuts``) checks each start with the compiled log-density-and-gradient
  function its sampler runs (``model.logp_dlogp_function``) and keeps the log density of the
  call; the gradient of the same call is read too, so the check evaluates nothing more.
- The JAX samplers (``sample_jax_nuts``, and DEER through
  :func:`pymc_accel.backends.jax_model.flatten_model`) check the jaxified log density alone.
  Their gradient is compiled into the sampler's program: compiling JAX's ``value_and_grad`` for
  the starts took 1.5x to 4.3x the log density's compile on fourteen zoo models, 0.05 to 1.1 s
  more, and PyTensor's gradient evaluated op by op in Python 0.30 to 1.04 s for four starts on
  the six of them with series functions (``bench/time_start_checks.py``,
  ``docs/results/start-checks-cpu-2026-12-01.md``). The check here is narrower and took 13 to 35
  ms there: where the log density has a function computed by series whose derivative is infinite
  at a bound of its domain (``gammainc``, ``gammaincc``, ``betainc``:
  :func:`series_gradient_check`), a start is drawn again where a gradient would take that
  derivative at the bound. JAX's own derivative can be NaN elsewhere, where PyTensor's is finite
  (a switch whose branch not taken is infinite: ``pm.Censored``); the selection leaves the JAX
  samplers out of those (:mod:`pymc_accel.jax_support`), and a run whose chains stuck is re-run
  where ``auto`` chose (:mod:`pymc_accel.integration`).

A start whose gradient is finite is kept as PyMC keeps it, and a start drawn again takes PyMC's
next seed, so a seeded run's starts are PyMC's wherever PyMC's first draw had a finite gradient.
Where no draw within the retries has one, the last is kept, as PyMC keeps a last draw whose log
density is finite.

No PyMC hook takes a check of the start, so the block swaps the module functions PyMC's samplers
call (:mod:`pymc_accel.backends.swaps`), answering for the block's model in the thread that
opened it and passing every other call to PyMC's, as :mod:`pymc_accel.backends.run_logp` swaps
``get_jaxified_logp``.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pymc_accel.backends.swaps import swapped

# each thread's open blocks: id(model) -> _Held. Thread-local, since PyMC draws a run's starts
# in the thread that runs it, and another thread's run of the same model is its own.
_local = threading.local()


class _Held:
    """What a block knows of its model: the JAX path's check (built at its first use) and the
    compiled function PyMC's NUTS initialisation made."""

    def __init__(self, model: Any, logp_graph: Any) -> None:
        self.model = model
        self.logp_graph = logp_graph
        self.blocks = 0
        self.compiled: Any = None  # the last ValueGradFunction model.logp_dlogp_function made

    @functools.cached_property
    def series_check(self) -> Callable[[dict], bool] | None:
        """:func:`series_gradient_check` for the model, built once."""
        return series_gradient_check(self.model, self.logp_graph)


def _held() -> dict[int, _Held]:
    if not hasattr(_local, "held"):
        _local.held = {}
    return _local.held


def _entry(model: Any) -> _Held | None:
    entry = _held().get(id(model))
    return entry if entry is not None and entry.model is model else None


@contextlib.contextmanager
def finite_gradient_starts(model: Any, logp_graph: Any = None, *,
                           jax: bool = False) -> Iterator[None]:
    """Inside the block, PyMC's chain starts for ``model`` are drawn again where the gradient
    of the log density is not finite (see the module docstring).

    Parameters
    ----------
    model : pm.Model
        The model the run samples (the rewritten copy, where the run samples one).
    logp_graph : pymc_accel.profile.LogpGraph, optional
        ``model``'s log density as the selection's profile built it, for the JAX path's check
        (:func:`series_gradient_check`, which finds one where it is not given).
    jax : bool, default False
        Also check the starts of PyMC's JAX path (``pymc.sampling.jax``, imported by the
        block). PyMC's NUTS's starts are checked either way.

    Yields
    ------
    None
    """
    import pymc.sampling.mcmc as pmmcmc

    held = _held()
    entry = _entry(model)
    if entry is None:
        entry = held[id(model)] = _Held(model, logp_graph)
    entry.blocks += 1
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(swapped(pmmcmc, "_init_jitter", _checking_jitter))
            if jax:
                import pymc.sampling.jax as pmjax

                stack.enter_context(swapped(pmjax, "_init_jitter", _checking_jitter))
            stack.enter_context(_recording_compiled_function(model, entry))
            yield
    finally:
        entry.blocks -= 1
        if not entry.blocks:
            held.pop(id(model), None)


@contextlib.contextmanager
def counted_redraws() -> Iterator[list[int]]:
    """Within the block, the starts this thread's runs draw again for a gradient that is not
    finite are counted, into the yielded list's one item (a run's report says so)."""
    if not hasattr(_local, "counters"):
        _local.counters = []
    box = [0]
    _local.counters.append(box)
    try:
        yield box
    finally:
        _local.counters.remove(box)


def _count_redraw() -> None:
    for box in getattr(_local, "counters", ()):
        box[0] += 1


@contextlib.contextmanager
def _recording_compiled_function(model: Any, entry: _Held) -> Iterator[None]:
    """Within the block, the functions ``model.logp_dlogp_function`` makes are kept on
    ``entry`` as well as returned; the method in place at entry (another block's, shadowing
    it for this model object) is restored at exit."""
    before = model.__dict__.get("logp_dlogp_function")
    making = model.logp_dlogp_function

    def logp_dlogp_function(*args, **kwargs):
        function = making(*args, **kwargs)
        entry.compiled = function
        return function

    model.__dict__["logp_dlogp_function"] = logp_dlogp_function  # shadows the method
    try:
        yield
    finally:
        if before is None:
            model.__dict__.pop("logp_dlogp_function", None)
        else:
            model.__dict__["logp_dlogp_function"] = before


def _checking_jitter(pymcs: Callable) -> Callable:
    """The ``_init_jitter`` swapped in for PyMC's (``pymcs``): for a model of an open block in
    this thread, its log density check refuses a start whose gradient is not finite."""

    def _init_jitter(model, initvals, seeds, jitter, jitter_max_retries, logp_fn=None):
        entry = _entry(model)
        if entry is None or not jitter:
            return pymcs(model, initvals, seeds, jitter, jitter_max_retries, logp_fn)
        check = _gradient_check(entry, logp_fn)
        if check is None:
            return pymcs(model, initvals, seeds, jitter, jitter_max_retries, logp_fn)
        return pymcs(model, initvals, seeds, jitter, jitter_max_retries, check)

    return _init_jitter


def _gradient_check(entry: _Held, logp_fn: Callable | None) -> Callable[[dict], Any] | None:
    """A log density check for PyMC's jitter that gives -inf where the gradient is not
    finite: from the function PyMC's NUTS compiled where ``logp_fn`` is its check of it, else
    from :func:`series_gradient_check` where the model has one; ``None`` where neither."""
    compiled = entry.compiled
    if compiled is not None and _evaluates(logp_fn, compiled):
        from pymc.blocking import DictToArrayBijection

        def logp_of_compiled(point: dict) -> Any:
            q, _ = DictToArrayBijection.map(point)
            logp, gradient = compiled([q], extra_vars={})
            if np.isfinite(logp) and not np.all(np.isfinite(gradient)):
                _count_redraw()
                return -np.inf
            return logp

        return logp_of_compiled
    series_check = entry.series_check
    if series_check is None:
        return None
    if logp_fn is None:  # PyMC's own default
        logp_fn = entry.model.compile_logp()

    def logp_where_gradient_finite(point: dict) -> Any:
        logp = logp_fn(point)
        if np.isfinite(logp) and not series_check(point):
            _count_redraw()
            return -np.inf
        return logp

    return logp_where_gradient_finite


def _evaluates(logp_fn: Callable | None, compiled: Any) -> bool:
    """Whether ``logp_fn`` is PyMC's NUTS initialisation's check of ``compiled``: a closure
    over it (``init_nuts``'s ``model_logp_fn``)."""
    cells = getattr(logp_fn, "__closure__", None) or ()
    for cell in cells:
        try:
            if cell.cell_contents is compiled:
                return True
        except ValueError:  # an empty cell
            continue
    return False


def series_gradient_check(model: Any, logp_graph: Any = None) -> Callable[[dict], bool] | None:
    """Whether the derivatives a gradient takes of the log density's series functions
    (:data:`pymc_accel.census.SERIES_FUNCTIONS`) are finite at a point.

    The derivative of ``gammainc(a, x)`` and ``gammaincc(a, x)`` in ``x`` is ``x**(a - 1) *
    exp(-x) / gamma(a)`` up to its sign: infinite at ``x = 0`` for ``a < 1``, and NaN there at
    ``a = 1`` as both PyTensor and JAX compute it; their derivatives in ``a`` are 0 there. That
    of ``betainc(a, b, x)`` in ``x`` is infinite at ``x = 0`` for ``a < 1`` and at ``x = 1``
    for ``b < 1``. A gradient takes the derivative in ``x`` where ``x`` depends on the
    parameters, and the chain rule makes it NaN where ``x`` is 0 through a factor of 0 (an
    interval's lower bound of 0 times a rate). So the check evaluates the functions' inputs at
    the point, forward and op by op in Python (:class:`pymc_accel.graph_building.Evaluator`):
    no derivative and no series. On the zoo's six models with such functions it took 13 to 35
    ms for four starts, where evaluating PyTensor's gradient took 0.30 to 1.04 s (its
    derivatives' loops run element by element), and at 40 starts of each it said what the
    gradient did, 12 of them not finite (``bench/time_start_checks.py``).

    Parameters
    ----------
    model : pm.Model
    logp_graph : pymc_accel.profile.LogpGraph, optional
        The log density the selection's profile built; when not given, the one an open
        :func:`pymc_accel.backends.run_logp.jax_runs_use` block holds for the model, else
        built as the JAX runs build it.

    Returns
    -------
    callable or None
        ``point -> bool`` for ``point`` a dict of the value variables' values by name (what
        PyMC's jitter draws); ``None`` where no gradient takes such a derivative. A point
        where evaluating raises passes: the sampler's own evaluation then says what is wrong.
    """
    from pymc_accel.backends.run_logp import held_graph, run_graph
    from pymc_accel.census import series_function_nodes
    from pymc_accel.graph_building import Evaluator

    try:  # the graph the run jaxified, where it built one
        graph = run_graph(model, logp_graph or held_graph(model))
    except Exception:  # a graph the run itself builds and reports on
        return None
    value_vars = list(graph.value_vars)
    nodes = (graph.series_nodes if graph.series_nodes is not None
             else series_function_nodes(value_vars, graph.logp))
    # each node whose derivative in x a gradient takes, with x's position
    taken = [(node, _X_POSITION[type(node.op.scalar_op).__name__]) for node, free in nodes
             if _X_POSITION.get(type(node.op.scalar_op).__name__) in free]
    if not taken:
        return None
    try:
        evaluate = Evaluator(value_vars, [i for node, _ in taken for i in node.inputs])
    except Exception:
        return None
    names = [v.name for v in value_vars]
    dtypes = [v.dtype for v in value_vars]

    def derivatives_finite(point: dict) -> bool:
        try:
            values = evaluate(*[np.asarray(point[n], dtype=d) for n, d in zip(names, dtypes)])
            return not any(_infinite_derivative(values, taken))
        except Exception:
            return True

    return derivatives_finite


def _infinite_derivative(values: list, taken: list) -> Iterator[bool]:
    """For each node of ``taken`` (a node and the position of its ``x``), whether its
    derivative in ``x`` is infinite at its inputs' ``values`` (every node's, in turn)."""
    at = 0
    for node, x_at in taken:
        inputs = [np.asarray(v) for v in values[at:at + len(node.inputs)]]
        at += len(node.inputs)
        x = inputs[x_at]
        infinite = (x == 0) & (inputs[0] <= 1)  # a <= 1 at x = 0
        if x_at == 2:  # betainc: b <= 1 at x = 1 too
            infinite = infinite | ((x == 1) & (inputs[1] <= 1))
        yield bool(np.any(infinite))


#: Where ``x`` is among each series function's inputs.
_X_POSITION = {"GammaInc": 1, "GammaIncC": 1, "BetaInc": 2}
