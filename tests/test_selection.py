from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from pymc_accel.backend import Candidate, Refusal
from pymc_accel.devices import Devices, Gpu
from pymc_accel.errors import (
    DeviceUnavailableError,
    DiscreteVariablesError,
    UnknownBackendError,
)
from pymc_accel.hookspecs import hookimpl
from pymc_accel.models import eight_schools, hierarchical_logistic
from pymc_accel.profile import profile_model
from pymc_accel.registry import build_registry
from pymc_accel.report import SelectionReport
from pymc_accel.selection import select
from tests.figures import hand_made_machine
from tests.models import discrete_model

CPU_ONLY = Devices(cpu_cores=2, jax_installed=True, note="test: no GPU")


def test_report_lists_every_candidate_and_refusal_and_round_trips():
    reg = build_registry(autoload=False)
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    statuses = [r.status for r in report.rows]
    assert statuses.count("chosen") == 1
    assert {r.backend for r in report.rows} == {"numba", "numpyro", "deer_mala"}
    assert any(r.status == "refused" and "no GPU" in r.reason for r in report.rows)
    # float32 of a float64 model is a candidate, vouched for only if it would be chosen
    assert any(r.precision == "float32" and r.status == "accepted" for r in report.rows)
    chosen = next(r for r in report.rows if r.status == "chosen")
    assert report.chosen == chosen.label == report.candidate.label
    # ranked by time per effective draw, not total time (MALA draws are worth fewer)
    ratios = [float(re.search(r"estimated ([0-9.]+)x", r.reason).group(1))
              for r in report.rows if r.status == "accepted"]
    assert ratios and min(ratios) >= 1.0
    again = SelectionReport.from_dict(json.loads(report.to_json()))
    assert again.rows == report.rows and again.chosen == report.chosen
    text = str(report)
    assert chosen.label in text  # labels with [brackets] are not eaten as rich markup
    assert "pymc-accel[gpu]" in text
    # effective draws per draw against nutpie's NUTS: longer-tree NUTS and MALA say theirs
    efficiency = {r.label: r.relative_efficiency for r in report.rows if r.status != "refused"}
    assert efficiency["numba[cpu,float64,driver=nutpie]"] == 1.0
    assert efficiency["numba[cpu,float64,driver=pymc]"] > 1.0
    assert all(v < 1.0 for k, v in efficiency.items() if k.startswith("deer_mala"))
    assert "ESS/draw" in text and "1.16x" in text
    # the ranking's figure is a column: a MALA run estimated to finish sooner than the chosen
    # NUTS run is shown as many times costlier per effective draw
    assert chosen.cost_per_effective_draw == 1.0 and "time/ESS" in text
    deer = [r for r in report.rows if r.backend == "deer_mala" and r.status == "accepted"]
    assert deer and all(r.cost_per_effective_draw > 3.0 for r in deer)
    assert all(r.cost_per_effective_draw is None for r in report.rows if r.status == "refused")


def test_a_centred_hierarchy_is_reported_with_its_fix():
    import pymc as pm

    with pm.Model() as funnel:
        v = pm.Normal("v", 0, 3)
        pm.Normal("x", 0, pm.math.exp(v / 2), shape=9)
    report = select(funnel, registry=build_registry(autoload=False), devices=CPU_ONLY)
    assert any("centred hierarchy" in n and "x" in n and "non-centred" in n for n in report.notes)
    assert "non-centred" in str(report)
    assert not any("centred" in n for n in select(
        eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY).notes)


def test_unknown_backend_names_the_registered_ones():
    with pytest.raises(UnknownBackendError, match="numba, numpyro"):
        select(eight_schools(), backend="stan", registry=build_registry(autoload=False))


def test_gpu_requested_without_gpu_is_a_clear_error():
    with pytest.raises(DeviceUnavailableError, match=r"pymc-accel\[gpu\]"):
        select(eight_schools(), device="gpu", devices=CPU_ONLY,
               registry=build_registry(autoload=False))


def test_gpu_candidates_appear_when_a_gpu_is_present():
    gpu = Devices(cpu_cores=2, gpus=(Gpu(0, "H100", 80 * 2**30),), jax_installed=True)
    report = select(eight_schools(), devices=gpu, registry=build_registry(autoload=False))
    assert any(r.device == "gpu" and r.status != "refused" for r in report.rows)


def test_discrete_model_refused_by_gradient_backends():
    reg = build_registry(autoload=False)
    with pytest.raises(DiscreteVariablesError, match="discrete"):
        select(discrete_model(), backend="numpyro", registry=reg, devices=CPU_ONLY)
    report = select(discrete_model(), registry=reg, devices=CPU_ONLY)
    assert report.chosen == "numba[cpu,float64,driver=pymc]"


def test_explicit_precision_wins():
    report = select(eight_schools(), precision="float32", devices=CPU_ONLY,
                    registry=build_registry(autoload=False))
    assert report.candidate.precision == "float32"
    assert report.candidate.backend == "numpyro"  # numba cannot change a built model's dtype


def test_cost_model_prefers_fast_compile_for_tiny_and_fast_gradient_for_large():
    # the fit machine's figures: calibrated on a loaded machine (the test run's other worker),
    # a call overhead of 5 µs rightly makes PyMC's Python NUTS slower than nutpie on eight
    # schools (it failed a fresh-clone run that way)
    from pymc_accel.machine import MachineFigures

    machine = MachineFigures({"float32": 6e9, "float64": 2e9}, {"float32": 3e10, "float64": 3e10},
                             {"float32": 9e10, "float64": 4.5e10}, cpu_call_seconds=2.5e-6,
                             cpu_cache_bytes=32 * 2**20)
    reg = build_registry(autoload=False)
    tiny = select(eight_schools(), registry=reg, devices=CPU_ONLY, machine=machine, draws=500,
                  tune=500, chains=2)
    large = select(profile=profile_model(hierarchical_logistic(100_000, 10_000, 20).model),
                   registry=reg, devices=CPU_ONLY, machine=machine, draws=500, tune=500, chains=2)
    assert tiny.candidate.option("driver") != "nutpie"
    assert large.candidate.label == "numba[cpu,float64,driver=nutpie]"


