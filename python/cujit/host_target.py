"""The CPU target (issue 30): kernels compiled for this machine's CPU and run on cujit's host runtime.

``cuda.jit(target="cpu")``, or ``CUJIT_TARGET=cpu`` (``NUMBA_ENABLE_CUDASIM=1`` is read the same way) for every
kernel, gives a dispatcher of the CPU ``Target``: the kernel is typed as for the GPU, lowered with the host target's hooks
(special registers, barriers and shared memory from a per-thread context), compiled in process by LLVM's ORC JIT
and launched as ``kernel[grid, block](*args)``. Blocks run on worker threads, the threads of a block as fibers
that switch at ``cuda.syncthreads()``. Arrays are host memory on this target: numpy arrays (and objects with
``__array_interface__``) are passed in place, so a kernel's writes are seen by the caller at once. When the
process-wide target is the CPU, the runtime runs on the host driver (cujit/host_driver.h): device arrays,
``__cuda_array_interface__`` objects and DLPack producers (kDLCPU) are host memory too and are passed in place.

The dispatcher itself is ``cujit.dispatcher``'s (one class for both targets); this module holds what differs on the
CPU (``HostHooks``, the target's hooks): compiling a specialisation, packing its arguments and launching its grid.
"""

import sys
import time

from cujit import _core, telemetry
from cujit.config import cache_wanted
from cujit._target import TARGETS, default_target, resolve_target  # noqa: F401  (the rule lives in _target)
from cujit.errors import entry_point


def host_driver_active():
    """Whether the runtime runs on the CPU target's host driver (device memory is host memory)."""
    return _core.host.host_driver_active()


def _host_array(value, ndim, index, keep, stream):
    """(data pointer, nitems, itemsize, shape, strides) of an array argument in host memory.

    numpy arrays (pinned and mapped ones too) and ``In``/``Out``/``InOut`` of them are passed in place: host memory
    is the device's here (numba-cuda's simulator passes them in place too). On the host driver (the process-wide
    CPU target) device arrays, CAI objects and DLPack producers are read as the GPU launch reads them, in place
    (their memory is host memory there); in a GPU process they are GPU memory, which a CPU kernel cannot read."""
    np = sys.modules.get("numpy")
    if np is None or not isinstance(value, np.ndarray):
        from cujit.arg_hints import ArgHint

        if isinstance(value, ArgHint):  # In/Out/InOut: host memory is the device's, nothing to copy
            return _host_array(value.value, ndim, index, keep, stream)
        if host_driver_active():
            from cujit.cudadrv import launch

            return launch.array_value(value, ndim, index, keep, stream)
        if hasattr(value, "__array_interface__"):
            import numpy as np

            value = np.asarray(value)
        elif hasattr(value, "__cuda_array_interface__") or hasattr(value, "copy_to_host"):
            raise TypeError(
                f"kernel argument {index}: a GPU array is not host memory; pass a numpy array to a "
                "kernel on the CPU target (or run the whole process on the CPU target, "
                "CUJIT_TARGET=cpu, where device arrays are host memory)"
            )
        else:
            raise TypeError(
                f"kernel argument {index} must be an array (numpy or __array_interface__) on the CPU "
                f"target, got {type(value).__name__}"
            )
    if value.ndim != ndim:
        raise TypeError(f"kernel argument {index} must be a {ndim}-d array, got a {value.ndim}-d array")
    keep.append(value)
    return (value.ctypes.data, value.size, value.dtype.itemsize, tuple(value.shape), tuple(value.strides))


class _HostPlan:
    """How one tuple of argument types is packed: the launch path's plan (cudadrv.launch.LaunchPlan, the one
    reading of arguments both targets share), host arrays passed in place."""

    def __init__(self, argtypes):
        from cujit.cudadrv import launch  # the runtime's Python sits above the compiler's

        self._plan = launch.LaunchPlan(argtypes, read_array=_host_array)
        self.launcher = self._plan.launcher
        self.offsets = list(self.launcher.param_offsets)

    def pack(self, args, stream):
        """(parameter buffer, what must stay alive until the grid has run)."""
        values, keep = self._plan.prepare(args, stream)
        return self.launcher.pack(values), keep


