from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

import pymc_accel
from pymc_accel.errors import NonFiniteInitialPointError, UnknownBackendError
from pymc_accel.models import conjugate_normal, eight_schools
from pymc_accel.report import SelectionReport
from tests.models import invalid_start_model

FAST = dict(draws=100, tune=100, chains=2, progressbar=False, random_seed=5,
            compute_convergence_checks=False)


def test_import_changes_nothing_and_enable_is_reversible():
    original = pm.sample
    assert not pymc_accel.is_enabled()
    with pymc_accel.enable():
        assert pymc_accel.is_enabled() and pm.sample is not original
    assert pm.sample is original and not pymc_accel.is_enabled()
    pymc_accel.enable()
    pymc_accel.disable()
    assert pm.sample is original


def test_a_misspelt_name_under_enable_lists_pymc_accels_backends():
    """PyMC's own error listed its four samplers, not "auto" or numba and deer_mala."""
    with pymc_accel.enable(), pytest.raises(UnknownBackendError, match="numba, numpyro.*'auto'"):
        pm.sample(10, nuts_sampler="numbaa", model=eight_schools())


def test_pm_sample_auto_matches_pm_sample_groups_vars_and_dims():
    plain = pm.sample(model=eight_schools(), **FAST)
    with pymc_accel.enable():
        auto = pm.sample(nuts_sampler="auto", model=eight_schools(), **FAST)
    assert set(auto.children) == set(plain.children)
    for group in ("posterior", "observed_data"):
        a, p = auto[group].to_dataset(), plain[group].to_dataset()
        assert set(a.data_vars) == set(p.data_vars)
        for v in p.data_vars:
            assert a[v].dims == p[v].dims, v
    # PyMC's stat names (pm.sample's own NUTS), whatever backend was chosen
    for stat in ("diverging", "acceptance_rate", "step_size", "lp", "tree_depth"):
        assert stat in auto.sample_stats
    report = SelectionReport.from_idata(auto)
    assert report.chosen == auto.attrs["pymc_accel_candidate"]
    assert report.candidate.label == report.chosen  # was None: select() sets it, JSON lost it
    assert "pymc_accel_selection" not in plain.attrs


@pytest.mark.parametrize("backend", ["numba", "numpyro"])
def test_every_backend_returns_pm_sample_default_groups(backend):
    idata = pymc_accel.sample(nuts_sampler=backend, model=eight_schools(), **FAST)
    plain = pm.sample(model=eight_schools(), **FAST)
    assert set(idata.children) == set(plain.children)


def test_registered_name_through_pm_sample_and_pymc_names_pass_through():
    with pymc_accel.enable():
        forced = pm.sample(nuts_sampler="numba", model=conjugate_normal().model, **FAST)
        passed = pm.sample(nuts_sampler="numpyro", model=conjugate_normal().model, **FAST)
    assert forced.attrs["pymc_accel_candidate"].startswith("numba[")
    assert "pymc_accel_candidate" not in passed.attrs  # PyMC's own numpyro, untouched


def _independent_blocks() -> pm.Model:
    """Three value variables of three shapes (scalar, vector, matrix), independent normals:
    the two layouts' programs round its log density within 1e-9 of each other, too little to
    change a tree. A model with data and transforms rounds more differently, and NUTS's
    adaptation grows that (a three-variable regression's draws differed by 1e-4 after
    100 + 100)."""
    with pm.Model() as model:
        pm.Normal("a", 1, 2)
        pm.Normal("b", 0, 0.5, shape=3)
        pm.Normal("c", -1, 1, shape=(2, 2))
    return model


@pytest.mark.parametrize("build", [lambda: conjugate_normal().model, _independent_blocks],
                         ids=["one_variable", "three_variables"])
def test_builtin_numpyro_draws_exactly_what_pm_sample_numpyro_draws(build):
    """NumPyro's own NUTS on the position pymc-accel flattens (backends/flat_position.py), not
    another sampler: the same seed gives PyMC's draws, variable by variable, to rounding (a
    different tree or momentum would move a draw by its posterior's scale)."""
    ours = pymc_accel.sample(nuts_sampler="numpyro", model=build(), **FAST)
    theirs = pm.sample(nuts_sampler="numpyro", model=build(), **FAST)
    for name in theirs.posterior.data_vars:
        np.testing.assert_allclose(ours.posterior[name], theirs.posterior[name], rtol=1e-6,
                                   atol=1e-8)


def test_unknown_backend_error_lists_names():
    with pytest.raises(UnknownBackendError, match="numba, numpyro"):
        pymc_accel.sample(nuts_sampler="stan", model=eight_schools(), **FAST)


@pytest.mark.parametrize("nuts_sampler", ["auto", "numpyro", "deer_mala"])
def test_a_model_without_free_variables_gets_pm_samples_error(nuts_sampler):
    """NumPyro raised an IndexError from inside PyMC's JAX path, DEER-MALA a float32 refusal."""
    with pm.Model() as model:
        pm.Normal("y", 0.0, 1.0, observed=np.array([0.1, -0.3]))
    with pytest.raises(pm.exceptions.SamplingError, match="no.* free variables.*sample_prior_predictive"):
        pymc_accel.sample(nuts_sampler=nuts_sampler, model=model, **FAST)


@pytest.mark.parametrize("nuts_sampler", ["auto", "numba"])
def test_return_inferencedata_false_is_refused_before_sampling(nuts_sampler, monkeypatch):
    """PyMC's NUTS returned a MultiTrace and the run failed on its missing attrs afterwards;
    plugins' samplers wrapped PyMC's refusal as their own failure."""
    from pymc_accel import integration

    monkeypatch.setattr(integration, "_run_backend", lambda *a: pytest.fail("sampled"))
    with pytest.raises(ValueError, match="return_inferencedata=False.*nuts_sampler='pymc'"):
        pymc_accel.sample(nuts_sampler=nuts_sampler, model=eight_schools(),
                          return_inferencedata=False, **FAST)


