"""numba's extension API at the Python level, for CUDA code (issue 44; ``numba.cuda.extending`` under
``cujit.as_numba``): what a library writes to teach the compiler a function.

- ``overload(func)``: ``@overload(func) def typer(*argtypes)`` returns a Python implementation for those argument
  types (or None to decline); a call of ``func`` in CUDA code compiles the implementation as a device function for
  them, asked once per argument types. Several overloads of one function are tried in the order registered; the
  argument types come without their literal values first, then with them (numba's ``prefer_literal=False``).
- ``overload_method(TypeClass, name)`` and ``overload_attribute(TypeClass, name)``: ``value.name(...)`` and
  ``value.name`` of a value whose type is an instance of ``TypeClass`` (``types.Array``, ``types.Float``...; or one
  type) call the implementation the typer gives for the value's type (and the arguments'), the value first.
- ``register_jitable(fn)``: a plain Python function callable from CUDA code too (compiled as a device function for
  each argument types) and, unchanged, from Python.

- ``overload(operator.add)`` (any function of ``operator``): the operator on operands no builtin rule takes (typing
  asks for ``operator.<name>``'s overloads: cpp/src/typing/infer_types.cpp operator_call).
- ``overload_declared(func, *declarations)``: ``cuda.declare_device`` functions as the overloads of ``func`` (a
  Python name, an operator, a struct class's constructor), chosen by the argument types.

- New types: ``class IntervalType(types.Type)``; ``register_model(IntervalType)`` of a ``models.StructModel`` with
  members (laid out as a record, C's alignment, under the type's name; no members: a zero-size value) or of
  ``models.OpaqueModel`` (a pointer-sized handle); ``make_attribute_wrapper`` (its members as attributes);
  ``typeof_impl.register(PyClass)`` (its Python values as kernel arguments, passed as the record of their members'
  attributes, and as global constants, folded into constant memory); ``type_callable(PyClass)`` (``Interval(lo,
  hi)`` in CUDA code builds one, its members in order). A library type is its record in signatures
  (``interval_type(float64, float64)``, ``interval_type[::1]``).

The IR-level API (``intrinsic``, ``lower_builtin``, ``cgutils``...) raises a NotImplementedError that names the
Python-level way. docs/extending.md has the user's view."""

import _thread
import sys

from cujit import _core, _source
from cujit.errors import TypingError

__all__ = [
    "overload",
    "overload_method",
    "overload_attribute",
    "overload_declared",
    "register_jitable",
    "typeof_impl",
    "type_callable",
    "register_model",
    "register_default",
    "models",
    "core_models",
    "make_attribute_wrapper",
]

_lock = _thread.allocate_lock()
_overloads = {}  # id(func) -> _Overloads
_jitables = {}  # id(fn) -> (fn, its device dispatcher)
_members = {}  # ("method" | "attribute", name) -> [(type class or type, typer)], in the order registered
_member_callees = {}  # (kind, type, name) -> _Overloads of the typers that apply to the type


