"""fp8 as numba-cuda binds cuda_fp8.h (cujit.cuda.fp8, also reached as cujit.cuda._internal.cuda_fp8): the
fp8_e4m3 / fp8_e5m2 / fp8_e8m0 types made from every number and converted back by explicit casts, and the
storage conversions cvt_float_to_fp8 / cvt_double_to_fp8 (float32_to_fp8 / float64_to_fp8). Kernels compile for
sm_75 and sm_90 (assembled by ptxas through conftest). The conversions' values are checked without a GPU: the
device functions' optimised LLVM IR is compiled for the host with llc and called through ctypes, against an
independent brute-force reference (nearest fp8 value, ties to even, cuda_fp8.h's overflow rules) on every
code, every midpoint and fresh random data. Implicit conversions are refused, as numba-cuda refuses them."""

import ctypes
import math
import re

import numpy as np
import pytest

from cujit import cuda
from cujit import (
    boolean,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint64,
    float16,
    float32,
    float64,
    bfloat16,
    complex64,
)
from cujit.cuda.fp8 import (
    fp8_e4m3,
    fp8_e5m2,
    fp8_e8m0,
    cvt_float_to_fp8,
    cvt_double_to_fp8,
    float32_to_fp8,
    float64_to_fp8,
    saturation_t,
    fp8_interpretation_t,
)
from cujit.errors import TypingError
from host_ir import host_functions

CCS = [(7, 5), (9, 0)]
cc_ids = lambda cc: f"sm_{cc[0]}{cc[1]}"  # noqa: E731


def round_trips(out, bits, x, y):
    a = fp8_e4m3(x[0])
    b = fp8_e5m2(y[0])
    c = fp8_e8m0(x[0])
    out[0] = float32(a)
    out[1] = float64(b)
    out[2] = int8(a)
    out[3] = uint64(b)
    out[4] = float16(c)
    out[5] = boolean(a)
    out[6] = float32(fp8_e4m3(int64(3)))
    out[7] = float32(fp8_e5m2(bfloat16(x[0])))
    out[8] = float32(bfloat16(a))
    bits[0] = cvt_float_to_fp8(x[0], saturation_t.NOSAT, fp8_interpretation_t.E5M2)
    bits[1] = cvt_double_to_fp8(y[0], saturation_t.SATFINITE, fp8_interpretation_t.E4M3)


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_constructors_casts_and_storage_conversions_compile(cc):
    cuda.compile_ptx(round_trips, (float64[:], uint8[:], float32[:], float64[:]), cc=cc)


def make_e4m3(x):
    return fp8_e4m3(x)


def make_e5m2(x):
    return fp8_e5m2(x)


def make_e8m0(x):
    return fp8_e8m0(x)


@pytest.mark.parametrize(
    "make, fp8", [(make_e4m3, fp8_e4m3), (make_e5m2, fp8_e5m2), (make_e8m0, fp8_e8m0)], ids=["e4m3", "e5m2", "e8m0"]
)
@pytest.mark.parametrize(
    "xtype", [float16, float32, float64, bfloat16, int8, int16, int32, int64, uint8, uint16, uint64], ids=str
)
def test_constructors_take_every_number(make, fp8, xtype):
    _, resty = cuda.compile_ptx(make, (xtype,), device=True)
    assert resty == fp8
    assert str(resty) == fp8.name


def test_type_names_are_numba_cudas():
    assert [t.name for t in (fp8_e4m3, fp8_e5m2, fp8_e8m0)] == ["fp8_e4m3", "fp8_e5m2", "fp8_e8m0"]


def test_public_aliases_are_the_intrinsics():
    assert float32_to_fp8 is cvt_float_to_fp8
    assert float64_to_fp8 is cvt_double_to_fp8
    from cujit.cuda._internal import cuda_fp8

    assert cuda_fp8.fp8_e4m3 is fp8_e4m3 and cuda_fp8.cvt_float_to_fp8 is cvt_float_to_fp8
    assert cuda.fp8.fp8_e5m2 is fp8_e5m2
    assert int(saturation_t.SATFINITE) == 1 and int(fp8_interpretation_t.E5M2) == 1


def storage(x, s, i):
    return cvt_float_to_fp8(x, s, i)


def test_storage_conversion_returns_uint8():
    _, resty = cuda.compile_ptx(storage, (float32, int32, int32), device=True)
    assert resty == uint8


def stores_fp8_into_float_array(out, x):
    out[0] = fp8_e4m3(x)


def adds_fp8(x, y):
    return fp8_e4m3(x) + fp8_e4m3(y)


def bad_storage_args(x):
    return cvt_float_to_fp8(x, 1.5, 0)


def complex_to_fp8(z):
    return fp8_e5m2(z)


