"""Host memory the GPU reaches, as numba-cuda has it:

- ``pinned_array(shape, dtype, strides, order)`` / ``pinned_array_like(ary)``: a numpy array in page-locked
  memory (fast, asynchronous copies).
- ``mapped_array(shape, dtype, strides, order, stream=0, portable=False, wc=False)`` / ``mapped_array_like``:
  page-locked memory mapped into the device's address space, as a ``MappedNDArray``: a numpy array that kernels
  take in place (it has ``__cuda_array_interface__``). ``portable``: pinned for every context; ``wc``:
  write-combined (numba-cuda accepts both and drops them; cujit passes them to the driver).
- ``managed_array(shape, dtype, strides, order, stream=0, attach_global=True)``: managed (unified) memory as a
  ``ManagedNDArray``, one address on host and device.
- ``with pinned(*arrays):`` page-locks existing numpy arrays for the block; ``with mapped(*arrays, stream=0) as
  d:`` also maps them, yielding device arrays over the same memory (one, or a list).

Every allocation goes through the memory manager (``memhostalloc``, ``mempin``, ``memallocmanaged``), so an
external memory manager sees them. A view of a mapped or managed array is one too; a copy (``a.copy()``,
``a + 1``) is ordinary host memory and reads as a plain numpy array (it has no ``__cuda_array_interface__``).
"""

import contextlib
import ctypes

import numpy as np

from cujit.cudadrv import memory_managers
from cujit.cudadrv.devicearray import DeviceNDArray, _extent, _normalize_shape, contiguous_strides, cuda_array_interface
from cujit.cudadrv.memory_pointers import device_address, host_address, host_buffer


# ---- layouts -----------------------------------------------------------------------------------------------


def _layout(shape, dtype, strides, order):
    """(shape, strides, dtype, offset of element 0 into the buffer, buffer size) of a new host array."""
    shape = _normalize_shape(shape)
    dtype = np.dtype(dtype)
    if strides is None:
        if order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', got {order!r}")
        strides = contiguous_strides(shape, dtype.itemsize, order)
    else:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape):
            raise ValueError(f"strides {strides} do not match shape {shape}")
    low, high = _extent(shape, strides, dtype.itemsize)
    return shape, strides, dtype, -low, high - low


def _array_over(memory, shape, strides, dtype, offset, nbytes):
    return np.ndarray(shape, dtype, buffer=host_buffer(memory, nbytes), offset=offset, strides=strides)


def _strides_like(ary):
    """numba's rule for ``*_like``: a contiguous (or 1-D) array's order, else the strides of a dense array with
    ``ary``'s axis order."""
    if ary.flags["C_CONTIGUOUS"] or ary.flags["F_CONTIGUOUS"] or ary.ndim <= 1:
        return None
    strides, step = [0] * ary.ndim, ary.dtype.itemsize
    for axis, _ in sorted(enumerate(ary.strides), key=lambda pair: pair[1]):
        strides[axis] = step
        step *= ary.shape[axis]
    return tuple(strides)


def _order_like(ary):
    return "F" if ary.flags["F_CONTIGUOUS"] and not ary.flags["C_CONTIGUOUS"] else "C"


# ---- arrays the device reads in place ----------------------------------------------------------------------


class _DeviceReachableArray(np.ndarray):
    """A numpy array in memory the device reaches: ``gpu_data`` (the memory object), ``stream``, and
    ``__cuda_array_interface__`` with the device address. Views keep both; arrays in other memory (copies,
    results of operations) have neither."""

    def device_setup(self, gpu_data, stream=0):
        self.gpu_data = gpu_data
        self.stream = stream

    def __array_finalize__(self, obj):
        memory = getattr(obj, "gpu_data", None)
        self.gpu_data = memory if memory is not None and self._lies_in(memory) else None
        self.stream = getattr(obj, "stream", 0) if self.gpu_data is not None else 0

    def _lies_in(self, memory):
        if self.size == 0:
            return True
        low, high = _extent(self.shape, self.strides, self.itemsize)
        start = self.__array_interface__["data"][0]
        base = host_address(memory)
        return base <= start + low and start + high <= base + memory.size

    @property
    def __cuda_memory__(self):
        return self.gpu_data is not None

    @property
    def __cuda_array_interface__(self):
        memory = self.gpu_data
        if memory is None:
            raise AttributeError(
                f"this {type(self).__name__}'s memory is not reachable by the device (a copy of a "
                "mapped or managed array is ordinary host memory)"
            )
        ptr = 0
        if self.size:
            ptr = device_address(memory) + (self.__array_interface__["data"][0] - host_address(memory))
        strides = None if self.flags["C_CONTIGUOUS"] else self.strides
        return cuda_array_interface(self.shape, strides, self.dtype, ptr, self.stream)

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self.__cuda_array_interface__["data"][0] or None)

    def as_cuda_arg(self):
        return self.gpu_data

    def copy_to_host(self, ary=None, stream=0):
        """A host copy (or a copy into ``ary``); the memory is host memory, so no transfer is needed."""
        if ary is None:
            return np.array(self, copy=True, subok=False)
        ary[...] = self
        return ary

    def copy_to_device(self, ary, stream=0):
        """Writes ``ary`` (host data) into this array."""
        self[...] = np.asarray(ary)