class _Overloads(_core.Callee):
    """The callee of a function with overloads: typing asks it for each argument types (the ``_core.Callee``
    interface); the implementation an overload gives is compiled as a device function, one per implementation."""

    def __init__(self, func, name=None, operator=None):
        _core.Callee.__init__(self)
        self.func = func
        self.operator = operator  # an operator's symbol ("+", "<"): the overloads of that function of `operator`
        self.__qualname__ = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
        self.typers = []
        self._chosen = {}  # argtypes -> the device dispatcher of the implementation
        self._devices = {}  # id(implementation) -> (implementation, its device dispatcher)

    def _call_parameters(self):
        return None  # positional arguments only

    def _type_for_caller(self, argtypes, caller_options):
        argtypes = tuple(argtypes)
        device = self._chosen.get(argtypes)
        if device is None:
            device = self._choose(argtypes)
            with _lock:
                self._chosen[argtypes] = device
        return device._type_for_caller(list(argtypes), caller_options)

    def _choose(self, argtypes):
        plain = tuple(_unliteral(t) for t in argtypes)
        for candidates in (plain, argtypes) if plain != argtypes else (argtypes,):
            for typer in list(self.typers):
                implementation = typer(*candidates)
                if implementation is not None:
                    return self._device(implementation)
        shown = ", ".join(str(t) for t in argtypes)
        if self.operator is not None:  # as typing says it of an operator without overloads
            if len(argtypes) == 1:
                raise TypingError(f"No implementation of unary operator '{self.operator}' for type {shown}")
            if self.operator in ("==", "!=", "<", "<=", ">", ">="):
                raise TypingError(f"No implementation of comparison '{self.operator}' for ({shown})")
            raise TypingError(f"No implementation of operator '{self.operator}' for operands ({shown})")
        raise TypingError(
            f"No implementation of function {self.__qualname__}({shown}): no overload accepts these types"
        )

    def _device(self, implementation):
        if isinstance(implementation, _core.Callee):  # a declared C/C++ function, a device function: called as is
            return implementation
        if not callable(implementation) or not hasattr(implementation, "__code__"):
            raise TypingError(
                f"an overload of {self.__qualname__} returned {implementation!r}: an overload returns a Python "
                "function (the implementation for the types it was given), a declare_device function, or None"
            )
        from cujit.dispatcher import jit

        with _lock:
            kept = self._devices.get(id(implementation))
            if kept is None or kept[0] is not implementation:
                kept = self._devices[id(implementation)] = (implementation, jit(device=True)(implementation))
        return kept[1]


def _unliteral(t):
    kind = getattr(t, "kind", None)
    if kind == "integer_literal":
        return _core.types.lookup("uint64" if t.literal_value >= 1 << 63 else "int64")
    if kind == "boolean_literal":
        return _core.types.lookup("boolean")
    return t


# The functions of `operator` typing calls for an operator no builtin rule takes (cpp/src/ir/ir.cpp
# operator_function), by their symbols.
_OPERATORS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "lshift": "<<",
    "rshift": ">>",
    "and_": "&",
    "or_": "|",
    "xor": "^",
    "neg": "-",
    "pos": "+",
    "invert": "~",
    "not_": "not",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
}


def _is_operator(func):
    operator = sys.modules.get("operator")  # (a function of operator exists only once operator is loaded)
    return (
        operator is not None
        and getattr(operator, getattr(func, "__name__", ""), None) is func
        and (func.__name__ in _OPERATORS)
    )


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, target=None, **kwargs):
    """``@overload(func)``: the decorated typer gives ``func``'s implementation for argument types in CUDA code."""
    if target not in (None, "cuda", "generic"):
        raise NotImplementedError(f"overload(target={target!r}): cujit compiles for CUDA (target 'cuda')")

    def register(typer):
        with _lock:
            entry = _overloads.get(id(func))
            if entry is None or entry.func is not func:
                symbol = _OPERATORS.get(func.__name__) if _is_operator(func) else None
                name = f"operator.{func.__name__}" if symbol else None
                entry = _overloads[id(func)] = _Overloads(func, name, symbol)
            entry.typers.append(typer)
            entry._chosen.clear()  # asked again with the new overload
        return typer

    return register


def overload_declared(func, *declarations):
    """Binds C/C++ functions declared with ``cuda.declare_device`` to ``func`` as its overloads (what numbast
    renders per header): a call of ``func`` in CUDA code (``operator.add`` for ``a + b``, a struct class for its
    constructor, any Python function) calls the declaration whose parameter types are the arguments' types, else
    the first the arguments convert to. Returns ``func``."""
    from cujit.declarations import ExternFunction

    for declared in declarations:
        if not isinstance(declared, ExternFunction):
            raise TypeError(f"overload_declared: {declared!r} is not a function declared with cuda.declare_device")
    declared = list(declarations)

    def choose(*argtypes):
        fits = [d for d in declared if len(d.sig.args) == len(argtypes)]
        exact = [d for d in fits if all(_unliteral(a) == p for a, p in zip(argtypes, d.sig.args))]
        convertible = [
            d for d in fits if all(a == p or _core.can_convert(a, p) is not None for a, p in zip(argtypes, d.sig.args))
        ]
        return (exact or convertible or [None])[0]

    choose._cache_key = tuple(declared)  # (the disk cache keys the declarations, with what they link)
    overload(func)(choose)
    return func