class HostKernel:
    """One specialisation compiled for the CPU (the CPU target's face of a specialisation in its dispatcher's
    KernelCache): its code (``native``, a ``_core.HostKernel``, which owns the JIT-loaded code) and argument plan,
    and the compile driver's answer (``compiled``) when it was compiled in this process; one loaded from the disk
    cache compiles again only for what needs its typing (``typed``, ``llvm_ir``), through ``compile_fresh``."""

    def __init__(self, native, argtypes, options, exceptions, cooperative, name, compiled=None, compile_fresh=None):
        self.native = native
        self.argtypes = tuple(argtypes)
        self.options = options
        self.entry = native.symbol
        self.plan = _HostPlan(self.argtypes)
        self.if_overlap = None  # host kernels compile without noalias arrays: overlapping arrays are fine
        # debug=True: the raise sites its status codes stand for, reported after each launch as on the GPU.
        self.exceptions = tuple(exceptions) if options.debug else ()
        self.name = name  # the Python function's qualified name (reports)
        self.cooperative = bool(cooperative)  # a grid sync: every block runs at once
        self._compiled, self._compile_fresh = compiled, compile_fresh

    @classmethod
    def compiled_now(cls, compiled, name):
        """The face of the compile driver's answer ``compiled`` (its typed function and code)."""
        typed = compiled.typed
        return cls(
            compiled.code, typed.args, compiled.options, typed.exceptions, typed.cooperative, name, compiled=compiled
        )

    def _answer(self):
        """The compile driver's answer for this kernel (made now if it was loaded from the disk cache)."""
        if self._compiled is None:
            self._compiled = self._compile_fresh()
        return self._compiled

    @property
    def typed(self):
        return self._answer().typed

    def specialisation(self, cache, tag, listed):
        """This face as its dispatcher's KernelCache takes it: nothing to build or load per context."""
        return _core.driver.Specialisation(self, entry=self.entry, listed=listed)

    @property
    def llvm_ir(self):
        return self._answer().code.llvm_ir  # (a kernel loaded from the disk cache keeps no IR)

    # numba-cuda's resource queries, answered for host code: no registers or constant bank, its static shared
    # memory per block, its locals' stack per thread, a GPU's 1024 threads per block.
    regs_per_thread = 0
    const_mem_size = 0
    max_threads_per_block = 1024
    shared_mem_per_block = property(lambda self: self.native.static_shared_bytes)
    local_mem_per_thread = property(lambda self: self.native.frame_bytes)

    @property
    def sass(self):
        raise NotImplementedError("a kernel compiled for the CPU target has no SASS; inspect_llvm() gives its LLVM IR")

    sass_cfg = sass

    @property
    def ptx(self):
        raise NotImplementedError("a kernel compiled for the CPU target has no PTX; inspect_llvm() gives its LLVM IR")

    def launch(self, griddim, blockdim, sharedmem, args, stream=0):
        """Runs the grid on the host runtime; returns when every thread has finished (streams run in order)."""
        if len(args) != len(self.argtypes):
            raise TypeError(
                f"the kernel takes {len(self.argtypes)} argument"
                f"{'' if len(self.argtypes) == 1 else 's'}, got {len(args)}"
            )
        # The GPU launch's checks and errors (LaunchConfigError), with this kernel's static shared memory.
        _core.driver.validate_launch_config(
            griddim, blockdim, int(sharedmem), {"static_shared": self.native.static_shared_bytes}
        )
        params, keep = self.plan.pack(args, stream)
        if self.exceptions:
            self._exception_record("errcode").value = 0
        try:
            self.native.launch(
                list(griddim),
                list(blockdim),
                int(sharedmem),
                params,
                self.plan.offsets,
                cooperative=self.cooperative,
                name=self.name,
            )
        finally:  # what array readers left to do after the launch (copies back), also when a check raised
            for item in keep:
                if callable(item):
                    item()
        if self.exceptions:
            from cujit.errors import raised_in_kernel

            error = raised_in_kernel(self.exceptions, lambda name: self._exception_record(name).value)
            if error is not None:
                raise error

    def _exception_record(self, name):
        """A debug kernel's int32 global ``<symbol>__<name>__`` in its JIT-compiled module."""
        import ctypes

        address = self.native.global_address(f"{self.entry}__{name}__")
        if not address:
            raise RuntimeError(f"the CPU target's module of {self.name} has no exception record {name!r}")
        return ctypes.c_int32.from_address(address)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """How many blocks of ``blockdim`` threads a cooperative launch of this kernel can have on the CPU target
        (numba-cuda's ``_Kernel.max_cooperative_grid_blocks``): the CPU counts as a device of one multiprocessor per
        worker thread, each holding 2048 threads in at most 32 blocks."""
        threads = 1
        for d in blockdim if isinstance(blockdim, tuple) else (blockdim,):
            if not isinstance(d, int) or d < 1:
                raise ValueError(f"blockdim must be a positive int or a tuple of them, got {blockdim!r}")
            threads *= d
        if not isinstance(dynsmemsize, int) or dynsmemsize < 0:
            raise ValueError(f"dynsmemsize must be a non-negative int, got {dynsmemsize!r}")
        return _core.host.max_cooperative_blocks(threads)


