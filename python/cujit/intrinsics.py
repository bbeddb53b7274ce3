"""Stubs for the CUDA intrinsics of ``cuda.*`` (``cuda.grid``, ``cuda.threadIdx``,
``cuda.shared.array``, ``cuda.atomic.add``...). They only name the intrinsic:
the C++ typing and lowering implement it. Calling one from Python raises."""


class Intrinsic:
    def __init__(self, path, children=()):
        self._cujit_intrinsic = path
        for child in children:
            setattr(self, child, Intrinsic(f"{path}.{child}"))

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._cujit_intrinsic} can only be used inside a CUDA kernel or device function")

    def __repr__(self):
        return f"<cujit intrinsic {self._cujit_intrinsic}>"


_DIM3 = ("x", "y", "z")
_FUNCTIONS = ("grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
              "syncwarp", "threadfence", "threadfence_block", "threadfence_system", "nanosleep", "shfl_sync",
              "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "all_sync", "any_sync", "eq_sync", "ballot_sync",
              "popc", "clz", "brev", "fma", "selp")

threadIdx = Intrinsic("cuda.threadIdx", _DIM3)
blockIdx = Intrinsic("cuda.blockIdx", _DIM3)
blockDim = Intrinsic("cuda.blockDim", _DIM3)
gridDim = Intrinsic("cuda.gridDim", _DIM3)
laneid = Intrinsic("cuda.laneid")
warpsize = Intrinsic("cuda.warpsize")
shared = Intrinsic("cuda.shared", ("array",))
local = Intrinsic("cuda.local", ("array",))
const = Intrinsic("cuda.const", ("array_like",))
atomic = Intrinsic("cuda.atomic", ("add", "sub", "max", "min", "exch", "cas", "compare_and_swap", "and_", "or_",
                                   "xor", "inc", "dec"))
for _name in _FUNCTIONS:
    globals()[_name] = Intrinsic(f"cuda.{_name}")
del _name

__all__ = ["threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "shared", "local", "const",
           "atomic", *_FUNCTIONS]