class _ExplodingBackend:
    name = "explodes"
    description = "raises everywhere"

    def candidates(self, profile, devices):
        raise RuntimeError("candidates exploded")

    def estimate(self, candidate, profile, machine):
        raise AssertionError

    def sample(self, model, candidate, request):
        raise AssertionError


def test_backend_raising_in_candidates_is_isolated():
    reg = build_registry(autoload=False)
    reg.backends["explodes"] = _ExplodingBackend()
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    assert report.candidate.backend in ("numba", "numpyro")
    assert any("candidates exploded" in r.reason for r in report.rows if r.backend == "explodes")
    assert any(b["name"] == "explodes" for b in report.broken_plugins)


class _SitePolicy:
    @hookimpl
    def pymc_accel_select(self, profile, candidates):
        return next(c for c, _ in candidates if c.backend == "numpyro")


class _BrokenPolicy:
    @hookimpl
    def pymc_accel_select(self, profile, candidates):
        raise RuntimeError("policy exploded")


def test_site_policy_plugin_can_override_and_a_broken_one_cannot_break_selection():
    reg = build_registry(autoload=False)
    reg.plugin_manager.register(_SitePolicy(), name="site")
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    assert report.candidate.backend == "numpyro" and report.chosen_by == "plugin site"
    reg2 = build_registry(autoload=False)
    reg2.plugin_manager.register(_BrokenPolicy(), name="bad")
    report2 = select(eight_schools(), registry=reg2, devices=CPU_ONLY)
    assert report2.chosen_by == "cost model"
    assert any(b["name"] == "bad" and "policy exploded" in b["error"] for b in report2.broken_plugins)
    select(eight_schools(), registry=reg2, devices=CPU_ONLY)
    assert [b.name for b in reg2.broken] == ["bad"]  # once, however often it raises


class _ConfusedPolicy:
    @hookimpl
    def pymc_accel_select(self, profile, candidates):
        return "numpyro"  # a name, not one of the candidates


def test_a_site_policy_answer_that_is_no_candidate_is_reported_not_ignored():
    reg = build_registry(autoload=False)
    reg.plugin_manager.register(_ConfusedPolicy(), name="confused")
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    select(eight_schools(), registry=reg, devices=CPU_ONLY)
    assert report.chosen_by == "cost model"
    (broken,) = [b for b in reg.broken if b.name == "confused"]  # once, however often asked
    assert "returned 'numpyro', which is not one of the candidates" in broken.error


def test_nonsense_run_lengths_are_refused_before_the_model_is_profiled(monkeypatch):
    from pymc_accel import selection

    monkeypatch.setattr(selection, "_cached_profile_and_logp",
                        lambda model: pytest.fail("profiled the model"))
    for bad in (dict(draws=-5), dict(draws=0), dict(draws=10.5), dict(draws=True),
                dict(chains=0), dict(chains=1.5), dict(tune=-1), dict(tune="100")):
        with pytest.raises(ValueError, match="must be an integer of at least"):
            select(eight_schools(), devices=CPU_ONLY, **bad)
    with pytest.raises(ValueError, match="device must be"):
        select(eight_schools(), devices=CPU_ONLY, device="tpu")


def test_run_lengths_may_be_numpy_integers_as_pm_sample_takes_them():
    # draws computed with NumPy (n // 2 of an array's size) were refused as "not an integer"
    report = select(eight_schools(), devices=CPU_ONLY, draws=np.int64(500), tune=np.int32(500),
                    chains=np.int64(2))
    expected = select(eight_schools(), devices=CPU_ONLY, draws=500, tune=500, chains=2)
    assert [r.label for r in report.rows] == [r.label for r in expected.rows]
    assert report.chosen == expected.chosen


def test_explain_takes_pm_samples_names_for_the_backend_and_its_options():
    import pymc_accel

    report = pymc_accel.explain(eight_schools(), nuts_sampler="numpyro",
                                nuts={"chain_method": "vectorized"})
    assert report.chosen == "numpyro[cpu,float64,chain_method=vectorized]"
    with pytest.raises(UnknownBackendError, match=r"select\(\) and explain\(\) cannot estimate"):
        pymc_accel.explain(eight_schools(), nuts_sampler="pymc")


def test_candidate_and_refusal_labels():
    c = Candidate("numba", "cpu", "float64", (("driver", "nutpie"),))
    assert c.label == "numba[cpu,float64,driver=nutpie]" and c.option("driver") == "nutpie"
    assert Refusal("numpyro", "x", device="gpu").label == "numpyro[gpu]"


def test_missing_dependency_names_what_to_install(monkeypatch):
    from pymc_accel.backends import _common
    from pymc_accel.errors import BackendUnavailableError

    real = _common.module_installed
    monkeypatch.setattr(_common, "module_installed", lambda m: m != "numpyro" and real(m))
    with pytest.raises(BackendUnavailableError, match="pip install numpyro"):
        select(eight_schools(), backend="numpyro", devices=CPU_ONLY,
               registry=build_registry(autoload=False))


def test_a_model_is_profiled_once_while_its_variables_and_data_shapes_are_unchanged():
    import numpy as np
    import pymc as pm

    with pm.Model() as model:
        x = pm.Data("x", np.zeros(5))
        y = pm.Data("y", np.zeros(5))
        mu = pm.Normal("mu")
        pm.Normal("obs", mu + x, 1.0, observed=y, shape=x.shape)
    reg = build_registry(autoload=False)
    first = select(model, registry=reg, devices=CPU_ONLY)
    again = select(model, registry=reg, devices=CPU_ONLY)
    assert again.model_profile is first.model_profile  # explain() then sample(): profiled once
    with model:
        pm.set_data({"x": np.zeros(50), "y": np.zeros(50)})
    resized = select(model, registry=reg, devices=CPU_ONLY)
    assert resized.model_profile is not first.model_profile
    assert resized.model_profile.n_observed == 50
    with model:
        pm.Normal("extra")
    grown = select(model, registry=reg, devices=CPU_ONLY)
    assert grown.model_profile.n_free == 2


