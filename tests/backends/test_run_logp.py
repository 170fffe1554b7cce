from __future__ import annotations

import numpy as np
import pymc as pm
import pymc.sampling.jax as pmjax
import pytest

import pymc_accel
from pymc_accel import profile as profile_module
from pymc_accel.backends import run_logp
from pymc_accel.backends.jax_model import jax_precision
from pymc_accel.backends.run_logp import jax_runs_use, jaxified_logp
from pymc_accel.profile import profile_and_logp
from tests.models import large_offset_model


def _schools() -> pm.Model:
    """Dims, a data container and a transformed variable: the frozen copy lists its value
    variables in another order than the model (theta, tau, mu against mu, tau, theta)."""
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    with pm.Model(coords={"school": range(8)}) as model:
        s = pm.Data("sigma", sigma, dims="school")
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta_t = pm.Normal("theta_t", 0.0, 1.0, dims="school")
        pm.Normal("y", mu + tau * theta_t, s, observed=y, dims="school")
    return model


def _points(model, n=3):
    rng = np.random.default_rng(1)
    start = model.initial_point()
    return [[start[v.name] + rng.normal(0, 0.5, np.shape(start[v.name]))
             for v in model.value_vars] for _ in range(n)]


@pytest.mark.parametrize("negative_logp", [True, False])
@pytest.mark.parametrize("handed", [True, False])
def test_the_runs_log_density_is_pymcs_in_the_models_order_and_sign(negative_logp, handed):
    model = _schools()
    graph = profile_and_logp(model)[1] if handed else None
    assert [v.name for v in profile_and_logp(model)[1].value_vars] != \
        [v.name for v in model.value_vars]  # the order the function must put right
    with jax_precision("float64"):
        ours = jaxified_logp(model, graph, negative_logp=negative_logp)
        pymcs = pmjax.get_jaxified_logp(model, negative_logp=negative_logp)
        for x in _points(model):
            np.testing.assert_allclose(float(ours(x)), float(pymcs(x)), rtol=1e-12)


def _spy_on_pymcs_builder(monkeypatch, note):
    """PyMC's ``get_jaxified_logp`` replaced by a spy that appends ``note(model)`` to a list
    and calls it: ``(the list, the spy)``."""
    noted, real = [], pmjax.get_jaxified_logp

    def spy(model, negative_logp=True):
        noted.append(note(model))
        return real(model, negative_logp)

    monkeypatch.setattr(pmjax, "get_jaxified_logp", spy)
    return noted, spy


def _count_builds(monkeypatch):
    """Calls of the profile's log density builder, from the profile and from a run."""
    calls = {"profile": 0, "run": 0}
    real = profile_module.log_density_graph

    def counted(where):
        def build(model):
            calls[where] += 1
            return real(model)
        return build

    monkeypatch.setattr(profile_module, "log_density_graph", counted("profile"))
    monkeypatch.setattr(run_logp, "log_density_graph", counted("run"))
    return calls


@pytest.mark.parametrize("backend", ["numpyro", "deer_mala", "blackjax_mclmc"])
def test_a_jax_run_jaxifies_the_graph_its_selection_built(monkeypatch, backend):
    """NumPyro through PyMC's sample_jax_nuts, DEER-MALA through flatten_model, the BlackJAX
    plugin's MCLMC through pymc_accel.jaxified_logp."""
    from pymc_accel.selection import forget_profiles

    forget_profiles()  # an earlier test's model of this structure: its profile is kept
    calls = _count_builds(monkeypatch)
    pymc_calls, pymc_spy = _spy_on_pymcs_builder(monkeypatch, lambda model: model)
    model = _schools()
    kwargs = dict(nuts_sampler=backend, model=model, draws=30, tune=30, chains=2,
                  random_seed=3, progressbar=False, quiet=True,
                  compute_convergence_checks=False)
    first = pymc_accel.sample(**kwargs)
    assert calls == {"profile": 1, "run": 0}  # built once, by the profile, for both
    # NumPyro goes through PyMC's sample_jax_nuts, which asks PyMC's builder unless the swap
    # answers; DEER-MALA and MCLMC never ask it, so for them the build count above is the check
    if backend == "numpyro":
        assert pymc_calls == []  # PyMC's builder was not asked for this model
    assert pmjax.get_jaxified_logp is pymc_spy  # and is back once the run is over
    # the selection now reuses the kept profile, so the run builds the graph itself, the same
    # way: the same program, the same draws
    second = pymc_accel.sample(**kwargs)
    assert calls == {"profile": 1, "run": 1}
    for name in ("mu", "tau", "theta_t"):
        np.testing.assert_array_equal(first.posterior[name].values,
                                      second.posterior[name].values)


