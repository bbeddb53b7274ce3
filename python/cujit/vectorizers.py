"""``cuda.vectorize`` (also ``cujit.vectorize(..., target="cuda")``): numpy-style universal functions on the GPU,
built from a Python function of scalars; and the pieces ``cuda.guvectorize`` (gufuncs.py) and ``cuda.Reduce``
(reduction.py) share with it.

The user's function becomes a ``cuda.jit(device=True)`` device function. A kernel that calls it once per
element is generated as Python source (its text registered in ``linecache``, so cujit's source-based frontend
reads it like any other function) and handed to ``cuda.jit``: the kernels are ordinary cujit kernels, compiled
and launched through the same dispatch and cache. ``target="cpu"`` compiles them for the CPU target and calls
them on host memory (numpy arrays in and out, in any process), as numba's ``vectorize(target="cpu")`` gives a ufunc
on the host.

numba-cuda 0.30.4's rules, which this module follows (see docs/vectorize.md):

* Eager signatures (a list at decoration) compile then; the ufunc then accepts arrays of exactly those dtypes
  (numpy's ``casting='no'``); Python and numpy scalars take the dtype of the one signature that fits (an
  exact match of the scalar's own dtype first, then any). Without signatures, cujit compiles for the inputs'
  dtypes at call time (numba-cuda 0.30.4 builds a ufunc that cannot be called).
* Inputs broadcast as numpy's do. Host inputs give a host result, any device input gives a device result;
  ``out=`` may be either (a host ``out`` is filled and returned). ``stream=`` orders every copy and launch.
"""

import itertools
import linecache
import re
import threading
import warnings
from collections import OrderedDict

import numpy as np

from cujit import _core
from cujit.errors import TypingError, entry_point

# ---- generated kernels -------------------------------------------------------------------------------------

_generated = itertools.count(1)


def generated_function(source, name, namespace):
    """The function ``name`` defined by ``source``, executed in a copy of ``namespace``; its text is kept in
    ``linecache`` under a unique file name, where cujit's frontend (and tracebacks) read it."""
    filename = f"<cujit-generated {name} #{next(_generated)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = dict(namespace)
    exec(compile(source, filename, "exec"), scope)  # noqa: S102  (our own template, filled with identifiers)
    return scope[name]


def identifier(name):
    """``name`` made a Python identifier (a lambda's ``<lambda>`` becomes ``_lambda_``)."""
    return re.sub(r"\W", "_", name) or "_"


def kernel_namespace(pyfunc, core):
    from cujit import cuda

    return {"cuda": cuda, "core": core, "__name__": getattr(pyfunc, "__module__", None) or "<dynamic>"}


def is_dispatcher(obj):
    from cujit.dispatcher import CUDADispatcher

    return isinstance(obj, CUDADispatcher)


def device_function(pyfunc, api, **options):
    """The ``cuda.jit(device=True)`` dispatcher of the user's function (a device dispatcher is used as it is)."""
    from cujit import cuda

    if is_dispatcher(pyfunc):
        if not pyfunc.device:
            raise TypeError(
                f"{api} needs a Python function or a device function, got the kernel {pyfunc.__qualname__!r}"
            )
        return pyfunc
    if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
        raise TypeError(f"{api} decorates a Python function, got {pyfunc!r}")
    return cuda.jit(device=True, **options)(pyfunc)


def python_function(pyfunc):
    return pyfunc.py_func if is_dispatcher(pyfunc) else pyfunc


# ---- signatures and dtypes ---------------------------------------------------------------------------------


def parse_signature(sig, api):
    """A type signature as users write it: a string, a Signature (``float32(float32)``), or a tuple of types."""
    from cujit.compiler import parse_signature as parse

    try:
        return parse(sig)
    except (TypeError, ValueError, NameError, SyntaxError, TypingError) as e:
        raise TypeError(f"{api}: invalid type signature {sig!r}: {e}") from None


def scalar_dtype(t, api, what):
    """The numpy dtype of a cujit scalar type (numba's ``np.dtype(str(type))``)."""
    if t.kind not in ("boolean", "integer", "float", "complex", "datetime", "timedelta"):
        raise TypeError(
            f"{api}: {what} must be a scalar type (bool, int*, uint*, float16/32/64, complex64/128, "
            f"datetime64/timedelta64), got {t}"
        )
    try:
        return np.dtype(str(t))
    except TypeError:
        raise TypeError(f"{api}: {what} has type {t}, which has no numpy dtype") from None