@pytest.mark.parametrize(
    "fn, argtypes, message",
    [
        (
            stores_fp8_into_float_array,
            (float32[:], float32),
            "cannot store a value of type fp8_e4m3 into an array of float32",
        ),
        (adds_fp8, (float32, float32), "fp8_e4m3"),
        (
            bad_storage_args,
            (float32,),
            "saturate and fp8_interpretation are saturation_t and fp8_interpretation_t members",
        ),
        (complex_to_fp8, (complex64,), "No implementation of fp8_e5m2(complex64)"),
    ],
)
def test_misuse_is_a_typing_error(fn, argtypes, message):
    with pytest.raises(TypingError, match=re.escape(message)):
        cuda.compile_ptx(fn, argtypes, device=True)


def test_stubs_raise_on_the_host():
    with pytest.raises(RuntimeError, match="only be used inside a CUDA kernel"):
        cvt_float_to_fp8(1.0, saturation_t.NOSAT, fp8_interpretation_t.E4M3)


# -- the conversions' values, run on the host ------------------------------------------------------------------


def encode_double(x, s, i):
    return cvt_double_to_fp8(x, s, i)


def encode_float(x, s, i):
    return cvt_float_to_fp8(x, s, i)


def decode(b):
    return float32(b)


def to_int8(b):
    return int8(b)


def to_uint8(b):
    return uint8(b)


def to_int16(b):
    return int16(b)


def to_int64(b):
    return int64(b)


def to_uint64(b):
    return uint64(b)


def to_bool(b):
    return boolean(b)


HOST_FUNCTIONS = [
    (
        "encode_double",
        encode_double,
        uint8(float64, int32, int32),
        ctypes.c_uint8,
        [ctypes.c_double, ctypes.c_int32, ctypes.c_int32],
    ),
    (
        "encode_float",
        encode_float,
        uint8(float32, int32, int32),
        ctypes.c_uint8,
        [ctypes.c_float, ctypes.c_int32, ctypes.c_int32],
    ),
    ("decode_e4m3", decode, float32(fp8_e4m3), ctypes.c_float, [ctypes.c_uint8]),
    ("decode_e5m2", decode, float32(fp8_e5m2), ctypes.c_float, [ctypes.c_uint8]),
    ("decode_e8m0", decode, float32(fp8_e8m0), ctypes.c_float, [ctypes.c_uint8]),
    ("make_e4m3_f32", make_e4m3, fp8_e4m3(float32), ctypes.c_uint8, [ctypes.c_float]),
    ("make_e5m2_f64", make_e5m2, fp8_e5m2(float64), ctypes.c_uint8, [ctypes.c_double]),
    ("make_e4m3_i64", make_e4m3, fp8_e4m3(int64), ctypes.c_uint8, [ctypes.c_int64]),
    ("make_e8m0_f32", make_e8m0, fp8_e8m0(float32), ctypes.c_uint8, [ctypes.c_float]),
    ("e4m3_to_int8", to_int8, int8(fp8_e4m3), ctypes.c_int8, [ctypes.c_uint8]),
    ("e5m2_to_uint8", to_uint8, uint8(fp8_e5m2), ctypes.c_uint8, [ctypes.c_uint8]),
    ("e5m2_to_int16", to_int16, int16(fp8_e5m2), ctypes.c_int16, [ctypes.c_uint8]),
    ("e8m0_to_int64", to_int64, int64(fp8_e8m0), ctypes.c_int64, [ctypes.c_uint8]),
    ("e4m3_to_uint64", to_uint64, uint64(fp8_e4m3), ctypes.c_uint64, [ctypes.c_uint8]),
    ("e4m3_to_bool", to_bool, boolean(fp8_e4m3), ctypes.c_bool, [ctypes.c_uint8]),
]


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """The conversions as host functions: name -> ctypes function."""
    return host_functions(tmp_path_factory.mktemp("fp8_host"), HOST_FUNCTIONS)


def reference_decode(code, fmt):
    if fmt == "e5m2":  # the upper byte of a float16
        return float(np.array([code << 8], np.uint16).view(np.float16)[0])
    if fmt == "e8m0":
        return math.nan if code == 0xFF else 2.0 ** (code - 127)
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 3) & 0xF, code & 7
    if exponent == 15 and mantissa == 7:
        return math.nan
    return sign * (mantissa * 2.0**-9 if exponent == 0 else (1 + mantissa / 8) * 2.0 ** (exponent - 7))


FINITE = {
    fmt: [(c, reference_decode(c, fmt)) for c in range(128) if math.isfinite(reference_decode(c, fmt))]
    for fmt in ("e4m3", "e5m2")
}
# |x| beyond which a value overflows (e5m2: 61440 is the tie between 57344 and inf, and rounds to inf).
OVERFLOW = {"e4m3": lambda a: a > 464.0, "e5m2": lambda a: a >= 61440.0}


