"""Settings read at each use (numba-cuda's ``config`` names), settable at run time.

- ``CUDA_NVRTC_EXTRA_SEARCH_PATHS``: ``:``-separated include directories for CUDA C++ link inputs, after the
  CUDA headers; from ``CUJIT_NVRTC_EXTRA_SEARCH_PATHS`` or ``NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS``.
- CUDA headers themselves come from the toolkit (``CUDA_HOME``, the pip wheels, ``/usr/local/cuda``), preceded
  by ``CUJIT_CUDA_INCLUDE_PATH`` / ``NUMBA_CUDA_INCLUDE_PATH`` when set (see ``cujit.toolkit``).
"""

import os

CUDA_NVRTC_EXTRA_SEARCH_PATHS = (os.environ.get("CUJIT_NVRTC_EXTRA_SEARCH_PATHS")
                                 or os.environ.get("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", ""))
