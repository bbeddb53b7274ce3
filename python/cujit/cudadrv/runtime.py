"""numba-cuda's ``cuda.runtime`` and ``cuda.is_supported_version()``.

numba-cuda asks the CUDA runtime library (cudart) for its version. cujit uses no cudart: it runs on the
Driver API alone, so the version that decides what runs is the driver's, and ``runtime.get_version()``
answers with the driver's CUDA version, ``(major, minor)``. Versions 12 and 13 are the supported ones, as in
numba-cuda 0.30.
"""

from cujit.cudadrv import devices

SUPPORTED_MAJOR_VERSIONS = (12, 13)


class Runtime:
    """``cuda.runtime``: ``get_version()``, ``is_supported_version()``, ``supported_versions``."""

    @property
    def supported_versions(self):
        return tuple((major, 0) for major in SUPPORTED_MAJOR_VERSIONS)

    def get_version(self):
        """The CUDA version of the driver cujit runs on, e.g. ``(13, 0)``; CudaSupportError without one."""
        return devices.driver_version()

    def is_supported_version(self):
        return self.get_version()[0] in SUPPORTED_MAJOR_VERSIONS

    def __repr__(self):
        return "<cujit CUDA runtime (the Driver API)>"


runtime = Runtime()


def is_supported_version():
    """True when the CUDA version cujit runs on is one numba-cuda 0.30 supports (12.x or 13.x); a newer one
    may still work. Raises CudaSupportError without a driver."""
    return runtime.is_supported_version()
