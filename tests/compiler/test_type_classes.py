"""numba's type classes in ``cujit.types`` (issue 41): views of the C++ types chosen by kind, so that
``isinstance(t, types.Array)`` and the attributes numba's types have work as in numba; pickling; numba's own type
objects taken where cujit's are (when numba is installed)."""

import pickle

import numpy as np
import pytest

import cujit
from cujit import compiler, cuda, types


def test_isinstance_follows_numbas_hierarchy():
    a = types.float32[:, ::1]
    assert isinstance(a, types.Array) and isinstance(a, types.Buffer) and isinstance(a, types.ArrayCompatible)
    assert isinstance(a, types.Type) and not isinstance(a, types.Number) and not isinstance(a, types.BaseTuple)
    for t, cls in [
        (types.int32, types.Integer),
        (types.uint8, types.Integer),
        (types.float64, types.Float),
        (types.complex64, types.Complex),
        (types.boolean, types.Boolean),
        (types.none, types.NoneType),
        (types.voidptr, types.RawPointer),
        (types.bfloat16, types.Number),
    ]:
        assert isinstance(t, cls) and isinstance(t, types.Type), (t, cls)
    assert isinstance(types.int32, types.Number) and isinstance(types.int32, types.Hashable)
    assert not isinstance(types.int32, types.Float) and not isinstance(types.float32, types.Integer)
    literal = types.IntegerLiteral(3)
    assert isinstance(literal, types.Literal) and isinstance(literal, types.Integer) and literal.literal_value == 3
    pair = types.UniTuple(types.int32, 2)
    mixed = types.Tuple([types.int32, types.float64])
    assert isinstance(pair, types.UniTuple) and isinstance(pair, types.BaseTuple) and not isinstance(pair, types.Tuple)
    assert isinstance(mixed, types.Tuple) and isinstance(mixed, types.BaseAnonymousTuple)
    assert types.Tuple([types.int32, types.int32]) is pair  # homogeneous: a UniTuple, as numba's
    assert isinstance(types.CPointer(types.int8), types.CPointer)
    assert not isinstance(3, types.Type) and not isinstance("int32", types.Integer)
    assert issubclass(types.Array, types.Buffer) and issubclass(types.IntegerLiteral, types.Integer)


def test_classes_cujit_has_no_types_of_are_still_classes():
    for cls in (types.NumberClass, types.Function, types.Dispatcher, types.NPDatetime, types.EnumMember):
        assert not isinstance(types.int32, cls)
    with pytest.raises(NotImplementedError, match="EnumMember"):
        types.EnumMember(int, types.int64)


def test_values_that_are_types_or_functions():
    number, function = types.NumberClass(types.uint32), types.Function("cuda.atomic.add")
    assert str(number) == "class(uint32)" and number.instance_type is types.uint32
    assert isinstance(number, types.NumberClass) and isinstance(number, types.Opaque)
    assert str(function) == "Function(cuda.atomic.add)" and isinstance(function, types.Function)
    assert types.NumberClass(types.uint32) is number and not isinstance(number, types.Function)
    with pytest.raises(TypeError, match="number type"):
        types.NumberClass(types.float32[:])


def test_range_types_as_numbas():
    state, iterator = types.range_state32_type, types.range_iter32_type
    assert isinstance(state, types.RangeType) and state.dtype is types.int32 and str(state) == "range_state_int32"
    assert (
        types.RangeType(types.int64) is types.range_state64_type
        and types.unsigned_range_state64_type.dtype is types.uint64
    )
    assert isinstance(iterator, types.RangeIteratorType) and str(iterator) == "range_iter_int32"
    assert not isinstance(iterator, types.RangeType) and not isinstance(state, types.RangeIteratorType)
    assert types.RangeIteratorType(types.uint64) is types.unsigned_range_iter64_type
    with pytest.raises(TypeError, match="int32, int64 or uint64"):
        types.RangeType(types.float32)


def test_typing_only_types_by_name():
    assert types.Omitted(None) is types.Omitted(None) and str(types.Omitted(1000)) == "omitted(default=1000)"
    assert isinstance(types.Omitted(None), types.Omitted) and not isinstance(types.ffi, types.Omitted)
    assert str(types.NPDatetime("ns")) == "datetime64[ns]" and isinstance(types.NPDatetime("ns"), types.NPDatetime)
    assert str(types.NPTimedelta("")) == "timedelta64[]" and not isinstance(types.NPTimedelta("s"), types.NPDatetime)
    with pytest.raises(ValueError, match="time units"):
        types.NPDatetime("fortnight")


def test_array_attributes_as_numbas():
    a = types.Array(types.float32, 2, "C")
    assert a is types.float32[:, ::1]
    assert (a.dtype, a.ndim, a.layout, a.mutable, a.aligned) == (types.float32, 2, "C", True, True)
    assert a.copy(layout="A") is types.float32[:, :] and a.copy(dtype=types.int8).dtype is types.int8
    assert a.copy(readonly=True).mutable is False
    assert repr(a) == str(a) == "array(float32, 2d, C)" and a.key == "array(float32, 2d, C)"
    assert hash(a) == hash(types.float32[:, ::1]) and a == types.float32[:, ::1] and a != types.float32[:, :]


