"""Exceptions raised by cujit, named as numba-cuda names them; and ``entry_point``, which raises the errors of a
user's code from the user's call."""

import os


class NumbaError(Exception):
    """Base class of compilation errors (numba.core.errors.NumbaError)."""


class TypingError(NumbaError):
    """A function cannot be typed; the message shows file:line, the source line and a caret."""


class UnsupportedError(TypingError):
    """The function uses a Python construct that cujit does not compile for CUDA."""


class NumbaValueError(TypingError, ValueError):
    """A value cujit cannot type or pass to a kernel (numba.core.errors.NumbaValueError): an array whose dtype is
    not native-endian, or holds Python objects."""


class IRError(NumbaError):
    """An error in the IR of a function (numba.core.errors.IRError)."""


class NotDefinedError(IRError):
    """A variable is read before any assignment to it (numba.core.errors.NotDefinedError)."""


class CCSupportError(RuntimeError):
    """The requested compute capability is below what the CUDA toolkit supports."""


class InternalError(NumbaError, RuntimeError):
    """A bug in cujit; please report it with the function that triggered it."""


class LoweringError(InternalError):
    """Compiling a function that typed correctly failed in code generation (invalid LLVM IR, a fatal error
    inside LLVM): a bug in cujit, reported with the function's name. The compiler stays usable."""


class NvrtcError(RuntimeError):
    """NVRTC failed to compile CUDA C++; the message carries NVRTC's log."""


class LinkerError(RuntimeError):
    """nvJitLink failed; the message carries the linker's log (and names an undefined symbol's declaration)."""


class NvvmError(RuntimeError):
    """libNVVM failed (generating LTO-IR); the message carries its log."""


class CudaSupportError(RuntimeError):
    """No usable CUDA driver or device."""


class CudaDriverError(Exception):
    """A CUDA driver call failed; the message names the driver's error code."""


class NumbaWarning(UserWarning):
    """A general warning of the compiler (numba.core.errors.NumbaWarning)."""


class NumbaInvalidConfigWarning(NumbaWarning):
    """Incompatible options, e.g. debug=True together with opt=True."""


class NumbaPerformanceWarning(NumbaWarning):
    """Something will run, but slowly."""


# The rest of numba.core.errors' hierarchy, for code that raises, catches or filters numba's names (cujit raises
# the ones above; these keep their place in numba's tree).
class NumbaDeprecationWarning(NumbaWarning, DeprecationWarning):
    pass


class NumbaPendingDeprecationWarning(NumbaWarning, PendingDeprecationWarning):
    pass


class NumbaParallelSafetyWarning(NumbaWarning):
    pass


class NumbaTypeSafetyWarning(NumbaWarning):
    pass


class NumbaExperimentalFeatureWarning(NumbaWarning):
    pass


class NumbaPedanticWarning(NumbaWarning):
    pass


class NumbaIRAssumptionWarning(NumbaPedanticWarning):
    pass


class NumbaDebugInfoWarning(NumbaWarning):
    pass


class NumbaSystemWarning(NumbaWarning):
    pass


class UnsupportedBytecodeError(Exception):
    pass


class UnsupportedRewriteError(UnsupportedError):
    pass


class RedefinedError(IRError):
    pass


class VerificationError(IRError):
    pass


class DeprecationError(NumbaError):
    pass


class UnsupportedParforsError(NumbaError):
    pass


class ForbiddenConstruct(LoweringError):
    pass


class UntypedAttributeError(TypingError):
    pass


class ByteCodeSupportError(NumbaError):
    pass


class CompilerError(NumbaError):
    pass


class ConstantInferenceError(NumbaError):
    pass


class InternalTargetMismatchError(InternalError):
    pass


class NonexistentTargetError(InternalError):
    pass


class RequireLiteralValue(TypingError):
    pass


class ForceLiteralArg(NumbaError):
    pass


class LiteralTypingError(TypingError):
    pass


class NumbaTypeError(TypingError, TypeError):
    pass


class NumbaAttributeError(TypingError, AttributeError):
    pass


class NumbaAssertionError(TypingError, AssertionError):
    pass


class NumbaNotImplementedError(TypingError, NotImplementedError):
    pass


class NumbaKeyError(TypingError, KeyError):
    pass


