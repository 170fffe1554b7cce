"""pymc-accel's on/off environment switches (``PYMC_ACCEL_HISTORY``, ``PYMC_ACCEL_PROFILE_CACHE``,
``PYMC_ACCEL_FIRST_USE``, ``PYMC_ACCEL_TRY_RUNNER_UP``, ``PYMC_ACCEL_JAX_CACHE``,
``PYMC_ACCEL_XLA_TUNING``), read the same way everywhere."""

from __future__ import annotations

import os
import warnings

OFF = frozenset({"off", "0", "no", "false"})
ON = frozenset({"on", "1", "yes", "true", ""})
_warned: set[tuple[str, str]] = set()


def switched_on(name: str) -> bool:
    """Whether the switch ``name`` is on: unset or one of :data:`ON`; off for one of :data:`OFF`.

    Any other value leaves the switch on, with a warning naming the values it takes (once per
    name and value): ``false`` used to be read as on by two of the three switches.
    """
    value = os.environ.get(name, "on").strip().lower()
    if value in OFF:
        return False
    if value not in ON and (name, value) not in _warned:
        _warned.add((name, value))
        warnings.warn(f"{name}={os.environ[name]!r} is not a switch value: it is left on. Use "
                      "off (or 0, no, false) to turn it off, on (or 1, yes, true) to keep it on.",
                      UserWarning, stacklevel=3)
    return True
