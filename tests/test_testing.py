"""The conformance suite itself: it passes a backend that draws from the exact posterior and
fails one that is wrong in each way the contract forbids. (Real backends run it in
tests/backends/test_contract.py and tests/plugins/.)"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

EXACT = '''
import numpy as np
import pymc as pm
from arviz_base import from_dict
from pymc.backends.arviz import coords_and_dims_for_inferencedata, find_observations

from pymc_accel import Candidate, Estimate, Figure, Refusal
from pymc_accel.testing import BackendConformance, reference_answers

FLAW = {flaw!r}


class ExactBackend:
    """Draws independently from the reference model's exact posterior; no MCMC at all."""

    name = "exact"
    description = "exact posterior draws (test double)"

    def candidates(self, profile, devices):
        if profile.has_discrete:
            return [Refusal(self.name, "discrete variables: use nuts_sampler='numba'")]
        return [Candidate(self.name, "cpu", "float64")]

    def estimate(self, candidate, profile, machine):
        sign = -1.0 if FLAW == "negative_estimate" else 1.0
        return Estimate(Figure(sign * 1e-6), Figure(10.0), Figure(0.1, "measured"))

    def sample(self, model, candidate, request):
        r = reference_answers()
        rng = np.random.default_rng(None if FLAW == "ignores_seed" else request.random_seed)
        size = (request.chains, request.draws)
        shift = 0.5 * r.mu_sd if FLAW == "shifted_mean" else 0.0
        cov = np.outer(r.x_sd, r.x_sd) * np.array([[1, r.x_rho], [r.x_rho, 1]])
        a = 2 + (r.s2_mean / r.s2_sd) ** 2
        s2 = 1 / rng.gamma(a, 1 / (r.s2_mean * (a - 1)), size)
        posterior = {{"mu": rng.normal(r.mu_mean + shift, r.mu_sd, size),
                      "x": rng.multivariate_normal(r.x_mean, cov, size),
                      "s2": s2, "sigma": np.sqrt(s2)}}
        lp = "logp" if FLAW == "nutpie_stat_names" else "lp"
        stats = {{"diverging": np.zeros(size, bool), lp: np.zeros(size),
                  "acceptance_rate": np.full(size, 0.8)}}
        coords, dims = coords_and_dims_for_inferencedata(model)
        idata = from_dict({{"posterior": posterior, "sample_stats": stats,
                           "observed_data": find_observations(model)}},
                          coords=coords, dims=dims, sample_dims=["chain", "draw"])
        if (request.idata_kwargs or {{}}).get("log_likelihood"):
            idata = pm.compute_log_likelihood(idata, model=model, progressbar=False)
        return idata


class TestExact(BackendConformance):
    backend = ExactBackend()
'''


@pytest.fixture(autouse=True)
def _preimported(preimported):
    """See ``preimported`` in conftest.py."""


def _run(pytester, flaw, *args):
    pytester.makepyfile(test_exact=EXACT.format(flaw=flaw))
    return pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", *args)


def test_a_correct_backend_passes_every_check(pytester):
    result = _run(pytester, None)
    result.assert_outcomes(passed=15, skipped=1)  # skipped: it offers no GPU candidate


@pytest.mark.parametrize(
    ("flaw", "failing"),
    [
        ("shifted_mean", "test_conjugate_normal_mean"),
        ("negative_estimate", "test_estimates_are_positive_and_labelled"),
        ("ignores_seed", "test_seeded_runs_reproduce"),
        ("nutpie_stat_names", "test_result_is_pm_sample_shaped"),
    ],
)
def test_a_flawed_backend_fails_the_check_for_its_flaw(pytester, flaw, failing):
    result = _run(pytester, flaw, "-k", failing)
    result.assert_outcomes(failed=1)
