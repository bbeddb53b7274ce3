"""CUDA IPC as numba-cuda has it: a device allocation shared with another process of the same machine.

- ``DeviceNDArray.get_ipc_handle()`` gives an ``IpcArrayHandle``: it pickles, and in the other process
  ``handle.open()`` (or ``with handle as array:``) gives a ``DeviceNDArray`` over the same memory;
  ``close()`` unmaps it.
- ``IpcHandle`` is the memory-level handle memory managers make (``get_ipc_handle(memory)``): ``open(context)``
  gives a ``MemoryPointer``, ``open_array(context, shape, dtype, strides=None)`` a device array, ``close()``.
  It pickles without the memory it came from; opening it in the process that made it is refused.
- ``cuda.open_ipc_array(handle, shape, dtype, strides=None, offset=0)``: a context manager opening a raw
  64-byte ``CUipcMemHandle`` (bytes, or a sequence of ints) from another library, yielding a device array.
- ``GetIpcHandleMixin``: the memory managers' ``get_ipc_handle`` (the allocation's base from
  ``cuMemGetAddressRange``, the handle from ``cuIpcGetMemHandle``, the offset of the memory into it).

A handle made on another device is opened directly when it is the current device, else staged: opened in the
source device's context and copied into memory of the current one (numba's ``open_staged``).
"""

import contextlib
import math
import sys

import numpy as np

from cujit import _core
from cujit.cudadrv import memory_pointers
from cujit.cudadrv.memory_pointers import MemoryPointer, device_address, native_context, runtime_type

_drv = _core.driver
_mem = _core.memory

IPC_HANDLE_SIZE = 64


def _handle_bytes(handle):
    """The 64 bytes of a CUipcMemHandle given as bytes, a buffer, a sequence of ints or an object with
    ``reserved`` (cuda-python's CUipcMemHandle)."""
    handle = getattr(handle, "reserved", handle)
    try:
        data = bytes(memoryview(handle).cast("B"))
    except TypeError:
        try:
            data = bytes(int(b) & 0xFF for b in handle)
        except TypeError:
            raise TypeError(
                f"an IPC handle is {IPC_HANDLE_SIZE} bytes (bytes or a sequence of ints), got {type(handle).__name__}"
            ) from None
    if len(data) != IPC_HANDLE_SIZE:
        raise ValueError(f"an IPC handle is {IPC_HANDLE_SIZE} bytes, got {len(data)}")
    return data


def device_identity(device_id):
    """numba's ``Device.get_device_identity()``: the PCI location that names a device across processes."""
    info = _drv.device_info(device_id)
    return {
        "pci_domain_id": info.pci_domain_id,
        "pci_bus_id": info.pci_bus_id,
        "pci_device_id": info.pci_device_id,
    }


def device_from_identity(identity):
    """The id of the visible device at ``identity`` (RuntimeError when this process cannot see it)."""
    for device_id in range(_drv.device_count()):
        if device_identity(device_id) == identity:
            return device_id
    raise RuntimeError(f"No device of {identity} is found. Target device may not be visible in this process.")


def _require_ipc():
    if not sys.platform.startswith("linux"):
        raise OSError("OS does not support CUDA IPC")


