"""Cache-hinted loads and stores (numba-cuda's cache_hints): cuda.ldca/ldcg/ldcs/ldlu/ldcv and
cuda.stcg/stcs/stwb/stwt compile to one ``ld.global.<op>`` / ``st.global.<op>`` of the element's width, for
arrays of every integer and float dtype of 8 to 64 bits (1-D with an integer index, N-D with a tuple) and for
pointers, on sm_75 and sm_90 (the PTX is assembled by ptxas through conftest); misuse is a TypingError that
says what is wrong, with numba-cuda's wording."""

import re

import pytest

from cujit import cuda
from cujit import (
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
    CPointer,
    UniTuple,
)
from cujit.errors import TypingError

LOADS = ["ldca", "ldcg", "ldcs", "ldlu", "ldcv"]
STORES = ["stcg", "stcs", "stwb", "stwt"]
DTYPES = [int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64]
CCS = [(7, 5), (9, 0)]


def hinted_instructions(ptx):
    return re.findall(r"\b(?:ld|st)\.global\.(?:ca|cg|cs|lu|cv|wb|wt)\.b\d+", ptx)


def copy_1d(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        cuda.stcs(dst, i, cuda.ldcs(src, i))


@pytest.mark.parametrize("cc", CCS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_loads_and_stores_its_width(dtype, cc):
    ptx, _ = cuda.compile_ptx(copy_1d, (dtype[::1], dtype[::1]), cc=cc)
    bits = dtype.bitwidth
    assert hinted_instructions(ptx) == [f"ld.global.cs.b{bits}", f"st.global.cs.b{bits}"]


def load_with(op):
    fn = getattr(cuda, op)

    def kernel(src, dst):
        i = cuda.grid(1)
        dst[i] = fn(src, i)

    return kernel


def store_with(op):
    fn = getattr(cuda, op)

    def kernel(src, dst):
        i = cuda.grid(1)
        fn(dst, i, src[i])

    return kernel


@pytest.mark.parametrize("cc", CCS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
@pytest.mark.parametrize("op", LOADS)
def test_each_load_operator(op, cc):
    ptx, _ = cuda.compile_ptx(load_with(op), (float32[:], float32[:]), cc=cc)
    assert hinted_instructions(ptx) == [f"ld.global.{op[2:]}.b32"]


@pytest.mark.parametrize("cc", CCS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
@pytest.mark.parametrize("op", STORES)
def test_each_store_operator(op, cc):
    ptx, _ = cuda.compile_ptx(store_with(op), (int64[:], int64[:]), cc=cc)
    assert hinted_instructions(ptx) == [f"st.global.{op[2:]}.b64"]


def transpose_2d(src, dst):
    i, j = cuda.grid(2)
    if i < src.shape[0] and j < src.shape[1]:
        cuda.stwt(dst, (j, i), cuda.ldcg(src, (i, j)))


def test_multidimensional_arrays_take_a_tuple_index():
    ptx, _ = cuda.compile_ptx(transpose_2d, (float64[:, :], float64[:, ::1]))
    assert hinted_instructions(ptx) == ["ld.global.cg.b64", "st.global.wt.b64"]


def negative_index(a):
    cuda.stwb(a, -1, cuda.ldca(a, -2))


def test_negative_indices_wrap():
    ptx, _ = cuda.compile_ptx(negative_index, (int32[:],))
    assert hinted_instructions(ptx) == ["ld.global.ca.b32", "st.global.wb.b32"]


def pointer_access(p, q, i):
    cuda.stcg(q, i, cuda.ldlu(p, i) + 1)


def test_pointers_take_an_integer_index():
    ptx, _ = cuda.compile_ptx(pointer_access, (CPointer(uint16), CPointer(uint16), int64), device=True)
    assert hinted_instructions(ptx) == ["ld.global.lu.b16", "st.global.cg.b16"]


def store_converts(a, x):
    cuda.stcs(a, 0, x)


def test_stored_value_converts_to_the_dtype():
    ptx, _ = cuda.compile_ptx(store_converts, (int8[:], float64))
    assert re.search(r"cvt\.rzi\.s\d+\.f64", ptx)
    assert hinted_instructions(ptx) == ["st.global.cs.b8"]


def test_load_result_is_the_dtype():
    _, resty = cuda.compile_ptx(lambda a: cuda.ldcv(a, 0), (float16[:],), device=True)
    assert resty == float16


def load_any(a, i):
    return cuda.ldcg(a, i)


def store_any(a, i, v):
    cuda.stcg(a, i, v)


@pytest.mark.parametrize(
    "argtypes, message",
    [
        ((float32[:, :], int64), "Expected 2 indices, got a scalar"),
        ((float32[:, :], UniTuple(int64, 3)), "Expected 2 indices, got 3"),
        ((float32[:], float32), "float32 is not a valid index"),
        ((boolean[:], int64), "ldcg requires an array of integer or float type, got bool"),
        ((complex64[:], int64), "ldcg requires an array of integer or float type, got complex64"),
        ((float32, int64), "ldcg operates on arrays or pointers, got float32"),
        ((CPointer(float32), UniTuple(int64, 2)), "Pointers only support scalar indexing, got a tuple of 2"),
    ],
)
def test_misuse_names_the_problem(argtypes, message):
    with pytest.raises(TypingError, match=re.escape(message)):
        cuda.compile_ptx(load_any, argtypes, device=True)


def test_store_into_a_readonly_array_is_refused():
    from cujit import types

    ro = types._core.types.array(float32, 1, "C", True)
    with pytest.raises(TypingError, match="stcg cannot store into a read-only array"):
        cuda.compile_ptx(store_any, (ro, int64, float32), device=True)


def test_calling_from_python_raises():
    with pytest.raises(RuntimeError, match="only be used inside a CUDA kernel"):
        cuda.ldcs([1.0], 0)
