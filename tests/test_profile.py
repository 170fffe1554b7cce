from __future__ import annotations

import pytensor
import pytest

from pymc_accel.models import eight_schools, hierarchical_logistic
from pymc_accel.profile import profile_and_logp, profile_model
from tests.models import dense_model, discrete_model, scan_model, squared_exponential_gp


def test_eight_schools_sizes():
    p = profile_model(eight_schools())
    assert p.n_free == 10 and p.n_observed == 8
    assert p.free_vars["theta_t"] == (8,) and p.free_vars["tau_log__"] == ()
    assert not p.has_discrete and not p.has_dense_linalg and not p.has_scan
    assert p.float_dtype == "float64"
    assert p.census.flops > 0 and p.census.kernels > 0


def test_seed_model_free_dimension_and_census_scale_with_data():
    small = profile_model(hierarchical_logistic(1000, 50, 4).model)
    large = profile_model(hierarchical_logistic(10000, 500, 4).model)
    assert small.n_free == 2 + 2 * 4 + 50 * 5
    assert large.n_free == 2 + 2 * 4 + 500 * 5 and large.n_observed == 10000
    # same graph, ten times the data: the same kernels, about ten times the work
    assert large.census.kernels == small.census.kernels
    assert 8 < large.census.flops / small.census.flops < 12
    assert large.census.flops_by_category["indexing"] > 0  # group lookups are gathers
    assert large.census.unknown_shapes == 0


def test_discrete_variables_are_found():
    assert profile_model(discrete_model()).discrete_vars == ["n"]


def test_variables_without_a_gradient_are_found_and_the_rest_counted():
    """A simulator's parameter and an op without a gradient: pytensor.grad raised
    NullTypeGradError and NotImplementedError out of the profile, where pm.sample gives such
    variables slice sampling."""
    import numpy as np
    import pymc as pm

    from pymc_accel.profile import profile_and_logp
    from tests.models import blackbox_model

    profile, graph = profile_and_logp(blackbox_model(gradient=False))
    assert profile.gradient_free_vars == ["mu"] and graph.gradient_free_vars == ["mu"]
    assert graph.grads is None  # the float32 check and the scale spread evaluate none
    assert profile.census.flops > 0 and "no gradient for mu" in profile.note
    assert profile.summary()["no gradient for"] == "mu"

    def simulate(rng, a, size=None):
        return rng.normal(a, 1.0, size=size)

    with pm.Model() as model:
        a, b = pm.Normal("a"), pm.Normal("b")
        pm.Simulator("s", simulate, a, observed=np.zeros(5))
        pm.Normal("y", b, 1.0, observed=np.ones(5))
    with_b = profile_model(model)
    assert with_b.gradient_free_vars == ["a"]
    without_b = profile_model(blackbox_model(gradient=False))
    assert with_b.census.flops > 0 and without_b.census.flops > 0
    assert profile_model(eight_schools()).gradient_free_vars == []


def test_dense_linear_algebra_is_counted():
    p = profile_model(dense_model(30))
    assert p.has_dense_linalg
    assert p.census.largest_dense_operand == 30 * 30
    assert p.census.dense_linalg_share > 0.1


def test_scan_is_found_with_its_length():
    p = profile_model(scan_model(25))
    assert p.has_scan
    # the forward recurrence (length known) and its reverse-mode gradient; the reverse one's
    # length is a shape expression of the forward trace, not folded yet
    assert len(p.census.scans) == 2 and p.census.scans[0].n_steps == 25


def test_kernels_are_counted_by_the_rank_of_the_loops_they_compile():
    import numpy as np
    import pymc as pm

    with pm.Model() as scalars:  # three scalar variables: nothing loops over an array
        xs = [pm.Normal(f"x{i}", 0, 1) for i in range(3)]
        pm.Normal("y", xs[0] + xs[1] + xs[2], 1, observed=0.5)
    with pm.Model() as matrix:  # a matrix of means: loop nests
        m = pm.Normal("m", 0, 1, shape=(4, 3))
        pm.Normal("y", m, 1, observed=np.zeros((4, 3)))
    ranks = profile_model(scalars).census.compiled_kernels_by_rank
    assert ranks["2+"] == 0 and ranks["0"] > ranks["1"]
    nested = profile_model(matrix).census
    assert nested.compiled_kernels_by_rank["2+"] > 0
    n = nested.compiled_kernels_by_rank["2+"]
    assert profile_model(matrix).summary()["compiled loops"].endswith(f"{n} nested")  # reported
    assert sum(nested.compiled_kernels_by_rank.values()) == nested.kernels  # every kernel once
    # a Scan's step is compiled once, however many steps it runs
    short, long = profile_model(scan_model(5)).census, profile_model(scan_model(50)).census
    assert long.kernels > short.kernels
    assert long.compiled_kernels_by_rank == short.compiled_kernels_by_rank


