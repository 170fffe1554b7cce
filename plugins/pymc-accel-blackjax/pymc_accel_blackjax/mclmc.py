"""BlackJAX's MCLMC (microcanonical Langevin Monte Carlo), which PyMC does not expose.

MCLMC moves at constant speed with partial momentum refreshment and no accept/reject step; each
draw is one integrator step (two gradients with BlackJAX's default McLachlan integrator), so
draws are cheaper and more correlated than NUTS's. The momentum decoherence length ``L``, the
step size and a diagonal preconditioner are tuned by BlackJAX's own
``mclmc_find_L_and_step_size`` during ``tune`` steps.

The log density is PyMC's, compiled to JAX by ``pymc_accel.jaxified_logp`` (PyMC's
``get_jaxified_logp`` on the graph the selection built); initial
points, the map of draws back to the constrained space and the InferenceData follow
``pymc.sampling.jax.sample_jax_nuts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Gradient evaluations per MCLMC step with the McLachlan integrator.
GRADIENTS_PER_STEP = 2


def _chain_fn(logdensity, *, draws: int, tune: int, desired_energy_var: float,
              diagonal_preconditioning: bool):
    """One chain, pure JAX: init, tune L and step size, then ``draws`` steps."""
    import blackjax
    import jax
    import jax.numpy as jnp

    def kernel(inverse_mass_matrix):
        return blackjax.mcmc.mclmc.build_kernel(
            logdensity_fn=logdensity,
            integrator=blackjax.mcmc.integrators.isokinetic_mclachlan,
            inverse_mass_matrix=inverse_mass_matrix,
        )

    def run(key, position):
        init_key, tune_key, run_key = jax.random.split(key, 3)
        state = blackjax.mcmc.mclmc.init(position, logdensity, init_key)
        state, params, _ = blackjax.mclmc_find_L_and_step_size(
            mclmc_kernel=kernel,
            num_steps=max(tune, 10),
            state=state,
            rng_key=tune_key,
            desired_energy_var=desired_energy_var,
            diagonal_preconditioning=diagonal_preconditioning,
        )
        step = kernel(params.inverse_mass_matrix)

        def one(state, k):
            state, info = step(k, state, params.L, params.step_size)
            stats = {
                "lp": info.logdensity,
                "energy_change": info.energy_change,
                "diverging": ~(jnp.isfinite(info.energy_change) & info.nonans),
            }
            return state, (state.position, stats)

        _, (positions, stats) = jax.lax.scan(one, state, jax.random.split(run_key, draws))
        stats["step_size"] = jnp.full(draws, params.step_size)
        stats["L"] = jnp.full(draws, params.L)
        stats["n_steps"] = jnp.full(draws, GRADIENTS_PER_STEP, dtype=jnp.int32)
        return positions, stats

    return run


def chain_layout(chains: int, devices: int) -> tuple[int, int]:
    """How :func:`map_chains` lays ``chains`` out over ``devices``: ``(devices used, chains a
    device)``, as many devices as divide the chains evenly, at least one.

    Parameters
    ----------
    chains, devices : int

    Returns
    -------
    (int, int)
    """
    used = max(1, min(devices, chains))
    while used > 1 and chains % used:
        used -= 1
    return used, chains // used


def chains_vectorized(chains: int, devices: int) -> bool:
    """Whether :func:`map_chains` runs two or more chains of a device under ``jax.vmap``, and so
    traces the sampler batched (:data:`pymc_accel_blackjax.VMAP_TRACE_SHARE`)."""
    return chain_layout(chains, devices)[1] > 1


def map_chains(run, keys, positions, devices: Sequence[Any] | None = None):
    """``run(key, position)`` for every chain: spread over as many of ``devices`` as divide the
    chains evenly (``jax.pmap``), the chains of each device vectorized (``jax.vmap``); all on
    the default device, vectorized, where there is one device (or none given); a single chain
    on the default device, unbatched (:func:`chain_layout`).

    A CPU device runs its program on one core, so the layout is what lets a CPU's cores share
    the chains: seed_mid's two chains took 1.84 s a run on two devices and 2.47 s vectorized
    on one (docs/benchmarks.md, "MCLMC's chains and its compile"). jax.pmap and jax.vmap are
    JAX's; written here is only the grouping.

    Parameters
    ----------
    run : callable
        One chain: ``(key, position) -> (positions, stats)``.
    keys, positions : jax.Array
        One row a chain.
    devices : sequence of jax.Device, optional

    Returns
    -------
    The outputs of ``run``, one row a chain, in the order of ``keys``.
    """
    import jax

    chains = keys.shape[0]
    used, per = chain_layout(chains, len(devices or ()))
    if chains == 1:  # nothing to batch: vmap would only trace the sampler batched
        return jax.tree.map(lambda x: x[None], jax.jit(run)(keys[0], positions[0]))
    if used == 1:
        return jax.jit(jax.vmap(run))(keys, positions)

    def grouped(x):
        return x.reshape(used, per, *x.shape[1:])

    mapped = jax.pmap(run if per == 1 else jax.vmap(run), devices=list(devices)[:used])
    if per == 1:
        out = mapped(keys, positions)
    else:
        out = mapped(grouped(keys), grouped(positions))
    return jax.tree.map(lambda x: x.reshape(chains, *x.shape[(1 if per == 1 else 2):]), out)


def sample_mclmc(
    model,
    *,
    draws: int,
    tune: int,
    chains: int,
    random_seed: Any,
    initvals: Any = None,
    var_names: list[str] | None = None,
    idata_kwargs: dict | None = None,
    compute_convergence_checks: bool = False,
    quiet: bool = True,
    desired_energy_var: float = 5e-4,
    diagonal_preconditioning: bool = True,
    postprocessing_backend: str = "cpu",
    devices: Sequence[Any] | None = None,
    logp_graph: Any = None,
):
    """Sample a PyMC model with BlackJAX MCLMC; chains spread over ``devices`` with
    ``jax.pmap``, and vectorized with ``jax.vmap`` on each (:func:`map_chains`).

    Parameters
    ----------
    model : pm.Model
    draws, tune, chains : int
        MCLMC steps kept per chain, steps spent tuning, and chains.
    random_seed : int, Generator or None
        Seeds initial points and the sampler as ``pm.sample`` seeds its JAX samplers.
    initvals, var_names, idata_kwargs, compute_convergence_checks, quiet
        As in ``pm.sample``.
    desired_energy_var : float, default 5e-4
        Target energy-change variance per dimension that sets the step size.
    diagonal_preconditioning : bool, default True
        Tune a diagonal preconditioner as well as ``L`` and the step size.
    postprocessing_backend : {"cpu", "gpu"}
        Where draws are mapped back to the constrained space.
    devices : sequence of jax.Device, optional
        Devices to spread the chains over; by default every chain runs on the default device.
    logp_graph : optional
        The model's log density as the selection built it (``SampleRequest.logp_graph``), to
        jaxify instead of building it again; built the same way when not given.

    Returns
    -------
    xarray.DataTree
        posterior, sample_stats (``lp``, ``diverging``, ``step_size``, ``energy_change``, ``L``,
        ``n_steps``), observed_data and constant_data, with the model's coords and dims.
    """
    import jax
    from arviz_base import from_dict, make_attrs
    from jax.flatten_util import ravel_pytree
    from pymc.backends.arviz import (
        coords_and_dims_for_inferencedata,
        find_constants,
        find_observations,
    )
    from pymc.sampling.jax import (
        _get_batched_jittered_initial_points,
        _postprocess_samples,
        get_jaxified_graph,
    )
    from pymc.stats.convergence import log_warnings, run_convergence_checks
    from pymc.util import get_default_varnames, get_random_generator

    import blackjax

    from pymc_accel import jaxified_logp

    # the log density itself (PyMC's flag is inverted from its name), from the graph the
    # selection built where one was handed over (pymc_accel.SampleRequest.logp_graph)
    logp_fn = jaxified_logp(model, logp_graph)
    # the seed pm.sample derives for its JAX samplers (and pymc-accel's NumPyro backend): an
    # int, a Generator made from it, and a list of seeds each give their own draws
    seed = int(get_random_generator(random_seed).spawn(chains)[0].integers(2**30))
    init = _get_batched_jittered_initial_points(
        model=model, chains=chains, initvals=initvals, random_seed=seed, logp_fn=logp_fn
    )
    if chains == 1:
        init = [np.asarray(v)[None] for v in init]
    _, unravel = ravel_pytree([jax.numpy.asarray(v[0]) for v in init])
    flat = jax.numpy.stack([ravel_pytree([v[c] for v in init])[0] for c in range(chains)])

    def logdensity(x):
        return logp_fn(unravel(x))

    run = _chain_fn(logdensity, draws=draws, tune=tune, desired_energy_var=desired_energy_var,
                    diagonal_preconditioning=diagonal_preconditioning)
    keys = jax.random.split(jax.random.PRNGKey(seed), chains)
    positions, stats = map_chains(run, keys, flat, devices)
    raw = jax.vmap(jax.vmap(unravel))(positions)  # list of (chains, draws, *shape)

    idata_kwargs = dict(idata_kwargs or {})
    # what PyMC's JAX path reads from idata_kwargs itself; arviz's from_dict takes neither
    include_transformed = bool(idata_kwargs.pop("include_transformed", False))
    log_likelihood = bool(idata_kwargs.pop("log_likelihood", False))
    chosen = model.unobserved_value_vars
    if var_names is not None:
        chosen = [v for v in chosen if v.name in var_names]
    to_sample = list(get_default_varnames(chosen, include_transformed=include_transformed))
    values = _postprocess_samples(
        get_jaxified_graph(inputs=model.value_vars, outputs=to_sample),
        raw,
        postprocessing_backend=postprocessing_backend,
        postprocessing_vectorize="vmap",
    )
    coords, dims = coords_and_dims_for_inferencedata(model)
    coords.update(idata_kwargs.pop("coords", {}))
    dims.update(idata_kwargs.pop("dims", {}))
    groups: dict[str, Any] = {
        "posterior": {v.name: np.asarray(r) for v, r in zip(to_sample, values, strict=True)},
        "sample_stats": {k: np.asarray(v) for k, v in stats.items()},
    }
    for name, found in (("observed_data", find_observations(model)),
                        ("constant_data", find_constants(model))):
        if found is not None:
            groups[name] = found
    attrs = {"posterior": make_attrs({"tuning_steps": tune}, inference_library=blackjax)}
    idata = from_dict(data=groups, coords=coords, dims=dims, sample_dims=["chain", "draw"],
                      attrs=attrs, **idata_kwargs)
    if log_likelihood:  # as PyMC's nutpie path adds it: from the posterior, after sampling
        import pymc as pm

        idata = pm.compute_log_likelihood(idata, model=model, progressbar=False)
    if compute_convergence_checks:
        warns = run_convergence_checks(idata, model)
        if not quiet:
            log_warnings(warns)
    return idata
