"""Device arrays as numba-cuda has them: ``DeviceNDArray`` with ``shape``/``dtype``/``strides``/``size``/``ndim``,
``__cuda_array_interface__`` (version 3), ``copy_to_host``, ``copy_to_device``, views by basic indexing (ints,
slices, ``...``, ``None``), ``__len__``; and ``to_device``, ``device_array``, ``device_array_like``,
``as_cuda_array``, ``is_cuda_array``.

Views share one allocation (a ``cujit._core.driver.Allocation``); its memory goes back to the context's
deferred free list when the last view is collected, and is freed in batches (numba's behaviour). Host data is
read through numpy / the buffer protocol only. A device array of a non-contiguous view copies to the host through
the byte span it covers, so every view can be read; writing to the device needs a contiguous destination.
"""

import ctypes
import operator
import warnings

import numpy as np

from cujit import _core, config
from cujit._typeof import array_type, check_dtype
from cujit.cudadrv import ipc, memory_managers, memory_pointers
from cujit.cudadrv.stream import native_stream
from cujit.errors import NumbaPerformanceWarning

_drv = _core.driver


# ---- layout helpers ----------------------------------------------------------------------------------------


def _normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def contiguous_strides(shape, itemsize, order="C"):
    strides = [0] * len(shape)
    step = itemsize
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for axis in axes:
        strides[axis] = step
        step *= max(shape[axis], 1)
    return tuple(strides)


def _is_contiguous(shape, strides, itemsize, order):
    """numpy's rule (dimensions of length 1 do not matter, and empty arrays are contiguous), as the C++ types
    apply it to launch arguments."""
    return _core.types.is_contiguous(shape, strides, itemsize, order)


def _extent(shape, strides, itemsize):
    """(low, high) byte offsets, relative to element 0, of the memory the array covers."""
    if 0 in shape:
        return 0, 0
    low = high = 0
    for n, s in zip(shape, strides):
        span = (n - 1) * s
        if span < 0:
            low += span
        else:
            high += span
    return low, high + itemsize


def cuda_array_interface(shape, strides, dtype, ptr, stream):
    """A ``__cuda_array_interface__`` (version 3) dict; ``strides`` None for C-contiguous arrays."""
    handle = None
    if stream is not None and not (isinstance(stream, int) and stream == 0):
        native = native_stream(stream)
        # CAI v3 reserves 0; the driver's handle 0 is the legacy default stream, which CAI calls 1.
        handle = (native.handle or 1) if native is not None else None
    return {
        "shape": shape,
        "strides": strides,
        "data": (ptr, False),
        "typestr": dtype.str,
        "descr": dtype.descr if dtype.fields is not None else [("", dtype.str)],
        "stream": handle,
        "version": 3,
    }


def _dtype_of(obj):
    return obj.dtype if isinstance(obj.dtype, np.dtype) else np.dtype(obj.dtype)


def _host_array(obj):
    """A numpy view of a host object (ndarray, buffer, scalar, sequence); never a device array."""
    if is_cuda_array(obj):
        raise TypeError("expected a host array, got a device array")
    return np.asarray(obj)


def _context_of(owner):
    """The native context of a memory owner (cujit's allocations, and memory managers' MemoryPointers)."""
    ctx = getattr(owner, "context", None)
    ctx = getattr(ctx, "_native", ctx)
    return ctx if isinstance(ctx, _drv.Context) else None


# ---- the device array --------------------------------------------------------------------------------------


