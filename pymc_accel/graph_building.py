"""Building PyTensor graphs the selector throws away, and evaluating them, fast.

The profile (:mod:`pymc_accel.profile`) and the float32 guard (:mod:`pymc_accel.precision`)
build a model's log density and gradient to read or evaluate them a few times; these helpers
switch off what PyTensor and Python spend on graphs meant to live long, and evaluate a graph
op by op without building a PyTensor function for it (:class:`Evaluator`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterator
from typing import Any

import numpy as np
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

    Since 2026-11-30 the selector's checks build no function in this mode either: an
    :class:`Evaluator` computes what it computes, the same rewrites applied, without building
    one. The mode stays as the reference the evaluator is tested against.
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


@functools.cache
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

    @node_rewriter([Elemwise])
    def local_vectorized_elemwise(fgraph, node):
        return _vectorized_elemwise(node)

    # PyTensor's own rewrite (one every backend compiles with, in ``specialize``): a triangular
    # or general solve batched over many right-hand vectors as one solve of their matrix. The
    # Python linker runs a Blockwise op one batch element at a time: the LKJ model's solves
    # over its 500 observations, evaluated as PyMC writes them, were 500 calls each.
    from pytensor.tensor.rewriting.linalg.solvers import batched_vector_b_solve_to_matrix_b_solve

    return in2out(local_vectorized_elemwise, batched_vector_b_solve_to_matrix_b_solve,
                  ignore_newtrees=True)


def _vectorized_elemwise(node: Any) -> list[Any] | None:
    """``node``'s outputs computed by an ``Elemwise`` whose ``nfunc_spec`` names this module's
    NumPy function for its scalar op (:func:`_vectorized_ops`), or None where it has none."""
    from pytensor.tensor.elemwise import Elemwise

    op = node.op
    if not isinstance(op, Elemwise):
        return None
    entry = _vectorized_ops().get(type(op.scalar_op))  # the class itself: not a namesake
    if entry is None or op.inplace_pattern or op.nfunc_spec is not None:
        return None
    name, n_inputs = entry
    if len(node.inputs) != n_inputs or len(node.outputs) != 1:
        return None
    vectorized = Elemwise(op.scalar_op, nfunc_spec=(f"{__name__}.{name}", n_inputs, 1))
    return vectorized.make_node(*node.inputs).outputs


def _batched_vector_solve(node: Any) -> list[Any] | None:
    """``node``'s outputs by PyTensor's ``batched_vector_b_solve_to_matrix_b_solve`` (see
    :func:`_vectorized_elemwise_rewriter`), where ``node`` is what that rewrite tracks: a
    ``Blockwise`` solve of vector right-hand sides (the rewrite itself declines the others)."""
    from pytensor.tensor.blockwise import Blockwise
    from pytensor.tensor.linalg.solvers.core import SolveBase
    from pytensor.tensor.rewriting.linalg.solvers import batched_vector_b_solve_to_matrix_b_solve

    op = node.op
    if not (isinstance(op, Blockwise) and isinstance(op.core_op, SolveBase)
            and getattr(op.core_op, "b_ndim", None) == 1):
        return None
    return batched_vector_b_solve_to_matrix_b_solve.transform(None, node) or None


class RepeatedNodes:
    """Which node of a graph computes what an earlier one already does: the same op of the
    same inputs, as PyTensor's ``MergeOptimizer`` finds them (an input counted as the earlier
    node's output it duplicates, and a small constant by its type and value), without the
    ``FunctionGraph`` it works on.

    PyTensor's gradient repeats subexpressions that a compiled function merges: 406 of the 945
    nodes of a Gaussian copula's log density and gradient, four of its six scalar loops (the
    derivative of ``gammainc`` in its shape, each stepped up to thousands of times), whose
    evaluation takes 0.33-0.38x the time with them computed once (20-29 ms less an
    evaluation, on three models). On eight zoo and held-out models without a loop, 15-180 of
    121-586 nodes repeat, their evaluations take 0.79-1.01x the time with them computed once
    (0.5 ms less at most), and finding them adds 0.2-4.0 ms to building the evaluator, which
    the checks evaluate a handful of times (docs/results/repeated-nodes-cpu-2026-12-01.md).
    So by default only a graph with a scalar loop is merged. The values are the same either
    way; nothing is merged in a graph with an op that overwrites its input, and a random
    variable's node is never merged."""

    def __init__(self, nodes: list[Any], merge: bool | None = None) -> None:
        from pytensor.graph.basic import Constant
        from pytensor.scalar.loop import ScalarLoop
        from pytensor.tensor.random.op import RandomVariable

        if merge is None:
            merge = any(isinstance(getattr(node.op, "scalar_op", None), ScalarLoop)
                        for node in nodes)
        self._on = merge and not any(getattr(node.op, "destroy_map", None) for node in nodes)
        self._random, self._constant = RandomVariable, Constant
        self._first: dict[Any, Any] = {}
        self._stands_for: dict[Any, Any] = {}

    def _key(self, var: Any) -> Any:
        if isinstance(var, self._constant):
            data = var.data
            if isinstance(data, np.ndarray) and data.size <= 64:
                return ("constant", var.type, data.dtype.str, data.shape, data.tobytes())
            return ("variable", id(var))
        return ("variable", id(self._stands_for.get(var, var)))

    def earlier(self, node: Any) -> Any:
        """The earlier node ``node`` repeats, or ``None`` (it is then remembered)."""
        if not self._on or isinstance(node.op, self._random):
            return None
        try:
            key = (node.op, tuple(self._key(v) for v in node.inputs))
            first = self._first.setdefault(key, node)
        except TypeError:  # an op that cannot be hashed is computed where it stands
            return None
        if first is node or len(first.outputs) != len(node.outputs):
            return None
        for old, new in zip(node.outputs, first.outputs, strict=True):
            self._stands_for[old] = self._stands_for.get(new, new)
        return first


