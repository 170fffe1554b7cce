"""``pm.sample`` arguments that only some samplers honour, and which candidates do.

PyMC's own NUTS runs every argument of ``pm.sample``; its external samplers (nutpie, NumPyro,
BlackJAX) refuse a step method or a per-draw callback, drop the tuning draws, and ignore
``init`` with a warning. A PyTensor compile mode (``backend=`` or ``compile_kwargs["mode"]``) is
honoured by a sampler that compiles the model with that mode's linker: numba's, JAX's, or
another (PyTensor's C linker), which only PyMC's own NUTS runs. A backend says which of these
its candidates honour with the optional ``takes_argument(name, candidate)``; one without it
honours none. Selection refuses a candidate that would drop a *required* argument the caller
gave, naming the fix, and :func:`warn_ignored` warns, as PyMC does, where the chosen one ignores
``init``.
"""

from __future__ import annotations

import warnings
from typing import Any

from pymc_accel.backend import Candidate, SampleRequest, ask_backend

#: Arguments a run must honour once given, with what to do about a sampler that does not.
REQUIRED = {
    "step": ("step= (a step method)", "only PyMC's own sampler runs step methods: use "
             "nuts_sampler='numba' with driver='pymc', or drop step= to sample every variable "
             "with NUTS"),
    "callback": ("callback=", "only PyMC's own sampler calls it after every draw: use "
                 "nuts_sampler='numba' with driver='pymc', or drop callback="),
    "trace": ("trace= (a trace backend)", "only PyMC's own sampler writes to one: use "
              "nuts_sampler='numba' with driver='pymc', or drop trace="),
    "discard_tuned_samples": ("discard_tuned_samples=False", "it returns no tuning draws: use "
                              "nuts_sampler='numba' (either driver), or drop "
                              "discard_tuned_samples=False"),
}
#: A compile mode given, by the linker it compiles with (:func:`compile_mode_linker`).
COMPILE_MODES = {
    "compile_mode:numba": ("a compile mode that compiles with numba (backend= or "
                           "compile_kwargs['mode'])", "the numba backend compiles with numba: use "
                           "nuts_sampler='numba', or drop the mode"),
    "compile_mode:jax": ("a compile mode that compiles with JAX (backend= or "
                         "compile_kwargs['mode'])", "the JAX samplers compile with JAX: use "
                         "nuts_sampler='numpyro', or drop the mode"),
    "compile_mode:other": ("a compile mode that compiles with neither numba nor JAX (backend= "
                           "or compile_kwargs['mode'])", "only PyMC's own NUTS compiles with it: "
                           "use nuts_sampler='pymc' (PyMC's own sampler, untouched), or drop "
                           "the mode to let pymc-accel choose"),
}
REQUIRED.update(COMPILE_MODES)
#: Arguments a sampler may ignore with a warning, as ``pm.sample`` does for its external ones.
ADVISORY = ("init",)
ARGUMENTS = (*REQUIRED, *ADVISORY)


def given(request: SampleRequest) -> tuple[str, ...]:
    """The arguments of :data:`ARGUMENTS` that ``request`` sets away from ``pm.sample``'s
    defaults, in that order."""
    pymc = request.pymc_kwargs
    out = [name for name in ("step", "callback", "trace") if pymc.get(name) is not None]
    if not request.discard_tuned_samples:
        out.append("discard_tuned_samples")
    if pymc.get("init", "auto") != "auto":
        out.append("init")
    family = compile_mode_linker(pymc)
    if family is not None:
        out.append(f"compile_mode:{family}")
    return tuple(out)


def compile_mode_linker(pymc_kwargs: dict[str, Any]) -> str | None:
    """The linker of the compile mode ``pm.sample``'s ``backend=`` or ``compile_kwargs["mode"]``
    gives: ``"numba"``, ``"jax"`` or ``"other"``; ``None`` where neither is given.

    Raises
    ------
    ValueError
        Both are given (``pm.sample`` refuses that too, from inside PyTensor), or the mode is
        not one PyTensor knows.
    """
    from pytensor.compile.mode import get_mode
    from pytensor.link.jax.linker import JAXLinker
    from pytensor.link.numba.linker import NumbaLinker

    backend = pymc_kwargs.get("backend")
    mode = (pymc_kwargs.get("compile_kwargs") or {}).get("mode")
    if backend is not None and mode is not None:
        raise ValueError("Give a compile mode once: backend= or compile_kwargs['mode'], not "
                         "both (as pm.sample)")
    if backend is None and mode is None:
        return None
    given = "cvm" if backend == "c" else (backend if backend is not None else mode)
    try:  # PyMC's own reading of backend= (pymc.pytensorf.resolve_backend_compile_kwargs)
        linker = get_mode(given).linker
    except Exception as exc:
        where = "backend" if backend is not None else "compile_kwargs['mode']"
        raise ValueError(f"{where}={given!r} is not a PyTensor compile mode: give 'numba', "
                         f"'jax' or 'c' ({exc})") from None
    if isinstance(linker, NumbaLinker):
        return "numba"
    return "jax" if isinstance(linker, JAXLinker) else "other"


def takes_argument(backend: Any, name: str, candidate: Candidate) -> bool:
    """The backend's optional ``takes_argument`` for ``candidate``; ``False`` for a backend
    without it, or whose method raises (its run would drop the argument silently)."""
    return bool(ask_backend(backend, "takes_argument", name, candidate, default=False))


def refusal_reason(names: list[str], candidate: Candidate) -> str:
    """Why ``candidate`` is refused when it would drop the required arguments ``names``."""
    what = " and ".join(REQUIRED[n][0] for n in names)
    fixes = "; ".join(REQUIRED[n][1] for n in names)
    verb = "were" if len(names) > 1 else "was"
    return f"{what} {verb} given and {candidate.label} does not honour it: {fixes}"


def warn_ignored(backend: Any, candidate: Candidate, request: SampleRequest) -> None:
    """Warn, as ``pm.sample`` does for its external samplers, about each advisory argument
    ``request`` gives that the chosen candidate ignores."""
    if "init" in given(request) and not takes_argument(backend, "init", candidate):
        init = request.pymc_kwargs["init"]
        warnings.warn(
            f"init={init!r} is ignored by {candidate.label}: it starts from PyMC's jittered "
            "initial point and adapts its own step size and mass matrix. Use "
            "nuts_sampler='numba' with driver='pymc' to run PyMC's initialisation.",
            UserWarning, stacklevel=3,
        )