def test_device_and_precision_need_a_pymc_accel_backend():
    with pytest.raises(ValueError, match="pymc-accel backend"):
        pymc_accel.sample(nuts_sampler="nutpie", device="cpu", model=eight_schools(), **FAST)


def test_non_finite_initial_point_is_reported_with_the_variable():
    with pytest.raises(NonFiniteInitialPointError, match="y .*initvals"):
        pymc_accel.sample(model=invalid_start_model(), **FAST)


def _scale_model() -> pm.Model:
    with pm.Model() as model:
        mu = pm.Normal("mu", 1.0, 3.0)
        sd = pm.HalfNormal("sd", 3.0)
        pm.Normal("y", mu, sd, observed=np.array([2.0, 3.5, 4.1]))
    return model


@pytest.mark.parametrize("backend", [dict(nuts_sampler="numba", driver="nutpie"),
                                     dict(nuts_sampler="numba", driver="pymc"),
                                     dict(nuts_sampler="numpyro")])
def test_initvals_outside_the_support_are_named_whatever_the_sampler(backend):
    """nutpie raised a Rust backtrace ("All initialization points failed"), NumPyro and PyMC's
    NUTS a SamplingError: log(-1) is not finite, and PyMC's parameter check raised on it
    where the start check expected -inf."""
    with pytest.raises(NonFiniteInitialPointError, match=r"not finite in sd: .*support.*initvals"
                       ) as info:
        pymc_accel.sample(model=_scale_model(), initvals={"sd": -1.0}, **backend, **FAST)
    # alone: not under the sampler's own traceback ("During handling of the above exception")
    assert info.value.__suppress_context__ or info.value.__context__ is None


@pytest.mark.parametrize("backend", [dict(nuts_sampler="numba", driver="pymc"),
                                     dict(nuts_sampler="numpyro")])
def test_per_chain_initvals_outside_the_support_are_named(backend):
    """A list of one dict per chain went unchecked: PyMC's SamplingError reached the user."""
    with pytest.raises(NonFiniteInitialPointError, match=r"not finite in sd: .*support.*initvals"):
        pymc_accel.sample(model=_scale_model(), initvals=[{"sd": 1.0}, {"sd": -1.0}],
                          **backend, **FAST)


@pytest.mark.parametrize(("initvals", "message"), [
    ({"sigma": 1.0}, r"'sigma', which is not a free variable.*mu, sd"),
    ({"mu": np.zeros(3)}, r"initvals\['mu'\] has shape \(3,\), but mu has shape \(\)"),
    ([{"mu": 0.0}, {"nope": 1.0}], r"'nope', which is not a free variable"),
    ("mu", r"initvals must be a dict"),
])
def test_initvals_that_name_no_variable_or_have_the_wrong_shape_are_refused(
        initvals, message, monkeypatch):
    """PyMC raised a bare KeyError and a PyTensor TypeError from inside its initial point."""
    from pymc_accel import integration

    monkeypatch.setattr(integration, "_run_backend", lambda *a: pytest.fail("sampled"))
    with pytest.raises((ValueError, TypeError), match=message):
        pymc_accel.sample(model=_scale_model(), initvals=initvals, **FAST)


def test_initvals_on_the_samplers_scale_are_accepted():
    idata = pymc_accel.sample(model=_scale_model(), initvals={"sd_log__": 0.0},
                              nuts_sampler="numpyro", **FAST)
    assert "sd" in idata.posterior


@pytest.mark.parametrize("nuts_sampler", ["auto", "numba"])
def test_a_model_of_discrete_variables_only_samples_as_pm_sample_does(nuts_sampler):
    """PyMC's driver was handed nuts={"target_accept": ...}, which pm.sample refuses when no
    variable is left to NUTS ("Invalid key found in step_kwargs")."""
    with pm.Model() as model:
        pm.Bernoulli("k", 0.3)
    idata = pymc_accel.sample(model=model, nuts_sampler=nuts_sampler, **FAST)
    assert set(np.unique(idata.posterior["k"].values)) <= {0, 1}


def test_a_parameter_check_failing_at_the_start_is_a_non_finite_start():
    from pymc_accel.integration import check_initial_point

    with pm.Model() as model:
        scale = pm.Normal("scale", -1.0, 0.1)  # the prior's mean: a negative sigma at the start
        pm.Normal("y", 0.0, scale, observed=[0.1])
    with pytest.raises(NonFiniteInitialPointError, match="parameter check failed.*sigma > 0"):
        check_initial_point(model)


def test_the_start_check_passes_priors_with_integer_rates():
    """``Exponential(2)`` and ``Gamma(4, 2)`` start inside their support; the check found
    log(0) at their starts (the reciprocal of the integer 2 computed as 0) and refused the
    model for every sampler that does not check its own start (DEER-MALA)."""
    from pymc_accel.integration import check_initial_point

    with pm.Model() as model:
        sigma = pm.Exponential("sigma", 2)
        pm.Gamma("ell", 4, 2)
        pm.Normal("y", 0.0, sigma, observed=[0.1, -0.3])
    check_initial_point(model)


def test_nuts_and_nuts_sampler_kwargs_together_are_refused_as_pm_sample_refuses_them():
    """The second dict reached the backend as an option named nuts_sampler_kwargs."""
    with pytest.raises(ValueError, match="Cannot pass both `nuts_sampler_kwargs` and `nuts=`"):
        pymc_accel.sample(model=eight_schools(), nuts={"target_accept": 0.9},
                          nuts_sampler_kwargs={"max_treedepth": 5}, **FAST)


def test_the_start_check_names_a_potential_and_passes_a_finite_one():
    """``model.logp`` returns the potentials' terms after the random variables': the check
    names a potential that is not finite at the start, and passes one that is."""
    import pymc as pm

    from pymc_accel.integration import check_initial_point

    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("y", mu, 1.0, observed=[0.1, -0.2])
        pm.Potential("fine", -(mu**2))
    check_initial_point(model)
    with model:
        pm.Potential("wall", pm.math.log(mu))  # log(0) at the initial point mu = 0
    with pytest.raises(NonFiniteInitialPointError, match=r"wall \(logp=-inf\)"):
        check_initial_point(model)


