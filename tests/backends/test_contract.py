"""Every built-in backend passes the conformance suite plugin authors run
(:mod:`pymc_accel.testing`): joining the registry means passing it. Plugins in ``plugins/`` run
the same suite in ``tests/plugins/``."""

from __future__ import annotations

from pymc_accel.registry import build_registry
from pymc_accel.testing import BackendConformance

BUILTINS = build_registry(autoload=False).backends


def test_every_builtin_backend_is_in_the_suite():
    assert {"numba", "numpyro"} <= set(BUILTINS)
    suites = {cls.backend.name for cls in BackendConformance.__subclasses__()
              if cls.__module__ == __name__}
    assert suites == set(BUILTINS)


# One conformance class per built-in backend, so a new built-in joins the suite by registering.
for _name, _backend in BUILTINS.items():
    _cls = type(f"TestBuiltin_{_name}", (BackendConformance,), {"backend": _backend})
    _cls.__module__ = __name__
    globals()[_cls.__name__] = _cls