def test_float32_model_is_recognised():
    with pytensor.config.change_flags(floatX="float32"):
        p = profile_model(hierarchical_logistic(200, 10, 2, dtype="float32").model)
    assert p.float_dtype == "float32"


def test_dense_linear_algebra_operands_and_their_flops():
    small, large = profile_model(dense_model(30)).census, profile_model(dense_model(60)).census
    chol = next(d for d in small.dense_linalg_operands if d.op == "Cholesky")
    assert chol.operands == ((30, 30),) and chol.output == (30, 30)
    assert "Cholesky(30x30)" in profile_model(dense_model(30)).summary()["dense linear algebra"]

    def flops(census, op):
        return sum(d.flops for d in census.dense_linalg_operands if d.op == op)

    # a factorisation grows as n^3, a triangular solve against one vector as n^2
    assert 7 < flops(large, "Cholesky") / flops(small, "Cholesky") < 9
    assert 3.5 < flops(large, "SolveTriangular") / flops(small, "SolveTriangular") < 4.5


@pytest.mark.slow
def test_seed_blog_full_model_is_profiled_completely():
    # 1M rows, 100k groups, 20 covariates: the profile (timed in docs/benchmarks.md) must see
    # every shape statically and count the gathers of 1M rows
    p = profile_model(hierarchical_logistic().model)
    assert p.n_free == 2 + 2 * 20 + 100_000 * 21 and p.n_observed == 1_000_000
    assert p.census.unknown_shapes == 0
    assert p.census.flops_by_category["indexing"] >= 1_000_000 * 20


def test_free_shapes_come_from_the_frozen_graph_without_an_initial_point(monkeypatch):
    import numpy as np
    import pymc as pm

    with pm.Model() as model:
        x = pm.Data("x", np.zeros(7))
        pm.Dirichlet("p", np.ones(4))  # simplex: its value variable has 3 entries
        pm.HalfNormal("s", shape=x.shape)
        pm.ZeroSumNormal("z", shape=5)
    expected = {v.name: tuple(model.initial_point()[v.name].shape) for v in model.value_vars}

    def no_initial_point(self, *args, **kwargs):
        raise AssertionError("the profile compiled an initial-point function")

    monkeypatch.setattr(pm.Model, "initial_point", no_initial_point)
    profile = profile_model(model)
    assert profile.free_vars == expected and profile.n_free == 3 + 7 + 4


def test_free_shapes_the_frozen_graph_leaves_unknown_are_evaluated_not_compiled(monkeypatch):
    """A ZeroSumNormal with dims keeps a value variable of unknown length in the frozen copy:
    its shape comes from PyMC's initial point expression, evaluated without compiling PyMC's
    initial-point function (about 18 ms of a 160 ms selection)."""
    import numpy as np
    import pymc as pm

    with pm.Model(coords={"group": range(6)}) as model:
        z = pm.ZeroSumNormal("z", sigma=pm.HalfNormal("s"), dims="group")
        pm.Normal("y", z[np.arange(12) % 6], 1.0, observed=np.zeros(12))
    expected = {v.name: tuple(model.initial_point()[v.name].shape) for v in model.value_vars}

    def no_initial_point(self, *args, **kwargs):
        raise AssertionError("the profile compiled an initial-point function")

    monkeypatch.setattr(pm.Model, "initial_point", no_initial_point)
    profile = profile_model(model)
    assert profile.free_vars == expected and profile.n_free == 1 + 5


def _gp(n: int, dist: str = "MvNormal", scale: float = 1.0):
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    x = np.linspace(0, 1, n)
    with pm.Model() as model:
        ls = pm.Gamma("ls", 2, 1)
        cov = pt.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ls**2) + 0.1 * pt.eye(n)
        if dist == "MvNormal":
            pm.MvNormal("y", mu=np.zeros(n), cov=cov, observed=scale * np.sin(x))
        else:
            pm.MvStudentT("y", nu=4, mu=np.zeros(n), scale=cov, observed=scale * np.sin(x))
    return model