def cujit_type(dtype, api):
    from cujit import from_dtype

    try:
        t = from_dtype(dtype)
    except Exception:  # noqa: BLE001  (any dtype cujit has no type for)
        t = None
    if t is None or t.kind not in ("boolean", "integer", "float", "complex"):
        raise TypeError(
            f"{api}: arrays of dtype {dtype} are not supported (the types are bool, int8-64, "
            "uint8-64, float16/32/64 and complex64/128)"
        )
    return t


def type_chars(in_dtypes, out_dtypes):
    """numpy's ``ufunc.types`` entry: ``'ff->f'``."""
    return "".join(d.char for d in in_dtypes) + "->" + "".join(d.char for d in out_dtypes)


def check_identity(identity):
    if identity not in (0, 1, None, "reorderable") or isinstance(identity, float):
        raise ValueError(f"Invalid identity value {identity!r} (the values are 0, 1, None and 'reorderable')")
    return identity


def signature_list(sigs, api):
    if isinstance(sigs, (str, _core.Signature)):
        return [sigs]  # a common slip: one signature, not in a list
    try:
        return list(sigs)
    except TypeError:
        raise TypeError(f"{api}: expected a list of type signatures, got {sigs!r}") from None


def _is_function(obj):
    return hasattr(obj, "__code__") or is_dispatcher(obj)


def check_target(target, api, targets=("cuda", "cpu")):
    """``target=``: "cuda" (kernels follow CUJIT_TARGET, as ``cuda.jit``'s do) or "cpu" (the CPU target's host
    runtime, in any process), where ``api`` has it."""
    if target not in targets:
        cpu = (
            "; target='cpu' runs them on this machine's CPU"
            if "cpu" in targets
            else "; with CUJIT_TARGET=cpu, target='cuda' runs them on the CPU target (docs/cpu_target.md)"
        )
        raise ValueError(f"Unsupported target: {target} ({api}: the targets are {', '.join(map(repr, targets))}{cpu})")


# ---- host and device arrays --------------------------------------------------------------------------------


def is_device_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


def as_device_array(obj):
    from cujit.cudadrv import devicearray

    return devicearray.as_cuda_array(obj)


def is_scalar(obj):
    return isinstance(obj, (int, float, complex, np.number, np.bool_))


def broadcast_device(ary, shape):
    """A view of a device array broadcast to ``shape`` (strides 0 along the new and the stretched axes)."""
    from cujit.cudadrv.devicearray import DeviceNDArray

    if tuple(ary.shape) == tuple(shape):
        return ary
    missing = len(shape) - ary.ndim
    strides = [0] * missing + list(ary.strides)
    for axis in range(missing, len(shape)):
        if ary.shape[axis - missing] != shape[axis]:
            strides[axis] = 0
    return DeviceNDArray(shape, strides, ary.dtype, ary.stream, ary.gpu_data, ptr=ary.ptr)


def broadcast_shape(shapes, api):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"{api}: operands could not be broadcast together with shapes {' '.join(str(tuple(s)) for s in shapes)}"
        ) from None


def flat_device(ary, stream):
    """A 1-D device array of ``ary``'s elements in C order: a view when its layout allows, else a copy."""
    if ary.ndim == 1:
        return ary
    try:
        return ary.reshape(ary.size)
    except NotImplementedError:  # not C-contiguous (a broadcast or strided view): through the host
        from cujit import cuda

        return cuda.to_device(np.ascontiguousarray(ary.copy_to_host(stream=stream)).ravel(), stream=stream)


# ---- cuda.vectorize ----------------------------------------------------------------------------------------

_VECTORIZE_KERNEL = """\
def {name}({params}, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = core({items})
"""


def vectorize_source(name, scalar_mask):
    """The element-wise kernel of a ufunc: arrays are read at the thread's index, scalars (``scalar_mask``)
    passed by value."""
    params = [f"a{i}" for i in range(len(scalar_mask))]
    items = [p if scalar else f"{p}[i]" for p, scalar in zip(params, scalar_mask)]
    return _VECTORIZE_KERNEL.format(name=name, params=", ".join(params), items=", ".join(items))


