"""numba's type objects (``int32``, ``float32[::1]``, ``UniTuple(int32, 2)``...) and numba's type classes.

Types are interned C++ objects (``_core.Type``): equal types are the same object, and the C++ type is the only
truth. The classes here (``Array``, ``Integer``, ``UniTuple``, ``Record``...) are numba's hierarchy as views chosen by
a type's kind, one table (``_KINDS``): ``isinstance(float32[:], types.Array)``, ``issubclass(types.Array,
types.Buffer)`` and ``isinstance(int32, types.Number)`` hold as in numba, and calling a class builds a type
(``Array(float32, 2, "C")``, ``UniTuple(int32, 2)``). Calling a type builds a Signature (``int32(int32, int32)``);
subscripting a scalar type builds an array type (``float32[:, ::1]``). Types pickle (by structure) and, when numba is
installed, numba's own type objects convert (``from_numba``).
"""

import sys

from cujit import _core

Signature = _core.Signature
_Type = _core.Type

_SCALARS = (
    "boolean bool_ b1 int8 int16 int32 int64 uint8 uint16 uint32 uint64 i1 i2 i4 i8 u1 u2 u4 u8 "
    "float16 float32 float64 f2 f4 f8 complex64 complex128 c8 c16 intp uintp intc uintc byte "
    "short ushort int_ uint long_ ulong longlong ulonglong float_ double half void none voidptr bfloat16"
).split()

_names = {}
for _name in _SCALARS:
    _t = _core.types.lookup(_name)
    if _t is not None:
        globals()[_name] = _t
        _names[_name] = _t
del _name, _t


#: numba-cuda's vector types as type objects (``types.float32x4``; ``cuda.float32x4`` is the stub called in kernels).
for _base in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"):
    for _n in (1, 2, 3, 4):
        globals()[f"{_base}x{_n}"] = _core.parse_type(f"{_base}x{_n}")
del _base, _n

#: numba-cuda's Dim3, the type of ``cuda.threadIdx``, ``blockIdx``, ``blockDim`` and ``gridDim`` (``x``, ``y``,
#: ``z`` of int32). numba-cuda has a class ``Dim3`` and its instance ``dim3``; here both names are the type.
dim3 = Dim3 = _core.parse_type("dim3")


def _check_type(constructor, argument, value):
    if not isinstance(value, _Type):
        raise TypeError(f"{constructor}: {argument} must be a cujit type (int32, float64[:], ...), got {value!r}")


def _check_count(constructor, argument, value, limit):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{constructor}: {argument} must be an int, got {value!r}")
    if not 0 <= value <= limit:
        raise ValueError(f"{constructor}: {argument} must be between 0 and {limit}, got {value}")


#: The most dimensions an array type may have (NumPy 2's limit) and the most elements of a UniTuple.
MAX_NDIM = 64
MAX_TUPLE_COUNT = (1 << 31) - 1


# ---- numba's type classes, as views of the C++ types by kind -------------------------------------------------


class _TypeClass(type):
    """The metaclass of numba's type classes here: an instance is a ``_core.Type`` whose kind the class or one of
    its subclasses covers; calling the class builds a type (its ``_make``)."""

    def __instancecheck__(cls, obj):
        if cls.__module__ != __name__:  # a type class a library derives (cujit.extending): its instances, and the
            if not isinstance(obj, _Type):  # C++ types made for them
                return type.__instancecheck__(cls, obj)
            extension = _extension_of(obj)
            return extension is not None and type.__instancecheck__(cls, extension)
        if not isinstance(obj, _Type):
            return type.__instancecheck__(cls, obj) and cls is Type
        named = cls.__dict__.get("_names")  # a class of opaque types chosen by name (GridGroup), or by its start
        if named is not None:
            return obj.kind == "opaque" and (
                obj.name in named or obj.name.startswith(cls.__dict__.get("_starts", named))
            )
        return cls is Type or obj.kind in _TypeClass._covered(cls)

    def __call__(cls, *args, **kwargs):
        if cls.__module__ != __name__:  # a library's type class: an instance of it (cujit.extending)
            return type.__call__(cls, *args, **kwargs)
        make = cls.__dict__.get("_make")
        if make is None:
            raise NotImplementedError(
                f"types.{cls.__name__}(...): cujit does not make {cls.__name__} types (its type objects are numba's "
                "scalars, arrays, tuples, records, pointers and vector types)"
            )
        return make.__func__(*args, **kwargs)

    def _covered(cls):
        covered = cls.__dict__.get("_all_kinds")
        if covered is None:
            covered = set(cls.__dict__.get("_kinds", ()))
            for sub in cls.__subclasses__():
                covered |= _TypeClass._covered(sub)
            covered = frozenset(covered)
            cls._all_kinds = covered
        return covered


