"""The deer_mala backend through the call users write: pymc_accel.sample(nuts_sampler=...)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from scipy import stats

import pymc_accel
from pymc_accel.backends.deer_mala import DeerMalaBackend, default_jacobian
from pymc_accel.devices import Devices, Gpu
from pymc_accel.machine import machine_figures
from pymc_accel.models import eight_schools
from pymc_accel.profile import profile_model

A, B = 3.0, 2.0
Y = np.random.default_rng(4).normal(0.0, 1.5, size=40)


def scale_model() -> pm.Model:
    """y ~ N(0, sigma) with sigma^2 ~ InvGamma(A, B): sigma^2 | y ~ InvGamma(A + n/2, B + sum y^2/2).
    A constrained (log-transformed) variable with a closed-form posterior."""
    with pm.Model(coords={"obs": np.arange(Y.size)}) as model:
        s2 = pm.InverseGamma("s2", A, B)
        pm.Normal("y", 0.0, pm.math.sqrt(s2), observed=Y, dims="obs")
    return model


def _sample(model, **kw):
    base = dict(draws=1000, tune=600, chains=2, random_seed=7, progressbar=False, quiet=True,
                method="deer",  # on a CPU the selector would run the cheaper sequential chain
                compute_convergence_checks=False)
    return pymc_accel.sample(model=model, nuts_sampler="deer_mala", **{**base, **kw})


@pytest.fixture(scope="module")
def idata():
    return _sample(scale_model(), precision="float64")


def test_constrained_scale_posterior_on_the_constrained_scale(idata):
    import arviz as az

    posterior = stats.invgamma(A + Y.size / 2, scale=B + (Y**2).sum() / 2)
    draws = idata.posterior["s2"].to_numpy()
    assert (draws > 0).all()  # mapped back through the log transform
    post = idata.posterior.to_dataset()
    se_mean = float(az.mcse(post, method="mean")["s2"])
    se_sd = float(az.mcse(post, method="sd")["s2"])
    assert abs(draws.mean() - posterior.mean()) < 4 * se_mean
    assert abs(draws.std() - posterior.std()) < 4 * se_sd
    assert "s2_log__" not in post  # PyMC's default: transformed values are not stored


def test_result_has_pm_sample_shape_and_deer_stats(idata):
    assert {"posterior", "sample_stats", "observed_data"} <= set(idata.children)
    assert idata.posterior.sizes["chain"] == 2 and idata.posterior.sizes["draw"] == 1000
    assert idata.observed_data["y"].dims == ("obs",)
    stats_ = idata.sample_stats
    assert {"acceptance_rate", "step_size", "lp", "diverging", "newton_iterations"} <= set(
        stats_.data_vars
    )
    assert stats_["diverging"].dtype == bool
    # newton_iterations is per window: constant over each window of 64 draws
    iters = stats_["newton_iterations"].to_numpy()
    assert (iters[:, :64] == iters[:, :1]).all() and iters.min() >= 1
    assert 0.35 < float(stats_["acceptance_rate"].mean()) < 0.8
    assert pymc_accel.SelectionReport.from_idata(idata).chosen.startswith("deer_mala[cpu,float64")


def test_float32_runs_in_float32():
    idata = _sample(scale_model(), precision="float32", draws=200, tune=200)
    assert idata.posterior["s2"].dtype == np.float32
    assert np.isfinite(idata.posterior["s2"].to_numpy()).all()


def test_sequential_method_and_options_pass_through():
    idata = _sample(scale_model(), draws=100, tune=100, method="sequential", window=20)
    assert (idata.sample_stats["newton_iterations"].to_numpy() == 0).all()


def test_target_accept_given_is_its_target_acceptance_and_mala_s_own_otherwise():
    """pm.sample's target_accept was ignored: 0.6 and 0.99 gave the same step size."""
    own = _sample(scale_model(), draws=200, tune=200, method="sequential")
    high = _sample(scale_model(), draws=200, tune=200, method="sequential", target_accept=0.95)
    own_rate = float(own.sample_stats["acceptance_rate"].mean())
    high_rate = float(high.sample_stats["acceptance_rate"].mean())
    assert abs(own_rate - 0.574) < 0.15 and high_rate > 0.85
    assert float(high.sample_stats["step_size"].mean()) < float(own.sample_stats["step_size"].mean())


