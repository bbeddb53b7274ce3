"""Records and raw memory as values (issue 43, first part), on both frontends: an argmax-by-key reduction over
(value, index) records whose operator returns one operand, or a tuple converted to the record; a device function
returning a record; a local array of records filled and copied out; a local array of a vector type; a record
stored through a pointer; ``cuda.carray``/``cuda.farray`` over two arrays of different dtypes with an atomic;
loads through a pointer to pointers and ``void*`` stores; a global record array as a constant; a registered struct class (``Pixel(r, g, b)``) building record values in an
operator; a whole nested record and a whole array field stored at once. Compiled everywhere (PTX assembled by the suite's ptxas
check), run against NumPy where kernels run."""

import ctypes

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, from_dtype, register_struct, types
from cujit.errors import TypingError

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PAIR = np.dtype([("v", np.float32), ("i", np.int32)], align=True)
INNER = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
OUTER = np.dtype([("inner", INNER), ("arr", np.float32, (2, 3))], align=True)
PIXEL = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.int16)])


class Pixel:
    """A struct class: registered, ``Pixel(r, g, b)`` in CUDA code builds a record of PIXEL."""

    def __init__(self, r, g, b):
        self.r, self.g, self.b = r, g, b


register_struct(Pixel, PIXEL)

PROGRAM = """
import numpy as np
from cujit import cuda

@cuda.jit(device=True)
def larger(a, b):  # returns one of its operands
    return a if a.v > b.v else b

@cuda.jit(R(R, R), device=True)
def larger_tuple(a, b):  # returns a tuple, converted field by field to the declared record
    if a.v > b.v:
        return (a.v, a.i)
    return (b.v, b.i)

@cuda.jit(device=True)
def make_pair(v, i):  # a device function returning a record
    out = cuda.local.array(1, PAIR)
    out[0] = (v, i)
    return out[0]

def argmax(vals, out):
    items = cuda.local.array(8, PAIR)  # a local array of records, filled and copied out
    for i in range(vals.size):
        items[i] = (vals[i], i)
    best = items[0]
    best_tuple = items[0]
    for i in range(1, vals.size):
        best = larger(best, items[i])
        best_tuple = larger_tuple(best_tuple, items[i])
    out[0] = best
    out[1] = best_tuple
    out[2] = make_pair(vals[0] * 2, 42)
    for i in range(vals.size):
        out[3 + i] = items[i]

def vectors(out):
    v = cuda.local.array(2, cuda.float32x2)
    v[0] = cuda.float32x2(1.5, 2.5)
    v[1] = v[0]
    out[0] = v[1].x + v[1].y

def through_pointer(out, src):
    p = ffi.from_buffer(out)  # a CPointer(Record): the record stored through it
    p[0] = src[1]
    p[1] = (src[0].v + 1, 7)

def views(x, y, n, m, out):
    a = cuda.carray(ffi.from_buffer(x), (n, m))
    f = cuda.farray(ffi.from_buffer(y), (n, m), np.int32)
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += a[i, j] * 10 + f[i, j]
    cuda.atomic.add(f, (0, 1), 7)
    out[0] = s
    out[1] = len(a) * 1000 + a.shape[1] * 100 + a[1:, 1].sum()

def from_global(out):  # a global record array: a constant of its bytes
    out[0] = TABLE[2].v + TABLE[1].i
    out[1] = TABLE[0]['i']

def record_argument(out, r):  # a record scalar argument: by reference to a copy, copied back
    out[0] = r.v + r.i
    r.i = r.i * 2

@cuda.jit(device=True)
def mix(a, b):  # an operator building a new struct value
    return Pixel(max(a.r, b.r), min(a.g, b.g), (a.b + b.b) // 2)

def reduce_pixels(items, out):
    acc = items[0]
    for i in range(1, items.size):
        acc = mix(acc, items[i])
    out[0] = acc
    out[1] = Pixel(g=1, r=2, b=3)  # keyword fields

def whole_fields(dest, src, vals):  # a whole nested record and a whole array field stored at once
    dest[0].inner = src[0].inner
    dest[0].arr = vals
    dest[1].arr = 2.5  # broadcast into the field

@cuda.jit(device=True)
def stateful_op(x, counts_ptr, sums_ptr, n):  # cuda.compute's stateful operator: its state arrays as pointers
    counts = cuda.carray(counts_ptr, n)
    sums = cuda.carray(sums_ptr, (n,), np.float64)
    slot = int(x) % n
    cuda.atomic.add(counts, slot, 1)
    cuda.atomic.add(sums, slot, x)
    return x * 2

def apply_stateful(xs, out, counts_ptr, sums_ptr, n):
    i = cuda.grid(1)
    if i < xs.size:
        out[i] = stateful_op(xs[i], counts_ptr, sums_ptr, n)

def pointers(states, slots, value, out):
    out[0] = states[0][1]
    slots[0] = value

def pointer_stores(pp, a, out):  # a typed pointer stored through a pointer to pointers
    pp[0] = ffi.from_buffer(a)
    out[0] = pp[0][1]

def through_memory(x, y):  # records larger than a pointer through shared and local arrays (each element its bytes)
    sm = cuda.shared.array(16, OUTER)
    lm = cuda.local.array(3, OUTER)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tx
    if i < x.size:
        sm[tx] = x[i]
    cuda.syncthreads()
    lm[0] = sm[15 - tx]
    lm[2] = lm[0]
    if i < x.size:
        y[i] = lm[2]
"""

