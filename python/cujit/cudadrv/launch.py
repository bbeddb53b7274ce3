"""Kernel launch: numba's argument marshalling (docs/numba_abi.md: Kernel arguments) on the C++ ``KernelLauncher``.

A ``LaunchPlan`` is built once per tuple of kernel argument types (cujit ``Type`` objects or type strings):
it flattens them into the launcher's slots exactly as the compiler flattens kernel parameters (arrays as
meminfo, parent, nitems, itemsize, data, shape..., strides...; complex as two floats; tuples element by element;
``none`` as nothing) and keeps one converter per argument. ``launch(function, plan, griddim, blockdim, stream,
sharedmem, args)`` converts the arguments and launches:

- cujit device arrays and any object with ``__cuda_array_interface__`` are passed in place;
- numpy arrays are copied to the device, and back after the launch when writable (numba's ``InOut``), with
  numba's ``NumbaPerformanceWarning``; ``In(ary)``, ``Out(ary)``, ``InOut(ary)`` choose the direction;
- Python and numpy scalars are converted to the parameter's exact width (integers wrap as in ctypes);
  float16 parameters get binary16 bits, booleans one byte.

``configure(griddim, blockdim, stream, sharedmem)`` normalises a launch configuration with numba's errors and
low-occupancy warning, for ``kernel[griddim, blockdim, stream, sharedmem]``.
"""

import numbers
import os
import sys
import threading
import warnings

import numpy as np

from cujit import _core, config
from cujit._typeof import dtype_type
from cujit.arg_hints import ArgHint, In, Out, InOut  # noqa: F401  (In, Out, InOut re-exported: numba's names here)
from cujit.cudadrv.devicearray import DeviceNDArray, as_cuda_array, auto_device
from cujit.cudadrv.stream import native_stream
from cujit.errors import NumbaPerformanceWarning, TypingError

_drv = _core.driver

MISSING_LAUNCH_CONFIG_MSG = """
Kernel launch configuration was not specified. Use the syntax:

kernel_function[blockspergrid, threadsperblock](arg0, arg1, ..., argn)

See https://numba.readthedocs.io/en/stable/cuda/kernels.html#kernel-invocation for help.

"""


# ---- launch configuration ----------------------------------------------------------------------------------


def normalize_dims(dim, name):
    """A grid or block dimension as a 3-tuple, with numba's errors (docs/numba_abi.md: Launch configuration)."""
    if dim is None:
        raise ValueError(MISSING_LAUNCH_CONFIG_MSG)
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if len(dims) > 3:
        raise ValueError(f"{name} must be a sequence of 1, 2 or 3 integers, got {dims!r}")
    for v in dims:
        if not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be a sequence of integers, got {dims!r}")
    dims = [int(v) for v in dims]
    while len(dims) < 3:
        dims.append(1)
    return tuple(dims)


def configure(griddim, blockdim, stream=0, sharedmem=0, *, on_gpu=True):
    """(grid 3-tuple, block 3-tuple, stream, sharedmem) for ``kernel[...]``; for a GPU kernel (``on_gpu``), warns
    for grids under 128 blocks as numba does (``NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0`` turns it off). A GPU's
    occupancy means nothing to the CPU target's launches, where small grids are the rule (tests, examples)."""
    if griddim is None or blockdim is None:
        raise ValueError(MISSING_LAUNCH_CONFIG_MSG)
    grid = normalize_dims(griddim, "griddim")
    block = normalize_dims(blockdim, "blockdim")
    blocks = grid[0] * grid[1] * grid[2]
    if on_gpu and blocks < 128 and config.warning_enabled("CUDA_LOW_OCCUPANCY_WARNINGS"):
        warnings.warn(
            NumbaPerformanceWarning(
                f"Grid size {blocks} will likely result in GPU under-utilization due to low occupancy."
            ),
            stacklevel=3,
        )
    return grid, block, stream, int(sharedmem or 0)


def validate_launch_config(griddim, blockdim, sharedmem=0, limits=None):
    """Raises ``LaunchConfigError`` for a configuration no GPU runs (zero or too many threads, too much shared
    memory). ``limits`` overrides the defaults: max_grid, max_block, max_threads_per_block,
    max_shared_per_block, static_shared. Launches check this against the real device and kernel anyway."""
    _drv.validate_launch_config(
        normalize_dims(griddim, "griddim"), normalize_dims(blockdim, "blockdim"), int(sharedmem), limits
    )