def overload_method(typ, attr, **kwargs):
    """``@overload_method(TypeClass, name)``: the decorated typer, called with the value's type and the arguments'
    types, gives the implementation of ``value.name(...)`` (the value its first parameter), or None."""
    return _member_overload("method", typ, attr)


def overload_attribute(typ, attr, **kwargs):
    """``@overload_attribute(TypeClass, name)``: the decorated typer, called with the value's type, gives the
    implementation of ``value.name`` (a function of the value), or None."""
    return _member_overload("attribute", typ, attr)


def _member_overload(kind, typ, attr):
    def register(typer):
        with _lock:
            _members.setdefault((kind, attr), []).append((typ, typer))
            for key in [k for k in _member_callees if k[0] == kind and k[2] == attr]:
                del _member_callees[key]  # asked again with the new overload
        return typer

    return register


def _operator_typers():
    """[(name, typers)] of the overloads of the functions of ``operator``, by name (the disk cache's key)."""
    entries = [e for e in list(_overloads.values()) if e.operator is not None]
    return sorted((e.__qualname__, list(e.typers)) for e in entries)


def _member_typers(name):
    """Every method and attribute typer registered under `name` (the disk cache's key includes their source)."""
    return [typer for kind in ("method", "attribute") for _, typer in _members.get((kind, name), ())]


def _applies(typ, t):
    return isinstance(t, typ) if isinstance(typ, type) else t == typ


def _member(kind, t, name):
    """The Resolved device callee of ``value.name`` (kind "attribute") or ``value.name(...)`` ("method") for a value
    of type ``t``, or of the overloads of ``operator.name`` (kind "operator": an operator no builtin rule takes,
    ``t`` its first operand's type); or None (typing asks, once per type: cpp/bindings/py_compile.cpp)."""
    if kind == "operator":
        import operator

        func = getattr(operator, name, None)
        entry = _overloads.get(id(func))
        return _core.Resolved.device(entry, f"operator.{name}") if entry is not None and entry.func is func else None
    key = (kind, t, name)
    callee = _member_callees.get(key)
    if callee is None:
        typers = [typer for typ, typer in _members.get((kind, name), ()) if _applies(typ, t)]
        if not typers:
            return None
        callee = _Overloads(None, f"{t}.{name}")
        callee.typers = typers
        with _lock:
            _member_callees[key] = callee
    return _core.Resolved.device(callee, callee.__qualname__)


def register_jitable(*args, **kwargs):
    """``@register_jitable`` (or ``@register_jitable(**options)``): ``fn`` stays a Python function and is callable
    from CUDA code, compiled as a device function for its argument types."""

    def wrap(fn):
        from cujit.dispatcher import jit

        with _lock:
            _jitables[id(fn)] = (fn, jit(device=True)(fn))
        return fn

    if args and callable(args[0]) and len(args) == 1 and not kwargs:
        return wrap(args[0])
    return wrap


def _callee_of(obj):
    """The callee typing uses for ``obj`` in CUDA code: its overloads, its constructor (type_callable), or its device
    dispatcher; None otherwise. (A function of ``operator`` stays its operator: typing asks its overloads only for
    operands no builtin rule takes.)"""
    entry = _overloads.get(id(obj))
    if entry is not None and entry.func is obj and entry.operator is None:
        return entry
    constructor = _constructors.get(id(obj))
    if constructor is not None and constructor[0] is obj:
        return constructor[1]
    kept = _jitables.get(id(obj))
    if kept is not None and kept[0] is obj:
        return kept[1]
    return None