def reference_encode(x, fmt, satfinite):
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    if OVERFLOW[fmt](a):
        if satfinite:
            return sign | (0x7E if fmt == "e4m3" else 0x7B)
        return sign | (0x7F if fmt == "e4m3" else 0x7C)
    nearest = min(FINITE[fmt], key=lambda cv: (abs(a - cv[1]), cv[0] & 1))  # ties to the even code
    return sign | nearest[0]


def test_decoding_every_code(host):
    for fmt in ("e4m3", "e5m2", "e8m0"):
        for code in range(256):
            got, want = host[f"decode_{fmt}"](code), reference_decode(code, fmt)
            assert (math.isnan(got) and math.isnan(want)) or got == np.float32(want), (fmt, hex(code))


def sample_values(rng):
    values = list(rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 6, 2000))
    values += [0.0, -0.0, math.inf, -math.inf, 1e300, -1e-300, 448.0, 464.0, 465.0, 57344.0, 61440.0, 61439.9]
    for fmt in ("e4m3", "e5m2"):  # every code value and every midpoint, and either side of it
        codes = [v for _, v in FINITE[fmt]]
        for a, b in zip(codes, codes[1:]):
            mid = (a + b) / 2
            values += [a, -a, mid, -mid, np.nextafter(mid, 0.0), np.nextafter(mid, 1e9)]
    return values


@pytest.fixture
def values(rng):
    return sample_values(rng)


def test_storage_conversions_round_and_saturate(host, values):
    for x in values:
        x32 = float(np.float32(x)) if abs(x) < 3e38 else math.copysign(math.inf, x)
        for interpretation, fmt in enumerate(("e4m3", "e5m2")):
            for sat in (0, 1):
                assert host["encode_double"](x, sat, interpretation) == reference_encode(x, fmt, sat), (x, fmt, sat)
                assert host["encode_float"](x32, sat, interpretation) == reference_encode(x32, fmt, sat), (x32, fmt)


def test_numba_cuda_overflow_bits(host):
    assert host["encode_float"](1e20, saturation_t.NOSAT, fp8_interpretation_t.E5M2) == 0x7C
    assert host["encode_float"](1e20, saturation_t.SATFINITE, fp8_interpretation_t.E5M2) == 0x7B
    assert host["encode_double"](1e300, saturation_t.NOSAT, fp8_interpretation_t.E4M3) == 0x7F
    assert host["encode_double"](1e300, saturation_t.SATFINITE, fp8_interpretation_t.E4M3) == 0x7E


def test_nan_stays_nan(host):
    for sat in (0, 1):
        assert host["encode_double"](math.nan, sat, 0) & 0x7F == 0x7F
        assert math.isnan(host["decode_e5m2"](host["encode_double"](math.nan, sat, 1)))
    assert host["make_e8m0_f32"](math.nan) == 0xFF


def test_constructors_saturate(host, values):
    for x in values[:800]:
        x32 = float(np.float32(x)) if abs(x) < 3e38 else math.copysign(math.inf, x)
        assert host["make_e4m3_f32"](x32) == reference_encode(x32, "e4m3", True), x32
        assert host["make_e5m2_f64"](x) == reference_encode(x, "e5m2", True), x
    for i in [0, 1, 3, 17, 1000, -5, 2**40, -(2**62)]:
        assert host["make_e4m3_i64"](i) == reference_encode(float(np.float32(i)), "e4m3", True), i


@pytest.mark.parametrize(
    "x, bits",
    [
        (1.0, 127),
        (2.0, 128),
        (3.0, 129),
        (4.0, 129),
        (0.75, 127),
        (math.inf, 0xFE),
        (3e38, 0xFE),
        (2.0**-127, 0),
        (1e-45, 0),
    ],
)
def test_e8m0_rounds_up_to_a_power_of_two(host, x, bits):
    assert host["make_e8m0_f32"](x) == bits


def saturated(v, lo, hi):
    if math.isnan(v):  # cuda_fp8.hpp: 0, but 0x8000000000000000 for the 64-bit integers (as __half2ll_rz gives)
        return -(2**63) if hi == 2**63 - 1 else 2**63 if hi == 2**64 - 1 else 0
    return int(max(lo, min(hi, math.trunc(v) if math.isfinite(v) else (hi if v > 0 else lo))))


def test_integer_casts_truncate_and_saturate(host):
    for code in range(256):
        assert host["e4m3_to_int8"](code) == saturated(reference_decode(code, "e4m3"), -128, 127)
        assert host["e5m2_to_uint8"](code) == saturated(reference_decode(code, "e5m2"), 0, 255)
        assert host["e5m2_to_int16"](code) == saturated(reference_decode(code, "e5m2"), -(2**15), 2**15 - 1)
        assert host["e8m0_to_int64"](code) == saturated(reference_decode(code, "e8m0"), -(2**63), 2**63 - 1)
        assert host["e4m3_to_uint64"](code) == saturated(reference_decode(code, "e4m3"), 0, 2**64 - 1)
        assert host["e4m3_to_bool"](code) == (reference_decode(code, "e4m3") != 0)


