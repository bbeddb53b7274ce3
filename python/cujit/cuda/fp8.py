"""``from cujit.cuda.fp8 import fp8_e4m3, cvt_float_to_fp8, saturation_t, ...``: numba-cuda's fp8 (its bindings
of cuda_fp8.h, ``numba.cuda._internal.cuda_fp8``; ``cujit.cuda._internal.cuda_fp8`` is the same module).

In CUDA code: ``fp8_e4m3(x)``, ``fp8_e5m2(x)`` and ``fp8_e8m0(x)`` make an fp8 value from any number (rounded to
nearest even and saturated to the largest finite value; e8m0 rounds up to a power of two), and
``float32(f)``, ``int32(f)``... convert one back (exactly to floats; truncated and saturated to integers, NaN
giving 0). ``cvt_float_to_fp8(x, saturation_t.X, fp8_interpretation_t.Y)`` and ``cvt_double_to_fp8`` (also named
``float32_to_fp8`` and ``float64_to_fp8``) give the uint8 bits. The types and conversions are C++ (fp8.cpp); the
functions here are stubs callable only in CUDA code. ``is_fp8_supported()`` tells whether the current device
has compute capability 8.9 or higher, as numba-cuda's does (the conversions themselves run on every device)."""

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


fp8_e4m3 = _core.types.lookup("fp8_e4m3")
fp8_e5m2 = _core.types.lookup("fp8_e5m2")
fp8_e8m0 = _core.types.lookup("fp8_e8m0")

# The table's cuda.fp8.* entries (fp8.cpp); the numba-style names are the same objects, as in numba-cuda.
cvt_float_to_fp8 = _stubs.cvt_float_to_fp8
cvt_double_to_fp8 = _stubs.cvt_double_to_fp8
float32_to_fp8 = cvt_float_to_fp8
float64_to_fp8 = cvt_double_to_fp8


def is_fp8_supported():
    """numba-cuda's check: the current device has compute capability 8.9 or higher."""
    from cujit.cudadrv import devices
    return devices.is_available() and devices.get_current_device().compute_capability >= (8, 9)


__all__ = ["saturation_t", "fp8_interpretation_t", "fp8_e4m3", "fp8_e5m2", "fp8_e8m0", "cvt_float_to_fp8",
           "cvt_double_to_fp8", "float32_to_fp8", "float64_to_fp8", "is_fp8_supported"]