class NumbaIndexError(TypingError, IndexError):
    pass


class NumbaRuntimeError(NumbaError):
    pass


class LaunchConfigError(CudaDriverError, ValueError):
    """A launch configuration no launch can have (zero or too many threads, too much shared memory).

    Found before the driver is called; the message starts with CUDA_ERROR_INVALID_VALUE, the driver's own
    answer to such a launch, so code that matches on it keeps working."""


class KernelRuntimeError(RuntimeError):
    """numba-cuda's ``cuda.KernelRuntimeError`` (numba.cuda.errors): an exception raised in a kernel, naming the
    thread and block. numba-cuda raises it from its simulator; on a GPU, numba-cuda and cujit alike raise the
    exception class the kernel raised (debug=True), its message prefixed with the function, file, line,
    ``tid`` and ``ctaid``. Kept with numba's constructor so code that raises or catches it ports unchanged."""

    def __init__(self, msg, tid=None, ctaid=None):
        self.tid = tid
        self.ctaid = ctaid
        self.msg = msg
        super().__init__(f"An exception was raised in thread={tid} block={ctaid}\n\t{msg}")


def raised_in_kernel(exceptions, load):
    """The exception a debug kernel's first failing thread raised, as numba-cuda reports it (its class, the message
    prefixed with the function, file, line and thread), or None when no thread raised. ``exceptions``: the kernel's
    raise sites (code i + 1 is site i); ``load(name)``: the int32 of its global ``<symbol>__<name>__`` (errcode, tidx,
    ctaidx, ...), read from the GPU or, on the CPU target, from the host JIT's module."""
    import os

    code = load("errcode")
    if code == 0:
        return None
    if not 1 <= code <= len(exceptions):
        return SystemError(f"unknown error {code} in native function")
    cls, args, function, filename, line = exceptions[code - 1]
    tid = [load("tid" + axis) for axis in "zyx"]
    ctaid = [load("ctaid" + axis) for axis in "zyx"]
    prefix = f"In function {function!r}, file {os.path.abspath(filename)}, line {line}, tid={tid} ctaid={ctaid}"
    args = (f"{prefix}: {args[0]}",) + tuple(args[1:]) if args else (prefix,)
    return cls(*args)


def full_traceback():
    """``CUJIT_FULL_TRACEBACK=1``: errors in the user's code keep cujit's own frames (read at each error)."""
    return os.environ.get("CUJIT_FULL_TRACEBACK", "").strip() not in ("", "0")


def update_wrapper(wrapper, wrapped):
    """functools.update_wrapper's copy of a wrapped function's names, docstring, annotations and attributes (without
    importing functools, and with it collections, at ``import cujit``)."""
    for name in ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__", "__type_params__"):
        try:
            value = getattr(wrapped, name)
        except AttributeError:
            continue
        setattr(wrapper, name, value)
    wrapper.__dict__.update(getattr(wrapped, "__dict__", {}))
    wrapper.__wrapped__ = wrapped
    return wrapper


def entry_point(function):
    """Marks a function users call (compile_ptx, a launch, a decorator that compiles): a compile error in their
    code (a NumbaError: TypingError, UnsupportedError, NotDefinedError... located at its file:line with a caret)
    leaves it with the user's frames and this one only, as if their call had raised it; the frames of cujit's
    compiler in between say nothing about their mistake. A bug in cujit (InternalError, LoweringError) and every
    other exception keep their traceback, as does everything under ``CUJIT_FULL_TRACEBACK=1``."""

    def entry(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except NumbaError as error:
            if isinstance(error, InternalError) or full_traceback():
                raise
            raise error.with_traceback(None)  # cujit's frames left out: CUJIT_FULL_TRACEBACK=1 keeps them

    update_wrapper(entry, function)
    # The one frame of cujit's left in a traceback is named after the function the user called ("in compile_ptx"),
    # and so are the crossings from C++ (the launch fast path calls _select_kernel) a profiler sees.
    renamed = {"co_name": function.__name__}
    if hasattr(entry.__code__, "co_qualname"):  # CPython 3.11 on
        renamed["co_qualname"] = function.__qualname__
    entry.__code__ = entry.__code__.replace(**renamed)
    return entry
