"""The JAX runs' log density: the graph the selection's profile built, jaxified.

PyMC's ``sample_jax_nuts`` starts by building the model's log density (``model.logp()``),
putting its data in as constants and having PyTensor rewrite and jaxify it. The selection's
profile has just built that log density, on a copy of the model with dims and data frozen
(:func:`pymc_accel.profile.log_density_graph`). A run handed that graph
(:attr:`pymc_accel.backend.SampleRequest.logp_graph`) jaxifies it instead of building its own:
10-30 ms of PyMC's graph building on the zoo's models, and the frozen copy leaves PyTensor's
rewrites less to do (``bench/time_run_logp.py``).

A run that is handed no graph (its selection reused a kept profile, or it samples a rewritten
copy of the model) builds one with the same function, so the program a seeded run compiles, and
its draws, do not depend on what the selection kept. The graph's constants are a copy of the
data, held while the run lasts (PyMC's own path puts the data containers' arrays in without
copying); the profile held the same copy while it ran.

No public PyMC hook takes a log density, so :func:`jax_runs_use` swaps the module function that
``sample_jax_nuts`` calls (``pymc.sampling.jax.get_jaxified_logp``) for one that answers for
the given model from its graph and passes every other model to PyMC's, while the block is open,
as :mod:`pymc_accel.backends.flat_position` swaps the sampler function.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pymc_accel.graph_building import quietly
from pymc_accel.profile import LogpGraph, log_density_graph

_lock = threading.Lock()
_graphs: dict[int, tuple[Any, LogpGraph, int]] = {}  # id(model) -> (model, graph, open blocks)
_original: list[Callable] = []  # PyMC's get_jaxified_logp while a swap is in place


def run_graph(model: Any, graph: LogpGraph | None = None) -> LogpGraph:
    """``graph`` where one is handed over, else the model's log density built as the profile
    builds it (:func:`pymc_accel.profile.log_density_graph`)."""
    if graph is not None:
        return graph
    return quietly(log_density_graph)(model)[0]


def jaxified_logp(model: Any, graph: LogpGraph | None = None, *,
                  negative_logp: bool = True) -> Callable[[Any], Any]:
    """PyMC's ``get_jaxified_logp(model, negative_logp)`` on :func:`run_graph`'s log density.

    Parameters
    ----------
    model : pm.Model
    graph : LogpGraph, optional
        The log density the selection's profile built for ``model``.
    negative_logp : bool, default True
        As PyMC's flag, inverted from its name: True gives ``log p`` (BlackJAX's log density),
        False gives ``-log p`` (NumPyro's potential energy).

    Returns
    -------
    callable
        ``x -> value`` for ``x`` a list of arrays, one per value variable in
        ``model.value_vars``' order (the frozen copy lists them in an order of its own).
    """
    from pymc.sampling.jax import get_jaxified_graph

    graph = run_graph(model, graph)
    by_name = {v.name: v for v in graph.value_vars}
    inputs = [by_name[v.name] for v in model.value_vars]
    logp = graph.logp if negative_logp else -graph.logp
    fn = get_jaxified_graph(inputs=inputs, outputs=[logp])

    def logp_fn(x: Any) -> Any:
        return fn(*x)[0]

    return logp_fn


@contextlib.contextmanager
def jax_runs_use(model: Any, graph: LogpGraph | None = None) -> Iterator[None]:
    """Inside the block, ``pymc.sampling.jax.get_jaxified_logp(model, ...)`` answers with
    :func:`jaxified_logp` on ``graph`` (or on the graph :func:`run_graph` builds, once, when
    ``graph`` is None); other models get PyMC's own.

    Parameters
    ----------
    model : pm.Model
        The model the run samples (the rewritten copy, where the run samples one).
    graph : LogpGraph, optional
        ``model``'s log density, as the selection's profile built it.
    """
    import pymc.sampling.jax as pmjax

    key = id(model)
    with _lock:
        if not _original:
            _original.append(pmjax.get_jaxified_logp)
            pmjax.get_jaxified_logp = _answering
        held = _graphs.get(key)
        if held is not None and held[0] is model:
            _graphs[key] = (model, held[1], held[2] + 1)
        else:
            _graphs[key] = (model, graph, 1)
    try:
        yield
    finally:
        with _lock:
            held_model, held_graph, blocks = _graphs[key]
            if blocks > 1:
                _graphs[key] = (held_model, held_graph, blocks - 1)
            else:
                del _graphs[key]
            if not _graphs:
                pmjax.get_jaxified_logp = _original.pop()


def _answering(model: Any, negative_logp: bool = True) -> Callable[[Any], Any]:
    """The swapped-in ``get_jaxified_logp``: from the graph held for ``model``, or PyMC's."""
    with _lock:
        held = _graphs.get(id(model))
        original = _original[0] if _original else None
    if held is None or held[0] is not model:
        if original is None:  # the last block closed under this call: PyMC's function is back
            from pymc.sampling.jax import get_jaxified_logp

            return get_jaxified_logp(model, negative_logp)
        return original(model, negative_logp)
    graph = held[1]
    if graph is None:  # built once for the block, and kept for a second call in it
        graph = run_graph(model)
        with _lock:
            now = _graphs.get(id(model))
            if now is not None and now[0] is model and now[1] is None:
                _graphs[id(model)] = (model, graph, now[2])
    return jaxified_logp(model, graph, negative_logp=negative_logp)