# ---- argument conversion -----------------------------------------------------------------------------------


def _foreign_value(value, ndim, index, writebacks, stream):
    """A __cuda_array_interface__ object or a DLPack capsule or producer, read as the fast path reads it (the
    producer's stream ordered before the launch's); None when it is neither."""
    read = _core.launch.read_array(value, index, native_stream(stream))
    if read is None:
        return None
    if read.keepalive is not None:
        writebacks.append(read.keepalive)  # a capsule made for the launch: kept alive until it is queued
    return _check_ndim((read.data, read.nitems, read.itemsize, read.shape, read.strides), ndim, index)


def _check_ndim(value, ndim, index):
    if len(value[3]) != ndim:
        raise TypeError(f"kernel argument {index} must be a {ndim}-d array, got a {len(value[3])}-d array")
    return value


def _device_value(dev, ndim, index):
    return _check_ndim((dev.ptr, dev.size, dev.dtype.itemsize, dev.shape, dev.strides), ndim, index)


def _array_value(value, ndim, index, writebacks, stream):
    if isinstance(value, DeviceNDArray):
        return _device_value(value, ndim, index)
    if isinstance(value, ArgHint):
        host = value.value
        if hasattr(host, "__cuda_array_interface__"):
            return _array_value(host, ndim, index, writebacks, stream)
        host = np.asarray(host)
        dev, _ = auto_device(host, stream=stream, copy=value.copy_in, user_explicit=True)
        if value.copy_out:
            writebacks.append(lambda: dev.copy_to_host(host, stream=stream))
        else:
            writebacks.append(dev)  # kept alive until the launch is queued
        return _device_value(dev, ndim, index)
    if isinstance(value, np.ndarray):
        if type(value) is not np.ndarray and hasattr(value, "__cuda_array_interface__"):
            return _device_value(as_cuda_array(value, sync=False), ndim, index)  # mapped, managed: in place
        dev, _ = auto_device(value, stream=stream)
        if value.flags.writeable:
            writebacks.append(lambda: dev.copy_to_host(value, stream=stream))
        else:
            writebacks.append(dev)
        return _device_value(dev, ndim, index)
    foreign = _foreign_value(value, ndim, index, writebacks, stream)
    if foreign is not None:
        return foreign
    if hasattr(value, "__cuda_array_interface__"):  # a dtype the C++ reader leaves to numpy (datetime64...)
        return _device_value(as_cuda_array(value), ndim, index)
    raise TypeError(
        f"kernel argument {index} must be an array (numpy, device array, __cuda_array_interface__ "
        f"or DLPack object), got {type(value).__name__}"
    )


# The CPU target's dispatcher reads device arrays, CAI and DLPack arguments (host memory there) as launches do.
def array_value(value, ndim, index, writebacks, stream):
    return _array_value(value, ndim, index, writebacks, stream)


def pointer_value(value, index):
    return _pointer_value(value, index)


def _pointer_value(value, index):
    if hasattr(value, "__cuda_array_interface__"):
        return value.__cuda_array_interface__["data"][0] or 0
    if isinstance(value, DeviceNDArray):
        return value.ptr
    if value is None:
        return 0
    ct = sys.modules.get("ctypes")
    if ct is not None and isinstance(value, ct._Pointer):  # its address, not what it points to (a device address)
        return ct.cast(value, ct.c_void_p).value or 0
    raw = getattr(value, "value", value)  # ctypes pointers
    try:
        return int(raw or 0)
    except TypeError:
        raise TypeError(f"kernel argument {index} is a pointer: expected an int, got {type(value).__name__}") from None


def _as_type(t):
    if isinstance(t, str):
        return _core.parse_type(t)
    return t


def _path_reader(argtype, op):
    """The value of `op`'s leaf in its argument's value: found along its path of tuple indices."""
    path, index = op.path, op.argument
    if not path:
        return lambda v: v

    def value_of(v):
        t = argtype
        for i in path:
            if not isinstance(v, tuple) or len(v) != len(t.types):
                raise TypeError(f"kernel argument {index} must be a tuple of {len(t.types)} elements, got {v!r}")
            v, t = v[i], t.types[i]
        return v

    return value_of


