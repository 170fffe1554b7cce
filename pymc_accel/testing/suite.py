"""The backend conformance suite: one test class every backend, built-in or plugin, must pass.

Use it from a plugin's own tests with one line (a class whose name starts with ``Test``)::

    from pymc_accel.testing import BackendConformance
    from my_package.plugin import MyBackend

    class TestMyBackend(BackendConformance):
        backend = MyBackend()

pytest collects every ``test_*`` method below for each CPU candidate the backend offers for the
reference model (:mod:`pymc_accel.testing.reference`); class attributes tune the run.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import pytest

from pymc_accel.backend import Backend, Candidate, Estimate, Refusal, SampleRequest
from pymc_accel.devices import Devices, Gpu
from pymc_accel.errors import (
    DeviceUnavailableError,
    DiscreteVariablesError,
    NonFiniteInitialPointError,
)
from pymc_accel.testing import reference

#: What the suite tells backends about the machine: CPUs only, whatever is really present.
CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="conformance suite: CPU only")
#: A machine with one (pretend) GPU, to ask backends for their GPU candidates.
ONE_GPU = Devices(cpu_cores=2, gpus=(Gpu(0, "pretend GPU", 16 * 2**30),), jax_installed=True)
#: nutpie's names for sample stats that PyMC names otherwise; a result must use PyMC's.
NON_PYMC_STAT_NAMES = ("mean_tree_accept", "logp", "depth", "maxdepth_reached")
#: Monte Carlo errors a posterior moment may be off by before the suite calls it wrong.
Z = 4.0


def _profile(model):
    from pymc_accel.profile import profile_model

    return profile_model(model)


def _candidates(backend: Backend, precisions: tuple[str, ...]) -> list[Any]:
    """The backend's CPU candidates for the reference model, as pytest params."""
    try:
        answers = list(backend.candidates(_profile(reference.reference_model()), CPU_ONLY))
    except Exception as exc:  # reported by test_candidates_are_well_formed
        return [pytest.param(None, id=f"candidates-raised-{type(exc).__name__}")]
    out = [
        pytest.param(a, id=a.label)
        for a in answers
        if isinstance(a, Candidate) and a.device == "cpu" and a.precision in precisions
    ]
    return out or [pytest.param(None, id="no-cpu-candidate")]


def registry_with(backend: Backend, origin: str = "under test", builtins: bool = False):
    """A fresh :class:`~pymc_accel.registry.Registry` holding ``backend`` (and the built-ins
    when ``builtins``), without loading any other plugin.

    Parameters
    ----------
    backend : Backend
    origin : str
        What ``pymc-accel backends`` would show as its distribution and version.
    builtins : bool, default False

    Returns
    -------
    Registry
    """
    from pymc_accel.registry import build_registry

    registry = build_registry(autoload=False, builtins=builtins)
    registry.backends[backend.name] = backend
    registry.origins[backend.name] = origin
    return registry


@contextmanager
def process_registry(registry):
    """Make ``registry`` the process-wide one (what ``pymc_accel.sample`` uses) for a while."""
    import pymc_accel.registry as reg

    saved = reg._REGISTRY
    reg._REGISTRY = registry
    try:
        yield registry
    finally:
        reg._REGISTRY = saved


class _Scaled:
    """A backend whose estimates are another's multiplied by ``factor`` (for selection tests)."""

    def __init__(self, backend: Backend, factor: float) -> None:
        self._backend, self._factor = backend, factor
        self.name, self.description = backend.name, backend.description

    def candidates(self, profile, devices):
        return self._backend.candidates(profile, devices)

    def estimate(self, candidate, profile, machine):
        from dataclasses import replace

        from pymc_accel.backend import Figure

        e = self._backend.estimate(candidate, profile, machine)
        f = self._factor
        return replace(
            e,
            seconds_per_gradient=Figure(e.seconds_per_gradient.value * f, "modelled"),
            fixed_seconds=Figure(e.fixed_seconds.value * f, "modelled"),
        )

    def sample(self, model, candidate, request):
        return self._backend.sample(model, candidate, request)


