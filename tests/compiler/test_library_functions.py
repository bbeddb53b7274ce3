"""Library functions numba-cuda has in device code (issue 42): math.frexp, math.ldexp, math.modf, complex ``**`` and
``pow()``, ``int.bit_count()``, ``divmod()``, ``range`` (its attributes, ``len``, indexing, ``in``, mixed integer types, a zero step at run time), whole-array reductions (``a.sum()``, ``np.amax(a)``...), NumPy's math ufuncs on arrays with an output array
(``np.sin(x, out)``, ``np.add(a, b, out)``, broadcast by NumPy's rules). Compiled on both frontends everywhere (the PTX assembled), and run against NumPy
and Python on fresh random data where kernels run (a GPU, or the CPU target)."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, types
from cujit.errors import TypingError

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
import math
import numpy as np
from cujit import cuda

def float_parts(x, mantissa, exponent, fraction, whole, scaled):
    i = cuda.grid(1)
    if i < x.size:
        m, e = math.frexp(x[i])
        mantissa[i] = m
        exponent[i] = e
        f, w = math.modf(x[i])
        fraction[i] = f
        whole[i] = w
        scaled[i] = math.ldexp(x[i], e - 3)

def complex_power(r, r2, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] ** y[i]
        r2[i] = pow(x[i], y[i])

def divisions(out, a, b, x, y):
    q, r = divmod(a, b)
    out[0] = q
    out[1] = r
    fq, fr = divmod(x, y)
    out[2] = fq
    out[3] = fr

def reductions(out, a):
    out[0] = a.sum()
    out[1] = a.prod()
    out[2] = a.min()
    out[3] = a.max()
    out[4] = a.mean()
    out[5] = np.sum(a) - np.amax(a) + np.min(a)

def ufuncs(x, row, out1, out2, out3, out4, out5, s):
    np.sin(x, out1)
    np.hypot(x, row, out2)  # row broadcast along the first axis
    r = np.sqrt(x, out3)
    r[0, 0] += 1.0  # the value is the output array
    np.add(x, row, out4)  # the arithmetic ufuncs are their operators
    np.maximum(np.multiply(x, 2.0, out5), row, out5)
    s[0] = np.add(1.5, 2) + np.floor_divide(7, 2) + np.minimum(3.0, 1.0)

def bit_counts(out, a, b, c):
    out[0] = a.bit_count()
    out[1] = b.bit_count()
    out[2] = c.bit_count()

def ranges(out, a, b, c, u):
    r = range(a, b, c)
    out[0] = len(r)
    out[1] = r[1] + r[-1]
    out[2] = r.start * 100 + r.stop * 10 + r.step
    out[3] = (a + c) in r
    for x in range(u, a):  # uint32 and int64
        out[4] += x
    for j, x in enumerate(range(b, a, -2)):
        out[5] += j * x
    for x in range(10, 0, c - c):  # a zero step known at run time: no iteration (and no trap)
        out[6] += 1
    for x in r:
        out[7] += x
    else:
        out[8] = len(range(b, a))
"""


def ranges_expected(a, b, c, u):
    r = range(a, b, c)
    out = [len(r), r[1] + r[-1], r.start * 100 + r.stop * 10 + r.step, (a + c) in r, sum(range(u, a)), 0, 0, sum(r)]
    out[5] = sum(j * x for j, x in enumerate(range(b, a, -2)))
    return out + [len(range(b, a))]


SIGS = {
    "float_parts": "void(float32[::1], float32[::1], int32[::1], float32[::1], float32[::1], float32[::1])",
    "complex_power": "void(complex128[::1], complex128[::1], complex128[::1], complex128[::1])",
    "bit_counts": "void(int64[::1], uint8, int32, uint64)",
    "divisions": "void(float64[::1], int64, int64, float64, float64)",
    "ranges": "void(int64[::1], int64, int64, int64, uint32)",
    "reductions": "void(float64[::1], float32[:, :])",
    "ufuncs": "void(float64[:, ::1], float32[::1], float64[:, ::1], float64[:, ::1], float32[:, :], float64[:, ::1], "
    "float64[:, ::1], float64[::1])",
}


@pytest.mark.parametrize("name", list(SIGS))
def test_compiles(frontend, name):
    ptx, _ = cuda.compile_ptx(define(PROGRAM, frontend)[name], SIGS[name], cc=(9, 0))
    assert ".entry" in ptx


def test_reduction_types(frontend):
    src = "def f(a):\n    return a.sum()\ndef g(a):\n    return a.mean()\ndef h(a):\n    return a.max()\n"
    scope = define(src, frontend)
    assert cuda.compile_ptx(scope["f"], "(int32[:],)", device=True)[1] == types.int64
    assert cuda.compile_ptx(scope["f"], "(uint8[:],)", device=True)[1] == types.uint64
    assert cuda.compile_ptx(scope["g"], "(int16[:, :],)", device=True)[1] == types.float64
    assert cuda.compile_ptx(scope["h"], "(float32[::1],)", device=True)[1] == types.float32


def test_a_ufunc_on_arrays_needs_an_output_array(frontend):
    fn = define("import numpy as np\ndef f(x):\n    np.sin(x, 2.0)\n", frontend)["f"]
    with pytest.raises(TypingError, match=r"output array, its last argument") as info:
        cuda.compile_ptx(fn, "void(float64[::1])")
    assert "2.0" in str(info.value) and "^" in str(info.value)


