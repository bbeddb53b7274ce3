"""Kernels that call functions defined by linked code (sources of test_link_program and the GPU tests)."""

import os

from cujit import cuda

DATA = os.path.join(os.path.dirname(__file__), "data", "linking")
FUNCTIONS_CU = os.path.join(DATA, "functions.cu")
TIMES_CU = os.path.join(DATA, "times.cu")

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=FUNCTIONS_CU)
sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link=[FUNCTIONS_CU])
add_from_numba = cuda.declare_device("add_from_numba", "uint32(uint32, uint32)")
add_cabi = cuda.declare_device("add_cabi", "uint32(uint32, uint32)", abi="c")
times2 = cuda.declare_device("times2", "float32(float32)", link=TIMES_CU)
times3 = cuda.declare_device("times3", "float32(float32)", link=(TIMES_CU,))
nonexistent = cuda.declare_device("nonexistent_fn", "int32(int32)")


def multiply_vectors(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = mul(x[i], y[i])


def add_both_abis(r, a, b):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = add_from_numba(a[i], b[i]) + add_cabi(a[i], b[i])


@cuda.jit(device=True)
def level2(x):
    return times2(x) + times3(x)


@cuda.jit(device=True)
def level1(x):
    return level2(x) + times2(x)


def through_device_functions(r, x):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = level1(x[i]) + times3(x[i])  # 2x + 3x + 2x + 3x


def calls_nonexistent(r):
    r[0] = nonexistent(r[0])
