from __future__ import annotations

import numpy as np
import pymc.sampling.jax as pmjax
import pymc.sampling.mcmc as pmmcmc
import pytest
from pymc.blocking import DictToArrayBijection

import pymc_accel
from pymc_accel.backends import finite_starts
from pymc_accel.backends.finite_starts import (
    counted_redraws,
    finite_gradient_starts,
    series_gradient_check,
)
from pymc_accel.backends.run_logp import jaxified_logp
from pymc_accel.stuck_chains import stuck_chains
from pymc_accel.models import conjugate_normal
from tests.models import interval_gamma_model

#: Started at a shape of 0.8, PyMC's jitter (U(-1, 1) on the log shape) reaches a shape under
#: 1, where the interval model's gradient is NaN, for about three chains in five.
AT_NAN_GRADIENTS = {"shape": 0.8}
SEEDS = list(range(12))


def _gradient_finite(model):
    f = model.logp_dlogp_function(ravel_inputs=True)
    f.set_extra_values({})

    def finite(point):
        q, _ = DictToArrayBijection.map(point)
        return bool(np.all(np.isfinite(f([q])[1])))

    return finite


def _jax_starts(model, seeds=SEEDS):
    """The starts PyMC's JAX path draws (``sample_jax_nuts``'s own call), one dict each."""
    starts = pmjax._get_batched_jittered_initial_points(
        model=model, chains=len(seeds), initvals=AT_NAN_GRADIENTS, random_seed=seeds[0],
        logp_fn=jaxified_logp(model))
    return [{v.name: np.asarray(s[c]) for v, s in zip(model.value_vars, starts)}
            for c in range(len(seeds))]


def test_pymcs_jitter_alone_keeps_starts_where_the_gradient_is_nan():
    """What the module mends, and what makes the tests below fail without it."""
    model = interval_gamma_model()
    finite = _gradient_finite(model)
    starts = pmmcmc._init_jitter(model, AT_NAN_GRADIENTS, SEEDS, True, 10)
    assert sum(not finite(p) for p in starts) >= 3
    assert sum(not finite(p) for p in _jax_starts(model)) >= 3


def test_pymcs_nuts_draws_a_start_again_where_its_compiled_gradient_is_nan(monkeypatch):
    """PyMC's NUTS initialisation checks each start with the function it compiled; the
    gradient of that call is read, without the Python evaluation of the JAX path."""
    monkeypatch.setattr(finite_starts, "series_gradient_check",
                        lambda *a, **k: pytest.fail("the JAX path's check was used"))
    model = interval_gamma_model()
    finite = _gradient_finite(model)
    with counted_redraws() as redrawn, finite_gradient_starts(model):
        starts, _ = pmmcmc.init_nuts(init="jitter+adapt_diag", chains=len(SEEDS),
                                     initvals=AT_NAN_GRADIENTS, model=model, random_seed=SEEDS)
    assert all(finite(p) for p in starts)
    assert redrawn[0] >= 3


def test_a_start_whose_gradient_is_finite_is_pymcs_own():
    """A seeded run's starts are PyMC's wherever PyMC's first draw had a finite gradient."""
    model = interval_gamma_model()
    finite = _gradient_finite(model)
    plain = pmmcmc._init_jitter(model, AT_NAN_GRADIENTS, SEEDS, True, 10)
    f = model.logp_dlogp_function(ravel_inputs=True)
    f.set_extra_values({})

    def pymcs_check(point):  # init_nuts's own check: a closure over the compiled function
        q, _ = DictToArrayBijection.map(point)
        return f([q], extra_vars={})[0]

    with finite_gradient_starts(model):
        model.logp_dlogp_function(ravel_inputs=True)  # recorded: not the check's function
        checked = pmmcmc._init_jitter(model, AT_NAN_GRADIENTS, SEEDS, True, 10, pymcs_check)
    kept = [a for a, b in zip(plain, checked)
            if all(np.array_equal(a[k], b[k]) for k in a)]
    assert len(kept) == sum(finite(p) for p in plain)
    assert all(finite(p) for p in checked)


def test_the_jax_paths_starts_have_a_finite_gradient():
    model = interval_gamma_model()
    finite = _gradient_finite(model)
    with finite_gradient_starts(model, jax=True):
        starts = _jax_starts(model)
    assert all(finite(p) for p in starts)
    assert pmjax._init_jitter is pmmcmc._init_jitter  # PyMC's own again outside the block


def test_deer_malas_flat_model_starts_where_the_gradient_is_finite():
    """DEER-MALA draws its starts through ``flatten_model``, not ``sample_jax_nuts``."""
    from pymc_accel.backends.jax_model import flatten_model

    model = interval_gamma_model()
    finite = _gradient_finite(model)
    flat = flatten_model(model, chains=len(SEEDS), initvals=AT_NAN_GRADIENTS, random_seed=1,
                         dtype="float64")
    starts = [{v.name: np.asarray(x) for v, x in zip(model.value_vars, flat.unravel(q))}
              for q in flat.initial_positions]
    assert all(finite(p) for p in starts)


def test_other_models_and_threads_get_pymcs_starts():
    model, other = interval_gamma_model(), interval_gamma_model()
    finite = _gradient_finite(other)
    with finite_gradient_starts(model, jax=True):
        starts = pmmcmc._init_jitter(other, AT_NAN_GRADIENTS, SEEDS, True, 10)
    assert any(not finite(p) for p in starts)


def test_a_log_density_without_series_functions_is_not_evaluated_for_the_jax_path():
    """Its check would cost a Python evaluation of the gradient at every start, for a gradient
    JAX computes otherwise."""
    assert series_gradient_check(conjugate_normal().model) is None
    check = series_gradient_check(interval_gamma_model())
    assert check is not None
    assert check({"shape_log__": np.log(2.5), "rate_log__": 0.0})
    assert not check({"shape_log__": np.log(0.5), "rate_log__": 0.0})


def test_the_series_check_refuses_exactly_the_starts_whose_gradient_is_not_finite():
    """It evaluates no derivative, only the series functions' inputs: it must agree with the
    compiled gradient at every start PyMC's jitter draws."""
    model = interval_gamma_model()
    finite, check = _gradient_finite(model), series_gradient_check(model)
    starts = pmmcmc._init_jitter(model, AT_NAN_GRADIENTS, list(range(60)), True, 0)
    assert [check(p) for p in starts] == [finite(p) for p in starts]
    assert 0 < sum(map(finite, starts)) < len(starts)


def test_a_check_that_raises_lets_the_start_pass():
    check = series_gradient_check(interval_gamma_model())
    assert check({"shape_log__": np.array([1.0, 2.0]), "rate_log__": 0.0})


@pytest.mark.parametrize("sampler, options", [("numpyro", {}), ("numba", {"driver": "pymc"})])
def test_a_named_sampler_samples_a_model_whose_gradient_is_nan_near_its_start(sampler, options):
    """Before, PyMC's NUTS's and NumPyro's chains both stayed at the start (the stuck-chain
    warning, or auto's re-run on nutpie, followed); now their starts are drawn again."""
    idata = pymc_accel.sample(model=interval_gamma_model(), nuts_sampler=sampler,
                              initvals=AT_NAN_GRADIENTS, draws=200, tune=300, chains=2,
                              progressbar=False, random_seed=1, quiet=True, **options)
    assert stuck_chains(idata) == []
    assert 1.5 < float(idata.posterior["shape"].mean()) < 4.0

