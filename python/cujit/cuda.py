"""``from cujit import cuda``: the numba.cuda namespace of cujit."""

from cujit.compiler import compile, compile_ptx, DEFAULT_CC  # noqa: F401
from cujit.dispatcher import jit, CUDADispatcher  # noqa: F401
from cujit import types  # noqa: F401
from cujit.types import *  # noqa: F401,F403
from cujit.errors import (TypingError, UnsupportedError, CudaSupportError, CudaDriverError,  # noqa: F401
                          NvrtcError, LinkerError)
from cujit.intrinsics import *  # noqa: F401,F403