class Evaluator:
    """A function of a graph's input values giving its output values, each op's Python
    ``perform`` called in turn on NumPy arrays: what ``pytensor.function(inputs, outputs,
    mode=evaluating_mode())`` computes, the same two rewrites applied, without building a
    PyTensor function.

    Building that function copies the graph into a ``FunctionGraph``, runs the rewrite pass over
    every node and links it: 8-57 ms a function on fifteen zoo, held-out and dense models'
    gradients, where making the nodes' thunks alone, as PyTensor's ``PerformLinker`` makes them,
    takes 3-24 ms (docs/benchmarks.md, "The checks' graphs evaluated without a function").
    The float32 check builds two such functions and the scale spread one, for a few
    evaluations each. Here the caller's graph is evaluated where it stands and left unchanged:
    a batched solve's replacement is built beside it, its outputs written to the cells of the
    node's own, and no node is rewired. PyTensor offers no way to evaluate a graph without a
    ``FunctionGraph``, so this is written here.

    An elementwise node with one NumPy function of its inputs (its ``nfunc_spec``, a cast, a
    sum or product of many terms, or one of :func:`_vectorized_ops`, which the evaluating
    mode's rewrite gives a NumPy function) is computed by a thunk of this module's
    (:func:`_elemwise_thunk`), every other node by its op's own Python thunk.

    Intermediate values are released as soon as their last reader has run, and every value at
    the end of a call, as PyTensor's Python linker does with garbage collection on (a check of
    a million-row model holds no more than a function would). An output that is an input or a
    constant is returned as it stands, not copied.

    Parameters
    ----------
    inputs : list of Variable
        The graph's inputs, in the order the values are passed.
    outputs : list of Variable
        The variables to compute. Their other root variables must be constants or shared
        variables (read when called).
    merge : bool, optional
        Whether a node that repeats an earlier one is computed once (its outputs are the
        earlier node's values). By default, where the graph has a scalar loop
        (:class:`RepeatedNodes`).

    Attributes
    ----------
    nodes : list of Apply
        The nodes evaluated, in order: the graph's own and the batched solves'
        replacements.
    merged : int
        The nodes not evaluated for the earlier node they repeat.
    """

    def __init__(self, inputs: list[Any], outputs: list[Any],
                 merge: bool | None = None) -> None:
        from pytensor.compile.sharedvalue import SharedVariable
        from pytensor.graph.basic import Constant
        from pytensor.graph.traversal import io_toposort

        self.inputs = list(inputs)
        # a value's cell, and whether it is computed (the compute map lazy ops such as IfElse
        # read); a replaced node's outputs share both with their replacement's
        storage: dict[Any, list] = {v: [None] for v in self.inputs}
        computed: dict[Any, list] = {v: [True] for v in self.inputs}
        roots: set[int] = {id(storage[v]) for v in self.inputs}

        def cell(var: Any) -> list:
            if var not in storage:
                if isinstance(var, Constant):
                    storage[var] = [var.data]
                elif isinstance(var, SharedVariable):
                    storage[var] = var.container.storage
                elif var.owner is None:
                    raise ValueError(f"{var} is a root of the outputs but not among the inputs")
                else:
                    storage[var], computed[var] = [None], [False]
                    return storage[var]
                computed[var] = [True]
                roots.add(id(storage[var]))
            return storage[var]

        nodes = []
        order = io_toposort(self.inputs, outputs)
        same = RepeatedNodes(order, merge)
        self.merged = 0
        for node in order:
            earlier = same.earlier(node)
            if earlier is not None:  # computed once: its outputs are the earlier node's cells
                for old, new in zip(node.outputs, earlier.outputs, strict=True):
                    storage[old], computed[old] = cell(new), computed[new]
                self.merged += 1
                continue
            # the elementwise ops of _vectorized_ops get their NumPy functions from the thunk
            # (_elemwise_thunk): no replacement node is built for them
            replacement = _batched_vector_solve(node)
            if replacement is None or any(new.owner is None for new in replacement):
                nodes.append(node)
                continue
            for old, new in zip(node.outputs, replacement, strict=True):
                storage[new] = cell(old)
                computed[new] = computed[old]
            nodes.extend(io_toposort(node.inputs, replacement))
        self.nodes = nodes

        thunks = []
        with pytensor.config.change_flags(cxx=""):  # as in evaluating(): a Scan's step too
            for node in nodes:
                for var in (*node.inputs, *node.outputs):
                    cell(var)
                thunk = (_elemwise_thunk(node, storage, computed)
                         or _scalar_loop_thunk(node, storage, computed)
                         or node.op.make_thunk(node, storage, computed, [], "py"))
                thunk.inputs = [storage[v] for v in node.inputs]
                thunk.outputs = [storage[v] for v in node.outputs]
                thunks.append(thunk)
        self._thunks = thunks
        self._input_cells = [storage[v] for v in self.inputs]
        self._output_cells = [cell(v) for v in outputs]
        # each intermediate cell, released after the last node that reads it
        last_reader: dict[int, int] = {}
        cells: dict[int, list] = {}
        for i, node in enumerate(nodes):
            for var in (*node.inputs, *node.outputs):
                c = storage[var]
                if id(c) not in roots:
                    last_reader[id(c)], cells[id(c)] = i, c
        kept = {id(c) for c in self._output_cells}
        self._released: list[list[list]] = [[] for _ in nodes]
        for key, i in last_reader.items():
            if key not in kept:
                self._released[i].append(cells[key])
        self._intermediate_cells = list(cells.values())

    def __call__(self, *values: Any) -> list[Any]:
        """The outputs' values at ``values``, one per input (converted as
        ``pytensor.function`` converts its arguments: ``type.filter``, no downcast)."""
        if len(values) != len(self.inputs):
            raise TypeError(f"expected {len(self.inputs)} values, got {len(values)}")
        for var, c, value in zip(self.inputs, self._input_cells, values, strict=True):
            c[0] = var.type.filter(value, strict=False, allow_downcast=None)
        try:
            with np.errstate(all="ignore"):  # as Elemwise.perform evaluates, once for all nodes
                for thunk, released in zip(self._thunks, self._released, strict=True):
                    thunk()
                    for c in released:
                        c[0] = None
            return [c[0] for c in self._output_cells]
        finally:
            for c in self._intermediate_cells:
                c[0] = None
            for c in self._input_cells:
                c[0] = None


