"""Types, functions and device functions as values (issue 42), as numba-cuda's own atomic tests write them: a
device function receiving a number type, an atomic function, a cast function and a literal size, and using them;
constant tuples passed as shapes and read from globals."""

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


SM_SIZE = (4, 8)
PAIR = (1.0, 2.5)
NESTED = (1.5, (3, 4))


@cuda.jit(device=True)
def fill_shared(ary, shape, dt):
    sm = cuda.shared.array(shape, dt)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    sm[tx, ty] = ary[tx, ty] + shape[0] * 10 + shape[1]
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


@cuda.jit
def tuple_constants(ary, out):
    fill_shared(ary, (4, 8), uint32)
    s = cuda.shared.array(SM_SIZE, float64)
    s[cuda.threadIdx.x, cuda.threadIdx.y] = NESTED[0]
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        for i, v in enumerate(PAIR):
            out[i] = v
        out[2] = NESTED[1][1] + s[3, 7]


@cuda.jit
def generic_sum(a, out):
    acc = a.dtype.type(0)  # dtype-generic accumulator
    for i in range(a.size):
        acc += a[i]
    conv = np.float64
    out[0] = conv(acc)
    out[1] = a.dtype.type(1.5) + a[0]
"""
