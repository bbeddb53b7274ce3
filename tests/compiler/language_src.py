"""Kernels for the language features (loops with else, enumerate/zip, ranges, membership, tuple
comparisons, the operator module, keyword and default arguments, print, cuda.fp16, cuda.libdevice, grid sync).

Most are single-threaded and use no cuda.* name, so the same Python function run on numpy arrays on the host is
the reference the GPU result is compared with (test_gpu_language.py); test_language_features.py compiles them
all to PTX (assembled by ptxas) without a GPU."""

import cmath
import math
import operator
from operator import add, contains

from cujit import cuda
from cujit.types import float64


def loop_else(a, out):
    # out[0]: index of the first negative item, or -1 (for ... else); out[1]: while ... else count.
    for i in range(a.shape[0]):
        if a[i] < 0:
            out[0] = i
            break
    else:
        out[0] = -1
    n = 0
    while n < a.shape[0]:
        if a[n] > 100:
            break
        n += 1
    else:
        n = n * 10
    out[1] = n
    # a for-each loop with else, and a loop whose test is constant False (only its else runs)
    total = 0.0
    for v in a:
        total += v
    else:
        total += 0.5
    out[2] = total
    while False:
        out[3] = 1
    else:
        out[3] = 7


def enumerate_zip(a, b, m, out):
    s = 0.0
    for i, (x, y) in enumerate(zip(a, b), 1):
        s += i * x * y
    out[0] = s
    for i, row in enumerate(m):  # rows of a 2-D array are views
        acc = 0.0
        for v in row:
            acc += v
        out[1 + i] = acc
    k = 0
    for j, (r, x) in zip(range(10, 20, 3), enumerate(a)):
        out[1 + m.shape[0] + k] = j * 100 + r * 10 + x
        k += 1


def ranges(n, out):
    r = range(2, n, 3)
    out[0] = len(r)
    out[1] = r[-1]
    out[2] = r[1]
    out[3] = 5 in r
    out[4] = (n - 1) not in r
    out[5] = len(range(n, 0, -2))
    out[6] = 4 in range(n, 0, -2)
    out[7] = len((1, 2.0, 3))
    t = 0
    for i in range(n):
        if i in (1, 3, 4):
            t += i
    out[8] = t


def membership(a, out):
    out[0] = a[0] in (1.0, 2.5, 3)
    out[1] = a[1] not in (1.0, 2.5, 3)
    out[2] = int(a[2]) in range(0, 10, 2)


def tuple_compare(a, out):
    t = (a[0], a[1])
    u = (a[2], a[3])
    out[0] = t < u
    out[1] = t <= u
    out[2] = t > u
    out[3] = t >= u
    out[4] = t == u
    out[5] = t != u
    out[6] = (1, 2) < (1, 2, 0)
    out[7] = (int(a[0]), 2.5) == (int(a[0]), 2.5)
    out[8] = (a[0], (a[1], 1)) < (a[0], (a[1], 2))
    out[9] = min((a[0], a[1], a[2]))
    out[10] = max((a[3], a[1]))


def operator_calls(a, out):
    out[0] = operator.add(a[0], a[1])
    out[1] = operator.mul(a[0], 3)
    out[2] = operator.lt(a[0], a[1])
    out[3] = operator.neg(a[2])
    out[4] = contains((1.0, 2.0), a[3])
    out[5] = operator.getitem(a, 4)
    out[6] = add(a[0], 1.5)
    out[7] = operator.truediv(a[1], 4)
    out[8] = operator.floordiv(a[1], 0.75)
    out[9] = operator.not_(a[0] > 0)


@cuda.jit(device=True)
def weighted(x, y=2, z=3.5):
    return x + y * z


def keyword_arguments(a, out):
    out[0] = weighted(a[0])
    out[1] = weighted(a[0], z=a[1])
    out[2] = weighted(y=a[1], x=a[0])
    out[3] = weighted(a[0], a[1], a[2])
    out[4] = weighted(1, z=4)


