"""The CPU target (issue 30): kernels compiled for this machine's CPU and run on cujit's host runtime.

``cuda.jit(target="cpu")``, or ``CUJIT_TARGET=cpu`` (``NUMBA_ENABLE_CUDASIM=1`` is read the same way) for every
kernel, gives a ``HostDispatcher``: the kernel is typed as for the GPU, lowered with the host target's hooks
(special registers, barriers and shared memory from a per-thread context), compiled in process by LLVM's ORC JIT
and launched as ``kernel[grid, block](*args)``. Blocks run on worker threads, the threads of a block as fibers
that switch at ``cuda.syncthreads()``. Arrays are host memory on this target: numpy arrays (and objects with
``__array_interface__``) are passed in place, so a kernel's writes are seen by the caller at once.
"""

import os
import sys
import threading

from cujit import _core
from cujit.compiler import parse_signature, type_function
from cujit._typeof import typeof

TARGETS = ("cuda", "cpu")


def default_target():
    """The target kernels compile for when jit is not told: ``CUJIT_TARGET`` ("cuda" or "cpu"), or "cpu" when
    ``NUMBA_ENABLE_CUDASIM=1`` (numba-cuda's simulator switch, read the same way for porting)."""
    chosen = os.environ.get("CUJIT_TARGET", "").strip().lower()
    if chosen:
        if chosen not in TARGETS:
            raise ValueError(f"CUJIT_TARGET={chosen!r}: the targets are {', '.join(map(repr, TARGETS))}")
        return chosen
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0").strip() not in ("", "0"):
        return "cpu"
    return "cuda"


def resolve_target(target):
    """jit's ``target=``: None (the default target), "cuda" or "cpu"."""
    if target is None:
        return default_target()
    if not isinstance(target, str) or target.lower() not in TARGETS:
        raise ValueError(f"jit(target={target!r}): the targets are {', '.join(map(repr, TARGETS))}")
    return target.lower()


def _dims(dim, name):
    from cujit.cudadrv.launch import normalize_dims  # numba's checks and messages for griddim and blockdim
    return normalize_dims(dim, name)


def _host_array(value, ndim, index):
    """(data pointer, nitems, itemsize, shape, strides) of a host array argument."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        ary = value
    elif hasattr(value, "__array_interface__"):
        import numpy as np
        ary = np.asarray(value)
    elif hasattr(value, "copy_to_host"):  # a device array of this process: its host copy is the data
        raise TypeError(f"kernel argument {index}: device arrays are not host memory; pass a numpy array to a "
                        "kernel on the CPU target")
    else:
        raise TypeError(f"kernel argument {index} must be a host array (numpy or __array_interface__) on the CPU "
                        f"target, got {type(value).__name__}")
    if ary.ndim != ndim:
        raise TypeError(f"kernel argument {index} must be a {ndim}-d array, got a {ary.ndim}-d array")
    return (ary.ctypes.data, ary.size, ary.dtype.itemsize, tuple(ary.shape), tuple(ary.strides))


class _HostPlan:
    """How one tuple of argument types is packed: the GPU launcher's parameter buffer, host arrays in place."""

    def __init__(self, argtypes):
        slots, self._leaves = [], []
        for index, t in enumerate(argtypes):
            for leaf_type, path, role, slot in _core.launch.argument_leaves(t):
                if slot is None:
                    raise NotImplementedError(f"kernel argument {index}: cujit cannot pass a value of type {t} "
                                              "to a kernel")
                slots.append(slot)
                self._leaves.append((index, path, role, slot))
        self.launcher = _core.driver.KernelLauncher(slots)
        self.offsets = list(self.launcher.param_offsets)

    def pack(self, args):
        values, keep = [], []
        for index, path, role, slot in self._leaves:
            v = args[index]
            steps = path[:-1] if role in ("complex_real", "complex_imag") else path
            for i in steps:
                v = v[i]
            if slot[0] == "array":
                values.append(_host_array(v, slot[1], index))
                keep.append(v)
            elif role == "complex_real":
                values.append(complex(v).real)
            elif role == "complex_imag":
                values.append(complex(v).imag)
            else:
                values.append(v)
        return self.launcher.pack(values), keep


