"""Types, functions and device functions as values (issue 42), as numba-cuda's own atomic tests write them: a
device function receiving a number type, an atomic function, a cast function and a literal size, and using them."""

PROGRAM = """
import numpy as np
from cujit import cuda, uint32, float64


@cuda.jit(device=True)
def cast_none(num):
    return num


@cuda.jit(device=True)
def cast_to_int(num):
    return int(num)


@cuda.jit(device=True)
def histogram_shared(ary, idx, op2, ary_dtype, n, binop_func, cast_func, initializer):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(n, ary_dtype)
    sm[tid] = initializer
    cuda.syncthreads()
    bin = cast_func(idx[tid] % n)
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit
def histogram_add(ary):
    histogram_shared(ary, ary, 1, uint32, 32, cuda.atomic.add, cast_none, 0)


@cuda.jit
def histogram_sub(ary, idx):
    histogram_shared(ary, idx, 1.0, float64, 32, cuda.atomic.sub, cast_to_int, 0.0)


@cuda.jit
def generic_sum(a, out):
    acc = a.dtype.type(0)  # dtype-generic accumulator
    for i in range(a.size):
        acc += a[i]
    conv = np.float64
    out[0] = conv(acc)
    out[1] = a.dtype.type(1.5) + a[0]
"""