def test_the_start_check_computes_a_term_as_stably_as_the_samplers_do():
    """log1p(-sigmoid(40 + b)) is -40.0 at b = 0 under PyTensor's C, numba and JAX compiles (the
    model's log density -40.9). With canonicalize applied first, which hid the form from the
    stabilizing rewrite, sigmoid(40) rounded to 1.0, the term to -inf, and the check refused
    a start that pm.sample accepts."""
    import pymc as pm
    import pytensor.tensor as pt

    from pymc_accel.integration import check_initial_point

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Potential("tail", pt.log1p(-pt.sigmoid(40.0 + b)))
    assert np.isfinite(model.compile_logp()({"b": 0.0}))  # PyMC's own start check passes
    check_initial_point(model)


def test_the_start_check_simplifies_a_term_as_the_samplers_do():
    """log(exp(800 + b)) is 800 + b under PyTensor's C, numba and JAX compiles; evaluated as
    written, exp(800) overflows and the check would refuse a start pm.sample accepts."""
    import pymc as pm
    import pytensor.tensor as pt

    from pymc_accel.integration import check_initial_point

    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 1.0)
        pm.Potential("big", -pt.log(pt.exp(800.0 + b)))
    assert np.isfinite(model.compile_logp()({"b": 0.0}))
    check_initial_point(model)


def test_a_start_check_that_cannot_evaluate_the_model_lets_the_sampler_start(monkeypatch):
    """Only a non-finite start stops a run before its sampler starts; the check failing to
    evaluate the model (an op it cannot run) does not."""
    from pymc_accel import integration

    def broken(model, initvals=None):
        raise NotImplementedError("no perform for SomeOp")

    monkeypatch.setattr(integration, "check_initial_point", broken)
    monkeypatch.setattr(integration, "checks_its_own_start", lambda candidate: False)
    idata = pymc_accel.sample(model=conjugate_normal().model, nuts_sampler="numba",
                              driver="pymc", **FAST)
    assert "posterior" in idata.children


def test_float32_request_samples_in_float32():
    idata = pymc_accel.sample(precision="float32", model=conjugate_normal().model, **FAST)
    assert idata.attrs["pymc_accel_candidate"].startswith("numpyro[cpu,float32")
    assert idata.posterior["mu"].dtype == np.float32


def test_explain_does_not_sample():
    report = pymc_accel.explain(eight_schools(), chains=2)
    assert report.request["chains"] == 2 and report.candidate is not None


def test_the_start_is_checked_once_pymc_s_own_nuts_checks_it_itself(start_checks):
    calls = start_checks
    idata = pymc_accel.sample(model=conjugate_normal().model, **FAST)
    checks_itself = idata.attrs["pymc_accel_candidate"].split("[")[0] in ("numba", "numpyro")
    # PyMC's NUTS evaluates the start itself: pymc-accel's check would be repeated work
    assert calls == ([] if checks_itself else [1])
    # so does nutpie: it refuses a non-finite start ("All initialization points failed")
    calls.clear()
    pymc_accel.sample(model=conjugate_normal().model, nuts_sampler="numba", driver="nutpie",
                      **FAST)
    assert calls == []
    with pytest.raises(NonFiniteInitialPointError, match="y .*initvals"):
        pymc_accel.sample(model=invalid_start_model(), nuts_sampler="numba", driver="nutpie",
                          **FAST)
    assert calls == [1]  # checked after nutpie refused, to name the variable
    # a bad start still raises pymc-accel's error naming the variable, whichever sampler runs
    for backend in ("auto", "numba", "numpyro"):
        with pytest.raises(NonFiniteInitialPointError, match="y .*initvals"):
            pymc_accel.sample(model=invalid_start_model(), nuts_sampler=backend, **FAST)


def test_a_backend_that_declares_its_start_check_is_not_checked_first(monkeypatch):
    """A backend's optional ``checks_initial_point`` spares it pymc-accel's start check; one
    without the method, or whose method raises or says anything but True, is checked first."""
    from types import SimpleNamespace

    from pymc_accel import integration
    from pymc_accel.backend import Candidate

    class Declares:
        def checks_initial_point(self, candidate):
            return True

    class Raises:
        def checks_initial_point(self, candidate):
            raise RuntimeError("plugin bug")

    class Truthy:
        def checks_initial_point(self, candidate):
            return "yes"

    backends = {"declares": Declares(), "raises": Raises(), "truthy": Truthy(),
                "silent": object()}
    monkeypatch.setattr(integration, "get_registry", lambda: SimpleNamespace(backends=backends))
    verdicts = {name: integration.checks_its_own_start(Candidate(name, "cpu", "float64"))
                for name in backends}
    assert verdicts == {"declares": True, "raises": False, "truthy": False, "silent": False}


def test_var_names_that_name_no_variable_are_refused_before_sampling(monkeypatch):
    """The same call raised a TypeError (NumPyro), an AssertionError (PyMC's NUTS) or dropped
    the name (nutpie), by the sampler chosen."""
    from pymc_accel import integration

    monkeypatch.setattr(integration, "_run_backend", lambda *a: pytest.fail("sampled"))
    with pytest.raises(ValueError, match=r"var_names \['nope'\] are not variables.*mu"):
        pymc_accel.sample(model=_scale_model(), var_names=["mu", "nope"], **FAST)


@pytest.mark.parametrize("backend", ["numpyro", "deer_mala"])
def test_idata_kwargs_include_transformed_keeps_the_transformed_variables(backend):
    """pm.sample's include_transformed reached ArviZ's from_dict, which raised a TypeError."""
    idata = pymc_accel.sample(model=_scale_model(), nuts_sampler=backend,
                              idata_kwargs={"include_transformed": True}, **FAST)
    assert {"mu", "sd", "sd_log__"} <= set(idata.posterior.data_vars)


