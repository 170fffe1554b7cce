"""Tests of pymc_accel.graph_building: the evaluating mode's vectorized elementwise ops, the
evaluator that computes what that mode computes without a function, and the initial point."""

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.graph.traversal import io_toposort
from pytensor.tensor.elemwise import Elemwise

from pymc_accel import graph_building
from pymc_accel.graph_building import evaluating

# values on every branch of each op's scalar impl, and at its thresholds
_XS = np.array([-800.0, -40.0, -37.0, -36.9, -3.0, np.log(0.5), -0.5, -1e-8, 0.0, 1.0,
                17.9, 18.0, 30.0, 33.3, 40.0, 800.0, np.inf, -np.inf, np.nan])


def _per_element(scalar_op, *args):
    """PyTensor's own Python evaluation: the scalar impl called element by element."""
    ufunc = np.frompyfunc(scalar_op.impl, len(args), 1)
    with np.errstate(all="ignore"):
        return np.asarray(ufunc(*args), dtype=args[0].dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("scalar_op", "kernel"), [
    (pytensor.scalar.math.softplus, graph_building.vectorized_softplus),
    (pytensor.scalar.math.log1mexp, graph_building.vectorized_log1mexp),
    (ps.identity, graph_building.vectorized_identity),
])
def test_unary_kernels_match_pytensor_impl(scalar_op, kernel, dtype):
    x = _XS.astype(dtype)
    with np.errstate(all="ignore"):
        got = np.asarray(kernel(x), dtype=dtype)
    want = _per_element(scalar_op, x)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    assert got.dtype == want.dtype


def test_second_and_clip_match_pytensor_impl():
    x = np.arange(6.0).reshape(2, 3)
    y = np.array([7.0, 8.0, 9.0])
    np.testing.assert_array_equal(graph_building.vectorized_second(x, y),
                                  _per_element(ps.second, x, y))
    low, high = np.float64(1.0), np.float64(4.0)
    xs = np.array([-1.0, 1.0, 2.5, 4.0, 9.0, np.nan])
    np.testing.assert_array_equal(graph_building.vectorized_clip(xs, low, high),
                                  _per_element(ps.clip, xs, np.full(6, low), np.full(6, high)))


def _graph():
    x = pt.vector("x")
    out = (pt.softplus(x) + pt.log1mexp(-pt.abs(x) - 1.0)).sum()
    return x, out, pytensor.grad(out, x)


def test_evaluating_mode_uses_numpy_functions_with_the_same_values():
    x, out, grad = _graph()
    point = np.linspace(-50.0, 50.0, 101)
    with evaluating() as mode:
        fast = pytensor.function([x], [out, grad], mode=mode)
    plain = pytensor.function([x], [out, grad], mode=Mode(linker="py", optimizer=None))
    specs = {type(n.op.scalar_op).__name__: n.op.nfunc_spec for n in fast.maker.fgraph.apply_nodes
             if isinstance(n.op, Elemwise)}
    # the gradient's fill and both log terms run as NumPy functions, not per element
    for name in ("Softplus", "Log1mexp", "Second"):
        assert specs[name] is not None and specs[name][0].startswith("pymc_accel.graph_building")
    for got, want in zip(fast(point), plain(point), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_evaluating_mode_leaves_the_callers_graph_alone():
    x, out, grad = _graph()
    before = [n.op for n in io_toposort([x], [out, grad])]
    with evaluating() as mode:
        pytensor.function([x], [out, grad], mode=mode)
    assert [n.op for n in io_toposort([x], [out, grad])] == before
    assert all(getattr(op, "nfunc_spec", None) is None or
               not op.nfunc_spec[0].startswith("pymc_accel")
               for op in before if isinstance(op, Elemwise))


def _many_starts():
    import pymc as pm

    with pm.Model() as model:
        mu = pm.Normal("mu", 3.0, 2.0)
        sigma = pm.HalfNormal("sigma", 1.5)
        pm.Dirichlet("w", np.ones(4))
        pm.Normal("drawn", 0.0, 1.0, shape=3, initval="prior")  # a random start: seeded
        pm.Beta("p", 2.0, 5.0, initval=0.2)
        pm.Normal("y", mu, sigma, observed=[1.0, 2.5, 3.0])
    return model


@pytest.mark.parametrize("initvals", [None, {"mu": 1.5, "sigma": 0.3}])
@pytest.mark.parametrize("seed", [0, 7])
def test_initial_point_is_pymcs(initvals, seed):
    from pymc.initial_point import make_initial_point_fn

    model = _many_starts()
    got = graph_building.initial_point(model, initvals, seed)
    want = make_initial_point_fn(model=model, overrides=initvals, jitter_rvs=set())(seed)
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])
        assert got[name].dtype == want[name].dtype


