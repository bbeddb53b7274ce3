"""Ellipsis indexing (`a[..., 0]`, `a[0, ...]`, `a[...]`): numba's view types and layouts (checked against
numba-cuda 0.30.4's arraydecl rules: an F array keeps F under `[..., k]`, a C array keeps C under `[k, ...]`)."""

import re

import pytest

from cujit import cuda, errors, float32, void


def take_last(a, out):
    v = a[..., 1]
    out[0] = v[0]


def take_first(a, out):
    v = a[1, ...]
    out[0] = v[0]


def take_all(a, out):
    v = a[...]
    out[0] = v[0, 0]


def take_middle(a, out):
    v = a[0, ..., 1]
    out[0] = v[0]


def two_ellipses(a, out):
    out[0] = a[..., ...][0]


def view_type(pyfunc, arytype):
    kernel = cuda.jit(pyfunc).compile(void(arytype, float32[::1]), cc=(8, 0))
    return dict(kernel.typed.variables)["v"].name


@pytest.mark.parametrize(
    "pyfunc, arytype, expected",
    [
        (take_last, float32[::1, :], "array(float32, 1d, F)"),
        (take_last, float32[:, ::1], "array(float32, 1d, A)"),
        (take_first, float32[:, ::1], "array(float32, 1d, C)"),
        (take_first, float32[::1, :], "array(float32, 1d, A)"),
        (take_all, float32[:, ::1], "array(float32, 2d, C)"),
        (take_middle, float32[:, :, :], "array(float32, 1d, A)"),
    ],
    ids=["F[...,k]", "C[...,k]", "C[k,...]", "F[k,...]", "C[...]", "A[k,...,k]"],
)
def test_ellipsis_view_types(pyfunc, arytype, expected):
    assert view_type(pyfunc, arytype) == expected


def test_two_ellipses_are_an_error():
    with pytest.raises(errors.TypingError, match="single ellipsis"):
        cuda.compile_ptx(two_ellipses, void(float32[:, ::1], float32[::1]), cc=(8, 0))


def compare_and_swap(a, old, val, out):
    out[0] = cuda.atomic.compare_and_swap(a, old, val)


def test_compare_and_swap_is_cas_on_element_0():
    """numba's cuda.atomic.compare_and_swap(ary, old, val): a CAS on ary[0], returning the old value."""
    from cujit import int32

    ptx, _ = cuda.compile_ptx(compare_and_swap, void(int32[::1], int32, int32, int32[::1]), cc=(8, 0))
    assert re.search(r"\batom(\.relaxed\.gpu)?\.global\.cas\.b32\b", ptx)  # LLVM 22: with order and scope