def _elemwise_thunk(node: Any, storage: dict[Any, list], computed: dict[Any, list]) -> Any:
    """A thunk computing an elementwise ``node`` that has one NumPy function of all its
    inputs (``nfunc_spec``) and one output as ``Elemwise.perform`` computes it: the function
    on the inputs' arrays, the result as an array of the output's dtype that owns its data.
    Its runtime broadcast check is made only where an input's static shape leaves a length
    open (otherwise the types guarantee it), and NumPy's floating-point warnings are off
    around the whole evaluation (:meth:`Evaluator.__call__`) rather than around each node.

    ``perform``, called through the thunk ``make_thunk`` builds, spends most of a small
    node's time on those checks and wrappers: the float32 check's eight evaluations of
    seed_small took about half as long without them (docs/benchmarks.md, "The checks'
    elementwise nodes evaluated without PyTensor's wrappers"). ``None`` for any other node
    (PyTensor's own thunk).

    As ``perform``, the function computes in the output's dtype where ``prepare_node`` gives
    the node a signature (``node.tag.sig``: a float output of integer inputs), not in the
    dtype NumPy would pick: ``reciprocal`` of the integer 2 is 0 in NumPy's integer
    arithmetic, and ``exp`` or ``log`` of an int8 is computed in float16. Until 2026-11-30
    the signature was read before ``prepare_node`` set it, and an ``Exponential(2)`` prior's
    initial value, ``log(1 / 2)``, came out as ``log(0)``. Since 2026-12-01 the thunk works
    out the signature and imports the function itself (:func:`_signature`,
    :func:`_numpy_function`) and does not call ``prepare_node``, which also builds a scalar
    node for PyTensor's element-by-element path that this thunk never takes.

    A cast and the ops of :func:`_vectorized_ops` (``second``, ``softplus``, ...) are NumPy
    functions here too: ``astype`` to the output's dtype, as ``prepare_node`` gives a cast, and
    this module's vectorized functions, as the evaluating mode's rewrite gives the others.

    A sum or product of more than two inputs (PyMC's log density of a model is one ``Add`` of
    its terms) has no NumPy function of all its inputs: ``perform`` calls the scalar op's
    Python ``impl`` element by element, and refuses more than 31 inputs (a model of 60 scalar
    variables could not be evaluated, so it had no scale spread). Here it is NumPy's ``add`` or
    ``multiply`` applied from the left, the order of the scalar ``impl``'s own loop."""
    import pytensor.scalar as ps
    from pytensor.tensor.elemwise import Elemwise

    op = node.op
    if not isinstance(op, Elemwise) or op.inplace_pattern or len(node.outputs) != 1:
        return None
    spec = getattr(op, "nfunc_spec", None)
    vectorized = _vectorized_ops().get(type(op.scalar_op))  # the class itself: not a namesake
    if type(op.scalar_op) in (ps.Add, ps.Mul) and len(node.inputs) > 2:
        ufunc = np.add if type(op.scalar_op) is ps.Add else np.multiply

        def function(*args: Any) -> Any:
            return functools.reduce(ufunc, args)
    elif vectorized is not None and spec is None:
        if len(node.inputs) != vectorized[1]:
            return None
        function = globals()[vectorized[0]]
    elif isinstance(op.scalar_op, ps.Cast) and len(node.inputs) == 1:
        function = functools.partial(np.array, dtype=node.outputs[0].type.dtype)  # a copy
    else:
        if (spec is None or spec[1] != len(node.inputs) or spec[2] != 1
                or len(node.inputs) + 1 > 32):
            return None
        function = _numpy_function(spec[0])
        if function is None:
            return None
        sig = _signature(node, function)
        if sig is not None:  # computed in the output's dtype, as Elemwise.perform passes it
            function = functools.partial(function, sig=sig)
    ins = [storage[v] for v in node.inputs]
    out, done = storage[node.outputs[0]], computed[node.outputs[0]]
    dtype = np.dtype(node.outputs[0].type.dtype)
    check = Elemwise._check_runtime_broadcast
    open_lengths = any(length is None for v in node.inputs for length in v.type.shape)

    def thunk():
        args = [c[0] for c in ins]
        if open_lengths:
            check(node, args)
        value = np.asarray(function(*args), dtype=dtype)
        out[0] = value if value.flags.owndata else value.copy()
        done[0] = True

    thunk.lazy = False
    return thunk


