"""The ``nutpie_jax`` backend: candidates, estimate and sampling."""

from __future__ import annotations

import contextlib
import sys
from importlib.util import find_spec

from pymc_accel import (
    Candidate, Estimate, Figure, JaxNutsBackend, Refusal, coincident_distances_held,
    discover_devices, first_use_figures, limit_blas, rename_nutpie_stats, sampler_options,
    xla_program_seconds,
)

#: Seconds nutpie's JAX path pays the first time it runs in a Python process, beyond JAX's own
#: start (``pymc_accel.first_use``): its first run of eight schools in a new process after a
#: NumPyro run took 2.18 s against 0.81 s for the next (median of three processes;
#: ``bench/fit_first_use.py``, ``docs/results/fit-first-use-cpu.jsonl``).
FIRST_USE_SECONDS = 1.35

#: Seconds nutpie spends per gradient crossing from Rust into Python and dispatching a jitted JAX
#: call (the GIL, argument conversion, a device sync), on top of the gradient itself. Measured on
#: the 2-core CPU machine of docs/benchmarks.md as wall time per leapfrog per chain with two
#: chains (whose callbacks take turns on the GIL), between runs of 100 + 100 and 400 + 400
#: draws: 0.26 to 0.57 ms on the zoo's small models, whose gradients take 10 to 150 µs
#: (docs/results/fit-jax-cpu.jsonl; 30 µs was modelled before).
CALLBACK_SECONDS = 300e-6
#: Fixed seconds of a run (nutpie's start-up and one jitted value-and-grad): 0.55 to 0.94 s on
#: the zoo's 59- to 117-kernel models, 1.9 s at 216 kernels, 3.2 s at 533, timed as runs of
#: 10 + 10 draws x 2 chains (the same file).
FIXED_SECONDS, FIXED_SECONDS_PER_KERNEL = 0.2, 0.0055


def _with_callback(grad: Figure) -> Figure:
    """A JAX gradient's seconds plus nutpie's callback, which a timed jitted call does not pay."""
    total = grad.value + CALLBACK_SECONDS
    timed = grad.value * (grad.measured_share if grad.source == "measured" else 0.0)
    return Figure(total, grad.source,
                  f"{grad.note}; + {CALLBACK_SECONDS * 1e6:.0f} µs of nutpie's Rust-to-JAX "
                  "callback (modelled)",
                  measured_share=timed / total if total > 0 else 1.0)