class Type(metaclass=_TypeClass):
    """The base of every type: every ``_core.Type`` is one. A library derives its own type classes from it, as
    numba's extension API has them (``class IntervalType(types.Type)``, ``super().__init__(name="Interval")``): their
    instances are Python objects, laid out in CUDA code by the data model registered for the class
    (cujit.extending)."""

    def __init__(self, name=None, *args, **kwargs):
        self.name = name if name is not None else type(self).__name__

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name

    def __call__(self, *args):
        """``interval_type(float64, float64)``: the signature returning this type (a declare_device's, a jit's)."""
        return _core.Signature(signature_type(self), [signature_type(a) for a in args])

    def __getitem__(self, key):
        """``interval_type[::1]``: an array of this type's values (records of its data model)."""
        return signature_type(self)[key]


def _extension_of(t):
    """The library type a C++ type was made for (cujit.extending), or None."""
    extending = sys.modules.get("cujit.extending")
    return extending._extension_of(t) if extending is not None else None


def signature_type(t):
    """A signature's type as the compiler takes it: a cujit type; numba's, converted (from_numba); a library's type
    (cujit.extending, which made it), the record of its data model."""
    if isinstance(t, _core.Type):
        return t
    if is_numba_type(t):
        return from_numba(t)
    extending = sys.modules.get("cujit.extending")
    if isinstance(t, Type) and extending is not None:
        return extending._core_type(t)
    raise TypeError(f"invalid type in signature: expected a type instance, got {t!r}")


class Dummy(Type):
    pass


class Hashable(Type):
    pass


class Number(Hashable):
    pass


class Integer(Number):
    _kinds = ("integer",)

    @staticmethod
    def _make(name, bitwidth=None, signed=None):
        found = _core.types.lookup(name)
        if found is None or found.kind != "integer":
            raise ValueError(f"types.Integer({name!r}): not an integer type's name")
        return found


class Float(Number):
    _kinds = ("float",)


class Complex(Number):
    _kinds = ("complex",)


class Boolean(Hashable):
    _kinds = ("boolean",)


class Literal(Type):
    pass


class IntegerLiteral(Literal, Integer):
    _kinds = ("integer_literal",)

    @staticmethod
    def _make(value):
        return _core.types.integer_literal(value)


class BooleanLiteral(Literal, Boolean):
    _kinds = ("boolean_literal",)


class StringLiteral(Literal):
    pass


class ArrayCompatible(Type):
    pass


class Buffer(ArrayCompatible):
    pass


class Array(Buffer):
    """An array type, e.g. ``Array(float32, 2, "C")`` (same as ``float32[:, ::1]``)."""

    _kinds = ("array",)

    @staticmethod
    def _make(dtype, ndim, layout, readonly=False, aligned=True, name=None):
        _check_type("Array", "dtype", dtype)
        _check_count("Array", "ndim", ndim, MAX_NDIM)
        if layout not in ("C", "F", "A"):
            raise ValueError(f"Array: layout must be 'C', 'F' or 'A', got {layout!r}")
        return _core.types.array(dtype, ndim, layout, bool(readonly), bool(aligned))


class NestedArray(Array):
    _kinds = ("nestedarray",)


class BaseTuple(Type):
    pass


class BaseAnonymousTuple(BaseTuple):
    pass


class UniTuple(BaseAnonymousTuple):
    """A homogeneous tuple of ``count`` elements."""

    _kinds = ("unituple",)

    @staticmethod
    def _make(dtype, count):
        _check_type("UniTuple", "dtype", dtype)
        _check_count("UniTuple", "count", count, MAX_TUPLE_COUNT)
        return _core.types.uni_tuple(dtype, count)


class Tuple(BaseAnonymousTuple):
    """A heterogeneous tuple; homogeneous element lists give a UniTuple, as in numba."""

    _kinds = ("tuple",)

    @staticmethod
    def _make(elements):
        elements = list(elements)
        for i, element in enumerate(elements):
            _check_type("Tuple", f"element {i}", element)
        return _core.types.tuple(elements)


