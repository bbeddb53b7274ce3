"""Devices and contexts as numba-cuda has them: ``is_available()``, ``cuda_error()``, ``detect()``, ``gpus``,
``list_devices()``, ``get_current_device()``, ``select_device(n)``, ``current_context()``, ``synchronize()``,
``close()``, ``require_context``. On the CPU target ``is_available()`` is True, as numba-cuda's simulator answers
(``gpu_available()`` says whether this machine has a GPU either way).

Each device is used through its primary context (retained once, made current per thread, as numba does). A
``Device`` reads its properties once; driver attributes are also readable by their numba names
(``dev.MULTIPROCESSOR_COUNT``, ``dev.MAX_THREADS_PER_BLOCK``...). ``with cuda.gpus[1]:`` pushes device 1's
primary context onto the calling thread's context stack for the block and pops it after, so arrays allocated,
kernels loaded and launched in the block are device 1's; each thread has its own stack. Without a driver,
``is_available()`` is False and ``cuda_error()`` says why; everything else raises ``CudaSupportError`` with
that reason.
"""

import functools
import operator
import threading

from cujit import _core
from cujit.cudadrv import ipc, memory_managers, memory_pointers

_drv = _core.driver

MemoryInfo = memory_pointers.MemoryInfo

# CUdevice_attribute numbers by numba's names (cuda.h's, without CU_DEVICE_ATTRIBUTE_).
DEVICE_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1,
    "MAX_BLOCK_DIM_X": 2,
    "MAX_BLOCK_DIM_Y": 3,
    "MAX_BLOCK_DIM_Z": 4,
    "MAX_GRID_DIM_X": 5,
    "MAX_GRID_DIM_Y": 6,
    "MAX_GRID_DIM_Z": 7,
    "MAX_SHARED_MEMORY_PER_BLOCK": 8,
    "TOTAL_CONSTANT_MEMORY": 9,
    "WARP_SIZE": 10,
    "MAX_PITCH": 11,
    "MAX_REGISTERS_PER_BLOCK": 12,
    "CLOCK_RATE": 13,
    "TEXTURE_ALIGNMENT": 14,
    "MULTIPROCESSOR_COUNT": 16,
    "KERNEL_EXEC_TIMEOUT": 17,
    "INTEGRATED": 18,
    "CAN_MAP_HOST_MEMORY": 19,
    "COMPUTE_MODE": 20,
    "CONCURRENT_KERNELS": 31,
    "ECC_ENABLED": 32,
    "PCI_BUS_ID": 33,
    "PCI_DEVICE_ID": 34,
    "TCC_DRIVER": 35,
    "MEMORY_CLOCK_RATE": 36,
    "GLOBAL_MEMORY_BUS_WIDTH": 37,
    "L2_CACHE_SIZE": 38,
    "MAX_THREADS_PER_MULTI_PROCESSOR": 39,
    "MAX_THREADS_PER_MULTIPROCESSOR": 39,
    "ASYNC_ENGINE_COUNT": 40,
    "UNIFIED_ADDRESSING": 41,
    "PCI_DOMAIN_ID": 50,
    "COMPUTE_CAPABILITY_MAJOR": 75,
    "COMPUTE_CAPABILITY_MINOR": 76,
    "STREAM_PRIORITIES_SUPPORTED": 78,
    "GLOBAL_L1_CACHE_SUPPORTED": 79,
    "LOCAL_L1_CACHE_SUPPORTED": 80,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 81,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 82,
    "MANAGED_MEMORY": 83,
    "MULTI_GPU_BOARD": 84,
    "MULTI_GPU_BOARD_GROUP_ID": 85,
    "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO": 87,
    "PAGEABLE_MEMORY_ACCESS": 88,
    "CONCURRENT_MANAGED_ACCESS": 89,
    "COMPUTE_PREEMPTION_SUPPORTED": 90,
    "COOPERATIVE_LAUNCH": 95,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
}


def is_available():
    """numba's ``cuda.is_available()``: True when kernels can run, on a GPU (a CUDA driver and at least one GPU are
    usable) or, as numba-cuda's simulator answers, on the CPU target's host driver. Never raises."""
    return on_host_driver() or gpu_available()


def gpu_available():
    """True when a CUDA driver and at least one GPU are usable on this machine, whichever target runs. Never
    raises."""
    return bool(_drv.status().available)


def on_host_driver():
    """True when the runtime runs on the CPU target's host driver (the process-wide target is the CPU): one
    device, "cujit CPU target", whose memory is host memory."""
    return bool(_core.host.host_driver_active())


def runtime_usable():
    """A GPU, or the CPU target's host driver: devices, contexts and memory work."""
    return on_host_driver() or gpu_available()


def is_float16_supported():
    """Whether float16 is supported: always True (numba-cuda's answer; every GPU cujit runs on has it)."""
    return True


