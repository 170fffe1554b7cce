"""PyMC's convergence checks for a result with a variable whose dims repeat a name.

PyMC lets a variable repeat a dim (``dims=("hidden", "hidden")``, a square weight matrix of a
neural network) and ``pm.sample``'s default, nutpie, samples it; but the checks ``pm.sample``
runs after its own NUTS and after NumPyro's and BlackJAX's
(:func:`pymc.stats.convergence.run_convergence_checks`) call ArviZ's ESS and R-hat, which
xarray refuses on such a variable ("broadcasting cannot handle duplicate dimensions"), so a
run that had finished raised (docs/benchmarks.md, "A seventeenth set in the user sweep"). Here
a run of such a model is asked for no checks, and PyMC's checks then run on a view of its
posterior where each such variable's own axes are one axis: ESS and R-hat are computed draw
series by draw series, so every figure, and every warning, is the same as on the variable's
own axes. The result the user gets keeps its dims.
"""

from __future__ import annotations

from typing import Any

SAMPLE_DIMS = ("chain", "draw")


def repeated_dims(model: Any, idata_kwargs: dict | None = None) -> dict[str, tuple[str, ...]]:
    """The variables of ``model`` whose dims repeat a name, with their dims.

    Parameters
    ----------
    model : pymc.Model
    idata_kwargs : dict, optional
        ``pm.sample``'s ``idata_kwargs``; its ``dims`` override the model's.

    Returns
    -------
    dict
        Variable name to its dims, for each variable whose dims hold a name twice.
    """
    dims = {name: tuple(d) for name, d in model.named_vars_to_dims.items() if d}
    dims.update({name: tuple(d) for name, d in ((idata_kwargs or {}).get("dims") or {}).items()})
    return {name: d for name, d in dims.items() if len(set(d)) < len(d)}


def distinct_dims_view(idata: Any) -> Any:
    """``idata`` with each posterior variable whose dims repeat a name laid out on one axis
    after ``chain`` and ``draw`` (named ``<variable>_flat``); ``idata`` itself where none
    does. A shallow copy: the result's groups share their arrays with ``idata``'s."""
    posterior = idata["posterior"].to_dataset()
    flat = {}
    for name, array in posterior.data_vars.items():
        if len(set(array.dims)) == len(array.dims):
            continue
        if array.dims[:2] != SAMPLE_DIMS:  # no layout PyMC writes: left out of the checks
            flat[name] = None
            continue
        values = array.values.reshape(*array.shape[:2], -1)
        flat[name] = ((*SAMPLE_DIMS, f"{name}_flat"), values)
    if not flat:
        return idata
    posterior = posterior.drop_vars(list(flat))
    posterior = posterior.assign({k: v for k, v in flat.items() if v is not None})
    view = idata.copy()
    view["posterior"] = posterior
    return view


def run_convergence_checks(idata: Any, model: Any, *, quiet: bool = False) -> list:
    """PyMC's convergence checks of ``idata``, logged as ``pm.sample`` logs them (unless
    ``quiet``), computed on :func:`distinct_dims_view`.

    Parameters
    ----------
    idata : DataTree
        A run's result.
    model : pymc.Model
    quiet : bool, default False
        Return the warnings without logging them.

    Returns
    -------
    list of pymc.stats.convergence.SamplerWarning
    """
    from pymc.stats.convergence import log_warnings
    from pymc.stats.convergence import run_convergence_checks as pymc_checks

    warns = pymc_checks(distinct_dims_view(idata), model)
    if not quiet:
        log_warnings(warns)
    return warns
