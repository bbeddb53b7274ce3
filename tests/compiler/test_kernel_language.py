"""The CUDA kernel language, compile-only: arrays, views, intrinsics, shared/local/const memory,
atomics, warp shuffles and votes, tuples, complex and float16 arithmetic, and the errors for unsupported uses.

Every kernel is compiled for sm_80 and sm_90 (the ``cc`` fixture); conftest assembles every PTX with ptxas for
its .target. Result types are numba-cuda 0.30.4's, checked against numba itself when these tests were written.
"""

import re

import numpy as np
import pytest

from cujit import cuda, errors
from cujit import (
    Array,
    Tuple,
    UniTuple,
    boolean,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)
from source_lines import source_position

CCS = [(8, 0), (9, 0)]


@pytest.fixture(params=CCS, ids=[f"sm_{a}{b}" for a, b in CCS])
def cc(request):
    return request.param


def kernel_ptx(pyfunc, sig, cc, **kwargs):
    """PTX of `pyfunc` compiled as a kernel; checks the void result and the target."""
    ptx, resty = cuda.compile_ptx(pyfunc, sig, cc=cc, **kwargs)
    assert resty == void, resty
    assert re.search(rf"^\.target\s+sm_{cc[0]}{cc[1]}\b", ptx, re.M), ptx[:400]
    assert ".entry" in ptx
    return ptx


def device_ptx(pyfunc, sig, cc):
    """(PTX, return type) of `pyfunc` compiled as a Numba-ABI device function."""
    ptx, resty = cuda.compile_ptx(pyfunc, sig, device=True, cc=cc)
    assert re.search(rf"^\.target\s+sm_{cc[0]}{cc[1]}\b", ptx, re.M), ptx[:400]
    return ptx, resty


def instructions(ptx, prefix):
    """The PTX instructions (opcode with modifiers) that start with `prefix`, e.g. ``atom.global``."""
    return re.findall(rf"^\s*(?:@!?%p\d+\s+)?({re.escape(prefix)}[\w.]*)", ptx, re.M)


def fn_id(value):
    return getattr(value, "__name__", None)


def type_id(t):
    """A test id for a type without spaces: ``array(float32, 1d, C)`` -> ``array(float32,1d,C)``."""
    return str(t).replace(" x ", "x").replace(" ", "")


# =============================================================================================================
# Arrays
# =============================================================================================================

SCALAR_DTYPES = [
    boolean,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
]


def copy_1d(dst, src):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def getitem_1d(a, i):
    return a[i]


@pytest.mark.parametrize("dtype", SCALAR_DTYPES, ids=type_id)
def test_every_scalar_dtype_as_array_dtype(dtype, cc, prototypes):
    ptx = kernel_ptx(copy_1d, (dtype[::1], dtype[::1]), cc)
    assert prototypes.visible(ptx).params == ["u64"] * 14
    assert instructions(ptx, "ld.global"), "no global load"
    assert instructions(ptx, "st.global"), "no global store"


@pytest.mark.parametrize("dtype", SCALAR_DTYPES, ids=type_id)
def test_element_type_is_the_dtype(dtype, cc):
    _, resty = device_ptx(getitem_1d, (dtype[::1], int64), cc)
    assert resty == dtype


def test_float64_array_loads_are_64_bit(cc):
    ptx = kernel_ptx(copy_1d, (float64[::1], float64[::1]), cc)
    assert instructions(ptx, "ld.global.b64") and instructions(ptx, "st.global.b64")


def test_bool_array_is_one_byte_per_element(cc):
    ptx = kernel_ptx(copy_1d, (boolean[::1], boolean[::1]), cc)
    assert re.search(r"\bld\.global\.(u8|s8|b8)\b", ptx), ptx


# -- dimensions and layouts --------------------------------------------------------------------------------


def scale_1d(a, v):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] * v


def scale_2d(a, v):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] = a[i, j] * v


def scale_3d(a, v):
    i, j, k = cuda.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        a[i, j, k] = a[i, j, k] * v


SCALE = {1: scale_1d, 2: scale_2d, 3: scale_3d}


