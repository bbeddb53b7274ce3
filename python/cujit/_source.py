"""Hands a Python function to the C++ frontend: its source (parsed once per
code object) and a resolver that freezes global and closure names."""

import ast
import builtins
import cmath
import inspect
import math
import textwrap
import threading

import numpy as np

from cujit import _core
from cujit.errors import UnsupportedError, TypingError

_cache = {}
_cache_lock = threading.Lock()


def _lambda_def(tree, pyfunc):
    """A lambda becomes a FunctionDef returning its body (same source locations)."""
    names = list(pyfunc.__code__.co_varnames[: pyfunc.__code__.co_argcount])
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == names:
            ret = ast.Return(value=node.body)
            ast.copy_location(ret, node.body)
            fdef = ast.FunctionDef(name="<lambda>", args=node.args, body=[ret], decorator_list=[], returns=None,
                                   type_params=[])
            ast.copy_location(fdef, node)
            return fdef
    return None


def _parse(pyfunc):
    qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    try:
        lines, first_line = inspect.getsourcelines(pyfunc)
    except (OSError, TypeError) as exc:
        raise UnsupportedError(
            f"cannot compile {qualname!r}: its source code is not available ({exc}). cujit compiles "
            "functions from their source; functions built with exec() or typed into an interactive "
            "prompt have none. Define the function in a module file.") from None
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        # A lambda in the middle of an expression: parse the lines it spans in parentheses.
        tree = ast.parse("(" + text.strip().rstrip(",") + "\n)")
    if pyfunc.__name__ == "<lambda>":
        fdef = _lambda_def(tree, pyfunc)
    else:
        fdef = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fdef is None:
        raise UnsupportedError(f"cannot find the definition of {qualname!r} in its source")
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise UnsupportedError(f"{qualname!r}: async functions cannot be compiled for CUDA")
    filename = inspect.getsourcefile(pyfunc) or pyfunc.__code__.co_filename
    return _core.FunctionSource(fdef, pyfunc.__name__, qualname, pyfunc.__module__ or "<dynamic>", filename,
                                text.splitlines(), first_line)


def function_source(pyfunc):
    """The FunctionSource of `pyfunc`, parsed once per code object."""
    code = pyfunc.__code__
    src = _cache.get(code)
    if src is None:
        src = _parse(pyfunc)
        with _cache_lock:
            _cache[code] = src
    return src


_BUILTINS = {abs: "abs", min: "min", max: "max", int: "int", float: "float", bool: "bool", round: "round",
             range: "range", complex: "complex", len: "len"}
_MODULES = {math: "math", cmath: "cmath", np: "numpy"}


def _module_functions():
    table = {}
    for module, prefix in ((math, "math"), (np, "numpy")):
        for name in dir(module):
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, type):
                table.setdefault(id(obj), f"{prefix}.{name}")
    return table


_FUNCTIONS = _module_functions()
_NUMPY_SCALARS = {
    np.bool_: "boolean", np.int8: "int8", np.int16: "int16", np.int32: "int32", np.int64: "int64",
    np.uint8: "uint8", np.uint16: "uint16", np.uint32: "uint32", np.uint64: "uint64", np.float16: "float16",
    np.float32: "float32", np.float64: "float64", np.complex64: "complex64", np.complex128: "complex128",
}


class Resolver:
    """Answers the frontend's questions about names outside the function."""

    def __init__(self, pyfunc):
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
        return None

    def resolve_attribute(self, is_object, key, attr):
        if is_object:
            base = self.objects[key]
        else:
            base = _path_object(key)
            if base is None:  # cuda.threadIdx.x and friends: intrinsic paths
                return ("builtin", f"{key}.{attr}")
        if not hasattr(base, attr):
            return None
        return self.classify(getattr(base, attr), f"{key}.{attr}" if not is_object else None)

    def classify(self, obj, path=None):
        from cujit.dispatcher import CUDADispatcher
        if isinstance(obj, (bool, np.bool_)):
            return ("bool", bool(obj))
        if isinstance(obj, (int, np.integer)):
            value = int(obj)
            if not -(1 << 63) <= value < (1 << 63):
                raise TypingError(f"Int value is too large: {value}")
            return ("int", value)
        if isinstance(obj, (float, np.floating)):
            return ("float", float(obj))
        if isinstance(obj, (complex, np.complexfloating)):
            return ("complex", obj.real, obj.imag)
        if obj is None:
            return ("none",)
        if isinstance(obj, _core.Type):
            return ("type", obj)
        if isinstance(obj, type) and obj in _NUMPY_SCALARS:
            return ("type", _core.types.lookup(_NUMPY_SCALARS[obj]))
        if isinstance(obj, CUDADispatcher):
            return ("device", obj, obj.__qualname__)
        for module, name in _MODULES.items():
            if obj is module:
                return ("module", name)
        from cujit import cuda
        if obj is cuda:
            return ("module", "cuda")
        try:
            if obj in _BUILTINS:
                return ("builtin", _BUILTINS[obj])
        except TypeError:  # unhashable
            pass
        if id(obj) in _FUNCTIONS and callable(obj):
            return ("builtin", _FUNCTIONS[id(obj)])
        if path is not None and path.startswith("cuda."):
            return ("builtin", path)
        self.objects.append(obj)
        return ("object", len(self.objects) - 1, repr(obj))


def _path_object(path):
    if path in ("math", "cmath", "numpy"):
        return {"math": math, "cmath": cmath, "numpy": np}[path]
    if path == "cuda":
        from cujit import cuda
        return cuda
    return None