def test_unknown_option_is_named():
    with pytest.raises(pymc_accel.PymcAccelError, match="does not take windw; its options are damping, jacobian, .*window"):
        _sample(scale_model(), draws=10, tune=10, windw=8)


def test_candidates_and_estimate():
    profile = profile_model(eight_schools())
    backend = DeerMalaBackend()
    cpu = Devices(cpu_cores=2, jax_installed=True, note="no GPU in tests")
    answers = backend.candidates(profile, cpu)
    cands = [a for a in answers if isinstance(a, pymc_accel.Candidate)]
    assert {(c.device, c.precision) for c in cands} == {("cpu", "float64"), ("cpu", "float32")}
    assert any(isinstance(a, pymc_accel.Refusal) and a.device == "gpu" for a in answers)
    assert cands[0].option("jacobian") == default_jacobian(profile.n_free) == "stoch_diag"
    est = backend.estimate(cands[0], profile, machine_figures())
    assert est.seconds_per_gradient.value > 0 and est.gradients_per_draw.value > 0.5
    assert 0 < est.relative_efficiency.value < 1  # MALA mixes worse per draw than NUTS
    gpu = Devices(cpu_cores=2, gpus=(Gpu(0, "H100", 80 * 2**30),),
                  jax_installed=True)
    assert any(c.device == "gpu" for c in backend.candidates(profile, gpu) if isinstance(c, pymc_accel.Candidate))


def test_auto_does_not_pick_deer_on_a_cpu_for_a_small_model():
    # On a CPU a DEER window costs more gradients than the sequential chain it reproduces.
    report = pymc_accel.explain(eight_schools())
    assert not report.chosen.startswith("deer_mala")
    assert any(r.backend == "deer_mala" for r in report.rows)


def test_sequential_mala_is_a_candidate_estimated_below_deer_on_a_cpu():
    # DEER must fall back to sequential MALA where it cannot win: both are candidates, and on
    # a CPU (no parallel width to spend) the DEER window costs more gradients per draw.
    from pymc_accel.backends.deer_mala import DeerMalaBackend
    from pymc_accel.devices import Devices
    from pymc_accel.machine import machine_figures
    from pymc_accel.profile import profile_model

    backend, profile = DeerMalaBackend(), profile_model(eight_schools())
    cands = [c for c in backend.candidates(profile, Devices(cpu_cores=2, jax_installed=True))
             if isinstance(c, pymc_accel.Candidate) and c.precision == "float64"]
    by_method = {c.option("method", "deer"): c for c in cands}
    assert set(by_method) == {"deer", "sequential"}
    machine = machine_figures()
    deer_cost, seq_cost = (backend.estimate(by_method[m], profile, machine) for m in ("deer", "sequential"))
    assert seq_cost.gradients_per_draw.value == 1.0
    assert deer_cost.gradients_per_draw.value > seq_cost.gradients_per_draw.value


def test_a_requested_method_picks_its_candidate_and_the_report_says_so():
    from pymc_accel.selection import select

    model = scale_model()
    chosen = {m: select(model, backend="deer_mala", options={"method": m}).chosen
              for m in ("deer", "sequential")}
    assert "method=deer" in chosen["deer"] and "method=sequential" in chosen["sequential"]
    rows = select(model, backend="deer_mala", options={"method": "deer"}).rows
    assert any(r.status == "refused" and "method='deer' was requested" in r.reason for r in rows)