def test_a_model_built_again_is_not_profiled_again(monkeypatch):
    from pymc_accel import selection

    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    first = selection.cached_profile(hierarchical_logistic(300, 15, 2).model)
    calls = []
    real = selection.profile_and_logp
    monkeypatch.setattr(selection, "profile_and_logp", lambda m: calls.append(m) or real(m))
    again = selection.cached_profile(hierarchical_logistic(300, 15, 2).model)
    assert not calls
    assert again.census == first.census and again.n_free == first.n_free
    assert "reused" in again.note
    third = selection.cached_profile(hierarchical_logistic(300, 15, 2).model)
    assert third.note.count("reused") == 1  # said once, however often it is reused
    selection.cached_profile(hierarchical_logistic(301, 15, 2).model)  # another structure
    assert len(calls) == 1


def test_the_report_says_when_a_profile_was_reused(monkeypatch):
    """The README promises it; the note was kept on the profile and left out of the report."""
    from pymc_accel import selection

    monkeypatch.setattr(selection, "_BY_STRUCTURE", {})
    first = select(eight_schools(), devices=CPU_ONLY)
    again = select(eight_schools(), devices=CPU_ONLY)
    assert "reused" not in first.to_json()
    assert "reused: a model of the same structure" in again.profile["profile note"]
    assert "reused" in str(again)


class _FixedCost:
    """A backend whose estimate is ``fixed`` seconds and nothing else."""

    description = "test: a fixed estimate"

    def __init__(self, name, fixed):
        self.name, self.fixed = name, fixed

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", profile.float_dtype)]

    def estimate(self, candidate, profile, machine):
        from pymc_accel.backend import Estimate, Figure

        return Estimate(seconds_per_gradient=Figure(0.0), gradients_per_draw=Figure(1.0),
                        fixed_seconds=Figure(self.fixed))

    def sample(self, model, candidate, request):
        raise AssertionError


@pytest.mark.parametrize("rival, close", [(1.1, True), (1.24, True), (1.3, False), (2.0, False)])
def test_a_close_call_is_reported_with_how_to_settle_it(rival, close):
    reg = build_registry(autoload=False, builtins=False)
    reg.backends["fast"] = _FixedCost("fast", 1.0)
    reg.backends["rival"] = _FixedCost("rival", rival)
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    assert report.chosen == "fast[cpu,float64]"
    notes = [n for n in report.notes if n.startswith("close call")]
    if close:
        assert len(notes) == 1 and f"at {rival:.2f}x" in notes[0]
        assert "rival[cpu,float64]" in notes[0] and "measure=True" in notes[0]
        assert "close call" in str(report)
    else:
        assert not notes


def test_per_chain_initvals_refuse_the_samplers_that_take_one_dict():
    """With initvals=[{...}, {...}] auto had chosen nutpie, which raised NotImplementedError."""
    reg = build_registry(autoload=False)
    per_chain = [{"mu": 0.1}, {"mu": -0.1}]
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY, chains=2,
                    initvals=per_chain)
    refused = [r for r in report.rows if r.status == "refused" and "per chain" in r.reason]
    assert [r.backend for r in refused] == ["numba"] and "driver=nutpie" in refused[0].reason
    assert "nutpie" not in report.chosen
    pymc = next(r for r in report.rows if "driver=pymc" in r.label)
    assert pymc.status != "refused"
    # one dict: nutpie is a candidate again
    one = select(eight_schools(), registry=reg, devices=CPU_ONLY, chains=2, initvals=per_chain[0])
    assert any("nutpie" in r.label and r.status != "refused" for r in one.rows)


def test_a_backend_says_whether_it_takes_per_chain_initvals_and_one_that_does_not_say_does():
    from pymc_accel.backends.numba_cpu import NumbaBackend
    from pymc_accel.selection import _takes_per_chain_initvals

    numba = NumbaBackend()
    assert not numba.takes_per_chain_initvals(Candidate("numba", "cpu", "float64", (("driver", "nutpie"),)))
    assert numba.takes_per_chain_initvals(Candidate("numba", "cpu", "float64", (("driver", "pymc"),)))

    class Silent:
        pass

    class Broken:
        def takes_per_chain_initvals(self, candidate):
            raise RuntimeError("plugin bug")

    any_candidate = Candidate("x", "cpu", "float64")
    assert _takes_per_chain_initvals(Silent(), any_candidate)
    assert _takes_per_chain_initvals(Broken(), any_candidate)


def test_a_refused_candidates_label_keeps_its_options():
    """Both numba drivers were labelled numba[cpu,float64] among the refusals."""
    reg = build_registry(autoload=False)
    report = select(eight_schools(), backend="numba", registry=reg, devices=CPU_ONLY,
                    options={"driver": "pymc"}, chains=2)
    refused = [r.label for r in report.rows if r.status == "refused"]
    assert "numba[cpu,float64,driver=nutpie]" in refused
    assert Refusal.of(Candidate("numba", "cpu", "float64", (("driver", "pymc"),)), "x").label == \
        "numba[cpu,float64,driver=pymc]"


def test_a_bad_parallel_scans_policy_is_one_error_not_a_refusal_per_row(monkeypatch):
    """Every JAX row was refused with the ValueError; a model without a scan ignored it."""
    monkeypatch.setenv("PYMC_ACCEL_PARALLEL_SCANS", "maybe")
    with pytest.raises(ValueError, match="PYMC_ACCEL_PARALLEL_SCANS='maybe'"):
        select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY)


