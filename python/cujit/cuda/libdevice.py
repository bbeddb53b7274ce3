"""``from cujit.cuda.libdevice import fmaf, sinf, ...``: libdevice's functions as a module (numba.cuda.libdevice).
They are the intrinsic table's ``cuda.libdevice.*`` entries, callable only in CUDA code."""

from cujit import _core
from cujit.intrinsics import libdevice as _stubs

__all__ = sorted(path.split(".")[2] for path in _core.intrinsic_paths() if path.startswith("cuda.libdevice."))
globals().update({name: getattr(_stubs, name) for name in __all__})
