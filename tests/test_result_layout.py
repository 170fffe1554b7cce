"""Results laid out as the call asked (var_names, idata_kwargs' coords and dims), whichever
sampler ran: PyMC's nutpie path kept variables var_names left out and ignored the dims."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
import xarray as xr

import pymc_accel
from pymc_accel import result_layout

FAST = dict(draws=100, tune=100, chains=2, progressbar=False, random_seed=5,
            compute_convergence_checks=False)


def _model() -> pm.Model:
    rng = np.random.default_rng(0)
    with pm.Model() as model:
        a = pm.Normal("a", shape=3)
        s = pm.HalfNormal("s")
        pm.Deterministic("total", a.sum())
        pm.Deterministic("a_exp", pm.math.exp(a))
        pm.Normal("y", a, s, observed=rng.normal(size=(10, 3)))
    return model


def _result(**posterior) -> xr.DataTree:
    """A result as nutpie's path leaves it: default dims (``a_dim_0``) with their coords."""
    data = {}
    for name, shape in posterior.items():
        dims = ["chain", "draw", *(f"{name}_dim_{i}" for i in range(len(shape)))]
        data[name] = (dims, np.zeros((2, 4, *shape)))
    coords = {d: np.arange(n) for name, shape in posterior.items()
              for d, n in zip((f"{name}_dim_{i}" for i in range(len(shape))), shape)}
    ds = xr.Dataset(data, coords={"chain": [0, 1], "draw": np.arange(4), **coords},
                    attrs={"sampling_time": 1.0})
    return xr.DataTree.from_dict({"posterior": ds, "observed_data": xr.Dataset()})


def test_keep_var_names_drops_the_free_variables_not_named_with_their_sampler_values():
    idata = _result(a=(3,), s=(), s_log__=(), total=())
    result_layout.keep_var_names(idata, _model(), ["a", "total"])
    assert sorted(idata.posterior.data_vars) == ["a", "total"]
    assert idata.posterior.attrs["sampling_time"] == 1.0
    idata = _result(a=(3,), s=(), s_log__=())
    result_layout.keep_var_names(idata, _model(), "s")
    assert sorted(idata.posterior.data_vars) == ["s", "s_log__"]
    idata = _result(a=(3,), s=())
    result_layout.keep_var_names(idata, _model(), None)
    assert sorted(idata.posterior.data_vars) == ["a", "s"]


def test_dims_name_the_dimensions_and_coords_label_them():
    idata = _result(a=(3,), s=())
    layout = {"coords": {"k": ["u", "v", "w"]}, "dims": {"a": ["k"]}}
    result_layout.apply_coords_and_dims(idata, layout)
    assert idata.posterior["a"].dims == ("chain", "draw", "k")
    assert list(idata.posterior["k"].values) == ["u", "v", "w"]
    assert "a_dim_0" not in idata.posterior.coords
    assert idata.posterior.attrs["sampling_time"] == 1.0
    again = idata.copy()
    result_layout.apply_coords_and_dims(again, layout)
    assert again.posterior.identical(idata.posterior)  # laid out already: left as it is


def test_coords_alone_label_a_dimension_of_their_length():
    idata = _result(a=(3,), s=())
    result_layout.apply_coords_and_dims(idata, {"coords": {"a_dim_0": ["u", "v", "w"],
                                                           "other": [1, 2]}})
    assert list(idata.posterior["a_dim_0"].values) == ["u", "v", "w"]
    assert "other" not in idata.posterior.coords
    result_layout.apply_coords_and_dims(idata, {"coords": {"a_dim_0": ["u", "v"]}})
    assert list(idata.posterior["a_dim_0"].values) == ["u", "v", "w"]  # not its length


def test_dims_leave_a_variable_whose_dimensions_do_not_match():
    idata = _result(a=(3,))
    result_layout.apply_coords_and_dims(idata, {"dims": {"a": ["k", "j"]}})
    assert idata.posterior["a"].dims == ("chain", "draw", "a_dim_0")


@pytest.mark.parametrize("backend", [dict(nuts_sampler="numba", driver="nutpie"),
                                     dict(nuts_sampler="numpyro")])
def test_every_sampler_s_result_is_laid_out_as_asked(backend):
    """nutpie's path kept ``a``, which the deterministics are computed from."""
    idata = pymc_accel.sample(model=_model(), var_names=["a_exp", "total"], idata_kwargs={
        "coords": {"k": ["u", "v", "w"]}, "dims": {"a_exp": ["k"]}}, **backend, **FAST)
    assert sorted(idata.posterior.data_vars) == ["a_exp", "total"]
    assert idata.posterior["a_exp"].dims == ("chain", "draw", "k")
    assert list(idata.posterior["k"].values) == ["u", "v", "w"]
