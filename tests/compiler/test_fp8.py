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
from cujit import (boolean, int8, int16, int32, int64, uint8, uint16, uint64, float16, float32, float64, bfloat16,
                   complex64)
from cujit.cuda.fp8 import (fp8_e4m3, fp8_e5m2, fp8_e8m0, cvt_float_to_fp8, cvt_double_to_fp8, float32_to_fp8,
                            float64_to_fp8, saturation_t, fp8_interpretation_t)
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


@pytest.mark.parametrize("make, fp8", [(make_e4m3, fp8_e4m3), (make_e5m2, fp8_e5m2), (make_e8m0, fp8_e8m0)],
                         ids=["e4m3", "e5m2", "e8m0"])
@pytest.mark.parametrize("xtype", [float16, float32, float64, bfloat16, int8, int16, int32, int64, uint8, uint16,
                                   uint64], ids=str)
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


@pytest.mark.parametrize("fn, argtypes, message", [
    (stores_fp8_into_float_array, (float32[:], float32), "cannot store a value of type fp8_e4m3 into an array of "
                                                          "float32"),
    (adds_fp8, (float32, float32), "fp8_e4m3"),
    (bad_storage_args, (float32,), "saturate and fp8_interpretation are saturation_t and fp8_interpretation_t "
                                   "members"),
    (complex_to_fp8, (complex64,), "No implementation of fp8_e5m2(complex64)"),
])
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


def to_bool(b):
    return boolean(b)


HOST_FUNCTIONS = [
    ("encode_double", encode_double, uint8(float64, int32, int32), ctypes.c_uint8, [ctypes.c_double, ctypes.c_int32,
                                                                                     ctypes.c_int32]),
    ("encode_float", encode_float, uint8(float32, int32, int32), ctypes.c_uint8, [ctypes.c_float, ctypes.c_int32,
                                                                                   ctypes.c_int32]),
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
    return sign * (mantissa * 2.0 ** -9 if exponent == 0 else (1 + mantissa / 8) * 2.0 ** (exponent - 7))


FINITE = {fmt: [(c, reference_decode(c, fmt)) for c in range(128) if math.isfinite(reference_decode(c, fmt))]
          for fmt in ("e4m3", "e5m2")}
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
    for i in [0, 1, 3, 17, 1000, -5, 2**40, -2**62]:
        assert host["make_e4m3_i64"](i) == reference_encode(float(np.float32(i)), "e4m3", True), i


@pytest.mark.parametrize("x, bits", [(1.0, 127), (2.0, 128), (3.0, 129), (4.0, 129), (0.75, 127), (math.inf, 0xFE),
                                     (3e38, 0xFE), (2.0 ** -127, 0), (1e-45, 0)])
def test_e8m0_rounds_up_to_a_power_of_two(host, x, bits):
    assert host["make_e8m0_f32"](x) == bits


def saturated(v, lo, hi):
    if math.isnan(v):
        return 0
    return int(max(lo, min(hi, math.trunc(v) if math.isfinite(v) else (hi if v > 0 else lo))))


def test_integer_casts_truncate_and_saturate(host):
    for code in range(256):
        assert host["e4m3_to_int8"](code) == saturated(reference_decode(code, "e4m3"), -128, 127)
        assert host["e5m2_to_uint8"](code) == saturated(reference_decode(code, "e5m2"), 0, 255)
        assert host["e5m2_to_int16"](code) == saturated(reference_decode(code, "e5m2"), -2**15, 2**15 - 1)
        assert host["e8m0_to_int64"](code) == saturated(reference_decode(code, "e8m0"), -2**63, 2**63 - 1)
        assert host["e4m3_to_bool"](code) == (reference_decode(code, "e4m3") != 0)
