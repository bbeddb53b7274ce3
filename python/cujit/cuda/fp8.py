"""``from cujit.cuda.fp8 import fp8_e4m3, fp8x2_e4m3, cvt_float_to_fp8, saturation_t, ...``: numba-cuda's fp8 (its
bindings of cuda_fp8.h, ``numba.cuda._internal.cuda_fp8``; ``cujit.cuda._internal.cuda_fp8`` is the same module).

In CUDA code: ``fp8_e4m3(x)``, ``fp8_e5m2(x)`` and ``fp8_e8m0(x)`` make an fp8 value from any number (rounded to
nearest even and saturated to the largest finite value; e8m0 rounds up to a power of two), and
``float32(f)``, ``int32(f)``... convert one back (exactly to floats; truncated and saturated to integers, NaN
giving 0, or 0x8000000000000000 for 64-bit integers); ``fp8_e4m3()`` is zero. The packed types ``fp8x2_e4m3(float32x2 or float64x2)``, ``fp8x4_e4m3(float32x4 or float64x4)`` (and
the e5m2 and e8m0 ones) convert each element the same way, read their bits as ``.__x`` and convert back with
``float32x2(p)`` / ``float32x4(p)``. The storage conversions give the bits: ``cvt_float_to_fp8(x,
saturation_t.X, fp8_interpretation_t.Y)`` and ``cvt_double_to_fp8`` (uint8), ``cvt_float2_to_fp8x2`` and
``cvt_double2_to_fp8x2`` (uint16), the e8m0 ones ``cvt_float_to_e8m0(x, saturation_t.X, cudaRoundMode.Y)``,
``cvt_double_to_e8m0``, ``cvt_float2_to_e8m0x2``, ``cvt_double2_to_e8m0x2``, and the bfloat16 "raw" ones
``cvt_bfloat16raw_to_fp8``, ``cvt_bfloat16raw_to_e8m0`` and ``cvt_e8m0_to_bf16raw`` (a raw value is a uint16x1,
``.x`` its bits; a bfloat16 is accepted too). numba-cuda's NumPy-style aliases (``float32_to_fp8``,
``float32x2_to_e8m0x2``...) are the same objects. The types and conversions are C++ (fp8.cpp, fp8_packed.cpp);
the functions here are stubs callable only in CUDA code. ``is_fp8_supported()`` tells whether the current
device has compute capability 8.9 or higher, as numba-cuda's does (the conversions themselves run on every
device)."""

from enum import IntEnum

from cujit import _core
from cujit.intrinsics import fp8 as _stubs


class saturation_t(IntEnum):
    """What a narrowing conversion does with a value beyond the largest finite fp8 (cuda_fp8.h's __nv_saturation_t)."""

    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(IntEnum):
    """Which fp8 format a storage conversion produces (cuda_fp8.h's __nv_fp8_interpretation_t)."""

    E4M3 = 0
    E5M2 = 1


class cudaRoundMode(IntEnum):
    """The rounding of the e8m0 conversions (CUDA's enum cudaRoundMode; they take cudaRoundZero or
    cudaRoundPosInf)."""

    cudaRoundNearest = 0
    cudaRoundZero = 1
    cudaRoundPosInf = 2
    cudaRoundMinInf = 3


# numba-cuda's later names for the two enums.
SaturationMode = saturation_t
FP8Format = fp8_interpretation_t

fp8_e4m3 = _core.types.lookup("fp8_e4m3")
fp8_e5m2 = _core.types.lookup("fp8_e5m2")
fp8_e8m0 = _core.types.lookup("fp8_e8m0")

# The table's cuda.fp8.* entries (fp8.cpp, fp8_packed.cpp); the numba-style names are the same objects, as in
# numba-cuda.
fp8x2_e4m3 = _stubs.fp8x2_e4m3
fp8x4_e4m3 = _stubs.fp8x4_e4m3
fp8x2_e5m2 = _stubs.fp8x2_e5m2
fp8x4_e5m2 = _stubs.fp8x4_e5m2
fp8x2_e8m0 = _stubs.fp8x2_e8m0
fp8x4_e8m0 = _stubs.fp8x4_e8m0
for _packed in (fp8x2_e4m3, fp8x4_e4m3, fp8x2_e5m2, fp8x4_e5m2, fp8x2_e8m0, fp8x4_e8m0):
    _packed._nbtype = _core.types.lookup(_packed._cujit_intrinsic.rsplit(".", 1)[1])  # numba-cuda's attribute
del _packed
cvt_float_to_fp8 = _stubs.cvt_float_to_fp8
cvt_double_to_fp8 = _stubs.cvt_double_to_fp8
cvt_float2_to_fp8x2 = _stubs.cvt_float2_to_fp8x2
cvt_double2_to_fp8x2 = _stubs.cvt_double2_to_fp8x2
cvt_bfloat16raw_to_fp8 = _stubs.cvt_bfloat16raw_to_fp8
cvt_bfloat16raw_to_e8m0 = _stubs.cvt_bfloat16raw_to_e8m0
cvt_float_to_e8m0 = _stubs.cvt_float_to_e8m0
cvt_float2_to_e8m0x2 = _stubs.cvt_float2_to_e8m0x2
cvt_double_to_e8m0 = _stubs.cvt_double_to_e8m0
cvt_double2_to_e8m0x2 = _stubs.cvt_double2_to_e8m0x2
cvt_e8m0_to_bf16raw = _stubs.cvt_e8m0_to_bf16raw
float32_to_fp8 = cvt_float_to_fp8
float64_to_fp8 = cvt_double_to_fp8
float32x2_to_fp8x2 = cvt_float2_to_fp8x2
float64x2_to_fp8x2 = cvt_double2_to_fp8x2
bfloat16_raw_to_fp8 = cvt_bfloat16raw_to_fp8
bfloat16_raw_to_e8m0 = cvt_bfloat16raw_to_e8m0
float32_to_e8m0 = cvt_float_to_e8m0
float64_to_e8m0 = cvt_double_to_e8m0
float32x2_to_e8m0x2 = cvt_float2_to_e8m0x2
float64x2_to_e8m0x2 = cvt_double2_to_e8m0x2
e8m0_to_bfloat16_raw = cvt_e8m0_to_bf16raw


def is_fp8_supported():
    """numba-cuda's check: the current device has compute capability 8.9 or higher."""
    from cujit.cudadrv import devices

    return devices.runtime_usable() and devices.get_current_device().compute_capability >= (8, 9)


__all__ = [
    "saturation_t",
    "fp8_interpretation_t",
    "cudaRoundMode",
    "SaturationMode",
    "FP8Format",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_e8m0",
    "fp8x2_e4m3",
    "fp8x4_e4m3",
    "fp8x2_e5m2",
    "fp8x4_e5m2",
    "fp8x2_e8m0",
    "fp8x4_e8m0",
    "cvt_float_to_fp8",
    "cvt_double_to_fp8",
    "cvt_float2_to_fp8x2",
    "cvt_double2_to_fp8x2",
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
    "is_fp8_supported",
]