_R, _P, _O = from_dtype(PAIR)[::1], from_dtype(PIXEL)[::1], from_dtype(OUTER)[::1]
_F32, _F64 = types.float32[::1], types.float64[::1]
SIGNATURES = {
    "argmax": (_F32, _R),
    "vectors": (_F32,),
    "through_pointer": (_R, _R),
    "views": (_F32, types.int32[::1], types.int64, types.int64, _F64),
    "from_global": (_F64,),
    "reduce_pixels": (_P, _P),
    "whole_fields": (_O, _O, types.float32[:, ::1]),
    "apply_stateful": (_F64, _F64, types.CPointer(types.int32), types.CPointer(types.float64), types.int64),
    "through_memory": (_O, _O),
}
TABLE = np.array([(1.5, 10), (2.5, 20), (3.5, 30)], PAIR)


@pytest.fixture
def scope(frontend):
    cffi = pytest.importorskip("cffi")
    return define(
        PROGRAM,
        frontend,
        {"R": from_dtype(PAIR), "PAIR": PAIR, "OUTER": OUTER, "ffi": cffi.FFI(), "TABLE": TABLE, "Pixel": Pixel},
    )


@pytest.mark.parametrize("name", list(SIGNATURES))
def test_compiles(scope, name):
    ptx, _ = cuda.compile_ptx(scope[name], SIGNATURES[name], cc=(9, 0))
    assert ".entry" in ptx


def test_pointer_to_pointers_and_void_pointer_stores(scope):
    argtypes = (
        types.CPointer(types.CPointer(types.int32)),
        types.CPointer(types.voidptr),
        types.voidptr,
        types.int32[::1],
    )
    ptx, _ = cuda.compile_ptx(scope["pointers"], argtypes, cc=(9, 0))
    assert "ld.u64" in ptx or "ld.global.u64" in ptx or "ld.b64" in ptx or "ld.global.b64" in ptx, ptx
    argtypes = (types.CPointer(types.CPointer(types.float64)), types.float64[::1], types.float64[::1])
    ptx, _ = cuda.compile_ptx(scope["pointer_stores"], argtypes, cc=(9, 0))
    assert "st.global.b64" in ptx or "st.global.u64" in ptx, ptx


