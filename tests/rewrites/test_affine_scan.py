"""Affine-recurrence Scans: detected in the profile, rewritten into parallel prefixes with the
same log density and gradient, left alone when not affine."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

from pymc_accel.models import pharmacokinetic
from pymc_accel.profile import profile_model
from pymc_accel.rewrites.affine_scan import parallelize_affine_scans


def _op_names(outputs):
    from pytensor.graph.traversal import applys_between, graph_inputs

    return {type(n.op).__name__ for n in applys_between(list(graph_inputs(outputs)), outputs)}


def _logp_and_grad(model, logp):
    from pytensor.compile.mode import Mode

    grads = pytensor.grad(logp, model.value_vars)
    # Python linker: the doubling rounds and the Scan run as PyTensor's own Python code (no C
    # compilation, which took a minute here)
    mode = Mode(linker="py", optimizer="fast_compile")
    return pytensor.function(model.value_vars, [logp, *grads], mode=mode)


def _random_points(model, n, seed):
    rng = np.random.default_rng(seed)
    ip = model.initial_point()
    return [[ip[v.name] + rng.normal(0.0, 0.3, np.shape(ip[v.name])) for v in model.value_vars]
            for _ in range(n)]


def _assert_same_logp_and_grad(model, n_points=3, seed=0):
    logp = model.logp()
    (rewritten,), done = parallelize_affine_scans([logp])
    assert done, "no scan was rewritten"
    assert "Scan" not in _op_names([rewritten]) and "AffineScan" in _op_names([rewritten])
    before, after = _logp_and_grad(model, logp), _logp_and_grad(model, rewritten)
    for point in _random_points(model, n_points, seed):
        want, got = before(*point), after(*point)
        assert np.isfinite(want[0])
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)
    return logp, rewritten, done


def ar1_model(steps: int = 37, seed: int = 0) -> pm.Model:
    """c_t = rho c_{t-1} + x_t, a scalar AR(1) recurrence driven by a data sequence."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=steps)
    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        c0 = pm.Normal("c0", 0, 1)
        c = pytensor.scan(lambda xt, prev, r: r * prev + xt, sequences=[pt.as_tensor(x)],
                          outputs_info=[c0], non_sequences=[rho], return_updates=False)
        pm.Normal("y", c, 0.5, observed=rng.normal(size=steps))
    return model


def nonaffine_model(steps: int = 30) -> pm.Model:
    """c_t = tanh(w c_{t-1}) + x_t: not affine in the state."""
    x = np.linspace(-1, 1, steps)
    with pm.Model() as model:
        w = pm.Normal("w", 0.5, 0.2)
        c = pytensor.scan(lambda xt, prev, w: pt.tanh(w * prev) + xt, sequences=[pt.as_tensor(x)],
                          outputs_info=[pt.as_tensor(np.float64(0.0))], non_sequences=[w],
                          return_updates=False)
        pm.Normal("y", c, 1.0, observed=np.zeros(steps))
    return model


@pytest.mark.parametrize(("subjects", "steps"), [(3, 50), (5, 19)])
def test_pharmacokinetic_logp_and_gradient_unchanged_by_the_rewrite(subjects, steps):
    _, _, done = _assert_same_logp_and_grad(pharmacokinetic(subjects, steps).model)
    assert [(d.n_steps, d.state_shape, d.kind) for d in done] == [(steps, (subjects, 3), "mat")]


def test_ar1_logp_and_gradient_unchanged_by_the_rewrite():
    _, _, done = _assert_same_logp_and_grad(ar1_model(37))
    assert [(d.n_steps, d.state_shape, d.kind) for d in done] == [(37, (), "elem")]


def test_jax_lowering_matches_the_sequential_scan():
    import jax
    from pymc.sampling.jax import get_jaxified_graph

    model = pharmacokinetic(3, 40).model
    logp = model.logp()
    (rewritten,), _ = parallelize_affine_scans([logp])
    point = _random_points(model, 1, seed=3)[0]
    with jax.enable_x64(True):
        values = []
        for out in (logp, rewritten):
            fn = get_jaxified_graph(model.value_vars, [out])
            vg = jax.jit(jax.value_and_grad(lambda *x: fn(*x)[0], argnums=tuple(range(len(point)))))
            values.append(vg(*point))
    (v0, g0), (v1, g1) = values
    np.testing.assert_allclose(float(v1), float(v0), rtol=1e-10)
    for a, b in zip(g0, g1, strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-8, atol=1e-8)


def test_nonaffine_scan_is_left_untouched():
    model = nonaffine_model()
    logp = model.logp()
    (out,), done = parallelize_affine_scans([logp])
    assert done == [] and out is logp
    from pymc_accel.rewrites.apply import rewrite_model

    same, rewritten = rewrite_model(model, "gpu", mode="on")
    assert same is model and rewritten == []


def test_short_scans_are_left_sequential():
    (out,), done = parallelize_affine_scans([ar1_model(5).logp()])
    assert done == [] and "Scan" in _op_names([out])


def test_profile_lists_each_scan_with_length_state_and_affinity():
    scans = profile_model(pharmacokinetic(4, 30).model).census.scans
    forward = [s for s in scans if not s.gradient]
    assert [(s.n_steps, s.state_shape, s.affine, s.kind) for s in forward] == [(30, (4, 3), True, "mat")]
    assert any(s.gradient and not s.affine for s in scans)  # the reverse scan of the gradient
    ar1 = [s for s in profile_model(ar1_model(20)).census.scans if not s.gradient]
    assert [(s.n_steps, s.state_shape, s.affine, s.kind) for s in ar1] == [(20, (), True, "elem")]
    other = [s for s in profile_model(nonaffine_model(30)).census.scans if not s.gradient]
    assert [(s.n_steps, s.affine) for s in other] == [(30, False)]


def test_profile_says_when_scan_launches_dominate_a_gpu():
    long = profile_model(pharmacokinetic(4, 500).model).summary()["sequential scans"]
    assert "500 steps, state 4x3, affine (matrix)" in long
    assert "launch cost dominates on a GPU" in long and "parallel prefixes" in long
    assert "launch cost" not in profile_model(pharmacokinetic(4, 10).model).summary()["sequential scans"]