class MappedNDArray(_DeviceReachableArray):
    """A host array in page-locked memory mapped into the device (numba's ``MappedNDArray``)."""


class ManagedNDArray(_DeviceReachableArray):
    """A host array in managed memory (numba's ``ManagedNDArray``)."""


# ---- constructors ------------------------------------------------------------------------------------------


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """An uninitialised numpy array in page-locked host memory (``numpy.empty`` with a pinned buffer)."""
    shape, strides, dtype, offset, nbytes = _layout(shape, dtype, strides, order)
    memory = memory_managers.memhostalloc(nbytes)
    return _array_over(memory, shape, strides, dtype, offset, nbytes)


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False, wc=False):
    """An uninitialised ``MappedNDArray``: page-locked host memory the device reads and writes in place."""
    shape, strides, dtype, offset, nbytes = _layout(shape, dtype, strides, order)
    memory = memory_managers.memhostalloc(nbytes, mapped=True, portable=portable, wc=wc)
    array = _array_over(memory, shape, strides, dtype, offset, nbytes).view(MappedNDArray)
    array.device_setup(memory, stream=stream)
    return array


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0, attach_global=True):
    """An uninitialised ``ManagedNDArray`` in managed memory. ``attach_global``: reachable from any stream on
    any device; False attaches it to the host (devices of compute capability 6.0 and later reach it)."""
    shape, strides, dtype, offset, nbytes = _layout(shape, dtype, strides, order)
    memory = memory_managers.memallocmanaged(nbytes, attach_global=attach_global)
    array = _array_over(memory, shape, strides, dtype, offset, nbytes).view(ManagedNDArray)
    array.device_setup(memory, stream=stream)
    return array


def pinned_array_like(ary):
    """``pinned_array`` with ``ary``'s shape, dtype and layout."""
    return pinned_array(ary.shape, ary.dtype, strides=_strides_like(ary), order=_order_like(ary))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    """``mapped_array`` with ``ary``'s shape, dtype and layout."""
    return mapped_array(
        ary.shape,
        ary.dtype,
        strides=_strides_like(ary),
        order=_order_like(ary),
        stream=stream,
        portable=portable,
        wc=wc,
    )


# ---- pinning existing arrays -------------------------------------------------------------------------------


def _host_view(ary, what):
    if isinstance(ary, np.ndarray):
        return ary
    try:
        return np.frombuffer(ary, dtype=np.uint8)
    except TypeError:
        raise TypeError(f"cuda.{what} takes host arrays (numpy arrays or buffers), got {type(ary).__name__}") from None


def _pin(ary, mapped):
    """(memory, byte offset of element 0 into it) for ``ary`` page-locked in place."""
    low, high = _extent(ary.shape, ary.strides, ary.itemsize)
    start = ary.__array_interface__["data"][0] + low
    return memory_managers.mempin(ary, start, high - low, mapped=mapped), -low


@contextlib.contextmanager
def pinned(*arylist):
    """Page-locks the host arrays for the block (copies of them run asynchronously); lifted after it."""
    pins = [_pin(_host_view(ary, "pinned"), mapped=False)[0] for ary in arylist]
    try:
        yield
    finally:
        for memory in pins:
            memory.free()


@contextlib.contextmanager
def mapped(*arylist, **kws):
    """Page-locks and maps the host arrays for the block, yielding a device array over each (the array itself
    for one): kernels given them read and write the host memory. ``stream=`` is the only keyword."""
    unknown = set(kws) - {"stream"}
    if unknown:
        raise TypeError(f"cuda.mapped takes only the keyword 'stream', got {', '.join(sorted(unknown))}")
    stream = kws.get("stream", 0)
    pins, devices = [], []
    try:
        for ary in arylist:
            host = _host_view(ary, "mapped")
            memory, offset = _pin(host, mapped=True)
            pins.append(memory)
            ptr = device_address(memory) + offset if host.size else 0
            devices.append(DeviceNDArray(host.shape, host.strides, host.dtype, stream, gpu_data=memory, ptr=ptr))
        yield devices[0] if len(devices) == 1 else devices
    finally:
        for memory in pins:
            memory.free()
