"""cuda.vectorize, cuda.guvectorize and cuda.Reduce on a GPU: results against numpy on fresh random data for
every dtype, and against numba-cuda 0.30.4's own vectorize, guvectorize and Reduce where it is installed (the
same algorithms in the same order: sums equal bit for bit)."""

import warnings

import numpy as np
import pytest

import gpu_support

import vectorize_src as S
from cujit import cuda, float32, float64, types

pytestmark = gpu_support.gpu

SIZES = [1, 31, 100, 128, 129, 1000, 128 * 64, 128 * 64 + 77, 128 * 64 * 3 + 5, (1 << 20) + 3]


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def ncuda():
    """numba-cuda's ``cuda`` (numba-cuda 0.30.4 on the GPU machine), or a skip."""
    pytest.importorskip("numba")
    np.row_stack = getattr(np, "row_stack", np.vstack)  # numba imports it; numpy 2.4 removed it
    from numba import cuda as numba_cuda

    if not numba_cuda.is_available():
        pytest.skip("numba-cuda sees no GPU")
    return numba_cuda


def nvectorize(sigs):
    """numba's ``@vectorize(sigs, target="cuda")`` (numba-cuda's CUDAVectorize)."""
    import numba

    return numba.vectorize(sigs, target="cuda")


def nguvectorize(sigs, layout):
    import numba

    return numba.guvectorize(sigs, layout, target="cuda")


def _type(dtype):
    return getattr(types, "boolean" if dtype == "bool_" else dtype)


def _binop(dtype):
    return S.maximum if dtype == "bool_" else S.add


def _numba_or_skip(build):
    """numba-cuda's result, or a skip naming why numba-cuda cannot compute it (a dtype it rejects)."""
    try:
        return build()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"numba-cuda cannot do this: {type(e).__name__}: {str(e)[:200]}")


# ---- cuda.vectorize ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", S.DTYPES)
def test_vectorize_every_dtype_against_numpy_and_numba_cuda(dtype, rng, ncuda):
    t = _type(dtype)
    f = _binop(dtype)
    ufunc = cuda.vectorize([t(t, t)])(f)
    a, b = S.random_array(rng, dtype, 10007), S.random_array(rng, dtype, 10007)
    got = ufunc(a, b)
    expect = np.maximum(a, b) if dtype == "bool_" else (a + b).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expect)
    dev = ufunc(cuda.to_device(a), b).copy_to_host()  # device in, device out
    np.testing.assert_array_equal(dev, expect)
    name = "boolean" if dtype == "bool_" else dtype  # numba's type names
    theirs = _numba_or_skip(lambda: nvectorize([f"{name}({name}, {name})"])(f)(a, b))
    np.testing.assert_array_equal(got, theirs)


@pytest.mark.parametrize("dtype", ["int32", "uint16", "float32", "float64", "complex64", "complex128"])
def test_vectorize_three_inputs_scalars_and_broadcasting(dtype, rng, ncuda):
    t = _type(dtype)
    ufunc = cuda.vectorize([t(t, t, t)])(S.axpb)
    a = S.random_array(rng, dtype, (3, 1))
    x = S.random_array(rng, dtype, (4,))
    b = S.random_array(rng, dtype, 1)[0]  # a numpy scalar of the dtype
    got = ufunc(a, x, b)
    expect = (a * x + b).astype(dtype)
    assert got.shape == (3, 4)
    np.testing.assert_allclose(got, expect, rtol=1e-5 if dtype in ("float32", "complex64") else 1e-12)
    theirs = _numba_or_skip(lambda: nvectorize([f"{dtype}({dtype}, {dtype}, {dtype})"])(S.axpb)(a, x, b))
    # numba-cuda 0.30.4 broadcasts a (3, 1) input against a (4,) one wrongly on the GPU (it repeats row i's first
    # result along the row); cujit gives numpy's answer (checked above), and numba-cuda's where that is numpy's.
    rtol = 1e-6 if dtype in ("float32", "complex64") else 1e-14
    if np.allclose(theirs, expect, rtol=rtol * 10):
        np.testing.assert_allclose(got, theirs, rtol=rtol)