def test_other_models_get_pymcs_log_density_inside_the_block(monkeypatch):
    ours, other = _schools(), large_offset_model()
    asked_pymc, pymc_spy = _spy_on_pymcs_builder(monkeypatch, lambda model: model)
    x_other = [other.initial_point()[v.name] for v in other.value_vars]
    with jax_precision("float64"):
        expected = float(pymc_spy(other)(x_other))
        asked_pymc.clear()
        with jax_runs_use(ours):
            assert pmjax.get_jaxified_logp is not pymc_spy
            np.testing.assert_allclose(float(pmjax.get_jaxified_logp(other)(x_other)),
                                       expected, rtol=1e-12)
            # a run inside another run of the same model, in this thread
            with jax_runs_use(ours):
                pass
            assert pmjax.get_jaxified_logp is not pymc_spy  # the outer block still holds it
            pmjax.get_jaxified_logp(ours)
            pmjax.get_jaxified_logp(other)
    assert asked_pymc == [other, other]  # PyMC's builder saw the other model, never ours
    assert pmjax.get_jaxified_logp is pymc_spy


def test_the_float32_check_leaves_the_profiles_graph_as_it_was():
    """float32 fails this model as written, so the check rewrites the log density as the
    backends compile it: on a copy, since the run jaxifies the profile's graph afterwards."""
    import pytensor
    from pytensor.graph.traversal import ancestors

    from pymc_accel.precision import check_float32

    model = large_offset_model()
    graph = profile_and_logp(model)[1]

    def wiring():
        nodes = [v.owner for v in ancestors([graph.logp]) if v.owner is not None]
        return ([(n, list(n.inputs)) for n in nodes],
                pytensor.dprint(graph.logp, file="str"))

    before = wiring()
    check = check_float32(model, logp_graph=graph)
    assert not check.safe and check.written_problem  # the as-compiled path ran
    assert wiring() == before


def test_the_swap_is_undone_when_the_run_raises():
    original = pmjax.get_jaxified_logp
    with pytest.raises(RuntimeError, match="boom"):
        with jax_runs_use(_schools()):
            raise RuntimeError("boom")
    assert pmjax.get_jaxified_logp is original


def test_a_graph_of_another_model_is_refused():
    graph = profile_and_logp(_schools())[1]
    with pytest.raises(ValueError, match="another model"):
        jaxified_logp(_schools(), graph)
    with pytest.raises(ValueError, match="another model"):
        with jax_runs_use(_schools(), graph):
            pass


def test_another_threads_run_of_the_model_builds_its_own(monkeypatch):
    """A block answers in the thread that opened it: a run of the same model in another thread
    (which may have set other data) gets PyMC's function, not this block's graph."""
    import threading

    model = _schools()
    graph = profile_and_logp(model)[1]
    asked_pymc, pymc_spy = _spy_on_pymcs_builder(
        monkeypatch, lambda _: threading.current_thread().name)
    with jax_precision("float64"), jax_runs_use(model, graph):
        other = threading.Thread(target=lambda: pmjax.get_jaxified_logp(model), name="other")
        other.start()
        other.join()
        pmjax.get_jaxified_logp(model)  # this thread's: the block's graph
    assert asked_pymc == ["other"]
    assert pmjax.get_jaxified_logp is pymc_spy