def test_types(frontend):
    src = "import math\ndef f(x):\n    return math.frexp(x)\ndef g(x):\n    return math.modf(x)\n"
    scope = define(src, frontend)
    assert cuda.compile_ptx(scope["f"], "(float64,)", device=True)[1] == types.Tuple((types.float64, types.int32))
    assert cuda.compile_ptx(scope["g"], "(float32,)", device=True)[1] == types.UniTuple(types.float32, 2)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_parts_run(frontend, dtype):
    kernel = cuda.jit(define(PROGRAM, frontend)["float_parts"])
    x = (np.random.default_rng().standard_normal(200) * 1000).astype(dtype)
    out = [np.zeros_like(x), np.zeros(200, np.int32), np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)]
    kernel[2, 128](x, *out)
    mantissa, exponent = np.frexp(x)
    fraction, whole = np.modf(x)
    for got, want in zip(out, [mantissa, exponent, fraction, whole, np.ldexp(x, exponent - 3)]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_run(frontend, dtype):
    kernel = cuda.jit(define(PROGRAM, frontend)["complex_power"])
    rng = np.random.default_rng()
    x = (rng.standard_normal(128) + 1j * rng.standard_normal(128)).astype(dtype)
    y = (rng.standard_normal(128) + 1j * rng.standard_normal(128)).astype(dtype)
    # integral exponents take repeated squaring, as CPython's (float32's rounding after seven squarings is ~1e-4 of
    # x ** 100: complex64 checks a smaller one)
    y[:6] = [0, 1, 2, -3, 10 if dtype == np.complex64 else 100, 0.5]
    r, r2 = np.zeros_like(x), np.zeros_like(x)
    kernel[1, 128](r, r2, x, y)
    rtol = 2e-5 if dtype == np.complex64 else 1e-12
    atol = 1e-30  # (x ** 100 of a small x underflows to subnormals, where only the magnitude is meaningful)
    np.testing.assert_allclose(r, x**y, rtol=rtol, atol=atol)
    np.testing.assert_allclose(r2, x**y, rtol=rtol, atol=atol)  # (contracted to fma apart from **: not bit-equal)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_bit_count_run(frontend):
    kernel = cuda.jit(define(PROGRAM, frontend)["bit_counts"])
    rng = np.random.default_rng()
    a, b, c = np.uint8(rng.integers(0, 256)), np.int32(rng.integers(-(2**31), 2**31)), np.uint64(rng.integers(0, 2**63))
    out = np.zeros(3, np.int64)
    kernel[1, 1](out, a, b, c)
    assert list(out) == [int(a).bit_count(), int(b).bit_count(), int(c).bit_count()]


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_ranges_run(frontend):
    kernel = cuda.jit(define(PROGRAM, frontend)["ranges"])
    rng = np.random.default_rng()
    a, b, c, u = int(rng.integers(0, 10)), int(rng.integers(20, 40)), int(rng.integers(1, 5)), int(rng.integers(0, 5))
    out = np.zeros(9, np.int64)
    kernel[1, 1](out, a, b, c, np.uint32(u))
    assert list(out) == ranges_expected(a, b, c, u)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_divmod_run(frontend):
    kernel = cuda.jit(define(PROGRAM, frontend)["divisions"])
    rng = np.random.default_rng()
    a, b = int(rng.integers(-1000, 1000)), int(rng.choice([-7, -3, 2, 5]))
    x, y = float(rng.standard_normal() * 10), float(rng.choice([-0.75, 0.5, 1.25]))
    out = np.zeros(4)
    kernel[1, 1](out, a, b, x, y)
    np.testing.assert_allclose(out, [*divmod(a, b), *divmod(x, y)])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_reductions_run(frontend):
    kernel = cuda.jit(define(PROGRAM, frontend)["reductions"])
    a = (np.random.default_rng().random((5, 7)) + 0.5).astype(np.float32)[:, ::2]  # a strided view
    out = np.zeros(6)
    kernel[1, 1](out, a)
    expected = [a.sum(), a.prod(), a.min(), a.max(), a.mean(), a.sum() - a.max() + a.min()]
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_ufuncs_run(frontend):
    kernel = cuda.jit(define(PROGRAM, frontend)["ufuncs"])
    rng = np.random.default_rng()
    x, row = rng.random((4, 5)), rng.random(5).astype(np.float32)
    out1, out2, out3 = np.zeros((4, 5)), np.zeros((4, 5)), np.zeros((4, 5), np.float32)
    out4, out5, s = np.zeros((4, 5)), np.zeros((4, 5)), np.zeros(1)
    kernel[1, 1](x, row, out1, out2, out3, out4, out5, s)
    expected3 = np.sqrt(x).astype(np.float32)
    expected3[0, 0] += 1
    np.testing.assert_allclose(out1, np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(out2, np.hypot(x, row), rtol=1e-12)
    np.testing.assert_allclose(out3, expected3, rtol=1e-6)
    np.testing.assert_allclose(out4, x + row, rtol=1e-12)
    np.testing.assert_allclose(out5, np.maximum(x * 2.0, row), rtol=1e-12)
    assert s[0] == np.add(1.5, 2) + np.floor_divide(7, 2) + np.minimum(3.0, 1.0)
