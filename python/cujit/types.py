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
    "short ushort int_ uint long_ ulong longlong ulonglong float_ double half void none voidptr"
).split()

_names = {}
for _name in _SCALARS:
    _t = _core.types.lookup(_name)
    if _t is not None:
        globals()[_name] = _t
        _names[_name] = _t
del _name, _t


def CPointer(dtype):
    """A pointer to ``dtype`` (``float32*``)."""
    return _core.types.cpointer(dtype)


def UniTuple(dtype, count):
    """A homogeneous tuple of ``count`` elements."""
    return _core.types.uni_tuple(dtype, count)


def Tuple(elements):
    """A heterogeneous tuple; homogeneous element lists give a UniTuple, as in numba."""
    return _core.types.tuple(list(elements))


def Array(dtype, ndim, layout, readonly=False, aligned=True):
    """An array type, e.g. ``Array(float32, 2, "C")`` (same as ``float32[:, ::1]``)."""
    return _core.types.array(dtype, ndim, layout, readonly, aligned)


def is_type(obj):
    return isinstance(obj, Type)


__all__ = sorted(_names) + ["CPointer", "UniTuple", "Tuple", "Array", "Type", "Signature"]
