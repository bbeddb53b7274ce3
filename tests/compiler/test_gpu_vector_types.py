"""CUDA vector types on a GPU (kernels in vector_types_src.py), against numpy on fresh random data: each of the
40 types built and read back, every construction form, the CUDA C aliases, float32x3 cross products through
device functions, Optional vectors and tuples of them, Dim3 values of every thread of a 3-D launch, and float4,
double2, uchar2 and short3 passed by value to and from CUDA C++ (declare_device)."""

import numpy as np
import pytest

import gpu_support

import vector_types_src as V
from cujit import cuda

pytestmark = gpu_support.gpu + [
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]


def random_of(rng, dtype, n):
    """n random values spanning `dtype`'s range (integers) or [-1000, 1000) (floats)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.uniform(-1000, 1000, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def run(fn, *arrays, griddim=1, blockdim=1, **options):
    device = [cuda.to_device(a) for a in arrays]
    cuda.jit(fn, **options)[griddim, blockdim](*device)
    return [d.copy_to_host() for d in device]


@pytest.mark.parametrize("name", V.NAMES)
def test_each_type_holds_its_components(rng, name):
    dtype = np.dtype(name[:-2])
    a = random_of(rng, dtype, 4)
    res = run(V.make_readout(name), np.zeros(int(name[-1]), dtype), a)[0]
    np.testing.assert_array_equal(res, a[: int(name[-1])])


@pytest.mark.parametrize("base", V.BASES)
def test_every_construction_form(rng, base):
    a = random_of(rng, base, 4)
    res = run(V.make_mixed(base), np.zeros(66, base), a)[0]
    np.testing.assert_array_equal(res, a[np.concatenate(V.MIXED_COMPONENTS)])


def test_cuda_c_aliases(rng):
    a = rng.integers(0, 40, 4).astype(np.float64)
    res = run(V.aliases, np.zeros(8), a)[0]
    i = a.astype(np.int64)
    expected = [a.sum(), a[0] * a[1], i[0] - i[1], i.sum(), i[2] * i[3], i[:3].sum(), i[2] + i[3], i[1:].sum()]
    np.testing.assert_array_equal(res, expected)


def test_cross_products_through_device_functions(rng):
    n = 1000
    a = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    out = run(V.cross_products, np.zeros((n, 4), np.float32), a, b, griddim=(n + 127) // 128, blockdim=128)[0]
    c = np.cross(a, b)
    np.testing.assert_allclose(out[:, :3], c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:, 3], (c * a).sum(axis=1), rtol=1e-4, atol=1e-6)


def test_optional_vectors_and_tuples_of_vectors(rng):
    n = 500
    a = rng.uniform(-1, 1, n)
    out = run(V.optional_vectors, np.zeros((n, 2)), a, griddim=(n + 127) // 128, blockdim=128)[0]
    np.testing.assert_allclose(out[:, 0], a)
    np.testing.assert_array_equal(out[:, 1], np.where(a > 0, -a, -1.0))


def test_dim3_values_of_every_thread():
    grid, block = (3, 2, 2), (4, 3, 2)
    threads, blocks = int(np.prod(block)), int(np.prod(grid))
    out = run(V.dim3_values, np.full((threads * blocks, 4), -1, np.int64), griddim=grid, blockdim=block)[0]
    expected = np.empty_like(out)
    for bz, by, bx in np.ndindex(grid[::-1]):
        for tz, ty, tx in np.ndindex(block[::-1]):
            thread = tx + block[0] * (ty + block[1] * tz)
            b = bx + grid[0] * (by + grid[1] * bz)
            expected[b * threads + thread] = [thread, b, tx + ty + tz, bx + by + bz]
    np.testing.assert_array_equal(out, expected)


@gpu_support.needs_device("links CUDA C++")
@pytest.mark.parametrize("lto", [False, True], ids=["ptx", "lto"])
def test_vectors_by_value_to_and_from_cuda_cpp(rng, lto):
    n = 300
    f = rng.uniform(-10, 10, (n, 4)).astype(np.float32)
    d = rng.uniform(-10, 10, (n, 2))
    u = rng.integers(0, 256, (n, 2), dtype=np.uint8)
    s = np.zeros((n, 4), np.int16)
    s[:, :3] = rng.integers(-1000, 1000, (n, 3))
    got_f, got_d, got_u, got_s = run(V.declared_vectors, f, d, u, s, griddim=(n + 63) // 64, blockdim=64, lto=lto)
    np.testing.assert_array_equal(got_f, f * np.float32(2))
    np.testing.assert_array_equal(got_d, np.stack([d[:, 0] + d[:, 1], d[:, 1] + 1.0], axis=1))
    np.testing.assert_array_equal(got_u, u[:, ::-1])
    np.testing.assert_array_equal(got_s[:, 3], s[:, :3].astype(np.int64).sum(axis=1))
