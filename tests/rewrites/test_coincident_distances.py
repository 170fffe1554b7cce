from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np
import pymc as pm
import pytensor
import pytest
from jax.flatten_util import ravel_pytree

from pymc_accel.backends import run_logp
from pymc_accel.backends.jax_model import jax_precision
from pymc_accel.backends.run_logp import jaxified_logp, run_graph
from pymc_accel.precision import _points
from pymc_accel.rewrites.coincident_distances import (
    guarded_distances,
    zeroed_coincident_distances,
)
from tests.models import squared_exponential_gp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import sweep_user_models  # noqa: E402
import zoo  # noqa: E402


def _sparse_gp(which: str) -> pm.Model:
    """A FITC sparse GP with a Matern 5/2 kernel (``pm.gp.MarginalApprox``): the user sweep's
    (150 points on a grid, ten inducing points, two of them on data points), the same with a
    kernel written by hand (``"maximum"``, ``"abs"``, ``"switch"``: the guard of its squared
    distance; ``"none"``: no guard) or the zoo's (500 random points, 20 inducing); or
    (``"vfe"``) the sweep's VFE sparse GP, Matern 3/2, its 12 inducing points data inputs."""
    if which == "sweep":
        return sweep_user_models.sparse_gp(pm)
    if which in ("maximum", "abs", "switch", "none"):
        return sweep_user_models._hand_guarded_sparse_gp(pm, which)
    if which == "vfe":
        return sweep_user_models.gp_vfe_matern32(pm)
    return zoo.sparse_gp()


def _held(model: pm.Model) -> int:
    graph = run_graph(model)
    by_name = {v.name: v for v in graph.value_vars}
    inputs = [by_name[v.name] for v in model.value_vars]
    points = [[p[v.name] for v in model.value_vars] for p in _points(model, 1, None, 0)]
    return zeroed_coincident_distances([graph.logp], inputs, lambda: points)[1]


def _gradient_errors(model: pm.Model, flat: bool) -> list[float]:
    """Relative errors of JAX's compiled float64 gradient of the run's log density against
    PyTensor's, at the float32 check's ten points."""
    names = [v.name for v in model.value_vars]
    dlogp = model.compile_dlogp()
    errors = []
    with jax_precision("float64"):
        fn = jaxified_logp(model, device="cpu")
        points = _points(model, 9, None, 0)
        _, unravel = ravel_pytree([np.asarray(points[0][n]) for n in names])
        # the value and the gradient, as a sampler asks for them (NumPyro's potential energy):
        # the gradient alone compiles to another program, fused otherwise
        grad = jax.jit(jax.value_and_grad(lambda flat_x: fn(unravel(flat_x)))) if flat \
            else jax.jit(jax.value_and_grad(fn))
        for point in points:
            args = [np.asarray(point[n]) for n in names]
            g = grad(ravel_pytree(args)[0] if flat else args)[1]
            g = np.asarray(g) if flat else np.concatenate([np.ravel(x) for x in g])
            ref = dlogp(point)
            errors.append(float(np.linalg.norm(g - ref) / max(np.linalg.norm(ref), 1.0)))
    return errors


@pytest.mark.parametrize("which, flat", [("sweep", False), ("zoo", True), ("abs", False),
                                         ("vfe", True)])
def test_a_sparse_gps_compiled_gradient_is_the_log_densitys(which, flat):
    # each wrong by relative 1e2 without the rewrite on this project's AVX2 machine: the
    # first and third with the position a list of arrays, the second and fourth with it one
    # flat vector (bench/compare_jax_gradient.py; the third's kernel guards its distance with
    # abs, and was wrong with the rewrite that knew PyMC's clip only)
    errors = _gradient_errors(_sparse_gp(which), flat)
    assert max(errors) < 1e-8, errors


def test_only_coinciding_inputs_are_held():
    # K(Xu, Xu)'s diagonal, and the data points that are inducing points (0 and 10 here)
    x = np.linspace(0, 10, 150)[:, None]
    xu = np.linspace(0, 10, 10)[:, None]
    expected = len(xu) + int((x[:, 0][None, :] == xu[:, 0][:, None]).sum())
    assert expected == 12
    assert _held(_sparse_gp("sweep")) == expected


@pytest.mark.parametrize("guard", ["maximum", "abs", "switch"])
def test_a_hand_written_kernels_guard_is_held_as_pymcs_clip(guard):
    assert _held(_sparse_gp(guard)) == 12


def test_a_distance_without_a_guard_is_left_alone():
    # sqrt(sqd + 1e-12) with no guard: its derivative has no jump at zero for a rounding to
    # cross, and JAX's compiled gradient was right (bench/compare_jax_gradient.py)
    assert guarded_distances([run_graph(_sparse_gp("none")).logp]) == []


def test_free_inputs_hold_only_the_diagonal():
    # a latent-input GP: every input coincides at the initial point (all zeros), only the
    # diagonal at a jittered one
    with pm.Model() as model:
        x = pm.Normal("x", 0, 1, shape=(5, 1))
        cov = pm.gp.cov.Matern32(1, ls=pm.Gamma("ls", 2, 2))
        pm.MvNormal("y", mu=np.zeros(5), cov=cov(x) + 0.1 * np.eye(5),
                    observed=np.arange(5.0))
    assert _held(model) == 5