def test_log_likelihood_is_stored_as_pm_sample_stores_it():
    """idata_kwargs={"log_likelihood": True} reached ArviZ's from_dict, which raised TypeError
    after the sampling had run."""
    idata = _sample(scale_model(), draws=50, tune=50, method="sequential",
                    idata_kwargs={"log_likelihood": True})
    ll = idata.log_likelihood["y"]
    assert ll.dims == ("chain", "draw", "obs") and ll.shape == (2, 50, Y.size)
    s2 = idata.posterior["s2"].to_numpy()[..., None]
    expected = stats.norm.logpdf(Y, 0.0, np.sqrt(s2))
    np.testing.assert_allclose(ll.to_numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(window=0), "window must be a whole number of draws of at least 1, not 0"),
    (dict(window=2.7), "window must be a whole number .* not 2.7"),
    (dict(window="abc"), "window must be a whole number"),
    (dict(target_acceptance=1.5), "target_acceptance must be between 0 and 1"),
    (dict(tune=0), "tune=0 leaves MALA's step size"),
    (dict(method="deer", jacobian="bogus"),
     "jacobian must be one of 'full', 'diag', 'stoch_diag', not 'bogus'"),
    (dict(method="bogus"), "method must be 'deer' or 'sequential', not 'bogus'"),
    (dict(method="deer", jacobian="stoch_diag", num_probes=0),
     "num_probes must be a whole number of at least 1, not 0"),
])
def test_bad_option_values_are_refused_naming_what_it_takes(kwargs, message):
    """window=0 raised a ZeroDivisionError, window=2.7 ran with 2 under a label of 2.7,
    target_acceptance=1.5 sampled a wrong posterior and tune=0 a chain that barely moved;
    jacobian="bogus" was a KeyError from estimate(), method="bogus" failed after compiling,
    and num_probes=0 ran the sequential chain without a word."""
    from pymc_accel.errors import UnsupportedArgumentError

    with pytest.raises(UnsupportedArgumentError, match=message):
        _sample(scale_model(), **{"draws": 10, "tune": 10, **kwargs})


def test_the_backends_jacobian_modes_are_the_solvers():
    from pymc_accel.backends import deer_mala
    from pymc_accel.deer import JACOBIAN_MODES

    assert deer_mala._JACOBIAN_MODES == JACOBIAN_MODES


def test_a_deer_only_option_picks_deer_and_the_window_is_in_the_label():
    """jacobian="full" without method= ran the sequential chain and dropped it; window=7
    changed the sequential draws without showing in the label."""
    base = dict(draws=20, tune=20, chains=2, random_seed=7, progressbar=False, quiet=True,
                compute_convergence_checks=False, nuts_sampler="deer_mala")
    model = scale_model()
    full = pymc_accel.sample(model=model, jacobian="full", **base)
    assert "method=deer" in full.attrs["pymc_accel_candidate"]
    assert "jacobian=full" in full.attrs["pymc_accel_candidate"]
    seq = pymc_accel.sample(model=model, method="sequential", window=7, **base)
    assert "window=7" in seq.attrs["pymc_accel_candidate"]


def test_a_log_density_jax_cannot_differentiate_twice_runs_the_sequential_chain_and_says_so():
    """pm.Truncated's normal (erfcx, whose gradient JAX cannot differentiate) failed with a
    bare AssertionError from inside JAX."""
    rng = np.random.default_rng(0)
    x = rng.normal(1, 2, 2000)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        s = pm.HalfNormal("s", 3)
        pm.Truncated("y", pm.Normal.dist(mu, s), lower=0, upper=4,
                     observed=x[(x > 0) & (x < 4)][:100])
    with pytest.warns(UserWarning, match="second derivatives .* the sequential chain ran instead"):
        idata = _sample(model, draws=50, tune=50, jacobian="diag")
    assert np.isfinite(idata.posterior["mu"].values).all()


def test_a_start_infinite_before_its_jitter_only_is_sampled_from_the_jittered_one():
    """Its chains start at PyMC's jittered starts, each checked finite: pymc-accel's own check
    of the start before the jitter refused this model (NonFiniteInitialPointError), which
    PyMC, NumPyro and nutpie sample."""
    from tests.models import infinite_before_jitter_model

    idata = _sample(infinite_before_jitter_model(), draws=100, tune=100, method="sequential")
    draws = idata.posterior["v"].values
    assert np.isfinite(draws).all() and np.abs(draws).sum() > 0

