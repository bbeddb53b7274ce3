"""Warp masks, matches, ffs and cbrt on a GPU against numpy on fresh random data: activemask() under divergence,
lanemask_lt() per lane, match_any_sync / match_all_sync over warps holding a few distinct values (ints and
floats, 32 and 64 bits), ffs of every integer width, cbrt in float32 and float64."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda

pytestmark = gpu_support.gpu


@cuda.jit
def masks(active, lanemask):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    lanemask[i] = cuda.lanemask_lt()
    if lane % 3 == 0:
        active[i] = cuda.activemask()
    else:
        active[i] = 0


def test_activemask_and_lanemask_lt():
    n = 128
    active = cuda.device_array(n, np.uint32)
    lanemask = cuda.device_array(n, np.uint32)
    masks[2, 64](active, lanemask)
    lanes = np.arange(n) % 32
    divergent = sum(1 << lane for lane in range(32) if lane % 3 == 0)
    np.testing.assert_array_equal(active.copy_to_host(), np.where(lanes % 3 == 0, divergent, 0).astype(np.uint32))
    np.testing.assert_array_equal(lanemask.copy_to_host(), ((1 << lanes) - 1).astype(np.uint32))


@cuda.jit
def matches(values, any_mask, all_mask, all_pred):
    i = cuda.grid(1)
    any_mask[i] = cuda.match_any_sync(0xFFFFFFFF, values[i])
    m, p = cuda.match_all_sync(0xFFFFFFFF, values[i])
    all_mask[i] = m
    all_pred[i] = p


def expected_matches(values):
    warps = values.reshape(-1, 32)
    any_mask = np.zeros(warps.shape, np.int64)
    all_mask = np.zeros(warps.shape, np.int64)
    for w, warp in enumerate(warps):
        for lane in range(32):
            any_mask[w, lane] = sum(1 << j for j in range(32) if warp[j] == warp[lane])
        if np.all(warp == warp[0]):
            all_mask[w] = 0xFFFFFFFF
    return any_mask.ravel(), all_mask.ravel(), (all_mask.ravel() != 0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_match_any_and_all(rng, dtype):
    values = rng.integers(0, 3, 256).astype(dtype)
    values[64:96] = 7  # one warp where every lane agrees
    any_mask = cuda.device_array(256, np.int32)
    all_mask = cuda.device_array(256, np.int32)
    all_pred = cuda.device_array(256, np.bool_)
    matches[2, 128](cuda.to_device(values), any_mask, all_mask, all_pred)
    want_any, want_all, want_pred = expected_matches(values)
    np.testing.assert_array_equal(any_mask.copy_to_host().view(np.uint32), want_any.astype(np.uint32))
    np.testing.assert_array_equal(all_mask.copy_to_host().view(np.uint32), want_all.astype(np.uint32))
    np.testing.assert_array_equal(all_pred.copy_to_host(), want_pred)


@cuda.jit
def ffs_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.ffs(x[i])


def reference_ffs(values, bits):
    out = []
    for v in values.astype(object):
        v = int(v) & ((1 << bits) - 1)
        out.append(0 if v == 0 else (v & -v).bit_length())
    return np.array(out, np.uint32)


@pytest.mark.parametrize(
    "dtype",
    [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64],
    ids=lambda d: np.dtype(d).name,
)
def test_ffs(rng, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 500, dtype=dtype, endpoint=True)
    x[:3] = [0, 1, info.min if info.min else info.max]
    out = cuda.device_array(x.size, np.uint32)
    ffs_kernel[2, 256](cuda.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), reference_ffs(x, np.dtype(dtype).itemsize * 8))


@cuda.jit
def cbrt_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.cbrt(x[i])


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-15)], ids=["float32", "float64"])
def test_cbrt(rng, dtype, rtol):
    x = (rng.standard_normal(1000) * 1e3).astype(dtype)
    out = cuda.device_array_like(x)
    cbrt_kernel[4, 256](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), np.cbrt(x), rtol=rtol)
