from __future__ import annotations

import types

import pytest

from pymc_accel.backends.swaps import swapped


def test_the_first_block_swaps_and_the_last_puts_back():
    module = types.SimpleNamespace(f=lambda: "original")
    made = []

    def wrapper_of(original):
        made.append(original)
        return lambda: "wrapped " + original()

    with swapped(module, "f", wrapper_of) as first:
        assert module.f() == "wrapped original" and first() == "original"
        with swapped(module, "f", wrapper_of) as second:  # overlapping: shares the wrapper
            assert second is first
        assert module.f() == "wrapped original"  # the outer block still holds it
    assert module.f() == "original" and len(made) == 1


def test_the_swap_is_undone_when_the_block_raises():
    original = lambda: "original"  # noqa: E731
    module = types.SimpleNamespace(f=original)
    with pytest.raises(RuntimeError):
        with swapped(module, "f", lambda o: lambda: "wrapped"):
            raise RuntimeError
    assert module.f is original


def test_a_wrapper_maker_that_raises_leaves_the_next_block_swapping():
    original = lambda: "original"  # noqa: E731
    module = types.SimpleNamespace(f=original)

    def raising(o):
        raise RuntimeError("cannot wrap")

    with pytest.raises(RuntimeError, match="cannot wrap"):
        with swapped(module, "f", raising):
            pass
    assert module.f is original
    with swapped(module, "f", lambda o: lambda: "wrapped " + o()):
        assert module.f() == "wrapped original"
    assert module.f is original
