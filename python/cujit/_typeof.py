"""numba's typeof for launch arguments (docs/numba_abi.md: typeof of launch arguments): the cujit type of a Python
value, used to pick (or compile) a kernel specialisation."""

import sys

from cujit import _core
from cujit.arg_hints import ArgHint
from cujit.errors import NumbaValueError, TypingError

_lookup = _core.types.lookup
_DTYPE_NAMES = {"bool": "boolean"}


def check_dtype(dtype):
    """Refuses, as numba does, a dtype whose bytes a kernel would misread: byte order other than the machine's
    (anywhere inside it: a record's field, a subarray's base) and Python objects."""
    problem = _dtype_problem(dtype)
    if problem is not None:
        raise NumbaValueError(f"Unsupported array dtype: {dtype} ({problem})")


def _dtype_problem(dtype):
    if dtype.fields is not None:
        for name, info in dtype.fields.items():
            inner = _dtype_problem(info[0])
            if inner is not None:
                return f"field '{name}': {inner}"
        return None
    if dtype.subdtype is not None:
        return _dtype_problem(dtype.subdtype[0])
    if dtype.hasobject:
        return "Python objects cannot be read by a kernel"
    if not dtype.isnative:
        return (
            "its byte order is not this machine's, so a kernel would read its values wrong: convert it with "
            "ary.astype(ary.dtype.newbyteorder('='))"
        )
    return None


def dtype_type(dtype):
    """numba's from_dtype: the cujit type of a numpy dtype, structured dtypes included (a dtype check_dtype
    refuses is a NumbaValueError)."""
    check_dtype(dtype)  # the whole dtype, once: its parts are typed unchecked
    return _dtype_type(dtype)


def _dtype_type(dtype):
    if dtype.fields is not None:
        return _record_type(dtype)
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return _core.types.nested_array(_dtype_type(base), list(shape))
    if dtype.kind == "S" and dtype.itemsize > 0:  # numba's CharSeq and UnicodeCharSeq
        return _core.types.charseq(dtype.itemsize)
    if dtype.kind == "U" and dtype.itemsize > 0:
        return _core.types.unicode_charseq(dtype.itemsize // 4)
    t = _lookup(_DTYPE_NAMES.get(dtype.name, dtype.name))
    if t is None:
        raise TypingError(f"unsupported array dtype {dtype} for a CUDA kernel argument")
    return t


def from_dtype(dtype):
    """numba.from_dtype: the cujit type of a numpy dtype (``from_dtype(np.dtype([('x', 'f4')]))[:]`` is an array
    type of records)."""
    import numpy  # compiling alone never needs numpy: only this call and launches with arrays do

    return dtype_type(numpy.dtype(dtype))


def _record_type(dtype):
    # As numba: a titled field is listed under its name and under its title, both carrying the title.
    fields = [
        (name, _dtype_type(info[0]), info[1], info[2] if len(info) > 2 else "") for name, info in dtype.fields.items()
    ]
    return _core.types.record(fields, dtype.itemsize, bool(dtype.isalignedstruct))


def record_dtype(record):
    """numba's Record.dtype: the numpy dtype of a record type (its fields at their offsets, its size)."""
    import numpy

    names, formats, offsets = [], [], []
    for name, (t, offset) in record.fields.items():
        names.append(name)
        formats.append(_numpy_format(t))
        offsets.append(offset)
    return numpy.dtype(
        {"names": names, "formats": formats, "offsets": offsets, "itemsize": record.size}, align=record.aligned
    )


def _numpy_format(t):
    if t.kind == "record":
        return record_dtype(t)
    if t.kind == "nestedarray":
        return (_numpy_format(t.dtype), tuple(t.shape))
    return {"boolean": "bool"}.get(t.name, t.name)


def array_type(dtype, shape, strides, readonly):
    np = sys.modules["numpy"]
    dtype = np.dtype(dtype)
    layout = _core.types.array_layout(shape, strides, dtype.itemsize)
    return _core.types.array(dtype_type(dtype), len(shape), layout, readonly)


def typeof(value):
    """The cujit type of a kernel argument, following numba's typeof."""
    scalar = _core.launch.scalar_type(value)  # Python and numpy scalars: the launch path's one rule
    if scalar is not None:
        return scalar
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return array_type(value.dtype, value.shape, value.strides, not value.flags.writeable)
        if isinstance(value, np.void) and value.dtype.fields is not None:
            return from_dtype(value.dtype)  # passed by reference to a copy, copied back (cudadrv/launch.py)
        if isinstance(value, np.generic):
            return dtype_type(value.dtype)
    known = getattr(value, "_numba_type_", None)
    if known is not None:
        return known
    if isinstance(value, ArgHint):
        return typeof(value.value)
    if isinstance(value, tuple):
        return _core.types.tuple([typeof(v) for v in value])
    fast = _core.launch.array_type(value)  # CAI and DLPack objects, typed as the launch path types them
    if fast is not None:
        return fast
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:  # a dtype the launch path leaves to Python: records (their fields are in descr)
        shape = tuple(cai["shape"])
        readonly = bool(cai["data"][1])
        dtype = cai["typestr"]
        descr = cai.get("descr")
        if descr and dtype.lstrip("|<>=").startswith("V") and any(field[0] for field in descr):
            dtype = sys.modules["numpy"].dtype(descr)  # a structured dtype: its fields are in descr
        return array_type(dtype, shape, cai.get("strides"), readonly)
    pointer = _ctypes_pointer_type(value)
    if pointer is not None:
        return pointer
    extending = sys.modules.get("cujit.extending")
    extension = extending._typeof(value) if extending is not None else None
    if extension is not None:  # a value of a library's type (typeof_impl): the record of its members
        return extension
    raise TypingError(f"cannot pass a value of type {type(value).__name__} to a CUDA kernel")


def _ctypes_pointer_type(value):
    """numba's typeof of a ctypes pointer: ``c_void_p`` is ``void*``, ``POINTER(c_double)`` is ``float64*`` (a raw
    device address passed as a kernel argument, as cuda.compute passes an operator's state)."""
    ct = sys.modules.get("ctypes")
    if ct is None:
        return None
    if isinstance(value, ct.c_void_p):
        return _core.types.lookup("voidptr")
    if isinstance(value, ct._Pointer):
        names = {
            ct.c_int8: "int8", ct.c_int16: "int16", ct.c_int32: "int32", ct.c_int64: "int64",
            ct.c_uint8: "uint8", ct.c_uint16: "uint16", ct.c_uint32: "uint32", ct.c_uint64: "uint64",
            ct.c_float: "float32", ct.c_double: "float64", ct.c_bool: "boolean",
        }  # fmt: skip
        name = names.get(value._type_)
        if name is not None:
            return _core.types.cpointer(_core.types.lookup(name))
    return None
