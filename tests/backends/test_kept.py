"""Compiled artefacts kept per model while the model is unchanged."""

from __future__ import annotations

import numpy as np
import pymc as pm

from pymc_accel.backends.kept import KeptPerModel


def _model():
    with pm.Model() as model:
        x = pm.Data("x", np.arange(5.0))
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("y", mu + x, 1, observed=np.arange(5.0))
    return model


def test_an_artefact_is_handed_out_while_the_model_is_unchanged():
    kept, model, other = KeptPerModel(), _model(), _model()
    artefact = object()
    kept.put(model, artefact, 0.4)
    assert kept.get(model) is artefact and kept.seconds(model) == 0.4
    assert kept.get(other) is None and kept.seconds(other) == 0.0  # another model, even alike
    kept.forget(model)
    assert kept.get(model) is None


def test_new_data_or_a_new_variable_makes_it_stale():
    kept, model = KeptPerModel(), _model()
    kept.put(model, object(), 0.4)
    with model:
        pm.set_data({"x": np.ones(5)})  # same shape, new values: compiled against the old ones
    assert kept.seconds(model) == 0.0 and kept.get(model) is None
    kept.put(model, object(), 0.4)
    with model:
        pm.Normal("z", 0, 1)  # a new free variable: another log density
    assert kept.get(model) is None


def test_a_plain_shared_array_or_an_edit_in_place_makes_it_stale():
    """Only pm.Data arrays were watched, and by identity: after measure=True kept nutpie's
    model, a new value in a plain pytensor.shared, or a pm.Data array edited in place, was
    sampled with the old data (posterior mean 2.0 where 9.0 was right)."""
    import pytensor

    shared_y = pytensor.shared(np.full(5, 2.0), name="y_data")
    with pm.Model() as model:
        x = pm.Data("x", np.arange(5.0))
        mu = pm.Normal("mu", 0, 10)
        pm.Normal("y", mu + x, 0.1, observed=shared_y)
    kept = KeptPerModel()
    artefact = object()
    kept.put(model, artefact, 0.4)
    assert kept.get(model) is artefact  # the same data: still handed out
    shared_y.set_value(np.full(5, 9.0))
    assert kept.get(model) is None
    kept.put(model, artefact, 0.4)
    model["x"].get_value(borrow=True)[:] = 4.0
    assert kept.get(model) is None
