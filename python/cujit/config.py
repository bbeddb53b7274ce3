"""Settings read at each use (numba-cuda's ``config`` names), settable at run time.

- ``CUDA_NVRTC_EXTRA_SEARCH_PATHS``: ``:``-separated include directories for CUDA C++ link inputs, after the
  CUDA headers; from ``CUJIT_NVRTC_EXTRA_SEARCH_PATHS`` or ``NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS``.
- ``CUJIT_CACHE``: "1" caches every kernel on disk, "0" none; unset: the kernels of ``cache=True``
  (``docs/caching.md``).
- CUDA headers themselves come from the toolkit (``CUDA_HOME``, the pip wheels, ``/usr/local/cuda``), preceded
  by ``CUJIT_CUDA_INCLUDE_PATH`` / ``NUMBA_CUDA_INCLUDE_PATH`` when set (see ``cujit.toolkit``).
"""

import os

CUDA_NVRTC_EXTRA_SEARCH_PATHS = os.environ.get("CUJIT_NVRTC_EXTRA_SEARCH_PATHS") or os.environ.get(
    "NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", ""
)


def cache_wanted(cache_option):
    """Whether a kernel with ``cache=cache_option`` uses the disk cache, under ``CUJIT_CACHE``."""
    mode = os.environ.get("CUJIT_CACHE", "").strip().lower()
    return mode not in ("0", "false", "no", "off") and (bool(cache_option) or mode in ("1", "true", "yes", "on"))
