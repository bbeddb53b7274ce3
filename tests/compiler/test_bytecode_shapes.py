"""Kernels whose bytecode some CPython version spells unlike their source, compiled as users write them: a
conditional expression stored to a subscript, a local or an attribute right before a return (CPython 3.12
copies the store and the return into each arm, the bytecode of an if/else). test_bytecode_frontend.py's corpus
differential compiles this file through both readers (CUJIT_FRONTEND=source / bytecode): the PTX must be the
same byte for byte."""

import numpy as np

from cujit import cuda, float32, float64, from_dtype, int64

F8 = float64[::1]
POINT = from_dtype(np.dtype([("x", np.float64), ("y", np.float64)]))


def store_then_return(out, a, n):
    i = cuda.grid(1)
    if i >= out.size:
        return
    out[i] = a[i] if i < n else 2.0 * a[i]


def nested_store_then_return(out, a, n):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (a[i] if n > 3 else -a[i]) if i < n else (0.5 if n > 1 else a[0])
        return
    out[0] = 1.0


def local_then_return(a, n):
    v = a[0] if n > 2 else a[1] + 1.0
    return v


def attribute_then_return(points, a, n):
    i = cuda.grid(1)
    if i < points.size:
        points[i].x = a[i] if i < n else 0.0
        return


def test_conditional_store_before_a_return():
    ptx, _ = cuda.compile_ptx(store_then_return, (F8, F8, int64))
    assert ".entry" in ptx


def test_nested_conditional_store_before_a_return():
    ptx, _ = cuda.compile_ptx(nested_store_then_return, (F8, F8, int64))
    assert ".entry" in ptx


def test_conditional_local_before_a_return():
    _, resty = cuda.compile_ptx(local_then_return, (float32[::1], int64), device=True)
    assert resty == float64


def test_conditional_attribute_store_before_a_return():
    ptx, _ = cuda.compile_ptx(attribute_then_return, (POINT[::1], F8, int64))
    assert ".entry" in ptx
