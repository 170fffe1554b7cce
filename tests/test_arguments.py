"""pm.sample arguments only some samplers honour: step methods, callbacks, kept tuning draws,
init, a compile mode, PyMC's NUTS option names and options meant for another sampler."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytest

import pymc_accel
from pymc_accel import arguments
from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.backends.deer_mala import DeerMalaBackend
from pymc_accel.backends.numba_cpu import NumbaBackend
from pymc_accel.backends.numpyro_nuts import NumpyroBackend
from pymc_accel.devices import Devices
from pymc_accel.errors import NoCandidateError
from pymc_accel.models import conjugate_normal, eight_schools
from pymc_accel.registry import build_registry
from pymc_accel.selection import select

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")
NUTPIE = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
PYMC = Candidate("numba", "cpu", "float64", (("driver", "pymc"),))
FAST = dict(draws=100, tune=100, chains=2, progressbar=False, random_seed=5,
            compute_convergence_checks=False)


def test_given_lists_the_arguments_set_away_from_pm_sample_defaults():
    assert arguments.given(SampleRequest()) == ()
    request = SampleRequest(discard_tuned_samples=False,
                            pymc_kwargs={"step": object(), "callback": print, "init": "adapt_diag"})
    assert arguments.given(request) == ("step", "callback", "discard_tuned_samples", "init")
    assert arguments.given(SampleRequest(pymc_kwargs={"init": "auto", "step": None})) == ()


def test_only_pymc_s_driver_honours_step_and_callback_and_a_silent_backend_honours_nothing():
    numba = NumbaBackend()
    assert all(arguments.takes_argument(numba, a, PYMC) for a in arguments.ARGUMENTS
               if a not in arguments.COMPILE_MODES)
    assert not arguments.takes_argument(numba, "step", NUTPIE)
    assert not arguments.takes_argument(numba, "callback", NUTPIE)
    assert arguments.takes_argument(numba, "discard_tuned_samples", NUTPIE)

    class Silent:
        pass

    class Raising:
        def takes_argument(self, name, candidate):
            raise RuntimeError("plugin bug")

    assert not arguments.takes_argument(Silent(), "step", NUTPIE)
    assert not arguments.takes_argument(Raising(), "discard_tuned_samples", NUTPIE)


@pytest.mark.parametrize("given", [("step",), ("callback",), ("discard_tuned_samples",)])
def test_auto_refuses_the_samplers_that_would_drop_a_required_argument(given):
    report = select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
                    chains=2, arguments=given)
    takes = NumbaBackend().takes_argument(given[0], NUTPIE)
    assert report.chosen.startswith("numba") and ("driver=pymc" in report.chosen or takes)
    refused = [r for r in report.rows if r.status == "refused" and given[0] in r.reason]
    assert {r.backend for r in refused} >= {"numpyro", "deer_mala"}
    assert all("does not honour" in r.reason and "nuts_sampler='numba'" in r.reason
               for r in refused)


def test_a_named_sampler_that_cannot_run_a_step_method_says_what_to_do():
    with pytest.raises(NoCandidateError, match=r"step=.*driver='pymc'"):
        pymc_accel.sample(model=eight_schools(), nuts_sampler="numpyro", step=pm.Metropolis(
            model=eight_schools()), **FAST)


def test_auto_with_a_metropolis_step_runs_it_and_finds_the_known_posterior():
    """With step=pm.Metropolis() auto had chosen numba, which passed nuts={...} that pm.sample
    refused ("Invalid key found in step_kwargs"); the JAX backends ran NUTS instead."""
    case = conjugate_normal()
    with case.model:
        step = pm.Metropolis()
    idata = pymc_accel.sample(model=case.model, step=step, draws=1000, tune=500, chains=2,
                              random_seed=3, progressbar=False)
    assert "driver=pymc" in idata.attrs["pymc_accel_candidate"]
    assert "accept" in idata.sample_stats and "scaling" in idata.sample_stats  # Metropolis's
    mean = float(idata.posterior["mu"].mean())
    ess = float(az.ess(idata, var_names=["mu"])["mu"])
    assert abs(mean - case.post_mean) < 4 * case.post_sd / np.sqrt(ess)


def test_auto_calls_the_callback_after_every_draw_and_keeps_tuning_draws_when_asked():
    calls = []
    idata = pymc_accel.sample(model=conjugate_normal().model, callback=lambda **kw: calls.append(1),
                              discard_tuned_samples=False, **FAST)
    assert len(calls) == 2 * (100 + 100)
    assert "warmup_posterior" in idata.children and idata.warmup_posterior.sizes["draw"] == 100


@pytest.mark.parametrize("pymc_kwargs, family", [
    ({}, None), ({"backend": "numba"}, "numba"),
    ({"compile_kwargs": {"mode": "FAST_RUN"}}, "numba"),
    ({"backend": "jax"}, "jax"), ({"compile_kwargs": {"mode": "JAX"}}, "jax"),
    ({"backend": "c"}, "other"), ({"compile_kwargs": {"mode": "FAST_COMPILE"}}, "other"),
    ({"compile_kwargs": {"gradient_backend": "jax"}}, None),
])
def test_a_compile_mode_is_read_by_the_linker_it_compiles_with(pymc_kwargs, family):
    assert arguments.compile_mode_linker(pymc_kwargs) == family
    named = () if family is None else (f"compile_mode:{family}",)
    assert arguments.given(SampleRequest(pymc_kwargs=pymc_kwargs)) == named


def test_a_compile_mode_given_twice_or_unknown_is_refused_before_any_selection():
    with pytest.raises(ValueError, match="backend= or compile_kwargs"):
        pymc_accel.sample(model=eight_schools(), backend="numba",
                          compile_kwargs={"mode": "NUMBA"}, **FAST)
    with pytest.raises(ValueError, match="'numba', 'jax' or 'c'"):
        pymc_accel.sample(model=eight_schools(), backend="numbaa", **FAST)


def test_a_compile_mode_is_honoured_by_the_samplers_that_compile_with_its_linker():
    numba, jax_backends = NumbaBackend(), (NumpyroBackend(), DeerMalaBackend())
    for candidate in (PYMC, NUTPIE):
        assert arguments.takes_argument(numba, "compile_mode:numba", candidate)
        assert not arguments.takes_argument(numba, "compile_mode:jax", candidate)
        assert not arguments.takes_argument(numba, "compile_mode:other", candidate)
    for backend in jax_backends:
        candidate = Candidate(backend.name, "cpu", "float64")
        assert arguments.takes_argument(backend, "compile_mode:jax", candidate)
        assert not arguments.takes_argument(backend, "compile_mode:numba", candidate)
        assert not arguments.takes_argument(backend, "step", candidate)


def test_auto_with_pytensors_c_mode_names_pymcs_own_sampler():
    with pytest.raises(NoCandidateError, match=r"compiles with neither numba nor JAX.*"
                                               r"nuts_sampler='pymc'"):
        select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
               chains=2, arguments=("compile_mode:other",))


def test_a_numba_compile_mode_runs_the_numba_backend_and_finds_the_known_posterior():
    """compile_kwargs={"mode": ...} made the numba backend's pm.sample raise "Can only define
    one of `backend` or `compile_kwargs['mode']`"; backend="numba" was taken for a NUTS
    option no sampler knew."""
    case = conjugate_normal()
    for given in ({"compile_kwargs": {"mode": "NUMBA"}}, {"backend": "numba"}):
        idata = pymc_accel.sample(model=case.model, **{**FAST, "draws": 500, "tune": 300},
                                  **given)
        assert idata.attrs["pymc_accel_candidate"].startswith("numba")
        mean = float(idata.posterior["mu"].mean())
        ess = float(az.ess(idata, var_names=["mu"])["mu"])
        assert abs(mean - case.post_mean) < 4 * case.post_sd / np.sqrt(ess)


def test_a_jax_compile_mode_chooses_a_jax_sampler():
    report = select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
                    chains=2, arguments=("compile_mode:jax",))
    assert report.chosen.startswith(("numpyro", "deer_mala"))
    assert all(r.status == "refused" for r in report.rows if r.backend == "numba")


def test_explain_reads_backend_as_a_compile_mode_where_it_names_no_backend():
    """backend= is select()'s name for nuts_sampler, which explain takes too, and pm.sample's
    for a compile mode: explain(backend="jax") raised UnknownBackendError."""
    common = dict(model=eight_schools(), registry=build_registry(autoload=False),
                  devices=CPU_ONLY, chains=2)
    assert pymc_accel.explain(backend="jax", **common).chosen.startswith(("numpyro", "deer"))
    assert pymc_accel.explain(backend="deer_mala", **common).chosen.startswith("deer_mala")
    with pytest.raises(NoCandidateError, match="compiles with neither numba nor JAX"):
        pymc_accel.explain(nuts_sampler="numpyro", backend="c", **common)


def test_init_ignored_by_the_chosen_sampler_is_warned_about_as_pm_sample_does():
    request = SampleRequest(pymc_kwargs={"init": "adapt_diag"})
    numpyro = Candidate("numpyro", "cpu", "float64")
    with pytest.warns(UserWarning, match="init='adapt_diag' is ignored by numpyro"):
        arguments.warn_ignored(object(), numpyro, request)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arguments.warn_ignored(NumbaBackend(), PYMC, request)  # PyMC's own runs it


def test_pymc_s_max_treedepth_reaches_numpyro_under_its_own_name():
    """nuts={"max_treedepth": 5} (PyMC's name) raised TypeError from inside NumPyro."""
    idata = pymc_accel.sample(model=eight_schools(), nuts_sampler="numpyro",
                              nuts={"max_treedepth": 2}, **FAST)
    assert int(idata.sample_stats["tree_depth"].max()) <= 2


def test_auto_does_not_choose_a_sampler_for_options_it_does_not_take():
    reg = build_registry(autoload=False)
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY, chains=2,
                    options={"max_treedepth": 5})
    deer = [r for r in report.rows if r.backend == "deer_mala" and r.device == "cpu"]
    assert deer and all(r.status == "refused" and "max_treedepth" in r.reason for r in deer)
    with pytest.raises(NoCandidateError, match="does not take max_treedepth"):
        select(eight_schools(), registry=reg, devices=CPU_ONLY, backend="deer_mala",
               options={"max_treedepth": 5})
    # its own options still select it
    named = select(eight_schools(), registry=reg, devices=CPU_ONLY, backend="deer_mala",
                   options={"window": 32})
    assert named.chosen.startswith("deer_mala")


