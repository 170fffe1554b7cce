"""Measured mode's gradient timings (pymc_accel/backends/_measure.py): what they start, and
what they count as a gradient's time."""

from __future__ import annotations

import pytest

from pymc_accel import Candidate, costmodel
from pymc_accel.profile import profile_model
from tests.figures import hand_made_machine as _machine


def test_a_loop_timing_that_does_not_fit_the_budget_starts_nothing(monkeypatch):
    """A JAX compile that would not fit declines before JAX is asked for its devices (counting
    them starts JAX, a second on a process's first use), as measured mode's budget needs."""
    from pymc_accel.backends import _measure
    from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
    from pymc_accel.models import hierarchical_logistic

    def no_devices(chains):
        raise AssertionError("asked for the devices")

    monkeypatch.setattr(_measure, "_side_by_side", no_devices)
    m = _machine()
    model = hierarchical_logistic(500, 5, 10).model
    profile = profile_model(model)
    candidate = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
    modelled = JaxNutsBackend().estimate(candidate, profile, m)
    assert _measure.jax_measure(candidate, model, profile, m, 0.0, modelled, 2,
                                runtime=costmodel.JAX_CPU_SAMPLER) is None


def test_the_loop_timing_runs_the_gradient_side_by_side_and_finds_its_cost(monkeypatch):
    """``time_jax_sampler_gradient`` on a real model: compiles once, times a positive cost per
    pass, with BLAS limited as the run limits it, and keeps the timing for the model (a second
    call times nothing)."""
    import jax

    from pymc_accel.backends import _measure
    from pymc_accel.models import hierarchical_logistic

    limits = []
    real = _measure.limit_blas
    monkeypatch.setattr(_measure, "limit_blas", lambda *a: limits.append(a) or real(*a))
    model = hierarchical_logistic(500, 5, 10).model
    # a budget the compile cannot use up on a busy 2-core machine (3 s was once: 3.3 s compile)
    timed = _measure.time_jax_sampler_gradient(model, "float64", 2, 10.0)
    compiled, seconds, passes, chains = timed
    assert compiled > 0 and passes >= 4 and 0 < seconds < 0.1
    assert chains == min(2, len(jax.devices("cpu")))
    assert limits == [("auto", _measure.cpu_cores(), chains)]
    assert _measure.time_jax_sampler_gradient(model, "float64", 2, 0.0) == timed


def test_a_loop_no_longer_than_one_pass_is_not_a_gradient_time():
    """A budget spent compiling left the loop at 4 passes, no slower than one on a busy
    machine: that was kept as 0 s a gradient, pricing the candidate at its driver alone."""
    from pymc_accel.backends._measure import seconds_per_pass

    assert seconds_per_pass([0.010, 0.011, 0.009], 0.002, 5) == pytest.approx(0.002)
    assert seconds_per_pass([0.0019, 0.0021], 0.002, 4) is None
    assert seconds_per_pass([0.0010], 0.002, 4) is None
