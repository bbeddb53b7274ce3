"""Stores into array slices compile as numba-cuda compiles them (`a[:] = 7.0`, `b[1:3] = a[1:3]`, `r[()] = x`),
through both frontends (the bytecode reader gives the same PTX), and what numpy cannot broadcast is a located
TypingError. Results are checked in test_gpu_array_assign.py."""

import inspect
import textwrap

import numpy as np
import pytest

import array_assign_src as S
import bytecode_differential
from cujit import cuda, from_dtype
from cujit.errors import TypingError, UnsupportedError

KERNELS = [
    (S.fill, "void(float64[:], float64)"),
    (S.copy_part, "void(float32[:], float32[:])"),
    (S.whole_by_empty_tuple, "void(int32[:], float64)"),
    (S.strided_rows, "void(float64[:], float32[:, :])"),
    (S.shift_up, "void(float64[:])"),
    (S.shift_down, "void(int64[:])"),
    (S.reversed_copy, "void(float64[:], float64[::1])"),
    (S.column_broadcast, "void(float64[:, :], float64[:, :])"),
    (S.converting, "void(int16[:], float64[:])"),
]


@pytest.mark.parametrize("fn, sig", KERNELS, ids=[fn.__name__ for fn, _ in KERNELS])
def test_slice_stores_compile_the_same_from_source_and_bytecode(fn, sig):
    ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0))
    assert ".entry" in ptx
    namespace = {"__name__": S.__name__}
    exec(textwrap.dedent(inspect.getsource(fn)), namespace)  # no source file: the bytecode reader
    from_bytecode, _ = cuda.compile_ptx(namespace[fn.__name__], sig, cc=(9, 0))
    assert bytecode_differential.comparable(from_bytecode) == bytecode_differential.comparable(ptx)


def test_a_device_function_stores_into_a_slice():
    def clear(a):
        a[1:] = 0
        return a[0]

    ptx, resty = cuda.compile_ptx(clear, "float32(float32[:])", device=True, cc=(9, 0))
    assert str(resty) == "float32" and ".func" in ptx


def test_more_dimensions_than_the_view_is_refused_with_its_line():
    def bad(a, m):
        a[1:3] = m

    with pytest.raises(TypingError, match=r"cannot assign a 2-d array to a 1-d array slice") as info:
        cuda.compile_ptx(bad, "void(float64[:], float64[:, :])", cc=(9, 0))
    assert "a[1:3] = m" in str(info.value) and "^" in str(info.value)


def test_a_value_that_cannot_be_stored_is_refused():
    def bad(a):
        a[:] = (1, 2)

    with pytest.raises(TypingError, match=r"cannot store a value of type .* into an array slice of float64"):
        cuda.compile_ptx(bad, "void(float64[:])", cc=(9, 0))


def test_slices_of_record_arrays_say_what_to_do():
    def bad(a, b):
        a[:] = b[:]

    rec = from_dtype(np.dtype([("x", np.float32)]))[:]
    with pytest.raises(UnsupportedError, match=r"assign its items one by one"):
        cuda.compile_ptx(bad, (rec, rec), cc=(9, 0))