def test_vectorize_python_scalars_out_and_streams(rng):
    ufunc = cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])(S.sin_scale)
    x = S.random_array(rng, "float32", (50, 40))
    np.testing.assert_allclose(ufunc(x, 3.0), np.sin(x) * np.float32(3), rtol=2e-6, atol=1e-6)
    out = np.empty_like(x)
    assert ufunc(x, 2.0, out=out) is out
    np.testing.assert_allclose(out, np.sin(x) * 2, rtol=2e-6, atol=1e-6)
    stream = cuda.stream()
    dx = cuda.to_device(x, stream=stream)
    dout = cuda.device_array_like(x, stream=stream)
    assert ufunc(dx, np.float32(0.5), out=dout, stream=stream) is dout
    stream.synchronize()
    np.testing.assert_allclose(dout.copy_to_host(), np.sin(x) * 0.5, rtol=2e-6, atol=1e-6)
    strided = x[::2, ::3]  # a strided host view
    np.testing.assert_allclose(ufunc(strided, 1.0), np.sin(strided), rtol=2e-6, atol=1e-6)
    dstrided = cuda.to_device(x)[::2, ::3]  # a strided device view
    np.testing.assert_allclose(ufunc(dstrided, 1.0).copy_to_host(), np.sin(strided), rtol=2e-6, atol=1e-6)


def test_lazy_vectorize_compiles_per_call_dtypes(rng):
    ufunc = cuda.vectorize(S.divide)
    a = S.random_array(rng, "int32", 1000)
    b = S.random_array(rng, "int32", 1000) | 1
    np.testing.assert_allclose(ufunc(a, b), a / b, rtol=1e-15)
    x = S.random_array(rng, "float32", 1000)
    np.testing.assert_allclose(ufunc(x, 4.0), x / np.float32(4), rtol=1e-7)
    assert ufunc.types == ["ii->d", "ff->f"]


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_ufunc_reduce_against_numpy_and_numba_cuda(dtype, rng, ncuda):
    t = _type(dtype)
    ufunc = cuda.vectorize([t(t, t)])(S.add)
    for n in (1, 2, 5, 1000, 4097):
        x = S.random_array(rng, dtype, n)
        got = ufunc.reduce(x)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(got, x.sum(dtype=np.float64), rtol=1e-4 if dtype == "float32" else 1e-12)
        else:
            assert got == x.sum(dtype=dtype)
        theirs = _numba_or_skip(lambda: nvectorize([f"{dtype}({dtype}, {dtype})"])(S.add).reduce(x))
        assert got == theirs  # the same pairwise order
        assert ufunc.reduce(cuda.to_device(x)) == got


# ---- cuda.guvectorize ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex128"])
def test_guvectorize_matmul_against_numpy_and_numba_cuda(dtype, rng, ncuda):
    t = _type(dtype)
    gufunc = cuda.guvectorize([(t[:, :], t[:, :], t[:, :])], "(m,n),(n,p)->(m,p)")(S.matmul)
    a, b = S.random_array(rng, dtype, (20, 5, 7)), S.random_array(rng, dtype, (7, 3))  # b shared by the loop
    got = gufunc(a, b)
    assert got.shape == (20, 5, 3) and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(
        got, a @ b, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5 if dtype == "float32" else 0
    )  # float32 sums that cancel
    dev = gufunc(cuda.to_device(a), cuda.to_device(b))
    np.testing.assert_array_equal(dev.copy_to_host(), got)
    sig = f"void({dtype}[:,:], {dtype}[:,:], {dtype}[:,:])"
    theirs = _numba_or_skip(lambda: nguvectorize([sig], "(m,n),(n,p)->(m,p)")(S.matmul)(a, b))
    # float32: fma contraction and rounding differ in the last bits where a sum cancels
    np.testing.assert_allclose(
        got, theirs, rtol=1e-5 if dtype == "float32" else 1e-14, atol=1e-5 if dtype == "float32" else 0
    )


