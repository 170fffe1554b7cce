"""BlackJAX NUTS for pymc-accel, shipped as a separate package the way a third party would.

Installing this package is all it takes: the entry point in group ``pymc_accel`` (see
``pyproject.toml``) makes pymc-accel discover it, ``pymc-accel backends`` lists it, and
``pymc_accel.sample(nuts_sampler="blackjax_nuts")`` or ``nuts_sampler="auto"`` can use it.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from pymc_accel import Figure, JaxNutsBackend, Refusal, hookimpl

# PyMC 6.4 passes progress_bar into blackjax.window_adaptation (it pops it a line too late),
# which BlackJAX 1.6 and newer reject from inside a jitted kernel.
FIRST_INCOMPATIBLE = (1, 6)


def _blackjax_version() -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in version("blackjax").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return None


class BlackJaxNutsBackend(JaxNutsBackend):
    """BlackJAX's NUTS with window adaptation, through PyMC's JAX sampling path.

    Its gradient costs what any JAX gradient costs; BlackJAX's Python-level sampling loop adds
    a per-draw dispatch (it scans over draws, so the overhead is small on CPU) and it compiles
    the adaptation and the sampling loop separately, so its fixed cost is higher than NumPyro's.
    """

    def __init__(self) -> None:
        super().__init__(name="blackjax_nuts", jax_sampler="blackjax")
        self.description = "BlackJAX NUTS (window adaptation) on JAX, CPU or GPU [plugin]"

    def candidates(self, profile, devices):
        """JaxNutsBackend's candidates, unless the installed BlackJAX cannot run under PyMC."""
        found = _blackjax_version()
        if found is not None and found >= FIRST_INCOMPATIBLE:
            return [Refusal(self.name, f"blackjax {'.'.join(map(str, found))} is incompatible with "
                            "PyMC 6.4's BlackJAX path: pip install 'blackjax<1.6'")]
        return super().candidates(profile, devices)

    def estimate(self, candidate, profile, machine):
        """NumPyro's JAX estimate with a second compile (adaptation and sampling loops)."""
        base = super().estimate(candidate, profile, machine)
        fixed = Figure(base.fixed_seconds.value * 1.5, "modelled", "two XLA programs")
        return type(base)(
            seconds_per_gradient=base.seconds_per_gradient,
            gradients_per_draw=base.gradients_per_draw,
            fixed_seconds=fixed,
            chain_parallelism=base.chain_parallelism,
            memory_bytes=base.memory_bytes,
        )


@hookimpl
def pymc_accel_backends():
    """The backends this plugin provides."""
    return [BlackJaxNutsBackend()]