class CUDAUFuncDispatcher:
    """What ``cuda.vectorize`` returns: call it like a numpy ufunc on host or device arrays and scalars
    (``out=``, ``stream=``); ``reduce(array)`` folds a 1-D array with a binary ufunc. ``functions`` maps
    input dtypes to (result dtype, kernel), in the order the signatures were added. ``target="cpu"``: its kernels
    compile for the CPU target and run on host memory, numpy arrays in and out (no GPU, no stream)."""

    def __init__(self, pyfunc, identity=None, lazy=False, target="cuda"):
        self.py_func = python_function(pyfunc)
        self.__name__ = self.py_func.__name__
        self.__qualname__ = getattr(self.py_func, "__qualname__", self.__name__)
        self.__doc__ = self.py_func.__doc__
        self.__wrapped__ = self.py_func
        self.identity = identity
        self.target = target
        self._calls = _HostUFuncCall if target == "cpu" else _UFuncCall
        self.functions = OrderedDict()
        self._lazy = lazy
        self._lock = threading.Lock()
        self._core = device_function(pyfunc, "vectorize", inline="always")
        # The generated kernels by which inputs are scalars: each serves every signature (it compiles per
        # argument types), the one of arrays only is the kernel ``functions`` names.
        self._kernels = {}
        self.nin = self.py_func.__code__.co_argcount
        if self.nin < 1:
            raise TypeError(f"vectorize: {self.__qualname__!r} takes no arguments; a ufunc needs at least one input")

    # -- numpy's ufunc attributes --------------------------------------------------------------------------
    nout = 1
    signature = None

    @property
    def nargs(self):
        return self.nin + self.nout

    @property
    def ntypes(self):
        return len(self.functions)

    @property
    def types(self):
        return [type_chars(ins, (out,)) for ins, (out, _) in self.functions.items()]

    def __repr__(self):
        if self.target == "cpu":
            return f"<cujit ufunc {self.__qualname__} (target='cpu', {self.ntypes} types)>"
        return f"<cujit CUDA ufunc {self.__qualname__} ({self.ntypes} types)>"

    # -- compiling -----------------------------------------------------------------------------------------
    def _stager(self, scalar_mask=None):
        scalar_mask = tuple(scalar_mask or (False,) * self.nin)
        kernel = self._kernels.get(scalar_mask)
        if kernel is None:
            from cujit import cuda

            name = f"__vectorized_{identifier(self.__name__)}"
            source = vectorize_source(name, scalar_mask)
            # target="cuda" leaves the kernels' target to CUJIT_TARGET, as cuda.jit does
            kernel = cuda.jit(
                generated_function(source, name, kernel_namespace(self.py_func, self._core)),
                target="cpu" if self.target == "cpu" else None,
            )
            with self._lock:
                kernel = self._kernels.setdefault(scalar_mask, kernel)
        return kernel

    @entry_point
    def add(self, sig):
        """Compiles the ufunc for one type signature (``"float32(float32, float32)"``, or its argument types:
        the result type is then inferred)."""
        signature = parse_signature(sig, "vectorize")
        argtypes = list(signature.args)
        if len(argtypes) != self.nin:
            raise TypeError(
                f"vectorize: signature {sig!r} has {len(argtypes)} argument(s) but "
                f"{self.__qualname__!r} takes {self.nin}"
            )
        in_dtypes = tuple(scalar_dtype(t, "vectorize", f"argument {i} of {sig!r}") for i, t in enumerate(argtypes))
        restype = signature.return_type if signature.return_type is not None else self._infer(argtypes)
        out_dtype = scalar_dtype(restype, "vectorize", f"the result of {self.__qualname__}{tuple(argtypes)}")
        kernel = self._stager()
        kernel.compile(tuple(t[::1] for t in argtypes) + (restype[::1],))
        with self._lock:
            self.functions[in_dtypes] = (out_dtype, kernel)
        return in_dtypes

    def _infer(self, argtypes):
        """The result type of the function for these argument types (typing only)."""
        from cujit.compiler import make_options, type_function

        options = make_options(
            device=True, abi="numba", abi_info=None, cc=None, fastmath=False, opt=True, debug=False, lineinfo=False
        )
        return type_function(self.py_func, _core.Signature(None, list(argtypes)), options).return_type

    def disable_compile(self):
        self._lazy = False

    # -- calling -------------------------------------------------------------------------------------------
    @entry_point
    def __call__(self, *args, out=None, stream=0, **kws):
        if kws:
            raise TypeError(
                f"{self.__name__}() got unexpected keyword argument(s) {', '.join(map(repr, kws))} "
                "(a CUDA ufunc takes out= and stream=)"
            )
        if len(args) == self.nin + 1 and out is None:
            *args, out = args  # numpy's positional output
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} input(s) (and an optional output), got {len(args)}")
        return self._calls(self, args, out, stream).run()

    def _kernel_for(self, dtypes, scalars, args):
        """(input dtypes, result dtype, kernel) for inputs of ``dtypes`` (None for the scalars)."""
        if self._lazy:
            for i, d in enumerate(dtypes):
                if d is not None:
                    cujit_type(d, f"{self.__name__}() input {i}")
            wanted = _lazy_dtypes(dtypes, args)
            if wanted not in self.functions:
                self.add(tuple(cujit_type(d, f"{self.__name__}() input {i}") for i, d in enumerate(wanted)))
            return (wanted,) + self.functions[wanted]
        key = _resolve_eager(self.functions, dtypes, scalars, args, self.__name__)
        return (key,) + self.functions[key]

    @entry_point
    def reduce(self, arg, stream=0):
        """Folds a 1-D array with this binary ufunc (numba-cuda's pairwise halving on the GPU); returns the
        result as a numpy scalar."""
        return _ufunc_reduce(self, arg, stream)