class DeviceNDArray(_core.launch.DeviceArrayBase):
    """An array in GPU memory. ``DeviceNDArray(shape, strides, dtype, stream=0, gpu_data=None)`` as in numba:
    without ``gpu_data`` it allocates; with it (an owner of device memory) it describes memory at
    ``gpu_data.ptr`` (or at ``ptr=``), keeping the owner alive."""

    __cuda_memory__ = True
    __cuda_ndarray__ = True

    def __init__(self, shape, strides=None, dtype=np.float64, stream=0, gpu_data=None, *, ptr=None):
        self.shape = _normalize_shape(shape)
        self.dtype = np.dtype(dtype)
        check_dtype(self.dtype)  # a big-endian or object array's bytes would reach kernels misread
        itemsize = self.dtype.itemsize
        self.strides = (
            contiguous_strides(self.shape, itemsize) if strides is None else tuple(operator.index(s) for s in strides)
        )
        if len(self.strides) != len(self.shape):
            raise ValueError(f"strides {self.strides} do not match shape {self.shape}")
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.stream = stream
        low, high = _extent(self.shape, self.strides, itemsize)
        self.alloc_size = high - low
        if gpu_data is None:  # through the memory manager: the runtime's one allocation path
            gpu_data = memory_managers.memalloc(self.alloc_size)
            ptr = memory_pointers.device_address(gpu_data) - low  # element 0 sits `-low` bytes into it
        elif ptr is None:
            ptr = memory_pointers.device_address(gpu_data) - low
        self.gpu_data = gpu_data
        self._ptr = int(ptr) if self.size else 0

    # -- properties ---------------------------------------------------------------------------------------
    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self._ptr or None)

    @property
    def ptr(self):
        """The device address of element 0 (an int)."""
        return self._ptr

    @property
    def _context(self):
        return _context_of(self.gpu_data)

    def is_c_contiguous(self):
        return _is_contiguous(self.shape, self.strides, self.dtype.itemsize, "C")

    def is_f_contiguous(self):
        return _is_contiguous(self.shape, self.strides, self.dtype.itemsize, "F")

    @property
    def flags(self):
        return {"C_CONTIGUOUS": self.is_c_contiguous(), "F_CONTIGUOUS": self.is_f_contiguous()}

    @property
    def layout(self):
        """numba's array layout: "C", "F" or "A" (1-D contiguous arrays are "C")."""
        return _core.types.array_layout(self.shape, self.strides, self.dtype.itemsize)

    @property
    def __cuda_array_interface__(self):
        return cuda_array_interface(
            self.shape,
            None if self.is_c_contiguous() else self.strides,
            self.dtype,
            self._ptr if self.size else 0,
            self.stream,
        )

    @property
    def _numba_type_(self):
        """The array's cujit type (numba's protocol for typeof), computed once: shape, dtype and
        strides of a device array never change."""
        t = self.__dict__.get("_cached_type")
        if t is None:
            t = array_type(self.dtype, self.shape, self.strides, False)
            self.__dict__["_cached_type"] = t
        return t

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"<cujit.cuda.cudadrv.devicearray.DeviceNDArray object at {id(self):#x}>"

    def bind(self, stream=0):
        """A view of the same memory with ``stream`` as its default stream."""
        return DeviceNDArray(self.shape, self.strides, self.dtype, stream, self.gpu_data, ptr=self._ptr)

    # -- copies -------------------------------------------------------------------------------------------
    def _stream(self, stream):
        return native_stream(stream if stream is not None else 0)

    def copy_to_host(self, ary=None, stream=0):
        """Copies to a new host array (same shape, dtype and strides) or into ``ary``; returns it. With a
        stream the copy is queued on it (into pageable memory the driver finishes it before returning)."""
        native = self._stream(stream)
        ctx = self._context
        if ary is not None:
            if not isinstance(ary, np.ndarray):
                raise TypeError(f"copy_to_host needs a numpy array to copy into, got {type(ary).__name__}")
            if ary.dtype != self.dtype:
                raise TypeError(f"incompatible dtype: {self.dtype} vs. {ary.dtype}")
            if ary.shape != self.shape and ary.squeeze().shape != tuple(s for s in self.shape if s != 1):
                raise ValueError(f"incompatible shape: {self.shape} vs. {ary.shape}")
            if not ary.flags.writeable:
                raise ValueError("copy_to_host: the destination array is read-only")
        if self.size == 0:
            return ary if ary is not None else np.empty(self.shape, self.dtype)
        for order in ("C", "F"):
            if _is_contiguous(self.shape, self.strides, self.itemsize, order):
                if (
                    ary is not None
                    and ary.shape == self.shape
                    and _is_contiguous(ary.shape, ary.strides, ary.itemsize, order)
                ):
                    _drv.copy_dtoh(ary, self._ptr, self.nbytes, native, ctx)
                    return ary
                host = np.empty(self.shape, self.dtype, order=order)
                _drv.copy_dtoh(host, self._ptr, self.nbytes, native, ctx)
                break
        else:
            # A strided view: bring the byte span it covers and describe it with the same strides.
            low, high = _extent(self.shape, self.strides, self.itemsize)
            span = np.empty(high - low, np.uint8)
            _drv.copy_dtoh(span, self._ptr + low, high - low, native, ctx)
            host = np.ndarray(self.shape, self.dtype, buffer=span, offset=-low, strides=self.strides)
        if ary is None:
            return host
        ary[...] = host.reshape(ary.shape)
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copies a host array (or another device array) of the same dtype and shape into this one."""
        native = self._stream(stream)
        if self.size == 0:
            return
        if not (self.is_c_contiguous() or self.is_f_contiguous()):
            raise ValueError("Array contains non-contiguous buffer")
        order = "C" if self.is_c_contiguous() else "F"
        if is_cuda_array(ary):
            src = ary if isinstance(ary, DeviceNDArray) else as_cuda_array(ary)
            self._check_compatible(src.dtype, src.shape)
            if not _is_contiguous(src.shape, src.strides, src.itemsize, order):
                raise ValueError("copy_to_device from a device array needs both arrays in the same contiguous layout")
            _drv.copy_dtod(self._ptr, src.ptr, self.nbytes, native, self._context)
            return
        host = _host_array(ary)
        self._check_compatible(host.dtype, host.shape)
        host = host.reshape(self.shape) if host.shape != self.shape else host
        if not _is_contiguous(host.shape, host.strides, host.itemsize, order):
            host = np.array(host, order=order, copy=True)
        _drv.copy_htod(self._ptr, host, self.nbytes, native, self._context)

    def _check_compatible(self, dtype, shape):
        if np.dtype(dtype) != self.dtype:
            raise TypeError(f"incompatible dtype: {self.dtype} vs. {np.dtype(dtype)}")
        if tuple(shape) != self.shape and tuple(s for s in shape if s != 1) != tuple(s for s in self.shape if s != 1):
            raise ValueError(f"incompatible shape: {self.shape} vs. {tuple(shape)}")

    # -- views --------------------------------------------------------------------------------------------
    def _view_of(self, key):
        """(shape, strides, byte offset) of ``self[key]`` for basic indexing."""
        if not isinstance(key, tuple):
            key = (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        indexed = sum(1 for k in key if k is not None and k is not Ellipsis)
        if indexed > self.ndim:
            raise IndexError(
                f"too many indices for array: array is {self.ndim}-dimensional, but {indexed} were indexed"
            )
        if Ellipsis in key:
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (self.ndim - indexed) + key[at + 1 :]
        else:
            key = key + (slice(None),) * (self.ndim - indexed)
        shape, strides, offset, axis = [], [], 0, 0
        for k in key:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            n, stride = self.shape[axis], self.strides[axis]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                length = len(range(start, stop, step))
                if length:
                    offset += start * stride
                shape.append(length)
                strides.append(stride * step)
            else:
                try:
                    i = operator.index(k)
                except TypeError:
                    raise IndexError(
                        "only integers, slices (`:`), ellipsis (`...`) and numpy.newaxis (`None`) "
                        f"are valid indices for a device array, got {type(k).__name__}"
                    ) from None
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
                offset += (i + n if i < 0 else i) * stride
            axis += 1
        return tuple(shape), tuple(strides), offset

    def __getitem__(self, key):
        shape, strides, offset = self._view_of(key)
        if not shape and self.ndim:  # a single element: numba returns it as a host scalar
            host = np.empty((), self.dtype)
            _drv.copy_dtoh(host, self._ptr + offset, self.itemsize, native_stream(self.stream), self._context)
            return host[()]
        return DeviceNDArray(
            shape, strides, self.dtype, self.stream, self.gpu_data, ptr=self._ptr + offset if self.size else 0
        )

    def getitem(self, key, stream=0):
        return self.bind(stream)[key]

    def __setitem__(self, key, value):
        self.setitem(key, value, self.stream)

    def setitem(self, key, value, stream=0):
        shape, strides, offset = self._view_of(key)
        target = DeviceNDArray(shape, strides, self.dtype, stream, self.gpu_data, ptr=self._ptr + offset)
        if target.size == 0:
            return
        if not (target.is_c_contiguous() or target.is_f_contiguous()):
            raise NotImplementedError(
                "assigning to a non-contiguous device array view is not supported; copy it "
                "to the host, change it there and copy it back"
            )
        if is_cuda_array(value):
            target.copy_to_device(value, stream)
            return
        order = "C" if target.is_c_contiguous() else "F"
        host = np.array(np.broadcast_to(np.asarray(value, dtype=self.dtype), shape), order=order, copy=True)
        target.copy_to_device(host, stream)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- reshaping views ----------------------------------------------------------------------------------
    def transpose(self, axes=None):
        axes = tuple(range(self.ndim - 1, -1, -1)) if axes is None else tuple(axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"invalid axes {axes} for a {self.ndim}-d array")
        return DeviceNDArray(
            tuple(self.shape[a] for a in axes),
            tuple(self.strides[a] for a in axes),
            self.dtype,
            self.stream,
            self.gpu_data,
            ptr=self._ptr,
        )

    @property
    def T(self):
        return self.transpose()

    def reshape(self, *newshape, order="C"):
        if len(newshape) == 1 and not isinstance(newshape[0], (int, np.integer)):
            newshape = tuple(newshape[0])
        newshape = list(newshape)
        if newshape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in newshape:
            known = int(np.prod([s for s in newshape if s != -1], dtype=np.int64))
            newshape[newshape.index(-1)] = self.size // known if known else 0
        newshape = _normalize_shape(newshape)
        if int(np.prod(newshape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {newshape}")
        if order not in "CFA":
            raise ValueError("order not C|F|A")
        if order == "A":
            order = "F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C"
        if not _is_contiguous(self.shape, self.strides, self.itemsize, order):
            raise NotImplementedError("operation requires copying")
        return DeviceNDArray(
            newshape,
            contiguous_strides(newshape, self.itemsize, order),
            self.dtype,
            self.stream,
            self.gpu_data,
            ptr=self._ptr,
        )

    def ravel(self, order="C", stream=0):
        return self.reshape(self.size, order=order)

    def view(self, dtype):
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.itemsize:
            return DeviceNDArray(self.shape, self.strides, dtype, self.stream, self.gpu_data, ptr=self._ptr)
        if not self.shape or self.strides[-1] != self.itemsize or (self.shape[-1] * self.itemsize) % dtype.itemsize:
            raise ValueError(
                "To change to a dtype of a different size, the last axis must be contiguous and its "
                "size in bytes divisible by the new itemsize"
            )
        shape = self.shape[:-1] + (self.shape[-1] * self.itemsize // dtype.itemsize,)
        return DeviceNDArray(
            shape, self.strides[:-1] + (dtype.itemsize,), dtype, self.stream, self.gpu_data, ptr=self._ptr
        )

    # -- splitting, squeezing, IPC and the memory object (numba-cuda's members) ----------------------------
    def split(self, section, stream=0):
        """Consecutive views of ``section`` elements of a 1-D unit-stride array (the last one shorter when
        ``section`` does not divide the size), one at a time, as numba's generator gives them."""
        if self.ndim != 1:
            raise ValueError("only support 1d array")
        if self.strides[0] != self.itemsize:
            raise ValueError("only support unit stride")
        section = operator.index(section)
        if section <= 0:
            raise ValueError(f"split needs a positive section size, got {section}")
        stream = stream or self.stream
        return (
            DeviceNDArray(
                (min(section, self.size - begin),),
                self.strides,
                self.dtype,
                stream,
                self.gpu_data,
                ptr=self._ptr + begin * self.itemsize,
            )
            for begin in range(0, self.size, section)
        )

    def squeeze(self, axis=None, stream=0):
        """A view without the axes of length one (those of ``axis``, an int or a tuple, when given; ValueError
        for a selected axis of another length)."""
        if axis is None:
            axes = {i for i, n in enumerate(self.shape) if n == 1}
        else:
            axes = set()
            for a in (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis):
                a = operator.index(a)
                if not -self.ndim <= a < self.ndim:
                    raise _AxisError(f"axis {a} is out of bounds for array of dimension {self.ndim}")
                a %= self.ndim
                if self.shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
                axes.add(a)
        keep = [i for i in range(self.ndim) if i not in axes]
        return DeviceNDArray(
            tuple(self.shape[i] for i in keep),
            tuple(self.strides[i] for i in keep),
            self.dtype,
            stream or self.stream,
            self.gpu_data,
            ptr=self._ptr,
        )

    def _memory(self):
        """A MemoryPointer over the bytes this array covers (what numba's ``gpu_data`` of a view is); the
        allocation itself when the array covers it from its start."""
        low, high = _extent(self.shape, self.strides, self.itemsize)
        start = self._ptr + low if self.size else 0
        if isinstance(self.gpu_data, memory_pointers.MemoryPointer) and (
            start == memory_pointers.device_address(self.gpu_data) and high - low == self.gpu_data.size
        ):
            return self.gpu_data
        ctx = self._context
        return memory_pointers.MemoryPointer(
            None if ctx is None else memory_pointers.user_context(ctx), start, high - low, owner=self.gpu_data
        )

    def as_cuda_arg(self):
        """The device memory object of the array (a MemoryPointer: ``device_ctypes_pointer``, ``size``)."""
        return self._memory()

    def get_ipc_handle(self):
        """An ``IpcArrayHandle`` that pickles to another process of this machine, where ``open()`` gives a
        DeviceNDArray over this array's memory (Linux only, as CUDA IPC)."""
        handle = memory_managers.get_ipc_handle(self._memory(), self._context)
        return ipc.IpcArrayHandle(handle, {"shape": self.shape, "strides": self.strides, "dtype": self.dtype})


