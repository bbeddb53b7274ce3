"""cujit: numba-cuda's compile/link core rebuilt in C++.

Port code by changing ``from numba import cuda`` to ``from cujit import cuda``.
"""

import atexit

from cujit import _core
from cujit import cuda, types, errors  # noqa: F401
from cujit.types import *  # noqa: F401,F403
from cujit._typeof import typeof, from_dtype  # noqa: F401
from cujit.structs import register_struct  # noqa: F401
from cujit import extending  # noqa: F401,E402  (registers its callees with the resolver)
from cujit.telemetry import stats  # noqa: F401
from cujit._version import __version__  # noqa: F401


def __getattr__(name):
    """``cujit.vectorize`` and ``cujit.guvectorize`` (numba's top-level names, ``target="cuda"``), loaded on first
    use as ``cujit.cuda`` loads them."""
    if name in ("vectorize", "guvectorize"):
        return getattr(cuda, name)
    raise AttributeError(f"module 'cujit' has no attribute {name!r}")


# cujit's own threads (NVRTC prefetches, the code generator's warm-up, loading nvJitLink) must not be inside
# a library when the process's static destructors run: exit waits for them (fork() does too, in the core).
atexit.register(_core.wait_for_background_work)