def test_a_squared_exponential_kernels_diagonal_is_held():
    # no square root of the distance, but a near-singular kernel matrix's Cholesky factor
    # carries a rounding of its diagonal into the gradient as the square root's 5e5 does
    model = squared_exponential_gp()
    assert len(guarded_distances([run_graph(model).logp])) == 1
    assert _held(model) == 20


def test_a_mixtures_bounds_check_is_not_a_distance():
    # pm.Mixture's component log densities, counts as a column and rates as a row, under
    # switch(y < 0, -inf, logp): a column plus a row in a switch, but guarded at -inf, not at a
    # distance's finite bound; nothing is evaluated for it
    assert guarded_distances([run_graph(zoo.poisson_mixture(200)).logp]) == []


def test_a_student_t_process_keeps_its_gradient_in_numpyros_cpu_layout():
    # pm.gp.TP's squared exponential kernel over 25 points: without the hold, two leapfrog
    # steps in a loop under pmap (NumPyro's chains on XLA's CPU devices) ended with a gradient
    # off by 105 (relative 3e4 in NumPyro's runs), where the same steps under vmap or
    # unrolled were right (bench/numpyro_chain_methods.py --model student_t_process
    # --leapfrogs 2 [--unheld])
    model = sweep_user_models.student_t_process(pm)
    names = [v.name for v in model.value_vars]
    start = model.initial_point()
    dlogp = model.compile_dlogp()
    with jax_precision("float64"):
        fn = jaxified_logp(model, device="cpu")
        z0, unravel = ravel_pytree([jax.numpy.asarray(start[n]) for n in names])
        gradient = jax.grad(lambda z: -fn(unravel(z)))

        def leapfrogs(z):
            def step(_, carry):
                z, p, g = carry
                z = z + 1e-3 * (p - 0.5e-3 * g)
                g_new = gradient(z)
                return z, p - 0.5e-3 * (g + g_new), g_new

            carry = (z, jax.numpy.full_like(z, 0.1), gradient(z))
            return jax.lax.fori_loop(0, 2, step, carry)

        if len(jax.devices()) < 2:
            pytest.skip("one XLA CPU device: no pmap to lay chains out on")
        ends, _, grads = jax.pmap(leapfrogs)(jax.numpy.stack([z0, z0 + 0.1]))
    for end, grad in zip(np.asarray(ends), np.asarray(grads), strict=True):
        ref = -dlogp({n: np.asarray(v) for n, v in zip(names, unravel(end), strict=True)})
        # 3e-8 apart with the hold (the kernel matrix is near-singular), 1.2 without
        assert np.linalg.norm(grad - ref) / max(np.linalg.norm(ref), 1.0) < 1e-6


@pytest.mark.parametrize("which", ["sweep", "switch"])
def test_the_log_density_is_unchanged(monkeypatch, which):
    model = _sparse_gp(which)
    names = [v.name for v in model.value_vars]
    points = _points(model, 3, None, 0)
    with jax_precision("float64"):
        held = jaxified_logp(model, device="cpu")
        monkeypatch.setattr(run_logp, "ZERO_COINCIDENT_DISTANCES", False)
        unheld = jaxified_logp(model, device="cpu")
        for point in points:
            args = [np.asarray(point[n]) for n in names]
            assert float(held(args)) == pytest.approx(float(unheld(args)), rel=1e-12)


def test_pytensor_backends_run_the_rewritten_graph_as_written():
    # the held graph compiled by PyTensor (as the numba and C backends would) gives the same
    # log density: the mask is an ordinary switch
    model = _sparse_gp("sweep")
    graph = run_graph(model)
    by_name = {v.name: v for v in graph.value_vars}
    inputs = [by_name[v.name] for v in model.value_vars]
    pts = _points(model, 1, None, 0)
    values = [[p[v.name] for v in model.value_vars] for p in pts]
    (held,), _ = zeroed_coincident_distances([graph.logp], inputs, lambda: values)
    f = pytensor.function(inputs, [graph.logp, held])
    for args in values:
        before, after = f(*args)
        assert float(after) == pytest.approx(float(before), rel=1e-12)


def test_a_point_that_cannot_be_found_leaves_the_graph_as_written():
    graph = run_graph(_sparse_gp("sweep"))

    def no_point():
        raise ValueError("no initial point")

    outputs, held = zeroed_coincident_distances([graph.logp], graph.value_vars, no_point)
    assert held == 0 and outputs[0] is graph.logp


def test_a_numpyro_run_of_a_vfe_gp_finds_its_posterior():
    # Without the rewrite this run's trees went to NumPyro's cap of 1023 leapfrogs and it found
    # a noise scale of 1.5 (R-hat 2.2); PyMC's NUTS finds 0.291 (sd 0.019) with the same
    # draws (bench/sample_coincident_gp.py --model gp_vfe_matern32)
    import pymc_accel

    idata = pymc_accel.sample(model=_sparse_gp("vfe"), nuts_sampler="numpyro", draws=300,
                              tune=300, chains=2, random_seed=1, progressbar=False)
    sigma = idata.posterior["sigma"].values
    assert abs(float(sigma.mean()) - 0.291) < 0.02
    assert float(idata.sample_stats["n_steps"].mean()) < 100
