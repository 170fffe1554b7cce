from __future__ import annotations

import math

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytest

import pymc_accel
from pymc_accel.backend import Candidate, Estimate, Figure
from pymc_accel.devices import Devices
from pymc_accel.errors import PrecisionWarning
from pymc_accel.models import conjugate_normal, eight_schools
from pymc_accel.precision import (
    AS_COMPILED,
    AS_WRITTEN,
    DIVERGENCE_FALLBACK_FRACTION,
    FINITENESS_POINTS,
    GRAD_RTOL,
    LOGP_RTOL,
    POINTS_CHECKED,
    check_float32,
    divergence_fraction,
    float32_graph,
)
from pymc_accel.profile import profile_model
from pymc_accel.registry import build_registry
from pymc_accel.selection import select
from tests.models import float32_overflow_model, large_offset_model

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")


def test_float32_graph_computes_in_float32():
    model = eight_schools()
    logp = model.logp()
    ins, outs = float32_graph(list(model.value_vars), [logp, *pytensor.grad(logp, model.value_vars)])
    assert {i.dtype for i in ins} == {"float32"}
    assert {o.dtype for o in outs} == {"float32"}


def test_float32_graph_types_each_node_as_make_node_would():
    """Elementwise and ``Alloc`` nodes are rebuilt with their output types worked out once per
    scalar op and dtypes, or kept from the original, and shared: every node must still carry
    the types its op's ``make_node`` gives on its float32 inputs (a model with data broadcast
    against a vector, integer data and a cast)."""
    from pytensor.graph.traversal import io_toposort
    from pytensor.tensor.basic import Alloc
    from pytensor.tensor.elemwise import Elemwise

    with pm.Model(coords={"g": range(3)}) as model:
        mu = pm.Normal("mu", 0.0, 1.0, dims="g")
        sigma = pm.HalfNormal("sigma", 1.0)
        idx = np.array([0, 1, 2, 1, 0, 2])
        counts = np.array([3, 0, 4, 1, 2, 5])
        pm.Normal("y", mu[idx] + counts.astype("float64"), sigma,
                  observed=np.linspace(-1.0, 1.0, 6))
        pm.Poisson("k", pm.math.exp(mu[idx] * 0.1), observed=counts)
    logp = model.logp()
    ins, outs = float32_graph(list(model.value_vars),
                              [logp, *pytensor.grad(logp, model.value_vars)])
    nodes = io_toposort(ins, outs)
    assert sum(isinstance(n.op, Elemwise) for n in nodes) > 20
    assert any(isinstance(n.op, Alloc) for n in nodes)  # the gradient's, shape kept
    for node in nodes:
        expected = node.op.make_node(*node.inputs).outputs
        assert [o.type for o in node.outputs] == [o.type for o in expected], node


def test_float32_graph_copies_a_repeated_node_once_in_a_graph_with_a_scalar_loop():
    """PyTensor's gradient of ``gammainc`` in its shape, taken where the function appears
    twice, repeats its scalar loop: the float32 copy holds it once, with the values of a copy
    of every node."""
    import pytensor.tensor as pt
    from pytensor.graph.traversal import io_toposort
    from pytensor.scalar.loop import ScalarLoop

    from pymc_accel.graph_building import Evaluator

    a, x = pt.vector("a"), pt.vector("x")
    out = pt.log(pt.gammainc(a, x)).sum() + (pt.gammainc(a, x) * 2.0).sum()
    outputs = [out, *pytensor.grad(out, [a, x])]
    ins, outs = float32_graph([a, x], outputs)

    def loops(i, o):
        return sum(isinstance(getattr(n.op, "scalar_op", None), ScalarLoop)
                   for n in io_toposort(i, o))

    assert 0 < loops(ins, outs) < loops([a, x], outputs)
    values = [np.linspace(0.5, 8.0, 40, dtype="float32"),
              np.linspace(0.1, 12.0, 40, dtype="float32")]
    got = Evaluator(ins, outs, merge=False)(*values)
    want = Evaluator([a, x], outputs, merge=False)(*[v.astype("float64") for v in values])
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-3)


def test_float32_copies_work_out_a_scalar_loops_dtypes_once(monkeypatch):
    """Working out a scalar loop's output dtypes on float32 inputs rebuilds its inner graph;
    the check copies the gradient twice (as written, as compiled), and the second copy reuses
    the first's answer, a loop that cannot be rebuilt included."""
    import pytensor.tensor as pt
    from pytensor.graph.traversal import io_toposort
    from pytensor.scalar.loop import ScalarLoop

    from pymc_accel import precision

    monkeypatch.setattr(precision, "_OUT_DTYPES", {})
    built = []
    init = ScalarLoop.__init__

    def counting(self, *args, **kwargs):  # a loop rebuilt on new types is a new op
        built.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(ScalarLoop, "__init__", counting)
    k, x = pt.vector("k"), pt.vector("x")
    outputs = [pt.log(pt.gammainc(k, x)).sum(), *pytensor.grad(pt.log(pt.gammainc(k, x)).sum(),
                                                                 [k, x])]
    first = float32_graph([k, x], outputs)
    once = len(built)
    assert once > 0
    second = float32_graph([k, x], outputs)
    assert len(built) == once  # nothing rebuilt the second time
    loops = [[n.op for n in io_toposort(*g) if isinstance(getattr(n.op, "scalar_op", None),
                                                           ScalarLoop)] for g in (first, second)]
    assert loops[0] == loops[1]
    assert [o.type for o in first[1]] == [o.type for o in second[1]]