class BackendConformance:
    """The backend contract as tests. Subclass it, naming the class ``Test...``.

    Attributes
    ----------
    backend : Backend
        The backend under test (required).
    draws, tune, chains : int
        The reference run (2 chains of 500 + 500 by default). A sampler whose draws are more
        correlated than NUTS's (MCLMC, say) should ask for more draws so the Monte Carlo
        error of its estimates stays small.
    precisions : tuple of str
        Which of the backend's CPU candidates to run (the reference model is float64).
    required_stats : tuple of str
        sample_stats every result must have, by PyMC's names. NUTS samplers keep the default;
        others name what applies to them (``diverging`` and ``lp`` always do).
    seed : int
        ``random_seed`` of the reference run.
    """

    backend: ClassVar[Backend]
    draws: ClassVar[int] = 500
    tune: ClassVar[int] = 500
    chains: ClassVar[int] = 2
    precisions: ClassVar[tuple[str, ...]] = ("float64",)
    required_stats: ClassVar[tuple[str, ...]] = ("diverging", "lp", "acceptance_rate")
    seed: ClassVar[int] = 20260522

    def pytest_generate_tests(self, metafunc):
        """Parametrize ``candidate`` over the backend's CPU candidates for the reference model."""
        if "candidate" in metafunc.fixturenames:
            metafunc.parametrize("candidate", _candidates(self.backend, self.precisions))

    @pytest.fixture(autouse=True)
    def _no_run_history(self, monkeypatch):
        """Selections judge the estimates alone: earlier runs recorded in the machine's run
        history (:mod:`pymc_accel.history`) would replace them with observed figures."""
        monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")

    # -- helpers ---------------------------------------------------------------------------

    def request_for(self, **overrides: Any) -> SampleRequest:
        """The :class:`SampleRequest` of the reference run, with ``overrides``."""
        base = dict(draws=self.draws, tune=self.tune, chains=self.chains, cores=self.chains,
                    random_seed=self.seed, progressbar=False, quiet=True,
                    compute_convergence_checks=False)
        return SampleRequest(**{**base, **overrides})

    def reference_run(self, candidate: Candidate):
        """The reference model sampled once per candidate (cached on the class)."""
        if candidate is None:
            pytest.fail(f"backend {self.backend.name!r} offered no CPU candidate in "
                        f"{self.precisions} for the reference model")
        cache = type(self).__dict__.get("_runs")
        if cache is None:
            cache = {}
            type(self)._runs = cache
        if candidate not in cache:
            cache[candidate] = self.backend.sample(
                reference.reference_model(), candidate, self.request_for()
            )
        return cache[candidate]

    def _posterior(self, candidate):
        return self.reference_run(candidate).posterior.to_dataset()

    # -- the contract: names, candidates, estimates ------------------------------------------

    def test_is_a_backend(self):
        b = self.backend
        assert isinstance(b, Backend), "needs name, description, candidates, estimate, sample"
        assert isinstance(b.name, str) and b.name and b.name != "auto"
        assert b.name.strip() == b.name and "," not in b.name and "[" not in b.name
        assert isinstance(b.description, str) and b.description

    @pytest.mark.parametrize("devices", [CPU_ONLY, ONE_GPU], ids=["cpu-only", "one-gpu"])
    @pytest.mark.parametrize("model", ["reference", "discrete"])
    def test_candidates_are_well_formed(self, devices, model):
        build = reference.reference_model if model == "reference" else reference.discrete_model
        answers = self.backend.candidates(_profile(build()), devices)
        assert isinstance(answers, list) and answers, "return at least one Candidate or Refusal"
        for a in answers:
            assert isinstance(a, Candidate | Refusal), f"{a!r} is neither Candidate nor Refusal"
            assert a.backend == self.backend.name, f"{a.label} names another backend"
            if isinstance(a, Refusal):
                assert isinstance(a.reason, str) and len(a.reason) > 10, \
                    f"{a.label}: say why, and what to do about it"
                continue
            assert a.device in ("cpu", "gpu") and a.precision in ("float32", "float64")
            assert isinstance(a.options, tuple) and all(len(o) == 2 for o in a.options)
            hash(a)  # candidates are compared and used as keys
            if not devices.has_gpu:
                assert a.device == "cpu", f"{a.label}: a GPU candidate on a machine with none"
        labels = [a.label for a in answers if isinstance(a, Candidate)]
        assert len(labels) == len(set(labels)), "candidates must differ"

    def test_estimates_are_positive_and_labelled(self, candidate):
        from pymc_accel.machine import machine_figures

        if candidate is None:
            pytest.fail(f"backend {self.backend.name!r} offered no CPU candidate")
        est = self.backend.estimate(candidate, _profile(reference.reference_model()),
                                    machine_figures())
        assert isinstance(est, Estimate)
        for field in ("seconds_per_gradient", "gradients_per_draw", "fixed_seconds",
                      "relative_efficiency"):
            fig = getattr(est, field)
            assert math.isfinite(fig.value) and fig.value > 0, f"{field} must be positive"
            assert fig.source in ("measured", "modelled"), f"{field}: label measured or modelled"
        assert est.memory_bytes.value >= 0 and est.chain_parallelism >= 1
        total = est.total_seconds(self.tune + self.draws, self.chains)
        assert math.isfinite(total) and total > 0

    def test_auto_chooses_it_when_its_estimate_is_best(self, candidate):
        from pymc_accel.selection import select

        if candidate is None:
            pytest.fail(f"backend {self.backend.name!r} offered no CPU candidate")
        model = reference.reference_model()
        profile = _profile(model)
        best = registry_with(_Scaled(self.backend, 1e-6), builtins=True)
        report = select(model, profile=profile, registry=best, devices=CPU_ONLY)
        assert report.candidate.backend == self.backend.name, report.chosen
        if len(best.backends) > 1:
            worst = registry_with(_Scaled(self.backend, 1e6), builtins=True)
            report = select(model, profile=profile, registry=worst, devices=CPU_ONLY)
            assert report.candidate.backend != self.backend.name, report.chosen

    # -- sampling: the result's shape -------------------------------------------------------

    def test_result_is_pm_sample_shaped(self, candidate):
        idata = self.reference_run(candidate)
        assert {"posterior", "sample_stats", "observed_data"} <= set(idata.children)
        post = idata.posterior.to_dataset()
        assert {"mu", "x", "s2", "sigma"} <= set(post.data_vars), "every free and deterministic"
        assert not {"y", "z"} & set(post.data_vars), "observed variables are not in posterior"
        assert post.sizes["chain"] == self.chains and post.sizes["draw"] == self.draws
        assert post["x"].dims == ("chain", "draw", "coef")
        assert list(post["coef"].values) == ["a", "b"], "the model's coords"
        assert post["mu"].dims == ("chain", "draw")
        obs = idata.observed_data.to_dataset()
        assert obs["y"].dims == ("obs",) and obs["z"].dims == ("obs_scale",)
        np.testing.assert_allclose(obs["y"].values, reference._data()[0])
        stats = set(idata.sample_stats.data_vars)
        missing = set(self.required_stats) - stats
        assert not missing, f"sample_stats lacks PyMC's {sorted(missing)}"
        assert not stats & set(NON_PYMC_STAT_NAMES), "use PyMC's names for sample_stats"
        assert idata.sample_stats.sizes["draw"] == self.draws
        assert np.all(np.isfinite(post["mu"].values))

    # -- sampling: posteriors within Monte Carlo error ---------------------------------------

    def test_conjugate_normal_mean(self, candidate):
        ref, post = reference.reference_answers(), self._posterior(candidate)
        _check_moments(post, "mu", ref.mu_mean, ref.mu_sd)

    def test_correlated_gaussian(self, candidate):
        import arviz as az

        ref, post = reference.reference_answers(), self._posterior(candidate)
        for i, coef in enumerate(("a", "b")):
            _check_moments(post.sel(coef=coef), "x", ref.x_mean[i], ref.x_sd[i], label=coef)
        x = post["x"].values.reshape(-1, 2)
        rho = float(np.corrcoef(x.T)[0, 1])
        ess = float(np.min(az.ess(post[["x"]], method="bulk")["x"].values))
        # sd of a sample correlation is (1 - rho^2) / sqrt(n) for n independent draws
        tol = Z * (1 - ref.x_rho**2) / math.sqrt(max(ess, 1.0)) + 0.01
        assert abs(rho - ref.x_rho) < tol, f"correlation {rho:.3f}, expected {ref.x_rho}"

    def test_constrained_scale(self, candidate):
        ref, post = reference.reference_answers(), self._posterior(candidate)
        assert float(post["s2"].min()) > 0, "a positive parameter went non-positive"
        _check_moments(post, "s2", ref.s2_mean, ref.s2_sd)
        np.testing.assert_allclose(post["sigma"].values, np.sqrt(post["s2"].values), rtol=1e-6)

    # -- sampling: seeds -------------------------------------------------------------------

    def test_seeded_runs_reproduce(self, candidate):
        if candidate is None:
            pytest.fail(f"backend {self.backend.name!r} offered no CPU candidate")

        def run(seed):
            req = self.request_for(draws=40, tune=40, random_seed=seed)
            idata = self.backend.sample(reference.reference_model(), candidate, req)
            return idata.posterior["mu"].to_numpy()

        first, again, other = run(3), run(3), run(4)
        np.testing.assert_array_equal(first, again, err_msg="same random_seed, different draws")
        assert not np.array_equal(first, other), "random_seed is ignored"

    def test_idata_kwargs_log_likelihood_adds_the_pointwise_group(self, candidate):
        """``idata_kwargs={"log_likelihood": True}`` gives a ``log_likelihood`` group, as
        ``pm.sample`` does with every sampler (BlackJAX's MCLMC passed it to ArviZ, which
        raised)."""
        if candidate is None:
            pytest.fail(f"backend {self.backend.name!r} offered no CPU candidate")
        req = self.request_for(draws=40, tune=40, idata_kwargs={"log_likelihood": True})
        idata = self.backend.sample(reference.reference_model(), candidate, req)
        assert "log_likelihood" in idata.children, "no log_likelihood group"
        pointwise = idata.log_likelihood.to_dataset()
        assert pointwise["y"].dims == ("chain", "draw", "obs")
        assert np.all(np.isfinite(pointwise["y"].values))

    # -- bad input: the documented errors ---------------------------------------------------

    def test_gpu_candidate_without_a_gpu_raises_device_unavailable(self):
        gpu = [a for a in self.backend.candidates(_profile(reference.reference_model()), ONE_GPU)
               if isinstance(a, Candidate) and a.device == "gpu"]
        if not gpu:
            pytest.skip(f"{self.backend.name} offers no GPU candidate")
        from pymc_accel.devices import discover

        if discover().has_gpu:
            pytest.skip("a GPU is present")
        with pytest.raises(DeviceUnavailableError, match=r"(?i)gpu|device"):
            self.backend.sample(reference.reference_model(), gpu[0],
                                self.request_for(draws=10, tune=10))

    def test_discrete_model_is_refused_with_an_error_naming_the_fix(self):
        from pymc_accel.selection import select

        model = reference.discrete_model()
        answers = self.backend.candidates(_profile(model), CPU_ONLY)
        if any(isinstance(a, Candidate) for a in answers):
            pytest.skip(f"{self.backend.name} offers to sample discrete variables")
        with pytest.raises(DiscreteVariablesError, match="numba|marginaliz"):
            select(model, backend=self.backend.name, registry=registry_with(self.backend),
                   devices=CPU_ONLY)

    def test_non_finite_initial_point_raises_before_sampling(self):
        """pymc-accel checks the start before a backend samples, unless the backend's
        ``checks_initial_point`` says its sampler refuses a non-finite start itself: then the
        sampler must raise, which this test sees as the error pymc-accel raises after it."""
        import pymc_accel

        with process_registry(registry_with(self.backend)):
            with pytest.raises(NonFiniteInitialPointError, match="initvals"):
                pymc_accel.sample(10, tune=10, chains=1, nuts_sampler=self.backend.name,
                                  model=reference.invalid_start_model(), progressbar=False,
                                  quiet=True)


def _check_moments(post, name: str, mean: float, sd: float, label: str = "") -> None:
    """Assert the posterior mean and sd of ``name`` are within ``Z`` Monte Carlo errors."""
    import arviz as az

    what = f"{name}[{label}]" if label else name
    draws = post[name]
    mcse_mean = float(az.mcse(post[[name]], method="mean")[name])
    mcse_sd = float(az.mcse(post[[name]], method="sd")[name])
    got_mean, got_sd = float(draws.mean()), float(draws.std())
    assert abs(got_mean - mean) < Z * mcse_mean + 1e-3 * sd, \
        f"{what}: mean {got_mean:.4f}, expected {mean:.4f} (MCSE {mcse_mean:.4f})"
    assert abs(got_sd - sd) < Z * mcse_sd + 0.03 * sd, \
        f"{what}: sd {got_sd:.4f}, expected {sd:.4f} (MCSE {mcse_sd:.4f})"
