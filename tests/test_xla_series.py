"""JAX's incomplete gamma loops counted in NumPy (pymc_accel.xla_series)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pymc_accel.census import census_of, series_function_nodes
from pymc_accel.profile import ModelProfile, log_density_graph, profile_model
from pymc_accel.xla_series import igamma_loop_iterations, loop_work, xla_gradient_stand_in


def _jax_loop_counts(fn, a, x, dtype: str = "float64") -> list[int]:
    """The iterations of each ``while_loop`` JAX's own implementation ``fn`` runs, eagerly."""
    import jax
    import jax._src.lax.special as special
    import jax.numpy as jnp

    counts, original = [], special.while_loop

    def counted(cond, body, init):
        n = [0]

        def step(state):
            n[0] += 1
            return body(state)

        out = original(cond, step, init)
        counts.append(n[0])
        return out

    special.while_loop = counted
    try:
        with jax.disable_jit(), jax.enable_x64(True):
            fn(jnp.asarray(a, dtype=dtype), jnp.asarray(x, dtype=dtype), dtype=jnp.dtype(dtype))
    finally:
        special.while_loop = original
    return counts


@pytest.mark.parametrize("a, x", [
    (np.full(20, 3.0), np.linspace(0.1, 2.5, 20)),  # the series only
    (np.full(20, 3.0), np.linspace(4.0, 40.0, 20)),  # the continued fraction only
    (np.full(5, 30.0), np.linspace(10.0, 50.0, 5)),  # both
    (np.random.default_rng(1).gamma(2, 1, 50) + 0.2, np.random.default_rng(2).gamma(2, 1, 50)),
])
def test_the_iterations_are_those_jaxs_own_loops_take(a, x):
    import jax._src.lax.special as special

    # igamma and igamma_grad_a run the continued fraction first, igammac the series
    fraction, series = _jax_loop_counts(special.igamma_impl, a, x)
    assert igamma_loop_iterations(a, x) == (series, fraction)
    series, fraction = _jax_loop_counts(special.igammac_impl, a, x)
    assert igamma_loop_iterations(a, x, complement=True) == (series, fraction)
    fraction, series = _jax_loop_counts(special.igamma_grad_a_impl, a, x)
    assert igamma_loop_iterations(a, x, derivative=True) == (series, fraction)


def test_float32_iterations_are_those_jaxs_own_float32_loops_take():
    """float32's machine epsilon ends the loops sooner, and its prefactor underflows sooner:
    at shape 200 and x 50 (a log x - x - lgamma(a) is about -126) JAX's float32 leaves the
    element out of the loops, where float64 runs its series the longest of the batch."""
    import jax._src.lax.special as special

    a = np.array([200.0, 3.0, 0.7, 8.0])
    x = np.array([50.0, 0.5, 0.3, 12.0])
    assert igamma_loop_iterations(a[:1], x[:1], dtype="float32") == (0, 0)
    fraction, series = _jax_loop_counts(special.igamma_impl, a, x, "float32")
    assert igamma_loop_iterations(a, x, dtype="float32") == (series, fraction)
    fraction, series = _jax_loop_counts(special.igamma_grad_a_impl, a, x, "float32")
    assert igamma_loop_iterations(a, x, derivative=True, dtype="float32") == (series, fraction)


def test_float32_loops_stop_sooner():
    a, x = np.full(10, 8.0), np.linspace(4.0, 12.0, 10)
    assert sum(igamma_loop_iterations(a, x, dtype="float32")) < sum(igamma_loop_iterations(a, x))


def _censored_gamma(free_shape: bool, own_shape: bool = False, n: int = 200):
    y = np.minimum(np.linspace(0.1, 4.0, n), 2.5)
    with pm.Model() as model:
        if own_shape:
            alpha = pm.Gamma("alpha", 2, 0.5, shape=n)
        else:
            alpha = pm.Gamma("alpha", 2, 0.5) if free_shape else 3.0
        rate = pm.Gamma("rate", 2, 2)
        pm.Censored("y", pm.Gamma.dist(alpha=alpha, beta=rate), lower=None, upper=2.5,
                    observed=y)
    return model


def test_loop_work_counts_elements_times_iterations_and_the_derivative_for_a_free_shape():
    for free in (True, False):
        model = _censored_gamma(free)
        graph, _ = log_density_graph(model)
        nodes = series_function_nodes(list(graph.value_vars), graph.logp)
        assert len(nodes) == 1
        point = model.initial_point()
        work = loop_work(nodes, list(graph.value_vars), point)
        assert work["igamma series"] % 200 == 0 and work["igamma series"] >= 200
        assert (work["igamma_grad_a series"] > 0) == free
        assert work["igamma own shape"] == 0  # one shape broadcast over the rows
        assert 0 < work["igamma series float32"] < work["igamma series"]
    model = _censored_gamma(True, own_shape=True)
    graph, _ = log_density_graph(model)
    nodes = series_function_nodes(list(graph.value_vars), graph.logp)
    work = loop_work(nodes, list(graph.value_vars), model.initial_point())
    assert work["igamma own shape"] == 200 and work["igamma_grad_a own shape"] == 200


def test_the_stand_in_leaves_pytensors_gradient_loop_out_of_the_xla_census():
    model = _censored_gamma(True)
    graph, _ = log_density_graph(model)
    values = list(graph.value_vars)
    nodes = series_function_nodes(values, graph.logp)
    stand_in = xla_gradient_stand_in(graph.logp, nodes)
    assert series_function_nodes(values, stand_in) == []
    import pytensor

    pytensor_census = census_of(values, [graph.logp, *pytensor.grad(graph.logp, values)])
    xla_census = census_of(values, [stand_in, *pytensor.grad(stand_in, values)])
    assert xla_census.flops < pytensor_census.flops / 2


def test_a_profile_keeps_the_xla_census_and_the_loops_through_its_plain_form():
    profile = profile_model(_censored_gamma(True))
    assert profile.xla_census is not None
    assert profile.xla_census.series_evaluations["igamma series"] > 0
    again = ModelProfile.from_dict(profile.to_dict())
    assert again.xla_census == profile.xla_census
    assert again.census.series_evaluations == profile.census.series_evaluations