@pytest.mark.parametrize("backend", ["numpyro", "numba"])
def test_idata_kwargs_log_prior_is_the_log_prior_of_each_draw(backend):
    """PyMC's JAX path passed log_prior to ArviZ's from_dict (TypeError), and its nutpie path
    ignores it; every backend's result now has it, as pm.sample's own sampler stores it."""
    from scipy import stats

    options = {"driver": "nutpie"} if backend == "numba" else {}
    idata = pymc_accel.sample(model=_scale_model(), nuts_sampler=backend,
                              idata_kwargs={"log_prior": True}, **options, **FAST)
    mu = idata.posterior["mu"].values
    expected = stats.norm(1.0, 3.0).logpdf(mu)  # _scale_model's prior of mu
    np.testing.assert_allclose(idata.log_prior["mu"].values, expected, rtol=1e-6)
    assert idata.log_prior["sd"].shape == mu.shape


def test_log_prior_with_var_names_that_leave_out_a_free_variable_is_refused():
    """pm.sample raised KeyError after sampling: the log prior needs every free variable."""
    with pytest.raises(ValueError, match="log_prior.*leaves out sd"):
        pymc_accel.explain(_scale_model(), var_names=["mu"], idata_kwargs={"log_prior": True})


def test_explain_refuses_a_model_without_free_variables_as_sample_does():
    """explain() chose a sampler for it, with DEER-MALA's ZeroDivisionError as a refusal."""
    with pm.Model() as model:
        x = pm.Data("x", np.arange(3.0))
        pm.Deterministic("d", x * 2)
    with pytest.raises(pm.exceptions.SamplingError, match="no.* free variables"):
        pymc_accel.explain(model)


def test_explain_takes_what_sample_takes_and_checks_it_as_sample_does():
    """random_seed= gave "select() got an unexpected keyword argument", a path an
    AttributeError, and var_names naming no variable passed."""
    report = pymc_accel.explain(eight_schools(), random_seed=1, progressbar=False, chains=2)
    assert report.candidate is not None
    with pytest.raises(TypeError, match="takes a pm.Model, not str.*pymc-accel explain FILE"):
        pymc_accel.explain("model.py")
    with pytest.raises(ValueError, match="not variables of the model"):
        pymc_accel.explain(eight_schools(), var_names=["nope"])
    with pytest.raises(ValueError, match="'nope', which is not a free variable"):
        pymc_accel.explain(eight_schools(), initvals={"nope": 1.0})
    # a start outside the support, as sample() raises for it (explain reported a choice)
    with pytest.raises(NonFiniteInitialPointError, match="not finite in tau"):
        pymc_accel.explain(eight_schools(), initvals={"tau": -1.0})
    with pytest.raises(NonFiniteInitialPointError, match="not finite in tau"):
        pymc_accel.explain(eight_schools(), initvals=[{"tau": 1.0}, {"tau": -1.0}])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(cores=0), "cores must be a positive integer"),
    (dict(cores=-1), "cores must be a positive integer"),
    (dict(target_accept=1.5), "target_accept must be a number between 0 and 1"),
    (dict(target_accept=0.0), "target_accept must be a number between 0 and 1"),
    (dict(nuts={"target_accept": 1.0}), "target_accept must be a number between 0 and 1"),
    (dict(draws=0), "draws must be an integer of at least 1"),
    (dict(nuts_sampler="numpyro", draws=0), "draws must be an integer of at least 1"),
    (dict(tune=2.5), "tune must be an integer of at least 0"),
    (dict(chains=1.5), "chains must be an integer of at least 1"),
])
def test_run_arguments_out_of_range_are_refused_before_sampling(kwargs, message,
                                                                monkeypatch):
    """cores=0 was blamed on a plugin (ZeroDivisionError) or ran; target_accept=1.5 ran nutpie
    for 69 s where 3 s was estimated, and 0 made every NumPyro draw divergent; draws=0 reached
    NumPyro, which raised "num_samples must be a positive integer greater than thinning"."""
    from pymc_accel import integration

    monkeypatch.setattr(integration, "_run_backend", lambda *a: pytest.fail("sampled"))
    run = {**FAST, **kwargs}
    with pytest.raises(ValueError, match=message):
        pymc_accel.sample(model=eight_schools(), **run)


def test_numpy_integer_run_lengths_reach_the_sampler_as_ints(monkeypatch):
    """draws=np.int64(500) (a length computed with NumPy) was refused as not an integer."""
    from pymc_accel import integration

    seen = []

    def run_backend(model, report, request, registry):
        seen.append(request)
        raise RuntimeError("stop before sampling")

    monkeypatch.setattr(integration, "_run_backend", run_backend)
    with pytest.raises(RuntimeError, match="stop before sampling"):
        pymc_accel.sample(np.int64(20), model=eight_schools(), tune=np.int32(10),
                          chains=np.int64(2), cores=np.int64(1), nuts_sampler="numpyro",
                          progressbar=False)
    (request,) = seen
    assert (request.draws, request.tune, request.chains, request.cores) == (20, 10, 2, 1)
    assert all(type(v) is int for v in (request.draws, request.tune, request.chains,
                                          request.cores))