# -- packed types, pair and e8m0 conversions, bfloat16 raw values ----------------------------------------------
# References: the packed types and pair functions are their elements' scalar conversions, the first in the lowest
# byte (cuda_fp8.hpp); the e8m0 conversions are checked against the power of two they must give (toward zero: the
# largest not above |x|; up: the smallest not below it), computed exactly from frexp, not from the bits.

from cujit import _core, uint32  # noqa: E402
from cujit.cuda.fp8 import (
    fp8x2_e4m3,
    fp8x4_e4m3,
    fp8x2_e5m2,
    fp8x4_e5m2,
    fp8x2_e8m0,
    fp8x4_e8m0,  # noqa: E402
    cvt_float2_to_fp8x2,
    cvt_double2_to_fp8x2,
    cvt_float_to_e8m0,
    cvt_double_to_e8m0,
    cvt_float2_to_e8m0x2,
    cvt_double2_to_e8m0x2,
    cvt_bfloat16raw_to_fp8,
    cvt_bfloat16raw_to_e8m0,
    cvt_e8m0_to_bf16raw,
    cudaRoundMode,
    float32x2_to_fp8x2,
    float64x2_to_e8m0x2,
    e8m0_to_bfloat16_raw,
    SaturationMode,
    FP8Format,
)
from cujit.cuda._internal.cuda_fp8 import (
    _type_fp8x2_e4m3,
    _type_fp8x4_e5m2,
    _type_fp8x2_e8m0,  # noqa: E402
    _type_fp8x4_e8m0,
)

RZ, RP = int(cudaRoundMode.cudaRoundZero), int(cudaRoundMode.cudaRoundPosInf)


def reference_e8m0(x, satfinite, rounding):
    """The e8m0 code of the real value x: 2^(code-127) is the power of two toward zero (RZ) or up (RP) from |x|,
    code 0 (2^-127) at the bottom; beyond 2^127 (and inf) 0xFF, or 0xFE when saturating; NaN 0xFF."""
    if math.isnan(x):
        return 0xFF
    a = abs(x)
    if math.isinf(a):
        return 0xFE if satfinite else 0xFF
    if a == 0.0:
        return 0
    m, e = math.frexp(a)  # a = m * 2^e, 0.5 <= m < 1
    exponent = e - 1 if rounding == RZ or m == 0.5 else e
    code = max(0, exponent + 127)
    if code >= 0xFF:
        return 0xFE if satfinite or rounding == RZ else 0xFF
    return code


def packed_bits(codes):
    return sum(c << (8 * k) for k, c in enumerate(codes))


def pack_e4m3(a, b, c, d):
    return fp8x4_e4m3(cuda.float32x4(a, b, c, d)).__x


def pack_e5m2_wide(a, b):
    return fp8x2_e5m2(cuda.float64x2(a, b)).__x


def pack_e8m0(a, b, c, d):
    return fp8x4_e8m0(cuda.float32x4(a, b, c, d)).__x


def pack_e8m0_wide(a, b):
    return fp8x2_e8m0(cuda.float64x2(a, b)).__x


def unpack2(p, k):
    v = cuda.float32x2(p)
    return v.x if k == 0 else v.y


def unpack4(p, k):
    v = cuda.float32x4(p)
    if k == 0:
        return v.x
    if k == 1:
        return v.y
    return v.z if k == 2 else v.w


def zero_packed():
    return fp8x4_e5m2().__x


def pair_fp8(x, y, s, i):
    return cvt_float2_to_fp8x2(cuda.float32x2(x, y), s, i)


def pair_fp8_wide(x, y, s, i):
    return cvt_double2_to_fp8x2(cuda.float64x2(x, y), s, i)


def e8m0_float(x, s, r):
    return cvt_float_to_e8m0(x, s, r)


def e8m0_double(x, s, r):
    return cvt_double_to_e8m0(x, s, r)


def pair_e8m0(x, y, s, r):
    return cvt_float2_to_e8m0x2(cuda.float32x2(x, y), s, r)


def pair_e8m0_wide(x, y, s, r):
    return cvt_double2_to_e8m0x2(cuda.float64x2(x, y), s, r)


def raw_to_fp8(b, s, i):
    return cvt_bfloat16raw_to_fp8(cuda.ushort1(b), s, i)


def bf16_to_e8m0(b, s, r):
    return cvt_bfloat16raw_to_e8m0(b, s, r)


def e8m0_to_raw(c):
    return cvt_e8m0_to_bf16raw(c).x


def e8m0_to_bfloat16(c):
    return float32(bfloat16(cvt_e8m0_to_bf16raw(c)))  # numba-cuda's bfloat16(raw)


def default_e5m2():
    return fp8_e5m2()


def e8m0_from_int64(i):
    return fp8_e8m0(i)


