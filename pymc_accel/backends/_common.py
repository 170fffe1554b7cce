"""Helpers shared by built-in backends."""

from __future__ import annotations

from pymc.util import get_random_generator

from pymc_accel.backend import Refusal
from pymc_accel.devices import module_installed
from pymc_accel.profile import ModelProfile


def missing_module(*modules: str) -> str | None:
    """Name the first module of ``modules`` that cannot be imported, or ``None``."""
    return next((m for m in modules if not module_installed(m)), None)


def missing_refusal(backend: str, module: str, extra: str = "") -> Refusal:
    """A refusal that names what to install."""
    target = f"pymc-accel[{extra}]" if extra else "pymc-accel"
    return Refusal(
        backend,
        f"{module} is not installed: pip install {module} (or reinstall '{target}', "
        f"which depends on it)",
    )


def discrete_refusal(backend: str, profile: ModelProfile) -> Refusal:
    """A refusal for gradient-only samplers on models with discrete variables."""
    return Refusal(
        backend,
        f"model has discrete variables ({', '.join(profile.discrete_vars)}); this sampler needs "
        "gradients of every variable. Use nuts_sampler='numba' (PyMC's compound NUTS + "
        "Metropolis) or marginalize them (pymc_extras.marginalize)",
    )


def no_gpu_refusal(backend: str, devices) -> Refusal:
    """The GPU refusal of a JAX backend on a machine where JAX sees no GPU, naming the extra."""
    return Refusal(
        backend,
        f"no GPU visible to JAX ({devices.note or 'none found'}); on a CUDA machine "
        "run: pip install 'pymc-accel[gpu]'",
        device="gpu",
    )


def pymc_chain_seed(random_seed, chains: int) -> int:
    """The single JAX seed ``pm.sample`` derives from ``random_seed`` for its JAX samplers,
    so that a backend given the same seed draws exactly what ``pm.sample`` would."""
    rngs = get_random_generator(random_seed).spawn(chains)
    return int([rng.integers(2**30) for rng in rngs][0])


#: nutpie's sample_stats names -> PyMC's.
NUTPIE_TO_PYMC_STATS = {
    "mean_tree_accept": "acceptance_rate",
    "logp": "lp",
    "depth": "tree_depth",
    "maxdepth_reached": "reached_max_treedepth",
}


def rename_nutpie_stats(idata) -> None:
    """Rename nutpie's sample_stats to PyMC's names in place (other stats are kept)."""
    for group in ("sample_stats", "warmup_sample_stats"):
        if group not in idata.children:
            continue
        ds = idata[group].to_dataset()
        names = {k: v for k, v in NUTPIE_TO_PYMC_STATS.items() if k in ds and v not in ds}
        if names:
            idata[group] = ds.rename(names)


def without_nutpie_ignored_layout(idata_kwargs: dict | None) -> dict | None:
    """``idata_kwargs`` without ``coords`` and ``dims``, which PyMC's nutpie path ignores with
    a warning: pymc-accel lays every result out with them after its run
    (:mod:`pymc_accel.result_layout`)."""
    if not idata_kwargs:
        return idata_kwargs
    return {k: v for k, v in idata_kwargs.items() if k not in ("coords", "dims")}


def run_precisions(backend: str, profile: ModelProfile) -> tuple[tuple[str, ...], list[Refusal]]:
    """The precisions a JAX backend offers for ``profile``, and the refusals of the others.

    A float64 model runs in either: float32 is JAX with 64-bit types off, which truncates the
    graph's float64. A model built in float32 runs in float32 only: with 64-bit types on, its
    graph still computes in float32, and NumPyro's and BlackJAX's NUTS failed on the mix
    ("cond branches must have equal output types", float64 positions against a float32
    gradient), while DEER-MALA's float64 chain rested on a float32 log density.
    """
    if profile.float_dtype != "float32":
        return ("float64", "float32"), []
    return ("float32",), [Refusal(
        backend, "the model is built in float32, and JAX runs a PyMC graph in the precision it "
        "was built in: build the model under pytensor.config.floatX='float64' to run it in "
        "float64", precision="float64")]
