"""Chains side by side share the cores' BLAS threads."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_info

from pymc_accel.backends.blas_threads import blas_threads_per_chain, limit_blas


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_blas_threads_are_the_cores_shared_among_the_chains_running_at_once():
    assert blas_threads_per_chain(2, 2) == 1  # the 2-core machine: one thread per chain
    assert blas_threads_per_chain(4, 2) == 2
    assert blas_threads_per_chain(2, 4) == 1  # more chains than cores: still one each
    assert blas_threads_per_chain(8, 1) == 8
    assert blas_threads_per_chain(None, 2) == 1


def test_the_limit_holds_scipys_blas_which_jax_and_numba_call():
    before = _blas_threads()
    with limit_blas("auto", 2, 2):
        libraries = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
        # SciPy's OpenBLAS (loaded by the limit itself where nothing had) is among those held
        assert any("scipy" in lib["filepath"] for lib in libraries)
        assert {lib["num_threads"] for lib in libraries} == {1}
    assert _blas_threads() == before


@pytest.mark.parametrize(("blas_cores", "cores", "chains", "threads"),
                         [("auto", 4, 2, 2), (4, 2, 2, 2), (3, 8, 2, 1), (1, 8, 4, 1),
                          (4, 2, 4, 2)])  # four chains on two cores: two at once
def test_blas_cores_is_every_chains_threads_together(blas_cores, cores, chains, threads):
    with limit_blas(blas_cores, cores, chains):
        assert _blas_threads() == {threads}


def test_blas_cores_none_leaves_blas_as_it_is():
    before = _blas_threads()
    with limit_blas(None, 2, 2):
        assert _blas_threads() == before


@pytest.mark.parametrize("blas_cores", ["all", 0, -2, 1.5, True])
def test_a_blas_cores_pm_sample_would_refuse_is_refused(blas_cores):
    with pytest.raises(ValueError, match="blas_cores must be a positive int, 'auto' or None"):
        limit_blas(blas_cores, 2, 2)


def test_the_limit_is_set_on_entering_the_block_not_when_made():
    # a run that fails between making its limit and entering it leaves BLAS as it was
    before = _blas_threads()
    limit = limit_blas("auto", 2, 2)
    assert _blas_threads() == before
    with limit:
        assert _blas_threads() == {1}
    assert _blas_threads() == before