def test_record_return_types(scope):
    R = from_dtype(PAIR)
    assert scope["larger"].compile_device((R, R)).signature.return_type == R
    assert scope["make_pair"].compile_device((types.float32, types.int32)).signature.return_type == R


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_argmax_by_key_runs(scope):
    vals = np.random.default_rng().random(8).astype(np.float32)
    out = np.zeros(11, PAIR)
    cuda.jit(scope["argmax"])[1, 1](vals, out)
    k = int(vals.argmax())
    assert tuple(out[0]) == (vals[k], k) and tuple(out[1]) == (vals[k], k)
    assert tuple(out[2]) == (np.float32(vals[0] * 2), 42)
    np.testing.assert_array_equal(out["v"][3:], vals)
    np.testing.assert_array_equal(out["i"][3:], np.arange(8))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_vectors_and_pointers_run(scope):
    out = np.zeros(1, np.float32)
    cuda.jit(scope["vectors"])[1, 1](out)
    assert out[0] == 4.0
    src = np.zeros(2, PAIR)
    src["v"], src["i"] = np.random.default_rng().random(2), [3, 4]
    got = np.zeros(2, PAIR)
    cuda.jit(scope["through_pointer"])[1, 1](got, src)
    assert tuple(got[0]) == tuple(src[1]) and tuple(got[1]) == (np.float32(src[0]["v"] + 1), 7)


def test_ctypes_pointers_are_typed_as_numba_types_them(frontend):
    import cujit

    assert cujit.typeof(ctypes.c_void_p(16)) == types.voidptr
    assert cujit.typeof(ctypes.cast(16, ctypes.POINTER(ctypes.c_int32))) == types.CPointer(types.int32)


def test_a_record_scalar_is_typed_as_its_record(scope):
    import cujit

    table = np.zeros(2, PAIR)
    assert cujit.typeof(table[1]) == from_dtype(PAIR)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_record_scalar_argument_runs(scope):
    rng = np.random.default_rng()
    table = np.zeros(3, PAIR)
    table["v"], table["i"] = rng.random(3), rng.integers(0, 100, 3)
    before = table.copy()
    out = np.zeros(1)
    kernel = cuda.jit(scope["record_argument"])
    kernel[1, 1](out, table[1])
    np.testing.assert_allclose(out[0], np.float64(before[1]["v"]) + before[1]["i"], rtol=1e-6)
    expect = before.copy()
    expect[1]["i"] *= 2  # the kernel's write reaches the array the record was read from
    np.testing.assert_array_equal(table, expect)
    stream = cuda.stream()
    kernel[1, 1, stream](out, table[2])  # on a stream: copied back once the stream is done
    assert table[2]["i"] == 2 * before[2]["i"]


