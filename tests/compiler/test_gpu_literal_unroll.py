"""literal_unroll on a GPU: the versioned copies run in order with their own element types, break/continue/else
behave as Python's loop over the same tuple (the same function run on the host with an identity literal_unroll
gives the expected values), on fresh random data."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda
from cujit.cuda import literal_unroll

pytestmark = gpu_support.gpu


def host_literal_unroll(t):
    return t


def on_host(fn, *args):
    """Runs the kernel's Python function on the host, literal_unroll taken as the identity."""
    g = dict(fn.__globals__, literal_unroll=host_literal_unroll)
    clone = type(fn)(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    clone(*args)


def mixed(out, a, b, c, d):
    i = 0
    for x in literal_unroll((a, b, c, d)):
        out[i] = x * 3 + 1
        i += 1


def test_each_element_in_order(rng):
    a, b = np.int32(rng.integers(-50, 50)), np.float32(rng.standard_normal())
    c, d = bool(rng.integers(0, 2)), np.int64(rng.integers(-(2**40), 2**40))
    out = cuda.device_array(4, np.float64)
    cuda.jit(mixed)[1, 1](out, a, b, c, d)
    expected = np.zeros(4)
    on_host(mixed, expected, a, b, c, d)
    # (b * 3 + 1 in float32 is contracted to an fma: near b = -1/3 it differs from Python's two roundings by an
    # ulp of 1.0, which rtol alone cannot take)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6, atol=2e-7)


def arrays(out, a, b, c):
    for arr in literal_unroll((a, b, c)):
        for k in range(arr.size):
            out[k] += arr[k]


def test_arrays_of_different_dtypes(rng):
    a = rng.integers(-10, 10, 8).astype(np.int16)
    b = rng.standard_normal(8).astype(np.float32)
    c = rng.standard_normal(8)
    out = cuda.to_device(np.zeros(8))
    cuda.jit(arrays)[1, 1](out, cuda.to_device(a), cuda.to_device(b), cuda.to_device(c))
    expected = np.zeros(8)
    on_host(arrays, expected, a, b, c)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6)


def jumps(out, a, b, c, d):
    for x in literal_unroll((a, b, c, d)):
        if x < 0:
            continue
        if x > 5:
            break
        out[0] += x
    else:
        out[1] = 1
    for x in literal_unroll((a, b, c, d)):
        if x > 5:
            break
        out[2] += x
    else:
        out[3] = 1
    for x in literal_unroll((a, b, c, d)):
        if x < 0:
            continue
        out[4] += x
    else:
        out[5] = 1


@pytest.mark.parametrize("trial", range(4))
def test_break_continue_else_as_python(rng, trial):
    a = np.int32(rng.integers(-3, 8))
    b = np.float64(rng.uniform(-3, 8))
    c = np.int64(rng.integers(-3, 8))
    d = np.float32(rng.uniform(-3, 8))
    out = cuda.to_device(np.zeros(6))
    cuda.jit(jumps)[1, 1](out, a, b, c, d)
    expected = np.zeros(6)
    on_host(jumps, expected, a, b, c, d)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6)