try:
    _AxisError = np.exceptions.AxisError
except AttributeError:  # numpy < 1.25
    _AxisError = np.AxisError

memory_pointers.register_runtime_type("array", DeviceNDArray)


# ---- arrays described by __cuda_array_interface__ ----------------------------------------------------------


def is_cuda_array(obj):
    """True for objects that describe GPU memory (``__cuda_array_interface__``)."""
    return isinstance(obj, DeviceNDArray) or hasattr(obj, "__cuda_array_interface__")


is_cuda_ndarray = is_cuda_array


class _ExternalMemory:
    """The owner of memory described by another library's array: keeps that object alive."""

    __slots__ = ("ptr", "owner")

    def __init__(self, ptr, owner):
        self.ptr = ptr
        self.owner = owner


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceNDArray over the memory that ``desc`` (a ``__cuda_array_interface__`` dict) describes."""
    if desc.get("mask") is not None:
        raise NotImplementedError("masked CUDA arrays are not supported")
    shape = tuple(desc["shape"])
    dtype = np.dtype(desc["descr"]) if desc.get("descr") and len(desc["descr"]) > 1 else np.dtype(desc["typestr"])
    strides = desc.get("strides")
    if strides is None:
        strides = contiguous_strides(shape, dtype.itemsize)
    ptr = desc["data"][0] or 0
    stream = desc.get("stream") if desc.get("version", 0) >= 3 else None
    if sync and stream:
        _drv.wrap_stream(int(stream)).synchronize()
    return DeviceNDArray(shape, strides, dtype, 0, _ExternalMemory(ptr, owner), ptr=ptr)


def as_cuda_array(obj, sync=True):
    """A DeviceNDArray view of any object with ``__cuda_array_interface__`` (no copy)."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if not hasattr(obj, "__cuda_array_interface__"):
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return from_cuda_array_interface(obj.__cuda_array_interface__, owner=obj, sync=sync)


