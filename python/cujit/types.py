"""numba's type objects (``int32``, ``float32[::1]``, ``UniTuple(int32, 2)``...).

Types are interned C++ objects: equal types are the same object. Calling a type
builds a Signature (``int32(int32, int32)``); subscripting a scalar type builds
an array type (``float32[:, ::1]``).
"""

from cujit import _core

Type = _core.Type
Signature = _core.Signature

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


#: numba-cuda's Dim3, the type of ``cuda.threadIdx``, ``blockIdx``, ``blockDim`` and ``gridDim`` (``x``, ``y``,
#: ``z`` of int32). numba-cuda has a class ``Dim3`` and its instance ``dim3``; here both names are the type.
dim3 = Dim3 = _core.parse_type("dim3")


def _check_type(constructor, argument, value):
    if not isinstance(value, Type):
        raise TypeError(f"{constructor}: {argument} must be a cujit type (int32, float64[:], ...), got {value!r}")


def _check_count(constructor, argument, value, limit):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{constructor}: {argument} must be an int, got {value!r}")
    if not 0 <= value <= limit:
        raise ValueError(f"{constructor}: {argument} must be between 0 and {limit}, got {value}")


#: The most dimensions an array type may have (NumPy 2's limit) and the most elements of a UniTuple.
MAX_NDIM = 64
MAX_TUPLE_COUNT = (1 << 31) - 1


def CPointer(dtype):
    """A pointer to ``dtype`` (``float32*``)."""
    _check_type("CPointer", "dtype", dtype)
    return _core.types.cpointer(dtype)


def UniTuple(dtype, count):
    """A homogeneous tuple of ``count`` elements."""
    _check_type("UniTuple", "dtype", dtype)
    _check_count("UniTuple", "count", count, MAX_TUPLE_COUNT)
    return _core.types.uni_tuple(dtype, count)


def Tuple(elements):
    """A heterogeneous tuple; homogeneous element lists give a UniTuple, as in numba."""
    elements = list(elements)
    for i, element in enumerate(elements):
        _check_type("Tuple", f"element {i}", element)
    return _core.types.tuple(elements)


def Array(dtype, ndim, layout, readonly=False, aligned=True):
    """An array type, e.g. ``Array(float32, 2, "C")`` (same as ``float32[:, ::1]``)."""
    _check_type("Array", "dtype", dtype)
    _check_count("Array", "ndim", ndim, MAX_NDIM)
    if layout not in ("C", "F", "A"):
        raise ValueError(f"Array: layout must be 'C', 'F' or 'A', got {layout!r}")
    return _core.types.array(dtype, ndim, layout, bool(readonly), bool(aligned))


def is_type(obj):
    return isinstance(obj, Type)


__all__ = sorted(_names) + ["CPointer", "UniTuple", "Tuple", "Array", "Type", "Signature"]
