"""``@cuda.jit``: dispatchers for device functions and kernels.

A device-function dispatcher types its function once per argument-type tuple
(and caller options) when a caller is compiled; the typed function is lowered
into each caller's module. Kernels compile eagerly for given signatures and
lazily otherwise; launching them comes with the runtime."""

import functools
import threading

from cujit import _core
from cujit.compiler import compile_function, make_options, parse_signature
from cujit._source import Resolver, function_source
from cujit.errors import TypingError


class CUDADispatcher:
    def __init__(self, pyfunc, device, options):
        functools.update_wrapper(self, pyfunc)
        self.py_func = pyfunc
        self.device = device
        self.targetoptions = dict(options)
        self.overloads = {}
        self._typed = {}
        self._ptx = {}
        self._lock = threading.RLock()
        self._typing_now = set()

    # -- called by the C++ typing of a caller ------------------------------------------------
    def _type_for_caller(self, argtypes, caller_options):
        if not self.device:
            raise TypingError(f"{self.__qualname__!r} is a kernel; kernels cannot be called from device code. "
                              "Decorate it with @cuda.jit(device=True) to call it.")
        options = caller_options.copy()
        options.kernel = False
        options.abi = "numba"
        options.abi_name = ""
        options.from_dispatcher = True
        options.fastmath = bool(self.targetoptions.get("fastmath", options.fastmath))
        key = (tuple(argtypes), options.key())
        with self._lock:
            typed = self._typed.get(key)
            if typed is not None:
                return typed
            if key in self._typing_now:
                raise TypingError(f"{self.__qualname__!r} calls itself: recursive device functions are not "
                                  "supported")
            self._typing_now.add(key)
            try:
                typed = _core.type_function(function_source(self.py_func), Resolver(self.py_func),
                                            list(argtypes), None, options, options)
            finally:
                self._typing_now.discard(key)
            self._typed[key] = typed
            self.overloads[tuple(argtypes)] = typed
            return typed

    # -- eager compilation and inspection ------------------------------------------------------
    def _options(self, cc=None):
        o = self.targetoptions
        return make_options(device=self.device, abi="numba", abi_info=None, cc=cc,
                            fastmath=o.get("fastmath", False), opt=o.get("opt"), debug=o.get("debug"),
                            lineinfo=o.get("lineinfo", False), launch_bounds=o.get("launch_bounds"))

    def compile(self, sig, cc=None):
        """Compile for `sig` (a signature or argument types); returns the return type."""
        signature = parse_signature(sig)
        options = self._options(cc)
        key = (tuple(signature.args), options.key())
        with self._lock:
            if key not in self._ptx:
                ptx, llvm_ir, typed = compile_function(self.py_func, signature, options, keep_llvm_ir=True)
                self._ptx[key] = (ptx, llvm_ir, typed)
                self.overloads[tuple(signature.args)] = typed
            return self._ptx[key][2].return_type

    def compile_device(self, argtypes, return_type=None):
        sig = _core.Signature(return_type, list(argtypes))
        self.compile(sig)
        return self.overloads[tuple(argtypes)]

    def _inspect(self, index, signature):
        with self._lock:
            entries = {k[0]: v[index] for k, v in self._ptx.items()}
        if signature is not None:
            return entries[tuple(parse_signature(signature).args)]
        return entries

    def inspect_asm(self, signature=None):
        return self._inspect(0, signature)

    def inspect_llvm(self, signature=None):
        return self._inspect(1, signature)

    @property
    def signatures(self):
        return list(self.overloads)

    def __getitem__(self, config):
        raise NotImplementedError("launching kernels is not supported yet: cujit currently compiles kernels to "
                                  "PTX only (cuda.compile_ptx, dispatcher.inspect_asm)")

    def __call__(self, *args, **kwargs):
        if self.device:
            raise TypeError(f"{self.__qualname__!r} is a CUDA device function; it can only be called from "
                            "kernels and other device functions")
        raise ValueError("Kernel launch configuration was not specified. Use the syntax:\n\n"
                         "kernel_function[blockspergrid, threadsperblock](arg0, arg1, ..., argn)\n\n"
                         "See https://numba.readthedocs.io/en/stable/cuda/kernels.html#kernel-invocation "
                         "for help.")

    def __repr__(self):
        kind = "device function" if self.device else "kernel"
        return f"<cujit CUDA {kind} {self.__qualname__}>"


_REJECTED = {"argtypes", "restype", "bind"}


def jit(func_or_sig=None, device=False, inline="never", forceinline=False, link=(), debug=None, opt=None,
        lineinfo=False, cache=False, launch_bounds=None, lto=None, **kws):
    """numba-cuda's ``cuda.jit``: a decorator for kernels and device functions."""
    for key in _REJECTED & set(kws):
        raise DeprecationWarning(f"Deprecated keyword argument `{key}`. Signatures should be passed as the "
                                 "first positional argument.")
    if kws.get("boundscheck"):
        raise NotImplementedError("bounds checking is not supported for CUDA")
    options = dict(kws, debug=debug, opt=opt, lineinfo=lineinfo, link=link, lto=lto, inline=inline,
                   forceinline=forceinline, launch_bounds=launch_bounds, cache=cache)

    def wrap(pyfunc, sigs=()):
        dispatcher = CUDADispatcher(pyfunc, device, options)
        for sig in sigs:
            dispatcher.compile(sig)
        return dispatcher

    if func_or_sig is None:
        return wrap
    if callable(func_or_sig) and not isinstance(func_or_sig, _core.Type):
        return wrap(func_or_sig)
    sigs = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    return lambda pyfunc: wrap(pyfunc, sigs)