class BaseNamedTuple(BaseTuple):
    pass


class NamedUniTuple(BaseNamedTuple):
    pass


class NamedTuple(BaseNamedTuple):
    pass


class Opaque(Dummy):
    _kinds = ("opaque",)


class GridGroup(Opaque):
    """numba-cuda's type of ``cuda.cg.this_grid()`` (its one instance: ``grid_group``)."""

    _names = ("GridGroup",)

    @staticmethod
    def _make():
        return _core.types.opaque("GridGroup")


class DeferredType(Type):
    """numba's type defined later (recursive jitclass types): cujit has none."""


deferred_type = DeferredType


class NoneType(Opaque):
    _kinds = ("none",)

    @staticmethod
    def _make(name="none"):
        return _core.types.lookup("none")  # numba's NoneType("none") is its one instance, types.none


class Optional(Type):
    _kinds = ("optional",)


class Omitted(Opaque):
    """numba's type of an argument left out for its default (``Omitted(None)``), named ``omitted(default=...)``."""

    _names = ()
    _starts = ("omitted(default=",)

    @staticmethod
    def _make(value):
        return _core.types.opaque(f"omitted(default={value!r})")


class Record(Type):
    _kinds = ("record",)


class CPointer(Type):
    """A pointer to ``dtype`` (``float32*``)."""

    _kinds = ("cpointer",)

    @staticmethod
    def _make(dtype, addrspace=None):
        if type(dtype).__name__ == "VectorType" and hasattr(dtype, "num_elements"):  # cuda.float32x2: its type
            dtype = _core.parse_type(dtype.__name__)
        _check_type("CPointer", "dtype", dtype)
        return _core.types.cpointer(dtype)


class RawPointer(Opaque):
    _kinds = ("voidptr",)


class RangeType(Type):
    """A ``range``'s state: ``RangeType(int32)`` is ``range_state32_type`` (named ``range_state_int32``)."""

    _kinds = ("range",)

    @staticmethod
    def _make(dtype):
        return _core.parse_type(_RANGE_NAMES[_range_index("RangeType", dtype).name] + "_type")


class RangeIteratorType(Opaque):
    """An iterator over a range (``range_iter32_type``, named ``range_iter_int32``): typing only."""

    _names = ("range_iter_int32", "range_iter_int64", "range_iter_uint64")

    @staticmethod
    def _make(dtype):
        return _core.types.opaque(f"range_iter_{_range_index('RangeIteratorType', dtype).name}")


_RANGE_NAMES = {"int32": "range_state32", "int64": "range_state64", "uint64": "unsigned_range_state64"}


def _range_index(constructor, dtype):
    if not isinstance(dtype, _Type) or dtype.name not in _RANGE_NAMES:
        raise TypeError(f"{constructor}: the index type must be int32, int64 or uint64, got {dtype!r}")
    return dtype


class NumberClass(Opaque):
    """A number type used as a value (``uint32`` passed to a device function): ``NumberClass(uint32)``, named
    ``class(uint32)``; ``instance_type`` is the number type."""

    _kinds = ("number_class",)

    @staticmethod
    def _make(instance_type):
        _check_type("NumberClass", "instance_type", instance_type)
        return _core.types.number_class(instance_type)


class Function(Type):
    """A builtin or intrinsic function used as a value (``cuda.atomic.add`` passed to a device function), named
    ``Function(cuda.atomic.add)``; ``Function("cuda.atomic.add")`` builds it from the path."""

    _kinds = ("function",)

    @staticmethod
    def _make(path):
        if not isinstance(path, str):
            raise TypeError(f"Function: the function's path must be a string (cuda.atomic.add), got {path!r}")
        return _core.types.function_value(path)


class Dispatcher(Type):
    """A @cuda.jit device function used as a value (passed to another device function): made by the compiler."""

    _kinds = ("dispatcher",)


class EnumMember(Type):
    pass


class IntEnumMember(EnumMember):
    pass


class CharSeq(Type):
    """NumPy's ``S<n>`` (``CharSeq(n)``, named ``[char x n]``): arrays of it in kernels; ``len``, comparisons and
    stores of its elements."""

    _kinds = ("charseq",)

    @staticmethod
    def _make(count):
        _check_count("CharSeq", "count", count, 1 << 24)
        return _core.types.charseq(count)