def test_float32_is_safe_on_eight_schools():
    check = check_float32(eight_schools())
    assert check.safe and not check.problem
    # the initial point and three jittered ones compared, six more where float32 is finite
    assert check.points == POINTS_CHECKED == 10
    assert sum("finite" in p for p in check.per_point) == FINITENESS_POINTS
    assert 0 < check.grad_rel_error < check.grad_rtol
    assert 0 <= check.logp_rel_error < check.logp_rtol
    assert "float32 safe" in check.summary()


def _tail_underflow_model():
    """A float32 gradient that is NaN only where ``x`` exceeds about 0.3: ``exp(-350 x)``
    underflows to 0 in float32 there, and the derivative of its square root is 0/0 (an HSGP's
    spectral density does the same at long length scales). The check's three compared jittered
    starts of ``x`` (0.02, -0.48, -0.83 with seed 0) miss it; three of its six further ones
    (0.89, 0.61, 0.74) do not."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model() as model:
        x = pm.Normal("x", 0, 1)
        pm.Potential("tail", pt.sqrt(pt.exp(-350.0 * pt.maximum(x, 0.0))))
    return model


def test_a_parameter_check_with_a_float64_tolerance_passes_through_in_float32_as_in_jax():
    """A ZeroSumNormal's log density asserts its value's mean is zero within 1e-9, a tolerance
    PyMC picks for float64 when it builds the graph. float32 rounding misses it by about 1e-8;
    the JAX runs never evaluate the assertion (it passes its value through), so the check's
    float32 copy does not either. The check raised ParameterValueError, and selection fell
    back to float64 for every model with such an effect."""
    rng = np.random.default_rng(3)
    group = rng.integers(0, 8, 200)
    with pm.Model(coords={"group": range(8)}) as model:
        effect = pm.ZeroSumNormal("effect", sigma=pm.HalfNormal("sd", 1), dims="group")
        pm.Normal("y", pm.Normal("mu", 0, 5) + effect[group], 1.0,
                  observed=rng.normal(size=200))
    check = check_float32(model)
    assert check.safe, check.summary()
    assert check.logp_rel_error < LOGP_RTOL



def test_a_parameter_check_failing_at_a_jittered_point_is_float64_not_finite_there():
    """At a jittered start where a parameter is outside its support (a scale below zero here;
    a jittered LKJ correlation that is not positive definite in the user sweep), PyMC's
    parameter check raises when evaluated op by op, where every backend compiles it into
    -inf. The check raised there, and float32 was refused as "could not be checked"."""
    with pm.Model() as model:
        a = pm.Normal("a", 0.0, 1.0)
        pm.Normal("y", 0.0, a + 0.5, observed=np.array([0.1, -0.3, 0.2]))
    check = check_float32(model)
    skipped = [p["point"] for p in check.per_point if p.get("skipped")]
    assert skipped and "the initial point" not in skipped
    assert check.safe, check.summary()


def test_float32_is_checked_on_a_sparse_design_matrix():
    """A SciPy sparse matrix in the log density (``pytensor.sparse.structured_dot``): the
    float32 copy converted every float64 constant with ``np.asarray``, which raised on it, and
    float32 was refused as "could not be checked"."""
    import pytensor.sparse as psparse
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    x = sp.random(60, 5, density=0.3, random_state=1, format="csr")
    with pm.Model() as model:
        beta = pm.Normal("beta", 0.0, 1.0, shape=5)
        mu = psparse.structured_dot(psparse.as_sparse_variable(x), beta[:, None])[:, 0]
        pm.Normal("y", mu, 1.0, observed=rng.normal(size=60))
    check = check_float32(model)
    assert check.safe, check.summary()
    assert check.points == POINTS_CHECKED
    assert 0.0 < check.logp_rel_error < LOGP_RTOL  # float32 computed, not float64 again


def test_float32_not_finite_at_some_starts_only_is_caught_by_the_finiteness_points():
    model = _tail_underflow_model()
    assert check_float32(model, finiteness_points=0).safe  # what the check saw until 2026-11-30
    check = check_float32(model)
    assert not check.safe and check.logp_rel_error == math.inf
    assert check.problem.startswith("float32 is not finite at jittered point 4 (float64 logp")
    assert "float32 unsafe" in check.summary()


def test_the_finiteness_points_evaluate_float64_only_where_float32_is_not_finite(monkeypatch):
    from pymc_accel import precision

    evaluated = _counted_evaluations(monkeypatch)
    check = check_float32(eight_schools())
    assert check.safe and check.points == POINTS_CHECKED
    compared = 1 + precision.JITTERED_POINTS
    # float32 at every point first, then float64 at the compared ones: the same evaluations
    assert evaluated == [32] * POINTS_CHECKED + [64] * compared
    assert f"finite at {FINITENESS_POINTS} more" in check.summary()


def test_float32_not_finite_at_a_further_start_costs_no_float64_evaluation_as_written(
        monkeypatch):
    """Evaluated point by point, the check as written evaluated float64 at the four compared
    points before float32 failed at the fifth: on the copula each is PyTensor's derivative of
    gammainc, a scalar loop, evaluated in Python."""
    from pymc_accel import precision

    evaluated = _counted_evaluations(monkeypatch)
    written = []
    real_written = precision._as_written

    def keeping(*a, **k):
        written.append(real_written(*a, **k))
        written.append(list(evaluated))
        return written[0]

    monkeypatch.setattr(precision, "_as_written", keeping)
    check = check_float32(_tail_underflow_model())
    assert not check.safe
    assert written[0] == ("float32 is not finite at jittered point 4", 4)
    assert written[1] == [32] * 5


def test_float32_is_safe_where_backends_compute_stably():
    """log(1 - sigmoid(x)) is 0 in float32 from x of about 17; every backend rewrites it to
    -softplus(x), so the check must too (the seed blog's model at full size has such rows)."""
    import pymc as pm

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Bernoulli("y", logit_p=20.0 + b, observed=np.zeros(5))
    check = check_float32(model)
    assert check.safe, check.problem


def test_float32_is_checked_on_what_the_backends_compute_not_on_a_rounding_they_avoid():
    """log1p(-sigmoid(40 + b)) is -40.0 at b = 0: every backend compiles it to -softplus(40 + b).
    Evaluated as written, sigmoid(40) rounds to 1.0 in float64 and the term to -inf; the check
    did that after canonicalize, which hid the form from the stabilizing rewrite, and refused
    float32 for want of a finite float64."""
    import pytensor.tensor as pt

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Potential("tail", pt.log1p(-pt.sigmoid(40.0 + b)))
    check = check_float32(model)
    assert check.safe, check.problem
    assert check.per_point[0]["logp64"] == pytest.approx(model.compile_logp()({"b": 0.0}))


_COMPILER_PROBES = """
import numpy as np, pymc as pm
from pytensor.link.c import cmodule
calls = []
real = cmodule.GCC_compiler.try_compile_tmp
cmodule.GCC_compiler.try_compile_tmp = lambda *a, **k: calls.append(1) or real(*a, **k)
from pymc_accel import check_float32
from pymc_accel.profile import profile_and_logp
rng = np.random.default_rng(0)
x = rng.normal(size=(200, 3))
with pm.Model() as model:
    a = pm.Normal("a", 0, 1)
    b = pm.Normal("b", 0, 1, shape=3)
    alpha = pm.Exponential("alpha", 1.0)
    pm.NegativeBinomial("y", mu=pm.math.exp(a + x @ b), alpha=alpha,
                        observed=rng.poisson(2.0, 200))
check_float32(model, logp_graph=profile_and_logp(model)[1])
as_written = len(calls)
check = check_float32(model, logp_graph=profile_and_logp(model)[1], as_written_first=False)
during = len(calls)
import pytensor
pytensor.config.blas__ldflags  # the read the check no longer makes: it probes here
print(as_written, check.safe, during, len(calls))
"""


def test_the_check_leaves_out_the_rewrites_the_backends_leave_out():
    """numba's and JAX's linkers leave out the rewrites to C-only ops. The check ran them, and
    one (sparse ``local_usmm``) read PyTensor's BLAS flags, whose first read in a process probes
    the C compiler: negbin_12's first selection in a new process took 387 ms, 149 ms without.
    A new process, so that nothing has read the flags before; skipped where reading them
    probes nothing (no C compiler, or the flags set by the user). The check runs as selections
    run it (as written first), then as compiled only, as it does where float32 fails as
    written."""
    import os
    import subprocess
    import sys

    from pytensor.link.jax.linker import JAXLinker
    from pytensor.link.numba.linker import NumbaLinker

    from pymc_accel.precision import BACKEND_EXCLUDED_REWRITES

    assert "cxx_only" in BACKEND_EXCLUDED_REWRITES
    assert set(BACKEND_EXCLUDED_REWRITES) <= (set(JAXLinker.incompatible_rewrites)
                                              & set(NumbaLinker.incompatible_rewrites))
    out = subprocess.run([sys.executable, "-c", _COMPILER_PROBES], capture_output=True,
                         text=True, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert out.returncode == 0, out.stderr[-3000:]
    as_written, safe, during, after = out.stdout.split()[-4:]
    if after == "0":
        pytest.skip("reading PyTensor's BLAS flags probes no compiler here")
    assert (as_written, safe, during) == ("0", "True", "0")


def test_the_check_as_compiled_differentiates_a_model_with_an_integer_power():
    """The backends' ``specialize`` writes ``x**6`` as one fused ``Composite`` of squarings,
    whose gradient PyTensor does not implement: the check as compiled raised
    ``NotImplementedError`` on such a model (skewnormal_6 of the held-out set), so ``auto`` used
    float64 unchecked and ``check_float32`` raised it to the user."""
    with pm.Model() as model:
        x = pm.Normal("x", 0.5, 1.0)
        pm.Potential("sixth", -(x**6))
        pm.Normal("y", x**3, 1.0, observed=[0.2, 0.4])
    check = check_float32(model, as_written_first=False)
    assert check.safe, check.problem
    assert check.graph == AS_COMPILED
    assert check.per_point[0]["logp64"] == pytest.approx(model.compile_logp()({"x": 0.5}))


def test_a_model_without_a_gradient_gets_pymc_accels_error_from_the_check():
    """``check_float32`` is public: on a log density with an op that has no gradient it raised
    PyTensor's ``NotImplementedError`` from ``pytensor.grad``."""
    from pymc_accel.errors import UnsupportedArgumentError
    from tests.models import blackbox_model

    with pytest.raises(UnsupportedArgumentError, match="has no gradient.*nuts_sampler="):
        check_float32(blackbox_model(gradient=False))


def test_float32_is_checked_on_the_simplified_log_density_the_backends_compute():
    """log(exp(800 + b)): every backend simplifies it to 800 + b; evaluated as written it
    overflows to inf in float64 too (the stabilizing rewrites alone left it so)."""
    import pytensor.tensor as pt

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Potential("big", -pt.log(pt.exp(800.0 + b)))
    check = check_float32(model)
    assert check.safe, check.problem
    assert check.per_point[0]["logp64"] == pytest.approx(model.compile_logp()({"b": 0.0}))


def test_float32_safe_as_written_is_not_rewritten_or_differentiated_again(monkeypatch):
    """A model whose float32 passes as written is vouched for by the profile's own log density
    and gradient: no rewrites (half the check's time) and no second gradient."""
    from pymc_accel import precision
    from pymc_accel.profile import profile_and_logp

    model = eight_schools()
    graph = profile_and_logp(model)[1]
    assert graph.grads is not None and len(graph.grads) == len(model.value_vars)
    monkeypatch.setattr(precision, "as_backends_rewrite",
                        lambda logp: pytest.fail("rewrote a log density that passed as written"))
    real_grad = pytensor.grad
    monkeypatch.setattr(pytensor, "grad", lambda *a, **k: pytest.fail("differentiated again")
                        or real_grad(*a, **k))
    check = check_float32(model, logp_graph=graph)
    assert check.safe and check.graph == AS_WRITTEN and not check.written_problem
    assert "of the log density as written" in check.summary()


def test_a_model_reading_much_data_is_checked_as_compiled_only(monkeypatch):
    """Evaluating the unsimplified graph as written costs more per byte of data; past
    AS_WRITTEN_MAX_DATA_BYTES the rewrites it would save are worth less than that, and a
    failure as written costs its evaluations too (8.3 s against 4.6 on the seed blog's model)."""
    from pymc_accel import precision
    from pymc_accel.profile import profile_and_logp

    model = eight_schools()
    monkeypatch.setattr(precision, "AS_WRITTEN_MAX_DATA_BYTES", 100)  # eight schools: >200 bytes
    for graph in (None, profile_and_logp(model)[1]):
        check = check_float32(model, logp_graph=graph)
        assert check.safe and check.graph == AS_COMPILED and not check.written_problem
    assert check_float32(model, as_written_first=True).graph == AS_WRITTEN
    monkeypatch.setattr(precision, "AS_WRITTEN_MAX_DATA_BYTES", 1000)
    assert check_float32(model).graph == AS_WRITTEN


def test_float32_refused_as_written_is_settled_as_the_backends_compute_it():
    """log1p(-sigmoid(40 + b)) is -inf as written in both precisions; the backends compute it
    stably, so the check goes on to the rewritten log density and passes there, and says why it
    went on."""
    import pytensor.tensor as pt

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Potential("tail", pt.log1p(-pt.sigmoid(40.0 + b)))
    check = check_float32(model)
    assert check.safe and check.graph == AS_COMPILED
    assert "not finite" in check.written_problem
    assert "(as written: float32 is not finite at the initial point)" in check.summary()
    only_compiled = check_float32(model, as_written_first=False)
    assert only_compiled.graph == AS_COMPILED and not only_compiled.written_problem
    assert only_compiled.per_point == check.per_point


def test_float32_that_raises_as_written_is_settled_as_compiled(monkeypatch):
    from pymc_accel import precision

    def raising(*args, **kwargs):
        raise FloatingPointError("a parameter check failed in float32")

    monkeypatch.setattr(precision, "_as_written", raising)
    check = check_float32(eight_schools())
    assert check.safe and check.graph == AS_COMPILED
    assert check.written_problem == ("building it raised FloatingPointError: a parameter check "
                                     "failed in float32")


def test_float32_raising_as_written_at_a_point_is_settled_as_compiled_and_says_where(monkeypatch):
    from pymc_accel import precision

    real = precision._evaluators
    built = []

    def raising_at_the_second_point(value_vars, outputs, f64=None):
        """The first evaluators built (the check as written) raise at their second point."""
        built.append(outputs)
        at64, at32 = real(value_vars, outputs, f64=f64)
        if len(built) > 1:
            return at64, at32
        calls = []

        def at32_raising(point):
            calls.append(point)
            if len(calls) == 2:
                raise FloatingPointError("a parameter check failed in float32")
            return at32(point)

        return at64, at32_raising

    monkeypatch.setattr(precision, "_evaluators", raising_at_the_second_point)
    check = check_float32(eight_schools())
    assert check.safe and check.graph == AS_COMPILED and check.points == POINTS_CHECKED
    assert check.written_problem == ("evaluating it raised FloatingPointError at jittered point "
                                     "1: a parameter check failed in float32")


def test_the_check_as_compiled_reaches_the_point_where_it_failed_as_written(monkeypatch):
    """Both checks share one time budget; one that failed as written at a jittered point after
    spending it must not leave the check as compiled to vouch from the initial point alone."""
    from pymc_accel import precision

    monkeypatch.setattr(precision, "_as_written",
                        lambda *a, **k: ("float32 is not finite at jittered point 2", 2))
    check = check_float32(eight_schools(), budget_seconds=0.0)
    assert check.graph == AS_COMPILED and check.points == 3
    assert [p["point"] for p in check.per_point] == [
        "jittered point 2", "the initial point", "jittered point 1"]  # the failed one first
    assert check_float32(eight_schools(), budget_seconds=0.0, as_written_first=False).points == 1


def test_float32_failing_as_compiled_where_it_failed_as_written_is_refused_there_alone(
        monkeypatch):
    """The points before it would each evaluate the gradient again in both precisions (on the
    copula, PyTensor's derivative of gammainc, a scalar loop), and cannot change a refusal."""
    from pymc_accel import precision

    monkeypatch.setattr(precision, "_as_written",
                        lambda *a, **k: ("float32 is not finite at jittered point 2", 2))
    check = check_float32(large_offset_model())
    assert not check.safe and check.graph == AS_COMPILED
    assert check.points == 1 and check.per_point[0]["point"] == "jittered point 2"
    assert "jittered point 2" in check.problem


def test_float32_not_finite_as_written_stops_there_and_costs_no_float64_evaluation(monkeypatch):
    """A log density whose float32 is not finite as written is settled as compiled at once: the
    check as written evaluates float32 first and stops at the first such point."""
    import pytensor.tensor as pt

    from pymc_accel.precision import _as_written, _points

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Potential("tail", pt.log(1 - pt.sigmoid(20.0 + b)))  # sigmoid(20) is 1 in float32
    logp = model.logp()
    grads = pytensor.grad(logp, model.value_vars)
    evaluated = _counted_evaluations(monkeypatch)
    why = _as_written([logp, *grads], value_vars=list(model.value_vars),
                      points=_points(model, 3, None, 0), logp_rtol=LOGP_RTOL,
                      grad_rtol=GRAD_RTOL, start=0.0, budget_seconds=1e9, compared=4)
    monkeypatch.undo()
    assert why == ("float32 is not finite at the initial point", 0)
    assert evaluated == [32]
    check = check_float32(model)
    assert check.safe and check.graph == AS_COMPILED
    assert check.written_problem == why[0]


def test_float32_fails_on_large_offsets_with_the_measured_error():
    check = check_float32(large_offset_model())
    assert not check.safe
    assert check.grad_rel_error > GRAD_RTOL
    assert "differs from float64" in check.problem
    assert f"{check.grad_rel_error:.2g}" in check.summary()


def test_float32_fails_when_its_initial_logp_is_not_finite():
    check = check_float32(float32_overflow_model())
    assert not check.safe
    assert "not finite in float32 at the initial point" in check.problem


class _TwoPrecisions:
    """A backend whose float32 candidate is estimated ``gain`` times as fast as its float64
    one (twice by default), at ``seconds_per_gradient`` in float64 (a run of seconds by
    default: long enough that halving it pays for the float32 check)."""

    name = "fake"
    description = "two precisions"

    def __init__(self, diverging32: float = 0.0, gain: float = 2.0,
                 seconds_per_gradient: float = 1e-2):
        self.diverging32 = diverging32
        self.gain = gain
        self.seconds_per_gradient = seconds_per_gradient
        self.sampled: list[str] = []

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", p) for p in ("float64", "float32")]

    def estimate(self, candidate, profile, machine):
        per_grad = self.seconds_per_gradient
        per_grad = per_grad / self.gain if candidate.precision == "float32" else per_grad
        return Estimate(Figure(per_grad), Figure(10.0), Figure(0.001))

    def sample(self, model, candidate, request):
        self.sampled.append(candidate.precision)
        share = self.diverging32 if candidate.precision == "float32" else 0.0
        diverging = np.zeros((request.chains, request.draws), bool)
        diverging.flat[: int(share * diverging.size)] = True
        return az.from_dict({"posterior": {"mu": np.zeros((request.chains, request.draws))},
                             "sample_stats": {"diverging": diverging}})


def _registry(backend):
    reg = build_registry(autoload=False, builtins=False)
    reg.backends[backend.name] = backend
    reg.origins[backend.name] = "test"
    return reg


def test_selection_uses_float32_only_where_the_check_passes():
    safe = select(conjugate_normal().model, registry=_registry(_TwoPrecisions()), devices=CPU_ONLY)
    assert safe.candidate.precision == "float32"
    assert safe.precision_check["safe"]
    unsafe = select(large_offset_model(), registry=_registry(_TwoPrecisions()), devices=CPU_ONLY)
    assert unsafe.candidate.precision == "float64"
    refused = next(r for r in unsafe.rows if r.precision == "float32")
    assert refused.status == "refused" and "float32 unsafe" in refused.reason
    assert f"{unsafe.precision_check['grad_rel_error']:.2g}" in refused.reason
    assert "float32 check" in str(unsafe)


def test_the_check_starts_from_the_log_density_the_profile_built(monkeypatch):
    from pymc_accel import check_store, selection

    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    monkeypatch.setenv("PYMC_ACCEL_PROFILE_CACHE", "off")
    check_store.forget()
    built = []
    real_logp = pm.Model.logp
    monkeypatch.setattr(pm.Model, "logp", lambda self, *a, **k: built.append(self) or
                        real_logp(self, *a, **k))
    report = select(conjugate_normal().model, registry=_registry(_TwoPrecisions()),
                    devices=CPU_ONLY)
    assert report.candidate.precision == "float32"
    assert report.precision_check["safe"] and not report.precision_check["kept"]
    assert len(built) == 1  # the profile's; the check evaluated that graph, not a second one


def test_float32_is_not_checked_when_it_would_not_be_chosen():
    report = select(large_offset_model(), registry=build_registry(autoload=False),
                    devices=CPU_ONLY, chains=2)
    assert report.candidate.precision == "float64" and report.precision_check is None
    assert any(r.precision == "float32" and ("checked only when" in r.reason
                                             or "it must gain" in r.reason) for r in report.rows)


def test_float32_a_few_percent_faster_is_not_worth_its_risk_or_its_check():
    """Float32 is chosen only where it is faster: a gain within the estimates' error ranks it
    behind the same candidate in float64, and its accuracy is not checked."""
    from pymc_accel.selection import FLOAT32_MIN_GAIN

    assert FLOAT32_MIN_GAIN > 1.01
    report = select(conjugate_normal().model, registry=_registry(_TwoPrecisions(gain=1.01)),
                    devices=CPU_ONLY)
    assert report.candidate.precision == "float64" and report.precision_check is None
    f32 = next(r for r in report.rows if r.precision == "float32")
    assert f"{FLOAT32_MIN_GAIN:.2f}x it must gain" in f32.reason
    assert [r.precision for r in report.rows[:2]] == ["float64", "float32"]
    # twice as fast: float32, once checked
    report = select(conjugate_normal().model, registry=_registry(_TwoPrecisions(gain=2.0)),
                    devices=CPU_ONLY)
    assert report.candidate.precision == "float32" and report.precision_check is not None


def test_float32_that_saves_less_than_its_check_costs_is_not_chosen():
    """The float32 check is selection time: a float32 candidate is ranked with its modelled
    seconds added, so halving a run of a few thousandths of a second does not buy a check of a
    few hundredths, and the report says what was added."""
    from pymc_accel.costmodel import guard_seconds

    model = conjugate_normal().model
    check = guard_seconds(profile_model(model)).value
    assert 0.01 < check < 1.0  # timed at 17 ms (bench/fit_guard.py, 2026-11-27)
    short = _TwoPrecisions(gain=2.0, seconds_per_gradient=2e-7)  # a run of ~4 ms in float64
    report = select(model, registry=_registry(short), devices=CPU_ONLY)
    assert report.candidate.precision == "float64" and report.precision_check is None
    f32 = next(r for r in report.rows if r.precision == "float32")
    assert f"float32 check's {check:.2f} s (modelled) added" in f32.reason
    long = _TwoPrecisions(gain=2.0, seconds_per_gradient=2e-4)  # seconds: the check pays
    report = select(conjugate_normal().model, registry=_registry(long), devices=CPU_ONLY)
    assert report.candidate.precision == "float32"


def test_the_float32_check_is_shared_with_the_later_runs_expected(monkeypatch):
    """The check is kept for the model, as a first compile is kept on disk: it is charged as
    the compile is, shared with the later runs the run history expects. Charged whole to every
    run, it kept float32 from seed_small for good (float32 1.16x faster, never chosen, so never
    checked); a new model still pays it whole."""
    from pymc_accel import selection
    from pymc_accel.backend import Figure

    model = conjugate_normal().model
    registry = _registry(_TwoPrecisions(gain=2.0, seconds_per_gradient=2e-4))
    monkeypatch.setattr(selection, "guard_seconds", lambda profile: Figure(1e6))  # never worth it
    rows = {r.precision: r for r in select(model, registry=registry, devices=CPU_ONLY).rows}
    saving = rows["float64"].total_seconds / selection.FLOAT32_MIN_GAIN \
        - rows["float32"].total_seconds
    assert saving > 0
    check = 1.5 * saving  # more than float32 saves once, less than it saves over two runs
    monkeypatch.setattr(selection, "guard_seconds", lambda profile: Figure(check))
    for later, chosen in ((0, "float64"), (1, "float32")):
        monkeypatch.setattr(selection.history, "expected_later_runs",
                            lambda profile, later=later: (later, "test"))
        report = select(model, registry=registry, devices=CPU_ONLY)
        assert report.candidate.precision == chosen
        f32 = next(r for r in report.rows if r.precision == "float32")
        if later:
            assert report.precision_check is not None  # checked, and kept from now on
            assert "1 later run is expected to reuse it" in f32.reason
            assert f"check's {check / 2:.2f} s (modelled) added" in f32.reason
        else:
            assert report.precision_check is None
            assert f"check's {check:.2f} s (modelled) added" in f32.reason
            assert "later run" not in f32.reason


def test_a_check_that_cannot_evaluate_the_model_refuses_float32_and_says_why(monkeypatch):
    """An op the check cannot run must not break the selection: float32 is refused with the
    error, float64 chosen; an explicit float32 is used with a warning."""
    from pymc_accel import selection

    def broken(model, **kwargs):
        raise NotImplementedError("no perform for SomeOp")

    monkeypatch.setattr(selection, "check_float32", broken)
    report = select(conjugate_normal().model, registry=_registry(_TwoPrecisions()),
                    devices=CPU_ONLY)
    assert report.candidate.precision == "float64" and report.precision_check is None
    refused = next(r for r in report.rows if r.precision == "float32")
    assert refused.status == "refused"
    assert "could not be checked (NotImplementedError: no perform for SomeOp)" in refused.reason
    with pytest.warns(PrecisionWarning, match="could not be checked"):
        forced = select(conjugate_normal().model, precision="float32",
                        registry=_registry(_TwoPrecisions()), devices=CPU_ONLY)
    assert forced.candidate.precision == "float32"


def test_explicit_float32_wins_with_a_warning_naming_the_error():
    with pytest.warns(PrecisionWarning, match=r"float32 unsafe: .*gradient rel. error"):
        report = select(large_offset_model(), precision="float32",
                        registry=_registry(_TwoPrecisions()), devices=CPU_ONLY)
    assert report.candidate.precision == "float32"


def test_a_profile_without_its_model_cannot_vouch_for_float32():
    profile = profile_model(conjugate_normal().model)
    report = select(profile=profile, registry=_registry(_TwoPrecisions()), devices=CPU_ONLY)
    assert report.candidate.precision == "float64"
    assert any("without its model" in r.reason for r in report.rows if r.status == "refused")


def test_divergence_fraction_reads_diverging():
    backend = _TwoPrecisions(diverging32=0.5)
    idata = backend.sample(None, Candidate("fake", "cpu", "float32"),
                           pymc_accel.SampleRequest(draws=10, chains=2))
    assert divergence_fraction(idata) == (0.5, "draws")


def _sample(monkeypatch, backend, **kw):
    from pymc_accel import integration

    monkeypatch.setattr(integration, "get_registry", lambda: _registry(backend))
    return pymc_accel.sample(20, tune=20, chains=2, model=conjugate_normal().model,
                             progressbar=False, quiet=True, **kw)


def test_diverging_float32_run_falls_back_to_float64_and_says_so(monkeypatch):
    backend = _TwoPrecisions(diverging32=2 * DIVERGENCE_FALLBACK_FRACTION)
    idata = _sample(monkeypatch, backend)
    assert backend.sampled == ["float32", "float64"]
    report = pymc_accel.SelectionReport.from_idata(idata)
    assert report.chosen == "fake[cpu,float64]"
    assert any("re-ran in float64" in n and "divergent" in n for n in report.notes)


def test_healthy_float32_run_and_explicit_float32_are_kept(monkeypatch):
    healthy = _TwoPrecisions(diverging32=DIVERGENCE_FALLBACK_FRACTION / 2)
    _sample(monkeypatch, healthy)
    assert healthy.sampled == ["float32"]
    forced = _TwoPrecisions(diverging32=1.0)
    _sample(monkeypatch, forced, precision="float32")
    assert forced.sampled == ["float32"]  # the user's choice wins


def test_a_named_backend_keeps_the_model_precision():
    report = select(conjugate_normal().model, backend="fake", registry=_registry(_TwoPrecisions()),
                    devices=CPU_ONLY)
    assert report.candidate.precision == "float64" and report.precision_check is None
    assert any("named explicitly" in r.reason for r in report.rows if r.precision == "float32")


def test_the_check_stops_jittering_when_its_budget_is_spent():
    check = check_float32(eight_schools(), budget_seconds=0.0)
    assert check.points == 1 and check.safe  # the initial point is always evaluated


def test_the_check_starts_from_the_initial_point_it_is_given():
    """A start point the caller evaluated is checked as the one the check would evaluate; one
    that lacks a variable is named, not a KeyError from inside the check."""
    from pymc_accel.graph_building import initial_point

    model = large_offset_model()
    given = check_float32(model, start_point=initial_point(model, None))
    assert not given.safe and given.grad_rel_error == check_float32(model).grad_rel_error
    with pytest.raises(ValueError, match="start_point has no value for"):
        check_float32(eight_schools(), start_point={})


def test_a_start_outside_the_support_is_named_not_a_pytensor_traceback():
    """check_float32(initvals={"s": -1.0}) raised PyTensor's ParameterValueError."""
    from pymc_accel.errors import NonFiniteInitialPointError

    with pm.Model() as model:
        s = pm.HalfNormal("s", 1.0)
        pm.Normal("y", 0.0, s, observed=[0.1, -0.2])
    with pytest.raises(NonFiniteInitialPointError, match="not finite in s"):
        check_float32(model, initvals={"s": -1.0})


def test_the_check_of_a_scan_model_compiles_no_c(monkeypatch):
    """A Scan links its step's function itself, with C thunks, under the check's Python linker:
    the check started gcc for the pharmacokinetic model (0.43 s in a new process, 0.26 s
    without). It now builds its functions with the compiler off, and the start check too."""
    from pytensor.link.c.basic import CLinker

    from pymc_accel.integration import check_initial_point
    from pymc_accel.models import pharmacokinetic

    built = []
    original = CLinker.cthunk_factory
    monkeypatch.setattr(CLinker, "cthunk_factory",
                        lambda self, *a, **k: built.append(self) or original(self, *a, **k))
    model = pharmacokinetic(2, 30).model
    result = check_float32(model)
    check_initial_point(model)
    assert result.safe and result.points >= 1
    assert built == []


def test_a_model_with_data_containers_checks_alike_from_its_own_graph_and_the_profiles():
    """The model's own graph reads its data as shared variables (their float32 copies read
    when evaluated), the profile's as constants (data frozen). Both evaluate the same values,
    and neither builds a PyTensor function."""
    from pymc_accel import precision
    from pymc_accel.profile import profile_and_logp

    rng = np.random.default_rng(2)
    with pm.Model() as model:
        x = pm.Data("x", rng.normal(size=50))
        b = pm.Normal("b", 0, 1)
        pm.Normal("y", b * x, 1.0, observed=rng.normal(size=50))
    built = []
    real = pytensor.function

    def counted(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pytensor, "function", counted)
        own = precision.check_float32(model)
        profiled = precision.check_float32(model, logp_graph=profile_and_logp(model)[1])
    assert built == []
    assert own.safe and profiled.safe
    for a, b_ in zip(own.per_point, profiled.per_point, strict=True):
        assert a["logp32"] == pytest.approx(b_["logp32"], rel=1e-6)
        if "finite" in a:  # a point where float32 need only be finite: no float64 evaluated
            assert "finite" in b_
            continue
        assert a["logp64"] == pytest.approx(b_["logp64"], rel=1e-12)
        assert a["grad_rel_error"] == pytest.approx(b_["grad_rel_error"], rel=1e-3, abs=1e-9)


def test_the_check_stops_at_its_first_failure_as_compiled():
    """A float32 failure refuses float32 whatever the other points give: on interval-censored
    waiting times (``gammainc`` of a free shape) the points after it were nearly half the
    check's time. The points up to where the check as written failed are still evaluated."""
    from tests.models import large_offset_model

    check = check_float32(large_offset_model(), as_written_first=False)
    assert not check.safe and "at the initial point" in check.problem
    assert check.points == 1 and len(check.per_point) == 1
    assert check_float32(eight_schools(), as_written_first=False).points == POINTS_CHECKED


def test_float32_first_only_where_the_budget_holds_every_evaluation(monkeypatch):
    """Where the budget might not hold every evaluation, the points are evaluated one by one,
    each compared as it comes, as before: float32 first must not spend it on the further
    starts and leave the comparisons without."""
    evaluated = _counted_evaluations(monkeypatch)
    check = check_float32(eight_schools(), budget_seconds=0.0)
    assert check.safe and check.points == 1 and evaluated == [32, 64]


def _counted_evaluations(monkeypatch) -> list[int]:
    """The check's evaluations, in order, as they are made: 32 for float32, 64 for float64."""
    from pymc_accel import precision

    real, evaluated = precision._evaluators, []

    def counting(value_vars, outputs, f64=None):
        at64, at32 = real(value_vars, outputs, f64=f64)
        return ((lambda p: evaluated.append(64) or at64(p)),
                (lambda p: evaluated.append(32) or at32(p)))

    monkeypatch.setattr(precision, "_evaluators", counting)
    return evaluated


def _repeated_measurements_gp() -> pm.Model:
    """A marginal GP over 40 inputs measured twice each (the user sweep's gp_repeated_inputs):
    ``K(X, X)`` has coinciding inputs off its diagonal too."""
    x = np.repeat(np.linspace(0, 10, 40), 2)[:, None]
    y = np.sin(x[:, 0]) + np.random.default_rng(0).normal(0, 0.3, 80)
    with pm.Model() as model:
        gp = pm.gp.Marginal(cov_func=pm.HalfNormal("eta", 2) ** 2
                            * pm.gp.cov.Exponential(1, ls=pm.Gamma("ell", 4, 2)))
        gp.marginal_likelihood("y", X=x, y=y, sigma=pm.HalfNormal("sigma", 1))
    return model


def test_the_check_checks_the_gps_log_density_the_jax_runs_compute(monkeypatch):
    # the JAX runs hold the coinciding distances at zero (rewrites/coincident_distances.py);
    # without the hold, float32's gradient there is the rounding of a cancelled sum through a
    # square root's derivative of 5e5, an error of 0.11, and JAX's own float32 gradient of the
    # run's log density is within 5e-5 (bench/compare_check_with_jax.py)
    from pymc_accel.backends import run_logp
    from pymc_accel.profile import profile_and_logp

    model = _repeated_measurements_gp()
    _, graph = profile_and_logp(model)
    held = check_float32(model, logp_graph=graph)
    assert held.safe, held.reason
    monkeypatch.setattr(run_logp, "ZERO_COINCIDENT_DISTANCES", False)
    written = check_float32(model, logp_graph=graph)
    assert not written.safe and written.grad_rel_error > 0.01


def test_the_check_takes_no_gradient_where_the_profile_held_distances(monkeypatch):
    # the profile differentiates the log density with the coinciding distances held; the check
    # took PyTensor's gradient of it again (56-110 ms of the sweep GPs' first selections)
    from pymc_accel.profile import profile_and_logp

    model = _repeated_measurements_gp()
    _, graph = profile_and_logp(model)
    real, taken = pytensor.grad, []
    monkeypatch.setattr(pytensor, "grad", lambda *a, **k: taken.append(1) or real(*a, **k))
    profiled = check_float32(model, logp_graph=graph)
    assert taken == []
    alone = check_float32(model)  # its own log density, held at its own points
    assert taken
    assert profiled.safe and alone.safe
    assert profiled.grad_rel_error == pytest.approx(alone.grad_rel_error, rel=1e-3)
    assert profiled.logp_rel_error == pytest.approx(alone.logp_rel_error, rel=1e-3, abs=1e-12)