def test_scalar_and_tuple_attributes():
    assert (types.int16.bitwidth, types.int16.signed, types.uint16.signed, types.int16.name) == (
        16,
        True,
        False,
        "int16",
    )
    assert types.complex128.underlying_float is types.float64
    pair = types.UniTuple(types.int32, 3)
    assert (pair.dtype, pair.count, list(pair.types)) == (types.int32, 3, [types.int32] * 3)
    with pytest.raises(AttributeError, match="no attribute 'dtype'"):
        types.int32.dtype
    with pytest.raises(AttributeError):
        types.float32.underlying_float


def test_record_attributes():
    dtype = np.dtype([("x", np.float32), ("y", np.int32, (3,))])
    rec = cujit.from_dtype(dtype)
    assert isinstance(rec, types.Record) and rec.size == 16
    assert list(rec.fields) == ["x", "y"] and rec.fields["x"] == (types.float32, 0) and rec.fields["y"][1] == 4
    assert rec.typeof("x") is types.float32 and isinstance(rec.typeof("y"), types.NestedArray)
    assert rec.dtype == dtype
    with pytest.raises(KeyError):
        rec.typeof("z")


@pytest.mark.parametrize(
    "make",
    [
        lambda: types.float32[:, ::1],
        lambda: types.Array(types.int8, 3, "F", readonly=True),
        lambda: types.UniTuple(types.int32, 4),
        lambda: types.Tuple([types.int32, types.float64[:]]),
        lambda: types.CPointer(types.uint8),
        lambda: types.IntegerLiteral(7),
        lambda: cujit.from_dtype(np.dtype([("x", np.float32), ("y", np.int32, (3,))])),
        lambda: types.complex64,
        lambda: types.none,
        lambda: types.range_state64_type,
        lambda: types.range_iter32_type,
        lambda: types.NPDatetime("ms"),
        lambda: types.NumberClass(types.int8),
        lambda: types.Function("math.sqrt"),
    ],
)
def test_types_pickle_to_themselves(make):
    t = make()
    assert pickle.loads(pickle.dumps(t)) is t


def test_vector_types_are_type_objects():
    assert isinstance(types.float32x4, types.VectorType) and types.float32x4.name == "float32x4"
    assert isinstance(types.uint8x2, types.Type) and not isinstance(types.uint8x2, types.Number)
    assert pickle.loads(pickle.dumps(types.int16x3)) is types.int16x3


def test_grid_group_ffi_and_deferred_type():
    assert isinstance(cuda.grid_group, cuda.GridGroup) and isinstance(cuda.grid_group, types.Opaque)
    assert cuda.GridGroup() is cuda.grid_group and not isinstance(cuda.ffi, types.GridGroup)
    assert str(cuda.ffi) == "ffi" and pickle.loads(pickle.dumps(cuda.grid_group)) is cuda.grid_group
    with pytest.raises(NotImplementedError, match="DeferredType"):
        cuda.deferred_type()


def test_none_type_makes_none():
    assert types.NoneType("none") is types.none


def test_domains():
    assert types.int32 in types.integer_domain and types.uint64 in types.unsigned_domain
    assert types.float32 in types.real_domain and types.complex64 in types.number_domain
    assert types.float32 not in types.integer_domain


# ---- numba's own type objects -----------------------------------------------------------------------------------


@pytest.fixture
def nt():
    numba = pytest.importorskip("numba")
    return numba.types


def test_numba_types_convert(nt):
    numba = pytest.importorskip("numba")
    assert types.from_numba(nt.float32[:, ::1]) is types.float32[:, ::1]
    assert types.from_numba(nt.UniTuple(nt.int32, 2)) is types.UniTuple(types.int32, 2)
    assert types.from_numba(nt.Tuple([nt.int32, nt.float64])) is types.Tuple([types.int32, types.float64])
    assert types.from_numba(nt.CPointer(nt.int8)) is types.CPointer(types.int8)
    assert types.from_numba(nt.boolean) is types.boolean and types.from_numba(nt.intp) is types.intp
    rec = numba.from_dtype(np.dtype([("x", np.float32), ("y", np.int32)]))
    assert types.from_numba(rec) is cujit.from_dtype(np.dtype([("x", np.float32), ("y", np.int32)]))
    assert types.from_numba(nt.range_state32_type) is types.range_state32_type
    assert types.from_numba(nt.range_iter64_type) is types.range_iter64_type
    assert types.from_numba(nt.NPDatetime("ns")) is types.NPDatetime("ns")
    assert types.from_numba(nt.Omitted(None)) is types.Omitted(None)
    with pytest.raises(TypeError, match="expected a cujit or numba type"):
        types.from_numba(3)


def test_numba_signatures_compile_kernels(nt):
    sig = nt.void(nt.float32[::1], nt.float32)
    assert str(compiler.parse_signature(sig)) == str(compiler.parse_signature("void(float32[::1], float32)"))

    @cuda.jit(sig)
    def scale(x, a):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = nt.float32(a) * x[i]  # a numba type object called in CUDA code

    assert list(scale.overloads) == [(types.float32[::1], types.float32)]
    ptx, _ = cuda.compile_ptx(scale.py_func, [nt.float32[::1], nt.float32])
    assert ".entry" in ptx
    mul = cuda.declare_device("mul", nt.float32(nt.float32, nt.float32))
    assert "float32(float32, float32)" in repr(mul)