class IpcHandle:
    """A CUDA IPC handle: ``IpcHandle(base, handle, size, source_info=None, offset=0)``. ``base`` keeps the
    exported memory alive in the exporting process (None in others); ``handle`` is the 64-byte
    CUipcMemHandle of the allocation; the shared memory is ``size`` bytes at ``offset`` into it."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = _handle_bytes(handle)
        self.size = int(size)
        self.source_info = source_info
        self.offset = int(offset)
        self._opened = None  # the IpcMapping of a direct open; True after a staged one

    def _sentry_source_info(self):
        if self.source_info is None:
            raise RuntimeError("IPC handle doesn't have source info")

    def can_access_peer(self, context):
        """Whether ``context``'s device opens this handle directly: cujit does so on the device the handle was
        made on, and stages through that device otherwise."""
        self._sentry_source_info()
        return self.source_info == device_identity(native_context(context).device_id)

    def _sentry_not_open(self):
        if self.base is not None:
            raise ValueError("opening IpcHandle from original process")
        if self._opened is not None:
            raise ValueError("IpcHandle is already opened")

    def open_direct(self, context):
        """Maps the memory into ``context``; returns a ``MemoryPointer`` to it."""
        self._sentry_not_open()
        _require_ipc()
        native = native_context(context)
        mapping = _mem.ipc_open(self.handle, native)
        self._opened = mapping
        whole = MemoryPointer(context, mapping.ptr, self.offset + self.size, owner=mapping)
        return whole.view(self.offset)

    def open_staged(self, context):
        """Maps the memory in its own device's context and copies it into new memory of ``context``."""
        self._sentry_source_info()
        self._sentry_not_open()
        _require_ipc()
        source = _drv.primary_context(device_from_identity(self.source_info))
        mapping = _mem.ipc_open(self.handle, source)
        try:
            copy = memory_pointers.user_context(native_context(context)).memalloc(self.size)
            _drv.copy_dtod(device_address(copy), mapping.ptr + self.offset, self.size, None, source)
        finally:
            mapping.close()
        self._opened = True
        return copy

    def open(self, context):
        """The shared memory in ``context`` (a ``MemoryPointer``): mapped directly when the handle was made on
        ``context``'s device (or says nothing of its device), else staged."""
        self._sentry_not_open()
        if self.source_info is None or self.can_access_peer(context):
            return self.open_direct(context)
        return self.open_staged(context)

    def open_array(self, context, shape, dtype, strides=None):
        """``open(context)`` as a device array of ``shape`` and ``dtype`` (C-contiguous unless ``strides``)."""
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if strides is None:
            strides = _c_strides(shape, dtype.itemsize)
        memory = self.open(context)
        return runtime_type("array")(shape, strides, dtype, gpu_data=memory)

    def close(self):
        """Unmaps the memory opened from this handle (arrays over it must not be used after)."""
        if self._opened is None:
            raise ValueError("IpcHandle not opened")
        if self._opened is not True and self._opened.is_open:
            self._opened.close()
        self._opened = None

    def __reduce__(self):
        return (_rebuild_ipc_handle, (self.handle, self.size, self.source_info, self.offset))

    def __repr__(self):
        return f"<IpcHandle size={self.size} offset={self.offset} source={self.source_info}>"


def _rebuild_ipc_handle(handle, size, source_info, offset):
    return IpcHandle(None, handle, size, source_info, offset)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class GetIpcHandleMixin:
    """numba's default ``get_ipc_handle(memory)`` for memory managers: finds the allocation ``memory`` lies in
    (``cuMemGetAddressRange``) and makes its IPC handle (``cuIpcGetMemHandle``)."""

    def get_ipc_handle(self, memory):
        _require_ipc()
        native = native_context(getattr(self, "context", None))
        ptr = device_address(memory)
        base, _ = _mem.address_range(ptr, native)
        handle = _mem.ipc_handle(base, native)
        size = getattr(memory, "size", None)
        return IpcHandle(memory, handle, size, device_identity(native.device_id), offset=ptr - base)


class IpcArrayHandle:
    """A device array shared with another process: pickle it there, then ``open()`` gives a ``DeviceNDArray``
    over the same memory and ``close()`` unmaps it; ``with handle as array:`` does both."""

    def __init__(self, ipc_handle, array_desc):
        self._ipc_handle = ipc_handle
        self._array_desc = array_desc

    def open(self):
        memory = self._ipc_handle.open(memory_pointers.user_context(native_context(None)))
        return runtime_type("array")(gpu_data=memory, **self._array_desc)

    def close(self):
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """numba's ``cuda.open_ipc_array``: opens a raw IPC ``handle`` (64 bytes, or a sequence of ints) of another
    process as a device array of ``shape``, ``dtype`` and ``strides`` (C-contiguous when None), ``offset``
    bytes into the allocation; closes it when the block ends."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = math.prod(shape) * dtype.itemsize
    ipc = IpcHandle(None, handle, size, offset=offset)
    array = ipc.open_array(memory_pointers.user_context(native_context(None)), shape, dtype, strides)
    try:
        yield array
    finally:
        ipc.close()