def test_a_discrete_model_forced_to_float32_is_told_to_drop_the_precision():
    """The error said to use numba with PyMC's driver, which float32 had ruled out."""
    with pytest.raises(DiscreteVariablesError, match=r"driver in the model's precision \(drop "
                                                     r"precision='float32'\)"):
        select(discrete_model(), precision="float32", registry=build_registry(autoload=False),
               devices=CPU_ONLY)


def test_a_measured_figure_mostly_modelled_says_so_in_the_report():
    """A 9.79 ms/grad figure of which 96% was the modelled driver read "s/grad measured"."""
    from pymc_accel import costmodel
    from pymc_accel.machine import machine_figures

    profile = profile_model(eight_schools())
    grad = costmodel.measured_cpu_gradient_seconds(1e-9, profile, machine_figures(),
                                                   "float64", costmodel.JAX_CPU)
    assert grad.source == "measured" and grad.measured_share < 0.5
    assert "µs timed" in grad.note and "of driver (modelled)" in grad.note


def test_an_option_no_sampler_takes_leads_the_error():
    """The line to act on was buried under the GPU and float32 refusals, with no headline."""
    from pymc_accel.errors import NoCandidateError

    with pytest.raises(NoCandidateError, match=r"^No sampler that could run here takes the "
                                               r"option\(s\) you gave \(bogus\)"):
        select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
               options={"bogus": 1})


def test_an_option_value_its_sampler_refuses_leads_the_error_not_the_options_name():
    """jacobian="bogus" under auto said no sampler takes jacobian (DEER-MALA does), and the
    sampler's own word on the value was a KeyError in a list of twenty refusals."""
    from pymc_accel.errors import NoCandidateError

    with pytest.raises(NoCandidateError) as info:
        select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
               options={"method": "deer", "jacobian": "bogus"})
    assert str(info.value).startswith(
        "The sampler(s) that take the options you gave refused their values: deer_mala: "
        "jacobian must be one of 'full', 'diag', 'stoch_diag', not 'bogus'")


def test_no_gpu_refusals_come_after_the_others():
    """With no GPU, the GPU rows led the list, above the line to act on."""
    from pymc_accel.errors import NoCandidateError

    with pytest.raises(NoCandidateError) as info:
        select(eight_schools(), registry=build_registry(autoload=False), devices=CPU_ONLY,
               backend="numpyro", arguments=("step",))
    lines = [line for line in str(info.value).splitlines() if line.startswith("  - ")]
    gpu = [i for i, line in enumerate(lines) if "no GPU visible" in line]
    assert gpu and lines[0].startswith("  - numpyro[cpu") and min(gpu) > max(
        i for i, line in enumerate(lines) if "no GPU visible" not in line)


class _Garbage(_FixedCost):
    """A plugin's backend that answers nonsense."""

    def __init__(self, name, answer):
        super().__init__(name, 1.0)
        self.answer = answer

    def candidates(self, profile, devices):
        if self.answer == "raise":
            raise ValueError("candidates boom")
        if self.answer in ("negative", "nan"):
            return super().candidates(profile, devices)
        return self.answer

    def estimate(self, candidate, profile, machine):
        from pymc_accel.backend import Estimate, Figure

        value = {"negative": -5.0, "nan": float("nan")}[self.answer]
        return Estimate(seconds_per_gradient=Figure(0.0), gradients_per_draw=Figure(1.0),
                        fixed_seconds=Figure(value))


@pytest.mark.parametrize("answer", ["not a list", [42, None], "negative", "nan"])
def test_a_plugin_answering_nonsense_is_refused_and_auto_still_chooses(answer):
    """candidates() returning a str broke explain and auto for every backend (AttributeError
    in selection); an estimate of -5 s won auto, a NaN made the order undefined."""
    reg = build_registry(autoload=False, builtins=False)
    reg.backends["fast"] = _FixedCost("fast", 2.0)
    reg.backends["bad"] = _Garbage("bad", answer)
    report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    assert report.chosen == "fast[cpu,float64]"
    assert any(r.backend == "bad" and r.status == "refused" for r in report.rows)
    assert [b.name for b in reg.broken] == ["bad"]


def test_a_broken_backend_is_listed_once_however_many_selections_meet_it():
    """The report's broken_plugins grew by one a selection (1, 2, 3, 4)."""
    reg = build_registry(autoload=False, builtins=False)
    reg.backends["fast"] = _FixedCost("fast", 2.0)
    reg.backends["bad"] = _Garbage("bad", "raise")
    for _ in range(3):
        report = select(eight_schools(), registry=reg, devices=CPU_ONLY)
    assert len(report.broken_plugins) == 1


class _FakeNuts:
    """A NUTS sampler for the runner-up trial: its estimate is ``fixed`` seconds (sampling
    nearly free, so a run's wall time corrects nothing), and its draws mix as an AR(1) chain of
    coefficient ``rho``."""

    description = "a NUTS sampler for selection tests"

    def __init__(self, name: str, fixed: float, rho: float, efficiency: float = 1.0):
        self.name, self.fixed, self.rho, self.efficiency = name, fixed, rho, efficiency
        self.runs = 0

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", "float64")]

    def estimate(self, candidate, profile, machine):
        from pymc_accel.backend import Estimate, Figure

        from pymc_accel.costmodel import nuts_gradients_per_draw

        self.steps = nuts_gradients_per_draw(profile).value  # its runs take the modelled trees
        return Estimate(Figure(1e-7), Figure(self.steps), Figure(self.fixed),
                        relative_efficiency=Figure(self.efficiency), chain_parallelism=2,
                        trajectory_scale=1.0)

    def sample(self, model, candidate, request):
        import arviz as az
        import numpy as np

        self.runs += 1
        if getattr(self, "fails", False):
            raise RuntimeError(f"{self.name} cannot run this model")
        rng = np.random.default_rng(self.runs)
        noise = rng.standard_normal((request.chains, request.draws))
        x = noise.copy()
        for t in range(1, request.draws):
            x[:, t] = self.rho * x[:, t - 1] + np.sqrt(1 - self.rho**2) * noise[:, t]
        shape = (request.chains, request.draws)
        return az.from_dict({"posterior": {"mu": x},
                             "sample_stats": {"n_steps": np.full(shape, self.steps),
                                              "diverging": np.zeros(shape, bool)}})