def _lazy_dtypes(dtypes, args):
    """The dtypes a lazily compiling ufunc compiles for: the arrays' own; a Python scalar takes numpy's
    promotion of it with the arrays (``float32 array * 2.0`` stays float32), a numpy scalar its own dtype."""
    array_dtypes = [d for d in dtypes if d is not None]
    wanted = []
    for d, a in zip(dtypes, args):
        if d is not None:
            wanted.append(d)
        elif isinstance(a, np.generic):
            wanted.append(a.dtype)
        elif isinstance(a, bool) or not array_dtypes:
            wanted.append(np.asarray(a).dtype)
        else:
            wanted.append(np.result_type(*array_dtypes, a))
    return tuple(wanted)


def _resolve_eager(functions, dtypes, scalars, args, name):
    """numba-cuda's choice: arrays must match a signature's dtypes exactly; scalars first by their own dtype,
    then by any signature that fits the arrays. More than one fit is ambiguous."""
    matches = []
    if scalars:
        own = [d if d is not None else np.asarray(a).dtype for d, a in zip(dtypes, args)]
        matches = [k for k in functions if all(f == d for f, d in zip(k, own))]
    if not matches:
        matches = [k for k in functions if all(d is None or f == d for f, d in zip(k, dtypes))]
    if not matches:
        given = ", ".join("scalar" if d is None else str(d) for d in dtypes)
        have = "; ".join(", ".join(map(str, k)) for k in functions) or "none"
        raise TypeError(
            f"No matching version of {name}() for input dtypes ({given}); it was compiled for ({have}). "
            "A cujit ufunc requires array arguments to have the exact types (numba-cuda's rule, numpy's "
            "casting='no'): convert the arrays with astype, or add the signature."
        )
    if len(matches) > 1:
        raise TypeError(
            f"Failed to resolve ufunc {name}() due to ambiguous signature: the scalar arguments fit "
            f"{len(matches)} signatures. Use numpy scalars (np.float32(x)) to choose one."
        )
    return matches[0]