def test_guvectorize_reductions_scalars_and_outputs(rng):
    dot = cuda.guvectorize([(float64[:], float64[:], float64[:])], "(n),(n)->()")(S.dot)
    x, y = S.random_array(rng, "float64", (6, 4, 9)), S.random_array(rng, "float64", (6, 4, 9))
    # A dot product that nearly cancels is exact only to the size of its terms (fma and summation order differ
    # from numpy's): the tolerance scales with them, not with the small result.
    np.testing.assert_allclose(dot(x, y), (x * y).sum(-1), rtol=1e-12, atol=1e-13 * np.abs(x * y).sum(-1).max())
    scale = cuda.guvectorize([(float32[:], float32, float32[:])], "(n),()->(n)")(S.row_scale)
    v = S.random_array(rng, "float32", (8, 16))
    np.testing.assert_allclose(scale(v, 3.0), v * 3, rtol=1e-6)
    s = S.random_array(rng, "float32", 8)
    np.testing.assert_allclose(scale(v, s), v * s[:, None], rtol=1e-6)
    out = cuda.device_array((8, 16), np.float32)
    assert scale(cuda.to_device(v), 2.0, out=out) is out
    np.testing.assert_allclose(out.copy_to_host(), v * 2, rtol=1e-6)
    two = cuda.guvectorize([(float64[:], float64[:], float64[:])], "(n)->(),()")(S.sum_and_max)
    total, largest = two(x.reshape(24, 9))
    np.testing.assert_allclose(total, x.reshape(24, 9).sum(-1), rtol=1e-12)
    np.testing.assert_array_equal(largest, x.reshape(24, 9).max(-1))
    lazy = cuda.guvectorize("(n)->(n)")(S.cumsum)
    ints = S.random_array(rng, "int64", (5, 12))
    out = np.empty_like(ints)
    assert lazy(ints, out) is out
    np.testing.assert_array_equal(out, np.cumsum(ints, axis=1))
    np.testing.assert_array_equal(lazy(ints), np.cumsum(ints, axis=1))


# ---- cuda.Reduce ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", S.DTYPES)
def test_reduce_every_dtype_against_numpy_and_numba_cuda(dtype, rng, ncuda):
    f = _binop(dtype)
    mine = cuda.Reduce(f)
    theirs = ncuda.Reduce(f)
    for n in SIZES:
        x = S.random_array(rng, dtype, n)
        got = mine(x)
        assert type(got) is np.dtype(dtype).type
        if dtype == "bool_":
            assert got == x.any()
        elif np.dtype(dtype).kind in "iu":
            assert got == np.add.reduce(x, dtype=dtype)  # wraps as the GPU's stores do
        else:
            wide = x.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64).sum()
            tol = {"float16": 5e-2, "float32": 1e-4, "complex64": 1e-4}.get(dtype, 1e-11)
            np.testing.assert_allclose(got, wide, rtol=tol, atol=tol * n)
        expect = _numba_or_skip(lambda: theirs(x))
        assert got == expect or (got != got and expect != expect), (n, got, expect)  # bit for bit (NaN = NaN)
        assert mine(cuda.to_device(x)) == got


def test_reduce_size_init_res_and_streams(rng, ncuda):
    x = S.random_array(rng, "float32", 100_000)
    mine, theirs = cuda.reduce(S.add), ncuda.reduce(S.add)
    assert mine(x, size=77_777, init=5) == theirs(x, size=77_777, init=5)
    np.testing.assert_allclose(mine(x, size=77_777, init=5), x[:77_777].sum(dtype=np.float64) + 5, rtol=1e-4)
    stream = cuda.stream()
    dx = cuda.to_device(x, stream=stream)
    res = cuda.device_array(4, np.float32, stream=stream)
    assert mine(dx, res=res, stream=stream) is None
    stream.synchronize()
    assert res.copy_to_host()[0] == theirs(x)
    big = cuda.reduce(S.maximum)
    assert big(x) == x.max() and cuda.reduce(lambda a, b: min(a, b))(x) == x.min()
