"""Kernels of the GPU linking tests (test_gpu_linking.py): numba-cuda's FFI documentation examples, every link
kind, calls through device functions, C-ABI declarations, cffi pointers and Python UDFs linked back."""

import os

import cffi

from cujit import cuda

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "linking")
ffi = cffi.FFI()

# numba-cuda's docs: "functions.cu" in numba's ABI.
mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=os.path.join(DATA, "functions.cu"))
sum_reduce = cuda.declare_device(
    "sum_reduce", "float32(CPointer(float32), int32)", link=os.path.join(DATA, "functions.cu")
)
saxpy = cuda.declare_device("saxpy", "float32(float32, float32, float32)", link=os.path.join(DATA, "saxpy.cu"))


def multiply_vectors(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = mul(x[i], y[i])


def reduction_caller(result, array):
    result[()] = sum_reduce(ffi.from_buffer(array), len(array))


def vector_saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = saxpy(a, x[i], y[i])


# Every link kind: the functions of device_functions.cu (the kinds are given per test with link=).
add_from_numba = cuda.declare_device("add_from_numba", "uint32(uint32, uint32)")
add_cabi = cuda.declare_device("add_cabi", "uint32(uint32, uint32)", abi="c")


def add_both_abis(r, a, b):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = add_from_numba(a[i], b[i]) * 2 + add_cabi(a[i], b[i])  # 3 (a + b)


# Through device functions, one .cu reached many ways (numba-cuda's TestDeclareDevice): link_program_src's.
from link_program_src import times2, times3, through_device_functions  # noqa: E402,F401


def times_five(r, x):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = times2(x[i]) + times3(x[i])


# C-ABI declarations of every shape (TestDeclareDeviceCABI).
c_times2 = cuda.declare_device("times2", "float32(float32)", abi="c", link=os.path.join(DATA, "c_abi.cu"))
const42 = cuda.declare_device("const42", "int32()", abi="c", link=os.path.join(DATA, "c_abi.cu"))
fma3 = cuda.declare_device("fma3", "float64(float64, float64, float64)", abi="c", link=os.path.join(DATA, "c_abi.cu"))
set42 = cuda.declare_device("set42", "void(CPointer(int32))", abi="c", link=os.path.join(DATA, "c_abi.cu"))
scale_in_place = cuda.declare_device(
    "scale_in_place", "void(CPointer(float32), int32, float32)", abi="c", link=os.path.join(DATA, "c_abi.cu")
)


def c_abi_shapes(r, c, x):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = fma3(x[i], 2.0, float(const42())) + c_times2(1.5)


def set_all_42(x):
    i = cuda.grid(1)
    if i < x.size:
        set42(ffi.from_buffer(x[i:]))


def scale_rows(x, s):
    i = cuda.grid(1)
    if i < x.shape[0]:
        scale_in_place(ffi.from_buffer(x[i]), x.shape[1], s)


@cuda.jit(device=True)
def axpy_through_pointer(p, n, a):
    for j in range(n):
        p[j] = a * p[j] + 1.0


def pointer_device_function(x, a):
    axpy_through_pointer(ffi.from_buffer(x), x.size, a)


# A Python UDF compiled by cuda.compile, then linked back (a round trip through cujit's own output).
def udf(x):
    return x * x + 2.0 * x - 1.0


missing = cuda.declare_device("not_defined_anywhere", "float32(float32)")


def calls_missing(r):
    r[0] = missing(r[0])


# A declaration that needs a cooperative launch (numba-cuda's use_cooperative).
grid_barrier = cuda.declare_device(
    "grid_barrier", "int32()", link=os.path.join(DATA, "grid_barrier.cu"), use_cooperative=True
)


def neighbours_after_barrier(x, out):
    i = cuda.grid(1)
    x[i] = i * 3 + 1
    grid_barrier()
    j = (i + cuda.blockDim.x) % x.size  # written by another block
    out[i] = x[j]