def e8m0_from_uint64(i):
    return fp8_e8m0(i)


def e8m0_from_float64(x):
    return fp8_e8m0(x)


C = ctypes
PACKED_HOST_FUNCTIONS = [
    ("pack_e4m3", pack_e4m3, uint32(float32, float32, float32, float32), C.c_uint32, [C.c_float] * 4),
    ("pack_e5m2_wide", pack_e5m2_wide, uint16(float64, float64), C.c_uint16, [C.c_double] * 2),
    ("pack_e8m0", pack_e8m0, uint32(float32, float32, float32, float32), C.c_uint32, [C.c_float] * 4),
    ("pack_e8m0_wide", pack_e8m0_wide, uint16(float64, float64), C.c_uint16, [C.c_double] * 2),
    ("unpack2_e4m3", unpack2, float32(_type_fp8x2_e4m3, int32), C.c_float, [C.c_uint16, C.c_int32]),
    ("unpack2_e8m0", unpack2, float32(_type_fp8x2_e8m0, int32), C.c_float, [C.c_uint16, C.c_int32]),
    ("unpack4_e5m2", unpack4, float32(_type_fp8x4_e5m2, int32), C.c_float, [C.c_uint32, C.c_int32]),
    ("unpack4_e8m0", unpack4, float32(_type_fp8x4_e8m0, int32), C.c_float, [C.c_uint32, C.c_int32]),
    ("zero_packed", zero_packed, uint32(), C.c_uint32, []),
    ("pair_fp8", pair_fp8, uint16(float32, float32, int32, int32), C.c_uint16, [C.c_float] * 2 + [C.c_int32] * 2),
    (
        "pair_fp8_wide",
        pair_fp8_wide,
        uint16(float64, float64, int32, int32),
        C.c_uint16,
        [C.c_double] * 2 + [C.c_int32] * 2,
    ),
    ("e8m0_float", e8m0_float, uint8(float32, int32, int32), C.c_uint8, [C.c_float, C.c_int32, C.c_int32]),
    ("e8m0_double", e8m0_double, uint8(float64, int32, int32), C.c_uint8, [C.c_double, C.c_int32, C.c_int32]),
    ("pair_e8m0", pair_e8m0, uint16(float32, float32, int32, int32), C.c_uint16, [C.c_float] * 2 + [C.c_int32] * 2),
    (
        "pair_e8m0_wide",
        pair_e8m0_wide,
        uint16(float64, float64, int32, int32),
        C.c_uint16,
        [C.c_double] * 2 + [C.c_int32] * 2,
    ),
    ("raw_to_fp8", raw_to_fp8, uint8(uint16, int32, int32), C.c_uint8, [C.c_uint16, C.c_int32, C.c_int32]),
    ("bf16_to_e8m0", bf16_to_e8m0, uint8(bfloat16, int32, int32), C.c_uint8, [C.c_uint16, C.c_int32, C.c_int32]),
    ("e8m0_to_raw", e8m0_to_raw, uint16(uint8), C.c_uint16, [C.c_uint8]),
    ("e8m0_to_bfloat16", e8m0_to_bfloat16, float32(uint8), C.c_float, [C.c_uint8]),
    ("default_e5m2", default_e5m2, fp8_e5m2(), C.c_uint8, []),
    ("e8m0_from_int64", e8m0_from_int64, fp8_e8m0(int64), C.c_uint8, [C.c_int64]),
    ("e8m0_from_uint64", e8m0_from_uint64, fp8_e8m0(uint64), C.c_uint8, [C.c_uint64]),
    ("e8m0_from_float64", e8m0_from_float64, fp8_e8m0(float64), C.c_uint8, [C.c_double]),
]


@pytest.fixture(scope="module")
def packed_host(tmp_path_factory):
    return host_functions(tmp_path_factory.mktemp("fp8_packed_host"), PACKED_HOST_FUNCTIONS)


def f32(x):
    """x as the float32 a kernel would hold (inf beyond float32's range)."""
    return float(np.float32(x)) if abs(x) < 3.4028235e38 or not math.isfinite(x) else math.copysign(math.inf, x)


def bf16_value(bits):
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def e8m0_values(rng):
    """Every float32 power of two and its neighbours, zero, inf, NaN, doubles beyond float32, random data."""
    values = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e300, -1e-300, 2.0**-150, 2.0**-149, 3.4028235e38]
    for e in range(-149, 128):
        p = 2.0**e
        values += [
            p,
            -p,
            float(np.nextafter(np.float32(p), np.float32(0))),
            float(np.nextafter(np.float32(p), np.float32(np.inf))),
        ]
    values += list(rng.standard_normal(1500) * 10.0 ** rng.integers(-45, 38, 1500))
    return [v for v in values if not (math.isfinite(v) and abs(v) > 1.7e308)]