class TreesNuts(_FakeNuts):
    """A NUTS sampler whose adaptation takes ``scale`` times nutpie's modelled trees for
    ``scale`` times its effective draws (PyMC's NUTS: 1.16), and whose runs take
    ``run_trees`` times the trees modelled for it."""

    def __init__(self, name: str, fixed: float, scale: float, run_trees: float = 1.0):
        super().__init__(name, fixed, 0.0, scale)
        self.scale, self.run_trees = scale, run_trees

    def estimate(self, candidate, profile, machine):
        from pymc_accel.backend import Figure

        estimate = super().estimate(candidate, profile, machine)
        self.steps = estimate.gradients_per_draw.value * self.scale
        return replace(estimate, gradients_per_draw=Figure(self.steps),
                       trajectory_scale=self.scale)

    def sample(self, model, candidate, request):
        modelled, self.steps = self.steps, self.steps * self.run_trees
        try:
            return super().sample(model, candidate, request)
        finally:
            self.steps = modelled


def _leader_and_rival_that_overtakes_it():
    """censored_6 and weibull_5 (2026-11-30) in miniature: the leader's run takes half the
    trees modelled, so its fixed seconds buy fewer effective draws; the rival, another
    adaptation, is lent those trees only weighed with its modelled ones, and leads the second
    selection, a close call on modelled effective draws. Its run shows the leader the faster."""
    leader, rival = TreesNuts("leader", 10.0, 1.0, run_trees=0.5), TreesNuts("rival", 14.0, 1.2)
    reg = build_registry(autoload=False, builtins=False)
    for backend in (leader, rival):
        reg.backends[backend.name], reg.origins[backend.name] = backend, "test"
    return reg, leader, rival


#: The rival's modelled effective draws against the leader's: another adaptation, whose
#: effective draws the leader's runs do not show.
RIVAL_EFFICIENCY = 0.95


def _two_nuts(leader_rho: float, rival_fixed: float, same_adaptation: bool = False):
    """A leader and a rival whose estimates are ``rival_fixed / 10`` times the leader's; the
    rival's adaptation is another than the leader's unless ``same_adaptation``."""
    reg = build_registry(autoload=False, builtins=False)
    efficiency = 1.0 if same_adaptation else RIVAL_EFFICIENCY
    leader = _FakeNuts("leader", 10.0, leader_rho)
    rival = _FakeNuts("rival", rival_fixed * efficiency, 0.0, efficiency)
    for backend in (leader, rival):
        reg.backends[backend.name] = backend
        reg.origins[backend.name] = "test"
    return reg, leader, rival


def _auto(reg):
    import pymc_accel
    from pymc_accel.models import conjugate_normal
    from pymc_accel.testing.suite import process_registry

    with process_registry(reg):
        idata = pymc_accel.sample(model=conjugate_normal().model, nuts_sampler="auto", draws=500,
                                  tune=500, chains=2, random_seed=1, progressbar=False,
                                  quiet=True, compute_convergence_checks=False)
    return SelectionReport.from_idata(idata)


def test_a_close_calls_runner_up_runs_once_and_then_the_observed_faster_one(ledger):
    """The zoo's linear GLM: nutpie estimated 1.2x faster per effective draw than NumPyro,
    chosen in every run, while NumPyro got 1.5x its effective draws and was the faster. The
    leader runs first; the runner-up, a close call that never ran, runs once; then the one
    whose observed effective draws make it faster runs."""
    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=11.0)  # rival 1.1x the leader
    first = _auto(reg)
    assert first.candidate.backend == "leader" and first.chosen_by == "cost model"
    second = _auto(reg)
    assert second.candidate.backend == "rival"
    assert second.chosen_by == "cost model, trying the runner-up once"
    assert any(n.startswith("trying the runner-up once: rival") for n in second.notes)
    rows = {r.backend: r for r in second.rows}
    assert rows["rival"].reason.startswith("tried once: estimated 1.10x")
    assert rows["leader"].reason.startswith("lowest estimated time per effective draw")
    third = _auto(reg)  # the rival's draws are independent, the leader's a quarter as many
    assert third.candidate.backend == "rival" and third.chosen_by == "cost model"
    assert (leader.runs, rival.runs) == (1, 2)
    assert all("as observed" in r.reason for r in third.rows)  # both ranked on their runs


def test_a_move_to_a_sampler_that_has_not_run_the_model_says_it_records_its_draws(ledger):
    """censored_6 (2026-11-30): nutpie's first run moved the second selection to PyMC's NUTS,
    a close call on modelled effective draws; the report says that run records them."""
    reg, leader, rival = _leader_and_rival_that_overtakes_it()
    first = _auto(reg)
    assert first.candidate.backend == "leader"
    assert not any("recorded its effective draws" in n for n in first.notes)
    second = _auto(reg)
    assert second.candidate.backend == "rival" and second.chosen_by == "cost model"
    note = next(n for n in second.notes if n.startswith("close call"))
    assert ("leader[cpu,float64] has run this model and recorded its effective draws, "
            "rival[cpu,float64] has not" in note)
    third = _auto(reg)  # both observed: the leader again, and nothing left modelled to say
    assert third.candidate.backend == "leader" and (leader.runs, rival.runs) == (2, 1)
    assert not any("has not, and its effective draws" in n for n in third.notes)


def test_the_runner_up_is_not_tried_when_the_leader_is_the_faster_one(ledger):
    reg, leader, rival = _two_nuts(leader_rho=0.0, rival_fixed=11.0)
    for _ in range(3):
        _auto(reg)
    # tried once, found no faster (the same draws, a longer estimate), never again
    assert (leader.runs, rival.runs) == (2, 1)