# ---- constructors ------------------------------------------------------------------------------------------


def from_array_like(ary, stream=0, gpu_data=None):
    """numba-cuda's ``devicearray.from_array_like``: a device array of ``ary``'s shape, strides and dtype (in
    ``gpu_data`` when given, else newly allocated)."""
    dtype = _dtype_of(ary)
    return DeviceNDArray(tuple(ary.shape), tuple(ary.strides), dtype, stream, gpu_data)


def prepare_shape_strides_dtype(shape, strides, dtype, order):
    """numba-cuda's ``cuda.prepare_shape_strides_dtype``: (shape tuple, strides tuple, numpy dtype) of an array
    of that shape, dtype and order ("C" or "F") when ``strides`` is not given."""
    if isinstance(shape, (float, np.floating)) or (isinstance(shape, np.ndarray) and shape.dtype.kind == "f"):
        raise TypeError("shape must be an integer or tuple of integers")
    shape = _normalize_shape(shape)
    dtype = np.dtype(dtype)
    if isinstance(strides, int):
        strides = (strides,)
    elif strides:
        strides = tuple(strides)
    else:
        if order not in ("C", "F"):
            raise ValueError("order must be 'C' or 'F'")
        strides = contiguous_strides(shape, dtype.itemsize, order)
    return shape, strides, dtype


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """An uninitialised device array (numba's ``cuda.device_array``)."""
    shape, strides, dtype = prepare_shape_strides_dtype(shape, strides, dtype, order)
    return DeviceNDArray(shape, strides, dtype, stream)


