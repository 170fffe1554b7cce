"""The sampler options (``nuts={...}``) each of PyMC's samplers takes, read from the samplers
themselves: a backend that drives one of them lists these as its ``known_options``, so that
``auto`` does not choose a sampler that would reject an option the user gave (NumPyro's
``dense_mass`` sent to BlackJAX or nutpie failed inside them), nor one that would drop it
silently (nutpie's ``adaptation`` sent to PyMC's NUTS).

Each set is what PyMC's path to the sampler passes on (``pm.sample``'s ``nuts={...}``), less
what that path sets itself, plus PyMC's own ``max_treedepth`` and ``target_accept``, which
every path translates. Written by hand: neither PyMC nor the samplers publish the list.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Set
from typing import Any

#: Names every sampler path takes: ``target_accept`` (pm.sample's, passed on by every path) and
#: ``max_treedepth`` (PyMC's name, which PyMC's nutpie path and pymc-accel's JAX backends
#: translate to the sampler's own).
COMMON = frozenset({"target_accept", "max_treedepth"})


def _parameters(fn: Any, leave_out: set[str]) -> set[str]:
    """Named parameters of ``fn`` (no ``*args``/``**kwargs``, none of ``leave_out``)."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {name for name, p in inspect.signature(fn).parameters.items()
            if p.kind in kinds and name not in leave_out | {"self"}}


@functools.cache
def pymc_nuts_options() -> frozenset[str]:
    """Options PyMC's own NUTS takes: the arguments of ``pm.NUTS`` and its ``BaseHMC``, less
    those ``pm.sample``'s initialisation sets (the potential, the model, the random generator,
    the initial point)."""
    from pymc.step_methods.hmc.base_hmc import BaseHMC
    from pymc.step_methods.hmc.nuts import NUTS

    set_by_pymc = {"vars", "model", "potential", "rng", "initial_point"}
    return frozenset(COMMON | _parameters(NUTS.__init__, set_by_pymc)
                     | _parameters(BaseHMC.__init__, set_by_pymc))


@functools.cache
def nutpie_options() -> frozenset[str]:
    """Options nutpie takes through PyMC's nutpie path: ``nutpie.sample``'s arguments that PyMC
    does not set, its deprecated names, and the settings its ``**kwargs`` update (probed on
    each adaptation's settings object: nutpie raises ``AttributeError`` for any other)."""
    import nutpie
    from nutpie import _lib

    set_by_pymc = {"compiled_model", "draws", "tune", "chains", "cores", "seed", "save_warmup",
                   "store_unconstrained", "progress_bar", "progress_callback"}
    names = set(COMMON) | _parameters(nutpie.sample, set_by_pymc)
    names |= {"low_rank_modified_mass_matrix", "transform_adapt", "use_grad_based_mass_matrix"}
    for kind in ("Diag", "LowRank", "Flow"):
        factory = getattr(getattr(_lib, "PyNutsSettings", None), kind, None)
        if factory is None:
            continue
        settings = factory(0)
        for key, value in _leaves(settings.as_dict().get("settings", {})):
            probe = factory(0)
            try:
                probe.update({key: value})
            except Exception:  # not a setting nutpie.sample's **kwargs can set
                continue
            names.add(key)
    # settings nutpie.sample sets from its own arguments, which PyMC's path passes
    return frozenset(names - set_by_pymc - {"num_tune", "num_draws", "num_chains"})


def _leaves(tree: dict[str, Any]):
    """Every (key, value) of a nested settings dict, at any depth."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _leaves(value)
        else:
            yield key, value


@functools.cache
def numpyro_options() -> frozenset[str]:
    """Options NumPyro's NUTS takes through PyMC's JAX path (``numpyro.infer.NUTS``'s
    arguments less the log density and target acceptance PyMC passes), and ``chain_method``."""
    from numpyro.infer import NUTS

    set_by_pymc = {"model", "potential_fn", "target_accept_prob"}
    return frozenset(COMMON | {"chain_method"} | _parameters(NUTS.__init__, set_by_pymc))


@functools.cache
def blackjax_options() -> frozenset[str]:
    """Options BlackJAX's NUTS takes through PyMC's JAX path: ``blackjax.window_adaptation``'s
    arguments less those PyMC sets, ``algorithm`` (which PyMC reads), the NUTS kernel's step
    arguments (``max_num_doublings``), and ``chain_method``."""
    import blackjax
    from blackjax.mcmc import nuts

    set_by_pymc = {"algorithm", "logdensity_fn", "target_acceptance_rate", "progress_bar",
                   "adaptation_info_fn"}
    step = _parameters(nuts.build_kernel(), {"rng_key", "state", "logdensity_fn", "step_size",
                                             "inverse_mass_matrix"})
    return frozenset(COMMON | {"algorithm", "chain_method"} | step
                     | _parameters(blackjax.window_adaptation, set_by_pymc))


_BY_SAMPLER = {"pymc": pymc_nuts_options, "nutpie": nutpie_options,
               "numpyro": numpyro_options, "blackjax": blackjax_options}


class SamplerOptions(Set):
    """One sampler's option names, read from the sampler only when a name outside
    :data:`COMMON` is asked about: reading them imports the sampler (NumPyro imports JAX), and
    a selection given only ``max_treedepth`` took 1.3 s where it takes 0.1 s without options.
    A sampler whose options cannot be read (not installed, internals moved) takes any name."""

    def __init__(self, read: Callable[[], frozenset[str]]) -> None:
        self._read = read

    @classmethod
    def _from_iterable(cls, names):  # what set operations (&, |, -) return
        return frozenset(names)

    def _names(self) -> frozenset[str] | None:
        try:
            return self._read()
        except Exception:  # not installed, or a release whose internals moved: do not refuse
            return None

    def __contains__(self, name: object) -> bool:
        if name in COMMON:
            return True
        names = self._names()
        return True if names is None else name in names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names() or COMMON)

    def __len__(self) -> int:
        return len(self._names() or COMMON)


def sampler_options(sampler: str) -> SamplerOptions | None:
    """The option names PyMC's path to ``sampler`` takes in ``nuts={...}``.

    Parameters
    ----------
    sampler : {"pymc", "nutpie", "numpyro", "blackjax"}
        One of ``pm.sample``'s ``nuts_sampler`` values.

    Returns
    -------
    SamplerOptions or None
        A set of names, read from the sampler when first asked about a name other than
        ``target_accept`` and ``max_treedepth``; a sampler that is not installed or cannot be
        read takes any name (its sampler then reports those it does not know). ``None`` when
        ``sampler`` is none of those four.

    Examples
    --------
    >>> "dense_mass" in sampler_options("numpyro")
    True
    """
    reader = _BY_SAMPLER.get(sampler)
    return None if reader is None else SamplerOptions(reader)