def _read_scalar(value_of, op, read_array):
    if op.type.kind in ("datetime", "timedelta"):  # a numpy datetime64/timedelta64: its count of units
        return lambda v, out, wb, s: out.append(int(np.asarray(value_of(v)).view(np.int64)))
    return lambda v, out, wb, s: out.append(value_of(v))


def _read_complex(value_of, op, read_array):
    def read(v, out, wb, s):
        c = complex(value_of(v))
        out.append(c.real)
        out.append(c.imag)

    return read


def _read_array(value_of, op, read_array):
    ndim, index = op.type.ndim, op.argument
    return lambda v, out, wb, s: out.append(read_array(value_of(v), ndim, index, wb, s))


def _read_pointer(value_of, op, read_array):
    index = op.argument
    return lambda v, out, wb, s: out.append(_pointer_value(value_of(v), index))


def _read_record(value_of, op, read_array):
    """A record scalar (np.void) is passed as the address of a copy in the kernel's memory (a one-element array,
    through `read_array`, which copies it back after the launch), then copied back into the record itself (a
    record read from an array is a view of it), as numba-cuda passes records."""
    index = op.argument

    def read(v, out, wb, s):
        record = value_of(v)
        extending = sys.modules.get("cujit.extending")  # (imported with cujit)
        if not isinstance(record, np.void) and extending is not None:  # a library type's value: its members' record
            if extending._typeof(record) is op.type:
                out.append(read_array(np.array([extending._record_value(record, op.type)]), 1, index, wb, s)[0])
                return
        if not isinstance(record, np.void) or record.dtype.fields is None:
            raise TypeError(
                f"kernel argument {index} is a record: expected a numpy record, got {type(record).__name__}"
            )
        copy = np.empty(1, record.dtype)
        copy[0] = record
        out.append(read_array(copy, 1, index, wb, s)[0])
        wb.append(lambda: _record_back(record, copy, s))

    return read


def _record_back(record, copy, stream):
    if hasattr(stream, "synchronize"):  # the copy back into `copy` was queued on the launch's stream
        stream.synchronize()
    for name in record.dtype.names:
        record[name] = copy[0][name]


# The reader of each kind of leaf (the kinds are the C++ rule's, driver::argument_program): this side only reads a
# leaf's value from the Python argument.
_READERS = {
    _core.launch.LeafKind.scalar: _read_scalar,
    _core.launch.LeafKind.complex: _read_complex,
    _core.launch.LeafKind.array: _read_array,
    _core.launch.LeafKind.pointer: _read_pointer,
    _core.launch.LeafKind.record: _read_record,
}


class LaunchPlan:
    """How one tuple of kernel argument types is packed: the C++ launcher and a converter per argument, for both
    targets. ``read_array(value, ndim, index, writebacks, stream)`` gives an array argument's (data, nitems,
    itemsize, shape, strides): in GPU memory by default, in host memory for the CPU target
    (``host_target._host_array``)."""

    def __init__(self, argtypes, read_array=None):
        self.argtypes = tuple(_as_type(t) for t in argtypes)
        program = _core.launch.argument_program(list(self.argtypes))  # the one rule (cujit/launch_program.h)
        read_array = read_array or _array_value
        self._readers = [
            (op.argument, _READERS[op.kind](_path_reader(self.argtypes[op.argument], op), op, read_array))
            for op in program.ops
        ]
        self.slots = tuple(program.slots)
        self.launcher = _drv.KernelLauncher(self.slots)

    def prepare(self, args, stream=0):
        """(slot values, writebacks) for ``args``; writebacks run after the launch (callables) or are
        temporaries kept alive until then."""
        if len(args) != len(self.argtypes):
            raise TypeError(
                f"the kernel takes {len(self.argtypes)} argument"
                f"{'' if len(self.argtypes) == 1 else 's'}, got {len(args)}"
            )
        values, writebacks = [], []
        for argument, read in self._readers:
            read(args[argument], values, writebacks, stream)
        return values, writebacks

    def pack(self, args):
        """The kernel parameter buffer for ``args`` (bytes); host arrays are copied to the device for it."""
        values, _ = self.prepare(args)
        return self.launcher.pack(values)

    def __repr__(self):
        return f"<LaunchPlan ({', '.join(str(t) for t in self.argtypes)}) {self.launcher.param_count} params>"


