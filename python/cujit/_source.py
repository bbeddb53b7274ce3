"""Hands a Python function to the C++ frontend: its syntax tree (built once per
code object) and a resolver that freezes global and closure names.

The tree comes from one of two readers, and the rule choosing between them lives here
alone: the source text (_source_text.py) when the function has source that matches its
code object (same first line, same last line), otherwise the code object itself
(the ``bytecode`` subpackage) -- so a function built with exec() compiles, and one whose file was edited
after import compiles what runs, not what the file now says. CUJIT_FRONTEND=bytecode
makes every function go through the code object (the differential test uses it);
CUJIT_FRONTEND=source never reads the code object."""

import builtins
import math
import os
import sys
import _thread
import types as _pytypes

from cujit import _core
from cujit import _typeof, structs
from cujit import types as _types
from cujit.errors import TypingError, UnsupportedError

# Set by cujit.declarations: the wrapper that types calls to objects with ``__numba_cuda_declare__``.
declaring_callee = None
# Set by cujit.dispatcher: the device dispatcher of one of numba's jit/njit dispatchers (None for other objects).
device_for_numba = None
# Set by cujit.extending: the callee of a function with overloads, or of a register_jitable function (else None).
extension_callee = None
# Set by cujit.extending: (record type, bytes) of a value of a library type (its typeof_impl), else None.
extension_constant = None

_cache = {}
_cache_lock = _thread.allocate_lock()


class _Compiles(_thread._local):
    """The compiles of dispatchers in progress on this thread, innermost last: (dispatcher, key) pairs. A call
    back into the innermost one is self-recursion, typed against the compile in progress; and a function's own
    name, not yet bound while it compiles (an explicit signature compiles at decoration), names its dispatcher
    (numba's temporary dispatcher map)."""

    def __init__(self):
        self.stack = []


_compiles = _Compiles()


class compiling:
    """``with compiling(dispatcher, key):`` around a compile of one of `dispatcher`'s specialisations."""

    def __init__(self, dispatcher, key):
        self.entry = (dispatcher, key)

    def __enter__(self):
        _compiles.stack.append(self.entry)

    def __exit__(self, *exc):
        _compiles.stack.pop()


def innermost_compile():
    """The (dispatcher, key) compiling innermost on this thread, or None."""
    return _compiles.stack[-1] if _compiles.stack else None


def compile_in_progress(dispatcher, key):
    """Whether this thread is compiling `dispatcher`'s specialisation `key`."""
    return any(d is dispatcher and k == key for d, k in _compiles.stack)


def compiles_of(dispatcher):
    """How many compiles of `dispatcher` are in progress on this thread (nested: a call with other types)."""
    return sum(1 for d, _ in _compiles.stack if d is dispatcher)


def _compiling_dispatcher(pyfunc):
    for dispatcher, _ in reversed(_compiles.stack):
        if getattr(dispatcher, "py_func", None) is pyfunc:
            return dispatcher
    return None


FRONTENDS = ("auto", "source", "bytecode")


def frontend():
    """Which reader builds the trees: CUJIT_FRONTEND, "auto" unless set."""
    chosen = os.environ.get("CUJIT_FRONTEND", "auto") or "auto"
    if chosen not in FRONTENDS:
        raise ValueError(f"CUJIT_FRONTEND must be one of {', '.join(FRONTENDS)}, got {chosen!r}")
    return chosen


def function_source(pyfunc):
    """The FunctionSource of `pyfunc`, built once per code object (and reader)."""
    code = pyfunc.__code__
    chosen = frontend()
    # By identity: equal code objects from two files (code equality ignores the file name) are two functions.
    key = (id(code), chosen)
    entry = _cache.get(key)
    if entry is None or entry[0] is not code:
        entry = (code, _read(pyfunc, chosen))  # the code object is kept alive, so its id stays its own
        with _cache_lock:
            _cache[key] = entry
    return entry[1]


def _read(pyfunc, chosen):
    # The readers (ast, textwrap, linecache, tokenize, dis: a few ms) load at the first compile, not with
    # `import cujit`.
    if chosen == "bytecode":
        from cujit import bytecode

        return bytecode.function_source(pyfunc)
    from cujit import _source_text

    found = _source_text.source_lines(pyfunc)
    matching = found is not None and source_matches(pyfunc.__code__, *found)
    if chosen == "source" or matching:
        if found is None:
            qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
            raise UnsupportedError(
                f"cannot compile {qualname!r}: its source code is not available, and CUJIT_FRONTEND=source "
                "turns off reading functions from their bytecode"
            )
        parsed = _source_text.parse(pyfunc, found)
        if parsed is not None:
            return parsed
        if chosen == "source":
            qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
            raise UnsupportedError(f"cannot find the definition of {qualname!r} in its source")
        # Lines that stand where the function would but hold another: a lambda made by eval() in a `python -c`
        # program, whose text CPython 3.13 keeps in linecache under the same "<string>" as eval's code.
    from cujit import bytecode

    return bytecode.function_source(pyfunc)  # no lines to show: the file (if any) is not what runs


