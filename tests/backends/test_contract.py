"""One suite for every registered backend, built-in or plugin: joining the registry means
passing it. Posteriors are compared with known answers within Monte Carlo error."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from pymc_accel.backend import Candidate, Estimate, Refusal, SampleRequest
from pymc_accel.devices import Devices
from pymc_accel.machine import machine_figures
from pymc_accel.models import conjugate_normal, eight_schools
from pymc_accel.profile import profile_model
from pymc_accel.registry import get_registry

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="tests run on CPU")
# Eight schools, non-centred: posterior means from long reference runs (Stan's case study;
# PyMC's docs): mu 4.4, tau 3.6. Their own Monte Carlo error is below 0.05.
EIGHT_SCHOOLS_REF = {"mu": 4.4, "tau": 3.6}


def _cpu_candidates():
    profile = profile_model(eight_schools())
    out = []
    for name, backend in get_registry().backends.items():
        for c in backend.candidates(profile, CPU_ONLY):
            if isinstance(c, Candidate) and c.device == "cpu" and c.precision == "float64":
                out.append(pytest.param(c, id=c.label))
    return out


CANDIDATES = _cpu_candidates()


def _request(**kw) -> SampleRequest:
    base = dict(draws=600, tune=600, chains=2, cores=2, random_seed=11, progressbar=False,
                quiet=True, compute_convergence_checks=False)
    return SampleRequest(**{**base, **kw})


def _sample(candidate, model, **kw):
    return get_registry().backends[candidate.backend].sample(model, candidate, _request(**kw))


def test_every_builtin_and_the_plugin_are_in_the_suite():
    backends = {p.values[0].backend for p in CANDIDATES}
    assert {"numba", "numpyro", "blackjax_nuts"} <= backends
    drivers = {p.values[0].option("driver") for p in CANDIDATES if p.values[0].backend == "numba"}
    assert drivers == {"nutpie", "pymc"}


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_candidates_and_estimates_are_well_formed(candidate):
    backend = get_registry().backends[candidate.backend]
    profile = profile_model(eight_schools())
    answers = backend.candidates(profile, CPU_ONLY)
    assert all(isinstance(a, Candidate | Refusal) for a in answers)
    assert all(a.reason for a in answers if isinstance(a, Refusal))
    est = backend.estimate(candidate, profile, machine_figures())
    assert isinstance(est, Estimate)
    for fig in (est.seconds_per_gradient, est.gradients_per_draw, est.fixed_seconds):
        assert fig.value > 0 and fig.source in ("measured", "modelled")


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_conjugate_normal_posterior(candidate):
    ref = conjugate_normal()
    idata = _sample(candidate, ref.model)
    draws = idata.posterior["mu"]
    mcse_mean = float(az.mcse(idata.posterior.to_dataset(), method="mean")["mu"])
    mcse_sd = float(az.mcse(idata.posterior.to_dataset(), method="sd")["mu"])
    assert abs(float(draws.mean()) - ref.post_mean) < 4 * mcse_mean
    assert abs(float(draws.std()) - ref.post_sd) < 4 * mcse_sd + 0.02 * ref.post_sd


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_eight_schools_posterior_and_result_shape(candidate):
    model = eight_schools()
    idata = _sample(candidate, model, draws=1000, tune=1000)
    post = idata.posterior.to_dataset()
    for name, ref in EIGHT_SCHOOLS_REF.items():
        mcse = float(az.mcse(post, method="mean")[name])
        assert abs(float(post[name].mean()) - ref) < 4 * mcse + 0.1, name
    # pm.sample's shape: groups, variables, coords and dims, PyMC's sample_stats names
    assert {"posterior", "sample_stats", "observed_data"} <= set(idata.children)
    assert {"mu", "tau", "theta_t", "theta"} <= set(post.data_vars)
    assert post["theta"].dims == ("chain", "draw", "school")
    assert post.sizes["chain"] == 2 and post.sizes["draw"] == 1000
    stats = set(idata.sample_stats.data_vars)
    assert {"diverging", "acceptance_rate", "lp"} <= stats
    assert {"tree_depth", "n_steps"} & stats
    if "built-in" in get_registry().origins[candidate.backend]:
        # PyMC's BlackJAX path drops the adapted step size; the built-ins all report it
        assert {"step_size", "tree_depth", "n_steps", "energy"} <= stats


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_same_seed_same_draws(candidate):
    a = _sample(candidate, conjugate_normal().model, draws=50, tune=50, random_seed=3)
    b = _sample(candidate, conjugate_normal().model, draws=50, tune=50, random_seed=3)
    c = _sample(candidate, conjugate_normal().model, draws=50, tune=50, random_seed=4)
    np.testing.assert_array_equal(a.posterior["mu"].to_numpy(), b.posterior["mu"].to_numpy())
    assert not np.array_equal(a.posterior["mu"].to_numpy(), c.posterior["mu"].to_numpy())