def is_bfloat16_supported():
    """numba-cuda's check for cuda.bf16: the current device has compute capability 8.0 or higher."""
    return runtime_usable() and get_current_device().compute_capability >= (8, 0)


def cuda_error():
    """Why CUDA is not available (a string), or None when it is."""
    status = _drv.status()
    return None if status.available else status.reason


def driver_version():
    """The driver's CUDA version as (major, minor), e.g. (13, 0)."""
    _drv.device_count()  # raises CudaSupportError without a driver
    version = _drv.status().version
    return (version // 1000, (version % 1000) // 10)


class Device:
    """One GPU. Equal ids are the same object (``get_device(n)``)."""

    def __init__(self, device_id):
        self.id = device_id
        self._info = None

    @property
    def _props(self):
        if self._info is None:
            self._info = _drv.device_info(self.id)
        return self._info

    @property
    def name(self):
        return self._props.name

    @property
    def compute_capability(self):
        return self._props.compute_capability

    @property
    def uuid(self):
        return self._props.uuid

    @property
    def pci_bus_id(self):
        return self._props.pci_bus_id

    @property
    def pci_device_id(self):
        return self._props.pci_device_id

    @property
    def pci_domain_id(self):
        return self._props.pci_domain_id

    @property
    def total_memory(self):
        return self._props.total_memory

    @property
    def supports_float16(self):
        return self.compute_capability >= (5, 3)

    @property
    def supports_bfloat16(self):
        return self.compute_capability >= (8, 0)

    def __getattr__(self, name):
        number = DEVICE_ATTRIBUTES.get(name)
        if number is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return _drv.device_attribute(self.id, number)

    def get_device_identity(self):
        """The device's PCI location, which names it in other processes (numba's)."""
        return ipc.device_identity(self.id)

    def get_primary_context(self):
        return Context(_drv.primary_context(self.id))

    def reset(self):
        """Unloads this device's modules and frees its deferred memory (live arrays stay valid)."""
        self.get_primary_context().reset()

    # ``with cuda.gpus[n]:`` pushes this device's primary context for the block and pops it after (numba's
    # _DeviceContextManager); the thread's previous context, or none, is current again.
    def __enter__(self):
        _drv.push_context(_drv.primary_context(self.id))
        return self

    def __exit__(self, *exc):
        _drv.pop_context()

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("cujit.Device", self.id))

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"


_devices = {}
_devices_lock = threading.Lock()


def get_device(device_id=0):
    with _devices_lock:
        dev = _devices.get(device_id)
        if dev is None:
            _drv.device_info(device_id)  # validates the id (and the driver)
            dev = _devices[device_id] = Device(device_id)
        return dev


class Context:
    """A CUDA context (a device's primary context, or one another library made current)."""

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    @property
    def handle(self):
        return self._native.handle

    @property
    def device(self):
        return get_device(self._native.device_id)

    def synchronize(self):
        self._native.synchronize()

    @property
    def deallocations(self):
        """numba-cuda's pending deallocations of this context (stumpy clears them): ``clear()``, ``len()``."""
        return memory_managers.PendingDeallocations(self._native)

    def reset(self):
        """Resets the memory manager, unloads the context's modules (running teardown hooks) and frees deferred
        memory."""
        memory_managers.reset(self._native)
        self._native.reset()

    def deallocations_pending(self):
        return self._native.pending_frees

    # Memory, through the context's memory manager (memory_managers.py): numba's Context methods.
    def get_memory_info(self):
        """MemoryInfo(free, total) bytes of the context's device, as its memory manager reports them."""
        return memory_managers.get_memory_info(self._native)

    def memalloc(self, nbytes):
        """Device memory (freed when the returned object is collected)."""
        return memory_managers.memalloc(nbytes, self._native)

    def memhostalloc(self, nbytes, mapped=False, portable=False, wc=False):
        return memory_managers.memhostalloc(nbytes, mapped, portable, wc, self._native)

    def mempin(self, owner, pointer, size, mapped=False):
        return memory_managers.mempin(owner, pointer, size, mapped, self._native)

    def memallocmanaged(self, nbytes, attach_global=True):
        return memory_managers.memallocmanaged(nbytes, attach_global, self._native)

    def get_ipc_handle(self, memory):
        return memory_managers.get_ipc_handle(memory, self._native)

    def open_ipc_handle(self, handle, size):
        """Another process's allocation (a 64-byte IPC handle) opened here: a MemoryPointer."""
        return ipc.IpcHandle(None, handle, size).open_direct(self)

    def defer_cleanup(self):
        return memory_managers.defer_cleanup(self._native)

    @property
    def memory_manager(self):
        return memory_managers.memory_manager(self._native)

    def prepare_for_use(self):
        self.memory_manager  # noqa: B018  (made and initialized on first use)

    def __eq__(self, other):
        return isinstance(other, Context) and other.handle == self.handle

    def __hash__(self):
        return hash(("cujit.Context", self.handle))

    def __repr__(self):
        return f"<CUDA context {self.handle:#x} of device {self._native.device_id}>"