def test_auto_chooses_a_sampler_that_takes_the_options_given():
    """dense_mass (NumPyro's) under auto chose BlackJAX's NUTS, which failed inside BlackJAX;
    nutpie's adaptation chose PyMC's NUTS, which dropped it without a word."""
    report = select(eight_schools(), devices=CPU_ONLY, chains=2, options={"dense_mass": True})
    assert report.chosen.startswith("numpyro[")
    numba = [r for r in report.rows if r.backend == "numba" and r.status != "refused"
             and r.device == "cpu"]
    assert not numba, [r.label for r in numba]
    refused = [r.reason for r in report.rows if r.status == "refused"]
    assert any(r.startswith("numba[cpu,float64,driver=nutpie] does not take dense_mass")
               for r in refused)
    report = select(eight_schools(), devices=CPU_ONLY, chains=2,
                    options={"adaptation": "low_rank"})
    assert any(r.reason.startswith("numba[cpu,float64,driver=pymc] does not take adaptation")
               for r in report.rows if r.status == "refused")
    assert "numpyro" not in report.chosen and "deer" not in report.chosen


def test_a_run_option_no_candidate_has_is_taken_by_the_run():
    """NumPyro's CPU candidates run chain_method='parallel'; pm.sample(nuts_sampler='numpyro')
    takes chain_method='vectorized', which refused NumPyro without a reason."""
    report = select(eight_schools(), backend="numpyro", devices=CPU_ONLY, chains=2,
                    options={"chain_method": "vectorized"})
    assert report.chosen == "numpyro[cpu,float64,chain_method=vectorized]"
    idata = pymc_accel.sample(model=eight_schools(), nuts_sampler="numpyro",
                              nuts={"chain_method": "vectorized"}, **FAST)
    assert idata.attrs["pymc_accel_candidate"] == "numpyro[cpu,float64,chain_method=vectorized]"
    assert idata.posterior.sizes["chain"] == 2
    # an option that picks among candidates still refuses the others
    report = select(eight_schools(), backend="numba", devices=CPU_ONLY, chains=2,
                    options={"driver": "pymc"})
    assert report.chosen == "numba[cpu,float64,driver=pymc]"
    assert [r.reason for r in report.rows if r.status == "refused" and r.precision == "float64"
            ] == ["driver='pymc' was requested"]