def test_a_runner_up_whose_adaptation_has_run_is_not_tried(ledger):
    """nutpie's sampler on a JAX gradient after nutpie's own runs (the demo, 2026-11-29): the
    leader's recorded effective draws are credited to a rival with its adaptation, so a trial
    would show nothing new."""
    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=11.0, same_adaptation=True)
    reports = [_auto(reg) for _ in range(3)]
    assert (leader.runs, rival.runs) == (3, 0)
    assert all(r.chosen_by == "cost model" for r in reports)
    rival_row = next(r for r in reports[-1].rows if r.backend == "rival")
    assert "as observed for its adaptation (runs of leader" in rival_row.reason


def test_the_runner_up_is_tried_only_in_a_close_call_and_can_be_switched_off(ledger, monkeypatch):
    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=14.0)  # 1.4x: not close
    for _ in range(2):
        _auto(reg)
    assert (leader.runs, rival.runs) == (2, 0)
    monkeypatch.setenv("PYMC_ACCEL_TRY_RUNNER_UP", "off")
    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=11.0)
    for _ in range(2):
        _auto(reg)
    assert rival.runs == 0


def test_without_the_run_history_the_leader_always_runs(monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_HISTORY", "off")
    reg, leader, rival = _two_nuts(leader_rho=0.6, rival_fixed=11.0)
    for _ in range(2):
        assert _auto(reg).chosen_by == "cost model"
    assert rival.runs == 0


def test_one_jax_cpu_device_is_a_note_naming_the_fix(monkeypatch):
    """JAX started before pymc-accel has one CPU device: the report says the JAX samplers'
    chains are priced (and will run) in turn, and how to give JAX a device a chain."""
    from pymc_accel import selection
    from pymc_accel.backends import numpyro_nuts

    monkeypatch.setattr(numpyro_nuts, "cpu_cores", lambda: 2)
    for count, noted in ((1, True), (4, False)):
        monkeypatch.setattr(numpyro_nuts, "jax_cpu_devices", lambda count=count: count)
        monkeypatch.setattr(selection, "jax_cpu_devices", lambda count=count: count)
        report = select(eight_schools(), registry=build_registry(autoload=False),
                        devices=CPU_ONLY, chains=2)
        notes = [n for n in report.notes if "CPU device" in n]
        assert bool(notes) is noted
        if noted:
            assert "numpyro" in notes[0] and "numba" not in notes[0]
            assert "xla_force_host_platform_device_count=2" in notes[0]


class _TunedByStan:
    """A NUTS backend whose early tuning is priced as NumPyro's (by the scale spread where it
    was evaluated) at ``per_gradient`` seconds a gradient (``measured``: what ``measure=True``
    times), or, with ``fixed``, a rival whose run costs that many seconds."""

    description = "selection tests: early tuning priced by the scale spread"

    def __init__(self, name: str, fixed: float | None = None, per_gradient: float = 1e-4,
                 measured: float | None = None):
        self.name, self.fixed = name, fixed
        self.per_gradient, self.measured = per_gradient, measured
        if measured is None:
            self.measure = None  # a backend that cannot be timed

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", "float64")]

    def estimate(self, candidate, profile, machine):
        from pymc_accel import costmodel
        from pymc_accel.backend import Estimate, Figure

        if self.fixed is not None:  # the rival
            return Estimate(Figure(1e-9), Figure(5.0), Figure(self.fixed), chain_parallelism=2)
        return Estimate(Figure(self.per_gradient), Figure(5.0), Figure(0.0), chain_parallelism=2,
                        extra_gradients=costmodel.stan_tuning_extra_gradients(profile))

    def measure(self, candidate, model, profile, machine, budget_seconds):
        from pymc_accel.backend import Figure

        modelled = self.estimate(candidate, profile, machine)
        return replace(modelled, seconds_per_gradient=Figure(self.measured, "measured"))


#: Machine figures whose start-up pace is 1: the rival's fixed seconds are modelled, so the
#: live machine's pace (its Python loop timed, slower under load) moved them against the
#: sampler's tuning, and the leader with them.
PACE_ONE = hand_made_machine()


def _stan_and_rival(rival_seconds: float, **stan):
    reg = build_registry(autoload=False, builtins=False)
    for backend in (_TunedByStan("stan", **stan), _TunedByStan("rival", rival_seconds)):
        reg.backends[backend.name] = backend
        reg.origins[backend.name] = "test"
    return reg


def _two_scales(narrow_sd: float):
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("wide", 0, 1, shape=3)
        pm.Normal("narrow", 0, narrow_sd, shape=2)
    return model


def _evaluations_counted(monkeypatch, module, name: str):
    """``module.name`` counted where it is evaluated (not read from the store), as a list that
    grows, with the process's store emptied before and after."""
    from pymc_accel import check_store

    check_store.forget()
    evaluated = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: evaluated.append(1) or real(*a, **k))
    yield evaluated
    check_store.forget()


@pytest.fixture
def spreads_counted(monkeypatch):
    """The scale spreads evaluated (not read from the store), as a list that grows."""
    from pymc_accel import curvature

    yield from _evaluations_counted(monkeypatch, curvature, "scale_spread")


def test_the_scale_spread_is_evaluated_where_it_could_change_the_choice(spreads_counted):
    """1,000 + 1,000 draws of 5 gradients at 0.1 ms: 1 s of sampling, and an early tuning of
    450 gradients at spread 1 (0.045 s) to 45,000 at spread 100 (4.5 s). Against a 3 s rival
    the spread decides: the spread-100 model's 45,000 lose to it. Without the spread (the
    dimension's law gives none at d = 5) the sampler would have been chosen on both."""
    reg = _stan_and_rival(3.0)
    alike = select(_two_scales(1.0), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2)
    assert alike.candidate.backend == "stan"
    assert alike.profile["scale spread"].startswith("1 ")
    assert "scale spread 1 " in alike.estimate.extra_gradients.note
    spread = select(_two_scales(0.01), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2)
    assert spread.candidate.backend == "rival" and spread.profile["scale spread"].startswith("100")
    assert len(spreads_counted) == 2
    # the same model, data and start again: the kept spread is read, not evaluated
    again = select(_two_scales(0.01), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2)
    assert again.candidate.backend == "rival" and len(spreads_counted) == 2


