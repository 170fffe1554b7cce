"""Ops without a JAX conversion are found in a log density, inner graphs included."""

from __future__ import annotations

import pytensor.scalar as ps
import pytensor.tensor as pt
from pytensor.compile.builders import OpFromGraph
from pytensor.tensor.elemwise import Elemwise

from pymc_accel.jax_support import ops_without_jax, refusal_reason, still_without_jax
from pymc_accel.models import eight_schools
from tests.models import BlackBoxLogLike, blackbox_model

BLACK_BOX = "tests.models.BlackBoxLogLike"


class _Cube(ps.UnaryScalarOp):
    """A scalar op of a user's, without ``nfunc_spec``: PyTensor's generic JAX conversion
    needs one."""

    def impl(self, x):
        return x**3


class _NamedCube(_Cube):
    nfunc_spec = ("power", 2, 1)  # not the cube, but a NumPy function the conversion can find


class _Registered(BlackBoxLogLike):
    pass


def test_a_pymc_log_density_converts():
    model = eight_schools()
    assert ops_without_jax([model.logp()]) == []


def test_a_black_box_op_is_found_by_its_qualified_name():
    model = blackbox_model()
    assert ops_without_jax([model.logp()]) == [BLACK_BOX]


def test_an_op_inside_an_inner_graph_is_found():
    x = pt.dvector("x")
    inner = OpFromGraph([x], [BlackBoxLogLike()(x)])
    assert ops_without_jax([inner(pt.dvector("y")) * 2.0]) == [BLACK_BOX]


def test_a_scalar_op_converts_only_with_its_numpy_function_named():
    x = pt.dvector("x")
    assert ops_without_jax([Elemwise(_Cube(ps.upgrade_to_float))(x).sum()]) == [
        f"{__name__}._Cube"]
    assert ops_without_jax([Elemwise(_NamedCube(ps.upgrade_to_float))(x).sum()]) == []


def test_a_registered_conversion_is_seen_then_and_later():
    from pytensor.link.jax.dispatch import jax_funcify

    name = f"{__name__}._Registered"
    assert ops_without_jax([_Registered()(pt.dvector("x"))]) == [name]
    assert still_without_jax([name, BLACK_BOX]) == [name, BLACK_BOX]

    @jax_funcify.register(_Registered)
    def _(op, **kwargs):
        return lambda mu: -0.5 * ((mu - 1.0) ** 2).sum()

    assert ops_without_jax([_Registered()(pt.dvector("x"))]) == []
    assert still_without_jax([name, BLACK_BOX]) == [BLACK_BOX]


def test_a_class_that_cannot_be_found_is_taken_as_still_without():
    assert still_without_jax(["no_such_module.Op", "tests.models.NoSuchOp"]) == [
        "no_such_module.Op", "tests.models.NoSuchOp"]


def test_the_refusal_names_the_op_and_both_fixes():
    reason = refusal_reason([BLACK_BOX])
    assert "(BlackBoxLogLike)" in reason
    assert "jax_funcify.register" in reason and "nuts_sampler='numba'" in reason