def _array_function(fgraph: Any) -> Any:
    """A function of arrays computing a scalar op's inner graph (a ``Composite``'s, a scalar
    loop's step) with NumPy, each inner op by its ``nfunc_spec``'s function or this module's
    (:func:`_vectorized_ops`; a cast by ``astype``, an inner ``Composite`` by this function
    again) and each result cast to its
    variable's dtype, as the scalar ops' ``impl`` casts theirs; ``None`` where an inner op has
    no such function, and the op is left to PyTensor's element-by-element path."""
    import pytensor.scalar as ps
    from pytensor.graph.basic import Constant

    steps = []
    for node in fgraph.toposort():
        op = node.op
        if isinstance(op, ps.Cast):
            function = None
        elif isinstance(op, ps.Composite):
            function = _array_function(op.fgraph)
            if function is None:
                return None
        elif (vectorized := _vectorized_ops().get(type(op))) is not None and (
                getattr(op, "nfunc_spec", None) is None):
            if len(node.inputs) != vectorized[1] or len(node.outputs) != 1:
                return None
            function = globals()[vectorized[0]]
        else:
            spec = getattr(op, "nfunc_spec", None)
            if spec is None or spec[1] != len(node.inputs) or spec[2] != len(node.outputs):
                return None
            function = _numpy_function(spec[0])
            if function is None:
                return None
        steps.append((node, function))
    inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
    # each variable a slot of a list, the plan made once: a scalar loop's step is evaluated
    # at every step of every evaluation (a copula's float32 check stepped one 7,659 times, and
    # looking its variables up by hash was half of it)
    slot: dict[Any, int] = {}
    for var in [*inputs, *(v for node, _ in steps for v in (*node.inputs, *node.outputs)),
                *outputs]:
        slot.setdefault(var, len(slot))
    start: list[Any] = [None] * len(slot)
    for var, i in slot.items():  # the inner graph's constants as arrays, made once
        if isinstance(var, Constant):
            start[i] = np.asarray(var.data, dtype=var.type.dtype)
    plan = [(function, [slot[v] for v in node.inputs],
             [(slot[v], np.dtype(v.type.dtype)) for v in node.outputs])
            for node, function in steps]
    input_slots = [slot[v] for v in inputs]
    output_slots = [slot[v] for v in outputs]

    def evaluate(*args: Any) -> list[Any]:
        values = start.copy()
        for i, value in zip(input_slots, args, strict=True):
            values[i] = value
        for function, ins, outs in plan:
            if function is None:  # a cast
                results = [values[ins[0]]]
            else:
                results = function(*[values[i] for i in ins])
                if len(outs) == 1 or not isinstance(results, (list, tuple)):
                    results = [results]
            for (i, dtype), value in zip(outs, results, strict=True):
                values[i] = np.asarray(value).astype(dtype, copy=False)
        return [values[i] for i in output_slots]

    return evaluate