class _UFuncCall:
    """One call of a CUDA ufunc: numba-cuda's ufunc mechanism (inputs to arrays, signature, broadcast, flatten,
    copies to the device, launch, result where the inputs were)."""

    def __init__(self, ufunc, args, out, stream):
        self.ufunc, self.args, self.out, self.stream = ufunc, list(args), out, stream

    def run(self):
        ufunc = self.ufunc
        arrays, dtypes, scalars = self._arrays()
        in_dtypes, out_dtype, _ = ufunc._kernel_for(dtypes, scalars, self.args)
        shape = broadcast_shape([a.shape for a in arrays if a is not None] or [(1,)], ufunc.__name__)
        out = self._checked_out(shape, out_dtype)
        values = [None] * len(arrays)
        for i in scalars:  # passed by value, in the signature's type (numba-cuda converts them so)
            values[i] = in_dtypes[i].type(self.args[i])
        for i, a in enumerate(arrays):
            if a is not None:
                values[i] = self._flat(a, shape)
        kernel = ufunc._stager([a is None for a in arrays])
        return self._launch(kernel, values, shape, out, out_dtype, any(is_device_array(a) for a in arrays))

    def _flat(self, a, shape):
        """An input as a 1-D device array of the broadcast shape's elements in C order."""
        if is_device_array(a):
            return flat_device(broadcast_device(a, shape), self.stream)
        from cujit import cuda

        host = np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
        return cuda.to_device(host, stream=self.stream)

    def _arrays(self):
        arrays, dtypes, scalars = [], [], []
        for i, a in enumerate(self.args):
            if is_device_array(a):
                a = as_device_array(a)
            elif is_scalar(a):
                scalars.append(i)
                a = None
            else:
                a = np.asarray(a)
                if a.dtype == object:
                    raise TypeError(
                        f"{self.ufunc.__name__}() argument {i}: cannot convert {type(self.args[i])} "
                        "to an array of numbers"
                    )
            arrays.append(a)
            dtypes.append(None if a is None else np.dtype(a.dtype))
        return arrays, dtypes, scalars

    def _checked_out(self, shape, out_dtype):
        out = self.out
        if out is None:
            return None
        name = self.ufunc.__name__
        if is_device_array(out):
            out = as_device_array(out)
        elif not isinstance(out, np.ndarray):
            raise TypeError(f"{name}(): out must be a numpy or device array, got {type(out).__name__}")
        elif out.dtype != out_dtype:
            raise TypeError(
                f"{name}(): out has dtype {out.dtype} but the ufunc's result for these inputs is {out_dtype}"
            )
        if tuple(out.shape) != tuple(shape):
            raise ValueError(
                f"{name}(): out has shape {tuple(out.shape)} but the broadcast inputs have shape {tuple(shape)}"
            )
        return out

    def _launch(self, kernel, values, shape, out, out_dtype, any_device):
        """Runs the kernel into ``out`` or a new device array; the result goes where numba-cuda puts it."""
        from cujit import cuda

        stream = self.stream
        n = int(np.prod(shape, dtype=np.int64))
        if out is not None and is_device_array(out):
            if out.ndim > 1 and not out.is_c_contiguous():
                raise ValueError(
                    f"{self.ufunc.__name__}(): a device out= of more than one dimension must be C-contiguous"
                )
            launch_over(kernel, n, stream, values + [out.reshape(n) if out.ndim != 1 else out])
            return out
        devout = cuda.device_array(n, dtype=out_dtype, stream=stream)
        launch_over(kernel, n, stream, values + [devout])
        result = devout.reshape(shape)
        if out is not None:  # a host out: filled from the device
            result.copy_to_host(out, stream=stream)
            synchronize_stream(stream)
            return out
        if any_device:
            return result
        host = result.copy_to_host(stream=stream)
        synchronize_stream(stream)
        return host


class _HostUFuncCall(_UFuncCall):
    """One call of a ufunc of ``target="cpu"``: the same steps on host memory. Its kernels run on the CPU target,
    which reads numpy arrays in place, so inputs are flattened on the host (device arrays copied there) and the
    result is a numpy array (``out=`` a numpy array): no runtime, GPU or stream is involved."""

    def __init__(self, ufunc, args, out, stream):
        if stream is not None and not (isinstance(stream, int) and stream == 0):
            raise TypeError(
                f"{ufunc.__name__}(): a ufunc of target='cpu' runs on the host when it is called: "
                "stream= is for target='cuda'"
            )
        if out is not None and not isinstance(out, np.ndarray):
            raise TypeError(
                f"{ufunc.__name__}(): out must be a numpy array for a ufunc of target='cpu', got {type(out).__name__}"
            )
        super().__init__(ufunc, args, out, 0)

    def _flat(self, a, shape):
        if is_device_array(a):
            a = a.copy_to_host()
        flat = np.ascontiguousarray(a if tuple(a.shape) == tuple(shape) else np.broadcast_to(a, shape)).reshape(-1)
        # A read-only array (a broadcast view) would be another argument type: another specialisation to compile.
        return flat if flat.flags.writeable else flat.copy()

    def _launch(self, kernel, values, shape, out, out_dtype, any_device):
        result = out if out is not None else np.empty(shape, dtype=out_dtype)
        n = result.size
        flat = result.reshape(n) if result.flags.c_contiguous else np.empty(n, dtype=out_dtype)
        launch_over(kernel, n, 0, values + [flat])
        if not np.shares_memory(flat, result):  # a strided out: filled from the kernel's contiguous result
            result[...] = flat.reshape(shape)
        return result