def test_initial_point_of_integer_parameters_is_pymcs():
    """An ``Exponential(2)`` prior starts at log(1 / 2): the evaluator computed the reciprocal
    of the int8 constant 2 in NumPy's integer arithmetic, 0, and the start was log(0) = -inf
    (the start check then refused the model for DEER-MALA, and the selection lost its scale
    spread)."""
    import pymc as pm
    from pymc.initial_point import make_initial_point_fn

    with pm.Model() as model:
        pm.Exponential("rate_two", 2)
        pm.Gamma("shape_four", 4, 2)
        pm.InverseGamma("inverse", 3, 2)
        pm.Normal("y", 0.0, 1.0, observed=[0.5])
    got = graph_building.initial_point(model)
    want = make_initial_point_fn(model=model, jitter_rvs=set())(0)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12)
    assert np.isclose(got["rate_two_log__"], np.log(0.5))


@pytest.mark.parametrize("op", [pt.reciprocal, pt.exp, pt.log, pt.sqrt])
def test_evaluator_computes_a_float_of_integers_in_the_outputs_dtype(op):
    """As ``Elemwise.perform`` does, through the signature ``prepare_node`` gives the node:
    NumPy computes ``reciprocal`` of an integer in integers (1 // 3 = 0) and ``exp`` or ``log``
    of an int8 in float16."""
    x = pt.constant(np.array([3, 7], dtype="int8"))
    out = op(x)
    want = pytensor.function([], out, mode=Mode(linker="py", optimizer=None))()
    got = graph_building.Evaluator([], [op(x)])()[0]  # a node no function has prepared
    assert got.dtype == out.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, op(np.array([3.0, 7.0])).eval(), rtol=1e-6)


