"""BLAS threads for chains that run side by side on the CPU.

OpenBLAS, which NumPy and SciPy ship and which both numba's and JAX's linear algebra on the CPU
call (jaxlib's LAPACK kernels take SciPy's), starts a thread per core for each call. Chains
side by side each make such calls, and two callers of a threaded OpenBLAS take turns on its
thread pool. Measured on the 2-core machine: PyMC's NUTS on the marginal GP (N = 200) took
59 s with the default and 9 s with one BLAS thread a chain; NumPyro's gradient there took
6.2 ms on each of two XLA CPU devices against 2.4 ms on one, and 2.1 against 2.0 ms with one
thread each (docs/benchmarks.md, "One BLAS thread a chain for the JAX samplers").

``pm.sample`` limits BLAS to ``blas_cores`` in all (``"auto"``: its ``cores``) while it
initialises, and around its external samplers only where its chains are not forked; its own
chain processes, forked afterwards, started with a thread per core each (two chains on two
cores ran four); PyMC's JAX samplers (``sample_jax_nuts``) are not limited at all. The
backends that run chains side by side limit it here, around the whole call (forked chains
inherit the limit), with threadpoolctl (a PyMC dependency), to each chain's share of the cores.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def blas_threads_per_chain(cores: int | None, chains: int) -> int:
    """BLAS threads for each chain: the cores shared among the chains running at once."""
    cores = max(1, cores or 1)
    return max(1, cores // max(1, min(chains, cores)))


def limit_blas(blas_cores: Any, cores: int | None, chains: int):
    """A context that limits BLAS to each chain's share of the threads while ``chains`` run
    side by side.

    Parameters
    ----------
    blas_cores : int, "auto" or None
        ``pm.sample``'s argument: the BLAS threads of all chains together (``"auto"``:
        ``cores``; ``None``: BLAS left as it is).
    cores : int or None
        Cores the chains share.
    chains : int
        Chains of the run; at most ``cores`` of them run at the same time.

    Returns
    -------
    context manager
        Limits BLAS (threadpoolctl's ``threadpool_limits``) on entering and restores it on
        leaving; does nothing for ``blas_cores=None``.
    """
    if blas_cores is None:
        return contextlib.nullcontext()
    if blas_cores == "auto":
        threads = blas_threads_per_chain(cores, chains)
    elif isinstance(blas_cores, int) and not isinstance(blas_cores, bool) and blas_cores > 0:
        at_once = min(chains, cores) if cores else chains  # as pm.sample divides it
        threads = max(1, blas_cores // max(1, at_once))
    else:
        raise ValueError(f"blas_cores must be a positive int, 'auto' or None, not {blas_cores!r}")
    return _limited(threads)


@contextlib.contextmanager
def _limited(threads: int) -> Iterator[None]:
    """BLAS at ``threads`` threads inside the block, as it was after: set on entering, where
    threadpoolctl's own object sets it when made, so a limit made and never entered (a run
    that failed before its block) would have stayed on the process."""
    # threadpoolctl limits the libraries loaded when it is called: load SciPy's OpenBLAS, which
    # numba's and jaxlib's LAPACK calls use and NumPy's import does not load, first
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    with threadpool_limits(threads, user_api="blas"):
        yield