def configured(kernel, griddim, blockdim, stream):
    """``kernel[griddim, blockdim, stream]`` without the low-occupancy warning: the grid of these launches
    follows the data, not a choice the user made."""
    from cujit.errors import NumbaPerformanceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        return kernel[griddim, blockdim, stream]


def launch_over(kernel, n, stream, args):
    """One thread per index ``0 <= i < n`` (the generated kernels check ``i`` against their arrays)."""
    if n > 0:
        configured(kernel, (n + THREADS - 1) // THREADS, THREADS, stream)(*args)


THREADS = 256  # threads per block of the element-wise kernels


def synchronize_stream(stream):
    if stream is not None and not (isinstance(stream, int) and stream == 0):
        from cujit.cudadrv.stream import native_stream

        native = native_stream(stream)
        if native is not None:
            native.synchronize()


def _ufunc_reduce(ufunc, arg, stream):
    from cujit import cuda

    if ufunc.nin != 2:
        raise TypeError(f"{ufunc.__name__}.reduce needs a binary ufunc; {ufunc.__name__} takes {ufunc.nin} inputs")
    if ufunc.target == "cpu" and is_device_array(arg):
        arg = as_device_array(arg).copy_to_host()
    if not is_device_array(arg):
        arg = np.asarray(arg)
    if arg.ndim != 1:
        raise ValueError(f"{ufunc.__name__}.reduce: must use a 1-D array, got shape {tuple(arg.shape)}")
    n = arg.shape[0]
    if n == 0:
        raise TypeError("Reduction on an empty array.")
    if n == 1:
        return arg[0]
    if ufunc.target == "cpu":  # folded in place, on the host: a copy of the array
        return _halve(ufunc, np.array(arg), 0)[0]
    own_stream = not stream
    stream = stream or cuda.stream()
    mem = as_device_array(arg) if is_device_array(arg) else cuda.to_device(arg, stream=stream)
    result = _halve(ufunc, mem, stream)
    host = result.copy_to_host(stream=stream)
    if own_stream:
        stream.synchronize()
    else:
        synchronize_stream(stream)
    return host[0]


def _halve(ufunc, mem, stream):
    """numba-cuda's order: an odd length folds its last element into the fold of the rest; an even length
    folds its second half into its first, until one element is left."""
    while True:
        n = mem.shape[0]
        if n % 2:
            head = _halve(ufunc, mem[: n - 1], stream)
            return ufunc(head, mem[n - 1 :], out=head, stream=stream)
        left = mem[: n // 2]
        ufunc(left, mem[n // 2 :], out=left, stream=stream)
        if n // 2 == 1:
            return left
        mem = left


# ---- the decorators ----------------------------------------------------------------------------------------


def _vectorize_options(kws, target):
    identity = check_identity(kws.pop("identity", None))
    if kws.pop("cache", False):
        raise TypeError(f"caching is not supported (vectorize(cache=True) for target={target!r})")
    if "nopython" in kws:
        kws.pop("nopython")
        warnings.warn(f"nopython kwarg for {target} target is redundant", RuntimeWarning, stacklevel=3)
    if kws:
        raise KeyError(f"Unrecognized options. {target} vectorize target does not support option: {next(iter(kws))!r}")
    return identity


def vectorize(ftylist_or_function=(), target="cuda", **kws):
    """numba-cuda's ``cuda.vectorize``: ``@vectorize(["float32(float32, float32)", ...])`` compiles each
    signature now; ``@vectorize`` or ``@vectorize()`` compiles for the inputs' dtypes at each new call.
    Options: ``target`` ("cuda"; "cpu": a ufunc on the CPU target, numpy arrays in and out, as numba's
    ``vectorize(target="cpu")`` gives one), ``identity`` (0, 1, None, "reorderable"), ``cache`` (False only)."""
    check_target(target, "vectorize")
    if _is_function(ftylist_or_function) and not isinstance(ftylist_or_function, (str, _core.Signature)):
        identity = _vectorize_options(dict(kws), target)
        return CUDAUFuncDispatcher(ftylist_or_function, identity, lazy=True, target=target)
    sigs = signature_list(ftylist_or_function if ftylist_or_function is not None else (), "vectorize")
    identity = _vectorize_options(dict(kws), target)

    @entry_point
    def wrap(func):
        ufunc = CUDAUFuncDispatcher(func, identity, lazy=not sigs, target=target)
        for sig in sigs:
            ufunc.add(sig)
        return ufunc

    return wrap
