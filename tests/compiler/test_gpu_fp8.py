"""fp8 on a GPU: constructors and casts, and the storage conversions, on fresh random data against the reference
of test_fp8 (nearest fp8 value, ties to even, cuda_fp8.h's overflow rules); numba-cuda's own expected bits."""

import math

import numpy as np

import gpu_support

from cujit import cuda, float32, int32
from cujit.cuda.fp8 import (
    fp8_e4m3,
    fp8_e5m2,
    fp8_e8m0,
    cvt_float_to_fp8,
    cvt_double_to_fp8,
    saturation_t,
    fp8_interpretation_t,
)
from test_fp8 import reference_decode, reference_encode, sample_values

pytestmark = gpu_support.gpu


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
        assert list(got[i]) == [
            reference_encode(x[i], "e4m3", False),
            reference_encode(x[i], "e4m3", True),
            reference_encode(x32[i], "e5m2", False),
            reference_encode(x32[i], "e5m2", True),
        ], x[i]


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
        e8m0 = 2.0 ** math.ceil(math.log2(abs(v))) if v != 0 else 2.0**-127
        assert got[i, 0] == np.float32(e4m3) and got[i, 1] == np.float32(e5m2), v
        assert got[i, 2] == np.float32(min(e8m0, 2.0**127)), v
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


# -- packed types, pair and e8m0 conversions, bfloat16 raw values -------------------------------------------------

from cujit import uint8  # noqa: E402
from cujit.cuda.fp8 import (
    fp8x4_e4m3,
    fp8x2_e5m2,
    fp8x4_e8m0,
    cvt_float2_to_fp8x2,
    cvt_double2_to_e8m0x2,  # noqa: E402
    cvt_float_to_e8m0,
    cvt_bfloat16raw_to_e8m0,
    cvt_bfloat16raw_to_fp8,
    cvt_e8m0_to_bf16raw,
    cudaRoundMode,
)
from test_fp8 import RP, RZ, bf16_value, e8m0_values, f32, packed_bits, reference_e8m0  # noqa: E402


@cuda.jit
def packed(x, d, out32, out16, outf):
    i = cuda.grid(1)
    if 4 * i + 3 < x.size:
        f4 = cuda.float32x4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3])
        p = fp8x4_e4m3(f4)
        out32[i, 0] = p.__x
        out32[i, 1] = fp8x4_e8m0(f4).__x
        out16[i, 0] = fp8x2_e5m2(cuda.float64x2(d[2 * i], d[2 * i + 1])).__x
        out16[i, 1] = cvt_float2_to_fp8x2(
            cuda.float32x2(x[4 * i], x[4 * i + 1]), saturation_t.NOSAT, fp8_interpretation_t.E4M3
        )
        out16[i, 2] = cvt_double2_to_e8m0x2(
            cuda.float64x2(d[2 * i], d[2 * i + 1]), saturation_t.NOSAT, cudaRoundMode.cudaRoundZero
        )
        back = cuda.float32x4(p)
        outf[i, 0] = back.x
        outf[i, 1] = back.w


def test_packed_types_and_pairs(rng):
    x = (rng.standard_normal(4096) * 10.0 ** rng.integers(-4, 5, 4096)).astype(np.float32)
    d = rng.standard_normal(2048) * 10.0 ** rng.integers(-40, 40, 2048)
    n = x.size // 4
    out32, out16, outf = (
        cuda.device_array((n, 2), np.uint32),
        cuda.device_array((n, 3), np.uint16),
        cuda.device_array((n, 2), np.float32),
    )
    packed[(n + 127) // 128, 128](cuda.to_device(x), cuda.to_device(d), out32, out16, outf)
    got32, got16, gotf = out32.copy_to_host(), out16.copy_to_host(), outf.copy_to_host()
    xs = x.astype(np.float64)
    for i in range(n):
        e4m3 = [reference_encode(v, "e4m3", True) for v in xs[4 * i : 4 * i + 4]]
        assert got32[i, 0] == packed_bits(e4m3), xs[4 * i : 4 * i + 4]
        assert got32[i, 1] == packed_bits([reference_e8m0(v, True, RP) for v in xs[4 * i : 4 * i + 4]])
        assert got16[i, 0] == packed_bits([reference_encode(v, "e5m2", True) for v in d[2 * i : 2 * i + 2]])
        assert got16[i, 1] == packed_bits([reference_encode(v, "e4m3", False) for v in xs[4 * i : 4 * i + 2]])
        assert got16[i, 2] == packed_bits([reference_e8m0(v, False, RZ) for v in d[2 * i : 2 * i + 2]])
        assert gotf[i, 0] == np.float32(reference_decode(e4m3[0], "e4m3"))
        assert gotf[i, 1] == np.float32(reference_decode(e4m3[3], "e4m3"))


@cuda.jit
def e8m0_all(x, bits, out, raw_out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cvt_float_to_e8m0(x[i], saturation_t.NOSAT, cudaRoundMode.cudaRoundZero)
        out[i, 1] = cvt_float_to_e8m0(x[i], saturation_t.SATFINITE, cudaRoundMode.cudaRoundPosInf)
    if i < bits.size:
        raw = cuda.ushort1(bits[i])
        out[i, 2] = cvt_bfloat16raw_to_e8m0(raw, saturation_t.NOSAT, cudaRoundMode.cudaRoundPosInf)
        out[i, 3] = cvt_bfloat16raw_to_fp8(raw, saturation_t.SATFINITE, fp8_interpretation_t.E4M3)
        if i < 256:
            raw_out[i] = cvt_e8m0_to_bf16raw(uint8(i)).x


def test_e8m0_and_bfloat16_raw(rng):
    x = np.array([f32(v) for v in e8m0_values(rng)], np.float32)
    bits = np.arange(0x10000, dtype=np.uint16)
    n = max(x.size, bits.size)
    out, raw_out = cuda.device_array((n, 4), np.uint8), cuda.device_array(256, np.uint16)
    e8m0_all[(n + 255) // 256, 256](cuda.to_device(x), cuda.to_device(bits), out, raw_out)
    got, raw = out.copy_to_host(), raw_out.copy_to_host()
    for i, v in enumerate(x.astype(np.float64)):
        assert got[i, 0] == reference_e8m0(v, False, RZ) and got[i, 1] == reference_e8m0(v, True, RP), v
    for b in range(0x10000):
        v = bf16_value(b)
        assert got[b, 2] == reference_e8m0(v, False, RP), hex(b)
        assert (math.isnan(v) and math.isnan(reference_decode(int(got[b, 3]), "e4m3"))) or got[
            b, 3
        ] == reference_encode(v, "e4m3", True), hex(b)
    for code in range(256):
        want = 0x7FFF if code == 0xFF else int(np.array([2.0 ** (code - 127)], np.float32).view(np.uint32)[0] >> 16)
        assert raw[code] == want, code
