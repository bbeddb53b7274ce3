"""``from cujit.cuda.bf16 import hadd, float32_to_bfloat16, ...``: numba-cuda's bfloat16 functions as a module.
They are the intrinsic table's ``cuda.bf16.*`` entries (bfloat16.cpp), callable only in CUDA code; ``bfloat16(x)``
makes a bfloat16 there (``cujit.types.bfloat16`` is its type)."""

from cujit import _core
from cujit.intrinsics import bf16 as _stubs

__all__ = sorted(path.split(".")[2] for path in _core.intrinsic_paths() if path.startswith("cuda.bf16."))
globals().update({name: getattr(_stubs, name) for name in __all__})