def boundscheck(option):
    """Whether a kernel checks its array indices: NUMBA_BOUNDSCHECK ("0" or "1") if set, else jit's option (on
    unless it is False; a launch then raises IndexError for the first bad one)."""
    import os

    forced = os.environ.get("NUMBA_BOUNDSCHECK", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    if forced:
        raise ValueError(f"NUMBA_BOUNDSCHECK={forced!r}: use 0 or 1 (or leave it unset)")
    return option is not False


def _compiled_now(dispatcher, signature, options, name, start, store=None):
    """The kernel compiled now; written to the disk cache by ``store`` (a ``caching.HostKernelStore``) if given."""
    compiled = dispatcher._compile_request(signature, options)
    if store is not None:
        store.keep(compiled)
    telemetry.count("compiles")
    detail = "and cached" if store is not None else ""
    telemetry.log("compiled for the CPU", dispatcher.__qualname__, signature.args, detail, time.perf_counter() - start)
    return HostKernel.compiled_now(compiled, name)


def _loaded(dispatcher, signature, options, name, entry):
    """The kernel of a disk cache entry (``caching.get_host_kernel``'s), or None when its object cannot be loaded
    (then it is compiled again and overwritten)."""
    try:
        native = _core.load_host_kernel(entry["object"], entry["symbol"], name)
    except RuntimeError as e:
        telemetry.log("not loaded", dispatcher.__qualname__, signature.args, f"({e})", 0.0)
        return None
    compile_fresh = dispatcher._compiler_of(signature, options, name)
    return HostKernel(
        native, signature.args, options, entry["exceptions"], entry["cooperative"], name, compile_fresh=compile_fresh
    )


class HostLaunch:
    """``kernel[griddim, blockdim, stream, sharedmem]`` on the CPU target: calling it launches."""

    def __init__(self, dispatcher, griddim, blockdim, stream, sharedmem):
        self.dispatcher = dispatcher
        self.griddim, self.blockdim, self.stream, self.sharedmem = griddim, blockdim, stream, sharedmem

    @entry_point
    def __call__(self, *args, **kwargs):
        if kwargs:  # as the GPU launch: the kernel's parameters are bound by position only
            raise TypeError(
                f"{self.dispatcher._describe()}: kernel launches take positional arguments only, got "
                f"keyword argument{'' if len(kwargs) == 1 else 's'} {', '.join(map(repr, kwargs))}"
            )
        kernel = self.dispatcher._kernel_for_args(args)
        kernel.launch(self.griddim, self.blockdim, self.sharedmem, args, self.stream)

    def __repr__(self):
        return f"<configured {self.dispatcher!r} [{self.griddim}, {self.blockdim}]>"


class HostHooks:
    """The CPU target's part of a dispatcher (``Target.hooks()``): specialisations are ``HostKernel`` faces, compiled
    for this machine whatever the current device, and launched by ``HostLaunch`` on the host runtime."""

    faces = (HostKernel,)

    @staticmethod
    def current_cc():
        return None  # the compile's default: nothing here depends on a GPU's architecture

    @staticmethod
    def compile_kernel(dispatcher, signature, options):
        """The kernel for ``signature``: from the disk cache when the dispatcher caches (``cache=True`` or
        ``CUJIT_CACHE=1``) and it holds the kernel, else compiled now (and written there, under the entry's lock, so
        that processes starting at once compile it once: the others wait, then load it)."""
        start = time.perf_counter()
        options = options.copy()
        options.boundscheck = boundscheck(options.boundscheck)
        name = dispatcher.py_func.__qualname__
        store = None
        if cache_wanted(dispatcher._cache):
            from cujit.caching import HostKernelStore  # (imported where a compile first caches: import time)

            store = HostKernelStore(dispatcher, signature.args, options, start)
        if store is None or not store.keeps():
            return _compiled_now(dispatcher, signature, options, name, start)
        lock = None
        entry = store.find()
        if entry is None:
            lock = store.lock()
            entry = store.find()  # (another process kept it while this one waited)
        try:
            kernel = _loaded(dispatcher, signature, options, name, entry) if entry is not None else None
            if kernel is not None:
                dispatcher._cache_hits[tuple(signature.args)] += 1
                return kernel
            dispatcher._cache_misses[tuple(signature.args)] += 1
            return _compiled_now(dispatcher, signature, options, name, start, store)
        finally:
            if lock is not None:
                lock.release()

    @staticmethod
    def check_runtime(dispatcher):
        pass  # the CPU target's kernels run in any process

    @staticmethod
    def configured(dispatcher, grid, block, stream, native, sharedmem):
        return HostLaunch(dispatcher, grid, block, stream, sharedmem)

    @staticmethod
    def inspect_asm(dispatcher, signature):
        raise NotImplementedError("kernels compiled for the CPU target have no PTX; inspect_llvm() gives their LLVM IR")
