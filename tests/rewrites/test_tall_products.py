from __future__ import annotations

import jax
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

import pymc_accel
from pymc_accel.backends.jax_model import jax_precision
from pymc_accel.profile import log_density_graph
from pymc_accel.rewrites.tall_products import MAX_COLUMNS, transposed_tall_products


def _regression(rows: int = 400, columns: int = 3, seed: int = 0):
    """Conjugate linear regression: y ~ N(X b, 1), b ~ N(0, 1). Returns the model and its
    posterior mean and covariance, ``(X'X + I)^-1 X'y`` and ``(X'X + I)^-1``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, columns))
    y = X @ rng.normal(size=columns) + rng.normal(size=rows)
    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0, shape=columns)
        pm.Normal("y", pm.math.dot(X, b), 1.0, observed=y)
    cov = np.linalg.inv(X.T @ X + np.eye(columns))
    return model, cov @ X.T @ y, cov


def _constant_shapes(fn, point) -> set[tuple[int, ...]]:
    """Shapes of the constants ``fn`` closes over, in its program and the programs it calls
    (the log density is one compiled program, ``run_logp.JIT_LOGP``)."""
    def consts(closed) -> list:
        found = list(closed.consts)
        for eqn in closed.jaxpr.eqns:
            for param in eqn.params.values():
                if hasattr(param, "consts") and hasattr(param, "jaxpr"):  # a ClosedJaxpr
                    found += consts(param)
        return found

    return {tuple(np.shape(c)) for c in consts(jax.make_jaxpr(fn)(point))}


def test_a_regressions_product_holds_its_matrix_transposed_with_the_same_density():
    model, _, _ = _regression()
    graph, _ = log_density_graph(model)
    (rewritten,), count = transposed_tall_products([graph.logp])
    assert count == 1
    rng = np.random.default_rng(1)
    (b,) = graph.value_vars
    before = pytensor.function([b], [graph.logp, pt.grad(graph.logp, b)])
    after = pytensor.function([b], [rewritten, pt.grad(rewritten, b)])
    for _ in range(3):
        for x, y in zip(before(point := rng.normal(size=3)), after(point)):
            np.testing.assert_allclose(x, y, rtol=1e-12)


@pytest.mark.parametrize("shape", [(400, MAX_COLUMNS + 1), (30, 30), (8, 3)])
def test_a_wide_square_or_short_matrix_is_left_as_it_is(shape):
    X = np.random.default_rng(0).normal(size=shape)
    v = pt.vector("v", shape=(shape[1],))
    out = pt.dot(X, v).sum()
    assert transposed_tall_products([out])[1] == 0


def test_a_matrix_used_twice_is_not_copied():
    X = np.random.default_rng(0).normal(size=(400, 3))
    c = pt.constant(X)
    v = pt.vector("v", shape=(3,))
    out = pt.dot(c, v).sum() + c.sum()
    assert transposed_tall_products([out])[1] == 0


def test_a_product_with_a_free_matrix_or_a_shared_one():
    v = pt.vector("v", shape=(3,))
    free = pt.matrix("X", shape=(400, 3))
    assert transposed_tall_products([pt.dot(free, v).sum()])[1] == 0
    X = np.random.default_rng(0).normal(size=(400, 3))
    shared = pytensor.shared(X, name="X")
    (out,), count = transposed_tall_products([pt.dot(shared, v).sum()])
    assert count == 1
    np.testing.assert_allclose(out.eval({v: np.ones(3)}), X.sum(), rtol=1e-12)


def test_a_cpu_run_jaxifies_the_transposed_matrix_and_a_gpu_run_the_original():
    model, _, _ = _regression()
    point = [np.zeros(3)]
    with jax_precision("float64"):
        cpu = _constant_shapes(pymc_accel.jaxified_logp(model, device="cpu"), point)
        gpu = _constant_shapes(pymc_accel.jaxified_logp(model, device="gpu"), point)
        with jax.default_device(jax.devices("cpu")[0]):  # the platform JAX would run it on
            default = _constant_shapes(pymc_accel.jaxified_logp(model), point)
    assert (3, 400) in cpu and (400, 3) not in cpu
    assert (400, 3) in gpu and (3, 400) not in gpu
    assert default == cpu


def test_measured_mode_times_the_log_density_the_run_jaxifies(monkeypatch):
    from pymc_accel.backends import _measure, run_logp

    seen = []
    real = run_logp.jaxified_logp

    def spy(model, graph=None, **kwargs):
        seen.append(kwargs.get("device"))
        return real(model, graph, **kwargs)

    monkeypatch.setattr(run_logp, "jaxified_logp", spy)
    model, _, _ = _regression()
    _measure.time_jax_sampler_gradient(model, "float64", 1, 1.0)  # None if 1 s is too short
    assert seen == ["cpu"]


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_numpyro_on_the_cpu_samples_the_transposed_product_and_recovers_the_posterior(
        precision, monkeypatch):
    """A NumPyro run on the CPU jaxifies the transposed matrix, and its draws match a
    conjugate regression's posterior means and sds within Monte Carlo error."""
    import pymc.sampling.jax as pmjax
    from pytensor.graph.traversal import graph_inputs

    shapes, real = [], pmjax.get_jaxified_graph

    def spy(inputs=None, outputs=None):
        shapes.extend(v.data.shape for v in graph_inputs(outputs)
                      if isinstance(v, pt.TensorConstant))
        return real(inputs=inputs, outputs=outputs)

    monkeypatch.setattr(pmjax, "get_jaxified_graph", spy)
    model, mean, cov = _regression()
    idata = pymc_accel.sample(
        draws=500, tune=500, chains=2, model=model, random_seed=3, progressbar=False,
        nuts_sampler="numpyro", device="cpu", precision=precision,
    )
    assert (3, 400) in shapes and (400, 3) not in shapes
    draws = idata.posterior["b"].values.reshape(-1, 3)
    sd = np.sqrt(np.diag(cov))
    # Monte Carlo error of the mean with ~1000 effective draws: sd / sqrt(1000); 5 of them
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), 5 * sd / np.sqrt(1000) + 1e-6)
    np.testing.assert_allclose(draws.std(0), sd, rtol=0.15)
