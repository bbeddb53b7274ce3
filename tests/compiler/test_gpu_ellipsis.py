"""Ellipsis views and compare_and_swap on the GPU, against numpy."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda

pytestmark = gpu_support.gpu


def column_and_row(a, col, row):
    i = cuda.grid(1)
    c = a[..., 1]
    r = a[2, ...]
    if i < c.shape[0]:
        col[i] = c[i]
    if i < r.shape[0]:
        row[i] = r[i]


def swap_first(a, old, val, out):
    if cuda.grid(1) == 0:
        out[0] = cuda.atomic.compare_and_swap(a, old, val)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ellipsis_views_match_numpy(order):
    a = np.asarray(np.random.default_rng().random((37, 19)), order=order)
    col, row = np.zeros(37), np.zeros(19)
    cuda.jit(column_and_row)[1, 64](a, col, row)
    np.testing.assert_array_equal(col, a[..., 1])
    np.testing.assert_array_equal(row, a[2, ...])


def test_compare_and_swap():
    a = np.array([7, 1, 2], np.int32)
    out = np.zeros(1, np.int32)
    kernel = cuda.jit(swap_first)
    kernel[1, 32](a, np.int32(7), np.int32(42), out)
    assert out[0] == 7 and a[0] == 42 and list(a[1:]) == [1, 2]
    kernel[1, 32](a, np.int32(7), np.int32(99), out)  # old value does not match: no swap
    assert out[0] == 42 and a[0] == 42