def same_float(got, want):
    return (math.isnan(got) and math.isnan(want)) or got == np.float32(want)


def test_packed_constructors_and_bits(packed_host, values):
    for i in range(0, 800, 4):
        xs = [f32(v) for v in values[i : i + 4]]
        assert packed_host["pack_e4m3"](*xs) == packed_bits([reference_encode(x, "e4m3", True) for x in xs]), xs
        assert packed_host["pack_e5m2_wide"](values[i], values[i + 1]) == packed_bits(
            [reference_encode(x, "e5m2", True) for x in values[i : i + 2]]
        ), values[i : i + 2]
    assert packed_host["zero_packed"]() == 0
    assert packed_host["default_e5m2"]() == 0  # fp8_e5m2(), numba-cuda's default constructor: zero here


def test_packed_e8m0_rounds_up(packed_host, rng):
    vals = e8m0_values(rng)
    for i in range(0, len(vals) - 4, 4):
        xs = [f32(v) for v in vals[i : i + 4]]
        assert packed_host["pack_e8m0"](*xs) == packed_bits([reference_e8m0(x, True, RP) for x in xs]), xs
        assert packed_host["pack_e8m0_wide"](vals[i], vals[i + 1]) == packed_bits(
            [reference_e8m0(x, True, RP) for x in vals[i : i + 2]]
        ), vals[i : i + 2]


def test_packed_values_unpack_exactly(packed_host):
    for fmt, unpack, count in [
        ("e4m3", "unpack2_e4m3", 2),
        ("e5m2", "unpack4_e5m2", 4),
        ("e8m0", "unpack2_e8m0", 2),
        ("e8m0", "unpack4_e8m0", 4),
    ]:
        for code in range(256):
            bits = packed_bits([code ^ (k * 0x35) for k in range(count)])
            for k in range(count):
                want = reference_decode(code ^ (k * 0x35), fmt)
                assert same_float(packed_host[unpack](bits, k), want), (fmt, hex(bits), k)


def test_pair_conversions(packed_host, values):
    for a, b in zip(values[:600], values[600:1200]):
        for interpretation, fmt in enumerate(("e4m3", "e5m2")):
            for sat in (0, 1):
                want = packed_bits([reference_encode(f32(a), fmt, sat), reference_encode(f32(b), fmt, sat)])
                assert packed_host["pair_fp8"](f32(a), f32(b), sat, interpretation) == want, (a, b, fmt, sat)
                want = packed_bits([reference_encode(a, fmt, sat), reference_encode(b, fmt, sat)])
                assert packed_host["pair_fp8_wide"](a, b, sat, interpretation) == want, (a, b, fmt, sat)


def test_e8m0_conversions(packed_host, rng):
    vals = e8m0_values(rng)
    for x in vals:
        for sat in (0, 1):
            for rounding in (RZ, RP):
                assert packed_host["e8m0_float"](f32(x), sat, rounding) == reference_e8m0(f32(x), sat, rounding), (
                    x,
                    sat,
                    rounding,
                )
                assert packed_host["e8m0_double"](x, sat, rounding) == reference_e8m0(x, sat, rounding), (
                    x,
                    sat,
                    rounding,
                )
    for a, b in zip(vals[::2], vals[1::2]):
        for sat, rounding in [(0, RZ), (1, RP)]:
            want = packed_bits([reference_e8m0(f32(a), sat, rounding), reference_e8m0(f32(b), sat, rounding)])
            assert packed_host["pair_e8m0"](f32(a), f32(b), sat, rounding) == want, (a, b)
            want = packed_bits([reference_e8m0(a, sat, rounding), reference_e8m0(b, sat, rounding)])
            assert packed_host["pair_e8m0_wide"](a, b, sat, rounding) == want, (a, b)


def test_bfloat16_raw_conversions_every_code(packed_host, rng):
    for bits in range(0x10000):
        x = bf16_value(bits)
        for sat, rounding in [(0, RZ), (1, RZ), (0, RP), (1, RP)]:
            assert packed_host["bf16_to_e8m0"](bits, sat, rounding) == reference_e8m0(x, sat, rounding), (
                hex(bits),
                sat,
                rounding,
            )
    for bits in list(rng.integers(0, 0x10000, 3000)) + [0x7F80, 0xFF80, 0x7FC0, 0x4380, 0x43E0, 0x4764, 0x4770]:
        x = bf16_value(int(bits))
        for interpretation, fmt in enumerate(("e4m3", "e5m2")):
            for sat in (0, 1):
                got = packed_host["raw_to_fp8"](int(bits), sat, interpretation)
                if math.isnan(x):
                    assert math.isnan(reference_decode(got, fmt)), hex(bits)
                else:
                    assert got == reference_encode(x, fmt, sat), (hex(int(bits)), fmt, sat)
    for code in range(256):
        want = 0x7FFF if code == 0xFF else int(np.array([2.0 ** (code - 127)], np.float32).view(np.uint32)[0] >> 16)
        assert packed_host["e8m0_to_raw"](code) == want, code
        assert same_float(packed_host["e8m0_to_bfloat16"](code), reference_decode(code, "e8m0")), code