_source.extension_callee = _callee_of


# ---- new types: data models laid out as records ------------------------------------------------------------------

_models = {}  # the type class -> its model class (register_model)
_layouts = {}  # id(library type) -> (it, its C++ record type, member names)
_extensions = {}  # the C++ record type -> the library type it was made for
_names = {}  # the C++ record type's name -> the library type
_typeofs = {}  # Python class -> typeof function (typeof_impl.register)
_constructors = {}  # id(Python class) -> (it, _Overloads of its type_callable typers)


class _Models:
    """``numba.core.extending.models``: the data models a type class registers: ``StructModel`` with members (none:
    a zero-size value, a tag type) and ``OpaqueModel`` (a pointer-sized handle CUDA code passes along)."""

    class DataModel:
        def __init__(self, dmm, fe_type):
            self.fe_type = fe_type

    class StructModel(DataModel):
        def __init__(self, dmm, fe_type, members=()):
            super().__init__(dmm, fe_type)
            self._members = [(str(name), t) for name, t in members]

    class OpaqueModel(StructModel):
        def __init__(self, dmm, fe_type):
            from cujit import types

            super().__init__(dmm, fe_type, [("opaque", types.voidptr)])

    def __getattr__(self, name):
        raise NotImplementedError(
            f"models.{name}: cujit lays out library types with models.StructModel and models.OpaqueModel"
        )


models = core_models = _Models()  # (numba-cuda's extending names it core_models too)


def register_model(type_class):
    """``@register_model(TypeClass)`` on a ``models.StructModel`` subclass (or ``register_model(TypeClass)(
    models.OpaqueModel)``): values of the class's types are records of the model's members."""

    def register(model):
        _models[type_class] = model
        return model

    return register


register_default = register_model


class _TypeofRegistry:
    """``typeof_impl.register(PyClass)``: the decorated ``typeof(val, c)`` gives the type of the class's values."""

    def register(self, cls):
        def register(fn):
            _typeofs[cls] = fn
            return fn

        return register


typeof_impl = _TypeofRegistry()