class NutpieJaxBackend(JaxNutsBackend):
    """nutpie's NUTS over a JAX gradient, on CPU or GPU.

    Its estimate is a JAX gradient on the device (the roofline of the built-in JAX backends)
    plus nutpie's callback per gradient, with one jitted value-and-grad to compile instead of a
    whole sampler. Chains run in nutpie's threads, one per core, sharing one device.
    """

    adaptation = "nutpie"  # nutpie's trees and effective draws per draw, not Stan's
    #: nutpie calls the jitted gradient from Rust, one call a gradient: no sampler loop in XLA
    gpu_loop_iterations = None

    def __init__(self) -> None:
        super().__init__(name="nutpie_jax", jax_sampler="numpyro")
        self.description = ("nutpie NUTS (Rust) over a JAX-compiled gradient, CPU or GPU "
                            "[plugin]")

    def candidates(self, profile, devices):
        """CPU (and a GPU when present) in the model's precision; discrete models refused."""
        # a module in sys.modules is installed, even if only registered lazily (ArviZ's
        # NumPyro converter does so with jax): find_spec would import it
        missing = next((m for m in ("jax", "nutpie")
                        if m not in sys.modules and find_spec(m) is None), None)
        if missing:
            return [Refusal(self.name, f"{missing} is not installed: pip install {missing}")]
        if profile.has_discrete:
            return [Refusal(self.name, f"model has discrete variables "
                            f"({', '.join(profile.discrete_vars)}); NUTS needs gradients of every "
                            "variable: use nuts_sampler='numba' or marginalize them")]
        precision = profile.float_dtype
        other = "float32" if precision == "float64" else "float64"
        out: list[Candidate | Refusal] = [Candidate(self.name, "cpu", precision)]
        if devices.has_gpu:
            out.append(Candidate(self.name, "gpu", precision))
        out.append(Refusal(self.name, f"nutpie runs the model in the precision it was built in "
                           f"({precision}); build it under pytensor.config.floatX='{other}' for "
                           f"{other}", precision=other))
        return out

    def takes_per_chain_initvals(self, candidate) -> bool:
        """nutpie starts every chain from one dict of initvals."""
        return False

    def checks_initial_point(self, candidate) -> bool:
        """True: nutpie jitters its starts and refuses to sample when none is finite ("All
        initialization points failed"), as under the numba backend; pymc-accel's check of the
        start before its jitter refused models nutpie samples."""
        return True

    def known_options(self, candidate):
        """nutpie's options, as PyMC's nutpie path passes them on."""
        return sampler_options("nutpie")

    def takes_argument(self, name, candidate) -> bool:
        """nutpie keeps the tuning draws when asked; ``pm.sample`` warns that it ignores
        ``init``. It runs no step method, trace backend or callback, and compiles with JAX."""
        return name in ("discard_tuned_samples", "init", "compile_mode:jax")

    def cpu_chains_at_once(self):
        """One chain a core: nutpie runs its chains in threads of its own, which share the
        JAX gradient whatever JAX's CPU device count."""
        return discover_devices().cpu_cores

    def estimate(self, candidate, profile, machine):
        """JAX gradient plus nutpie's callback; one gradient to compile."""
        base = super().estimate(candidate, profile, machine)
        return Estimate(
            seconds_per_gradient=_with_callback(base.seconds_per_gradient),
            gradients_per_draw=base.gradients_per_draw,
            relative_efficiency=base.relative_efficiency,
            trajectory_scale=base.trajectory_scale,
            # with what XLA compiles for ops JAX lowers to programs of their own (its
            # gradient's compile: the user sweep's 60 matrix exponentials ran in 27.7 s in all,
            # against 3.9 s of fixed seconds modelled without them)
            fixed_seconds=Figure(
                FIXED_SECONDS + FIXED_SECONDS_PER_KERNEL * profile.census.compiled_kernels
                + xla_program_seconds(profile, "gradient_compile"),
                "modelled",
                "one jitted value-and-grad, plus nutpie's start-up"),
            chain_parallelism=base.chain_parallelism if candidate.device == "cpu" else 1,
            memory_bytes=base.memory_bytes,
            # JAX's and nutpie's start in a new process
            **first_use_figures("jax", "nutpie-jax",
                                seconds={"nutpie-jax": FIRST_USE_SECONDS}),
        )

    def measure(self, candidate, model, profile, machine, budget_seconds):
        """The JAX gradient timed on the candidate's device, plus nutpie's callback (which a
        timed jitted call does not pay); ``None`` when its compile would not fit the budget."""
        from dataclasses import replace

        measured = super().measure(candidate, model, profile, machine, budget_seconds)
        if measured is None:
            return None
        return replace(measured, seconds_per_gradient=_with_callback(measured.seconds_per_gradient))

    def sample(self, model, candidate, request):
        """``pm.sample`` with nutpie on the JAX backend and a JAX gradient.

        nutpie's default diagonal adaptation unless ``nuts={"adaptation": ...}`` says otherwise:
        the estimate prices nutpie's trees and leapfrogs, which its low-rank adaptation does not
        keep. On the demo's 5,522-parameter hierarchical logistic regression at 500 + 500 draws
        x 2 chains, low-rank adaptation took 295 s (51 leapfrogs a draw, minimum bulk ESS 306)
        and, with the demo's seed, 191 s with chains that had not mixed (R-hat 2.24); the
        diagonal one took 47 s (31 leapfrogs a draw, minimum bulk ESS 281, R-hat 1.01;
        docs/benchmarks.md)."""
        import jax
        import pymc as pm

        from pymc_accel import jax_device

        platform = "gpu" if candidate.device == "gpu" else "cpu"
        device = jax_device(self.name, platform)
        nuts = {"target_accept": request.target_accept, **request.backend_kwargs}
        pymc_kwargs = dict(request.pymc_kwargs)
        # nutpie's chains, threads of one process, call LAPACK (a GP's Cholesky) at the same
        # time, and OpenBLAS starts a thread per core for each call: two chains of the sparse GP
        # sparse_gp_3 took 2.9x one chain's wall on two cores, and as long as one with a BLAS
        # thread each (docs/results/chains-side-by-side-cpu-2026-12-02*.md). BLAS is limited
        # here to each chain's share of the cores, as pymc-accel's NumPyro runs limit it;
        # pm.sample is passed None so that it does not set its own limit inside this one.
        blas = contextlib.nullcontext()
        if platform == "cpu":
            cores = request.cores or discover_devices().cpu_cores
            blas = limit_blas(pymc_kwargs.get("blas_cores", "auto"), cores, request.chains)
            pymc_kwargs["blas_cores"] = None
        compile_kwargs = {"gradient_backend": "jax", **pymc_kwargs.pop("compile_kwargs", {})}
        # a compile mode the caller gave compiles with JAX (selection refuses this backend for
        # any other) and is passed as given; pm.sample takes one mode, not two
        if "backend" not in pymc_kwargs and "mode" not in compile_kwargs:
            pymc_kwargs["backend"] = "jax"
        run = request.pm_sample_kwargs()
        if run["idata_kwargs"]:  # PyMC's nutpie path ignores coords and dims with a warning;
            # pymc-accel lays every result out with them after the run
            run["idata_kwargs"] = {k: v for k, v in run["idata_kwargs"].items()
                                   if k not in ("coords", "dims")}
        # nutpie calls the gradient from its own Rust threads, where JAX's thread-local
        # default_device context would not reach: set the process default while sampling.
        previous = jax.config.jax_default_device
        jax.config.update("jax_default_device", device)
        try:
            # nutpie builds and jaxifies the log density itself: a GP kernel's distances
            # between coinciding inputs held at zero, as in pymc-accel's own JAX runs (its JAX
            # gradient of a sparse GP was wrong without: a chain that barely moved in 280 s)
            with coincident_distances_held(), blas:
                idata = pm.sample(
                    **run,
                    nuts_sampler="nutpie",
                    compile_kwargs=compile_kwargs,
                    nuts=nuts,
                    model=model,
                    **pymc_kwargs,
                )
        finally:
            jax.config.update("jax_default_device", previous)
        rename_nutpie_stats(idata)
        return idata
