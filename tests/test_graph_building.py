"""Tests of pymc_accel.graph_building: the evaluating mode's vectorized elementwise ops."""

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


def test_initial_point_falls_back_to_pymcs_function(monkeypatch):
    import pymc.pytensorf

    def broken(outputs):
        raise RuntimeError("internals moved")

    monkeypatch.setattr(pymc.pytensorf, "replace_rng_nodes", broken)
    model = _many_starts()
    assert set(graph_building.initial_point(model)) == {v.name for v in model.value_vars}
