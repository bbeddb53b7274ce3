"""Kernels and device functions calling declared functions (sources the declare_device tests compile)."""

import cffi

from cujit import cuda

ffi = cffi.FFI()

ext_void = cuda.declare_device("ext_void", "void(int32)")
ext_fn = cuda.declare_device(
    "ext_fn", "float64(float32[::1], CPointer(float32), boolean, UniTuple(int32, 2), complex64)"
)
ext_c = cuda.declare_device("ext_c", "float32(float32, CPointer(float32))", abi="c")
c_void = cuda.declare_device("c_void", "void(CPointer(int32))", abi="c")
narrow = cuda.declare_device("narrow", "int32(int32)")


def call_void(x):
    ext_void(x[0])


def call_fn(x, t):
    x[0] = ext_fn(x, ffi.from_buffer(x), True, t, 1j)


def call_c(x):
    x[0] = ext_c(x[1], ffi.from_buffer(x))


def call_pointer_slice(x):
    i = cuda.grid(1)
    if i < x.size:
        c_void(ffi.from_buffer(x[i:]))


def converts_arguments(x, n):
    x[0] = narrow(n)  # int64 -> the declared int32


@cuda.jit(device=True)
def calls_c_abi(p):
    return ext_c(1.0, p)


def numba_abi_caller(x):
    return calls_c_abi(ffi.from_buffer(x))


def pointer_items(x):
    p = ffi.from_buffer(x)
    p[1] = p[0] * 2.0


def from_buffer_of_a_scalar(x):
    return ffi.from_buffer(x)


def from_buffer_of_strided(x):
    ffi.from_buffer(x)


def wrong_arity(x):
    x[0] = narrow(1, 2)


def wrong_type(x):
    x[0] = narrow(x)