def test_a_driver_asked_for_does_not_read_the_other_driver_s_options(monkeypatch):
    """driver='pymc' read nutpie's option list for the nutpie-driven candidate, which imports
    nutpie (and ArviZ with it) in a selection that runs PyMC's NUTS."""
    import sys

    read = []  # the package exports the function of the module's name: the module, by name
    monkeypatch.setitem(sys.modules["pymc_accel.sampler_options"]._BY_SAMPLER, "nutpie",
                        lambda: read.append("nutpie") or frozenset({"adaptation"}))
    for options in ({"driver": "pymc"}, {"driver": "pymc", "step_scale": 0.3}):
        report = select(eight_schools(), backend="numba", devices=CPU_ONLY, chains=2,
                        options=options)
        assert report.chosen == "numba[cpu,float64,driver=pymc]"
        assert ["driver='pymc' was requested"] == [
            r.reason for r in report.rows if r.status == "refused" and r.precision == "float64"]
    assert read == []
    # on the way to the error that nothing runs, the refused driver's list is read: nutpie
    # takes adaptation, so the error does not say that no sampler takes it
    with pytest.raises(NoCandidateError) as raised:
        select(eight_schools(), backend="numba", devices=CPU_ONLY, chains=2,
               options={"driver": "pymc", "adaptation": "low_rank"})
    assert read == ["nutpie"]
    assert "No backend can run this model under these constraints" in str(raised.value)
    assert "does not take adaptation" in str(raised.value)
    with pytest.raises(NoCandidateError, match=r"takes the option\(s\) you gave \(bogus\)"):
        select(eight_schools(), backend="numba", devices=CPU_ONLY, chains=2,
               options={"driver": "pymc", "bogus": 1})