@pytest.mark.parametrize("layout", ["C", "F", "A"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("dtype", [float32, int64, complex128], ids=type_id)
def test_dims_and_layouts(dtype, ndim, layout, cc, prototypes):
    ptx = kernel_ptx(SCALE[ndim], (Array(dtype, ndim, layout), dtype), cc)
    params = prototypes.visible(ptx).params
    scalar = {"float32": ["f32"], "int64": ["u64"], "complex128": ["f64", "f64"]}[str(dtype)]
    assert params == ["u64"] * (5 + 2 * ndim) + scalar
    assert instructions(ptx, "ld.global") and instructions(ptx, "st.global")


def index_full_2d(a, i, j):
    return a[i, j]


def index_full_3d(a, i, j, k):
    return a[i, j, k]


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_full_indexing_gives_the_dtype(layout, cc):
    assert device_ptx(index_full_2d, (Array(float32, 2, layout), int32, int64), cc)[1] == float32
    assert device_ptx(index_full_3d, (Array(uint16, 3, layout), int64, uint32, int8), cc)[1] == uint16


# -- readonly arrays ---------------------------------------------------------------------------------------


def read_into(r, a):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a[i] + a[0]


def write_readonly(r, a):
    a[0] = r[0]


RO_1D = Array(float32, 1, "C", readonly=True)


def test_reading_a_readonly_array(cc, prototypes):
    ptx = kernel_ptx(read_into, (float32[::1], RO_1D), cc)
    assert prototypes.visible(ptx).params == ["u64"] * 14


def test_readonly_2d_array_reads(cc):
    assert device_ptx(index_full_2d, (Array(float64, 2, "F", readonly=True), int32, int32), cc)[1] == float64


def test_writing_a_readonly_array_is_a_typing_error(cc):
    with pytest.raises(errors.TypingError, match=r"(?i)readonly"):
        cuda.compile_ptx(write_readonly, (float32[::1], RO_1D), cc=cc)


# -- integer indices -----------------------------------------------------------------------------------------


def index_last(a):
    return a[-1]


def index_negative_2d(a):
    return a[-1, -2]


def index_computed_negative(a, i):
    return a[i - 5]


def index_tuple_literal(a, i, j):
    return a[(i, j)]


def index_tuple_variable(a, i, j):
    idx = (i, j)
    return a[idx]


def index_tuple_argument(a, idx):
    return a[idx]


def index_mixed_3d(a, i):
    return a[i, -1, 0]


INDEX_TYPES = [int8, int16, int32, int64, uint8, uint16, uint32, uint64]


@pytest.mark.parametrize("itype", INDEX_TYPES, ids=type_id)
def test_any_integer_index_type(itype, cc):
    assert device_ptx(getitem_1d, (float64[:], itype), cc)[1] == float64


@pytest.mark.parametrize(
    "pyfunc, sig, expected",
    [
        (index_last, (float32[::1],), float32),
        (index_last, (int16[:],), int16),
        (index_negative_2d, (float32[:, :],), float32),
        (index_computed_negative, (complex64[::1], int32), complex64),
        (index_tuple_literal, (float32[:, :], int32, uint64), float32),
        (index_tuple_variable, (float32[:, ::1], int32, int8), float32),
        (index_tuple_argument, (int8[:, :], UniTuple(int64, 2)), int8),
        (index_tuple_argument, (uint32[:, :, ::1], UniTuple(int32, 3)), uint32),
        (index_mixed_3d, (float64[::1, :, :], int64), float64),
    ],
    ids=lambda v: fn_id(v) if callable(v) and not isinstance(v, tuple) else None,
)
def test_index_forms(pyfunc, sig, expected, cc):
    assert device_ptx(pyfunc, sig, cc)[1] == expected


def kernel_negative_store(a, v):
    a[-1] = v


def test_negative_index_store_wraps_around(cc):
    """a[-1] reads the shape to wrap around: the PTX uses shape[0] (param 5)."""
    ptx = kernel_ptx(kernel_negative_store, (float32[::1], float32), cc)
    assert re.search(r"ld\.param\.b64\s+%rd\d+, \[\w+_param_5\]", ptx), "shape[0] not used for a[-1]"


# -- slices and views: numba's layout rules --------------------------------------------------------------------


def _sink_py(v):
    return v.size


sink = None  # a fresh device function per test (the fresh_sink fixture); the view's type is its signature


def view_slice_from(r, a):
    r[0] = sink(a[1:])


def view_slice_upto(r, a):
    r[0] = sink(a[:-1])


def view_slice_range(r, a):
    r[0] = sink(a[1:3])


def view_full_slice(r, a):
    r[0] = sink(a[:])


def view_step(r, a):
    r[0] = sink(a[::2])


def view_reversed(r, a):
    r[0] = sink(a[::-1])


def view_column(r, a):
    r[0] = sink(a[:, 0])


def view_row(r, a):
    r[0] = sink(a[0])


def view_last_row(r, a):
    r[0] = sink(a[-1])


def view_row_slice(r, a):
    r[0] = sink(a[0, :])


def view_row_tail(r, a):
    r[0] = sink(a[0, 1:])


def view_rows_from(r, a):
    r[0] = sink(a[1:, :])


def view_cols_from(r, a):
    r[0] = sink(a[:, 1:])


def view_cols_step(r, a):
    r[0] = sink(a[:, ::2])


def view_rows_step(r, a):
    r[0] = sink(a[::2, :])


def view_plane_column(r, a):
    r[0] = sink(a[:, :, 0])


def view_two_ints(r, a):
    r[0] = sink(a[0, 0])


def view_middle_int(r, a):
    r[0] = sink(a[:, 0, :])


def view_chained(r, a):
    r[0] = sink(a[0][1:])


ARRAYS = {
    "1C": float32[::1],
    "1A": float32[:],
    "2C": float32[:, ::1],
    "2F": float32[::1, :],
    "2A": float32[:, :],
    "3C": float32[:, :, ::1],
    "3F": float32[::1, :, :],
    "ro1C": Array(float32, 1, "C", readonly=True),
    "ro2C": Array(float32, 2, "C", readonly=True),
}


def array_of(key):
    readonly = key.startswith("ro")
    key = key[2:] if readonly else key
    return Array(float32, int(key[0]), key[1], readonly=readonly)


# view function -> {input array: type of the view}, as numba-cuda 0.30.4 types them
VIEW_LAYOUTS = {
    view_slice_from: {
        "1C": "1C",
        "1A": "1A",
        "2C": "2C",
        "2F": "2A",
        "2A": "2A",
        "3C": "3C",
        "3F": "3A",
        "ro1C": "ro1C",
    },
    view_slice_upto: {"1C": "1C", "1A": "1A", "2C": "2C", "2F": "2A", "3C": "3C"},
    view_slice_range: {"1C": "1C", "1A": "1A", "2C": "2C", "2F": "2A", "3F": "3A", "ro1C": "ro1C"},
    view_full_slice: {"1C": "1C", "1A": "1A", "2C": "2C", "2F": "2A", "2A": "2A", "3C": "3C", "3F": "3A"},
    view_step: {"1C": "1A", "1A": "1A", "2C": "2A", "2F": "2A", "3C": "3A", "ro1C": "ro1A"},
    view_reversed: {"1C": "1A", "2C": "2A", "3F": "3A"},
    view_column: {"2C": "1A", "2F": "1F", "2A": "1A", "3C": "2A", "3F": "2A"},
    view_row: {"2C": "1C", "2F": "1A", "2A": "1A", "3C": "2C", "3F": "2A", "ro2C": "ro1C"},
    view_last_row: {"2C": "1C", "2F": "1A", "3C": "2C", "3F": "2A"},
    view_row_slice: {"2C": "1C", "2F": "1A", "2A": "1A", "3C": "2C", "3F": "2A"},
    view_row_tail: {"2C": "1C", "2F": "1A", "2A": "1A", "3C": "2C", "3F": "2A"},
    view_rows_from: {"2C": "2A", "2F": "2A", "2A": "2A", "3C": "3A", "3F": "3A"},
    view_cols_from: {"2C": "2A", "2F": "2A", "2A": "2A", "3C": "3A", "3F": "3A"},
    view_cols_step: {"2C": "2A", "2F": "2A", "3C": "3A"},
    view_rows_step: {"2C": "2A", "2F": "2A", "3C": "3A"},
    view_plane_column: {"3C": "2A", "3F": "2A"},
    view_two_ints: {"3C": "1C", "3F": "1A"},
    view_middle_int: {"3C": "2A", "3F": "2A"},
    view_chained: {"2C": "1C", "2F": "1A", "2A": "1A", "3C": "2C", "3F": "2A"},
}

VIEW_CASES = [
    pytest.param(view, src, dst, id=f"{view.__name__}-{src}")
    for view, table in VIEW_LAYOUTS.items()
    for src, dst in table.items()
]


@pytest.fixture
def fresh_sink(monkeypatch):
    dispatcher = cuda.jit(device=True)(_sink_py)
    monkeypatch.setitem(globals(), "sink", dispatcher)
    return dispatcher


@pytest.mark.parametrize("view, src, dst", VIEW_CASES)
def test_view_type(view, src, dst, cc, fresh_sink):
    kernel_ptx(view, (int64[::1], ARRAYS[src]), cc)
    assert fresh_sink.signatures == [(array_of(dst),)], (
        f"{view.__name__} of {ARRAYS[src]}: got {fresh_sink.signatures}, numba types it {array_of(dst)}"
    )


def view_elements(a):
    return a[1:][0] + a[::2][1] + a[::-1][0]


def view_elements_2d(a):
    return a[0][1] + a[:, 0][1] + a[1:, 1:][0, 0]


def view_shape(a):
    return a[0].shape


def view_size(a):
    return a[1:, ::2].size


@pytest.mark.parametrize(
    "pyfunc, sig, expected",
    [
        (view_elements, (float32[::1],), float32),
        (view_elements, (int64[:],), int64),
        (view_elements_2d, (float64[:, ::1],), float64),
        (view_elements_2d, (float32[::1, :],), float32),
        (view_shape, (float32[:, :, ::1],), UniTuple(int64, 2)),
        (view_shape, (float32[:, ::1],), UniTuple(int64, 1)),
        (view_size, (float32[:, :],), int64),
    ],
    ids=lambda v: fn_id(v) if callable(v) and not isinstance(v, tuple) else None,
)
def test_elements_and_attributes_of_views(pyfunc, sig, expected, cc):
    assert device_ptx(pyfunc, sig, cc)[1] == expected


def store_through_views(a, b, v):
    i = cuda.grid(1)
    a[0][i] = v
    a[:, 0][i] = v
    b[1:][i] = v
    b[::2][i] = v


def test_stores_through_views(cc):
    ptx = kernel_ptx(store_through_views, (float32[:, ::1], float32[::1], float32), cc)
    assert len(instructions(ptx, "st.global.b32")) == 4


def return_view(a):
    return a[1:]


def return_row(a):
    return a[0]


@pytest.mark.parametrize(
    "pyfunc, sig", [(return_view, (float32[::1],)), (return_row, (float32[:, ::1],))], ids=["a[1:]", "a[0]"]
)
def test_returning_a_view_is_rejected(pyfunc, sig, cc):
    """A function returns no array view it made (numba: 'Only accept returning of array passed into the function
    as argument')."""
    with pytest.raises(errors.TypingError, match="Only accept returning of array passed into the function"):
        cuda.compile_ptx(pyfunc, sig, device=True, cc=cc)


def return_argument(a):
    return a


@pytest.mark.parametrize("arytype", [float32[:, ::1], Array(float32, 1, "A", readonly=True), int8[::1, :]], ids=type_id)
def test_returning_an_array_argument(arytype, cc):
    assert device_ptx(return_argument, (arytype,), cc)[1] == arytype


# -- attributes ----------------------------------------------------------------------------------------------


def attr_shape(a):
    return a.shape


def attr_strides(a):
    return a.strides


def attr_size(a):
    return a.size


def attr_ndim(a):
    return a.ndim


def attr_len(a):
    return len(a)


def attr_shape_last(a):
    return a.shape[-1]


def attr_stride_first(a):
    return a.strides[0]


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_array_attributes(ndim, layout, cc):
    ary = Array(float32, ndim, layout)
    assert device_ptx(attr_shape, (ary,), cc)[1] == UniTuple(int64, ndim)
    assert device_ptx(attr_strides, (ary,), cc)[1] == UniTuple(int64, ndim)
    assert device_ptx(attr_size, (ary,), cc)[1] == int64
    assert device_ptx(attr_len, (ary,), cc)[1] == int64
    assert device_ptx(attr_shape_last, (ary,), cc)[1] == int64
    assert device_ptx(attr_stride_first, (ary,), cc)[1] == int64
    assert str(device_ptx(attr_ndim, (ary,), cc)[1]) == f"Literal[int]({ndim})"


def kernel_attributes(r, a):
    n, m = a.shape
    s0, s1 = a.strides
    r[0] = n * m + s0 + s1 + a.size + a.ndim + len(a)


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_attributes_in_a_kernel_read_the_parameters(layout, cc):
    ptx = kernel_ptx(kernel_attributes, (int64[::1], Array(float64, 2, layout)), cc)
    # a's shape and strides are params 12-15 (r takes 0-6, a's meminfo..data 7-11)
    for index in (12, 13, 14, 15):
        assert re.search(rf"\[\w+_param_{index}\]", ptx), f"param {index} of the array is not read"


# -- assignment into elements ---------------------------------------------------------------------------------


def set_element(a, v):
    a[0] = v


def set_element_2d(a, i, v):
    a[i, 1] = v
    a[(i, 0)] = v


@pytest.mark.parametrize(
    "arytype, valtype",
    [
        (float32[::1], float32),
        (float32[::1], float64),
        (int32[::1], float64),
        (int8[:], int64),
        (complex64[::1], float64),
        (complex128[::1], complex64),
        (boolean[::1], int32),
        (int32[::1], boolean),
        (float16[::1], float32),
        (float64[:], float16),
        (uint64[::1], int32),
    ],
    ids=type_id,
)
def test_assignment_casts_to_the_dtype(arytype, valtype, cc):
    kernel_ptx(set_element, (arytype, valtype), cc)


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_assignment_2d(layout, cc):
    ptx = kernel_ptx(set_element_2d, (Array(float64, 2, layout), int32, float64), cc)
    assert len(instructions(ptx, "st.global.b64")) == 2


def test_assigning_complex_into_a_real_array_is_rejected(cc):
    """numba has no setitem(array(float32), complex64): dropping the imaginary part silently is wrong."""
    with pytest.raises(errors.TypingError):
        cuda.compile_ptx(set_element, (float32[::1], complex64), cc=cc)


# -- arrays passed on to device functions ----------------------------------------------------------------------


@cuda.jit(device=True)
def dev_store(a, i, v):
    a[i] = v


@cuda.jit(device=True)
def dev_sum3(a):
    return a[0] + a[1] + a[2]


@cuda.jit(device=True)
def dev_get_2d(a, i, j):
    return a[i, j]


@cuda.jit(device=True)
def dev_identity(a):
    return a


@cuda.jit(device=True)
def dev_nested(a, i):
    dev_store(a, i, dev_sum3(a))


def kernel_calls_devices(r, x, m):
    i = cuda.grid(1)
    if i + 3 < x.size:
        dev_store(r, i, dev_sum3(x[i:]) + dev_get_2d(m, i, i))
        b = dev_identity(r)
        b[0] = 1
        dev_nested(r, i)


def test_arrays_passed_to_device_functions(cc):
    ptx = kernel_ptx(kernel_calls_devices, (float32[::1], float32[::1], float32[:, :]), cc)
    assert instructions(ptx, "ld.global.b32") and instructions(ptx, "st.global.b32")
    assert (float32[::1],) in dev_sum3.signatures  # x[i:] of a C array stays C
    assert (float32[:, :], int64, int64) in dev_get_2d.signatures
    assert (float32[::1], int64, float32) in dev_store.signatures
    assert (float32[::1],) in dev_identity.signatures


def kernel_passes_shared_and_local(r):
    s = cuda.shared.array((4, 8), float32)
    loc = cuda.local.array(3, int16)
    r[0] = sink(s) + sink(loc)


def test_shared_and_local_arrays_are_c_contiguous(cc, fresh_sink):
    kernel_ptx(kernel_passes_shared_and_local, (int64[::1],), cc)
    assert fresh_sink.signatures == [(float32[:, ::1],), (int16[::1],)]


# =============================================================================================================
# CUDA intrinsics
# =============================================================================================================


def grid_1():
    return cuda.grid(1)


def grid_2():
    return cuda.grid(2)


def grid_3():
    return cuda.grid(3)


def gridsize_1():
    return cuda.gridsize(1)


def gridsize_2():
    return cuda.gridsize(2)


def gridsize_3():
    return cuda.gridsize(3)


@pytest.mark.parametrize(
    "pyfunc, expected, registers",
    [
        (grid_1, int64, ["%tid.x", "%ntid.x", "%ctaid.x"]),
        (grid_2, UniTuple(int64, 2), ["%tid.y", "%ntid.y", "%ctaid.y"]),
        (grid_3, UniTuple(int64, 3), ["%tid.z", "%ntid.z", "%ctaid.z"]),
        (gridsize_1, int64, ["%ntid.x", "%nctaid.x"]),
        (gridsize_2, UniTuple(int64, 2), ["%ntid.y", "%nctaid.y"]),
        (gridsize_3, UniTuple(int64, 3), ["%ntid.z", "%nctaid.z"]),
    ],
    ids=fn_id,
)
def test_grid_and_gridsize(pyfunc, expected, registers, cc):
    ptx, resty = device_ptx(pyfunc, (), cc)
    assert resty == expected
    for reg in registers:
        assert reg in ptx, f"{reg} not read"


def kernel_grid_2(a):
    x, y = cuda.grid(2)
    w, h = cuda.gridsize(2)
    if x < a.shape[0] and y < a.shape[1]:
        a[x, y] = w * h


def kernel_grid_3(a):
    x, y, z = cuda.grid(3)
    if x < a.shape[0] and y < a.shape[1] and z < a.shape[2]:
        a[x, y, z] = 1


def test_grid_in_kernels(cc):
    kernel_ptx(kernel_grid_2, (int64[:, ::1],), cc)
    assert "%ctaid.z" in kernel_ptx(kernel_grid_3, (int8[:, :, ::1],), cc)


def tid_x():
    return cuda.threadIdx.x


def tid_y():
    return cuda.threadIdx.y


def tid_z():
    return cuda.threadIdx.z


def bid_x():
    return cuda.blockIdx.x


def bid_y():
    return cuda.blockIdx.y


def bid_z():
    return cuda.blockIdx.z


def bdim_x():
    return cuda.blockDim.x


def bdim_y():
    return cuda.blockDim.y


def bdim_z():
    return cuda.blockDim.z


def gdim_x():
    return cuda.gridDim.x


def gdim_y():
    return cuda.gridDim.y


def gdim_z():
    return cuda.gridDim.z


@pytest.mark.parametrize(
    "pyfunc, register",
    [
        (tid_x, "%tid.x"),
        (tid_y, "%tid.y"),
        (tid_z, "%tid.z"),
        (bid_x, "%ctaid.x"),
        (bid_y, "%ctaid.y"),
        (bid_z, "%ctaid.z"),
        (bdim_x, "%ntid.x"),
        (bdim_y, "%ntid.y"),
        (bdim_z, "%ntid.z"),
        (gdim_x, "%nctaid.x"),
        (gdim_y, "%nctaid.y"),
        (gdim_z, "%nctaid.z"),
    ],
    ids=fn_id,
)
def test_dim3_attributes_are_int32(pyfunc, register, cc):
    ptx, resty = device_ptx(pyfunc, (), cc)
    assert resty == int32
    assert register in ptx


def tid_times_bdim():
    return cuda.threadIdx.x * cuda.blockDim.x


def test_dim3_arithmetic_widens_to_int64(cc):
    assert device_ptx(tid_times_bdim, (), cc)[1] == int64


def lane_id():
    return cuda.laneid


def warp_size():
    return cuda.warpsize


def test_laneid_and_warpsize(cc):
    ptx, resty = device_ptx(lane_id, (), cc)
    assert resty == int32 and "%laneid" in ptx
    assert device_ptx(warp_size, (), cc)[1] == int32


# -- barriers and fences --------------------------------------------------------------------------------------


def barrier():
    cuda.syncthreads()


def barrier_count(p):
    return cuda.syncthreads_count(p)


def barrier_and(p):
    return cuda.syncthreads_and(p)


def barrier_or(p):
    return cuda.syncthreads_or(p)


def warp_barrier():
    cuda.syncwarp()


def warp_barrier_mask(mask):
    cuda.syncwarp(mask)


def fence():
    cuda.threadfence()


def fence_block():
    cuda.threadfence_block()


def fence_system():
    cuda.threadfence_system()


@pytest.mark.parametrize(
    "pyfunc, sig, resty, pattern",
    [
        (barrier, (), void, r"\bbar\.sync\s+0;|\bbarrier\.sync\s+0;"),
        (barrier_count, (int32,), int32, r"\bbar\.red\.popc\.u32\b|\bbarrier\.red\.popc\.u32\b"),
        (barrier_and, (int32,), int32, r"\bbar\.red\.and\.pred\b|\bbarrier\.red\.and\.pred\b"),
        (barrier_or, (int32,), int32, r"\bbar\.red\.or\.pred\b|\bbarrier\.red\.or\.pred\b"),
        (warp_barrier, (), void, r"\bbar\.warp\.sync\s+-1;"),
        (warp_barrier_mask, (uint32,), void, r"\bbar\.warp\.sync\b"),
        (warp_barrier_mask, (int32,), void, r"\bbar\.warp\.sync\b"),
        (fence, (), void, r"\bmembar\.gl;|\bfence\.sc\.gpu;"),
        (fence_block, (), void, r"\bmembar\.cta;|\bfence\.sc\.cta;"),
        (fence_system, (), void, r"\bmembar\.sys;|\bfence\.sc\.sys;"),
    ],
    ids=lambda v: fn_id(v) if callable(v) else None,
)
def test_barriers_and_fences(pyfunc, sig, resty, pattern, cc):
    ptx, got = device_ptx(pyfunc, sig, cc)
    assert got == resty
    assert re.search(pattern, ptx), f"{pattern} not in the PTX"


# -- shared memory ------------------------------------------------------------------------------------------


def shared_1d(i):
    s = cuda.shared.array(128, float64)
    s[i] = 1
    cuda.syncthreads()
    return s[i + 1]


def shared_2d_keywords(i):
    s = cuda.shared.array(shape=(4, 8), dtype=float32)
    s[i, 0] = 1
    return s[0, i]


def shared_3d(i):
    s = cuda.shared.array((2, 4, 8), np.int32)
    s[i, 0, 1] = 1
    return s[1, i, 0]


def shared_numpy_dtype(i):
    s = cuda.shared.array(16, dtype=np.uint8)
    s[i] = 3
    return s[i + 1]


def shared_complex(i):
    s = cuda.shared.array(8, complex128)
    s[i] = 1j
    return s[i + 1]


def shared_dynamic(i):
    s = cuda.shared.array(0, dtype=float32)
    s[i] = 1
    return s[i + 1]


def shared_two_arrays(i):
    a = cuda.shared.array(32, int64)
    b = cuda.shared.array(16, int16)
    a[i] = i
    b[i] = 2
    return a[i + 1] + b[i + 1]


SHARED_DECL = r"\.shared\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[{}\];"


@pytest.mark.parametrize(
    "pyfunc, resty, nbytes",
    [
        (shared_1d, float64, [1024]),
        (shared_2d_keywords, float32, [128]),
        (shared_3d, int32, [256]),
        (shared_numpy_dtype, uint8, [16]),
        (shared_complex, complex128, [128]),
        (shared_two_arrays, int64, [256, 32]),
    ],
    ids=fn_id,
)
def test_static_shared_arrays(pyfunc, resty, nbytes, cc):
    ptx, got = device_ptx(pyfunc, (int32,), cc)
    assert got == resty
    for n in nbytes:
        assert re.search(SHARED_DECL.format(n), ptx), f"no {n}-byte .shared declaration"
    assert instructions(ptx, "ld.shared") and instructions(ptx, "st.shared")


def shared_names(ptx):
    return re.findall(r"^\.visible\s+\.shared\s+\.align\s+\d+\s+\.b8\s+([\w$]+)\[\d+\];", ptx, re.M)


def test_shared_arrays_are_module_symbols_unique_to_their_function(cc):
    """As numba-cuda's PTX declares them: `.visible .shared` at module scope, so modules link together; each
    function's names are its own (derived from its mangled name), so two of them never clash in one link."""
    two, _ = device_ptx(shared_two_arrays, (int32,), cc)
    one, _ = device_ptx(shared_1d, (int32,), cc)
    again, _ = device_ptx(shared_1d, (int32,), cc)
    assert len(shared_names(two)) == 2 and len(set(shared_names(two))) == 2, two
    assert len(shared_names(one)) == 1, one
    assert not set(shared_names(one)) & set(shared_names(two))
    assert not set(shared_names(one)) & set(shared_names(again)), "a recompile is a new function (new uid)"


def test_dynamic_shared_array(cc):
    ptx, resty = device_ptx(shared_dynamic, (int32,), cc)
    assert resty == float32
    assert re.search(r"\.extern\s+\.shared\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[\];", ptx), ptx
    assert instructions(ptx, "ld.shared.b32") and instructions(ptx, "st.shared")


def shared_dtype_of_argument(a, v):
    s = cuda.shared.array(32, dtype=a.dtype)
    s[0] = v
    return s[0]


def shared_dtype_string(i):
    s = cuda.shared.array(4, "float32")
    return s[i]


def test_shared_array_dtype_from_an_array(cc):
    """numba types ``a.dtype`` as a DType, which cuda.shared.array accepts."""
    assert device_ptx(shared_dtype_of_argument, (int32[::1], int32), cc)[1] == int32


def test_shared_array_dtype_as_a_string(cc):
    """numba accepts dtype names as strings (``cuda.shared.array(4, "float32")``)."""
    assert device_ptx(shared_dtype_string, (int32,), cc)[1] == float32


# -- local and constant memory --------------------------------------------------------------------------------


def local_1d(i):
    loc = cuda.local.array(8, float64)
    for j in range(8):
        loc[j] = j
    return loc[i]


def local_2d_keywords(i):
    loc = cuda.local.array(shape=(2, 3), dtype=np.int32)
    loc[i, 0] = 1
    return loc[1, i]


def local_3d(i):
    loc = cuda.local.array((2, 2, 2), uint16)
    loc[i, i, i] = 7
    return loc[1, 0, i]


@pytest.mark.parametrize(
    "pyfunc, resty", [(local_1d, float64), (local_2d_keywords, int32), (local_3d, uint16)], ids=fn_id
)
def test_local_arrays(pyfunc, resty, cc):
    ptx, got = device_ptx(pyfunc, (int32,), cc)
    assert got == resty
    # indexed with a runtime value, the array stays in local memory
    assert re.search(r"\.local\s+\.align\s+\d+\s+\.b8\s+\S+\[\d+\];", ptx), "no .local depot"


CONST_F32 = np.arange(16, dtype=np.float32)
CONST_I64_2D = np.ones((4, 4), dtype=np.int64)
CONST_C128 = np.array([1 + 2j, 3 - 4j], dtype=np.complex128)


def const_1d(i):
    c = cuda.const.array_like(CONST_F32)
    return c[i]


def const_2d(i):
    c = cuda.const.array_like(CONST_I64_2D)
    return c[i, 1]


def const_complex(i):
    c = cuda.const.array_like(CONST_C128)
    return c[i]


@pytest.mark.parametrize(
    "pyfunc, resty, nbytes, load",
    [
        (const_1d, float32, 64, "ld.const.b32"),
        (const_2d, int64, 128, "ld.const.b64"),
        (const_complex, complex128, 32, "ld.const"),
    ],
    ids=fn_id,
)
def test_const_array_like(pyfunc, resty, nbytes, load, cc):
    ptx, got = device_ptx(pyfunc, (int32,), cc)
    assert got == resty
    assert re.search(rf"\.const\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[{nbytes}\]\s*=\s*\{{", ptx), (
        f"no initialised {nbytes}-byte .const array"
    )
    assert instructions(ptx, load)


def test_const_array_holds_the_values(cc):
    ptx, _ = device_ptx(const_1d, (int32,), cc)
    body = re.search(r"\.const\s+[^=]+=\s*\{([^}]*)\}", ptx).group(1)
    data = bytes(int(b) for b in body.split(","))
    assert data == CONST_F32.tobytes()


# -- atomics ---------------------------------------------------------------------------------------------------

# One device function per atomic operation (the direct form cuda.atomic.<op>(ary, idx, val)); the kernels call
# the one named by the global ATOMIC and make shared arrays of ATOMIC_DTYPE (globals are read at compile time,
# as numba does; the `atomic` fixture sets both).


@cuda.jit(device=True)
def atomic_add(a, i, v):
    return cuda.atomic.add(a, i, v)


@cuda.jit(device=True)
def atomic_sub(a, i, v):
    return cuda.atomic.sub(a, i, v)


@cuda.jit(device=True)
def atomic_max(a, i, v):
    return cuda.atomic.max(a, i, v)


@cuda.jit(device=True)
def atomic_min(a, i, v):
    return cuda.atomic.min(a, i, v)


@cuda.jit(device=True)
def atomic_exch(a, i, v):
    return cuda.atomic.exch(a, i, v)


@cuda.jit(device=True)
def atomic_and_(a, i, v):
    return cuda.atomic.and_(a, i, v)


@cuda.jit(device=True)
def atomic_or_(a, i, v):
    return cuda.atomic.or_(a, i, v)


@cuda.jit(device=True)
def atomic_xor(a, i, v):
    return cuda.atomic.xor(a, i, v)


@cuda.jit(device=True)
def atomic_inc(a, i, v):
    return cuda.atomic.inc(a, i, v)


@cuda.jit(device=True)
def atomic_dec(a, i, v):
    return cuda.atomic.dec(a, i, v)


ATOMIC_FUNCTIONS = {
    "add": atomic_add,
    "sub": atomic_sub,
    "max": atomic_max,
    "min": atomic_min,
    "exch": atomic_exch,
    "and_": atomic_and_,
    "or_": atomic_or_,
    "xor": atomic_xor,
    "inc": atomic_inc,
    "dec": atomic_dec,
}
ATOMIC = atomic_add
ATOMIC_DTYPE = int32


def atomic_on_global(out, a, v):
    i = cuda.grid(1)
    out[i] = ATOMIC(a, i % 4, v)


def atomic_on_shared(out, v):
    s = cuda.shared.array(32, ATOMIC_DTYPE)
    s[cuda.threadIdx.x] = v
    cuda.syncthreads()
    out[cuda.threadIdx.x] = ATOMIC(s, cuda.threadIdx.x % 4, v)


def atomic_shared_result(v):
    s = cuda.shared.array(32, ATOMIC_DTYPE)
    return ATOMIC(s, 1, v)


def cas_result(a, old, v):
    return cuda.atomic.cas(a, 0, old, v)


def cas_on_global(out, a, old, v):
    i = cuda.grid(1)
    out[i] = cuda.atomic.cas(a, i % 4, old, v)


def cas_on_shared(out, old, v):
    s = cuda.shared.array(32, ATOMIC_DTYPE)
    s[cuda.threadIdx.x] = v
    cuda.syncthreads()
    out[cuda.threadIdx.x] = cuda.atomic.cas(s, cuda.threadIdx.x % 4, old, v)


INTS = [int32, uint32, int64, uint64]
FLOATS = [float32, float64]
_BITS = {int32: 32, uint32: 32, int64: 64, uint64: 64, float32: 32, float64: 64}
_SIGN = {int32: "s", uint32: "u", int64: "s", uint64: "u"}

# op -> (dtypes numba-cuda 0.30.4 accepts, {dtype: regex of the atom instruction after "atom.<space>."})
ATOMICS = {
    "add": (INTS + FLOATS, {**{t: rf"add\.[us]{_BITS[t]}" for t in INTS}, float32: r"add\.f32", float64: r"add\.f64"}),
    "sub": (
        INTS + FLOATS,
        {
            **{t: rf"add\.[us]{_BITS[t]}" for t in INTS},
            float32: r"(add\.f32|cas\.b32)",
            float64: r"(add\.f64|cas\.b64)",
        },
    ),
    "max": (
        INTS + FLOATS,
        {**{t: rf"max\.{_SIGN[t]}{_BITS[t]}" for t in INTS}, float32: r"\w+\.[bf]32", float64: r"\w+\.[bf]64"},
    ),
    "min": (
        INTS + FLOATS,
        {**{t: rf"min\.{_SIGN[t]}{_BITS[t]}" for t in INTS}, float32: r"\w+\.[bf]32", float64: r"\w+\.[bf]64"},
    ),
    "exch": (INTS, {t: rf"exch\.b{_BITS[t]}" for t in INTS}),
    "and_": (INTS, {t: rf"and\.b{_BITS[t]}" for t in INTS}),
    "or_": (INTS, {t: rf"or\.b{_BITS[t]}" for t in INTS}),
    "xor": (INTS, {t: rf"xor\.b{_BITS[t]}" for t in INTS}),
    "inc": ([uint32, uint64], {uint32: r"inc\.u32", uint64: r"\w+\.[bu]64"}),
    "dec": ([uint32, uint64], {uint32: r"dec\.u32", uint64: r"\w+\.[bu]64"}),
}
CAS_DTYPES = INTS
# LLVM 22 writes a compare-and-swap (cuda.atomic.cas and the CAS loops of float max/min, 64-bit inc/dec) with the
# IR's memory order and scope: cujit's atomics are relaxed and device-wide, atom.relaxed.gpu.global.cas (what a
# plain atom.global.cas means); the other atomics stay plain atom.
_SCOPE = r"(?:\.relaxed\.gpu)?"

ATOMIC_CASES = [pytest.param(op, t, id=f"{op}-{t}") for op, (dtypes, _) in ATOMICS.items() for t in dtypes]
ATOMIC_REJECTED = [
    pytest.param(op, t, id=f"{op}-{t}")
    for op, (dtypes, _) in ATOMICS.items()
    for t in INTS + FLOATS + [float16, int8, uint8, int16]
    if t not in dtypes
]


@pytest.fixture
def atomic(monkeypatch):
    def use(op, dtype):
        monkeypatch.setitem(globals(), "ATOMIC", ATOMIC_FUNCTIONS[op])
        monkeypatch.setitem(globals(), "ATOMIC_DTYPE", dtype)
        return ATOMIC_FUNCTIONS[op].py_func

    return use


@pytest.mark.parametrize("op, dtype", ATOMIC_CASES)
def test_atomic_result_type(op, dtype, cc, atomic):
    direct = atomic(op, dtype)
    assert device_ptx(direct, (dtype[::1], int64, dtype), cc)[1] == dtype
    assert device_ptx(atomic_shared_result, (dtype,), cc)[1] == dtype


@pytest.mark.parametrize("op, dtype", ATOMIC_CASES)
def test_atomic_on_global_array(op, dtype, cc, atomic):
    atomic(op, dtype)
    ptx = kernel_ptx(atomic_on_global, (dtype[::1], dtype[::1], dtype), cc)
    pattern = ATOMICS[op][1][dtype]
    assert re.search(rf"\batom{_SCOPE}\.global\.{pattern}\b", ptx), (
        f"expected atom.global.{pattern}, found {instructions(ptx, 'atom')}"
    )
    assert not instructions(ptx, "atom.shared")


@pytest.mark.parametrize("op, dtype", ATOMIC_CASES)
def test_atomic_on_shared_array(op, dtype, cc, atomic):
    atomic(op, dtype)
    ptx = kernel_ptx(atomic_on_shared, (dtype[::1], dtype), cc)
    pattern = ATOMICS[op][1][dtype]
    assert re.search(rf"\batom{_SCOPE}\.shared\.{pattern}\b", ptx), (
        f"expected atom.shared.{pattern}, found {instructions(ptx, 'atom')}"
    )
    assert not instructions(ptx, "atom.global")


@pytest.mark.parametrize("op, dtype", ATOMIC_REJECTED)
def test_atomic_unsupported_dtype_is_a_typing_error(op, dtype, cc, atomic):
    direct = atomic(op, dtype)
    with pytest.raises(errors.TypingError):
        cuda.compile_ptx(direct, (dtype[::1], int64, dtype), device=True, cc=cc)


@pytest.mark.parametrize("dtype", CAS_DTYPES, ids=type_id)
def test_atomic_cas(dtype, cc, atomic):
    atomic("add", dtype)
    assert device_ptx(cas_result, (dtype[::1], dtype, dtype), cc)[1] == dtype
    bits = _BITS[dtype]
    ptx = kernel_ptx(cas_on_global, (dtype[::1], dtype[::1], dtype, dtype), cc)
    assert re.search(rf"\batom{_SCOPE}\.global\.cas\.b{bits}\b", ptx), instructions(ptx, "atom")
    ptx = kernel_ptx(cas_on_shared, (dtype[::1], dtype, dtype), cc)
    assert re.search(rf"\batom{_SCOPE}\.shared\.cas\.b{bits}\b", ptx), instructions(ptx, "atom")


@pytest.mark.parametrize("dtype", [float32, float64, float16, int8], ids=type_id)
def test_atomic_cas_unsupported_dtype(dtype, cc):
    with pytest.raises(errors.TypingError):
        cuda.compile_ptx(cas_result, (dtype[::1], dtype, dtype), device=True, cc=cc)


def atomic_2d_global(a, i, j, v):
    return cuda.atomic.add(a, (i, j), v)


def atomic_2d_shared(i, j, v):
    s = cuda.shared.array((4, 4), float32)
    return cuda.atomic.max(s, (i, j), v)


def atomic_3d_global(a, v):
    return cuda.atomic.min(a, (0, 1, 2), v)


@pytest.mark.parametrize(
    "pyfunc, sig, resty",
    [
        (atomic_2d_global, (float32[:, ::1], int32, int64, float32), float32),
        (atomic_2d_global, (int64[:, :], int32, int64, int64), int64),
        (atomic_2d_shared, (int32, int32, float32), float32),
        (atomic_3d_global, (uint32[:, :, :], uint32), uint32),
    ],
    ids=["2d-f32", "2d-i64-A", "shared-2d", "3d"],
)
def test_atomics_on_nd_arrays_take_tuple_indices(pyfunc, sig, resty, cc):
    assert device_ptx(pyfunc, sig, cc)[1] == resty


def atomic_at(a, i, v):
    return cuda.atomic.add(a, i, v)


def atomic_value_cast(a, v):
    return cuda.atomic.add(a, 0, v)


@pytest.mark.parametrize("itype", INDEX_TYPES, ids=type_id)
def test_atomic_index_types(itype, cc):
    ptx, resty = device_ptx(atomic_at, (float32[::1], itype, float32), cc)
    assert resty == float32
    assert re.search(r"\batom(\.global)?\.add\.f32\b", ptx), instructions(ptx, "atom")


def test_atomic_value_is_cast_to_the_dtype(cc):
    assert device_ptx(atomic_value_cast, (int32[::1], int64), cc)[1] == int32
    assert device_ptx(atomic_value_cast, (float32[::1], float64), cc)[1] == float32


# -- warp shuffles and votes -----------------------------------------------------------------------------------


def shfl_idx(mask, v, lane):
    return cuda.shfl_sync(mask, v, lane)


def shfl_up(mask, v, delta):
    return cuda.shfl_up_sync(mask, v, delta)


def shfl_down(mask, v, delta):
    return cuda.shfl_down_sync(mask, v, delta)


def shfl_xor(mask, v, lanemask):
    return cuda.shfl_xor_sync(mask, v, lanemask)


SHUFFLES = [(shfl_idx, "idx"), (shfl_up, "up"), (shfl_down, "down"), (shfl_xor, "bfly")]


@pytest.mark.parametrize("dtype", [int32, int64, float32, float64], ids=type_id)
@pytest.mark.parametrize("pyfunc, mode", SHUFFLES, ids=[m for _, m in SHUFFLES])
def test_shuffles(pyfunc, mode, dtype, cc):
    ptx, resty = device_ptx(pyfunc, (uint32, dtype, int32), cc)
    assert resty == dtype
    found = re.findall(rf"\bshfl\.sync\.{mode}\.b32\b", ptx)
    assert len(found) == (2 if _BITS[dtype] == 64 else 1), f"{len(found)} shfl.sync.{mode}.b32"


def vote_all(mask, p):
    return cuda.all_sync(mask, p)


def vote_any(mask, p):
    return cuda.any_sync(mask, p)


def vote_ballot(mask, p):
    return cuda.ballot_sync(mask, p)


@pytest.mark.parametrize("predtype", [boolean, int32], ids=type_id)
@pytest.mark.parametrize(
    "pyfunc, resty, instruction",
    [
        (vote_all, boolean, "vote.sync.all.pred"),
        (vote_any, boolean, "vote.sync.any.pred"),
        (vote_ballot, int32, "vote.sync.ballot.b32"),
    ],
    ids=fn_id,
)
def test_votes(pyfunc, resty, instruction, predtype, cc):
    ptx, got = device_ptx(pyfunc, (uint32, predtype), cc)
    assert got == resty
    assert instructions(ptx, instruction)


def bit_popc(x):
    return cuda.popc(x)


def bit_clz(x):
    return cuda.clz(x)


@pytest.mark.parametrize("dtype", [int32, uint32, int64, uint64], ids=type_id)
@pytest.mark.parametrize("pyfunc, name", [(bit_popc, "popc"), (bit_clz, "clz")], ids=["popc", "clz"])
def test_popc_and_clz(pyfunc, name, dtype, cc):
    ptx, resty = device_ptx(pyfunc, (dtype,), cc)
    assert resty == dtype
    assert instructions(ptx, f"{name}.b{_BITS[dtype]}")


def fused_multiply_add(a, b, c):
    return cuda.fma(a, b, c)


@pytest.mark.parametrize("dtype, instruction", [(float32, "fma.rn.f32"), (float64, "fma.rn.f64")], ids=type_id)
def test_fma(dtype, instruction, cc):
    ptx, resty = device_ptx(fused_multiply_add, (dtype,) * 3, cc)
    assert resty == dtype
    assert instructions(ptx, instruction)


def select(p, a, b):
    return cuda.selp(p, a, b)


@pytest.mark.parametrize("dtype", [int32, int64, float32, float64], ids=type_id)
def test_selp(dtype, cc):
    ptx, resty = device_ptx(select, (boolean, dtype, dtype), cc)
    assert resty == dtype
    assert instructions(ptx, "selp.")


# =============================================================================================================
# Tuples, complex and float16 values, loops over tuples
# =============================================================================================================


def tuple_return(a, b):
    return a, b


def tuple_return_3(a, b):
    return (a, b, a + b)


def tuple_index_constants(a, b):
    t = (a, b, 3)
    return t[0] + t[-1]


def tuple_unpack(a, b):
    t = (a, b)
    x, y = t
    return x * y


def tuple_index_heterogeneous(a, b):
    t = (a, b)
    return t[1]


def tuple_nested(a, b):
    t = ((a, b), a)
    return t[0][1]


def tuple_argument_sum(t):
    return t[0] + t[1] + t[2]


def tuple_argument_unpack(t):
    x, y = t
    return y


@pytest.mark.parametrize(
    "pyfunc, sig, expected",
    [
        (tuple_return, (int32, float64), Tuple((int32, float64))),
        (tuple_return, (int32, int32), UniTuple(int32, 2)),
        (tuple_return_3, (int32, int32), Tuple((int32, int32, int64))),
        (tuple_index_constants, (int32, int32), int64),
        (tuple_unpack, (float32, float32), float32),
        (tuple_index_heterogeneous, (int32, float32), float32),
        (tuple_nested, (int16, complex64), complex64),
        (tuple_argument_sum, (UniTuple(float32, 3),), float32),
        (tuple_argument_unpack, (Tuple((int32, float64)),), float64),
    ],
    ids=lambda v: fn_id(v) if callable(v) and not isinstance(v, tuple) else None,
)
def test_tuples_as_values(pyfunc, sig, expected, cc):
    assert device_ptx(pyfunc, sig, cc)[1] == expected


@cuda.jit(device=True)
def dev_sum_and_product(a, b):
    return a + b, a * b


def kernel_uses_tuples(r, t, a, b):
    s, p = dev_sum_and_product(a, b)
    x, y = t
    r[0] = s
    r[1] = p
    r[2] = x + t[1] + y


def test_tuples_in_a_kernel(cc, prototypes):
    ptx = kernel_ptx(kernel_uses_tuples, (float64[::1], UniTuple(int32, 2), float32, float64), cc)
    assert prototypes.visible(ptx).params == ["u64"] * 7 + ["u32", "u32", "f32", "f64"]


def cplx_ops(a, b):
    return a * b + a / b - a


def cplx_mul(a, b):
    return a * b


def cplx_abs(a):
    return abs(a)


def cplx_parts(a):
    return a.real + a.imag


def cplx_conjugate(a):
    return a.conjugate()


def cplx_literal(a):
    return a * 1j + 2


@pytest.mark.parametrize(
    "pyfunc, sig, expected",
    [
        (cplx_ops, (complex64, complex64), complex64),
        (cplx_ops, (complex128, complex128), complex128),
        (cplx_mul, (complex64, float32), complex64),
        (cplx_mul, (float32, complex64), complex64),
        (cplx_mul, (complex64, float64), complex128),
        (cplx_mul, (complex64, int32), complex128),
        (cplx_mul, (complex64, complex128), complex128),
        (cplx_abs, (complex64,), float32),
        (cplx_abs, (complex128,), float64),
        (cplx_parts, (complex64,), float32),
        (cplx_parts, (complex128,), float64),
        (cplx_conjugate, (complex64,), complex64),
        (cplx_conjugate, (complex128,), complex128),
        (cplx_literal, (complex64,), complex128),
    ],
    ids=lambda v: fn_id(v) if callable(v) and not isinstance(v, tuple) else None,
)
def test_complex_arithmetic(pyfunc, sig, expected, cc):
    assert device_ptx(pyfunc, sig, cc)[1] == expected


def complex_kernel(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] * y[i] + x[i].conjugate() - abs(y[i])


@pytest.mark.parametrize("dtype, suffix", [(complex64, "f32"), (complex128, "f64")], ids=type_id)
def test_complex_kernel(dtype, suffix, cc):
    ptx = kernel_ptx(complex_kernel, (dtype[::1],) * 3, cc)
    assert instructions(ptx, f"fma.rn.{suffix}") or instructions(ptx, f"mul.{suffix}")


def half_add(a, b):
    return a + b


def half_sub(a, b):
    return a - b


def half_mul(a, b):
    return a * b


def half_div(a, b):
    return a / b


def half_neg(a):
    return -a


def half_lt(a, b):
    return a < b


@pytest.mark.parametrize(
    "pyfunc, sig, expected, instruction",
    [
        (half_add, (float16, float16), float16, "add"),
        (half_sub, (float16, float16), float16, "sub"),
        (half_mul, (float16, float16), float16, "mul"),
        (half_div, (float16, float16), float16, None),
        (half_neg, (float16,), float16, None),
        (half_lt, (float16, float16), boolean, None),
        (half_add, (float16, float32), float32, None),
        (half_add, (float16, int32), float64, None),
    ],
    ids=lambda v: fn_id(v) if callable(v) and not isinstance(v, tuple) else None,
)
def test_float16_arithmetic(pyfunc, sig, expected, instruction, cc):
    ptx, resty = device_ptx(pyfunc, sig, cc)
    assert resty == expected
    if instruction:  # sm_80 and sm_90 have native half arithmetic
        assert re.search(rf"\b{instruction}(\.rn)?\.f16\b", ptx), f"no {instruction}.f16"


def half_kernel(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] * y[i] + x[i] - y[i]


def test_float16_kernel(cc, prototypes):
    ptx = kernel_ptx(half_kernel, (float16[::1],) * 3, cc)
    assert re.search(r"\bld\.global\.(u16|b16)\b", ptx)
    assert re.search(r"\bst\.global\.(u16|b16)\b", ptx)
    assert not instructions(ptx, "call"), "half arithmetic should not call out"


def tuple_loop(v):
    s = 0
    for x in (16, 8, 4, 2, 1):
        s += x * v
    return s


def tuple_loop_floats(v):
    s = float32(0)
    for w in (0.5, 0.25, 0.125):
        s += v * w
    return s


def tuple_loop_variable(a, b, c):
    s = 0
    t = (a, b, c)
    for x in t:
        s += x
    return s


@pytest.mark.parametrize(
    "pyfunc, sig, expected",
    [
        (tuple_loop, (int32,), int64),
        (tuple_loop_floats, (float32,), float64),
        (tuple_loop_variable, (int32, int32, int32), int64),
    ],
    ids=lambda v: fn_id(v) if callable(v) and not isinstance(v, tuple) else None,
)
def test_loops_over_tuples(pyfunc, sig, expected, cc):
    assert device_ptx(pyfunc, sig, cc)[1] == expected


def warp_sum(r, x):
    v = x[cuda.grid(1)]
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
    if cuda.laneid == 0:
        r[0] = v


def test_loop_over_a_tuple_is_unrolled(cc):
    ptx = kernel_ptx(warp_sum, (float32[::1], float32[::1]), cc)
    assert len(re.findall(r"\bshfl\.sync\.down\.b32\b", ptx)) == 5


# =============================================================================================================
# Errors: file:line, the source line and a caret
# =============================================================================================================


def err_index_scalar(r, x):
    r[0] = x[0]


def err_shared_shape(r, n):
    s = cuda.shared.array(n, float32)
    r[0] = s[0]


def err_local_shape(r, n):
    loc = cuda.local.array(n, float32)
    r[0] = loc[0]


def err_local_atomic(r, v):
    loc = cuda.local.array(4, float32)
    cuda.atomic.add(loc, 0, v)
    r[0] = loc[0]


def err_grid_no_args(r, v):
    i = cuda.grid()
    r[i] = v


def err_grid_4(r, v):
    i = cuda.grid(4)  # noqa: F841
    r[0] = v


def err_gridsize_0(r, v):
    i = cuda.gridsize(0)  # noqa: F841
    r[0] = v


def err_shfl_arity(r, v):
    r[0] = cuda.shfl_sync(v, 1)


def err_atomic_arity(r, v):
    cuda.atomic.add(r, 0)


def err_syncthreads_arg(r, v):
    cuda.syncthreads(1)


def err_too_many_store(r, v):
    r[0, 1] = v


def err_too_many_load(r, v):
    r[0] = r[0, 0, 0] + v


def err_readonly_store(r, v):
    r[0] = v


F1 = (float32[::1], float32)
ERRORS = [
    # (kernel, signature, the construct the caret points into, what the message must say)
    (err_index_scalar, F1, "x[0]", r"index|getitem"),
    (err_shared_shape, (float32[::1], int32), "cuda.shared.array(n, float32)", r"constant|shape"),
    (err_local_shape, (float32[::1], int32), "cuda.local.array(n, float32)", r"constant|shape"),
    (err_local_atomic, F1, "cuda.atomic.add(loc, 0, v)", r"local"),
    (err_grid_no_args, F1, "cuda.grid()", r"grid"),
    (err_grid_4, F1, "cuda.grid(4)", r"grid"),
    (err_gridsize_0, F1, "cuda.gridsize(0)", r"gridsize"),
    (err_shfl_arity, F1, "cuda.shfl_sync(v, 1)", r"shfl_sync"),
    (err_atomic_arity, F1, "cuda.atomic.add(r, 0)", r"atomic\.add|add"),
    (err_syncthreads_arg, F1, "cuda.syncthreads(1)", r"syncthreads"),
    (err_too_many_store, F1, "r[0, 1]", r"too many indices"),
    (err_too_many_load, F1, "r[0, 0, 0]", r"too many indices"),
    (err_readonly_store, (RO_1D, float32), "r[0] = v", r"(?i)readonly"),
]


@pytest.mark.parametrize("pyfunc, sig, construct, says", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_error_location(pyfunc, sig, construct, says, cc):
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(pyfunc, sig, cc=cc)
    message = str(info.value)
    assert re.search(says, message), f"the message does not say what is wrong:\n{message}"
    lineno, line = source_position(pyfunc, construct)
    assert f"{__file__}:{lineno}" in message, message
    shown = message.splitlines()
    index = next((i for i, text in enumerate(shown) if text.strip() == line.strip()), None)
    assert index is not None, f"source line {line.strip()!r} not shown in:\n{message}"
    assert index + 1 < len(shown) and set(shown[index + 1].strip()) == {"^"}, f"no caret line in:\n{message}"
    caret = shown[index + 1].index("^")
    start = shown[index].index(construct)
    assert start <= caret < start + len(construct), (
        f"caret at column {caret}, {construct!r} spans {start}..{start + len(construct)}:\n{message}"
    )


def err_in_device_function_caller(r, v):
    r[0] = dev_bad_index(v)


@cuda.jit(device=True)
def dev_bad_index(v):
    return v[0]


def test_error_in_a_called_device_function_points_into_it(cc):
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(err_in_device_function_caller, F1, cc=cc)
    lineno, _ = source_position(dev_bad_index.py_func, "return v[0]")
    assert f"{__file__}:{lineno}" in str(info.value), str(info.value)