class UnicodeCharSeq(Type):
    """NumPy's ``U<n>`` (``UnicodeCharSeq(n)``, named ``[unichr x n]``)."""

    _kinds = ("unicode_charseq",)

    @staticmethod
    def _make(count):
        _check_count("UnicodeCharSeq", "count", count, 1 << 24)
        return _core.types.unicode_charseq(count)


class NPDatetime(Type):
    """NumPy's ``datetime64`` of a unit (``NPDatetime("ns")``, named ``datetime64[ns]``): arrays and scalars of it
    in kernels, its arithmetic and comparisons with numba's rules."""

    _kinds = ("datetime",)

    @staticmethod
    def _make(unit):
        return _core.types.datetime64(_time_unit("NPDatetime", unit))


class NPTimedelta(Type):
    """NumPy's ``timedelta64`` of a unit (``NPTimedelta("s")``, named ``timedelta64[s]``)."""

    _kinds = ("timedelta",)

    @staticmethod
    def _make(unit):
        return _core.types.timedelta64(_time_unit("NPTimedelta", unit))


_TIME_UNITS = ("", "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")


def _time_unit(constructor, unit):
    if unit not in _TIME_UNITS:
        raise ValueError(f"{constructor}: {unit!r} is not one of NumPy's time units {_TIME_UNITS[1:]}")
    return unit


class Bfloat16(Number):
    """numba-cuda's bfloat16 (``__nv_bfloat16``)."""

    _kinds = ("bfloat16",)


class FP8(Number):
    """numba-cuda's fp8 scalars (``fp8_e4m3``, ``fp8_e5m2``, ``fp8_e8m0``)."""

    _kinds = ("fp8",)


class FP8x(Type):
    """numba-cuda's packed fp8 values (``fp8x2_e4m3``...)."""

    _kinds = ("fp8packed",)


class VectorType(Type):
    """numba-cuda's vector types (``float32x4``, ``uchar2``...) and Dim3."""

    _kinds = ("vector",)


#: numba-cuda's grid group, and numba's opaque ``ffi`` types (``numba.cuda.ffi`` is one).
grid_group = GridGroup()
ffi = _core.types.opaque("ffi")
ffi_forced_object = _core.types.opaque("ffi_forced_object")

#: numba's range states and range iterators.
range_state32_type = RangeType(_names["int32"])
range_state64_type = RangeType(_names["int64"])
unsigned_range_state64_type = RangeType(_names["uint64"])
range_iter32_type = RangeIteratorType(_names["int32"])
range_iter64_type = RangeIteratorType(_names["int64"])
unsigned_range_iter64_type = RangeIteratorType(_names["uint64"])

#: numba's domains (sets of types).
signed_domain = frozenset(_names[n] for n in ("int8", "int16", "int32", "int64"))
unsigned_domain = frozenset(_names[n] for n in ("uint8", "uint16", "uint32", "uint64"))
integer_domain = signed_domain | unsigned_domain
real_domain = frozenset(_names[n] for n in ("float32", "float64"))
complex_domain = frozenset(_names[n] for n in ("complex64", "complex128"))
number_domain = real_domain | integer_domain | complex_domain

#: numba's ``types.none`` is an instance of NoneType; ``types.intp`` and ``uintp`` the pointer-sized integers.
signed_integers = sorted(signed_domain, key=lambda t: t.bitwidth)
unsigned_integers = sorted(unsigned_domain, key=lambda t: t.bitwidth)
real_types = sorted(real_domain, key=lambda t: t.bitwidth)
complex_types = sorted(complex_domain, key=lambda t: t.bitwidth)
integer_types = signed_integers + unsigned_integers
number_types = integer_types + real_types + complex_types


def is_type(obj):
    return isinstance(obj, _Type)


# ---- pickling: a type rebuilt from its structure -------------------------------------------------------------


def _rebuild(kind, parts):
    return _REBUILD[kind](*parts)


_REBUILD = {
    "named": lambda name: _core.types.lookup(name) or _core.parse_type(name),
    "array": lambda dtype, ndim, layout, readonly, aligned: _core.types.array(dtype, ndim, layout, readonly, aligned),
    "unituple": _core.types.uni_tuple,
    "tuple": lambda elements: _core.types.tuple(list(elements)),
    "cpointer": _core.types.cpointer,
    "integer_literal": _core.types.integer_literal,
    "opaque": _core.types.opaque,
    "record": lambda fields, size, aligned: _core.types.record(list(fields), size, aligned),
    "nestedarray": lambda dtype, shape: _core.types.nested_array(dtype, list(shape)),
}