class _TunedByStanInBothPrecisions(_TunedByStan):
    """:class:`_TunedByStan` in float64 and, at half the seconds a gradient, float32."""

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", "float64"), Candidate(self.name, "cpu", "float32")]

    def estimate(self, candidate, profile, machine):
        estimate = super().estimate(candidate, profile, machine)
        if candidate.precision == "float32":
            half = replace(estimate.seconds_per_gradient, value=self.per_gradient / 2)
            estimate = replace(estimate, seconds_per_gradient=half)
        return estimate


def test_the_scale_spread_and_the_float32_check_share_one_initial_point(spreads_counted,
                                                                        monkeypatch):
    """Both start from the model's initial point: a selection that evaluates the spread and
    then checks float32 evaluates that point once (7-12 ms a second time on ordinal_9)."""
    from pymc_accel import graph_building, precision

    points = []
    real = graph_building.initial_point
    counted = lambda *a, **k: points.append(1) or real(*a, **k)  # noqa: E731
    monkeypatch.setattr(graph_building, "initial_point", counted)
    monkeypatch.setattr(precision, "initial_point", counted)
    reg = build_registry(autoload=False, builtins=False)
    for backend in (_TunedByStanInBothPrecisions("stan"), _TunedByStan("rival", 1.0)):
        reg.backends[backend.name] = backend
        reg.origins[backend.name] = "test"
    report = select(_two_scales(1.0), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2)
    assert report.candidate == Candidate("stan", "cpu", "float32")
    assert len(spreads_counted) == 1 and report.precision_check is not None
    assert report.precision_check["safe"] and len(points) == 1


def test_the_scale_spread_is_not_evaluated_where_the_leader_leads_whatever_it_is(
        spreads_counted):
    """Against a 30 s rival the sampler leads at any spread up to 100 (5.5 s); against a 0.5 s
    one it trails at spread 1: either way the spread could not change the choice."""
    for rival, leader in ((30.0, "stan"), (0.5, "rival")):
        report = select(_two_scales(0.01), registry=_stan_and_rival(rival), devices=CPU_ONLY,
                        machine=PACE_ONE, chains=2)
        assert report.candidate.backend == leader and "scale spread" not in report.profile
    assert spreads_counted == []


def test_measured_mode_evaluates_the_scale_spread_where_a_timed_gradient_makes_it_matter(
        spreads_counted):
    """Modelled at 1 ms a gradient the sampler trails a 3 s rival at any spread, so the
    spread is not evaluated before measuring; timed at 0.1 ms it leads at spread 1 and trails
    at 100. The spread, evaluated then, gives the rival the spread-100 model."""
    reg = _stan_and_rival(3.0, per_gradient=1e-3, measured=1e-4)
    modelled = select(_two_scales(0.01), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2)
    assert modelled.candidate.backend == "rival" and spreads_counted == []
    measured = select(_two_scales(0.01), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2,
                      measure=True)
    assert measured.candidate.backend == "rival"
    assert measured.profile["scale spread"].startswith("100") and len(spreads_counted) == 1
    assert select(_two_scales(1.0), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2,
                  measure=True).candidate.backend == "stan"
    assert len(spreads_counted) == 2


def test_measured_mode_evaluates_no_scale_spread_its_budget_has_no_room_for(spreads_counted):
    from pymc_accel import selection

    reg = _stan_and_rival(3.0, per_gradient=1e-3, measured=1e-4)
    tight = selection.SPREAD_SECONDS_AFTER_MEASURING / 2
    report = select(_two_scales(0.01), registry=reg, devices=CPU_ONLY, machine=PACE_ONE,
                    chains=2, measure=True, measure_budget=tight)
    assert spreads_counted == [] and "scale spread" not in report.profile


class _NutsTrees:
    """A NUTS backend whose trees are priced as NumPyro's (:func:`costmodel.nuts_trajectory`,
    the posterior's conditioning included where it was evaluated), at 1e-4 s a gradient."""

    name = "trees"
    description = "selection tests: trees priced by the dimension and the conditioning"

    def candidates(self, profile, devices):
        return [Candidate(self.name, "cpu", "float64")]

    def estimate(self, candidate, profile, machine):
        from pymc_accel import costmodel
        from pymc_accel.backend import Estimate, Figure

        return Estimate(seconds_per_gradient=Figure(1e-4), fixed_seconds=Figure(0.0),
                        chain_parallelism=2, **costmodel.nuts_trajectory(profile, "stan"))


def _trees_and_rival(rival_seconds: float):
    reg = build_registry(autoload=False, builtins=False)
    for backend in (_NutsTrees(), _TunedByStan("rival", rival_seconds)):
        reg.backends[backend.name] = backend
        reg.origins[backend.name] = "test"
    return reg


def _bivariate(rho: float):
    """Two variables of correlation ``rho`` (the spread of their correlation scales
    ``(1 + sqrt((1 + rho) / (1 - rho))) / 2``), no data."""
    import pymc as pm

    with pm.Model() as model:
        pm.MvNormal("x", mu=np.zeros(2), cov=np.array([[1.0, rho], [rho, 1.0]]))
    return model


@pytest.fixture
def conditionings_counted(monkeypatch):
    """The posterior conditionings evaluated (not read from the store), as a list that grows."""
    from pymc_accel import conditioning

    yield from _evaluations_counted(monkeypatch, conditioning, "posterior_conditioning")