class HostKernel:
    """One specialisation compiled for the CPU: its typed function, JIT-compiled code and argument plan."""

    def __init__(self, typed, native, argtypes):
        self.typed = typed
        self.native = native  # _core.host.HostKernel: owns the JIT-compiled code
        self.argtypes = tuple(argtypes)
        self.plan = _HostPlan(self.argtypes)

    @property
    def llvm_ir(self):
        return self.native.llvm_ir

    def launch(self, griddim, blockdim, sharedmem, args):
        if len(args) != len(self.argtypes):
            raise TypeError(f"the kernel takes {len(self.argtypes)} argument"
                            f"{'' if len(self.argtypes) == 1 else 's'}, got {len(args)}")
        params, keep = self.plan.pack(args)
        self.native.launch(list(griddim), list(blockdim), int(sharedmem), params, self.plan.offsets)
        del keep  # the arrays stay alive until the grid has run


class _Configured:
    def __init__(self, dispatcher, griddim, blockdim, sharedmem):
        self.dispatcher, self.griddim, self.blockdim, self.sharedmem = dispatcher, griddim, blockdim, sharedmem

    def __call__(self, *args):
        kernel = self.dispatcher._kernel_for_args(args)
        kernel.launch(self.griddim, self.blockdim, self.sharedmem, args)


class HostDispatcher:
    """``@cuda.jit`` kernels on the CPU target: compiled per argument types, launched on the host runtime."""

    target = "cpu"

    def __init__(self, pyfunc, options, compile_options):
        import functools
        functools.update_wrapper(self, pyfunc)
        self.py_func = pyfunc
        self.targetoptions = dict(options)
        self._compile_options = compile_options.copy()
        self._compile_options.kernel = True
        self.overloads = {}
        self._lock = threading.Lock()
        if self.targetoptions.get("link"):
            raise NotImplementedError("kernels that link code (link=...) cannot run on the CPU target: PTX, cubin "
                                      "and LTO-IR items are GPU code")

    def compile(self, sig):
        signature = parse_signature(sig)
        if signature.return_type is not None and signature.return_type.kind != "none":
            raise TypeError("CUDA kernel must have void return type.")
        return self._compile(tuple(signature.args))

    def _compile(self, argtypes):
        with self._lock:
            kernel = self.overloads.get(argtypes)
            if kernel is None:
                typed = type_function(self.py_func, _core.Signature(None, list(argtypes)), self._compile_options)
                kernel = HostKernel(typed, _core.host.compile(typed, self._compile_options), argtypes)
                self.overloads[argtypes] = kernel
            return kernel

    def _kernel_for_args(self, args):
        return self._compile(tuple(typeof(a) for a in args))

    def inspect_llvm(self, signature=None):
        if signature is not None:
            return self._compile(tuple(parse_signature(signature).args)).llvm_ir
        return {k: v.llvm_ir for k, v in self.overloads.items()}

    def __getitem__(self, config):
        if not isinstance(config, tuple) or len(config) not in (2, 3, 4):
            raise ValueError("must specify at least the griddim and blockdim")
        griddim, blockdim = _dims(config[0], "griddim"), _dims(config[1], "blockdim")
        sharedmem = config[3] if len(config) == 4 else 0  # config[2], the stream: launches run in order
        return _Configured(self, griddim, blockdim, sharedmem)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        tpb = tpb or 128
        blocks = max(1, (ntasks + tpb - 1) // tpb)
        return self[blocks, tpb, stream, sharedmem]

    def __call__(self, *args, **kwargs):
        from cujit.cudadrv.launch import MISSING_LAUNCH_CONFIG_MSG
        raise ValueError(MISSING_LAUNCH_CONFIG_MSG)

    def __repr__(self):
        return f"<HostDispatcher {self.py_func.__qualname__} (target='cpu')>"