def _reduce(t):
    kind = t.kind
    if kind == "array":
        return _rebuild, ("array", (t.dtype, t.ndim, t.layout, not t.mutable, t.aligned))
    if kind == "unituple":
        return _rebuild, ("unituple", (t.dtype, t.count))
    if kind == "tuple":
        return _rebuild, ("tuple", (tuple(t.types),))
    if kind == "cpointer":
        return _rebuild, ("cpointer", (t.dtype,))
    if kind == "integer_literal":
        return _rebuild, ("integer_literal", (t.literal_value,))
    if kind == "record":
        fields = [(name, ft, offset, "") for name, (ft, offset) in t.fields.items()]
        return _rebuild, ("record", (fields, t.size, t.aligned))
    if kind == "nestedarray":
        return _rebuild, ("nestedarray", (t.dtype, tuple(t.shape)))
    if kind == "opaque":
        return _rebuild, ("opaque", (t.name,))
    if kind == "range":
        return RangeType, (t.dtype,)
    if kind == "charseq":
        return CharSeq, (t.bitwidth // 8,)
    if kind == "unicode_charseq":
        return UnicodeCharSeq, (t.bitwidth // 32,)
    if kind == "number_class":
        return NumberClass, (t.instance_type,)
    if kind == "function":
        return _core.types.function_value, (t.name[len("Function(") : -1],)
    return _rebuild, ("named", (t.name,))


_Type.__reduce__ = _reduce


# ---- numba's own type objects ----------------------------------------------------------------------------------


_NUMBA_TYPE_MODULES = ("numba.core.types", "numba.np.types", "numba.cuda.types")  # numba's, and numba-cuda's copy


def is_numba_type(obj):
    """Whether ``obj`` is one of numba's (or numba-cuda's) own type objects, which ``from_numba`` converts."""
    return (type(obj).__module__ or "").startswith(_NUMBA_TYPE_MODULES)


def from_numba(t):
    """The cujit type of a numba type object (``numba.types.float32[:]``, ``numba.types.UniTuple(...)``), or ``t``
    itself when it is a cujit type already; TypeError for anything else."""
    if isinstance(t, _Type):
        return t
    if not is_numba_type(t):
        raise TypeError(f"expected a cujit or numba type, got {t!r}")
    name = type(t).__name__
    if name in ("Array", "NestedArray") and hasattr(t, "layout"):
        return _core.types.array(from_numba(t.dtype), t.ndim, t.layout, not t.mutable, bool(t.aligned))
    if name == "UniTuple":
        return _core.types.uni_tuple(from_numba(t.dtype), t.count)
    if name == "Tuple":
        return _core.types.tuple([from_numba(e) for e in t.types])
    if name == "CPointer":
        return _core.types.cpointer(from_numba(t.dtype))
    if name == "RangeType":
        return RangeType(from_numba(t.dtype))
    if name in ("NPDatetime", "NPTimedelta"):
        return _core.types.lookup(str(t))
    if name in ("RangeIteratorType", "Omitted"):  # typing-only types, by their names
        return _core.types.opaque(str(t))
    if name == "Record":  # (an array field is a nested array: its dtype and shape inside the record)

        def field_type(ft):
            if type(ft).__name__ == "NestedArray":
                return _core.types.nested_array(from_numba(ft.dtype), list(ft.shape))
            return from_numba(ft)

        fields = [(name, field_type(field[0]), field[1], "") for name, field in t.fields.items()]
        return _core.types.record(fields, t.size, bool(t.aligned))
    found = _core.types.lookup(str(t))
    if found is not None:
        return found
    try:
        return _core.parse_type(str(t))
    except Exception:  # noqa: BLE001  (named below)
        raise TypeError(f"numba type {t!r} has no cujit counterpart") from None


__all__ = sorted(_names) + ["CPointer", "UniTuple", "Tuple", "Array", "Type", "Signature"]

# numba-cuda's ``numba.cuda.types.types`` (the types module reached through its package; nvmath-python's FFT
# callbacks take their element types from it): cujit's types module itself.
types = sys.modules[__name__]