def test_a_forced_float32_run_that_failed_the_check_is_not_learned_from(tmp_path, monkeypatch):
    """Its trees (at the depth limit) were lent to float64 and credited as 5.5x nutpie's
    effective draws."""
    from pymc_accel import history
    from pymc_accel.errors import PrecisionWarning

    monkeypatch.setenv("PYMC_ACCEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "on")
    monkeypatch.setattr(history, "_MACHINE_KEY", None)
    with pm.Model() as model:
        mu = pm.Normal("mu", 1e6, 10.0)
        pm.Normal("y", mu, 1.0, observed=1e6 + np.linspace(-1, 1, 20))
    with pytest.warns(PrecisionWarning):
        pymc_accel.sample(model=model, nuts_sampler="numpyro", precision="float32",
                          draws=20, tune=20, chains=1, progressbar=False,
                          compute_convergence_checks=False)
    assert history.entries() == []
    pymc_accel.sample(model=model, nuts_sampler="numpyro", draws=20, tune=20, chains=1,
                      progressbar=False, compute_convergence_checks=False)
    assert [e["candidate"] for e in history.entries()] == [
        "numpyro[cpu,float64,chain_method=parallel]"]


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(random_seed=np.random.RandomState(3)), TypeError, "not RandomState"),
    (dict(random_seed=[1, 2, 3], chains=2), ValueError, "3 seeds for 2 chains"),
    (dict(var_names=["sd_log__"]), ValueError, "sampler's \\(transformed\\) scale"),
    # NumPyro's and DEER-MALA's runs failed in NumPy's SeedSequence
    (dict(random_seed=-1), ValueError, "random_seed = -1 is not allowed.*Pass None"),
    (dict(random_seed=[1, -2]), ValueError, "random_seed = -2 is not allowed"),
])
def test_seeds_and_var_names_no_sampler_takes_are_refused_before_sampling(
        kwargs, error, message, monkeypatch):
    """A RandomState reached the plugins' samplers and came back as the plugin's failure;
    var_names=["sd_log__"] passed the check and then failed in three ways by sampler."""
    from pymc_accel import integration

    monkeypatch.setattr(integration, "_run_backend", lambda *a: pytest.fail("sampled"))
    run = {**FAST, **kwargs}
    with pytest.raises(error, match=message):
        pymc_accel.sample(model=_scale_model(), **run)


@pytest.mark.parametrize("nuts_sampler", ["auto", "numpyro", "deer_mala", "blackjax_nuts"])
def test_float64_on_a_model_built_in_float32_is_refused_with_the_fix(nuts_sampler):
    """NumPyro and BlackJAX failed deep in JAX ("cond branches must have equal output types":
    float64 positions, a float32 gradient), the latter reported as the plugin's fault; DEER-MALA
    ran a float64 chain on a float32 log density; the report said to pass precision='float64'."""
    import pytensor

    from pymc_accel.errors import NoCandidateError

    with pytensor.config.change_flags(floatX="float32"):
        model = eight_schools()
        with pytest.raises(NoCandidateError, match="built in float32.*floatX='float64'"):
            pymc_accel.sample(model=model, nuts_sampler=nuts_sampler, precision="float64",
                              **FAST)
        report = pymc_accel.explain(model)
    assert report.candidate.precision == "float32"
    assert not any("pass precision='float64'" in r.reason for r in report.rows)


@pytest.mark.parametrize("nuts_sampler", ["auto", "numpyro", "numba", "blackjax_nuts"])
def test_a_model_built_in_float32_sampled_under_float64_is_refused_with_the_fix(nuts_sampler):
    """Built under change_flags(floatX='float32') and sampled after the block: every backend
    failed inside PyMC ("Invalid dtype for variable ... Can not cast to float64", "Cannot
    convert Type Scalar(float64 ...) into Type Scalar(float32 ...)"), BlackJAX's as the
    plugin's fault."""
    import pytensor

    from pymc_accel.errors import UnsupportedArgumentError

    with pytensor.config.change_flags(floatX="float32"):
        model = eight_schools()
    fix = r"floatX is 'float64' now.*change_flags\(floatX='float32'\)"
    with pytest.raises(UnsupportedArgumentError, match=fix):
        pymc_accel.sample(model=model, nuts_sampler=nuts_sampler, **FAST)
    with pytest.raises(UnsupportedArgumentError, match=fix):
        pymc_accel.explain(model)
    with pytensor.config.change_flags(floatX="float32"):  # sampled as built: runs
        assert pymc_accel.explain(model).candidate.precision == "float32"


def test_a_black_box_op_without_jax_rules_out_the_jax_samplers_and_auto_samples_it():
    """A PyTensor op of the user's with no JAX conversion: every JAX candidate failed at its run
    ("No JAX conversion for the given `Op`"), and auto could choose one."""
    from pymc_accel.errors import NoCandidateError
    from tests.models import blackbox_model

    model = blackbox_model()
    report = pymc_accel.explain(model)
    assert not report.candidate.backend.startswith(("numpyro", "deer_mala", "blackjax"))
    jax_rows = [r for r in report.rows if r.backend in ("numpyro", "deer_mala")
                and r.device == "cpu"]
    assert jax_rows and all(r.status == "refused" and "no JAX conversion (BlackBoxLogLike)"
                            in r.reason for r in jax_rows)
    assert report.model_profile.ops_without_jax == ["tests.models.BlackBoxLogLike"]
    with pytest.raises(NoCandidateError, match="no JAX conversion.*nuts_sampler='numba'"):
        pymc_accel.sample(model=model, nuts_sampler="numpyro", **FAST)
    # 1000 draws: Monte Carlo error under 0.06
    _assert_black_box_posterior(pymc_accel.sample(model=model, **{**FAST, "draws": 500}), 0.25)


def test_a_variable_without_a_gradient_is_sampled_by_pymcs_driver_as_pm_sample_does():
    """pm.sample gives it slice sampling; the profile's pytensor.grad raised NotImplementedError
    out of sample() and explain(), so nuts_sampler='auto' failed where pm.sample runs."""
    from pymc_accel.errors import NoCandidateError
    from tests.models import blackbox_model

    model = blackbox_model(gradient=False)
    report = pymc_accel.explain(model)
    assert report.candidate.label == "numba[cpu,float64,driver=pymc]"
    nutpie = next(r for r in report.rows if r.label == "numba[cpu,float64,driver=nutpie]")
    assert nutpie.status == "refused" and "no gradient for mu" in nutpie.reason
    with pytest.raises(NoCandidateError, match="no gradient for mu.*driver='pymc'"):
        pymc_accel.sample(model=model, nuts_sampler="numpyro", **FAST)
    # slice sampling's 2000 draws: Monte Carlo error under 0.05
    _assert_black_box_posterior(pymc_accel.sample(model=model, **{**FAST, "draws": 1000}), 0.2)