def test_a_struct_constructor_checks_its_fields(frontend):
    scope = define("def f(out):\n    out[0] = Pixel(1, 2)\n", frontend, {"Pixel": Pixel})
    with pytest.raises(TypingError, match=r"Pixel\(\) takes 3 fields \(r, g, b\), 2 given") as info:
        cuda.compile_ptx(scope["f"], (from_dtype(PIXEL)[::1],), cc=(9, 0))
    assert "^" in str(info.value)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_struct_constructor_in_a_reduction_runs(scope):
    rng = np.random.default_rng()
    items = np.zeros(6, PIXEL)
    items["r"], items["g"], items["b"] = rng.integers(0, 256, 6), rng.integers(0, 256, 6), rng.integers(-50, 50, 6)
    out = np.zeros(2, PIXEL)
    cuda.jit(scope["reduce_pixels"])[1, 1](items, out)
    r, g, b = int(items[0]["r"]), int(items[0]["g"]), int(items[0]["b"])
    for item in items[1:]:
        r, g, b = max(r, int(item["r"])), min(g, int(item["g"])), (b + int(item["b"])) // 2
    assert tuple(out[0]) == (r, g, b) and tuple(out[1]) == (2, 1, 3)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_whole_field_stores_run(scope):
    rng = np.random.default_rng()
    src = np.zeros(1, OUTER)
    src[0]["inner"]["a"], src[0]["inner"]["b"] = rng.integers(-100, 100), rng.standard_normal()
    vals = rng.random((2, 3)).astype(np.float32)
    dest = np.zeros(2, OUTER)
    cuda.jit(scope["whole_fields"])[1, 1](dest, src, vals)
    assert dest[0]["inner"] == src[0]["inner"]
    np.testing.assert_array_equal(dest[0]["arr"], vals)
    np.testing.assert_array_equal(dest[1]["arr"], np.full((2, 3), 2.5, np.float32))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_stateful_operator_over_captured_state_runs(scope):
    """cuda.compute's stateful operator: two state arrays of different dtypes (int32 counts, float64 sums) passed
    as raw device pointers and viewed with carray, updated with atomics."""
    rng = np.random.default_rng()
    n = 5
    xs = rng.integers(0, 100, 200).astype(np.float64)
    counts, sums = cuda.to_device(np.zeros(n, np.int32)), cuda.to_device(np.zeros(n))

    def pointer(a, ctype):  # a raw device address as a typed ctypes pointer (numba types it as a CPointer)
        return ctypes.cast(a.__cuda_array_interface__["data"][0], ctypes.POINTER(ctype))

    out = np.zeros_like(xs)
    cuda.jit(scope["apply_stateful"])[4, 64](
        xs, out, pointer(counts, ctypes.c_int32), pointer(sums, ctypes.c_double), n
    )
    np.testing.assert_array_equal(out, xs * 2)
    slots = xs.astype(np.int64) % n
    np.testing.assert_array_equal(counts.copy_to_host(), np.bincount(slots, minlength=n))
    np.testing.assert_allclose(sums.copy_to_host(), np.bincount(slots, weights=xs, minlength=n))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_global_record_array_runs(scope):
    out = np.zeros(2)
    cuda.jit(scope["from_global"])[1, 1](out)
    assert list(out) == [3.5 + 20, 10]


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_carray_and_farray_run(scope):
    rng = np.random.default_rng()
    n, m = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    x = rng.random(n * m).astype(np.float32)
    y = rng.integers(0, 100, n * m).astype(np.int32)
    before = y.copy()
    out = np.zeros(2)
    cuda.jit(scope["views"])[1, 1](x, y, n, m, out)
    a, f = x.reshape(n, m), before.reshape((n, m), order="F")
    np.testing.assert_allclose(out[0], (a.astype(np.float64) * 10 + f).sum(), rtol=1e-6)
    np.testing.assert_allclose(out[1], n * 1000 + m * 100 + a[1:, 1].astype(np.float64).sum(), rtol=1e-6)
    expect = before.copy()
    expect[n] += 7  # (0, 1) in Fortran order
    np.testing.assert_array_equal(y, expect)


def test_arrays_of_records_hold_their_bytes(scope):
    """A shared or local array of records holds each element's bytes (it held a pointer's 8 each: a record larger than
    that overran it)."""
    ptx, _ = cuda.compile_ptx(scope["through_memory"], SIGNATURES["through_memory"], cc=(9, 0))
    assert ".shared .align 16 .b8 _cudapy_smem_" in ptx and f"[{16 * OUTER.itemsize}];" in ptx


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_arrays_of_records_run(scope):
    rng = np.random.default_rng()
    x = np.zeros(64, OUTER)
    x["inner"]["a"], x["inner"]["b"] = rng.integers(-100, 100, 64), rng.standard_normal(64)
    x["arr"] = rng.random((64, 2, 3))
    y = np.zeros_like(x)
    cuda.jit(scope["through_memory"])[4, 16](x, y)
    expect = x.reshape(4, 16)[:, ::-1].reshape(64)
    assert (y == expect).all()
