"""Memory managers as numba-cuda has them: the External Memory Management (EMM) plug-in interface that RAPIDS
RMM implements, and the one allocation path of the runtime.

- ``BaseCUDAMemoryManager``: the abstract plug-in (``memalloc``, ``memhostalloc``, ``mempin``, ``initialize``,
  ``get_ipc_handle``, ``get_memory_info``, ``reset``, ``defer_cleanup``, ``interface_version``), made once per
  context with ``cls(context=ctx)``; ``HostOnlyCUDAMemoryManager`` implements the host side (page-locked,
  mapped and managed memory) for plug-ins that only manage device memory; ``GetIpcHandleMixin`` implements
  ``get_ipc_handle``.
- ``set_memory_manager(cls)``, or ``NUMBA_CUDA_MEMORY_MANAGER`` (``CUJIT_CUDA_MEMORY_MANAGER`` first): a module
  path, imported on the first allocation, whose ``_numba_memory_manager`` is the class ("default" keeps
  cujit's own).
- The allocation path: ``memalloc``, ``memhostalloc``, ``mempin``, ``memallocmanaged``, ``get_ipc_handle``,
  ``get_memory_info``, ``defer_cleanup`` here are what the runtime calls (device arrays, ``to_device``,
  ``device_array``, host arrays, a context's ``memalloc``); nothing else in the package allocates. Without a
  plug-in, device memory comes straight from cujit's C++ allocator (batched deferred frees, as numba's).
"""

import contextlib
import importlib
import os
import threading
from abc import ABCMeta, abstractmethod

from cujit import _core
from cujit.cudadrv.ipc import GetIpcHandleMixin, _require_ipc
from cujit.cudadrv.memory_pointers import (
    MappedMemory,
    ManagedMemory,
    MemoryInfo,
    PinnedMemory,
    as_address,
    native_context,
    user_context,
)

_drv = _core.driver
_mem = _core.memory

INTERFACE_VERSION = 1  # the EMM plug-in interface numba-cuda 0.30 speaks


class BaseCUDAMemoryManager(metaclass=ABCMeta):
    """Abstract base class of External Memory Management (EMM) plug-ins; made with ``cls(context=ctx)``."""

    def __init__(self, *args, **kwargs):
        if "context" not in kwargs:
            raise RuntimeError("Memory manager requires a context")
        self.context = kwargs.pop("context")

    @abstractmethod
    def memalloc(self, size):
        """Device memory of ``size`` bytes in the current context: a ``MemoryPointer``."""

    @abstractmethod
    def memhostalloc(self, size, mapped, portable, wc):
        """Page-locked host memory: a ``MappedMemory`` when ``mapped``, else a ``PinnedMemory``."""

    @abstractmethod
    def mempin(self, owner, pointer, size, mapped):
        """Page-locks existing host memory ``owner`` owns: a ``MappedMemory`` or ``PinnedMemory``."""

    @abstractmethod
    def initialize(self):
        """Readies the plug-in for use (called once per context, before its first allocation)."""

    @abstractmethod
    def get_ipc_handle(self, memory):
        """An ``IpcHandle`` for ``memory`` (a ``MemoryPointer``)."""

    @abstractmethod
    def get_memory_info(self):
        """``MemoryInfo(free, total)`` of the context; may raise ``NotImplementedError``."""

    @abstractmethod
    def reset(self):
        """Clears up all memory allocated in this context."""

    @abstractmethod
    def defer_cleanup(self):
        """A context manager during which deallocation waits."""

    @property
    @abstractmethod
    def interface_version(self):
        """The version of the plug-in interface implemented: 1."""


class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):
    """The host side of a plug-in: page-locked, mapped and managed memory from the driver. Plug-ins that
    override ``reset`` or ``defer_cleanup`` call (or enter) this class's as well."""

    def _native(self):
        return native_context(self.context)

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        native = _mem.host_alloc(size, mapped, portable, wc, self._native())
        kind = MappedMemory if mapped and size else PinnedMemory
        return kind(self.context, native.host_ptr, size, finalizer=native.release)

    def mempin(self, owner, pointer, size, mapped=False):
        address = as_address(pointer)
        native = _mem.host_register(int(address), size, mapped, False, self._native())
        kind = MappedMemory if mapped and size else PinnedMemory
        return kind(self.context, address, size, owner=owner, finalizer=native.release)

    def memallocmanaged(self, size, attach_global):
        return _managed_from_driver(self.context, size, attach_global)

    def reset(self):
        """Frees the host memory waiting to be freed. Unlike numba, live host arrays stay valid (as live
        device arrays do across a context reset in cujit)."""
        self._native().flush_deferred()

    @contextlib.contextmanager
    def defer_cleanup(self):
        native = self._native()
        _mem.pause_cleanup(native)
        try:
            yield
        finally:
            _mem.resume_cleanup(native)


def _managed_from_driver(context, size, attach_global):
    native = _mem.alloc_managed(size, attach_global, native_context(context))
    return ManagedMemory(context, native.ptr, size, finalizer=native.release)


class PendingDeallocations:
    """numba-cuda's view of a context's deferred frees (``Context.deallocations``,
    ``memory_manager.deallocations``): ``clear()`` frees them now, ``len()`` counts them, ``disable()`` holds them
    while a block runs (``defer_cleanup``)."""

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    def clear(self):
        self._native.flush_deferred()

    def __len__(self):
        return self._native.pending_frees

    def disable(self):
        return defer_cleanup(self._native)


class CujitMemoryManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):
    """cujit's own manager (numba's ``NumbaCUDAMemoryManager``): device memory from the C++ allocator, whose
    frees are deferred and batched per context. ``memalloc`` gives that allocation (``ptr``, ``size``)."""

    def initialize(self):
        pass

    def memalloc(self, size):
        return _drv.allocate(size, self._native())

    def get_memory_info(self):
        return MemoryInfo(*self._native().memory_info())

    @property
    def deallocations(self):
        return PendingDeallocations(self._native())

    @property
    def interface_version(self):
        return INTERFACE_VERSION


# ---- the plug-in in use ------------------------------------------------------------------------------------

_lock = threading.RLock()
_plugin = None  # the class set_memory_manager installed; None: cujit's own
_configured = False  # the environment was read (or set_memory_manager called)
_managers = {}  # context handle -> the manager instance of that context


def set_memory_manager(mm_plugin):
    """Uses the EMM plug-in class ``mm_plugin`` for every allocation from now on (numba's
    ``cuda.set_memory_manager``); RuntimeError when it speaks another interface version."""
    global _plugin, _configured
    if not callable(mm_plugin):
        raise TypeError(f"set_memory_manager needs a memory manager class, got {type(mm_plugin).__name__}")
    version = mm_plugin(context=None).interface_version
    if version != INTERFACE_VERSION:
        raise RuntimeError(f"EMM Plugin interface has version {version} - version {INTERFACE_VERSION} required")
    with _lock:
        _plugin = None if mm_plugin is CujitMemoryManager else mm_plugin
        _configured = True
        _managers.clear()


def _configure_from_environment():
    global _configured
    path = os.environ.get("CUJIT_CUDA_MEMORY_MANAGER") or os.environ.get("NUMBA_CUDA_MEMORY_MANAGER") or "default"
    if path != "default":
        try:
            set_memory_manager(importlib.import_module(path)._numba_memory_manager)
        except Exception as e:
            raise RuntimeError(f"Failed to use memory manager from {path}: {type(e).__name__}: {e}") from e
    _configured = True


def _ensure_configured():
    if not _configured:
        with _lock:
            if not _configured:
                _configure_from_environment()


def memory_manager(context=None):
    """The manager instance of ``context`` (None: the current one), made and initialized on first use."""
    _ensure_configured()
    native = native_context(context)
    manager = _managers.get(native.handle)
    if manager is None:
        with _lock:
            manager = _managers.get(native.handle)
            if manager is None:
                cls = _plugin or CujitMemoryManager
                manager = cls(context=user_context(native))
                manager.initialize()
                _managers[native.handle] = manager
    return manager


def memory_manager_class():
    """The plug-in class in use (``CujitMemoryManager`` when none was set)."""
    _ensure_configured()
    return _plugin or CujitMemoryManager


# ---- the allocation path --------------------------------------------------------------------------------


def memalloc(nbytes, context=None):
    """Device memory of ``nbytes`` in ``context`` (None: the current one): the one path every device allocation
    of the runtime takes. Zero bytes allocate nothing (as numba, the plug-in is not asked)."""
    _ensure_configured()
    native = native_context(context)
    if _plugin is None or nbytes == 0:
        return _drv.allocate(nbytes, native)
    return memory_manager(native).memalloc(nbytes)


def memhostalloc(nbytes, mapped=False, portable=False, wc=False, context=None):
    """Page-locked host memory through the manager (``MappedMemory`` when mapped, else ``PinnedMemory``)."""
    return memory_manager(context).memhostalloc(nbytes, mapped, portable, wc)


def mempin(owner, pointer, nbytes, mapped=False, context=None):
    """Page-locks ``nbytes`` of host memory at ``pointer`` (owned by ``owner``) through the manager."""
    return memory_manager(context).mempin(owner, pointer, nbytes, mapped)


def memallocmanaged(nbytes, attach_global=True, context=None):
    """Managed memory through the manager (plug-ins without ``memallocmanaged`` get the driver's)."""
    manager = memory_manager(context)
    allocate = getattr(manager, "memallocmanaged", None)
    if allocate is None:
        return _managed_from_driver(manager.context, nbytes, attach_global)
    return allocate(nbytes, attach_global)


def get_ipc_handle(memory, context=None):
    """The manager's ``IpcHandle`` for ``memory`` (OSError off Linux, as numba)."""
    _require_ipc()
    return memory_manager(context).get_ipc_handle(memory)


def get_memory_info(context=None):
    """``MemoryInfo(free, total)``, as the manager reports it."""
    _ensure_configured()
    native = native_context(context)
    if _plugin is None:
        return MemoryInfo(*native.memory_info())
    return memory_manager(native).get_memory_info()


def reset(context):
    """The manager's ``reset()`` for ``context``, if the context has a manager yet."""
    manager = _managers.get(native_context(context).handle)
    if manager is not None:
        manager.reset()


@contextlib.contextmanager
def defer_cleanup(context=None):
    """numba's ``cuda.defer_cleanup()``: while the block runs, memory dropped in the context is not freed
    (cujit's deferred frees, and the plug-in's ``defer_cleanup``); it nests."""
    native = native_context(context)
    with memory_manager(native).defer_cleanup():
        _mem.pause_cleanup(native)
        try:
            yield
        finally:
            _mem.resume_cleanup(native)