def _assert_black_box_posterior(idata, tolerance: float) -> None:
    """``tests.models.blackbox_model``'s posterior: Normal(0.5, sqrt(0.5)) in each coordinate
    (the mean within ``tolerance``, the sd within that fraction)."""
    mu = idata.posterior["mu"].values.reshape(-1, 3)
    np.testing.assert_allclose(mu.mean(axis=0), 0.5, atol=tolerance)
    np.testing.assert_allclose(mu.std(axis=0), np.sqrt(0.5), rtol=tolerance)


def test_a_tried_runner_up_that_fails_falls_back_to_the_leader_and_is_not_tried_again(ledger):
    """The runner-up is the selector's choice, not the user's: its failure must not fail the
    user's run, nor the next one."""
    from tests.test_selection import _auto, _two_nuts

    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=11.0)
    rival.fails = True
    assert _auto(reg).candidate.backend == "leader"
    second = _auto(reg)  # the rival is tried, fails, and the leader runs instead
    assert second.candidate.backend == "leader" and second.chosen_by == "cost model"
    note = next(n for n in second.notes if n.startswith("the runner-up tried once"))
    assert note.startswith("the runner-up tried once, rival[cpu,float64], failed (PluginError")
    assert "rival cannot run this model" in note
    assert note.endswith("ran leader[cpu,float64] instead")
    _auto(reg)
    assert (leader.runs, rival.runs) == (3, 1)


class _StuckAtTheStart:
    """A backend estimated fastest whose chains never leave their start, as NumPyro's did on a
    censored regression where JAX's derivative of the normal log-CDF is NaN; ``on_jax`` says
    whether its estimate says its run starts JAX, as the JAX samplers' do."""

    description = "chains that never move"

    def __init__(self, name: str = "stuckjax", on_jax: bool = True):
        self.name, self.on_jax, self.sampled = name, on_jax, 0

    def candidates(self, profile, devices):
        return [pymc_accel.Candidate(self.name, "cpu", "float64")]

    def estimate(self, candidate, profile, machine):
        from pymc_accel.backend import Estimate, Figure

        return Estimate(Figure(1e-9), Figure(1.0), Figure(0.0),
                        first_use=("jax",) if self.on_jax else ())

    def sample(self, model, candidate, request):
        import arviz as az

        self.sampled += 1
        shape = (request.chains, request.draws)
        return az.from_dict({"posterior": {"mu": np.full(shape, 0.3)},
                             "sample_stats": {"lp": np.full(shape, -46393.75),
                                              "diverging": np.ones(shape, bool)}})



class _FrozenInTuning(_StuckAtTheStart):
    """A JAX backend estimated fastest whose chains end tuning with a collapsed step size:
    every draw at the maximum tree depth, each chain in its own corner, moving by a hair (as
    NumPyro's and BlackJAX's did on a latent Student-t process)."""

    def sample(self, model, candidate, request):
        import arviz as az

        self.sampled += 1
        rng = np.random.default_rng(0)
        shape = (request.chains, request.draws)
        corners = np.linspace(-2.0, 2.0, request.chains)[:, None]
        return az.from_dict({"posterior": {"mu": corners + rng.normal(0.0, 1e-6, shape)},
                             "sample_stats": {"tree_depth": np.full(shape, 10),
                                              "diverging": np.zeros(shape, bool)}})


def _with_backend(monkeypatch, backend):
    from pymc_accel import integration
    from pymc_accel.registry import build_registry

    registry = build_registry(autoload=False)
    registry.backends[backend.name] = backend
    registry.origins[backend.name] = "test"
    monkeypatch.setattr(integration, "get_registry", lambda: registry)


@pytest.mark.parametrize("make, what", [
    (_StuckAtTheStart, "stuckjax[cpu,float64] never left their start"),
    (lambda: _FrozenInTuning("frozenjax"), "frozenjax[cpu,float64] barely moved"),
])
def test_an_automatic_jax_run_whose_chains_never_moved_is_re_run_on_pytensors_gradient(
        monkeypatch, make, what):
    stuck, truth = make(), conjugate_normal()
    _with_backend(monkeypatch, stuck)
    idata = pymc_accel.sample(model=truth.model, **FAST)
    assert stuck.sampled == 1
    report = SelectionReport.from_idata(idata)
    assert report.chosen.startswith("numba[cpu,float64")
    assert any(f"chains 0, 1 of the run with {what}" in n
               and f"re-ran with {report.chosen}" in n for n in report.notes)
    mu = idata.posterior["mu"].values
    assert np.all(mu.std(axis=1) > 1e-3)  # the draws moved
    # within four Monte Carlo errors of the known posterior mean (over 100 effective draws)
    assert abs(mu.mean() - truth.post_mean) < 4 * truth.post_sd / np.sqrt(100)


@pytest.mark.parametrize("stuck, named, fix", [
    (_StuckAtTheStart(), True, "nuts_sampler='numba'"),  # the caller named the sampler
    # not JAX's doing: nutpie's start, drawn again until its gradient is finite, is named
    (_StuckAtTheStart("stucknumba", on_jax=False), True, "pass initvals.*driver='nutpie'"),
    (_FrozenInTuning("frozenjax"), True, "barely moved.*nuts_sampler='numba'"),
])
def test_stuck_chains_the_selector_may_not_re_run_warn_with_the_fix(monkeypatch, stuck, named,
                                                                     fix):
    stuck.sampled = 0
    _with_backend(monkeypatch, stuck)
    with pytest.warns(pymc_accel.StuckChainsWarning, match=fix):
        idata = pymc_accel.sample(model=conjugate_normal().model,
                                  nuts_sampler=stuck.name if named else "auto", **FAST)
    assert stuck.sampled == 1
    assert SelectionReport.from_idata(idata).chosen == f"{stuck.name}[cpu,float64]"