def source_matches(code, lines, first_line):
    """Whether `lines` (from `first_line`) are the source of `code`: they start on its first line and their
    last statement line is its last line (a file edited after import fails this, and is not read)."""
    if first_line != code.co_firstlineno:
        return False
    if code.co_name == "<lambda>":
        return True
    if hasattr(code, "co_positions"):
        last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=first_line)
    else:  # 3.10
        last = max((line for _, _, line in code.co_lines() if line is not None), default=first_line)
    text = [line.strip() for line in lines]
    while text and (not text[-1] or text[-1].startswith("#")):
        text.pop()
    if text and text[-1] in ("pass", "...") and last < first_line + len(text) - 1:
        return True  # a trailing `pass` leaves no instruction
    return first_line + len(text) - 1 == last


_BUILTINS = {
    abs: "abs",
    min: "min",
    max: "max",
    int: "int",
    float: "float",
    bool: "bool",
    round: "round",
    range: "range",
    complex: "complex",
    len: "len",
    enumerate: "enumerate",
    zip: "zip",
    print: "print",
    tuple: "tuple",
    pow: "operator.pow",  # pow(a, b) is a ** b
    divmod: "divmod",
}

_NUMPY_SCALARS = (
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_NUMPY_FUNCTIONS = (
    "sqrt",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "exp",
    "expm1",
    "exp2",
    "log",
    "log1p",
    "log2",
    "log10",
    "fabs",
    "cbrt",
    "floor",
    "ceil",
    "trunc",
    "degrees",
    "radians",
    "hypot",
    "copysign",
    "fmod",
    "power",
    "isnan",
    "isinf",
    "isfinite",
    "abs",
    "absolute",
    # the arithmetic ufuncs, by their operators (typing/builtin_calls.cpp: numpy_operators)
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "floor_divide",
    "remainder",
    "mod",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "minimum",
    "maximum",
    # whole-array reductions (typing/builtin_calls.cpp: reduction_sig)
    "sum",
    "prod",
    "max",
    "amax",
    "min",
    "amin",
    "mean",
)


class _Tables:
    """Identity tables of the objects the frontend knows, built on first use.

    numpy is never imported by cujit: if the user's code has not imported it,
    none of its objects can appear in a function's globals."""

    def __init__(self):
        import cmath
        import operator

        self.functions = {}
        for module in (math, cmath, operator):
            for name in dir(module):
                obj = getattr(module, name)
                if callable(obj) and not isinstance(obj, type) and not name.startswith("_"):
                    self.functions[id(obj)] = f"{module.__name__}.{name}"
        self.numpy = None
        self.scalar_types = {}

    def with_numpy(self):
        np = sys.modules.get("numpy")
        if np is not None and self.numpy is None:
            self.numpy = np
            for name in _NUMPY_FUNCTIONS:
                self.functions.setdefault(id(getattr(np, name)), f"numpy.{name}")
            for name in _NUMPY_SCALARS:
                self.scalar_types[getattr(np, name)] = "boolean" if name == "bool_" else name
        return self


_tables = None


def _known():
    global _tables
    if _tables is None:
        _tables = _Tables()
    return _tables.with_numpy()


_R = _core.Resolved  # the answers: typed values the frontend reads (cpp/bindings/py_resolved.cpp)


class Resolver(_core.Resolver):
    """Answers the frontend's questions about names outside the function: a ``_core.Resolved`` for each
    name it knows, None for an undefined one (the ``_core.Resolver`` interface the compiler calls)."""

    def __init__(self, pyfunc):
        _core.Resolver.__init__(self)
        self.pyfunc = pyfunc
        self.globals = pyfunc.__globals__
        code = pyfunc.__code__
        cells = pyfunc.__closure__ or ()
        self.closure = {}
        for name, cell in zip(code.co_freevars, cells):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
        self.objects = []

    def resolve(self, name):
        if name in self.closure:
            return self.classify(self.closure[name])
        if name in self.globals:
            return self.classify(self.globals[name])
        if hasattr(builtins, name):
            return self.classify(getattr(builtins, name))
        if name == self.pyfunc.__name__:  # its own name, unbound while it compiles: a recursive call
            dispatcher = _compiling_dispatcher(self.pyfunc)
            if dispatcher is not None:
                return self.classify(dispatcher)
        return None

    def resolve_attribute(self, is_object, key, attr):
        if is_object:
            base = self.objects[key]
        else:
            base = _path_object(key)
            if base is None:  # cuda.threadIdx.x and friends: intrinsic paths
                return _R.builtin(f"{key}.{attr}")
        if not hasattr(base, attr):
            return None
        return self.classify(getattr(base, attr), f"{key}.{attr}" if not is_object else None)

    def _ndarray(self, obj, np):
        """A global array is frozen into constant memory, as numba does."""
        name = "boolean" if obj.dtype == np.bool_ else obj.dtype.name
        dtype = _typeof.from_dtype(obj.dtype) if obj.dtype.fields is not None else _core.types.lookup(name)
        if dtype is None:
            raise TypingError(f"global arrays of dtype {obj.dtype} are not supported in CUDA code")
        data = np.ascontiguousarray(obj).tobytes()
        return _R.ndarray(dtype, tuple(obj.shape), data, f"array({name}, {obj.ndim}d)")

    def _device_array(self, obj, cai, np, path):
        """numba-cuda's capture of a global or closure device array: its pointer, shape and strides frozen into the
        code (the kernel sees the array's current contents, not a copy)."""
        dtype = np.dtype(cai["typestr"])
        element = _core.types.lookup("boolean" if dtype.name == "bool" else dtype.name)
        if element is None:
            raise TypingError(f"captured device array {_describe(obj, path)}: dtype {dtype} is not supported")
        shape = tuple(int(n) for n in cai["shape"])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], dtype.itemsize
            for n in reversed(shape):
                strides.insert(0, step)
                step *= max(n, 1)
        pointer, readonly = cai["data"]
        return _R.device_array(
            element, shape, tuple(int(s) for s in strides), int(pointer or 0), bool(readonly), _describe(obj, path)
        )

    def classify(self, obj, path=None):
        known = _known()
        np = known.numpy
        if isinstance(obj, bool) or (np is not None and isinstance(obj, np.bool_)):
            return _R.bool(bool(obj))
        if isinstance(obj, int) or (np is not None and isinstance(obj, np.integer)):
            value = int(obj)
            if -(1 << 63) <= value < (1 << 64):  # from 2**63 up: uint64, as numba types it
                return _R.int(value)
            raise TypingError(f"Int value is too large: {value}")
        if isinstance(obj, float) or (np is not None and isinstance(obj, np.floating)):
            return _R.float(float(obj))
        if isinstance(obj, complex) or (np is not None and isinstance(obj, np.complexfloating)):
            return _R.complex(obj.real, obj.imag)
        if obj is None:
            return _R.none()
        if isinstance(obj, _core.Type):
            return _R.type(obj)
        if _types.is_numba_type(obj):
            return _R.type(_types.from_numba(obj))
        if isinstance(obj, _types.Type) and not isinstance(obj, type):
            return _R.type(_types.signature_type(obj), str(obj))  # a library's type (cujit.extending): its record
        if isinstance(obj, type) and obj in known.scalar_types:
            return _R.type(_core.types.lookup(known.scalar_types[obj]))
        if np is not None and isinstance(obj, np.dtype) and obj.name in _NUMPY_SCALARS + ("bool",):
            return _R.type(_core.types.lookup("boolean" if obj.name == "bool" else obj.name))
        if np is not None and isinstance(obj, np.dtype) and obj.fields is not None:  # a structured dtype: a record
            return _R.type(_typeof.from_dtype(obj))
        if np is not None and isinstance(obj, np.ndarray):
            return self._ndarray(obj, np)
        cai = getattr(obj, "__cuda_array_interface__", None) if not isinstance(obj, type) else None
        if isinstance(cai, dict) and np is not None:  # a device array (cujit's, CuPy's...): captured by reference
            return self._device_array(obj, cai, np, path)
        if type(obj) is tuple:  # a tuple of constants is built in the function as written (numba's constant tuple)
            mark = len(self.objects)
            items = [self.classify(item) for item in obj]
            if all(item.kind in _CONSTANT_KINDS for item in items):
                return _R.tuple(items, repr(obj))
            del self.objects[mark:]  # (the handles its items took: the tuple is one object)
        if isinstance(obj, type) and (record := structs.record_of(obj)) is not None:  # a struct class: its record
            return _R.type(record, obj.__qualname__)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return _R.exception(obj, obj.__qualname__)
        intrinsic = getattr(obj, "_cujit_intrinsic", None)
        if isinstance(intrinsic, str):
            return _R.builtin(intrinsic)
        if isinstance(obj, type) and obj.__module__ == "numba.cuda.stubs":  # numba-cuda's own stub of a cuda name
            intrinsic = getattr(getattr(_cuda_namespace(), obj.__name__, None), "_cujit_intrinsic", None)
            if isinstance(intrinsic, str):
                return _R.builtin(intrinsic)
        if getattr(obj, "__name__", None) == "literal_unroll" and getattr(obj, "__module__", "").startswith("numba"):
            return _R.builtin("cuda.literal_unroll")  # numba's own marker of versioned loops
        if isinstance(obj, _core.Callee):  # a device dispatcher or a declared function
            return _R.device(obj, obj.__qualname__)
        if declaring_callee is not None and getattr(obj, "__numba_cuda_declare__", None) is not None:
            callee = declaring_callee(obj)  # declarations.py: typed through the declaration it gives
            return _R.device(callee, callee.__qualname__)
        extension = extension_callee(obj) if extension_callee is not None else None
        if extension is not None:  # cujit.extending: overloads, register_jitable
            return _R.device(extension, extension.__qualname__)
        device = device_for_numba(obj) if device_for_numba is not None else None
        if device is not None:  # numba's jit/njit function: compiled as a device function, as numba-cuda does
            return _R.device(device, device.__qualname__)
        if np is not None and isinstance(obj, np.void) and obj.dtype.fields is not None:  # a record constant
            return _R.record(_typeof.from_dtype(obj.dtype), obj.tobytes(), _describe(obj, path))
        constant = extension_constant(obj) if extension_constant is not None else None
        if constant is not None:  # a library type's value (cujit.extending), folded through its data model
            return _R.record(constant[0], constant[1], _describe(obj, path))
        if _is_ffi_from_buffer(obj):
            return _R.builtin("ffi.from_buffer")
        cmath = sys.modules.get("cmath")  # (not imported by cujit: a function can name it only once it is loaded)
        if obj is math or (cmath is not None and obj is cmath) or (np is not None and obj is np):
            return _R.module("math" if obj is math else "cmath" if obj is cmath else "numpy")
        cuda = _cuda_namespace()
        if cuda is not None and obj is cuda:
            return _R.module("cuda")
        try:
            if obj in _BUILTINS:
                return _R.builtin(_BUILTINS[obj])
        except TypeError:  # unhashable
            pass
        if id(obj) in known.functions and callable(obj):
            return _R.builtin(known.functions[id(obj)])
        self.objects.append(obj)
        return _R.object(len(self.objects) - 1, _describe(obj, path))


