"""A PyMC model as a flat JAX log density, and JAX draws back as ``pm.sample``'s InferenceData.

For backends that run their own JAX sampler on a PyMC model (DEER-MALA here; plugins may use
it too). Everything model-specific goes through PyMC's own JAX helpers
(``pymc.sampling.jax``): the jaxified log density on the unconstrained space (of the graph the
profile builds, :mod:`pymc_accel.backends.run_logp`), the jittered
initial points, the map from value variables back to the model's variables, and the assembly of
the InferenceData with coords, dims, observed and constant data, exactly as
``pymc.sampling.jax.sample_jax_nuts`` does after its own sampler has run.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

import jax
import numpy as np
import pymc as pm

from pymc_accel.devices import jax_device  # noqa: F401  (re-exported for the backends)


def _process_wide_x64() -> bool:
    """JAX's process-wide 64-bit setting, whatever thread-local one the caller is inside. JAX
    has no public reader of it: ``jax.config.jax_enable_x64`` gives the thread-local value
    where one is set. Falls back to that outside JAX versions with ``State.get_global``."""
    try:
        from jax._src import config as jax_config

        return bool(jax_config.enable_x64.get_global())
    except (ImportError, AttributeError):
        return bool(jax.config.jax_enable_x64)


@contextlib.contextmanager
def jax_precision(precision: str, *, process_wide: bool = True) -> Iterator[None]:
    """Run JAX in ``precision``: 64-bit types on for float64, off for float32.

    A float64 PyMC graph run in float32 asks JAX for float64 accumulators (PyTensor's JAX
    reductions cast to their float64 ``acc_dtype``); JAX truncates them to float32, which is what
    float32 means here, and warns each time. That warning is silenced inside this context only.

    ``process_wide=False`` sets the precision for this thread alone: for work with no host
    callbacks that may run beside a sampler, as measured mode's timings do (a timing left
    running past its budget must not switch a run's precision under it).
    """
    # the process-wide setting to give back: ``jax.config.jax_enable_x64`` read inside a
    # thread-local setting is that one's value, and a float32 run read it there and left
    # 64-bit types off for the rest of the process (a user's later JAX code ran in float32)
    previous = _process_wide_x64()
    with contextlib.ExitStack() as stack:
        stack.enter_context(jax.enable_x64(precision == "float64"))
        # and process-wide: the thread-local setting does not reach the threads JAX runs host
        # callbacks in, where NumPyro's progress bar returned an int64 to a float32 program
        # compiled for int32 ("Incorrect output dtype for return value #0") and the run failed
        if process_wide:
            jax.config.update("jax_enable_x64", precision == "float64")
            stack.callback(jax.config.update, "jax_enable_x64", previous)
        if precision == "float32":
            stack.enter_context(warnings.catch_warnings())
            warnings.filterwarnings(
                "ignore", message="Explicitly requested dtype float64", category=UserWarning
            )
        yield


@dataclass
class FlatModel:
    """A PyMC model's log density on one flat unconstrained vector.

    Attributes
    ----------
    logdensity : callable
        ``x -> log p(x)`` for flat ``x`` of length ``dim`` (JAX, jit-able).
    initial_positions : np.ndarray, shape (chains, dim)
        PyMC's jittered initial points, flattened.
    unravel : callable
        Flat vector -> list of value-variable arrays (in ``model.value_vars`` order).
    dim : int
    """

    logdensity: Callable[[jax.Array], jax.Array]
    initial_positions: np.ndarray
    unravel: Callable[[jax.Array], list[jax.Array]]
    dim: int


def flatten_model(
    model: pm.Model, *, chains: int, initvals: Any, random_seed: int, dtype: str,
    logp_graph: Any = None,
) -> FlatModel:
    """Jaxify ``model``'s log density and draw PyMC's jittered initial points.

    Parameters
    ----------
    model : pm.Model
    chains : int
    initvals : dict or list of dict, optional
        As for ``pm.sample``.
    random_seed : int
        Seed of the initial-point jitter.
    dtype : {"float32", "float64"}
        Precision of the positions.
    logp_graph : pymc_accel.profile.LogpGraph, optional
        The model's log density as the selection's profile built it
        (:attr:`pymc_accel.backend.SampleRequest.logp_graph`); built the same way when not
        given (:func:`pymc_accel.backends.run_logp.jaxified_logp`).

    Returns
    -------
    FlatModel
    """
    from pymc.sampling.jax import _get_batched_jittered_initial_points

    from pymc_accel.backends.finite_starts import finite_gradient_starts
    from pymc_accel.backends.flat_position import flatten_points
    from pymc_accel.backends.run_logp import jaxified_logp, run_graph

    logp_graph = run_graph(model, logp_graph)  # built once for the run and its starts' check
    # PyMC's flag is inverted from its name: the default (negative_logp=True) is +log p, what
    # BlackJAX's path uses; negative_logp=False gives NumPyro's potential energy, -log p.
    logp_fn = jaxified_logp(model, logp_graph)
    with finite_gradient_starts(model, logp_graph, jax=True):  # a start's gradient finite too
        initial = _get_batched_jittered_initial_points(
            model=model, chains=chains, initvals=initvals, random_seed=random_seed,
            logp_fn=logp_fn)
    flat, leaves = flatten_points(initial, chains, dtype)
    flat = flat.reshape(chains, -1)  # PyMC drops the chain axis for a single chain
    unravel = leaves.unravel

    def logdensity(x):
        return logp_fn(unravel(x))

    return FlatModel(logdensity, flat, unravel, flat.shape[1])


def draws_to_idata(
    model: pm.Model,
    flat: FlatModel,
    positions: jax.Array,
    sample_stats: dict[str, Any],
    *,
    var_names: list[str] | None,
    idata_kwargs: dict[str, Any] | None,
    library: Any,
    sampling_seconds: float,
    tune: int,
    compute_convergence_checks: bool,
    quiet: bool,
    postprocessing_backend: str = "cpu",
):
    """Turn flat draws ``(chains, draws, dim)`` into the InferenceData ``pm.sample`` returns.

    Parameters
    ----------
    model : pm.Model
    flat : FlatModel
    positions : Array, shape (chains, draws, dim)
        Draws on the unconstrained scale.
    sample_stats : dict of str to array (chains, draws)
        With PyMC's names (``acceptance_rate``, ``diverging``, ``lp``, ``step_size``, ...).
    var_names : list of str, optional
        Store only these variables (``pm.sample``'s ``var_names``).
    idata_kwargs : dict, optional
        ``coords``, ``dims``, ``attrs`` and arguments of ``arviz_base.from_dict``.
    library : module
        Recorded as the inference library in the posterior's attributes.
    sampling_seconds : float
    tune : int
    compute_convergence_checks, quiet : bool
    postprocessing_backend : {"cpu", "gpu"}

    Returns
    -------
    xarray.DataTree
    """
    from arviz_base import from_dict, make_attrs
    from pymc.backends.arviz import (
        coords_and_dims_for_inferencedata,
        find_constants,
        find_observations,
    )
    from pymc.sampling.jax import _get_log_likelihood, _postprocess_samples, get_jaxified_graph
    from pymc.stats.convergence import log_warnings, run_convergence_checks
    from pymc.util import get_default_varnames

    idata_kwargs = dict(idata_kwargs or {})
    # pm.sample's name for storing the transformed variables too (ArviZ's from_dict refuses it)
    include_transformed = bool(idata_kwargs.pop("include_transformed", False))
    wanted = model.unobserved_value_vars
    if var_names is not None:
        wanted = [v for v in wanted if v.name in var_names]
    to_store = list(get_default_varnames(wanted, include_transformed=include_transformed))
    raw = jax.vmap(jax.vmap(flat.unravel))(positions)  # per value variable: (chains, draws, ...)
    jax_fn = get_jaxified_graph(inputs=model.value_vars, outputs=to_store)
    result = _postprocess_samples(jax_fn, raw, postprocessing_backend=postprocessing_backend)
    posterior = {v.name: np.asarray(r) for v, r in zip(to_store, result, strict=True)}

    log_likelihood = None
    if idata_kwargs.pop("log_likelihood", False):  # as pm.sample's JAX samplers store it
        log_likelihood = {k: np.asarray(v) for k, v in _get_log_likelihood(
            model, raw, backend=postprocessing_backend, postprocessing_vectorize="scan").items()}
    coords, dims = coords_and_dims_for_inferencedata(model)
    coords.update(idata_kwargs.pop("coords", {}))
    dims.update(idata_kwargs.pop("dims", {}))
    groups: dict[str, Any] = {
        "posterior": posterior,
        "sample_stats": {k: np.asarray(v) for k, v in sample_stats.items()},
    }
    if log_likelihood is not None:
        groups["log_likelihood"] = log_likelihood
    observed = find_observations(model)
    if observed is not None:
        groups["observed_data"] = observed
    constant = find_constants(model)
    if constant is not None:
        groups["constant_data"] = constant
    attrs = {
        "posterior": make_attrs(
            {"sampling_time": sampling_seconds, "tuning_steps": tune}, inference_library=library
        )
    }
    attrs.update(idata_kwargs.pop("attrs", {}))
    idata = from_dict(
        data=groups, coords=coords, dims=dims, sample_dims=["chain", "draw"], attrs=attrs,
        **idata_kwargs,
    )
    if compute_convergence_checks:
        warns = run_convergence_checks(idata, model)
        if not quiet:
            log_warnings(warns)
    return idata