def test_an_automatic_run_stuck_at_its_start_is_re_run_on_nutpie_whatever_ran_it(monkeypatch):
    """nutpie draws a start again until the log density and its gradient are finite there;
    PyMC's jitter, which PyMC's NUTS and the JAX samplers start from, checks the log density
    only. So a chain stuck at its start is re-run on nutpie, after a non-JAX run too."""
    stuck, truth = _StuckAtTheStart("stucknumba", on_jax=False), conjugate_normal()
    _with_backend(monkeypatch, stuck)
    idata = pymc_accel.sample(model=truth.model, **FAST)
    assert stuck.sampled == 1
    report = SelectionReport.from_idata(idata)
    assert report.chosen == "numba[cpu,float64,driver=nutpie]"
    assert any("whose start is drawn again until the log density and its gradient are finite"
               in n for n in report.notes)
    assert np.all(idata.posterior["mu"].values.std(axis=1) > 1e-3)


def test_a_re_run_whose_chains_never_moved_either_warns_with_the_fix(monkeypatch):
    from pymc_accel import stuck_chains

    stuck = _StuckAtTheStart()
    _with_backend(monkeypatch, stuck)
    monkeypatch.setattr(stuck_chains, "stuck_chains", lambda idata: [0])
    with pytest.warns(pymc_accel.StuckChainsWarning, match="never left its start either.*initvals"):
        idata = pymc_accel.sample(model=conjugate_normal().model, **FAST)
    assert SelectionReport.from_idata(idata).chosen == "numba[cpu,float64,driver=nutpie]"


def test_a_start_where_the_gradient_is_nan_is_sampled_by_autos_first_run(monkeypatch):
    """The gradient of an interval-censored gamma model is NaN near the start given (shape
    0.8): PyMC's NUTS's and NumPyro's chains never left such starts (a held-out interval
    model's regret runs, 2026-12-01: NumPyro's chains in two of four seeds, PyMC's NUTS's 369 s
    run), and ``auto`` re-ran on nutpie. Their starts are now drawn again where the gradient is
    not finite (:mod:`pymc_accel.backends.finite_starts`), so the first run samples."""
    from pymc_accel.stuck_chains import stuck_chains

    from tests.models import interval_gamma_model

    idata = pymc_accel.sample(model=interval_gamma_model(), initvals={"shape": 0.8},
                              draws=200, tune=300, chains=2, progressbar=False, random_seed=1,
                              quiet=True)
    assert stuck_chains(idata) == []
    report = SelectionReport.from_idata(idata)
    assert not any("never left" in n for n in report.notes)  # no re-run
    assert any("chain starts drawn again where the log density was finite and its gradient "
               "was not" in n for n in report.notes)
    shape = idata.posterior["shape"].values
    assert 1.5 < shape.mean() < 4.0


def test_chains_stuck_without_tuning_are_not_re_run_and_the_warning_says_tune(monkeypatch):
    """With tune=0 no sampler adapts its step size, and which keeps its start depends on the
    model and seed (the sweep's tune=0 case: NumPyro and nutpie did), so a re-run on another
    gradient is no fix."""
    stuck = _StuckAtTheStart()
    _with_backend(monkeypatch, stuck)
    with pytest.warns(pymc_accel.StuckChainsWarning, match="with tune=0 the step size"):
        idata = pymc_accel.sample(model=conjugate_normal().model, **{**FAST, "tune": 0})
    assert stuck.sampled == 1
    assert SelectionReport.from_idata(idata).chosen == "stuckjax[cpu,float64]"


class _WrongGradient(_StuckAtTheStart):
    """A JAX backend estimated fastest whose chains move, and whose run's check found its
    gradient was not the derivative of its log density (as NumPyro's was on a sparse GP before
    its coinciding distances were held: :mod:`pymc_accel.backends.last_gradients`)."""

    def sample(self, model, candidate, request):
        import arviz as az

        from pymc_accel.backends.last_gradients import ATTRS_KEY, LastGradients

        self.sampled += 1
        shape = (request.chains, request.draws)
        idata = az.from_dict({"posterior": {
            "mu": np.random.default_rng(0).normal(3.0, 1.0, shape)}})
        idata.attrs[ATTRS_KEY] = LastGradients(
            agrees=False, chains=list(range(request.chains)),
            grad_rel_errors=[0.98] * request.chains, grad_rtol=0.01).to_json()
        return idata


def test_an_automatic_run_whose_gradient_was_wrong_is_re_run_and_left_out_after(
        monkeypatch, ledger):
    wrong, truth = _WrongGradient("wrongjax"), conjugate_normal()
    _with_backend(monkeypatch, wrong)
    idata = pymc_accel.sample(model=truth.model, **FAST)
    assert wrong.sampled == 1
    report = SelectionReport.from_idata(idata)
    assert report.chosen.startswith("numba")
    assert any("wrongjax[cpu,float64], the gradient JAX compiled for the run was not the "
               "derivative" in n and "re-ran with numba" in n for n in report.notes)
    mu = idata.posterior["mu"].values
    assert abs(mu.mean() - truth.post_mean) < 4 * truth.post_sd / np.sqrt(100)
    # not recorded as a run of the model: auto leaves it out of the next selection
    again = SelectionReport.from_idata(pymc_accel.sample(model=truth.model, **FAST))
    assert wrong.sampled == 1 and not again.chosen.startswith("wrongjax")
    refused = next(r for r in again.rows if r.label == "wrongjax[cpu,float64]")
    assert refused.status == "refused"
    assert "was not the derivative of the log density" in refused.reason


