"""``numba.cuda._internal.cuda_fp8``'s names, for ported imports: the same objects as :mod:`cujit.cuda.fp8`, and
its ``_type_<name>`` type objects (``_type_fp8x2_e4m3``... for signatures: ``void(_type_fp8x2_e4m3[:])``)."""

from cujit import _core
from cujit.cuda.fp8 import *  # noqa: F401,F403
from cujit.cuda.fp8 import __all__ as _fp8_names

_TYPE_NAMES = [f"_type_{kind}_{fmt}" for fmt in ("e5m2", "e4m3", "e8m0") for kind in ("fp8", "fp8x2", "fp8x4")]
globals().update({name: _core.types.lookup(name[len("_type_") :]) for name in _TYPE_NAMES})
__all__ = _TYPE_NAMES + list(_fp8_names)
