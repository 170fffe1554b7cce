"""DEER-MALA in plain JAX: parallel-in-time MALA, exact to the sequential chain.

Usable on any JAX log density, with no PyMC involved:

>>> from pymc_accel import deer
>>> tuned = deer.tune(key, x0, logdensity_fn, num_steps=500)
>>> sampler = deer.build_sampler(logdensity_fn, num_steps=1000, window=64, jacobian="stoch_diag")
>>> result = sampler(keys, positions, step_sizes, inverse_masses)   # leading chain axis

Modules: :mod:`~pymc_accel.deer.mala` (the sequential reference kernel),
:mod:`~pymc_accel.deer.solver` (one window by Newton and a parallel scan),
:mod:`~pymc_accel.deer.chain` (windows and chains), :mod:`~pymc_accel.deer.adaptation`
(step size and preconditioner).
"""

from __future__ import annotations

from pymc_accel.deer.adaptation import OPTIMAL_ACCEPTANCE, TuningResult, tune
from pymc_accel.deer.chain import ChainResult, build_sampler, sample_chain
from pymc_accel.deer.mala import MALAInfo, MALAState, build_kernel, draw_noise, init
from pymc_accel.deer.solver import (
    JACOBIAN_MODES,
    StepInfo,
    WindowInfo,
    build_step,
    solve_linear_recurrence,
    solve_window,
)

__all__ = [
    "JACOBIAN_MODES", "OPTIMAL_ACCEPTANCE", "ChainResult", "MALAInfo", "MALAState", "StepInfo",
    "TuningResult", "WindowInfo", "build_kernel", "build_sampler", "build_step", "draw_noise",
    "init", "sample_chain", "solve_linear_recurrence", "solve_window", "tune",
]
