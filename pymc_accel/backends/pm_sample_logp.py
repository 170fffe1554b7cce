"""The numba runs' log density: the graph the selection's profile built, handed to ``pm.sample``.

``pm.sample`` builds the model's log density (``model.logp()``) twice before it compiles
anything: ``assign_step_methods`` differentiates it by each variable to see which have a
gradient, and the sampler's function builds it again (PyMC's ``ValueGradFunction``, nutpie's
``compile_pymc_model``). On censored_6, weibull_5 and poisson_groups_303 the two builds, timed
as the profile builds them, came to 33-49 ms, where the whole first selection took 55-59 ms
(docs/results/regret-cpu-1000-2026-11-30-handed-numba.md). The selection's profile has just
built that graph (:func:`pymc_accel.profile.log_density_graph`); where the model has no dims or
data containers to freeze, it built it on the model itself, from the same ``model.logp()``, so a
copy of it is the graph ``pm.sample`` would build. :func:`pm_sample_uses` hands such a copy to
each of those calls, and the run skips building it.

A copy (``clone_replace``): PyMC's and nutpie's rewrites before the gradient replace nodes in
the graph they are given, and the profile's graph is kept (for a later selection of the model,
and its gradient is the census's). The copy has no stack traces, as the profile built it with
PyTensor's traces off (:func:`pymc_accel.graph_building.quietly`): an error PyTensor raises in
the run names the node but not the line of the model that made it.

A graph built on a frozen copy of the model (its data as constants, its value variables its
own) is not handed over: the function compiled from it would not read the model's data
containers, and its compiled kernels would not be those a direct ``pm.sample`` call caches.
No public PyMC hook takes a log density, so the block shadows ``model.logp`` on the model object
for calls with its defaults, as :mod:`pymc_accel.backends.pymc_compiled` shadows
``model.logp_dlogp_function``; any other call (some variables, ``sum=False``, no Jacobian)
builds its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pymc_accel.profile import LogpGraph


def handed_over(model: Any, graph: LogpGraph | None) -> bool:
    """Whether ``graph`` is ``model``'s own log density with its defaults: built from
    ``model``, on its value variables (not a frozen copy's), with no variable left out.

    Parameters
    ----------
    model : pm.Model
    graph : LogpGraph, optional

    Returns
    -------
    bool
    """
    if graph is None or graph.logp is None or not graph.built_from(model):
        return False
    own = list(model.value_vars)
    return len(own) == len(graph.value_vars) and all(
        a is b for a, b in zip(own, graph.value_vars, strict=True))


def copy_of(graph: LogpGraph) -> Any:
    """A copy of ``graph``'s log density on the same inputs (value variables, data, shared
    variables), for a caller that may rewrite it in place."""
    from pytensor.graph.replace import clone_replace

    return clone_replace(graph.logp, replace={})


@contextlib.contextmanager
def pm_sample_uses(model: Any, graph: LogpGraph | None) -> Iterator[bool]:
    """Inside the block, ``model.logp()`` called with its defaults (every variable, with the
    Jacobian, summed) returns a copy of ``graph``'s log density (:func:`copy_of`), where
    ``graph`` is ``model``'s own (:func:`handed_over`); every other call builds its own.

    Parameters
    ----------
    model : pm.Model
        The model the run samples.
    graph : LogpGraph, optional
        The log density the selection's profile built for ``model``
        (:attr:`pymc_accel.backend.SampleRequest.logp_graph`).

    Yields
    ------
    bool
        Whether the log density is handed over.
    """
    if not handed_over(model, graph) or "logp" in vars(model):  # not ours, or shadowed already
        yield False
        return
    original = model.logp

    def logp(vars=None, jacobian=True, sum=True):  # noqa: A002: PyMC's own names
        if vars is None and jacobian is True and sum is True:
            return copy_of(graph)
        return original(vars, jacobian=jacobian, sum=sum)

    model.__dict__["logp"] = logp  # shadows the method for this model object only
    try:
        yield True
    finally:
        model.__dict__.pop("logp", None)