@pytest.mark.parametrize(
    "value, code",
    [
        (0, 0),
        (1, 127),
        (-1, 127),
        (2, 128),
        (3, 129),
        (-5, 130),
        (2**53 + 1, 181),
        (2**62, 189),
        (-(2**63), 190),
        (2**63 - 1, 190),
    ],
)
def test_e8m0_from_integers_is_the_next_power_of_two(packed_host, value, code):
    assert packed_host["e8m0_from_int64"](value) == code


def test_e8m0_from_uint64_and_float64(packed_host):
    assert packed_host["e8m0_from_uint64"](2**64 - 1) == 191
    assert packed_host["e8m0_from_uint64"](2**40) == 167
    # A float64 just above a power of two rounds up although its nearest float32 is the power itself.
    assert packed_host["e8m0_from_float64"](1.0 + 2.0**-40) == 128
    assert packed_host["e8m0_from_float64"](1e300) == 0xFE


def packed_kernel(out16, out32, outf, x, d):
    f2 = cuda.float32x2(x[0], x[1])
    d2 = cuda.float64x2(d[0], d[1])
    f4 = cuda.float32x4(x[0], x[1], x[2], x[3])
    d4 = cuda.float64x4(d[0], d[1], d[2], d[3])
    out16[0] = fp8x2_e4m3(f2).__x
    out16[1] = fp8x2_e4m3(d2).__x
    out16[2] = fp8x2_e5m2(f2).__x
    out16[3] = fp8x2_e8m0(d2).__x
    out32[0] = fp8x4_e4m3(d4).__x
    out32[1] = fp8x4_e5m2(f4).__x
    out32[2] = fp8x4_e8m0(f4).__x
    out32[3] = fp8x4_e8m0().__x
    outf[0] = cuda.float32x2(fp8x2_e8m0(f2)).y + cuda.float32x4(fp8x4_e4m3(f4)).w
    out16[4] = cvt_float2_to_fp8x2(f2, saturation_t.SATFINITE, fp8_interpretation_t.E5M2)
    out16[5] = cvt_double2_to_fp8x2(d2, saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    out16[6] = cvt_float2_to_e8m0x2(f2, saturation_t.SATFINITE, cudaRoundMode.cudaRoundPosInf)
    out16[7] = cvt_double2_to_e8m0x2(d2, saturation_t.NOSAT, cudaRoundMode.cudaRoundZero)
    out16[8] = cvt_float_to_e8m0(x[0], saturation_t.NOSAT, cudaRoundMode.cudaRoundZero)
    out16[9] = cvt_double_to_e8m0(d[0], SaturationMode.SATFINITE, cudaRoundMode.cudaRoundPosInf)
    raw = cvt_e8m0_to_bf16raw(uint8(130))
    out16[10] = raw.x
    out16[11] = cvt_bfloat16raw_to_fp8(raw, saturation_t.NOSAT, FP8Format.E4M3)
    out16[12] = cvt_bfloat16raw_to_e8m0(bfloat16(x[0]), saturation_t.NOSAT, cudaRoundMode.cudaRoundPosInf)
    out16[13] = float32x2_to_fp8x2(f2, saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    out16[14] = float64x2_to_e8m0x2(d2, saturation_t.NOSAT, cudaRoundMode.cudaRoundPosInf)
    out16[15] = e8m0_to_bfloat16_raw(uint8(x[3])).x
    outf[1] = float32(fp8_e4m3()) + float32(fp8_e8m0())


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_packed_types_and_pair_conversions_compile(cc):
    cuda.compile_ptx(packed_kernel, (uint16[:], uint32[:], float32[:], float32[:], float64[:]), cc=cc)


@cuda.jit(device=True)
def passes_packed(p):
    return p


def calls_with_packed(out, x):
    out[0] = passes_packed(fp8x2_e4m3(cuda.float32x2(x[0], x[1]))).__x


def test_packed_values_pass_to_device_functions():
    cuda.compile_ptx(calls_with_packed, (uint16[:], float32[:]), cc=(7, 5))
    assert cuda.compile_ptx(unpack2, (_type_fp8x2_e4m3, int32), device=True)[1] == float32
    _, resty = cuda.compile_ptx(make_fp8x4_e8m0, (_core.parse_type("float64x4"),), device=True)
    assert resty == _type_fp8x4_e8m0 and str(resty) == "fp8x4_e8m0"


def make_fp8x4_e8m0(x):
    return fp8x4_e8m0(x)


def packed_from_scalar(x):
    return fp8x2_e4m3(x)


def packed_from_wrong_width(x):
    return fp8x2_e5m2(cuda.float32x4(x, x, x, x))


def float2_from_fp8x4(x):
    return cuda.float32x2(fp8x4_e4m3(cuda.float32x4(x, x, x, x)))


def scalar_cast_of_packed(x):
    return float32(fp8x2_e4m3(cuda.float32x2(x, x)))


def e8m0_round_nearest(x):
    return cvt_float_to_e8m0(x, saturation_t.SATFINITE, cudaRoundMode.cudaRoundNearest)


def raw_from_float(x):
    return cvt_bfloat16raw_to_fp8(x, saturation_t.NOSAT, fp8_interpretation_t.E4M3)


def pair_from_scalar(x):
    return cvt_float2_to_fp8x2(x, saturation_t.NOSAT, fp8_interpretation_t.E4M3)


def packed_component(x):
    return fp8x2_e4m3(cuda.float32x2(x, x)).x


@pytest.mark.parametrize(
    "fn, message",
    [
        (
            packed_from_scalar,
            "No implementation of cuda.fp8.fp8x2_e4m3(float32): fp8x2_e4m3 is built from nothing, a "
            "float32x2 or a float64x2",
        ),
        (packed_from_wrong_width, "fp8x2_e5m2 is built from nothing, a float32x2 or a float64x2"),
        (float2_from_fp8x4, "a float32x2 is made from an fp8x2 value alone; fp8x4_e4m3 unpacks into a float32x4"),
        (scalar_cast_of_packed, "No implementation of float32(fp8x2_e4m3)"),
        (e8m0_round_nearest, "rounding must be cudaRoundMode.cudaRoundZero or cudaRoundMode.cudaRoundPosInf"),
        (raw_from_float, "x must be a bfloat16 raw value (uint16x1"),
        (pair_from_scalar, "No implementation of cuda.fp8.cvt_float2_to_fp8x2(float32"),
        (packed_component, "Unknown attribute 'x' of type fp8x2_e4m3"),
    ],
)
def test_packed_misuse_is_a_typing_error(fn, message):
    with pytest.raises(TypingError, match=re.escape(message)):
        cuda.compile_ptx(fn, (float32,), device=True)


def test_numba_cuda_names_and_aliases():
    from cujit.cuda import fp8
    from cujit.cuda._internal import cuda_fp8

    assert fp8.float32x2_to_fp8x2 is fp8.cvt_float2_to_fp8x2 and fp8.float64_to_e8m0 is fp8.cvt_double_to_e8m0
    assert fp8.bfloat16_raw_to_fp8 is fp8.cvt_bfloat16raw_to_fp8 and fp8.e8m0_to_bfloat16_raw is cvt_e8m0_to_bf16raw
    assert fp8.SaturationMode is saturation_t and fp8.FP8Format is fp8_interpretation_t
    assert [int(m) for m in cudaRoundMode] == [0, 1, 2, 3]
    numba_cuda_all = {
        "saturation_t",
        "fp8_interpretation_t",
        "fp8_e5m2",
        "fp8x2_e5m2",
        "fp8x4_e5m2",
        "fp8_e4m3",
        "fp8x2_e4m3",
        "fp8x4_e4m3",
        "fp8_e8m0",
        "fp8x2_e8m0",
        "fp8x4_e8m0",
        "cvt_double_to_fp8",
        "cvt_double2_to_fp8x2",
        "cvt_float_to_fp8",
        "cvt_float2_to_fp8x2",
        "cvt_bfloat16raw_to_fp8",
        "cvt_bfloat16raw_to_e8m0",
        "cvt_float_to_e8m0",
        "cvt_float2_to_e8m0x2",
        "cvt_double_to_e8m0",
        "cvt_double2_to_e8m0x2",
        "cvt_e8m0_to_bf16raw",
        "float32_to_fp8",
        "float64_to_fp8",
        "float32x2_to_fp8x2",
        "float64x2_to_fp8x2",
        "bfloat16_raw_to_fp8",
        "bfloat16_raw_to_e8m0",
        "float32_to_e8m0",
        "float64_to_e8m0",
        "float32x2_to_e8m0x2",
        "float64x2_to_e8m0x2",
        "e8m0_to_bfloat16_raw",
        "SaturationMode",
        "FP8Format",
    }
    assert numba_cuda_all <= set(fp8.__all__)
    for name in numba_cuda_all | {"_type_fp8x2_e4m3", "_type_fp8_e8m0"}:
        assert getattr(cuda_fp8, name) is not None, name
    assert cuda_fp8._type_fp8x4_e5m2 is _type_fp8x4_e5m2 and cuda_fp8.fp8x2_e8m0 is fp8x2_e8m0
    assert fp8x4_e5m2._nbtype is _type_fp8x4_e5m2  # numba-cuda's classes carry their type as _nbtype
    with pytest.raises(RuntimeError, match="only be used inside a CUDA kernel"):
        fp8x2_e4m3()
