"""The objects memory managers hand out, as numba-cuda has them (its "EMM plugin" interface): ``MemoryPointer``
(device memory with an optional finalizer), ``AutoFreePointer``, ``MappedMemory`` (page-locked host memory the
device reaches), ``PinnedMemory`` (page-locked host memory), ``ManagedMemory`` (one address on host and
device), ``OwnedPointer`` and ``MemoryInfo``.

An address is an ``Address``: an int that also reads as a ctypes pointer does (``.value``, None for 0), so a
plug-in written against either of numba's driver bindings (``int(p)`` or ``p.value``) finds what it expects.
Constructors take ints, ctypes pointers and anything ``int()`` accepts.

This module is the bottom of the memory layer: it knows the runtime's ``Context`` and ``DeviceNDArray``
classes only as the types ``devices`` and ``devicearray`` register here when they are imported (they allocate
through this layer, so it cannot import them).
"""

import collections
import ctypes
import weakref

from cujit import _core

_drv = _core.driver
_mem = _core.memory

MemoryInfo = collections.namedtuple("MemoryInfo", ["free", "total"])
MemoryInfo.__doc__ = "Free and total memory of a device, in bytes (numba's ``MemoryInfo``)."

# "context": devices.Context, "array": devicearray.DeviceNDArray (see the module's docstring).
_runtime_types = {}


def register_runtime_type(role, cls):
    _runtime_types[role] = cls


def runtime_type(role):
    return _runtime_types[role]


class Address(int):
    """A device or host address: ``int(a)``, and ``a.value`` as a ctypes pointer reads (None for 0)."""

    __slots__ = ()

    @property
    def value(self):
        return int(self) or None

    def __repr__(self):
        return f"Address({int(self):#x})"


def as_address(pointer):
    """An ``Address`` from an int, a ctypes pointer or integer, or anything ``int()`` takes (cuda-python's
    CUdeviceptr)."""
    if isinstance(pointer, int):
        return Address(pointer)
    value = getattr(pointer, "value", False)  # ctypes pointers and integers
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return Address(value or 0)
    try:
        return Address(int(pointer))
    except (TypeError, ValueError):
        raise TypeError(
            f"expected a memory address (an int or a ctypes pointer), got {type(pointer).__name__}"
        ) from None


def native_context(context):
    """The ``_core.driver.Context`` of a context as users hold it (``cuda.current_context()``), of a native one,
    or of None: the calling thread's current context."""
    if context is None:
        return _drv.current_context()
    if isinstance(context, _drv.Context):
        return context
    native = getattr(context, "_native", None)
    if isinstance(native, _drv.Context):
        return native
    raise TypeError(f"expected a CUDA context, got {type(context).__name__}")


def user_context(native):
    """The ``Context`` users hold for a native context."""
    return runtime_type("context")(native)


def device_address(memory):
    """The device address (an int) of a memory object: a ``MemoryPointer`` or anything with ``ptr`` (cujit's
    native allocations)."""
    ptr = getattr(memory, "ptr", None)
    if ptr is None:
        ptr = memory.device_pointer
    return int(ptr or 0)


