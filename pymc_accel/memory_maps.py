"""A JAX candidate's XLA program on the CPU against the process's limit on memory maps.

XLA's CPU runtime compiles a program's kernels apart and maps each one's code into the
process's memory. An op that JAX lowers to a program of its own
(:data:`pymc_accel.costmodel.XLA_PROGRAM_OPS`: ``pt.linalg.expm``) brings hundreds of kernels,
so a model with many of them takes tens of thousands of maps. Past Linux's
``vm.max_map_count`` (65,530 by default) LLVM cannot allocate the next one, and the process
ends ("LLVM ERROR: Unable to allocate section memory") with no error to catch: the user sweep's
Markov chain of 60 matrix exponentials ended DEER-MALA's and BlackJAX's processes so, and
NumPyro's once in three runs. The maps of a run's programs stay until they are freed, so a
second run in the process starts from more.

Counted here per op in the census and per sampler, the peak of a run of 10 + 10 draws over the
maps in use before it (``bench/count_xla_memory_maps.py``). A candidate whose run would take
the process past :data:`HEADROOM` of the limit is refused with the figures and the fix. Where the
limit or the maps in use cannot be read (not Linux), nothing is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from pymc_accel.profile import ModelProfile

#: Where Linux keeps the limit on a process's memory maps.
LIMIT_FILE = "/proc/sys/vm/max_map_count"
#: The process's own maps, one a line.
MAPS_FILE = "/proc/self/maps"
#: Maps a run takes for each :data:`~pymc_accel.costmodel.XLA_PROGRAM_OPS` op in the census,
#: by backend (its program holds the gradient once or several times), and for the rest of its
#: program. A backend not named here is charged the most of those that are.
#: Fitted on the Markov chains at 2 to 32 intervals (4 to 64 ops; docs/results/
#: xla-memory-maps-cpu-2026-12-01.jsonl): NumPyro 694 + 238 an op, BlackJAX's NUTS 673 + 336,
#: DEER-MALA's sequential MALA 1,185 + 585, nutpie on JAX (one jitted gradient) 190 + 104.
MAPS_PER_PROGRAM_OP = {"numpyro": 240, "blackjax_nuts": 340, "deer_mala": 590,
                       "nutpie_jax": 105}
MAPS_PER_RUN = 1200
#: The ops the figures above were fitted on: the incomplete gamma function's programs are
#: loops a few dozen ops long, not counted.
MAPPED_PROGRAM_OPS = ("Expm",)
#: The share of the limit a run may take the process to, by the maps it keeps: LLVM maps more
#: while it compiles, more than a count every 20 ms sees, and how much more varies from run to
#: run. On the chain at 60 intervals (120 ops; docs/results/xla-memory-maps-cpu-2026-12-01-
#: ctmc-60.jsonl, fit-xla-program-ops-fixed-cpu-2026-12-01-ctmc-60.txt, and the user sweep's
#: tenth set): NumPyro, expected at 31,000 with the maps in use, ran twice (peak 30,427) and
#: once ended its process; BlackJAX's NUTS, expected at 43,000, and DEER-MALA, at 72,000, ended
#: theirs. DEER-MALA at 32 intervals (64 ops, 39,800) ran, and every run under 24,000 did. At
#: 0.45 of 65,530 (29,500) each run that ended its process is refused, and of those that ran
#: only DEER-MALA's at 32 intervals would have been.
HEADROOM = 0.45


def map_limit() -> int | None:
    """The system's limit on a process's memory maps, or ``None`` where it cannot be read."""
    try:
        with open(LIMIT_FILE) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def maps_in_use() -> int | None:
    """This process's memory maps now, or ``None`` where they cannot be counted."""
    try:
        with open(MAPS_FILE) as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def maps_needed(profile: ModelProfile, backend: str) -> int:
    """Memory maps a run of ``backend`` on ``profile``'s model is expected to add; 0 for a
    model without :data:`~pymc_accel.costmodel.XLA_PROGRAM_OPS` ops (its program's maps are
    a few hundred)."""
    from pymc_accel.costmodel import xla_program_ops

    ops = sum(n for op, n in xla_program_ops(profile).items() if op in MAPPED_PROGRAM_OPS)
    if not ops:
        return 0
    per_op = MAPS_PER_PROGRAM_OP.get(backend, max(MAPS_PER_PROGRAM_OP.values()))
    return MAPS_PER_RUN + per_op * ops


def process_maps() -> tuple[int | None, int | None]:
    """``(map_limit(), maps_in_use())``: what :func:`refusal_reason` sets a run against."""
    return map_limit(), maps_in_use()


def refusal_reason(profile: ModelProfile, backend: str,
                   maps: Callable[[], tuple[int | None, int | None]] = process_maps
                   ) -> str | None:
    """Why a CPU run of ``backend`` on ``profile``'s model would end the process, or ``None``
    when it fits under :data:`HEADROOM` of the limit (or the limit is not known).

    ``maps`` gives the limit and the maps in use (:func:`process_maps`), called only for a
    model with program ops: a selection passes one that reads them once for all its
    candidates."""
    needed = maps_needed(profile, backend)
    if not needed:
        return None
    limit, used = maps()
    if limit is None or used is None or used + needed <= HEADROOM * limit:
        return None
    from pymc_accel.costmodel import program_ops_listing

    return (f"its XLA program would map about {needed:,} more memory regions "
            f"({program_ops_listing(profile)} in the "
            f"log density and its gradient, each compiled by JAX as a program of its own) "
            f"where this process has {used:,} and the system allows {limit:,} "
            f"(vm.max_map_count); runs past {HEADROOM:.0%} of the limit have ended the "
            f"process inside LLVM's compile, with no error to catch. Use "
            f"nuts_sampler='numba', sample in a new process, or raise the limit "
            f"(sudo sysctl -w vm.max_map_count=262144)")