def test_evaluator_builds_its_elementwise_thunks_without_prepare_node(monkeypatch):
    """``Elemwise.prepare_node`` builds a scalar node for PyTensor's per-element path, most of
    the evaluator's build time on small models; the evaluator's own thunks need only the
    function and its signature. Their values stay those of PyTensor's Python linker: a float
    of integers in the output's dtype, a cast, ``softplus`` and ``second``."""
    from pytensor.tensor.elemwise import Elemwise

    i = pt.constant(np.array([3, 7], dtype="int8"))
    x = pt.dvector("x")
    outs = [pt.reciprocal(i), pt.cast(x, "float32") * 2, pt.softplus(x), pt.second(x, 1.5),
            pt.cast(pt.lt(x, 0.0), "float64")]
    want = pytensor.function([x], outs, mode=Mode(linker="py", optimizer=None))(
        np.array([-40.0, 0.3]))

    def refuse(*args, **kwargs):
        raise AssertionError("prepare_node called")

    monkeypatch.setattr(Elemwise, "prepare_node", refuse)
    f = graph_building.Evaluator([x], outs)
    elementwise = [t for n, t in zip(f.nodes, f._thunks, strict=True)
                   if isinstance(n.op, Elemwise)]
    assert len(elementwise) == 7 and not any(hasattr(t, "perform") for t in elementwise)
    for got, expected in zip(f(np.array([-40.0, 0.3])), want, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("op", [pt.add, pt.mul])
@pytest.mark.parametrize("n", [3, 40])
def test_evaluator_computes_a_sum_or_product_of_many_inputs(op, n):
    """PyMC's log density of a model with 60 scalar variables is one ``Add`` of 61 terms,
    which ``Elemwise.perform`` refuses (over 32 operands): the model had no scale spread."""
    rng = np.random.default_rng(0)
    xs = [pt.vector(f"x{i}", shape=(None,)) for i in range(n)]
    values = [rng.uniform(0.9, 1.1, size=4) for _ in range(n)]
    out = op(*xs)
    assert len(out.owner.inputs) == n
    got = graph_building.Evaluator(xs, [out])(*values)[0]
    want = values[0]
    for v in values[1:]:
        want = want + v if op is pt.add else want * v
    np.testing.assert_array_equal(got, want)
    if n < 32:  # PyTensor's own Python evaluation, element by element
        fn = pytensor.function(xs, out, mode=Mode(linker="py", optimizer=None))
        np.testing.assert_array_equal(got, fn(*values))
    with pytest.raises(ValueError):  # runtime broadcasting refused, as PyTensor refuses it
        graph_building.Evaluator(xs, [out])(*values[:-1], rng.uniform(size=1))


def test_initial_point_falls_back_to_pymcs_function(monkeypatch):
    import pymc.pytensorf

    def broken(outputs):
        raise RuntimeError("internals moved")

    monkeypatch.setattr(pymc.pytensorf, "replace_rng_nodes", broken)
    model = _many_starts()
    assert set(graph_building.initial_point(model)) == {v.name for v in model.value_vars}


def test_evaluator_computes_what_the_evaluating_mode_computes_without_a_function(monkeypatch):
    x, out, grad = _graph()
    point = np.linspace(-50.0, 50.0, 101)
    with evaluating() as mode:
        want = pytensor.function([x], [out, grad], mode=mode)(point)
    monkeypatch.setattr(pytensor, "function", lambda *a, **k: pytest.fail("a function built"))
    f = graph_building.Evaluator([x], [out, grad])
    # NumPy functions, not per element: the evaluator's own thunks (PyTensor's have a
    # ``perform``), and no replacement node built for them
    own = {type(n.op.scalar_op).__name__: not hasattr(t, "perform")
           for n, t in zip(f.nodes, f._thunks, strict=True) if isinstance(n.op, Elemwise)}
    for name in ("Softplus", "Log1mexp", "Second"):
        assert own[name]
    assert all(n.op.nfunc_spec is None for n in f.nodes
               if type(getattr(n.op, "scalar_op", None)).__name__ in ("Softplus", "Second"))
    for got, expected in zip(f(point), want, strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_evaluator_computes_a_models_log_density_and_gradient_as_pytensors_perform(dtype):
    """Elementwise nodes with one NumPy function run through the evaluator's own thunk, not
    ``Elemwise.perform``: the values, dtypes and errors must be those of PyTensor's Python
    linker without rewrites, in both precisions (the float32 check's two graphs)."""
    import pymc as pm

    from pymc_accel.precision import float32_graph

    with pm.Model() as model:
        a = pm.Normal("a", 0.0, 1.0, shape=4)
        s = pm.HalfNormal("s", 2.0)
        x = np.linspace(-3.0, 3.0, 40).reshape(10, 4)
        pm.Bernoulli("y", logit_p=(x * a).sum(axis=1), observed=np.arange(10) % 2)
        pm.StudentT("z", nu=4.0, mu=a[:, None] * x.T, sigma=s, observed=x.T ** 2)
    logp = model.logp()
    ins, outs = list(model.value_vars), [logp, *pytensor.grad(logp, model.value_vars)]
    if dtype == "float32":
        ins, outs = float32_graph(ins, outs)
    values = [np.linspace(-0.5, 0.7, 4).astype(dtype), np.asarray(0.3, dtype=dtype)]
    want = pytensor.function(ins, outs, mode=Mode(linker="py", optimizer=None))(*values)
    f = graph_building.Evaluator(ins, outs)
    assert sum(not hasattr(t, "perform") for t in f._thunks) > 10  # its own thunks ran
    for got, expected in zip(f(*values), want, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_evaluator_refuses_runtime_broadcasting_as_pytensor_does():
    x, y = pt.vector("x"), pt.vector("y")  # lengths left open
    f = graph_building.Evaluator([x, y], [pt.exp(x) + y])
    np.testing.assert_allclose(f(np.zeros(3), np.ones(3))[0], np.full(3, 2.0))
    with pytest.raises(ValueError, match="Runtime broadcasting not allowed"):
        f(np.zeros(1), np.ones(3))
    with pytest.raises(ValueError, match="Runtime broadcasting not allowed"):
        pytensor.function([x, y], pt.exp(x) + y, mode=Mode(linker="py", optimizer=None))(
            np.zeros(1), np.ones(3))


def test_evaluator_solves_a_batch_of_vectors_as_one_matrix_and_leaves_the_graph_alone():
    from pytensor.tensor.blockwise import Blockwise

    a, b = pt.matrix("a"), pt.matrix("b")
    out = pt.linalg.solve(a, b, b_ndim=1).sum()  # b's rows: a batch of right-hand vectors
    before = [(n.op, list(n.inputs)) for n in io_toposort([a, b], [out])]
    f = graph_building.Evaluator([a, b], [out])
    solves = [n.op.core_op.b_ndim for n in f.nodes if isinstance(n.op, Blockwise)]
    assert solves == [2]
    assert [(n.op, list(n.inputs)) for n in io_toposort([a, b], [out])] == before
    rng = np.random.default_rng(0)
    av, bv = rng.normal(size=(4, 4)) + 4 * np.eye(4), rng.normal(size=(30, 4))
    np.testing.assert_allclose(f(av, bv)[0], np.linalg.solve(av, bv.T).sum(), rtol=1e-12)


def test_evaluator_releases_its_values_and_returns_fresh_arrays():
    x = pt.vector("x")
    y = pt.exp(x) * 2.0
    f = graph_building.Evaluator([x], [y, y.sum()])
    first = f(np.zeros(3))
    second = f(np.ones(3))
    np.testing.assert_array_equal(first[0], np.full(3, 2.0))  # not overwritten by the second
    np.testing.assert_allclose(second[0], np.full(3, 2.0 * np.e))
    assert all(c[0] is None for c in f._intermediate_cells + f._input_cells)


def test_evaluator_reads_shared_variables_and_converts_values_as_a_function_does():
    x = pt.vector("x", dtype="float32")
    scale = pytensor.shared(np.float32(2.0))
    f = graph_building.Evaluator([x], [x * scale])
    np.testing.assert_array_equal(f([1.0, 2.0])[0], np.array([2.0, 4.0], dtype="float32"))
    scale.set_value(np.float32(3.0))
    assert f(np.ones(2, dtype="float32"))[0].tolist() == [3.0, 3.0]
    with pytest.raises(TypeError):
        f(np.ones(2))  # float64 into a float32 input: no silent downcast, as pytensor.function
    with pytest.raises(TypeError):
        f()


def test_evaluator_runs_a_scan():
    x = pt.vector("x")
    steps = pytensor.scan(lambda xt, acc: acc * 0.5 + xt, sequences=[x],
                          outputs_info=[pt.constant(0.0, dtype=x.dtype)], return_updates=False)
    out = steps.sum()
    grad = pytensor.grad(out, x)
    value = np.linspace(-1.0, 1.0, 7)
    with evaluating() as mode:
        want = pytensor.function([x], [out, grad], mode=mode)(value)
    got = graph_building.Evaluator([x], [out, grad])(value)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-14)


def test_evaluator_runs_a_lazy_ifelse_on_a_rewritten_nodes_output_and_an_op_from_graph():
    """IfElse reads whether its inputs are computed; an input that a replacement computed
    (the gradient's fills, ``second``, rewritten to NumPy's) must read as computed."""
    from pytensor.compile.builders import OpFromGraph
    from pytensor.conditional.op import ifelse

    x, a = pt.vector("x"), pt.scalar("a")
    branch = ifelse(pt.gt(a, 0), x.sum(), (x**2).sum())
    doubled_exp = OpFromGraph([x], [pt.exp(x) * 2])
    out = doubled_exp(x).sum() + branch
    outputs = [out, *pytensor.grad(out, [x, a], disconnected_inputs="ignore")]
    with evaluating() as mode:
        function = pytensor.function([x, a], outputs, mode=mode)
    f = graph_building.Evaluator([x, a], outputs)
    value = np.linspace(-1.0, 1.0, 5)
    for condition in (1.0, -1.0, 1.0):
        for got, want in zip(f(value, condition), function(value, condition), strict=True):
            np.testing.assert_array_equal(got, want)


def test_a_scalar_loop_is_evaluated_on_whole_arrays_with_the_compiled_values():
    """PyTensor's derivatives of ``gammainc`` in its shape and of ``betainc`` in its first two
    arguments are scalar loops; element by element, each step of each element was a Python
    call (the float32 check of a copula with 500 pairs took 14.5 s). Stepped on whole arrays
    they give what the compiled function gives, in float64 and float32."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.scalar.loop import ScalarLoop

    from pymc_accel import graph_building

    for dtype, special in [("float64", pt.gammainc), ("float32", pt.gammainc),
                           ("float64", lambda a, x: pt.betainc(a, x, 0.3))]:
        a, x = pt.vector("a", dtype=dtype), pt.vector("x", dtype=dtype)
        outputs = pytensor.grad(special(a, x).sum(), [a, x])
        loops = [n for n in pytensor.graph.traversal.apply_ancestors(outputs)
                 if isinstance(getattr(n.op, "scalar_op", None), ScalarLoop)]
        assert loops
        for n in loops:
            cells = {v: [None] for v in (*n.inputs, *n.outputs)}
            assert graph_building._scalar_loop_thunk(n, cells, {v: [False] for v in n.outputs})
        values = [np.linspace(0.5, 8.0, 40).astype(dtype),
                  np.linspace(0.1, 12.0, 40).astype(dtype)]
        compiled = pytensor.function([a, x], outputs)(*values)
        evaluated = graph_building.Evaluator([a, x], outputs)(*values)
        for got, want in zip(evaluated, compiled, strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == "float64" else 1e-5)


def _loop_steps(monkeypatch):
    """Count the scalar-loop thunks the evaluator runs."""
    runs = []
    made = graph_building._scalar_loop_thunk

    def counting(node, storage, computed):
        thunk = made(node, storage, computed)
        if thunk is None:
            return None

        def run():
            runs.append(node)
            thunk()
        return run

    monkeypatch.setattr(graph_building, "_scalar_loop_thunk", counting)
    return runs


def test_evaluator_computes_a_repeated_node_once_with_the_same_values(monkeypatch):
    """PyTensor's gradient of ``gammainc`` in its shape, taken where the function appears twice,
    holds the same scalar loop twice (the same op of the same inputs, one input a separate
    constant of the same value): evaluated once, with the values a compiled function gives."""
    from pytensor.scalar.loop import ScalarLoop

    a, x = pt.vector("a"), pt.vector("x")
    out = pt.log(pt.gammainc(a, x)).sum() + (pt.gammainc(a, x) * pt.constant(2.0)).sum()
    outputs = [out, *pytensor.grad(out, [a, x])]
    loops = [n for n in io_toposort([a, x], outputs)
             if isinstance(getattr(n.op, "scalar_op", None), ScalarLoop)]
    runs = _loop_steps(monkeypatch)
    evaluator = graph_building.Evaluator([a, x], outputs)
    assert evaluator.merged > 0
    assert len(evaluator.nodes) + evaluator.merged == len(io_toposort([a, x], outputs))
    values = [np.linspace(0.5, 8.0, 40), np.linspace(0.1, 12.0, 40)]
    got = evaluator(*values)
    assert len(loops) > len(runs) > 0  # each distinct loop once, not each copy
    want = pytensor.function([a, x], outputs)(*values)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_evaluator_merges_small_constants_by_value_not_large_ones_or_random_draws():
    x = pt.vector("x")
    same = [x + pt.constant(1.0), x + pt.constant(1.0)]  # each a DimShuffle and an Add
    assert graph_building.Evaluator([x], same).merged == 0  # no scalar loop: not by default
    evaluator = graph_building.Evaluator([x], same, merge=True)
    assert evaluator.merged == len(evaluator.nodes) == 2
    first, second = evaluator(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(first, [2.0, 3.0])
    np.testing.assert_array_equal(second, [2.0, 3.0])
    differ = [x + pt.constant(1.0), x + pt.constant(2.0)]
    assert graph_building.Evaluator([x], differ, merge=True).merged == 0
    big = np.arange(100.0)
    large = [x + pt.constant(big), x + pt.constant(big)]
    assert graph_building.Evaluator([x], large, merge=True).merged == 0
    rng = pytensor.shared(np.random.default_rng(0))
    draws = [pt.random.normal(0, 1, size=3, rng=rng, return_next_rng=False)
             for _ in range(2)]
    from pytensor.tensor.random.op import RandomVariable
    nodes = graph_building.Evaluator([], draws, merge=True).nodes
    assert sum(isinstance(n.op, RandomVariable) for n in nodes) == 2


def test_evaluator_merges_nothing_in_a_graph_that_overwrites_an_input():
    """An op that overwrites its input would overwrite a value merged nodes share."""
    exp_inplace = Elemwise(ps.exp, inplace_pattern={0: 0})
    x = pt.vector("x")
    outputs = [exp_inplace(x * 2.0), x * 2.0 + 1.0]
    evaluator = graph_building.Evaluator([x], outputs, merge=True)
    assert evaluator.merged == 0
    got = evaluator(np.array([0.0, 1.0]))
    np.testing.assert_allclose(got[0], np.exp([0.0, 2.0]))
    np.testing.assert_allclose(got[1], [1.0, 3.0])