def _scalar_loop_thunk(node: Any, storage: dict[Any, list], computed: dict[Any, list]) -> Any:
    """A thunk computing an elementwise scalar loop (``pytensor.scalar.loop.ScalarLoop``, what
    PyTensor writes the derivatives of ``gammainc``, ``gammaincc`` and ``betainc`` in their
    parameters with) on whole arrays: every element's loop stepped together by
    :func:`_array_function`, an element's carry left as it stands once its own step count or
    its stop condition is reached, as the element-by-element loop stops; ``None`` for any
    other node, or a loop whose step has an op without a NumPy function.

    Element by element, each step of each element is a Python call of the step's graph: the
    float32 check of an exponential and a gamma margin joined by a Gaussian copula (500 pairs,
    ``gammainc`` of a free shape) took 14.5 s, 520% of its 2.7 s NumPyro run
    (docs/benchmarks.md, "A fifteenth set in the user sweep"). Written here: PyTensor
    evaluates a scalar loop only element by element, or compiled."""
    from pytensor.scalar.loop import ScalarLoop
    from pytensor.tensor.elemwise import Elemwise

    op = node.op
    if (not isinstance(op, Elemwise) or op.inplace_pattern
            or not isinstance(op.scalar_op, ScalarLoop)):
        return None
    loop = op.scalar_op
    step = _array_function(loop.fgraph)
    if step is None:
        return None
    n_update = len(loop.outputs) - (1 if loop.is_while else 0)
    dtypes = [np.dtype(o.type.dtype) for o in node.outputs]
    ins = [storage[v] for v in node.inputs]
    outs = [storage[o] for o in node.outputs]
    done = [computed[o] for o in node.outputs]

    def thunk():
        n_steps, *args = np.broadcast_arrays(*[np.asarray(c[0]) for c in ins])
        if not loop.is_while and np.any(n_steps < 0):
            raise ValueError("ScalarLoop does not have a termination condition.")
        shape = n_steps.shape
        carry = [np.array(a, dtype=d).reshape(-1)
                 for a, d in zip(args[:n_update], dtypes, strict=False)]
        constant = [np.ravel(a) for a in args[n_update:]]
        steps = np.ravel(n_steps)
        until = np.zeros(steps.shape, dtype=bool)
        # an element whose loop has stopped is not stepped again
        live = np.flatnonzero(steps > 0)
        i = 0
        while live.size:
            new = step(*[c[live] for c in carry], *[c[live] for c in constant])
            for k in range(n_update):
                carry[k][live] = new[k]  # a step's constant output broadcast by the assignment
            if loop.is_while:
                stop = np.asarray(new[n_update], dtype=bool)
                if stop.shape != live.shape:
                    stop = np.broadcast_to(stop, live.shape)
                until[live] = stop
                keep = ~stop
            else:
                keep = np.ones(live.shape, dtype=bool)
            i += 1
            keep &= i < steps[live]
            live = live[keep]
        carry = [c.reshape(shape) for c in carry]
        until = until.reshape(shape)
        results = [*carry, until] if loop.is_while else carry
        for cell, value, dtype, flag in zip(outs, results, dtypes, done, strict=True):
            cell[0] = np.asarray(value, dtype=dtype)
            flag[0] = True

    return thunk


