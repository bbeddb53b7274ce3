"""Finds libdevice (nvvm/libdevice/libdevice.10.bc) once per process."""

import glob
import os
import sys

from cujit import _core

_configured = False


def candidates():
    """Places libdevice may be, most likely first (the toolkits, then pip's nvidia wheels)."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    for root in roots:
        if root:
            yield os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")
    for site in sys.path:
        for pattern in ("cu*", "cuda_nvcc"):
            yield from glob.glob(os.path.join(site, "nvidia", pattern, "nvvm", "libdevice", "libdevice.10.bc"))


def configure():
    global _configured
    if _configured:
        return
    for path in candidates():
        if os.path.isfile(path):
            _core.set_libdevice_path(path)
            break
    _configured = True