def math_constants(out):
    out[0] = math.pi
    out[1] = math.e
    out[2] = math.tau
    out[3] = math.inf
    out[4] = -math.inf


def printing(a):
    print("values:", 7, a[0], True, a[0] > 100, -3)
    print(a[1])
    print()


def half_precision(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = cuda.fp16.hadd(x, y)
        out[i, 1] = cuda.fp16.hsub(x, y)
        out[i, 2] = cuda.fp16.hmul(x, y)
        out[i, 3] = cuda.fp16.hdiv(x, y)
        out[i, 4] = cuda.fp16.hfma(x, y, x)
        out[i, 5] = cuda.fp16.hneg(x)
        out[i, 6] = cuda.fp16.habs(y)
        out[i, 7] = cuda.fp16.hsqrt(cuda.fp16.habs(x))
        out[i, 8] = cuda.fp16.hexp(x)
        out[i, 9] = cuda.fp16.hlog(cuda.fp16.habs(y))
        out[i, 10] = cuda.fp16.hsin(x)
        out[i, 11] = cuda.fp16.hcos(x)
        out[i, 12] = cuda.fp16.hmax(x, y)
        out[i, 13] = cuda.fp16.hmin(x, y)
        out[i, 14] = cuda.fp16.hlt(x, y)
        out[i, 15] = cuda.fp16.hge(x, y)
        out[i, 16] = cuda.fp16.hrsqrt(cuda.fp16.habs(x))


def libdevice_calls(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        out[i, 0] = cuda.libdevice.sin(x)
        s, c = cuda.libdevice.sincos(x)
        out[i, 1] = s
        out[i, 2] = c
        m, e = cuda.libdevice.frexp(x)
        out[i, 3] = m
        out[i, 4] = e
        out[i, 5] = cuda.libdevice.fmaf(cuda.float32(x), cuda.float32(2.0), cuda.float32(1.0))
        out[i, 6] = cuda.libdevice.hypot(x, 3.0)
        out[i, 7] = cuda.libdevice.max(int(x * 10), 3)


def grid_sync(a, out):
    # Two phases: every thread writes, the whole grid waits, then every thread reads a neighbour's value,
    # which another block wrote.
    i = cuda.grid(1)
    n = a.shape[0]
    g = cuda.cg.this_grid()
    if i < n:
        a[i] = i * 2 + 1
    g.sync()
    if i < n:
        out[i] = a[(i + cuda.blockDim.x) % n]


if __name__ == "__main__":  # the GPU test's child process: print from a kernel, then synchronise
    import sys

    import numpy as np

    values = np.array([float(sys.argv[1]), float(sys.argv[2])], dtype=np.float32)
    cuda.jit(printing)[1, 1](values)
    cuda.synchronize()


def complex_functions(z, out):
    # out[k, i]: the k-th cmath function of z[i] (one thread per item).
    i = cuda.grid(1)
    if i < z.shape[0]:
        w = z[i]
        out[0, i] = cmath.exp(w)
        out[1, i] = cmath.log(w)
        out[2, i] = cmath.log10(w)
        out[3, i] = cmath.sqrt(w)
        out[4, i] = cmath.sin(w)
        out[5, i] = cmath.cos(w)
        out[6, i] = cmath.tan(w)
        out[7, i] = cmath.sinh(w)
        out[8, i] = cmath.cosh(w)
        out[9, i] = cmath.tanh(w)
        out[10, i] = cmath.asin(w)
        out[11, i] = cmath.acos(w)
        out[12, i] = cmath.atan(w)
        out[13, i] = cmath.asinh(w)
        out[14, i] = cmath.acosh(w)
        out[15, i] = cmath.atanh(w)
        out[16, i] = cmath.log(w, 2 + 1j)


COMPLEX_FUNCTIONS = [
    cmath.exp,
    cmath.log,
    cmath.log10,
    cmath.sqrt,
    cmath.sin,
    cmath.cos,
    cmath.tan,
    cmath.sinh,
    cmath.cosh,
    cmath.tanh,
    cmath.asin,
    cmath.acos,
    cmath.atan,
    cmath.asinh,
    cmath.acosh,
    cmath.atanh,
    lambda w: cmath.log(w, 2 + 1j),
]


def complex_parts(z, r, flags, back):
    # phase, polar, rect and the predicates; single-threaded, so the host runs it as is.
    for i in range(z.shape[0]):
        r[i, 0] = cmath.phase(z[i])
        modulus, angle = cmath.polar(z[i])
        r[i, 1] = modulus
        r[i, 2] = angle
        back[i] = cmath.rect(modulus, angle)
        flags[i, 0] = cmath.isnan(z[i])
        flags[i, 1] = cmath.isinf(z[i])
        flags[i, 2] = cmath.isfinite(z[i])


@cuda.jit(device=True)
def first_index(a, x):
    # Returns on some paths and falls off the end on others: typed Optional(int64), as numba does.
    for i in range(a.shape[0]):
        if a[i] == x:
            return i


@cuda.jit(device=True)
def positive_half(x):
    if x > 0:
        return x / 2
    return None


def optional_results(a, targets, out, halves):
    # out[k]: index of targets[k] in a, or -1; halves[k]: targets[k] / 2 when positive, else -99.
    k = cuda.grid(1)
    if k < targets.shape[0]:
        r = first_index(a, targets[k])
        if r is None:
            out[k] = -1
        else:
            out[k] = r
        h = positive_half(targets[k])
        halves[k] = h if h is not None else -99.0
        m = None
        if targets[k] > 0:
            m = k
        if m is not None and out[k] >= 0:
            out[k] += 0 * m


def bfloat16_ops(a, b, out, flags, ints):
    # a, b: float32 inputs; out[k, i] float32 results of bfloat16 work; flags: comparisons; ints: conversions.
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = cuda.bf16.float32_to_bfloat16(a[i])
        y = cuda.bf16.bfloat16(b[i])
        out[0, i] = cuda.bf16.bfloat16_to_float32(x)
        out[1, i] = x + y
        out[2, i] = x - y
        out[3, i] = x * y
        out[4, i] = x / y
        out[5, i] = -x
        out[6, i] = cuda.bf16.hfma(x, y, x)
        out[7, i] = cuda.bf16.habs(x)
        out[8, i] = cuda.bf16.hmax(x, y)
        out[9, i] = cuda.bf16.hsqrt(cuda.bf16.habs(x))
        out[10, i] = cuda.bf16.hexp(x)
        out[11, i] = cuda.bf16.hadd_sat(x, y)
        out[12, i] = cuda.bf16.float32_to_bfloat16_rz(a[i])
        out[13, i] = cuda.bf16.float32_to_bfloat16_ru(a[i])
        out[14, i] = cuda.bf16.float32_to_bfloat16_rd(a[i])
        out[15, i] = cuda.bf16.float64_to_bfloat16(float64(a[i]) + float64(b[i]) * 1e-5)
        flags[0, i] = x < y
        flags[1, i] = cuda.bf16.heq(x, y)
        flags[2, i] = cuda.bf16.hisnan(x)
        ints[0, i] = cuda.bf16.bfloat16_to_int32_rn(x * y)
        ints[1, i] = cuda.bf16.bfloat16_to_int32_rz(x * y)
        ints[2, i] = cuda.bf16.bfloat16_as_int16(x)


def elif_dispatch(codes, out):
    # An elif chain over one integer (lowered as a switch): a repeated constant's later branch is never taken,
    # a test on another variable ends the chain, and the else catches the rest.
    for i in range(codes.size):
        c = codes[i]
        if c == 0:
            r = 10
        elif c == -3:
            r = 20
        elif c == 2:
            r = 30
        elif c == 2:
            r = 99
        elif c == 7:
            r = 40
        elif i == 5:
            r = 50
        elif c == 9:
            r = 60
        else:
            r = -1
        out[i] = r