def test_the_conditioning_is_evaluated_where_it_could_change_the_choice(
        conditionings_counted):
    """2,000 steps of NumPyro's priced trees at d = 2 (5.6 leapfrogs, 1.1 s a chain) against a
    2.5 s rival: the trees lead at a spread of 1 and trail at 8 (3.1x longer), so the
    conditioning is evaluated. At rho 0.5 (spread 1.37) they keep their lead; at rho 0.999
    (spread 22.9, 8.4x) the rival wins, which the dimension's law alone never chose."""
    reg = _trees_and_rival(2.5)
    mild = select(_bivariate(0.5), registry=reg, devices=CPU_ONLY, machine=PACE_ONE, chains=2)
    assert mild.candidate.backend == "trees"
    assert mild.profile["posterior conditioning"].startswith("1.37 ")
    assert "posterior conditioning" not in mild.estimate.gradients_per_draw.note
    strong = select(_bivariate(0.999), registry=reg, devices=CPU_ONLY, machine=PACE_ONE,
                    chains=2)
    assert strong.candidate.backend == "rival"
    assert strong.profile["posterior conditioning"].startswith("22.9 ")
    trees = next(r for r in strong.rows if r.backend == "trees")
    from pymc_accel import costmodel

    spread = (1 + np.sqrt(1999)) / 2
    assert trees.gradients_per_draw == pytest.approx(
        max(3.0, 3.4 * 2**0.25) * costmodel.NUTS_TRAJECTORY_SCALE["stan"]
        * (spread / costmodel.CONDITIONING_KNEE) ** costmodel.CONDITIONING_EXPONENT["stan"],
        rel=1e-3)
    assert len(conditionings_counted) == 2
    # the same model, data and start again: the kept conditioning is read, not evaluated
    again = select(_bivariate(0.999), registry=reg, devices=CPU_ONLY, machine=PACE_ONE,
                   chains=2)
    assert again.candidate.backend == "rival" and len(conditionings_counted) == 2


def test_the_conditioning_is_not_evaluated_where_the_leader_leads_whatever_it_is(
        conditionings_counted):
    """Against a 30 s rival the trees lead at any spread up to 8; against a 0.5 s
    one they trail at 1: either way the conditioning could not change the choice."""
    for rival, leader in ((30.0, "trees"), (0.5, "rival")):
        report = select(_bivariate(0.999), registry=_trees_and_rival(rival), devices=CPU_ONLY,
                        machine=PACE_ONE, chains=2)
        assert report.candidate.backend == leader
        assert "posterior conditioning" not in report.profile
    assert conditionings_counted == []


def test_measured_mode_evaluates_the_conditioning_only_in_what_its_budget_has_left(
        conditionings_counted, monkeypatch):
    """Measured mode keeps to its budget: the conditioning is evaluated after the timings in
    what is left, and not at all where less than its least is left."""
    from pymc_accel import selection

    reg = _trees_and_rival(2.5)
    tight = selection.CONDITIONING_BUDGET_LEAST / 2
    report = select(_bivariate(0.999), registry=reg, devices=CPU_ONLY, machine=PACE_ONE,
                    chains=2, measure=True, measure_budget=tight)
    assert conditionings_counted == [] and report.candidate.backend == "trees"
    budgets = []
    real = selection._kept_conditioning
    monkeypatch.setattr(selection, "_kept_conditioning",
                        lambda *a, **k: budgets.append(a[4]) or real(*a, **k))
    report = select(_bivariate(0.999), registry=reg, devices=CPU_ONLY, machine=PACE_ONE,
                    chains=2, measure=True, measure_budget=0.5)
    assert report.candidate.backend == "rival" and len(conditionings_counted) == 1
    assert budgets and budgets[0] <= 0.5


def test_a_reused_profiles_log_density_is_built_again_once_for_the_spread_and_conditioning():
    """Where the profile was reused without its graph, the scale spread and the conditioning
    evaluate one log density and gradient built again, not one each."""
    from pymc_accel.profile import profile_and_logp
    from pymc_accel.selection import _KeptCheck

    model = _bivariate(0.5)
    profile, graph = profile_and_logp(model)
    kept = _KeptCheck(model, None)
    assert kept.gradient_graph(profile, graph) is graph  # the profile's, where it has one
    built = kept.gradient_graph(profile, None)
    assert built is not graph and built.grads is not None
    assert kept.gradient_graph(profile, None) is built


def test_the_initial_point_the_profile_evaluated_is_the_selections_start(monkeypatch):
    """A ZeroSumNormal with dims has its initial point evaluated by the profile (for its free
    shapes); the scale spread and the float32 check start from that point, not from a second
    evaluation of it."""
    import pymc as pm

    import pymc_accel.graph_building as graph_building
    import pymc_accel.profile as profile_module
    import pymc_accel.selection as selection

    evaluated = []
    original = graph_building.initial_point

    def counted(model, initvals=None, seed=0):
        evaluated.append(initvals)
        return original(model, initvals, seed)

    monkeypatch.setattr(graph_building, "initial_point", counted)
    monkeypatch.setattr(profile_module, "initial_point", counted)
    started = []
    with_spread = selection._with_scale_spread

    def spread_from_start(scored, profile, model, logp_graph, kept, *args, **kwargs):
        started.append(kept.start_point())  # what the spread and the check start from
        return with_spread(scored, profile, model, logp_graph, kept, *args, **kwargs)

    monkeypatch.setattr(selection, "_with_scale_spread", spread_from_start)
    rng = np.random.default_rng(5)
    with pm.Model(coords={"group": range(6)}) as model:
        z = pm.ZeroSumNormal("z", sigma=pm.HalfNormal("s"), dims="group")
        pm.Normal("y", z[rng.integers(0, 6, 30)], 1.0, observed=rng.normal(size=30))
    selection.forget_profiles()
    select(model, devices=Devices(cpu_cores=2, jax_installed=True, note="test"))
    assert started and len(evaluated) == 1
    assert started[0]["z_zerosum__"].shape == (5,)
