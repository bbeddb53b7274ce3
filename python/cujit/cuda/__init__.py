"""``from cujit import cuda``: the numba.cuda namespace of cujit."""

from cujit.compiler import (
    compile,
    compile_ptx,
    compile_all,
    compile_for_current_device,  # noqa: F401
    compile_ptx_for_current_device,
    DEFAULT_CC,
)
from cujit.declarations import declare_device  # noqa: F401
from cujit.linkable_code import (
    LinkableCode,
    PTXSource,
    CUSource,
    Cubin,
    Fatbin,
    Object,
    Archive,  # noqa: F401
    LTOIR,
)
from cujit import config  # noqa: F401
from cujit.dispatcher import jit, CUDADispatcher  # noqa: F401
from cujit import types  # noqa: F401
from cujit.types import *  # noqa: F401,F403
from cujit.types import dim3, Dim3  # noqa: F401  (numba-cuda's cuda.dim3: the type of cuda.threadIdx...)
from cujit.errors import (
    TypingError,
    UnsupportedError,
    CudaSupportError,
    CudaDriverError,  # noqa: F401
    NvrtcError,
    NvvmError,
    LinkerError,
)
from cujit.intrinsics import *  # noqa: F401,F403
from cujit.vector_types import *  # noqa: F401,F403  (cuda.float32x4, cuda.float4... replace the plain stubs)
from cujit.arg_hints import In, Out, InOut  # noqa: F401

# numba.cuda's C type names and type helpers (numba.core.types' char, uchar, size_t...).
bool = types.boolean  # noqa: A001  (numba.cuda.bool, as numba's)
char, uchar = types.int8, types.uint8
size_t, ssize_t = types.uintp, types.intp
optional = types.Optional
GridGroup, grid_group, deferred_type, ffi = types.GridGroup, types.grid_group, types.deferred_type, types.ffi

#: numba-cuda's default compute capability names (config.CUDA_DEFAULT_PTX_CC; numba-cuda's own floor, 7.5).
config_default_cc = numba_cuda_default_ptx_cc = DEFAULT_CC

del bf16  # noqa: F821  (cuda.bf16 is the module cujit.cuda.bf16, with the same stubs, as numba.cuda.bf16 is)
del fp8  # noqa: F821
del libdevice  # noqa: F821  (cuda.libdevice is the module cujit.cuda.libdevice, with the same stubs)  (cuda.fp8 is the module cujit.cuda.fp8, with the same stubs and the fp8 types)

# The runtime (devices, arrays, streams) is imported on first use: compiling needs
# neither numpy nor a driver, and `import cujit` stays fast.
_RUNTIME = {
    "cujit.cudadrv.devices": (
        "is_available",
        "is_bfloat16_supported",
        "detect",
        "get_current_device",
        "select_device",
        "current_context",
        "synchronize",
        "close",
        "gpus",
        "list_devices",
    ),
    "cujit.cudadrv.devicearray": (
        "to_device",
        "device_array",
        "device_array_like",
        "DeviceNDArray",
        "as_cuda_array",
        "is_cuda_array",
    ),
    "cujit.cudadrv.stream": (
        "stream",
        "default_stream",
        "legacy_default_stream",
        "per_thread_default_stream",
        "external_stream",
    ),
}
_RUNTIME_NAMES = {name: module for module, names in _RUNTIME.items() for name in names}
# Events, contexts, profiling and small host names (issue 27; docs/runtime.md).
for _module, _names in (
    ("cujit.cudadrv.events", ("event", "event_elapsed_time")),
    ("cujit.cudadrv.profiler", ("profile_start", "profile_stop", "profiling")),
    ("cujit.cudadrv.runtime", ("runtime", "is_supported_version")),
    ("cujit.cudadrv.devices", ("require_context", "cuda_error", "is_float16_supported")),
    ("cujit.cudadrv.devicearray", ("from_cuda_array_interface", "prepare_shape_strides_dtype")),
    ("cujit.errors", ("KernelRuntimeError",)),
):
    _RUNTIME_NAMES.update(dict.fromkeys(_names, _module))
del _module, _names

# Array functions built from Python code (issue 27; docs/vectorize.md).
_RUNTIME_NAMES.update(
    vectorize="cujit.vectorizers", guvectorize="cujit.gufuncs", reduce="cujit.reduction", Reduce="cujit.reduction"
)

# Memory: host memory, memory managers (numba's EMM plug-ins), IPC (issue 27; docs/memory.md).
for _module, _names in (
    (
        "cujit.cudadrv.host_memory",
        ("pinned_array", "pinned_array_like", "mapped_array", "mapped_array_like", "managed_array", "pinned", "mapped"),
    ),
    (
        "cujit.cudadrv.memory_managers",
        ("set_memory_manager", "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "defer_cleanup"),
    ),
    ("cujit.cudadrv.memory_pointers", ("MemoryPointer", "MappedMemory", "PinnedMemory", "ManagedMemory", "MemoryInfo")),
    ("cujit.cudadrv.ipc", ("IpcHandle", "GetIpcHandleMixin", "open_ipc_array")),
):
    _RUNTIME_NAMES.update(dict.fromkeys(_names, _module))
del _module, _names

# cuda.driver.memcpy_htod, for module setup callbacks; cuda.random, numba-cuda's generator (a submodule); the
# modules numba.cuda names that programs reach: cuda.cudadrv, cuda.devicearray, cuda.errors, cuda.compiler.
_RUNTIME_MODULES = {
    "driver": "cujit.cudadrv.driver",
    "random": "cujit.cuda.random",
    "bf16": "cujit.cuda.bf16",
    "libdevice": "cujit.cuda.libdevice",
    "cudadrv": "cujit.cudadrv",
    "devicearray": "cujit.cudadrv.devicearray",
    "errors": "cujit.errors",
    "compiler": "cujit.compiler",
}
# cuda.cgutils: numba's IR-level helpers, each name a NotImplementedError (cujit/extending/cgutils.py).
_RUNTIME_MODULES["cgutils"] = "cujit.extending.cgutils"
# cuda.fp8 (numba-cuda's fp8 types and conversions) and cuda.is_fp8_supported, from cujit/cuda/fp8.py.
_RUNTIME_MODULES["fp8"] = "cujit.cuda.fp8"
_RUNTIME_NAMES["is_fp8_supported"] = "cujit.cuda.fp8"


def __getattr__(name):
    import importlib
    import importlib.util

    if name == "HAS_NUMBA":
        # Whether numba (its CPU side) is installed beside cujit (numba-cuda's ``HAS_NUMBA``; cujit needs none of
        # it): looked up on first use, not at import (a search of sys.path).
        value = globals()[name] = importlib.util.find_spec("numba") is not None
        return value
    if name in _RUNTIME_MODULES:
        value = globals()[name] = importlib.import_module(_RUNTIME_MODULES[name])
        return value
    module = _RUNTIME_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'cujit.cuda' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