def device_array_like(ary, stream=0):
    """An uninitialised device array with ``ary``'s shape and dtype, in its contiguous order (F stays F)."""
    shape = tuple(ary.shape)
    dtype = _dtype_of(ary)
    strides = tuple(getattr(ary, "strides", None) or contiguous_strides(shape, dtype.itemsize))
    f_only = _is_contiguous(shape, strides, dtype.itemsize, "F") and not _is_contiguous(
        shape, strides, dtype.itemsize, "C"
    )
    return device_array(shape, dtype, order="F" if f_only else "C", stream=stream)


def to_device(obj, stream=0, copy=True, to=None):
    """Copies a host array to a new device array (or into ``to``) and returns it; device arrays are returned
    as they are. C- and F-ordered arrays keep their layout; other strided arrays arrive C-ordered."""
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, DeviceNDArray):
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return as_cuda_array(obj)
    host = _host_array(obj)
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        host = np.ascontiguousarray(host)
    order = "C" if host.flags.c_contiguous else "F"
    dev = DeviceNDArray(host.shape, contiguous_strides(host.shape, host.itemsize, order), host.dtype, stream)
    if copy:
        dev.copy_to_device(host, stream=stream)
    return dev


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """numba's helper: (device array, True when a host copy was made). Warns for implicit host copies."""
    if is_cuda_array(obj):
        return (obj if isinstance(obj, DeviceNDArray) else as_cuda_array(obj)), False
    if not user_explicit and config.warning_enabled("CUDA_WARN_ON_IMPLICIT_COPY"):
        warnings.warn(
            NumbaPerformanceWarning("Host array used in CUDA kernel will incur copy overhead to/from device."),
            stacklevel=4,
        )
    return to_device(obj, stream=stream, copy=copy), True