def _layout(t):
    """(C++ record type, member names) of library type `t`, from its class's model (made once per type)."""
    kept = _layouts.get(id(t))
    if kept is not None and kept[0] is t:
        return kept[1], kept[2]
    model_class = next((_models[c] for c in type(t).__mro__ if c in _models), None)
    if model_class is None:
        raise TypingError(f"type {t} has no data model: register one with @register_model({type(t).__name__})")
    model = model_class(None, t)
    fields, offset, align = [], 0, 1
    for name, member in getattr(model, "_members", ()):
        core = _core_type(member)
        size, alignment = _size_and_alignment(core)
        offset = (offset + alignment - 1) // alignment * alignment
        fields.append((name, core, offset, ""))
        offset += size
        align = max(align, alignment)
    with _lock:
        name = str(t)  # the type's name; a second type of the same name (another class) is told apart by a number
        while name in _names and _names[name] is not t:
            name = f"{t}#{len(_names)}"
        _names[name] = t
        record = _core.types.record(fields, (offset + align - 1) // align * align, True, name)
        _layouts[id(t)] = (t, record, [name for name, *_ in fields])
        _extensions[record] = t
    return record, [name for name, *_ in fields]


def _core_type(t):
    """The C++ type of a cujit type or of a library type (its record)."""
    if isinstance(t, _core.Type):
        return t
    return _layout(t)[0]


def _size_and_alignment(core):
    if core.kind == "record":
        return core.size, max([_size_and_alignment(ft)[1] for ft, _ in core.fields.values()] or [1])
    if core.kind in ("cpointer", "voidptr"):
        return 8, 8
    size = max(core.bitwidth // 8, 1)
    return size, size


def _extension_of(core):
    return _extensions.get(core)


def make_attribute_wrapper(type_class, struct_attr, python_attr):
    """``value.python_attr`` reads member ``struct_attr`` of a value of the class's types (the same name needs
    nothing: members are its record's fields)."""
    if struct_attr == python_attr:
        return
    scope = {}
    exec(f"def get(value):\n    return value.{struct_attr}\n", scope)  # noqa: S102  (a generated getter)

    @overload_attribute(type_class, python_attr)
    def wrapper(value):
        return scope["get"]

    wrapper._cache_key = (f"{type_class.__module__}.{type_class.__qualname__}.{python_attr} reads {struct_attr}",)

    return wrapper


def type_callable(cls):
    """``@type_callable(PyClass)`` on ``def typer(context): return lambda *argtypes: the type``: calling the class
    in CUDA code builds a value of the type the typer gives, its members from the arguments in order."""

    def register(make_typer):
        typer = make_typer(None)

        def constructor(*argtypes):
            t = typer(*argtypes)
            if t is None:
                return None
            record, members = _layout(t)
            if len(members) != len(argtypes):
                return None
            scope = {"Record": record}
            params = ", ".join(f"a{i}" for i in range(len(argtypes)))
            exec(f"def construct({params}):\n    return Record({params})\n", scope)  # noqa: S102
            return scope["construct"]

        constructor._cache_key = (make_typer,)  # (the disk cache keys the library's typer)

        with _lock:
            kept = _constructors.get(id(cls))
            if kept is None or kept[0] is not cls:
                kept = _constructors[id(cls)] = (cls, _Overloads(cls))
            kept[1].typers.append(constructor)
            kept[1]._chosen.clear()
        return make_typer

    return register


def _typeof(value):
    """The C++ type of a value of a class registered with typeof_impl, or None."""
    for cls in type(value).__mro__:
        fn = _typeofs.get(cls)
        if fn is not None:
            t = fn(value, None)
            return None if t is None else _core_type(t)
    return None


def _constant(value):
    """(record type, bytes) of a global whose class has a typeof_impl (a library type's constant), else None."""
    record = _typeof(value) if _typeofs else None
    if record is None or record.kind != "record":
        return None
    return record, _record_value(value, record).tobytes()


_source.extension_constant = _constant


def _record_value(value, record):
    """A library type's Python value as numpy's record of its members (a kernel argument): each member read from the
    attribute of its name."""
    import numpy as np

    from cujit._typeof import record_dtype

    out = np.zeros(1, record_dtype(record))[0]
    for name in out.dtype.names:
        if not hasattr(value, name):
            raise TypeError(
                f"{type(value).__qualname__} object as a {_extension_of(record)} value: it has no attribute {name!r} "
                "(a value is passed as the record of its data model's members, read by name)"
            )
        out[name] = getattr(value, name)
    return out


# numba's IR-level extension API: cujit compiles Python, not llvmlite builders (numba-cuda-mlir drops it too).
_IR_LEVEL = {"intrinsic", "lower_builtin", "lower_cast", "lower_getattr", "lower_setattr", "BaseContext"}
# Python-level pieces cujit does not have yet.
_NOT_YET = {
    "overload_classmethod",
    "box",
    "unbox",
    "NativeValue",
}


def __getattr__(name):
    if name in _IR_LEVEL:
        raise NotImplementedError(
            f"numba's {name} is its IR-level extension API (llvmlite builders), which cujit does not have: write "
            "the implementation in Python with cujit.extending.overload or register_jitable, or in CUDA C++ with "
            "cuda.declare_device"
        )
    if name in _NOT_YET:
        raise NotImplementedError(
            f"numba's extending.{name} is not in cujit yet: cujit.extending has overload (operators too), "
            "overload_method, overload_attribute, overload_declared, register_jitable, typeof_impl, type_callable, "
            "register_model and make_attribute_wrapper (docs/extending.md)"
        )
    raise AttributeError(f"module 'cujit.extending' has no attribute {name!r}")
