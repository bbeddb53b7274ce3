"""fp8 on a GPU: constructors and casts, and the storage conversions, on fresh random data against the reference
of test_fp8 (nearest fp8 value, ties to even, cuda_fp8.h's overflow rules); numba-cuda's own expected bits."""

import math

import numpy as np
import pytest

from cujit import cuda, float32, int32
from cujit.cuda.fp8 import (fp8_e4m3, fp8_e5m2, fp8_e8m0, cvt_float_to_fp8, cvt_double_to_fp8, saturation_t,
                            fp8_interpretation_t)
from cujit.cudadrv import devices
from test_fp8 import reference_decode, reference_encode, sample_values

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not cuda.is_available(), reason=f"no usable GPU: {devices.cuda_error()}"),
]


@cuda.jit
def encode(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cvt_double_to_fp8(x[i], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
        out[i, 1] = cvt_double_to_fp8(x[i], saturation_t.SATFINITE, fp8_interpretation_t.E4M3)
        out[i, 2] = cvt_float_to_fp8(float32(x[i]), saturation_t.NOSAT, fp8_interpretation_t.E5M2)
        out[i, 3] = cvt_float_to_fp8(float32(x[i]), saturation_t.SATFINITE, fp8_interpretation_t.E5M2)


def test_storage_conversions(rng):
    x = np.array([v for v in sample_values(rng) if abs(v) < 3e38], np.float64)
    out = cuda.device_array((x.size, 4), np.uint8)
    encode[(x.size + 255) // 256, 256](cuda.to_device(x), out)
    got = out.copy_to_host()
    x32 = x.astype(np.float32).astype(np.float64)
    for i in range(x.size):
        assert list(got[i]) == [reference_encode(x[i], "e4m3", False), reference_encode(x[i], "e4m3", True),
                                reference_encode(x32[i], "e5m2", False), reference_encode(x32[i], "e5m2", True)], x[i]


@cuda.jit
def round_trip(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = float32(fp8_e4m3(x[i]))
        out[i, 1] = float32(fp8_e5m2(x[i]))
        out[i, 2] = float32(fp8_e8m0(x[i]))
        out[i, 3] = int32(fp8_e5m2(x[i]))


def test_constructors_and_casts(rng):
    x = (rng.standard_normal(4096) * 10.0 ** rng.integers(-4, 5, 4096)).astype(np.float32)
    out = cuda.device_array((x.size, 4), np.float32)
    round_trip[16, 256](cuda.to_device(x), out)
    got = out.copy_to_host()
    for i, v in enumerate(x.astype(np.float64)):
        e4m3 = reference_decode(reference_encode(v, "e4m3", True), "e4m3")
        e5m2 = reference_decode(reference_encode(v, "e5m2", True), "e5m2")
        e8m0 = 2.0 ** math.ceil(math.log2(abs(v))) if v != 0 else 2.0 ** -127
        assert got[i, 0] == np.float32(e4m3) and got[i, 1] == np.float32(e5m2), v
        assert got[i, 2] == np.float32(min(e8m0, 2.0 ** 127)), v
        assert got[i, 3] == math.trunc(e5m2), v


@cuda.jit
def numba_cuda_bits(out, x32, x64):
    out[0] = cvt_float_to_fp8(x32[0], saturation_t.NOSAT, fp8_interpretation_t.E5M2)
    out[1] = cvt_float_to_fp8(x32[0], saturation_t.SATFINITE, fp8_interpretation_t.E5M2)
    out[2] = cvt_double_to_fp8(x64[0], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    out[3] = cvt_double_to_fp8(x64[0], saturation_t.SATFINITE, fp8_interpretation_t.E4M3)


def test_numba_cuda_overflow_bits():
    out = cuda.device_array(4, np.uint8)
    numba_cuda_bits[1, 1](out, cuda.to_device(np.array([1e20], np.float32)), cuda.to_device(np.array([1e300])))
    assert list(out.copy_to_host()) == [0x7C, 0x7B, 0x7F, 0x7E]
