"""Building PyTensor graphs the selector throws away, fast.

The profile (:mod:`pymc_accel.profile`) and the float32 guard (:mod:`pymc_accel.precision`)
build a model's log density and gradient to read or evaluate them once; these helpers switch
off what PyTensor and Python spend on graphs meant to live long.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterator
from typing import Any

import pytensor


def _without_traces(fn):
    """Run ``fn`` with PyTensor's stack traces off: PyTensor records a Python stack trace for
    every variable it creates (``config.traceback__limit``), which was 85% of profiling eight
    schools (0.33 s against 0.05 s); the selector's graph copies need none."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with pytensor.config.change_flags(traceback__limit=0):
            return fn(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while graphs are built: building a logp and gradient
    graph allocates thousands of small objects, which set off collections of the whole heap
    (a full one walks every object a PyMC session holds). Timed on the quick zoo, 8 first
    selections each: medians 0-30% lower, the slowest 2-4x faster (eight schools 246 ms ->
    81 ms; bench/bench_regret.py once saw a 1.3 s profile of pk_scan). The collector is
    left as it was found (on, unless the caller had switched it off) and collects later as
    usual: the garbage is a few megabytes of graph."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def quietly(fn):
    """:func:`_without_traces`, with the collector paused (:func:`_collector_paused`)."""

    traced = _without_traces(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _collector_paused():
            return traced(*args, **kwargs)

    return wrapper


def evaluating_mode() -> Any:
    """PyTensor's Python linker with two rewrites only: each op's ``perform`` on NumPy arrays.

    One gives a few elementwise ops that PyTensor evaluates element by element in Python a
    NumPy function over the whole array (:func:`_vectorized_ops`): the same values in float64,
    and in float32 within a unit in the last place (NumPy's float32 ``exp`` and ``log`` over
    arrays, where the per-element path rounds each scalar result). The other, PyTensor's own,
    solves a batch of right-hand vectors as one matrix, as every backend compiles it.

    For a graph evaluated a handful of times, compiling is where the time would go: the float32
    check (:func:`pymc_accel.precision.check_float32`) compiled two functions with
    ``FAST_COMPILE`` and the stabilizing rewrites, 0.1-0.3 s each on the quick zoo (1.2 s for the
    pharmacokinetic Scan model's pair), against 0.05-0.4 s for the whole check in this mode
    (docs/benchmarks.md, "The float32 check's cost"). Callers apply the rewrites every backend
    compiles with themselves, once, where they matter
    (:func:`pymc_accel.precision.as_backends_rewrite`).
    """
    from pytensor.compile.mode import Mode

    return Mode(linker="py", optimizer=_vectorized_elemwise_rewriter())


# PyTensor's Python linker evaluates an elementwise op through NumPy when its scalar op names a
# NumPy (or SciPy) function (``nfunc_spec``), and otherwise calls the scalar op's Python
# ``impl`` once per element (``np.frompyfunc``). Among the ops a PyMC log density and its
# gradient use, ``second`` (the gradient's fills) and ``softplus`` (every logistic likelihood)
# have no such function, and the float32 check of a 5,000-row logistic model spent about three
# quarters of its evaluations in those Python calls. No library provides them vectorized, so
# these are written here: each is the scalar ``impl`` of PyTensor 2.x, branch for branch, on
# whole arrays (same formulas, thresholds and dtypes; float32 results within a unit in the last
# place of the per-element ones, from NumPy's vectorized float32 ``exp`` and ``log``).


def _float_input(x: Any) -> Any:
    import numpy as np

    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def vectorized_second(x: Any, y: Any) -> Any:
    """``second(x, y)``: ``y`` broadcast to the shape of ``x`` and ``y`` together."""
    import numpy as np

    x, y = np.asarray(x), np.asarray(y)
    return np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape))


def vectorized_identity(x: Any) -> Any:
    """``identity(x)``."""
    import numpy as np

    return np.array(x, copy=True)


def vectorized_clip(x: Any, low: Any, high: Any) -> Any:
    """``clip(x, low, high)``, ``nan`` passed through as PyTensor's ``impl`` does."""
    import numpy as np

    return np.where(x < low, low, np.where(x > high, high, x))


def vectorized_softplus(x: Any) -> Any:
    """``softplus(x) = log(1 + exp(x))`` by PyTensor's four branches."""
    import numpy as np

    x = _float_input(x)
    return np.where(x < -37.0, np.exp(x), np.where(
        x < 18.0, np.log1p(np.exp(x)), np.where(x < 33.3, x + np.exp(-x), x)))


