"""NumPyro NUTS on JAX, on CPU or GPU, in float32 or float64.

Sampling goes through PyMC's own ``pymc.sampling.jax.sample_jax_nuts`` (jaxified graph,
initial points, post-processing, InferenceData); this backend adds the device, the precision
and the chain method around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pymc_accel import costmodel
from pymc_accel.backend import Candidate, Estimate, Refusal, SampleRequest
from pymc_accel.backends._common import (
    discrete_refusal,
    missing_module,
    missing_refusal,
    pymc_chain_seed,
)
from pymc_accel.devices import cpu_cores

if TYPE_CHECKING:
    from pymc_accel.devices import Devices
    from pymc_accel.machine import MachineFigures
    from pymc_accel.profile import ModelProfile


class JaxNutsBackend:
    """A NUTS sampler of PyMC's JAX path (``nuts_sampler`` of ``sample_jax_nuts``).

    Parameters
    ----------
    name : str
        Registered backend name.
    jax_sampler : {"numpyro", "blackjax"}
        Which of PyMC's JAX NUTS implementations to drive.
    """

    def __init__(self, name: str = "numpyro", jax_sampler: str = "numpyro") -> None:
        self.name = name
        self.jax_sampler = jax_sampler
        self.description = f"{jax_sampler} NUTS on JAX (CPU or GPU), via PyMC's sample_jax_nuts"

    def candidates(self, profile: ModelProfile, devices: Devices) -> list[Candidate | Refusal]:
        """CPU and (when present) GPU, each in float64 and float32."""
        missing = missing_module("jax", self.jax_sampler)
        if missing:
            return [missing_refusal(self.name, missing)]
        if profile.has_discrete:
            return [discrete_refusal(self.name, profile)]
        out: list[Candidate | Refusal] = []
        for precision in ("float64", "float32"):
            out.append(Candidate(self.name, "cpu", precision, (("chain_method", "parallel"),)))
            if devices.has_gpu:
                method = "parallel" if len(devices.gpus) > 1 else "vectorized"
                out.append(Candidate(self.name, "gpu", precision, (("chain_method", method),)))
        if not devices.has_gpu:
            out.append(
                Refusal(
                    self.name,
                    f"no GPU visible to JAX ({devices.note or 'none found'}); on a CUDA machine "
                    "install pip install 'pymc-accel[gpu]'",
                    device="gpu",
                )
            )
        return out

    def estimate(
        self, candidate: Candidate, profile: ModelProfile, machine: MachineFigures
    ) -> Estimate:
        """Roofline gradient time for JAX on the device; XLA compile of the whole sampler."""
        if candidate.device == "gpu":
            grad = costmodel.gpu_gradient_seconds(profile, candidate.precision, machine)
            parallel = 4  # vectorized chains share the device
        else:
            parallel = cpu_cores()
            grad = costmodel.cpu_gradient_seconds(
                profile, machine, candidate.precision, costmodel.JAX_CPU, parallel_chains=parallel
            )
        return Estimate(
            seconds_per_gradient=grad,
            gradients_per_draw=costmodel.nuts_gradients_per_draw(profile),
            fixed_seconds=costmodel.compile_seconds(profile, costmodel.JAX_CPU),
            chain_parallelism=parallel,
            memory_bytes=costmodel.state_memory_bytes(profile, candidate.precision, 4, 1000),
        )

    def measure(
        self, candidate: Candidate, model, profile: ModelProfile, machine: MachineFigures,
        budget_seconds: float,
    ) -> Estimate | None:
        """jit-compile the JAX gradient on the candidate's device and precision and time it;
        ``None`` when its modelled compile would not fit in ``budget_seconds``."""
        from pymc_accel.backends._measure import jax_measure

        modelled = self.estimate(candidate, profile, machine)
        return jax_measure(candidate, model, profile, machine, budget_seconds, modelled,
                           modelled.chain_parallelism)

    def sample(self, model, candidate: Candidate, request: SampleRequest):
        """Run PyMC's ``sample_jax_nuts`` on the candidate's device and precision."""
        import jax
        from pymc.sampling.jax import sample_jax_nuts

        from pymc_accel.errors import DeviceUnavailableError

        platform = "gpu" if candidate.device == "gpu" else "cpu"
        try:
            device = jax.devices(platform)[0]
        except RuntimeError as exc:
            raise DeviceUnavailableError(
                f"{self.name} was asked to run on {platform} but JAX has no such device "
                f"({exc}). Install 'pymc-accel[gpu]' on a CUDA machine, or use device='cpu'."
            ) from None
        kwargs = dict(request.backend_kwargs)
        chain_method = runnable_chain_method(
            kwargs.pop("chain_method", candidate.option("chain_method", "parallel")),
            n_devices=len(jax.devices(platform)),
            chains=request.chains,
        )
        with jax.enable_x64(candidate.precision == "float64"), jax.default_device(device):
            return sample_jax_nuts(
                draws=request.draws,
                tune=request.tune,
                chains=request.chains,
                target_accept=request.target_accept,
                random_seed=pymc_chain_seed(request.random_seed, request.chains),
                initvals=request.initvals,
                model=model,
                var_names=request.var_names,
                nuts_kwargs=kwargs,
                progressbar=bool(request.progressbar),
                quiet=request.quiet,
                chain_method=chain_method,
                postprocessing_backend=platform,
                idata_kwargs=request.idata_kwargs,
                compute_convergence_checks=request.compute_convergence_checks,
                nuts_sampler=self.jax_sampler,
            )


def runnable_chain_method(requested: str, *, n_devices: int, chains: int) -> str:
    """``"parallel"`` maps chains over devices with pmap, which needs a device per chain
    (BlackJAX fails without one, NumPyro silently runs chains one after another); use
    ``"vectorized"`` when there are fewer devices than chains."""
    if requested == "parallel" and chains > 1 and n_devices < chains:
        return "vectorized"
    return requested


class NumpyroBackend(JaxNutsBackend):
    """NumPyro NUTS on JAX: the built-in ``numpyro`` backend."""

    def __init__(self) -> None:
        super().__init__("numpyro", "numpyro")