memory_pointers.register_runtime_type("context", Context)


def current_context(devnum=None):
    """The calling thread's context; device 0's primary context is made current if there is none. With
    ``devnum`` (numba's ``cuda.current_context(devnum)``), device ``devnum``'s primary context is made current
    first, as ``select_device(devnum)`` does."""
    if devnum is not None:
        return Context(_drv.select_device(operator.index(devnum)))
    return Context(_drv.current_context())


def get_current_device():
    """The device of the calling thread's context (device 0 unless another was selected)."""
    return get_device(_drv.current_context().device_id)


def select_device(device_id):
    """Makes device ``device_id``'s primary context current for the calling thread; returns the Device."""
    _drv.select_device(device_id)
    return get_device(device_id)


def synchronize():
    """Waits for all work in the current context."""
    _drv.current_context().synchronize()


def close():
    """numba's ``cuda.close()``: pops every context of the calling thread's stack; in the main thread also
    unloads every module cujit loaded (teardown hooks first) and frees the memory waiting to be freed, in
    every context. Unlike numba, the primary contexts stay retained and live device arrays stay valid; the
    next CUDA call makes device 0's primary context current again."""
    if not runtime_usable():
        return
    _drv.pop_all_contexts()
    if threading.current_thread() is not threading.main_thread():
        return
    for ctx in _drv.known_contexts():
        Context(ctx).reset()  # teardown and unload of its modules, its memory manager, pending frees
    _drv.unload_all_modules()  # anything loaded in a context no longer known


def require_context(fn):
    """numba's decorator: ``fn`` runs with a CUDA context current (device 0's primary context when the
    calling thread has none)."""

    @functools.wraps(fn)
    def _require_cuda_context(*args, **kwargs):
        _drv.current_context()
        return fn(*args, **kwargs)

    return _require_cuda_context


def list_devices():
    return [get_device(i) for i in range(_drv.device_count())]


class _DeviceList:
    """``cuda.gpus``: ``len(cuda.gpus)``, ``cuda.gpus[n]`` (a Device, usable as ``with cuda.gpus[n]:``; negative
    indices and slices as a list has them), iteration, ``cuda.gpus.current``."""

    def __len__(self):
        return _drv.device_count() if runtime_usable() else 0

    def __getitem__(self, index):
        count = len(self)
        if isinstance(index, slice):
            return [get_device(i) for i in range(count)[index]]
        try:
            n = operator.index(index)
        except TypeError:
            raise TypeError(f"cuda.gpus indices must be integers or slices, not {type(index).__name__}") from None
        if not -count <= n < count:
            raise IndexError(
                f"cuda.gpus[{n}]: there is no device {n}; {count} CUDA device{' is' if count == 1 else 's are'} visible"
            )
        return get_device(n % count)

    def __iter__(self):
        return iter(list_devices() if runtime_usable() else [])

    @property
    def lst(self):
        """The devices as a list (numba-cuda's attribute of ``cuda.gpus``)."""
        return list(self)

    @property
    def current(self):
        """The Device of the calling thread's current context, or None when it has none (numba's)."""
        if not runtime_usable():
            return None
        ctx = _drv.current_context_or_none()
        return None if ctx is None else get_device(ctx.device_id)

    def __repr__(self):
        return f"<Managed device list: {list(self)}>"


gpus = _DeviceList()


def detect():
    """Prints the GPUs the driver sees (as numba's ``cuda.detect()``); True when at least one is usable. On the CPU
    target it says whether there is a GPU, then lists the host driver's device: True (kernels run there)."""
    if on_host_driver():
        print("CUDA driver not available: " + cuda_error() if not gpu_available() else "A CUDA GPU is present, unused")
        print("CPU target: kernels run on this machine's CPU (CUJIT_TARGET=cpu)")
        print(f"id {0:<5d} {get_device(0).name!r:>40} [SUPPORTED (CPU target)]")
        return True
    if not gpu_available():
        print(f"CUDA driver not available: {cuda_error()}")
        return False
    devices = list_devices()
    print(f"Found {len(devices)} CUDA devices")
    supported = 0
    for dev in devices:
        cc = dev.compute_capability
        ok = cc >= _core.DEFAULT_CC  # the lowest architecture cujit compiles for
        supported += ok
        print(f"id {dev.id:<5d} {dev.name!r:>40} [{'SUPPORTED' if ok else 'NOT SUPPORTED (CC < 7.5)'}]")
        print(f"{'Compute Capability':>40}: {cc[0]}.{cc[1]}")
        print(f"{'PCI Device ID':>40}: {dev.pci_device_id}")
        print(f"{'PCI Bus ID':>40}: {dev.pci_bus_id}")
        print(f"{'UUID':>40}: {dev.uuid}")
    print("Summary:")
    print(f"\t{supported}/{len(devices)} devices are supported")
    return supported > 0
