"""XLA's CPU reductions kept out of YNNPACK, set in ``XLA_FLAGS`` before JAX starts.

From jaxlib 0.10.2 XLA hands a CPU reduction (a sum over an axis) to the YNNPACK library as a
fusion of its own. On the row sums of regression gradients that library took 4-5 ns an
element, where XLA's own loops take 1-2: seed_mid's gradient ran 1.8-2.1x faster with the
reductions left to XLA, ordinal_9's 1.4x, and NumPyro's leapfrog 1.45-1.75x and 1.2-1.3x, with
no model's leapfrog slower beyond its timing's spread (docs/benchmarks.md, "XLA's YNNPACK
reductions left to XLA").
XLA's flag ``--xla_cpu_experimental_ynn_fusion_type`` lists the op kinds handed to YNNPACK;
``-reduce`` takes reductions off that list.

XLA ends the process on a flag it does not know, so the flag is set only for the jaxlib
releases checked to parse it, and never over a setting of the user's own.
``PYMC_ACCEL_XLA_TUNING=off`` leaves ``XLA_FLAGS`` as it is. Like every XLA flag it applies to
the whole process (the user's own JAX programs too), and it is read once, when JAX starts.
"""

from __future__ import annotations

import os
import re

from pymc_accel.switches import switched_on

#: The switch that leaves ``XLA_FLAGS`` as the user set it.
SWITCH = "PYMC_ACCEL_XLA_TUNING"
#: XLA's flag naming the CPU op kinds it hands to YNNPACK.
YNN_FUSION_FLAG = "--xla_cpu_experimental_ynn_fusion_type"
#: What pymc-accel asks: reductions left to XLA's own loops.
YNN_REDUCE_OFF = f"{YNN_FUSION_FLAG}=-reduce"
#: jaxlib releases whose XLA parses the flag: from 0.8.1 (0.7.2 and 0.8.0 end the process on
#: it) up to the newest checked (bench/check_ynn_flag_releases.py, which started JAX with it on
#: 0.8.1, 0.10.0, 0.10.2, 0.11.2 and 0.12.0.1). A later jaxlib may have dropped an experimental
#: flag, and XLA would end the process, so it gets XLA's defaults until checked.
CHECKED_JAXLIB = ((0, 8, 1), (0, 13))


def jaxlib_release() -> tuple[int, ...] | None:
    """The installed jaxlib's release as numbers (``(0, 12, 0, 1)``), or None without jaxlib.

    Read from the package's metadata, without importing jaxlib (which would not start JAX, but
    costs 0.2 s), by the machine key's lookup, which keeps it for the process.
    """
    from pymc_accel import machine

    text = machine.library_versions(("jaxlib",))["jaxlib"]
    match = re.match(r"\d+(?:\.\d+)*", text)
    return tuple(int(part) for part in match.group(0).split(".")) if match else None


def flag_parsed_by(release: tuple[int, ...] | None) -> bool:
    """Whether jaxlib ``release`` is one of those checked to parse :data:`YNN_FUSION_FLAG`."""
    low, high = CHECKED_JAXLIB
    return release is not None and low <= release < high


def keep_reductions_out_of_ynnpack() -> bool:
    """Add :data:`YNN_REDUCE_OFF` to ``XLA_FLAGS``, for whenever JAX starts in this process.

    Nothing is added where the user's ``XLA_FLAGS`` already name the flag, where
    ``PYMC_ACCEL_XLA_TUNING`` is off, or where the installed jaxlib is not one checked to parse
    it (:data:`CHECKED_JAXLIB`). No effect on a JAX that has already started. Called when
    pymc_accel is imported and at device discovery.

    Returns
    -------
    bool
        Whether ``XLA_FLAGS`` now holds pymc-accel's setting.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if YNN_REDUCE_OFF in flags.split():
        return True
    if YNN_FUSION_FLAG in flags or not switched_on(SWITCH):
        return False
    if not flag_parsed_by(jaxlib_release()):
        return False
    # first, not last: pymc.sampling.jax, on import, deletes from XLA_FLAGS the host device
    # count and everything after it up to the last space, and puts a count of 100 first. A
    # count left last (no space after it) survives, and XLA takes the last count it reads;
    # a flag after it would have made JAX start with 100 CPU devices.
    os.environ["XLA_FLAGS"] = f"{YNN_REDUCE_OFF} {flags}".strip()
    return True