def test_a_run_on_numba_is_not_handed_the_graph(monkeypatch):
    """A frozen copy's graph holds a copy of the data and value variables of its own: of the
    runs, only a JAX run, which jaxifies it, is handed it (a numba run is handed the model's
    own graph only: tests/backends/test_pm_sample_logp.py)."""
    from pymc_accel.backends.numba_cpu import NumbaBackend

    handed, real = [], NumbaBackend.sample

    def spy(self, model, candidate, request):
        handed.append(request.logp_graph)
        return real(self, model, candidate, request)

    monkeypatch.setattr(NumbaBackend, "sample", spy)
    pymc_accel.sample(nuts_sampler="numba", model=_schools(), draws=20, tune=20, chains=1,
                      random_seed=1, progressbar=False, quiet=True,
                      compute_convergence_checks=False)
    assert handed == [None]


def test_the_log_density_is_compiled_as_one_program(monkeypatch):
    """PyMC's sample_jax_nuts evaluates the log density at each chain's initial point outside
    any compiled program: op by op, JAX compiled 95 programs in seed_small's run, 38 with the
    log density compiled whole (bench/bench_jit_logp.py); 23 here.
    Compiled whole, a first evaluation compiles the log density as one program (with the
    inputs' conversions, three), and gives the same value."""
    import jax
    import jax.monitoring

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda name, seconds, **_: compiles.append(name)
        if name.endswith("backend_compile_duration") else None)
    model = _schools()
    point = [jax.numpy.asarray(x) for x in _points(model, 1)[0]]
    values = {}
    for whole in (False, True):
        monkeypatch.setattr(run_logp, "JIT_LOGP", whole)
        jax.clear_caches()
        compiles.clear()
        values[whole] = float(jaxified_logp(model, negative_logp=False)(point))
        values[whole, "programs"] = len(compiles)
    assert values[True, "programs"] <= 3 < 10 <= values[False, "programs"]
    assert values[True] == pytest.approx(values[False], rel=1e-12)


def _sweep_sparse_gp() -> pm.Model:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import sweep_user_models

    return sweep_user_models.sparse_gp(pm)


def test_a_model_built_inside_the_block_holds_its_coinciding_distances():
    # what nutpie's JAX backend builds: model.logp() of its own frozen copy of the model
    from pymc.model.transform.optimization import freeze_dims_and_data
    from pytensor.graph.traversal import ancestors

    from pymc_accel.rewrites.coincident_distances import guarded_distances

    model = _sweep_sparse_gp()

    def masks(logp) -> int:  # the held elements: constant boolean masks in the graph
        return sum(int(np.asarray(v.data).sum()) for v in ancestors([logp])
                   if hasattr(v, "data") and np.asarray(v.data).dtype == bool)

    before = model.logp()
    with pymc_accel.coincident_distances_held():
        frozen = freeze_dims_and_data(model)
        held = frozen.logp()
        held_terms = frozen.logp(sum=False)
    after = model.logp()
    assert guarded_distances([before]) and masks(before) == 0 and masks(after) == 0
    assert masks(held) == 12  # as jaxified_logp holds them (tests/rewrites)
    assert len(held_terms) == len(model.logp(sum=False))
    point = model.initial_point()
    f_before, f_held = model.compile_fn(before), frozen.compile_fn(held)
    assert float(f_held(point)) == pytest.approx(float(f_before(point)), rel=1e-12)


def test_the_block_leaves_the_model_as_built_when_switched_off(monkeypatch):
    monkeypatch.setattr(run_logp, "ZERO_COINCIDENT_DISTANCES", False)
    model = _sweep_sparse_gp()
    pymcs = pm.Model.logp
    with pymc_accel.coincident_distances_held():
        assert pm.Model.logp is not pymcs
        logp = model.logp()
    assert pm.Model.logp is pymcs  # PyMC's method back once the block closes
    from pytensor.graph.traversal import ancestors

    assert not any(hasattr(v, "data") and np.asarray(v.data).dtype == bool
                   for v in ancestors([logp]))
