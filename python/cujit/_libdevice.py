"""Finds libdevice (nvvm/libdevice/libdevice.10.bc) once per process."""

import glob
import os
import sys

from cujit import _core

_configured = False


def candidates():
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    paths = [os.path.join(r, "nvvm", "libdevice", "libdevice.10.bc") for r in roots if r]
    for site in sys.path:  # pip's nvidia-cuda-nvcc wheels
        paths += glob.glob(os.path.join(site, "nvidia", "cu*", "nvvm", "libdevice", "libdevice.10.bc"))
        paths += glob.glob(os.path.join(site, "nvidia", "cuda_nvcc", "nvvm", "libdevice", "libdevice.10.bc"))
    return paths


def configure():
    global _configured
    if _configured:
        return
    for path in candidates():
        if os.path.isfile(path):
            _core.set_libdevice_path(path)
            break
    _configured = True