_CONSTANT_KINDS = ("int", "float", "bool", "none", "complex", "tuple", "ndarray", "device_array")


def _describe(obj, path=None):
    """How errors name an object the code uses: by the path it was reached through from a module the frontend
    knows (``numpy.sum`` for ``np.sum``); a Python function or class by its qualified name (the user's own, as
    written); another callable, a library's (numpy's functions are not Python functions), by its module's
    dotted name (``numpy.sum`` for ``from numpy import sum``); anything else by repr."""
    if path is not None:
        return path
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(name, str) or not callable(obj):
        return repr(obj)
    module = getattr(obj, "__module__", None)
    if isinstance(obj, (type, _pytypes.FunctionType)) or not isinstance(module, str) or module == "builtins":
        return name
    short = getattr(obj, "__name__", name)
    try:  # a method its module offers as a function of its own (numpy.random.rand, not RandomState.rand)
        offered = getattr(sys.modules.get(module), short, None) == obj
    except Exception:  # noqa: BLE001  (whatever the module holds under that name compares as it likes)
        offered = False
    return f"{module}.{short if offered is True else name}"


def _is_ffi_from_buffer(obj):
    """``ffi.from_buffer`` of a ``cffi.FFI()`` instance (recognised without importing cffi)."""
    owner = getattr(obj, "__self__", None)
    return (
        owner is not None
        and getattr(obj, "__name__", None) == "from_buffer"
        and type(owner).__module__.split(".")[0] == "cffi"
    )


def _path_object(path):
    if path == "math":
        return math
    if path == "cmath":
        import cmath

        return cmath
    if path == "numpy":
        return sys.modules.get("numpy")
    if path == "cuda":
        return _cuda_namespace()
    return None


def _cuda_namespace():
    """``cujit.cuda``, the namespace kernels use as ``cuda``. It is the package's public face, above this module
    (it imports the compiler, which imports this), so it is found among the loaded modules (``import cujit``
    loads it), never imported from here."""
    return sys.modules.get("cujit.cuda")
