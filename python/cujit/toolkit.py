"""Where cujit finds the CUDA toolkit's parts (NVRTC, nvJitLink, libNVVM, libdevice, headers, libcuda).

The C++ locator (``cujit._core.toolkit``) looks in ``$CUDA_HOME``/``$CUDA_PATH``, then in NVIDIA's pip
wheels, then in ``/usr/local/cuda``, then (libraries) on the loader's path. This module hands it the wheels'
roots found on ``sys.path``: ``nvidia/cu13`` (the CUDA 13 wheels ``pip install cujit[cu13]`` brings) and the
per-library folders of the CUDA 12 wheels. ``report()`` says what was found where.
"""

import os
import sys

from cujit import _core

_WHEEL_ROOTS = (
    "nvidia/cu13",
    "nvidia/cuda_nvrtc",
    "nvidia/nvjitlink",
    "nvidia/cuda_nvcc",
    "nvidia/cuda_runtime",
    "nvidia/cu12",
)


def wheel_roots():
    """The roots of NVIDIA's pip wheels under ``sys.path`` that exist, in ``sys.path`` order."""
    found = []
    for entry in sys.path:
        if not entry or not os.path.isdir(os.path.join(entry, "nvidia")):
            continue
        for sub in _WHEEL_ROOTS:
            path = os.path.join(entry, sub)
            if os.path.isdir(path) and path not in found:
                found.append(path)
    return found


def search_roots():
    """The toolkit roots the locator searches, in its order: ``$CUDA_HOME``, ``$CUDA_PATH``, the wheels' roots,
    ``/usr/local/cuda`` (for what Python finds itself: the tools' files, ``fatbinary``)."""
    return _core.toolkit.search_roots()


def configure():
    """Hands the wheel roots to the locator (done at import, before any part can be looked up)."""
    _core.toolkit.set_wheel_roots(wheel_roots())


def library(name):
    """Where "nvrtc", "nvjitlink", "nvvm" or "driver" was found: a ``Located`` (``found``, ``path``, ``reason``,
    ``searched``)."""
    return _core.toolkit.library(name)


def libdevice_path():
    return _core.toolkit.libdevice_path()[0]


def cudadevrt_path():
    """The device runtime's static library (``libcudadevrt.a``), which cooperative kernels link."""
    path, reason = _core.toolkit.cudadevrt_path()
    if not path:
        raise FileNotFoundError(reason)
    return path


def include_dirs():
    """The CUDA include directories NVRTC is given (CUJIT_CUDA_INCLUDE_PATH / NUMBA_CUDA_INCLUDE_PATH first)."""
    return _core.toolkit.include_dirs()


def report():
    """A line per part: where it was found, or why not."""
    lines = []
    for name in ("nvrtc", "nvjitlink", "nvvm"):
        info = library(name)
        lines.append(f"{name}: {info['path'] if info['found'] else info['reason']}")
    lines.append(f"libdevice: {libdevice_path() or _core.toolkit.libdevice_path()[1]}")
    lines.append(f"include: {':'.join(include_dirs())}")
    return "\n".join(lines)


configure()  # at import: the C++ core may be asked for a library before anything else runs