def test_a_stuck_run_is_not_recorded_as_a_run_and_auto_leaves_its_sampler_out_after(
        monkeypatch, ledger):
    """Recorded as a run, the stuck chains' one leapfrog a draw priced NumPyro as the fastest
    sampler there is, and the censored Weibull regression's next selection chose it again."""
    from pymc_accel import history

    stuck, truth = _StuckAtTheStart(), conjugate_normal()
    _with_backend(monkeypatch, stuck)
    pymc_accel.sample(model=truth.model, **FAST)
    report = SelectionReport.from_idata(pymc_accel.sample(model=truth.model, **FAST))
    assert stuck.sampled == 1  # the second run left it out
    assert not report.chosen.startswith("stuckjax")
    refused = next(r for r in report.rows if r.label == "stuckjax[cpu,float64]")
    assert refused.status == "refused"
    assert "never left their start, or barely moved, when it ran" in refused.reason
    entry = history.lookup(report.model_profile or pymc_accel.profile_model(truth.model),
                           pymc_accel.Candidate("stuckjax", "cpu", "float64"))
    assert "stuck" in entry and "wall_seconds" not in entry
    named = SelectionReport.from_idata(pymc_accel.sample(
        model=truth.model, nuts_sampler="stuckjax", **FAST))
    assert named.chosen == "stuckjax[cpu,float64]"  # the user's choice wins


class _StopsAtAProposal(_StuckAtTheStart):
    """A backend estimated fastest whose driver ends a chain at an error the log density raises
    at a proposed point, as PyMC's NUTS did at numba's OverflowError in a matrix exponential;
    with ``drivers``, one candidate a driver, and only the first stops."""

    def __init__(self, name: str = "stopper", drivers: tuple[str, ...] = ()):
        super().__init__(name, on_jax=False)
        self.drivers, self.ran = drivers, []

    def candidates(self, profile, devices):
        if not self.drivers:
            return super().candidates(profile, devices)
        return [pymc_accel.Candidate(self.name, "cpu", "float64", (("driver", d),))
                for d in self.drivers]

    def estimate(self, candidate, profile, machine):
        from dataclasses import replace

        estimate = super().estimate(candidate, profile, machine)
        later = self.drivers.index(candidate.option("driver")) if self.drivers else 0
        return replace(estimate, fixed_seconds=pymc_accel.Figure(1.0 + later))

    def sample(self, model, candidate, request):
        self.ran.append(candidate.label)
        if self.drivers and candidate.option("driver") != self.drivers[0]:
            return pm.sample(model=model, draws=request.draws, tune=request.tune,
                             chains=request.chains, random_seed=request.random_seed,
                             progressbar=False, compute_convergence_checks=False)
        try:
            raise OverflowError("exp overflows")
        except OverflowError as inner:
            raise pymc_accel.SamplerStoppedError("its driver stopped", inner) from inner


def test_an_automatic_run_whose_driver_stopped_at_an_error_runs_the_next_candidate(
        monkeypatch, ledger):
    """The user sweep's Markov chain of 60 matrix exponentials: with the JAX samplers left out,
    auto chose PyMC's NUTS, which stopped at numba's OverflowError far out in the tails, and the
    run failed where nutpie samples the model."""
    from pymc_accel import history

    stopper, truth = _StopsAtAProposal(), conjugate_normal()
    _with_backend(monkeypatch, stopper)
    idata = pymc_accel.sample(model=truth.model, **FAST)
    report = SelectionReport.from_idata(idata)
    assert stopper.ran == ["stopper[cpu,float64]"]
    assert not report.chosen.startswith("stopper")  # the selector's next choice
    assert f"stopper[cpu,float64] stopped (OverflowError in the log density at a proposed " \
           f"point); ran {report.chosen} instead" in report.notes
    refused = next(r for r in report.rows if r.label == "stopper[cpu,float64]")
    assert refused.status == "refused" and "raised OverflowError at a point" in refused.reason
    mu = idata.posterior["mu"].values  # within four Monte Carlo errors of the known mean
    assert abs(mu.mean() - truth.post_mean) < 4 * truth.post_sd / np.sqrt(100)
    # the run history keeps the stop: the next selection leaves the sampler out before it runs
    profile = pymc_accel.profile_model(truth.model)
    assert history.stopped_at(profile, pymc_accel.Candidate("stopper", "cpu", "float64"))
    again = SelectionReport.from_idata(pymc_accel.sample(model=truth.model, **FAST))
    assert stopper.ran == ["stopper[cpu,float64]"] and again.candidate.backend != "stopper"
    assert "stopped at an error the log density raised" in next(
        r for r in again.rows if r.label == "stopper[cpu,float64]").reason
    # named by the user, it runs, and its error is theirs to read
    with pytest.raises(pymc_accel.SamplerStoppedError, match="its driver stopped"):
        pymc_accel.sample(model=truth.model, nuts_sampler="stopper", **FAST)
    assert stopper.ran == ["stopper[cpu,float64]"] * 2


def test_a_named_backend_whose_driver_the_selector_picked_goes_on_with_the_other_driver(
        monkeypatch):
    """nuts_sampler='numba' leaves the driver to the selector, whose choice stopped: the run
    goes on with the backend the user named, on the other driver; driver= named is the
    user's to keep, and its error is raised."""
    stopper = _StopsAtAProposal("stopper", drivers=("pymc", "nutpie"))
    _with_backend(monkeypatch, stopper)
    model = conjugate_normal().model
    report = SelectionReport.from_idata(pymc_accel.sample(model=model, nuts_sampler="stopper",
                                                          **FAST))
    assert stopper.ran == ["stopper[cpu,float64,driver=pymc]",
                           "stopper[cpu,float64,driver=nutpie]"]
    assert report.chosen == "stopper[cpu,float64,driver=nutpie]"
    with pytest.raises(pymc_accel.SamplerStoppedError):
        pymc_accel.sample(model=model, nuts_sampler="stopper", driver="pymc", **FAST)
    assert len(stopper.ran) == 3
