"""Whether the gradient a NumPyro or BlackJAX NUTS run computed was the derivative of its log
density: a check at each chain's last draw.

A JAX sampler never runs PyTensor's gradient: it jaxifies the log density and differentiates it
with JAX's rules inside the program XLA compiles. That gradient can be wrong, and a run on it
returns draws, with no error, from somewhere other than the posterior: JAX's compiled gradient
of a sparse GP whose inducing points sit on data inputs was off by a relative 82 to 390 until
:mod:`pymc_accel.rewrites.coincident_distances` held those distances, while its log density was
right to 1e-15, and pymc-accel's own NumPyro run of one went to the tree cap and returned a
noise scale of 1.54 where the posterior's is 0.29 (docs/benchmarks.md, "GPs users write"). The
rewrite mends the forms it knows; this check catches a gradient it does not know.

NumPyro keeps its last state: the position of each chain's last draw, the potential energy there
and its gradient, computed by the run's own compiled program, with the adapted inverse mass
matrix. :func:`recording_last_states` keeps that state as PyMC's ``sample_jax_nuts`` hands the
finished run to its statistics (no PyMC hook takes it, so the block swaps
``pymc.sampling.jax._numpyro_stats_to_dict``, as :mod:`pymc_accel.backends.flat_position` swaps
the sampler function). BlackJAX's NUTS keeps the same in its state, which PyMC's loop drops: the
block swaps in a copy of that loop that returns it (:func:`_keeping_blackjax_last_state`). On
the Student-t process as it was before its kernel's distances were held, BlackJAX's run carried
a gradient off PyTensor's by a relative 6e4 and 6e3 at its chains' last draws, as NumPyro's did.
:func:`check_last_gradients` then compares the gradient's slope along two directions with
central differences of the run's own log density: the function PyMC evaluated at the chains'
starts, compiled already, so the check compiles nothing and evaluates the log density twelve
times a chain. Every chain, since a wrong gradient is not wrong everywhere alike (the VFE GP's
run without the rewrite: off PyTensor's by a relative 2.5 at one chain's last draw and 16 at the
other's, docs/results/last-gradients-cpu-2026-12-02-unheld-gps.md).

A derivative by differences, not PyTensor's gradient: building PyTensor's gradient and
evaluating it at the last draws took 0.2 to 0.9 s on the PK recurrence, a sparse GP, a copula
and a Kalman filter, up to 13% of a short run (the check's first version, which compared with
PyTensor's gradient: docs/results/last-gradients-pytensor-cpu-2026-12-02.jsonl). Nor a check
before the run: compiling JAX's gradient on its own took 0.05 to 1.1 s on fourteen zoo models
(:mod:`pymc_accel.backends.finite_starts`). The differences are written here because JAX's
``check_grads`` differentiates the function again, compiling its derivative, and PyTensor's
``verify_grad`` compiles a function of its own. The check asks whether the gradient is the
derivative of the log density the run sampled; whether that log density is the model's is
not its question. :mod:`pymc_accel.integration` re-runs an automatic choice whose gradient
disagreed on PyTensor's gradient, and warns of a named one.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pymc_accel.backends.swaps import swapped

#: Largest error taken as agreement, per precision of the run: the slope's difference from the
#: extrapolated central difference beyond the difference's own error bound, relative to the
#: scaled gradient's norm (at least 1). Over 392 runs of the zoo, held-out, dense and sweep
#: models (``bench/check_last_gradients.py``, docs/results/last-gradients-cpu-2026-12-02.md) the
#: runs that agreed reached 5.7e-4 in float64 and 2.1e-3 in float32; the two found wrong, their
#: gradients off PyTensor's by 8,000 to 34,000 (float64) and 0.25 (float32), 1.0 and 0.104.
GRAD_RTOL = {"float64": 1e-2, "float32": 1e-1}

#: The key of a run's result attributes holding the check (:meth:`LastGradients.to_json`).
ATTRS_KEY = "pymc_accel_last_gradients"

# each thread's open blocks' recorded states: a list per block, innermost last
_local = threading.local()


@dataclass
class LastGradients:
    """What :func:`check_last_gradients` found.

    Attributes
    ----------
    agrees : bool
        False where, at some chain's last draw, the run's gradient differed from the
        derivative of its own log density beyond the tolerance.
    chains : list of int
        The chains compared, in order (their last draws).
    grad_rel_errors : list of float
        Per chain compared, the largest difference of the two directions' slopes beyond the
        central difference's own error bound, relative to the scaled gradient's norm.
    raw_rel_errors : list of float
        The same before the central difference's error bound is taken off: how near the
        difference came to the slope.
    grad_rtol : float
        The tolerance of the run's precision (:data:`GRAD_RTOL`).
    precision : str
    skipped : list of int
        Chains not compared: the run's figures there, or its log density at the steps, not
        finite, or steps the run's precision cannot place there.
    seconds : float
        The check's time.
    """

    agrees: bool
    chains: list[int] = field(default_factory=list)
    grad_rel_errors: list[float] = field(default_factory=list)
    raw_rel_errors: list[float] = field(default_factory=list)
    grad_rtol: float = 0.0
    precision: str = "float64"
    skipped: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> str:
        """The check as a JSON string (what a result's attributes hold)."""
        import json

        return json.dumps(asdict(self))

    @classmethod
    def from_idata(cls, idata: Any) -> LastGradients | None:
        """The check stored in a result's attributes, or ``None`` where none was."""
        import json

        text = getattr(idata, "attrs", {}).get(ATTRS_KEY)
        return cls(**json.loads(text)) if text else None

    def describe(self) -> str:
        """One sentence of the disagreement, for warnings and the report's notes."""
        off = [i for i, e in enumerate(self.grad_rel_errors) if e > self.grad_rtol]
        worst = max(off or range(len(self.chains)), key=lambda i: self.grad_rel_errors[i])
        which = (f"chain {self.chains[off[0]]}" if len(off) == 1
                 else f"chains {', '.join(str(self.chains[i]) for i in off)}")
        return (f"the gradient JAX compiled for the run was not the derivative of its log "
                f"density at the last draw of {which} of {len(self.chains)} compared: off by "
                f"up to {self.grad_rel_errors[worst]:.3g} (relative to the gradient; agreement "
                f"in {self.precision} is within {self.grad_rtol:g})")


@contextlib.contextmanager
def recording_last_states() -> Iterator[list[dict]]:
    """Keep the last state of each NumPyro or BlackJAX NUTS run PyMC's ``sample_jax_nuts``
    finishes in this thread inside the block.

    NumPyro's comes from the finished MCMC as PyMC hands it to ``_numpyro_stats_to_dict``.
    PyMC's BlackJAX loop drops its last state, so inside the block
    ``_blackjax_inference_loop`` is one that returns it among the statistics
    (:func:`_keeping_blackjax_last_state`), and the flat-position wrapper of the sampler
    function (:mod:`pymc_accel.backends.flat_position`) takes it out again
    (:func:`take_blackjax_last_state`) before PyMC makes the statistics a result.

    Yields
    ------
    list of dict
        Filled as runs finish: per run, ``z`` (the positions, ``(chains, ...)``, or one chain's
        without the chain axis), ``z_grad`` (the potential energy's gradient there) and
        ``potential_energy``, as NumPy arrays, and ``chains``. Empty where the installed PyMC
        has no such functions or the run kept no state.
    """
    import pymc.sampling.jax as pmjax

    states: list[dict] = []
    stack = _blocks()
    stack.append(states)
    try:
        with contextlib.ExitStack() as swaps:
            if hasattr(pmjax, "_numpyro_stats_to_dict"):
                swaps.enter_context(swapped(pmjax, "_numpyro_stats_to_dict", _recording))
            if _blackjax_loop_known(getattr(pmjax, "_blackjax_inference_loop", None)):
                swaps.enter_context(swapped(pmjax, "_blackjax_inference_loop",
                                            _keeping_blackjax_last_state))
            yield states
    finally:
        stack.remove(states)


def _blocks() -> list[list[dict]]:
    if not hasattr(_local, "blocks"):
        _local.blocks = []
    return _local.blocks


def _recording(pymcs: Any) -> Any:
    """``_numpyro_stats_to_dict`` that first keeps the finished MCMC's last state for the
    innermost open block of this thread (every other call passes straight through)."""

    @functools.wraps(pymcs)
    def stats_to_dict(posterior: Any) -> Any:
        stack = _blocks()
        if stack:
            state = getattr(posterior, "last_state", None)
            try:
                stack[-1].append(_kept_state(
                    _one_leaf(state.z), _one_leaf(state.z_grad), state.potential_energy,
                    _inverse_mass_matrix(state), getattr(posterior, "num_chains", 1)))
            except (AttributeError, TypeError, ValueError):  # no state, or not HMC's
                pass
        return pymcs(posterior)

    return stats_to_dict


#: The entry of a BlackJAX run's statistics that holds its last state inside a recording block,
#: taken out before PyMC sees the statistics (:func:`take_blackjax_last_state`).
BLACKJAX_LAST_STATE = "pymc_accel_last_state"


def _blackjax_loop_known(loop: Any) -> bool:
    """Whether ``loop`` is the ``_blackjax_inference_loop`` :func:`_keeping_blackjax_last_state`
    was written after (its parameters, in order): another PyMC's runs as it is, unchecked."""
    import inspect

    if loop is None:
        return False
    try:
        names = list(inspect.signature(loop).parameters)
    except (TypeError, ValueError):
        return False
    return names == ["seed", "init_position", "logp_fn", "draws", "tune", "target_accept",
                     "adaptation_kwargs"]


def _keeping_blackjax_last_state(pymcs: Any) -> Any:
    """PyMC's ``_blackjax_inference_loop`` (window adaptation, then BlackJAX's NUTS or HMC
    kernel in a scan), which returns the draws and their statistics and drops the scan's last
    state, made to return that state too: the position, the log density and its gradient as the
    run's compiled program computed them, and the adapted inverse mass matrix, under
    :data:`BLACKJAX_LAST_STATE` of the statistics.

    Written by hand after PyMC 6's loop (no hook of PyMC's or BlackJAX's keeps the state), and
    only in a thread with a recording block open, whose flat-position wrapper takes the entry
    out: another caller's run gets PyMC's own loop, as does a BlackJAX without the functions
    the copy calls. The same calls in the same order as PyMC's, so a seeded run draws what it
    drew without the block."""

    @functools.wraps(pymcs)
    def loop(seed, init_position, logp_fn, draws, tune, target_accept, **adaptation_kwargs):
        try:
            import blackjax
            from blackjax.adaptation.base import get_filter_adapt_info_fn

            parts = (blackjax.nuts, blackjax.hmc, blackjax.window_adaptation,
                     blackjax.progress_bar.gen_scan_fn)
        except (ImportError, AttributeError):  # a BlackJAX the copy was not written for
            parts = None
        if not _blocks() or parts is None:
            return pymcs(seed, init_position, logp_fn, draws, tune, target_accept,
                         **adaptation_kwargs)
        import jax
        import jax.numpy as jnp

        name = adaptation_kwargs.pop("algorithm", "nuts")
        if name not in ("nuts", "hmc"):
            raise ValueError("Only supporting 'nuts' or 'hmc' as algorithm to draw samples.")
        algorithm = blackjax.nuts if name == "nuts" else blackjax.hmc
        adapt = blackjax.window_adaptation(
            algorithm=algorithm, logdensity_fn=logp_fn, target_acceptance_rate=target_accept,
            adaptation_info_fn=get_filter_adapt_info_fn(), **adaptation_kwargs)
        (tuned_state, tuned_params), _ = adapt.run(seed, init_position, num_steps=tune)
        kernel = algorithm(logp_fn, **tuned_params).step

        def one_step(state, xs):
            _, rng_key = xs
            state, info = kernel(rng_key, state)
            stats = {
                "diverging": info.is_divergent,
                "energy": info.energy,
                "tree_depth": info.num_trajectory_expansions,
                "n_steps": info.num_integration_steps,
                "acceptance_rate": info.acceptance_rate,
                "lp": state.logdensity,
            }
            return state, (state.position, stats)

        progress_bar = adaptation_kwargs.pop("progress_bar", False)
        keys = jax.random.split(seed, draws)
        scan_fn = blackjax.progress_bar.gen_scan_fn(draws, progress_bar)
        last, (samples, stats) = scan_fn(one_step, tuned_state, (jnp.arange(draws), keys))
        stats[BLACKJAX_LAST_STATE] = {
            "position": last.position, "logdensity": last.logdensity,
            "logdensity_grad": last.logdensity_grad,
            "inverse_mass_matrix": tuned_params["inverse_mass_matrix"],
        }
        return samples, stats

    return loop


def take_blackjax_last_state(stats: Any, chains: int) -> Any:
    """``stats`` without :data:`BLACKJAX_LAST_STATE`, the BlackJAX run's last state it held
    kept for the innermost recording block of this thread (as :func:`recording_last_states`
    keeps NumPyro's: ``z``, ``z_grad`` and ``potential_energy`` of ``-log p``).

    Parameters
    ----------
    stats : dict
        The statistics PyMC's ``_sample_blackjax_nuts`` returned, chains first.
    chains : int

    Returns
    -------
    dict
        ``stats`` as PyMC's own loop returns them.
    """
    if not isinstance(stats, dict) or BLACKJAX_LAST_STATE not in stats:
        return stats
    stats = dict(stats)
    last = stats.pop(BLACKJAX_LAST_STATE)
    stack = _blocks()
    if stack:
        try:
            stack[-1].append(_kept_state(
                _one_leaf(last["position"]), -np.asarray(_one_leaf(last["logdensity_grad"])),
                -np.asarray(last["logdensity"]), np.asarray(last["inverse_mass_matrix"]),
                chains))
        except (TypeError, ValueError):  # a position of several arrays: not checked
            pass
    return stats


def _kept_state(z: Any, z_grad: Any, potential_energy: Any, inverse_mass_matrix: Any,
                chains: Any) -> dict:
    """One run's last state as a recording block keeps it and :func:`check_last_gradients`
    reads it: the positions, the gradient of ``-log p`` and ``-log p`` there as NumPy arrays,
    the adapted inverse mass matrix (or ``None``) and the number of chains."""
    return {"z": np.asarray(z), "z_grad": np.asarray(z_grad),
            "potential_energy": np.asarray(potential_energy),
            "inverse_mass_matrix": inverse_mass_matrix, "chains": int(chains)}


def _inverse_mass_matrix(state: Any) -> Any:
    """The adapted inverse mass matrix of an HMC state as a NumPy array (NumPyro keys it by
    the position's sites where the position is a dict), or ``None``."""
    matrix = getattr(getattr(state, "adapt_state", None), "inverse_mass_matrix", None)
    if isinstance(matrix, dict):
        matrix = next(iter(matrix.values())) if len(matrix) == 1 else None
    return None if matrix is None else np.asarray(matrix)


def _one_leaf(z: Any) -> Any:
    """The position as one array: pymc-accel's runs hand NumPyro one flat array
    (:mod:`pymc_accel.backends.flat_position`), PyMC's a list of one array per variable."""
    if isinstance(z, (list, tuple)):
        if len(z) != 1:
            raise ValueError("a position of several arrays")  # not flattened: not checked
        return z[0]
    return z


def check_last_gradients(state: dict, potential: Any, shapes: list[tuple[int, ...]],
                         precision: str = "float64", seed: int = 0) -> LastGradients | None:
    """Compare the gradient a run computed at its chains' last draws with the derivative of
    its own log density there.

    Along two directions per chain, each scaled by the run's adapted posterior scales (the
    diagonal of NumPyro's inverse mass matrix, so a step is the same share of each variable's
    spread): the gradient the run computed, and a random one. The derivative is a central
    difference at steps ``h``, ``h / 2`` and ``h / 4`` (:data:`STEPS`), the last two
    extrapolated (Richardson); the three differences' spread and the log density's rounding
    bound its own error, and the gradient agrees where it is within that bound plus the
    tolerance of the precision (:data:`GRAD_RTOL`, relative to the scaled gradient's norm, at
    least 1).

    Parameters
    ----------
    state : dict
        One run's last state, as :func:`recording_last_states` keeps it.
    potential : callable
        The run's potential energy (``-log p``) as a function of a list of arrays, one per
        value variable: the function the run jaxified and compiled for its starts
        (:func:`pymc_accel.backends.run_logp.held_logp_function`).
    shapes : list of tuple
        The value variables' shapes, in the order ``potential`` takes them.
    precision : {"float64", "float32"}
        The run's precision.
    seed : int, default 0
        Seed of the random directions.

    Returns
    -------
    LastGradients or None
        ``None`` where the state's position does not match ``shapes``.
    """
    start = time.perf_counter()
    chains = int(state["chains"])
    z = np.asarray(state["z"], dtype="float64")
    z_grad = np.asarray(state["z_grad"], dtype="float64")
    energy = np.asarray(state["potential_energy"], dtype="float64")
    scales = state.get("inverse_mass_matrix")
    if chains == 1 and z.ndim == 1:
        z, z_grad, energy = z[None], z_grad[None], energy.reshape(1)
        scales = None if scales is None else np.asarray(scales)[None]
    dim = sum(math.prod(s) for s in shapes)
    if z.shape != (chains, dim):
        return None
    if scales is not None:
        scales = np.asarray(scales, dtype="float64")
        if scales.shape == (chains, dim, dim):  # a dense mass matrix: its diagonal
            scales = np.diagonal(scales, axis1=1, axis2=2)
        scales = (np.sqrt(scales) if scales.shape == (chains, dim)
                  and np.all(np.isfinite(scales)) and np.all(scales > 0) else None)
    dtype = np.dtype(precision)
    check = LastGradients(agrees=True, grad_rtol=GRAD_RTOL[precision], precision=precision)
    rng = np.random.default_rng(seed)
    for c in range(chains):
        if not (np.isfinite(energy[c]) and np.all(np.isfinite(z_grad[c]))):
            check.skipped.append(c)
            continue
        scale = scales[c] if scales is not None else np.ones(dim)
        whitened = scale * z_grad[c]  # the gradient per unit of each variable's spread
        norm = max(float(np.linalg.norm(whitened)), 1.0)
        random = rng.standard_normal(dim)
        error, raw, found = 0.0, 0.0, False
        for u in (whitened, random):
            u = u / max(float(np.linalg.norm(u)), np.finfo("float64").tiny)
            if not np.any(u):
                continue
            differences = _slope_differences(potential, z[c], scale * u,
                                             float(whitened @ u), shapes, dtype)
            if differences is None:
                continue
            found = True
            difference, bound = differences
            error = max(error, max(difference - bound, 0.0) / norm)
            raw = max(raw, difference / norm)
        if not found:
            check.skipped.append(c)
            continue
        check.chains.append(c)
        check.grad_rel_errors.append(error)
        check.raw_rel_errors.append(raw)
        if error > check.grad_rtol:
            check.agrees = False
    check.seconds = time.perf_counter() - start
    return check


#: Steps of the central differences, in units of the posterior scales, per precision: about
#: the fifth root of the precision's eps (7e-4 and 4e-2), where an extrapolated difference's
#: rounding and its truncation error, of fourth order, balance (float64's is below it; both
#: were left as first chosen, the differences' spread bounding what either leaves).
STEPS = {"float64": 1e-4, "float32": 3e-2}


def _slope_differences(potential: Any, z: np.ndarray, d: np.ndarray, slope: float,
                       shapes: list[tuple[int, ...]],
                       dtype: np.dtype) -> tuple[float, float] | None:
    """How far the run's slope along ``d`` (``slope``: its gradient of ``-log p`` dotted with
    ``d``) is from its potential's extrapolated central difference, and the difference's own
    error bound; ``None`` where the potential is not finite at the steps (three steps, each an
    eighth of the last, tried) or the run's precision cannot place the steps (a float32
    position of 1e6 moves in steps of 0.06).

    Central differences at ``h``, ``h / 2`` and ``h / 4``: for a smooth log density they
    converge, each difference from the next a quarter of the one before, and their spread is
    their error; where the log density's rounding is larger than its precision's ``eps`` times
    its value (float32's Cholesky factor of an ill-conditioned kernel: a latent GP's float32
    differences were off by 140 times its gradient, while its gradient was within 0.07 of
    float64's), they do not, and the spread covers it."""
    h = STEPS[dtype.name]
    eps = float(np.finfo(dtype).eps)
    steps = (1, -1, 0.5, -0.5, 0.25, -0.25)
    for _ in range(4):
        if not _placed(z, h * d, steps, dtype):
            return None
        values = [_at(potential, z + k * h * d, shapes, dtype) for k in steps]
        if all(np.isfinite(values)):
            break
        h /= 8
    else:
        return None
    differences = [(values[i] - values[i + 1]) / (2 * steps[i] * h) for i in (0, 2, 4)]
    derivative = (4 * differences[2] - differences[1]) / 3
    rounding = eps * (abs(values[4]) + abs(values[5])) / (0.5 * h)  # at the finest step
    spread = abs(differences[0] - differences[1]) + abs(differences[1] - differences[2])
    return abs(slope - derivative), 2 * spread + 4 * rounding


def _placed(z: np.ndarray, step: np.ndarray, steps: tuple[float, ...], dtype: np.dtype) -> bool:
    """Whether each position ``z + k * step`` in ``dtype`` is that step from ``z`` within a
    thousandth of it."""
    for k in steps:
        moved = np.asarray(z + k * step, dtype=dtype).astype("float64") - z
        if np.linalg.norm(moved - k * step) > 1e-3 * np.linalg.norm(k * step):
            return False
    return True


def _at(potential: Any, flat: np.ndarray, shapes: list[tuple[int, ...]],
        dtype: np.dtype) -> float:
    """The potential at one flat position, split into its value variables' arrays."""
    arrays, at = [], 0
    for shape in shapes:
        size = math.prod(shape)
        arrays.append(flat[at:at + size].reshape(shape).astype(dtype))
        at += size
    try:
        return float(potential(arrays))
    except Exception:  # a parameter check raising there: not finite
        return math.nan


def value_shapes(model: Any, graph: Any) -> list[tuple[int, ...]] | None:
    """The shapes of ``model``'s value variables, in its order: static in ``graph`` (the run's
    log density, on a frozen copy of the model), else from the graph's initial point or the
    model's; ``None`` where neither has them."""
    by_name = {v.name: v for v in graph.value_vars}
    inputs = [by_name[v.name] for v in model.value_vars]
    shapes = [tuple(v.type.shape) for v in inputs]
    if all(None not in s for s in shapes):
        return shapes
    point = graph.initial_point
    if point is None:
        try:
            point = model.initial_point()
        except Exception:
            return None
    try:
        return [tuple(np.shape(point[v.name])) for v in inputs]
    except KeyError:
        return None
