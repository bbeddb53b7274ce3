"""raise and assert on a GPU (kernels in exceptions_src.py): with debug=True the launch raises the kernel's
exception class with numba-cuda's message (function, file, line, tid=[z, y, x] ctaid=[z, y, x]), the first
failing thread's position, and the other threads' work done; without debug the raising thread stops silently
and the rest of the grid runs. Data is fresh and random; expectations come from numpy."""

import os
import re

import numpy as np
import pytest

import gpu_support

import exceptions_src as X
from cujit import cuda
from source_lines import source_position

pytestmark = gpu_support.gpu + [
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]


def test_debug_raise_reports_class_message_and_thread(rng):
    n = 1000
    bad = int(rng.integers(0, n))
    a = rng.uniform(-1, 1, n)
    d = cuda.to_device(a)
    kernel = cuda.jit(debug=True, opt=False)(X.raise_at)
    with pytest.raises(ValueError) as info:
        kernel[8, 128](d, bad)
    line = source_position(X.raise_at, 'raise ValueError("bad index")')[0]
    expected = (
        f"In function 'raise_at', file {os.path.abspath(X.__file__)}, line {line}, "
        f"tid=[0, 0, {bad % 128}] ctaid=[0, 0, {bad // 128}]: bad index"
    )
    assert str(info.value) == expected
    got = d.copy_to_host()
    others = np.arange(n) != bad
    np.testing.assert_array_equal(got[others], a[others] * 2)
    assert got[bad] == a[bad]
    # The channel is reset for the next launch: no thread raises now.
    kernel[8, 128](d, -1)
    np.testing.assert_array_equal(d.copy_to_host()[others], a[others] * 4)


def test_debug_assert_raises_assertion_error(rng):
    a = rng.uniform(0.5, 2, 500)
    kernel = cuda.jit(debug=True, opt=False)(X.assert_positive)
    kernel[4, 128](a)
    np.testing.assert_array_equal(a < 0, True)  # all passed and were negated
    with pytest.raises(AssertionError, match=r"tid=\[0, 0, \d+\] ctaid=\[0, 0, \d\]: items must be positive$"):
        kernel[4, 128](a)
    b = rng.uniform(0.5, 2, 300)
    b[int(rng.integers(0, 300))] = 0
    with pytest.raises(AssertionError) as info:
        cuda.jit(debug=True, opt=False)(X.assert_without_message)[3, 128](b)
    assert re.fullmatch(
        r"In function 'assert_without_message', file .*, line \d+, tid=\[0, 0, \d+\] "
        r"ctaid=\[0, 0, \d\]",
        str(info.value),
    ), str(info.value)


def test_debug_raise_in_a_device_function_reaches_the_host(rng):
    a = rng.uniform(0, 10, (40, 24))
    x, y = (int(v) for v in rng.integers(0, (40, 24)))
    a[x, y] = 50.0
    kernel = cuda.jit(debug=True, opt=False)(X.through_device_function)
    with pytest.raises(X.BadValue) as info:
        kernel[(5, 3), (8, 8)](a, 20.0)
    message, code = info.value.args
    assert code == 7
    assert f"tid=[0, {y % 8}, {x % 8}] ctaid=[0, {y // 8}, {x // 8}]: value over the limit" in message
    assert "In function 'checked_double'" in message


def test_without_debug_the_raising_thread_stops_silently(rng):
    n = 700
    bad = int(rng.integers(0, n))
    a = rng.uniform(-1, 1, n)
    expect = a * 2
    expect[bad] = a[bad]
    cuda.jit(X.raise_at)[6, 128](a, bad)
    np.testing.assert_array_equal(a, expect)
    b = rng.uniform(-1, 1, n)
    expect = np.where(b > 0, -b, b)  # the threads whose assert fails stop before negating
    cuda.jit(X.assert_positive)[6, 128](b)
    np.testing.assert_array_equal(b, expect)