class MemoryPointer:
    """Device memory: ``MemoryPointer(context, pointer, size, owner=None, finalizer=None)``. ``finalizer`` runs
    once, when the pointer is collected or ``free()`` is called; views (``view(start, stop)``) keep the memory
    they look into alive."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.device_pointer = as_address(pointer)
        self.handle = self.device_pointer
        self.size = int(size)
        self._cuda_memsize_ = self.size
        self.is_managed = finalizer is not None
        self.refct = 1
        self._owner = owner
        if finalizer is not None:
            self._finalizer = weakref.finalize(self, finalizer)

    @property
    def owner(self):
        return self if self._owner is None else self._owner

    @property
    def ptr(self):
        """The device address as an int (cujit's name)."""
        return int(self.device_pointer)

    @property
    def device_pointer_value(self):
        return int(self.device_pointer) or None

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(int(self.device_pointer) or None)

    def own(self):
        return OwnedPointer(self)

    def free(self):
        """Runs the finalizer now (numba: "forces the device memory to the trash")."""
        if self.is_managed:
            if not self._finalizer.alive:
                raise RuntimeError("Freeing dead memory")
            self._finalizer()

    def memset(self, byte, count=None, stream=0):
        count = self.size if count is None else count
        native = getattr(stream, "_native", None) if stream else None
        _drv.memset(int(self.device_pointer), byte, count, native, _context_or_none(self.context))

    def view(self, start, stop=None):
        size = self.size - start if stop is None else stop - start
        if not self.device_pointer_value:
            if size != 0:
                raise RuntimeError("non-empty slice into empty slice")
            return self
        if size < 0:
            raise RuntimeError("size cannot be negative")
        return MemoryPointer(self.context, int(self.device_pointer) + start, size, owner=self.owner)

    def __repr__(self):
        return f"<{type(self).__name__} {int(self.device_pointer):#x} size={self.size}>"


def _context_or_none(context):
    try:
        return native_context(context) if context is not None else None
    except TypeError:
        return None


class AutoFreePointer(MemoryPointer):
    """A ``MemoryPointer`` freed when its last ``own()`` reference goes (numba's reference-counted pointer)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refct -= 1


class MappedMemory(AutoFreePointer):
    """Page-locked host memory mapped into the device's address space: ``host_pointer`` for the host,
    ``device_pointer`` for kernels. ``MappedMemory(context, pointer, size, owner=None, finalizer=None)`` with
    the host pointer; the device address is asked from the driver."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.owned = owner
        self.host_pointer = as_address(pointer)
        device = _mem.host_device_pointer(int(self.host_pointer), _context_or_none(context))
        super().__init__(context, device, size, finalizer=finalizer)
        self.handle = self.host_pointer
        self._bufptr_ = int(self.host_pointer)
        self._buflen_ = self.size

    def own(self):
        return MappedOwnedPointer(self)


class PinnedMemory:
    """Page-locked host memory: ``PinnedMemory(context, pointer, size, owner=None, finalizer=None)``; ``owner``
    is the object owning memory that was pinned in place (``mempin``)."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.owned = owner
        self.size = int(size)
        self.host_pointer = as_address(pointer)
        self.is_managed = finalizer is not None
        self.handle = self.host_pointer
        self._buflen_ = self.size
        self._bufptr_ = int(self.host_pointer)
        if finalizer is not None:
            self._finalizer = weakref.finalize(self, finalizer)

    def own(self):
        return self

    def free(self):
        if self.is_managed:
            self._finalizer()

    def __repr__(self):
        return f"<PinnedMemory {int(self.host_pointer):#x} size={self.size}>"


class ManagedMemory(AutoFreePointer):
    """Managed memory (``cuMemAllocManaged``): the same address on the host and the device."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.owned = owner
        super().__init__(context, pointer, size, finalizer=finalizer)
        self.host_pointer = self.device_pointer
        self._buflen_ = self.size
        self._bufptr_ = int(self.device_pointer)

    def own(self):
        return ManagedOwnedPointer(self)


class OwnedPointer:
    """A counted reference to a memory pointer (or to a view of it): the memory's ``refct`` counts the owned
    pointers alive, and an ``AutoFreePointer`` is freed when the count drops to zero. Attributes are the
    pointer's."""

    def __init__(self, memptr, view=None):
        self._mem = memptr
        self._view = memptr if view is None else view
        memptr.refct += 1

        def deref(mem=memptr):
            mem.refct -= 1
            if mem.refct == 0:
                mem.free()

        weakref.finalize(self, deref)
        self.device_ctypes_pointer = self._view.device_ctypes_pointer

    def __getattr__(self, name):
        return getattr(self._view, name)


class MappedOwnedPointer(OwnedPointer):
    pass


class ManagedOwnedPointer(OwnedPointer):
    pass


def host_address(memory):
    """The host address (an int) of page-locked, mapped or managed memory."""
    pointer = getattr(memory, "host_pointer", None)
    if pointer is None:
        pointer = getattr(memory, "_bufptr_", None)
    if pointer is None:
        raise TypeError(f"{type(memory).__name__} is not host-accessible memory (no host_pointer)")
    return int(pointer)


def host_buffer(memory, nbytes):
    """A writable buffer of ``nbytes`` at ``memory``'s host address that keeps ``memory`` alive (for
    ``numpy.ndarray(buffer=...)``)."""
    address = host_address(memory) if nbytes else 0
    if nbytes and not address:
        raise ValueError("host memory at address 0")
    buf = (ctypes.c_ubyte * nbytes).from_address(address) if nbytes else bytearray(0)
    if nbytes:
        buf._cujit_owner = memory
    return buf
