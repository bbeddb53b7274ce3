"""cujit: numba-cuda's compile/link core rebuilt in C++.

Port code by changing ``from numba import cuda`` to ``from cujit import cuda``.
"""

from cujit import cuda, types, errors  # noqa: F401
from cujit.types import *  # noqa: F401,F403
from cujit._typeof import typeof, from_dtype  # noqa: F401
from cujit.telemetry import stats  # noqa: F401
from cujit._version import __version__  # noqa: F401
