"""Settings read at each use (numba-cuda's ``config`` names), settable at run time; and ``ENABLE_CUDASIM`` and
``CUDA_DEFAULT_PTX_CC``, read once.

- ``CUDA_NVRTC_EXTRA_SEARCH_PATHS``: ``:``-separated include directories for CUDA C++ link inputs, after the
  CUDA headers; from ``CUJIT_NVRTC_EXTRA_SEARCH_PATHS`` or ``NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS``.
- ``CUJIT_CACHE``: "1" caches every kernel on disk, "0" none; unset: the kernels of ``cache=True``
  (``docs/caching.md``).
- CUDA headers themselves come from the toolkit (``CUDA_HOME``, the pip wheels, ``/usr/local/cuda``), preceded
  by ``CUJIT_CUDA_INCLUDE_PATH`` / ``NUMBA_CUDA_INCLUDE_PATH`` when set (see ``cujit.toolkit``).
"""

import os

from cujit import _core, _target

#: numba-cuda's facts a program reads at import to choose its path (read once here, as numba's config is):
#: whether kernels run without a GPU (the process's target is the CPU: ``CUJIT_TARGET=cpu`` or
#: ``NUMBA_ENABLE_CUDASIM=1``), and the compute capability a compile given no ``cc`` targets.
ENABLE_CUDASIM = not _target.default_target().on_gpu
CUDA_DEFAULT_PTX_CC = _core.DEFAULT_CC
#: numba-cuda's runtime (NRT: reference-counted arrays allocated in kernels): cujit has none.
CUDA_ENABLE_NRT = False

#: numba-cuda's warning switches, settable at run time (``config.CUDA_LOW_OCCUPANCY_WARNINGS = 0``, as numba-cuda's
#: own test case does); None: the environment decides at each use (``NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS``,
#: ``NUMBA_CUDA_WARN_ON_IMPLICIT_COPY``, or their ``CUJIT_`` spellings; on unless "0").
CUDA_LOW_OCCUPANCY_WARNINGS = None
CUDA_WARN_ON_IMPLICIT_COPY = None
#: numba's switch that silences every NumbaPerformanceWarning (both above); None: NUMBA_DISABLE_PERFORMANCE_WARNINGS.
DISABLE_PERFORMANCE_WARNINGS = None


def _switch(name, default):
    value = globals().get(name)
    if value is None:
        value = os.environ.get("CUJIT_" + name, os.environ.get("NUMBA_" + name, default))
    return value not in (0, False, "0", "", "false", "False")


def warning_enabled(name):
    """Whether numba-cuda's performance warning switch ``name`` (``CUDA_LOW_OCCUPANCY_WARNINGS``...) is on (and
    ``DISABLE_PERFORMANCE_WARNINGS`` is not)."""
    return _switch(name, "1") and not _switch("DISABLE_PERFORMANCE_WARNINGS", "0")


CUDA_NVRTC_EXTRA_SEARCH_PATHS = os.environ.get("CUJIT_NVRTC_EXTRA_SEARCH_PATHS") or os.environ.get(
    "NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", ""
)


def cache_wanted(cache_option):
    """Whether a kernel with ``cache=cache_option`` uses the disk cache, under ``CUJIT_CACHE``."""
    mode = os.environ.get("CUJIT_CACHE", "").strip().lower()
    return mode not in ("0", "false", "no", "off") and (bool(cache_option) or mode in ("1", "true", "yes", "on"))