def vectorized_log1mexp(x: Any) -> Any:
    """``log1mexp(x) = log(1 - exp(x))`` by PyTensor's two branches."""
    import numpy as np

    x = _float_input(x)
    return np.where(x < np.log(0.5), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def _vectorized_ops() -> dict[type, tuple[str, int]]:
    """PyTensor's scalar op class -> (function in this module, number of inputs)."""
    from pytensor.scalar.basic import Clip, Identity, Second
    from pytensor.scalar.math import Log1mexp, Softplus

    return {
        Second: ("vectorized_second", 2),
        Identity: ("vectorized_identity", 1),
        Clip: ("vectorized_clip", 3),
        Softplus: ("vectorized_softplus", 1),
        Log1mexp: ("vectorized_log1mexp", 1),
    }


def _vectorized_elemwise_rewriter() -> Any:
    """A rewrite giving the elementwise ops of :func:`_vectorized_ops` their NumPy functions, for
    the Python linker (with one of PyTensor's, below, the only rewrites :func:`evaluating_mode`
    applies). It rebuilds each such node with an ``Elemwise`` of the same scalar op whose
    ``nfunc_spec`` names the function above, in the compiled function's own copy of the graph."""
    from pytensor.graph.rewriting.basic import in2out, node_rewriter
    from pytensor.tensor.elemwise import Elemwise

    vectorized_ops = _vectorized_ops()

    @node_rewriter([Elemwise])
    def local_vectorized_elemwise(fgraph, node):
        op = node.op
        entry = vectorized_ops.get(type(op.scalar_op))  # the class itself: not a namesake
        if entry is None or op.inplace_pattern or op.nfunc_spec is not None:
            return None
        name, n_inputs = entry
        if len(node.inputs) != n_inputs or len(node.outputs) != 1:
            return None
        vectorized = Elemwise(op.scalar_op, nfunc_spec=(f"{__name__}.{name}", n_inputs, 1))
        return vectorized.make_node(*node.inputs).outputs

    # PyTensor's own rewrite (one every backend compiles with, in ``specialize``): a triangular
    # or general solve batched over many right-hand vectors as one solve of their matrix. The
    # Python linker runs a Blockwise op one batch element at a time: the LKJ model's solves
    # over its 500 observations, evaluated as PyMC writes them, were 500 calls each.
    from pytensor.tensor.rewriting.linalg.solvers import batched_vector_b_solve_to_matrix_b_solve

    return in2out(local_vectorized_elemwise, batched_vector_b_solve_to_matrix_b_solve,
                  ignore_newtrees=True)


@contextlib.contextmanager
def evaluating() -> Iterator[Any]:
    """:func:`evaluating_mode`, with PyTensor's C compiler off while functions are built in it.

    The Python linker covers the outer graph only: a ``Scan`` links its step's inner function
    itself, with PyTensor's VM and C thunks, so a check of a Scan model started ``gcc`` (a
    0.12 s probe of its flags in each new process, and a compile per new step graph). With no
    compiler the step runs op by op in Python too: the pharmacokinetic Scan model's float32
    check took 0.26 s in a new process, where it took 0.43 s (docs/benchmarks.md)."""
    with pytensor.config.change_flags(cxx=""):
        yield evaluating_mode()


def initial_point(model: Any, initvals: dict | None = None, seed: int = 0) -> dict[str, Any]:
    """The model's initial point on the transformed scale, with no jitter: what PyMC's
    ``make_initial_point_fn(model=model, overrides=initvals, jitter_rvs=set())(seed)`` returns.

    PyMC compiles that function with ``FAST_COMPILE`` (its rewrites), 4-13 ms on the quick
    zoo's models (35-100 ms for the first in a process); here the same graph of PyMC's
    (``make_initial_point_expression``) is evaluated in :func:`evaluating_mode`, 2-5 ms, with
    its random generators seeded as PyMC seeds them. Any failure falls back to PyMC's function.
    """
    from pymc.initial_point import (
        convert_str_to_rv_dict,
        make_initial_point_expression,
        make_initial_point_fn,
    )
    from pymc.pytensorf import find_rng_nodes, replace_rng_nodes, reseed_rngs

    names = [v.name for v in model.value_vars]
    try:
        expressions = make_initial_point_expression(
            free_rvs=model.free_RVs,
            rvs_to_transforms=model.rvs_to_transforms,
            initval_strategies={**model.rvs_to_initial_values,
                                **convert_str_to_rv_dict(model, initvals or {})},
            jitter_rvs=set(),
            default_strategy="support_point",
            return_transformed=True,
        )
        with evaluating() as mode:
            function = pytensor.function([], replace_rng_nodes(expressions), mode=mode)
        reseed_rngs(find_rng_nodes(function.maker.fgraph.outputs), seed)
        values = function()
        if len(values) != len(names):
            raise ValueError("one initial value per free variable expected")
        return dict(zip(names, values, strict=True))
    except Exception:  # PyMC's internals moved: its own function
        return make_initial_point_fn(model=model, overrides=initvals or None,
                                     jitter_rvs=set())(seed)