_plans = {}
_plans_lock = threading.Lock()


def _register_fast_path_types():
    """Tells the C++ fast path which classes are cujit device arrays, numpy arrays and numpy scalars (a numpy
    scalar's type is its dtype's; datetimes, strings and records are typed by the Python path)."""
    scalars = {}
    for cls in set(np.sctypeDict.values()):
        if np.dtype(cls).kind in "biufc":
            try:
                scalars[cls] = dtype_type(np.dtype(cls))
            except TypingError:  # float128 and the like: the Python path gives the error
                pass
    _core.launch.register_types(DeviceNDArray, np.ndarray, scalars)


_TORCH_DTYPES = {
    "bool": ("b", 1),
    "int8": ("i", 1),
    "int16": ("i", 2),
    "int32": ("i", 4),
    "int64": ("i", 8),
    "uint8": ("u", 1),
    "uint16": ("u", 2),
    "uint32": ("u", 4),
    "uint64": ("u", 8),
    "float16": ("f", 2),
    "float32": ("f", 4),
    "float64": ("f", 8),
    "complex64": ("c", 8),
    "complex128": ("c", 16),
}


def _classify_array_class(cls):
    """How the fast path reads arguments of class ``cls`` (asked once per class): CuPy arrays and PyTorch
    tensors field by field, with what their ``__cuda_array_interface__`` would say (CuPy names its current
    stream, unless it exports version 2; PyTorch names none; bfloat16 tensors are left to the protocol), and
    every other class through ``__cuda_array_interface__`` or DLPack. Neither library is imported here."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and issubclass(cls, cupy.ndarray):
        if os.environ.get("CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION", "3") == "2":
            return "cupy", None
        stream = cupy.cuda.stream  # its C function when it exports one (CuPy >= 13), else a Python call
        stream_ptr = getattr(stream, "__pyx_capi__", {}).get("get_current_stream_ptr") or getattr(
            stream, "get_current_stream_ptr", None
        )
        return "cupy", stream_ptr or (lambda: cupy.cuda.get_current_stream().ptr)
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(cls, torch.Tensor):
        return "torch", {getattr(torch, name): spec for name, spec in _TORCH_DTYPES.items() if hasattr(torch, name)}
    return "protocols", None


_register_fast_path_types()
_core.launch.register_classifier(_classify_array_class)


def plan_for(argtypes):
    """The (cached) LaunchPlan for a sequence of argument types."""
    key = tuple(argtypes)
    plan = _plans.get(key)
    if plan is None:
        plan = LaunchPlan(key)
        with _plans_lock:
            plan = _plans.setdefault(key, plan)
    return plan


def launch(cufunction_handle, plan, griddim, blockdim, stream=0, sharedmem=0, args=(), cooperative=False):
    """Launches a kernel: ``cufunction_handle`` is a ``Function`` from ``modules.load_module(...).get_function``
    (checked against the kernel's limits, launched in its context) or a raw CUfunction int (the current
    context's); ``plan`` a LaunchPlan or the argument types. Host arrays are copied back before this returns;
    otherwise the launch is asynchronous."""
    if not isinstance(plan, LaunchPlan):
        plan = plan_for(plan)
    grid = normalize_dims(griddim, "griddim")
    block = normalize_dims(blockdim, "blockdim")
    launch_configured(
        cufunction_handle,
        plan,
        grid,
        block,
        stream,
        native_stream(stream),
        int(sharedmem or 0),
        args,
        bool(cooperative),
    )


def launch_configured(
    cufunction_handle, plan, grid, block, stream, native, sharedmem, args, cooperative=False, if_overlap=None
):
    """``launch`` for a configuration already normalised by ``configure`` (3-tuples, the native stream): the
    Python path of ``kernel[...](args)``, for the argument kinds the C++ fast path (``_core.launch``) leaves to
    it (host arrays, In/Out/InOut, pointers, records) and for debug kernels. When two array arguments share bytes and ``if_overlap`` is
    given, the function it returns is launched instead (a variant compiled without noalias arrays)."""
    values, writebacks = plan.prepare(args, stream)
    plan.launcher.launch(cufunction_handle, grid, block, native, sharedmem, values, cooperative, if_overlap)
    for writeback in writebacks:
        if callable(writeback):
            writeback()
