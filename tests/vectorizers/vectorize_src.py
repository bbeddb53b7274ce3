"""Functions the vectorize, guvectorize and Reduce tests build their ufuncs and reductions from (source files:
cujit compiles from source), each beside the numpy expression that computes the same."""

import math

import numpy as np

DTYPES = (
    "bool_",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
NUMBERS = DTYPES[1:]  # the dtypes + and * keep (bool + bool is an int in numba, as in Python)


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def maximum(a, b):
    return max(a, b)


def axpb(a, x, b):
    """Three inputs: a * x + b."""
    return a * x + b


def sin_scale(x, s):
    return math.sin(x) * s


def divide(a, b):
    """int / int is a float64 in numba: the result type a signature without one infers."""
    return a / b


def clip01(x):
    if x < 0:
        return 0.0
    if x > 1:
        return 1.0
    return x


def no_inputs():
    return 1


def row_scale(x, a, out):
    """guvectorize '(n),()->(n)'."""
    for i in range(x.shape[0]):
        out[i] = x[i] * a


def dot(x, y, r):
    """guvectorize '(n),(n)->()' with a 1-D output of one element."""
    s = 0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    r[0] = s


def matmul(a, b, c):
    """guvectorize '(m,n),(n,p)->(m,p)'."""
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc


def sum_and_max(x, total, largest):
    """guvectorize '(n)->(),()': two outputs."""
    s = x[0]
    m = x[0]
    for i in range(1, x.shape[0]):
        s += x[i]
        m = max(m, x[i])
    total[0] = s
    largest[0] = m


def cumsum(x, out):
    """guvectorize '(n)->(n)'."""
    acc = x[0]
    out[0] = acc
    for i in range(1, x.shape[0]):
        acc += x[i]
        out[i] = acc


def random_array(rng, dtype, shape):
    """Fresh random data of ``dtype``, in ranges where + and * of two elements stay exact in integers."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low = max(info.min, -100) if dtype.kind == "i" else 0
        return rng.integers(low, min(info.max, 100), size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "f":
        return (rng.random(shape) * 4 - 2).astype(dtype)
    return ((rng.random(shape) * 4 - 2) + 1j * (rng.random(shape) * 4 - 2)).astype(dtype)