@functools.cache
def _numpy_function(path: str) -> Any:
    """The function an ``nfunc_spec`` names (``"numpy.exp"``, ``"scipy.special.gammaln"``), as
    ``Elemwise.prepare_node`` imports it; ``None`` where it cannot be imported."""
    from pytensor.tensor.utils import import_func_from_string

    try:
        return import_func_from_string(path)
    except (ImportError, AttributeError):
        return None


def _signature(node: Any, function: Any) -> str | None:
    """The ufunc signature ``Elemwise.prepare_node`` gives a node (``node.tag.sig``): a float
    output of an integer first input is computed in the output's dtype (``"dd->d"``), not in
    the one NumPy would pick. ``prepare_node`` itself also builds a scalar node of the op, for
    PyTensor's per-element path, which the thunk here does not use: building it was most of
    the evaluator's build time on small models."""
    from pytensor.tensor.type import discrete_dtypes, float_dtypes

    out_dtype = node.outputs[0].type.dtype
    if (out_dtype in float_dtypes and isinstance(function, np.ufunc)
            and node.inputs[0].type.dtype in discrete_dtypes):
        char = np.dtype(out_dtype).char
        return char * len(node.inputs) + "->" + char * len(node.outputs)
    return None


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
    (``make_initial_point_expression``) is evaluated by an :class:`Evaluator`, 2-5 ms, with
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
        expressions = replace_rng_nodes(expressions)
        function = Evaluator([], expressions)
        reseed_rngs(find_rng_nodes(expressions), seed)
        values = function()
        if len(values) != len(names):
            raise ValueError("one initial value per free variable expected")
        return dict(zip(names, values, strict=True))
    except Exception:  # PyMC's internals moved: its own function
        return make_initial_point_fn(model=model, overrides=initvals or None,
                                     jitter_rvs=set())(seed)
