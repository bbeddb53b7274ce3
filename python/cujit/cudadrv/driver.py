"""Host-side copies to and from raw device pointers, for module setup callbacks: ``module.get_global(name)``
gives ``(pointer, size)`` of a ``__device__`` or ``__constant__`` variable, and these write or read it without
another CUDA binding. ``cuda.driver`` is this module.

- ``memcpy_htod(dst, src, nbytes=None, stream=None)``: copy a host buffer (anything with the buffer protocol:
  numpy arrays, bytes, ctypes objects) to device address ``dst`` (an int).
- ``memcpy_dtoh(dst, src, nbytes=None, stream=None)``: copy from device address ``src`` into a writable host
  buffer.

``nbytes`` defaults to the host buffer's size. Without a stream the copy is synchronous; with one it is
ordered on it (the host buffer must then stay alive until the stream is done with it).
"""

from cujit import _core


def _native(stream):
    return None if stream is None else getattr(stream, "_native", stream)


def memcpy_htod(dst, src, nbytes=None, stream=None):
    _core.driver.copy_htod(int(dst), src, nbytes, _native(stream))


def memcpy_dtoh(dst, src, nbytes=None, stream=None):
    _core.driver.copy_dtoh(dst, int(src), nbytes, _native(stream))


def __getattr__(name):
    """numba-cuda's driver module names its runtime's classes too (``driver.Stream``, ``driver.Event``,
    ``driver.Context``, ``driver.Device``): cujit's, imported on first use."""
    where = {
        "Stream": "cujit.cudadrv.stream",
        "Event": "cujit.cudadrv.events",
        "Context": "cujit.cudadrv.devices",
        "Device": "cujit.cudadrv.devices",
    }.get(name)
    if where is None:
        raise AttributeError(f"module 'cujit.cudadrv.driver' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(where), name)
