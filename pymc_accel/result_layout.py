"""What ``pm.sample``'s own sampler does with ``var_names`` and with ``idata_kwargs``' ``coords``
and ``dims``, done to a result whose sampler did not, so that every backend's result is laid
out as the call asked.

PyMC's nutpie path (the numba backend's nutpie driver, and the nutpie-on-JAX plugin) keeps the
free variables a kept deterministic is computed from, whatever ``var_names`` says, and ignores
``idata_kwargs``' ``coords`` and ``dims`` with a warning. Written by hand: neither PyMC nor
ArviZ re-lays out a finished result.
"""

from __future__ import annotations

import warnings
from typing import Any

#: The groups a variable's draws are in.
_DRAW_GROUPS = ("posterior", "warmup_posterior")
_SAMPLE_DIMS = ("chain", "draw")


def keep_var_names(idata: Any, model: Any, var_names: Any) -> None:
    """Drop from the draws every model variable ``var_names`` does not name (with its values on
    the sampler's scale), in place; nothing where ``var_names`` is ``None``.

    Parameters
    ----------
    idata : xarray.DataTree
        A sampler's result.
    model : pm.Model
    var_names : str, sequence of str or None
        As given to ``pm.sample`` (checked to name the model's variables).
    """
    if var_names is None:
        return
    names = {var_names} if isinstance(var_names, str) else set(var_names)
    variable_of = {model.rvs_to_values[rv].name: rv.name for rv in model.free_RVs}
    for group in _DRAW_GROUPS:
        if group not in idata.children:
            continue
        data = idata[group].to_dataset()
        drop = [name for name in data.data_vars
                if variable_of.get(name, name) in model.named_vars
                and variable_of.get(name, name) not in names]
        if drop:
            idata[group] = data.drop_vars(drop)


def apply_coords_and_dims(idata: Any, idata_kwargs: dict | None) -> None:
    """Name the dimensions of each variable ``idata_kwargs["dims"]`` lists as it says, in every
    group that holds the variable, and label every dimension ``idata_kwargs["coords"]`` names
    with its coordinates, where their number is the dimension's length; in place.

    A result already laid out so (every sampler's but nutpie's) is left as it is, as is a
    variable whose number of dimensions is not the number named.

    Parameters
    ----------
    idata : xarray.DataTree
    idata_kwargs : dict or None
        As given to ``pm.sample``.
    """
    dims = dict((idata_kwargs or {}).get("dims") or {})
    coords = dict((idata_kwargs or {}).get("coords") or {})
    if not dims and not coords:
        return
    for group in list(idata.children):
        data = idata[group].to_dataset()
        changed = False
        for name, wanted in dims.items():
            if name not in data.data_vars:
                continue
            wanted = [wanted] if isinstance(wanted, str) else list(wanted)
            own = [d for d in data[name].dims if d not in _SAMPLE_DIMS]
            if own == wanted or len(own) != len(wanted):
                continue
            array = data[name].drop_vars(own, errors="ignore").rename(dict(zip(own, wanted)))
            try:
                data = data.assign({name: array})
            except ValueError as exc:  # a dimension of that name and another length
                warnings.warn(f"idata_kwargs' dims for {name!r} were not applied to the "
                              f"{group} group: {exc}", UserWarning, stacklevel=3)
                continue
            changed = True
        if changed:  # the renamed dimensions' old coordinates
            data = data.drop_vars([c for c in data.coords if c not in _SAMPLE_DIMS and all(
                c not in v.dims for v in data.data_vars.values())])
        labels = {d: coords[d] for d in data.dims
                  if d in coords and d not in _SAMPLE_DIMS and len(coords[d]) == data.sizes[d]}
        if labels:
            data = data.assign_coords(labels)
            changed = True
        if changed:
            idata[group] = data
