"""Kernels that raise (raise statements, assert, a raise in a device function), for test_exceptions.py (compiled
without a GPU) and test_gpu_exceptions.py (launched with and without debug=True)."""

from cujit import cuda


class BadValue(Exception):
    pass


@cuda.jit(device=True)
def checked_double(x, limit):
    if x > limit:
        raise BadValue("value over the limit", 7)
    return x * 2


def raise_at(a, bad):
    # The thread at index `bad` raises; every other thread doubles its item.
    i = cuda.grid(1)
    if i < a.shape[0]:
        if i == bad:
            raise ValueError("bad index")
        a[i] = a[i] * 2


def assert_positive(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        assert a[i] > 0, "items must be positive"
        a[i] = -a[i]


def assert_without_message(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        assert a[i] != 0
        a[i] = 1 / a[i]


def through_device_function(a, limit):
    x, y = cuda.grid(2)
    if x < a.shape[0] and y < a.shape[1]:
        a[x, y] = checked_double(a[x, y], limit)