def test_structure_key_is_equal_for_a_model_built_again_and_differs_where_its_work_does():
    from pymc_accel.profile import structure_key

    assert structure_key(eight_schools()) == structure_key(eight_schools())
    seed = hierarchical_logistic(500, 20, 2).model
    assert structure_key(seed) == structure_key(hierarchical_logistic(500, 20, 2).model)
    assert structure_key(seed) != structure_key(hierarchical_logistic(600, 20, 2).model)
    assert structure_key(_gp(100)) == structure_key(_gp(100, scale=2.0))  # values, not work
    assert structure_key(_gp(100)) != structure_key(_gp(120))  # pt.eye(n): a small constant
    assert structure_key(_gp(100)) != structure_key(_gp(100, dist="MvStudentT"))


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_garbage_collector_is_paused_while_profiling_and_left_as_found(
    monkeypatch, enabled_before
):
    import gc

    import pymc_accel.profile as profile_module

    seen = []
    real_census_of = profile_module.census_of

    def recording_census_of(*args, **kwargs):
        seen.append(gc.isenabled())
        return real_census_of(*args, **kwargs)

    monkeypatch.setattr(profile_module, "census_of", recording_census_of)
    (gc.enable if enabled_before else gc.disable)()
    try:
        profile_model(eight_schools())
        assert gc.isenabled() is enabled_before
    finally:
        gc.enable()
    assert seen == [False]


def test_centred_hierarchies_are_found_and_non_centred_ones_are_not():
    import numpy as np
    import pymc as pm

    from pymc_accel.profile import ModelProfile

    with pm.Model() as funnel:
        v = pm.Normal("v", 0, 3)
        pm.Normal("x", 0, pm.math.exp(v / 2), shape=9)
    with pm.Model() as centred:
        mu, tau = pm.Normal("mu", 0, 5), pm.HalfCauchy("tau", 5)
        pm.Normal("theta", mu, tau, shape=8)
        pm.StudentT("t", nu=4, mu=mu, sigma=1.0)  # only its location is hierarchical
    with pm.Model() as scale_only:
        s = pm.HalfNormal("s", 1)
        pm.HalfNormal("h", sigma=s, shape=3)
    with pm.Model() as observed_only:
        s = pm.HalfNormal("s", 1)
        pm.Normal("y", 0, s, observed=np.zeros(5))
    assert profile_model(funnel).centred_hierarchies == ["x"]
    assert profile_model(centred).centred_hierarchies == ["theta"]
    assert profile_model(scale_only).centred_hierarchies == ["h"]
    assert profile_model(observed_only).centred_hierarchies == []
    assert profile_model(eight_schools()).centred_hierarchies == []  # non-centred
    assert profile_model(hierarchical_logistic(200, 10, 2).model).centred_hierarchies == []
    profile = profile_model(funnel)
    assert profile.summary()["centred hierarchies"] == "x"
    assert ModelProfile.from_dict(profile.to_dict()).centred_hierarchies == ["x"]


def test_the_gradient_is_taken_of_the_log_density_the_jax_runs_compute(monkeypatch):
    # a GP kernel's coinciding distances held at zero, judged at a run's own points: the float32
    # check and the scale spread evaluate the profile's gradient, where the check took the
    # gradient of the held log density again
    import numpy as np

    from pymc_accel.backends import run_logp
    from pymc_accel.curvature import gradient_function
    from pymc_accel.graph_building import Evaluator, initial_point
    from pymc_accel.profile import profile_and_logp
    from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

    model = squared_exponential_gp()
    _, graph = profile_and_logp(model)
    assert graph.distances_judged and graph.held_logp is not None
    assert graph.differentiated_logp is graph.held_logp
    names = [v.name for v in graph.value_vars]
    point = initial_point(model)
    (run_held,), held = zeroed_coincident_distances(
        [graph.logp], list(graph.value_vars),
        lambda: [[dict(zip([v.name for v in model.value_vars], p))[n] for n in names]
                 for p in run_logp.judging_points(model)()])
    assert held == 20
    run_grads = pytensor.grad(run_held, graph.value_vars)
    x = [point[n] for n in names]
    expected = Evaluator(list(graph.value_vars), [run_held, *run_grads])(*x)
    got = gradient_function(graph)(*x)
    np.testing.assert_allclose(np.concatenate([np.ravel(a) for a in got]),
                               np.concatenate([np.ravel(a) for a in expected]), rtol=1e-12)

    monkeypatch.setattr(run_logp, "ZERO_COINCIDENT_DISTANCES", False)
    _, unheld = profile_and_logp(squared_exponential_gp())
    assert unheld.held_logp is None and unheld.differentiated_logp is unheld.logp


def test_a_model_without_a_kernel_distance_holds_nothing():
    _, graph = profile_and_logp(eight_schools())
    assert graph.distances_judged and graph.held_logp is None
    assert graph.differentiated_logp is graph.logp
