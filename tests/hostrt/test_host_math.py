"""libdevice's math on the CPU target (hostgen/host_math*.cpp): every __nv_* function cujit's lowering can call
has a host implementation (the table covers numba-cuda's cuda.libdevice list), and kernels compiled with
``cuda.jit(target="cpu")`` give results within the ulps docs/cpu_target.md states, against numpy, Python's math
and exact references (fractions for the rounding-mode variants, Python integers for the integer intrinsics) on
fresh random data. No GPU needed."""

import math
import os
import re
from fractions import Fraction

import numpy as np
import pytest

from cujit import _core, cuda

F4, F8, I4, I8, U4, U8 = np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64
N = 400
pytestmark = pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning")
INC = os.path.join(os.path.dirname(__file__), "..", "..", "cpp", "src", "intrinsics", "libdevice_functions.inc")
LD_PI = np.longdouble("3.14159265358979323846264338327950288")


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def libdevice_names():
    with open(INC) as f:
        return re.findall(r"^CUJIT_LIBDEVICE\((\w+),", f.read(), flags=re.M)


def test_every_libdevice_function_has_a_host_implementation():
    have = set(_core.host_math_functions())
    missing = [n for n in libdevice_names() if "__nv_" + n not in have]
    assert not missing, f"no host implementation of {missing}"
    assert len(libdevice_names()) > 300


# ---- kernels: out[i] = f(a[i], ...) with f from the closure (a cuda.libdevice function or a math one) --------


def map_kernel(fn, nargs, target="cpu"):
    if nargs == 1:

        @cuda.jit(target=target)
        def k1(out, a):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = fn(a[i])

        return k1
    if nargs == 2:

        @cuda.jit(target=target)
        def k2(out, a, b):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = fn(a[i], b[i])

        return k2

    @cuda.jit(target=target)
    def k3(out, a, b, c):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fn(a[i], b[i], c[i])

    return k3


def run(fn, out_dtype, *args):
    out = np.zeros(len(args[0]), out_dtype)
    map_kernel(fn, len(args))[(len(out) + 63) // 64, 64](out, *args)
    return out


def assert_ulp(got, want, maxulp, what):
    got, want = np.asarray(got), np.asarray(want).astype(got.dtype)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), f"{what}: NaNs differ"
    if maxulp == 0:
        np.testing.assert_array_equal(got[~nan], want[~nan], err_msg=what)
    else:
        np.testing.assert_array_max_ulp(got[~nan], want[~nan], maxulp=maxulp)


def floats(rng, dtype, lo, hi, n=N):
    return rng.uniform(lo, hi, n).astype(dtype)


# ---- the math module (lowered to libdevice calls): the GPU tests' domains and bounds ----------------------

WIDE = (-100.0, 100.0)
MATH_CASES = {  # name: (math function, float64 reference, argument domains)
    "sin": (math.sin, np.sin, [WIDE]),
    "cos": (math.cos, np.cos, [WIDE]),
    "tan": (math.tan, np.tan, [WIDE]),
    "asin": (math.asin, np.arcsin, [(-1, 1)]),
    "acos": (math.acos, np.arccos, [(-1, 1)]),
    "atan": (math.atan, np.arctan, [(-1e3, 1e3)]),
    "atan2": (math.atan2, np.arctan2, [(-10, 10), (-10, 10)]),
    "sinh": (math.sinh, np.sinh, [(-20, 20)]),
    "cosh": (math.cosh, np.cosh, [(-20, 20)]),
    "tanh": (math.tanh, np.tanh, [(-10, 10)]),
    "exp": (math.exp, np.exp, [(-50, 50)]),
    "expm1": (math.expm1, np.expm1, [(-5, 5)]),
    "log": (math.log, np.log, [(1e-5, 1e5)]),
    "log1p": (math.log1p, np.log1p, [(-0.9, 10)]),
    "log2": (math.log2, np.log2, [(1e-5, 1e5)]),
    "log10": (math.log10, np.log10, [(1e-5, 1e5)]),
    "pow": (math.pow, np.power, [(0.01, 10), (-8, 8)]),
    "hypot": (math.hypot, np.hypot, [(-1e3, 1e3), (-1e3, 1e3)]),
    "fmod": (math.fmod, np.fmod, [WIDE, (0.5, 10)]),
    "erf": (math.erf, np.vectorize(math.erf), [(-5, 5)]),
    "erfc": (math.erfc, np.vectorize(math.erfc), [(-2, 8)]),
    "gamma": (math.gamma, np.vectorize(math.gamma), [(0.5, 20)]),
    "lgamma": (math.lgamma, np.vectorize(math.lgamma), [(2.5, 100)]),
}
# The GPU tests' bounds (tests/compiler/test_gpu_kernels.py, MAXULP_F64/F32 without mpmath): the host's libm is
# within them too.
MAXULP_F64 = {"erf": 3, "erfc": 8, "gamma": 17, "lgamma": 34, "fmod": 0}
MAXULP_F32 = {"tan": 5, "pow": 5, "erfc": 5, "gamma": 6, "lgamma": 7, "fmod": 0}


@pytest.mark.parametrize("dtype", [F8, F4], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(MATH_CASES))
def test_math_module_functions(rng, name, dtype):
    fn, ref, domains = MATH_CASES[name]
    xs = [floats(rng, dtype, lo, hi) for lo, hi in domains]
    got = run(fn, dtype, *xs)
    want = np.asarray(ref(*(x.astype(F8) for x in xs))).astype(dtype)
    maxulp = MAXULP_F64.get(name, 2) if dtype is F8 else MAXULP_F32.get(name, 4)
    assert_ulp(got, want, maxulp, f"math.{name} ({np.dtype(dtype).name})")


def test_float16_math_and_arithmetic(rng):
    a = floats(rng, np.float16, 0.1, 4)
    b = floats(rng, np.float16, 0.1, 4)

    @cuda.jit(target="cpu")
    def half_ops(out, a, b):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i, 0] = a[i] + b[i]
            out[i, 1] = a[i] * b[i]
            out[i, 2] = a[i] / b[i]
            out[i, 3] = math.sqrt(a[i])
            out[i, 4] = math.exp(a[i])
            out[i, 5] = cuda.fp16.hmul(a[i], b[i])
            out[i, 6] = cuda.fp16.hexp(a[i])
            out[i, 7] = cuda.fp16.hsin(b[i])

    out = np.zeros((N, 8), np.float16)
    half_ops[(N + 63) // 64, 64](out, a, b)
    a8, b8 = a.astype(F8), b.astype(F8)
    want = [a8 + b8, a8 * b8, a8 / b8, np.sqrt(a8), np.exp(a8), a8 * b8, np.exp(a8), np.sin(b8)]
    for column, w in enumerate(want):
        assert_ulp(out[:, column], w.astype(np.float16), 1, f"float16 column {column}")


# ---- cuda.libdevice: float functions against numpy / math / long double references ----------------------


def ld_sinpi(x):
    r = np.fmod(x.astype(np.longdouble), 2)
    return np.sin(LD_PI * r)


def ld_cospi(x):
    r = np.fmod(x.astype(np.longdouble), 2)
    return np.cos(LD_PI * r)


def round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


UNARY = {  # base name: (reference on float64, domain, max ulp float64, max ulp float32)
    "acos": (np.arccos, (-1, 1), 2, 2),
    "acosh": (np.arccosh, (1, 1e3), 2, 2),
    "asin": (np.arcsin, (-1, 1), 2, 2),
    "asinh": (np.arcsinh, (-1e3, 1e3), 2, 2),
    "atan": (np.arctan, (-1e3, 1e3), 2, 2),
    "atanh": (np.arctanh, (-0.99, 0.99), 2, 2),
    "cbrt": (np.cbrt, (-1e3, 1e3), 2, 1),
    "ceil": (np.ceil, WIDE, 0, 0),
    "cos": (np.cos, WIDE, 2, 2),
    "cosh": (np.cosh, (-20, 20), 2, 2),
    "cospi": (ld_cospi, (-0.45, 0.45), 1, 1),
    "erf": (np.vectorize(math.erf), (-5, 5), 2, 2),
    "erfc": (np.vectorize(math.erfc), (-2, 8), 5, 4),
    "exp": (np.exp, (-50, 50), 1, 1),
    "exp10": (lambda x: 10.0**x, (-20, 20), 2, 2),
    "exp2": (np.exp2, (-50, 50), 1, 1),
    "expm1": (np.expm1, (-5, 5), 1, 1),
    "fabs": (np.fabs, WIDE, 0, 0),
    "floor": (np.floor, WIDE, 0, 0),
    "lgamma": (np.vectorize(math.lgamma), (2.5, 100), 34, 7),
    "log": (np.log, (1e-5, 1e5), 1, 1),
    "log10": (np.log10, (1e-5, 1e5), 1, 1),
    "log1p": (np.log1p, (-0.9, 10), 1, 1),
    "log2": (np.log2, (1e-5, 1e5), 1, 1),
    "logb": (lambda x: np.floor(np.log2(np.abs(x))), WIDE, 0, 0),
    "nearbyint": (np.rint, WIDE, 0, 0),
    "rint": (np.rint, WIDE, 0, 0),
    "round": (round_half_away, WIDE, 0, 0),
    "rcbrt": (lambda x: 1 / np.cbrt(x.astype(np.longdouble)), (-1e3, 1e3), 1, 1),
    "rsqrt": (lambda x: 1 / np.sqrt(x.astype(np.longdouble)), (1e-3, 1e3), 1, 1),
    "sin": (np.sin, WIDE, 2, 2),
    "sinh": (np.sinh, (-20, 20), 2, 2),
    "sinpi": (ld_sinpi, (-0.9, 0.9), 1, 1),
    "sqrt": (np.sqrt, (0, 1e6), 0, 0),
    "tan": (np.tan, WIDE, 2, 2),
    "tanh": (np.tanh, (-10, 10), 2, 2),
    "tgamma": (np.vectorize(math.gamma), (0.5, 20), 17, 6),
    "trunc": (np.trunc, WIDE, 0, 0),
    # normcdf's reference rounds -x/sqrt(2) first, which costs it up to 4 x^2 ulp.
    "normcdf": (lambda x: 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2)), (-2, 2), 16, 2),
    "erfcx": (lambda x: np.exp(x.astype(np.longdouble) ** 2) * np.vectorize(math.erfc)(x), (-3, 3), 64, 2),
}


@pytest.mark.parametrize("dtype", [F8, F4], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(UNARY))
def test_libdevice_unary(rng, name, dtype):
    ref, (lo, hi), ulp8, ulp4 = UNARY[name]
    fn = getattr(cuda.libdevice, name if dtype is F8 else name + "f")
    x = floats(rng, dtype, lo, hi)
    got = run(fn, dtype, x)
    want = np.asarray(ref(x.astype(F8)), dtype=np.longdouble).astype(dtype)
    assert_ulp(
        got, want, ulp8 if dtype is F8 else ulp4, f"libdevice.{fn.__name__ if hasattr(fn, '__name__') else name}"
    )


def test_libdevice_inverse_functions(rng):
    y = rng.uniform(-2.5, 2.5, N)
    x = np.array([math.erf(v) for v in y])
    np.testing.assert_allclose(run(cuda.libdevice.erfinv, F8, x), y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(run(cuda.libdevice.erfinvf, F4, x.astype(F4)), y, rtol=3e-5, atol=1e-6)
    y = rng.uniform(-2, 8, N)
    z = np.array([math.erfc(v) for v in y])
    np.testing.assert_allclose(run(cuda.libdevice.erfcinv, F8, z), y, rtol=1e-12, atol=1e-14)
    y = rng.uniform(-8, 1, N)  # p below 0.85: its rounding keeps y well defined
    p = 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in y])
    ok = (p > 0) & (p < 1)
    np.testing.assert_allclose(run(cuda.libdevice.normcdfinv, F8, p[ok]), y[ok], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(run(cuda.libdevice.normcdfinvf, F4, p[ok].astype(F4)), y[ok], rtol=1e-4, atol=1e-5)
    specials = np.array([0.0, 1.0, -1.0, 2.0, np.nan])
    got = run(cuda.libdevice.erfinv, F8, specials[:3])
    assert got[0] == 0 and got[1] == np.inf and got[2] == -np.inf
    got = run(cuda.libdevice.erfcinv, F8, np.array([0.0, 2.0, 1.0, -0.5]))
    assert got[0] == np.inf and got[1] == -np.inf and got[2] == 0 and np.isnan(got[3])


BINARY = {  # base name: (reference, domain a, domain b, max ulp)
    "atan2": (np.arctan2, (-10, 10), (-10, 10), 2),
    "copysign": (np.copysign, WIDE, WIDE, 0),
    "fdim": (lambda a, b: np.maximum(a - b, 0), WIDE, WIDE, 0),
    "fmod": (np.fmod, WIDE, (0.5, 10), 0),
    "hypot": (np.hypot, (-1e3, 1e3), (-1e3, 1e3), 1),
    "nextafter": (np.nextafter, WIDE, WIDE, 0),
    "pow": (np.power, (0.01, 10), (-8, 8), 2),
    "remainder": (np.vectorize(math.remainder), WIDE, (0.5, 10), 0),
    "fmax": (np.fmax, WIDE, WIDE, 0),
    "fmin": (np.fmin, WIDE, WIDE, 0),
}


@pytest.mark.parametrize("dtype", [F8, F4], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(BINARY))
def test_libdevice_binary(rng, name, dtype):
    ref, da, db, ulp = BINARY[name]
    fn = getattr(cuda.libdevice, name if dtype is F8 else name + "f")
    a, b = floats(rng, dtype, *da), floats(rng, dtype, *db)
    want = np.asarray(ref(a.astype(F8), b.astype(F8)))
    if name == "nextafter":
        want = np.nextafter(a, b)
    assert_ulp(run(fn, dtype, a, b), want.astype(dtype), ulp if dtype is F8 else max(ulp, 0), name)


def test_libdevice_fma_powi_ldexp_and_classification(rng):
    a, b, c = (floats(rng, F8, -10, 10) for _ in range(3))
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    assert_ulp(run(cuda.libdevice.fma, F8, a, b, c), np.array(exact), 0, "fma")
    n = rng.integers(-6, 7, N).astype(I4)
    assert_ulp(run(cuda.libdevice.powi, F8, a, n), np.power(a, n.astype(F8)), 2, "powi")
    a4 = a.astype(F4)
    assert_ulp(run(cuda.libdevice.powif, F4, a4, n), np.power(a4.astype(F8), n).astype(F4), 1, "powif")
    assert_ulp(run(cuda.libdevice.ldexp, F8, a, n), np.ldexp(a, n), 0, "ldexp")
    assert_ulp(run(cuda.libdevice.scalbnf, F4, a.astype(F4), n), np.ldexp(a.astype(F4), n), 0, "scalbnf")
    nz = a[a != 0]
    np.testing.assert_array_equal(run(cuda.libdevice.ilogb, I4, nz), np.frexp(nz)[1] - 1)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5], F8)
    for name, ref in [("isnand", np.isnan), ("isinfd", np.isinf), ("isfinited", np.isfinite), ("signbitd", np.signbit)]:
        np.testing.assert_array_equal(run(getattr(cuda.libdevice, name), I4, special), ref(special).astype(I4))
    for name, ref in [("isnanf", np.isnan), ("isinff", np.isinf), ("finitef", np.isfinite), ("signbitf", np.signbit)]:
        s4 = special.astype(F4)
        np.testing.assert_array_equal(run(getattr(cuda.libdevice, name), I4, s4), ref(s4).astype(I4))
    sat = np.array([np.nan, -1.0, 0.25, 2.0, np.inf], F4)
    np.testing.assert_array_equal(run(cuda.libdevice.saturatef, F4, sat), [0, 0, 0.25, 1, 1])
    x = floats(rng, F8, 0.1, 30)
    np.testing.assert_array_equal(run(cuda.libdevice.jn, F8, np.zeros(N, I4), x), run(cuda.libdevice.j0, F8, x))
    np.testing.assert_array_equal(run(cuda.libdevice.yn, F8, np.ones(N, I4), x), run(cuda.libdevice.y1, F8, x))
    np.testing.assert_allclose(run(cuda.libdevice.j0, F8, np.array([2.404825557695773])), [0.0], atol=1e-15)


def test_libdevice_functions_with_out_parameters(rng):
    @cuda.jit(target="cpu")
    def outs(a, b, f, e):
        i = cuda.grid(1)
        if i < a.size:
            f[i, 0], e[i, 0] = cuda.libdevice.frexp(a[i])
            f[i, 1], f[i, 2] = cuda.libdevice.modf(a[i])
            f[i, 3], e[i, 1] = cuda.libdevice.remquo(a[i], b[i])
            f[i, 4], f[i, 5] = cuda.libdevice.sincos(a[i])
            f[i, 6], f[i, 7] = cuda.libdevice.sincospi(a[i])

    a, b = floats(rng, F8, -50, 50), floats(rng, F8, 0.5, 5)
    f, e = np.zeros((N, 8)), np.zeros((N, 2), I4)
    outs[(N + 63) // 64, 64](a, b, f, e)
    m, ex = np.frexp(a)
    np.testing.assert_array_equal(f[:, 0], m)
    np.testing.assert_array_equal(e[:, 0], ex)
    frac, whole = np.modf(a)
    np.testing.assert_array_equal(f[:, 1], frac)  # C's modf: the fraction returned, the whole part stored
    np.testing.assert_array_equal(f[:, 2], whole)
    np.testing.assert_array_equal(f[:, 3], [math.remainder(x, y) for x, y in zip(a, b)])
    quot = np.rint(a / b)  # remquo's quotient bits: at least the low three, with the quotient's sign
    np.testing.assert_array_equal(e[:, 1] % 8, quot.astype(I8) % 8)
    assert_ulp(f[:, 4], np.sin(a), 1, "sincos")
    assert_ulp(f[:, 5], np.cos(a), 1, "sincos")
    # (the long double reference loses digits near the zeros of sin(pi x) and cos(pi x): an absolute bound)
    np.testing.assert_allclose(f[:, 6], ld_sinpi(a).astype(F8), rtol=2.3e-16, atol=1e-17)
    np.testing.assert_allclose(f[:, 7], ld_cospi(a).astype(F8), rtol=2.3e-16, atol=1e-17)


def test_fast_math_variants_are_the_accurate_functions(rng):
    x = floats(rng, F4, 0.1, 10)
    for name, ref in [
        ("sinf", np.sin),
        ("cosf", np.cos),
        ("tanf", np.tan),
        ("expf", np.exp),
        ("exp10f", lambda v: 10.0**v),
        ("logf", np.log),
        ("log2f", np.log2),
        ("log10f", np.log10),
    ]:
        assert_ulp(run(getattr(cuda.libdevice, "fast_" + name), F4, x), ref(x.astype(F8)).astype(F4), 2, name)
    assert_ulp(run(cuda.libdevice.fast_powf, F4, x, x), np.power(x.astype(F8), x).astype(F4), 2, "powf")
    assert_ulp(run(cuda.libdevice.fast_fdividef, F4, x, x + 1), x / (x + 1), 0, "fdividef")

    @cuda.jit(target="cpu", fastmath=True)
    def fast(out, x):  # fastmath=True lowers math.sin on float32 to __nv_fast_sinf
        i = cuda.grid(1)
        if i < x.size:
            out[i] = math.sin(x[i]) + math.exp(x[i])

    out = np.zeros(N, F4)
    fast[(N + 63) // 64, 64](out, x)
    np.testing.assert_allclose(out, np.sin(x.astype(F8)) + np.exp(x.astype(F8)), rtol=1e-6, atol=1e-6)


# ---- rounding-mode variants: exact against fractions ---------------------------------------------------


def directed(value, dtype, mode):
    """The exact rational `value` rounded to dtype: rn (ties to even), rz, rd, ru."""
    info = np.finfo(dtype)
    g = dtype(float(value))
    if np.isinf(g):
        g = info.max if g > 0 else -info.max
    while Fraction(float(g)) > value:
        g = np.nextafter(g, dtype(-np.inf))
    while Fraction(float(np.nextafter(g, dtype(np.inf)))) <= value:
        g = np.nextafter(g, dtype(np.inf))
    down, up = g, (g if Fraction(float(g)) == value else np.nextafter(g, dtype(np.inf)))
    if mode == "rd":
        return down
    if mode == "ru":
        return up
    if mode == "rz":
        return down if value >= 0 else up
    dd, du = value - Fraction(float(down)), Fraction(float(up)) - value
    if dd != du:
        return down if dd < du else up
    return down if int(np.frombuffer(np.array(down).tobytes(), np.uint8)[0]) % 2 == 0 else up


OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_rounding_mode_arithmetic(rng, mode):
    n = 64
    a8, b8, c8 = (rng.uniform(-1e3, 1e3, n) for _ in range(3))
    a4, b4, c4 = a8.astype(F4), b8.astype(F4), c8.astype(F4)
    for prefix, dtype, a, b, names in [
        ("f", F4, a4, b4, ["add", "sub", "mul", "div"]),
        ("d", F8, a8, b8, ["add", "mul", "div"]),
    ]:
        for op in names:
            got = run(getattr(cuda.libdevice, f"{prefix}{op}_{mode}"), dtype, a, b)
            want = [directed(OPS[op](Fraction(float(x)), Fraction(float(y))), dtype, mode) for x, y in zip(a, b)]
            np.testing.assert_array_equal(got, np.array(want, dtype), err_msg=f"{prefix}{op}_{mode}")
        rcp = "frcp" if dtype is F4 else "drcp"
        got = run(getattr(cuda.libdevice, f"{rcp}_{mode}"), dtype, a)
        np.testing.assert_array_equal(got, [directed(1 / Fraction(float(x)), dtype, mode) for x in a])
    for name, dtype, a, b, c in [("fmaf", F4, a4, b4, c4), ("fma", F8, a8, b8, c8)]:
        got = run(getattr(cuda.libdevice, f"{name}_{mode}"), dtype, a, b, c)
        want = [
            directed(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), dtype, mode)
            for x, y, z in zip(a, b, c)
        ]
        np.testing.assert_array_equal(got, np.array(want, dtype), err_msg=f"{name}_{mode}")
    for name, dtype, a in [("fsqrt", F4, np.abs(a4)), ("dsqrt", F8, np.abs(a8))]:
        got = run(getattr(cuda.libdevice, f"{name}_{mode}"), dtype, a)
        for g, x in zip(got, a):  # the rounded root r: r^2 on the right side of x, its neighbour's on the other
            assert g == directed(Fraction(float(np.sqrt(np.longdouble(x)))), dtype, mode) or _sqrt_bracket(
                g, x, dtype, mode
            ), f"{name}_{mode}({x}) = {g}"


def _sqrt_bracket(g, x, dtype, mode):
    lo, hi = np.nextafter(g, dtype(-np.inf)), np.nextafter(g, dtype(np.inf))
    sq = lambda v: Fraction(float(v)) ** 2  # noqa: E731
    fx = Fraction(float(x))
    if mode == "rd" or (mode == "rz"):
        return sq(g) <= fx < sq(hi)
    if mode == "ru":
        return sq(lo) < fx <= sq(g)
    return True


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_rounding_mode_conversions(rng, mode):
    n = 64
    d = np.concatenate([rng.uniform(-1e4, 1e4, n - 6), [np.nan, 1e30, -1e30, 2.5, -2.5, 3.5]])
    rounders = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}
    for name, src, dtype, lo, hi in [
        ("double2int", F8, I4, -(2**31), 2**31 - 1),
        ("double2uint", F8, U4, 0, 2**32 - 1),
        ("double2ll", F8, I8, -(2**63), 2**63 - 1),
        ("double2ull", F8, U8, 0, 2**64 - 1),
        ("float2int", F4, I4, -(2**31), 2**31 - 1),
        ("float2uint", F4, U4, 0, 2**32 - 1),
        ("float2ll", F4, I8, -(2**63), 2**63 - 1),
        ("float2ull", F4, U8, 0, 2**64 - 1),
    ]:
        x = d.astype(src)
        fn = getattr(cuda.libdevice, f"{name}_{mode}")
        got = run(fn, I8 if dtype in (I4, U4) else dtype, x)
        want = [0 if math.isnan(v) else min(max(int(rounders[mode](v)), lo), hi) for v in x.astype(F8)]
        assert [int(g) & ((1 << (8 * np.dtype(dtype).itemsize)) - 1) for g in got] == [
            w & ((1 << (8 * np.dtype(dtype).itemsize)) - 1) for w in want
        ], f"{name}_{mode}"
    big = rng.integers(-(2**62), 2**62, n, dtype=I8)
    for name, src, dtype in [("ll2float", I8, F4), ("ll2double", I8, F8), ("int2float", I4, F4)]:
        x = (big >> 32).astype(I4) if src is I4 else big
        got = run(getattr(cuda.libdevice, f"{name}_{mode}"), dtype, x)
        np.testing.assert_array_equal(got, [directed(Fraction(int(v)), dtype, mode) for v in x], err_msg=name)
    ubig = big.view(U8)
    for name, dtype in [("ull2float", F4), ("ull2double", F8)]:
        got = run(getattr(cuda.libdevice, f"{name}_{mode}"), dtype, ubig)
        np.testing.assert_array_equal(got, [directed(Fraction(int(v)), dtype, mode) for v in ubig], err_msg=name)
    u32 = (big >> 30).astype(U4)
    got = run(getattr(cuda.libdevice, f"uint2float_{mode}"), F4, u32.view(I4))
    np.testing.assert_array_equal(got, [directed(Fraction(int(v)), F4, mode) for v in u32])
    got = run(getattr(cuda.libdevice, f"double2float_{mode}"), F4, d[:-6])
    np.testing.assert_array_equal(got, [directed(Fraction(float(v)), F4, mode) for v in d[:-6]])


# ---- integer intrinsics, bit casts, half conversions: exact ----------------------------------------------


def i32(v):
    return ((int(v) + 2**31) % 2**32) - 2**31


def u32(v):
    return int(v) % 2**32


def brev(v, bits):
    return int(format(int(v) % 2**bits, f"0{bits}b")[::-1], 2)


INTEGER = {  # name: (argument dtypes, result dtype, Python reference on Python ints)
    "abs": ((I4,), I4, lambda x: i32(abs(x))),
    "llabs": ((I8,), I8, lambda x: abs(x) if x > -(2**63) else x),
    "brev": ((I4,), I4, lambda x: i32(brev(x, 32))),
    "brevll": ((I8,), I8, lambda x: brev(x, 64) - (brev(x, 64) >> 63 << 64)),
    "clz": ((I4,), I4, lambda x: 32 - (x % 2**32).bit_length()),
    "clzll": ((I8,), I4, lambda x: 64 - (x % 2**64).bit_length()),
    "ffs": ((I4,), I4, lambda x: (x & -x).bit_length()),
    "ffsll": ((I8,), I4, lambda x: (x & -x).bit_length()),
    "popc": ((I4,), I4, lambda x: bin(x % 2**32).count("1")),
    "popcll": ((I8,), I4, lambda x: bin(x % 2**64).count("1")),
    "hadd": ((I4, I4), I4, lambda x, y: (x + y) >> 1),
    "rhadd": ((I4, I4), I4, lambda x, y: (x + y + 1) >> 1),
    "uhadd": ((I4, I4), I4, lambda x, y: i32((u32(x) + u32(y)) >> 1)),
    "urhadd": ((I4, I4), I4, lambda x, y: i32((u32(x) + u32(y) + 1) >> 1)),
    "max": ((I4, I4), I4, max),
    "min": ((I4, I4), I4, min),
    "umax": ((I4, I4), I4, lambda x, y: i32(max(u32(x), u32(y)))),
    "umin": ((I4, I4), I4, lambda x, y: i32(min(u32(x), u32(y)))),
    "llmax": ((I8, I8), I8, max),
    "llmin": ((I8, I8), I8, min),
    "mulhi": ((I4, I4), I4, lambda x, y: (x * y) >> 32),
    "umulhi": ((I4, I4), I4, lambda x, y: i32((u32(x) * u32(y)) >> 32)),
    "mul64hi": ((I8, I8), I8, lambda x, y: (x * y) >> 64),
    "umul64hi": (
        (I8, I8),
        I8,
        lambda x, y: ((x % 2**64) * (y % 2**64) >> 64) - (((x % 2**64) * (y % 2**64) >> 127) << 64),
    ),
    "mul24": ((I4, I4), I4, lambda x, y: i32((i32(x << 8) >> 8) * (i32(y << 8) >> 8))),
    "umul24": ((I4, I4), I4, lambda x, y: i32((x % 2**24) * (y % 2**24))),
    "sad": ((I4, I4, I4), I4, lambda x, y, z: i32(abs(x - y) + u32(z))),
    "usad": ((I4, I4, I4), I4, lambda x, y, z: i32(abs(u32(x) - u32(y)) + u32(z))),
    "byte_perm": (
        (I4, I4, I4),
        I4,
        lambda x, y, s: i32(
            sum((((u32(y) << 32 | u32(x)) >> (8 * ((s >> (4 * k)) & 7))) & 0xFF) << (8 * k) for k in range(4))
        ),
    ),
}


@pytest.mark.parametrize("name", list(INTEGER))
def test_libdevice_integer_intrinsics(rng, name):
    argtypes, result, ref = INTEGER[name]
    args = []
    for t in argtypes:
        info = np.iinfo(t)
        v = rng.integers(info.min, info.max, N, dtype=t, endpoint=True)
        v[:4] = [0, -1, info.min, info.max]
        args.append(v)
    got = run(getattr(cuda.libdevice, name), result, *args)
    want = [ref(*(int(a[i]) for a in args)) for i in range(N)]
    assert [int(g) for g in got] == want, name


def test_bit_casts_and_half_conversions(rng):
    d = rng.standard_normal(N) * 1e3
    bits = d.view(I8)
    np.testing.assert_array_equal(run(cuda.libdevice.double_as_longlong, I8, d), bits)
    np.testing.assert_array_equal(run(cuda.libdevice.longlong_as_double, F8, bits), d)
    np.testing.assert_array_equal(run(cuda.libdevice.double2hiint, I4, d), (bits >> 32).astype(I4))
    np.testing.assert_array_equal(run(cuda.libdevice.double2loint, I4, d), bits.astype(I4))
    np.testing.assert_array_equal(run(cuda.libdevice.hiloint2double, F8, (bits >> 32).astype(I4), bits.astype(I4)), d)
    f = d.astype(F4)
    np.testing.assert_array_equal(run(cuda.libdevice.float_as_int, I4, f), f.view(I4))
    np.testing.assert_array_equal(run(cuda.libdevice.int_as_float, F4, f.view(I4)), f)
    h = (rng.standard_normal(N) * 100).astype(F4)
    np.testing.assert_array_equal(run(cuda.libdevice.float2half_rn, np.int16, h), h.astype(np.float16).view(np.int16))
    halves = h.astype(np.float16)
    np.testing.assert_array_equal(run(cuda.libdevice.half2float, F4, halves.view(np.int16)), halves.astype(F4))


def test_bfloat16_functions(rng):
    from cujit.cuda import bf16

    @cuda.jit(target="cpu")
    def bf(out, x):
        i = cuda.grid(1)
        if i < x.size:
            a = bf16.bfloat16(x[i])
            out[i, 0] = F4(bf16.hsin(a))
            out[i, 1] = F4(bf16.hexp(a))
            out[i, 2] = F4(bf16.hsqrt(a))
            out[i, 3] = F4(a * a + a)

    x = floats(rng, F4, 0.1, 4)
    out = np.zeros((N, 4), F4)
    bf[(N + 63) // 64, 64](out, x)
    a = x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)  # x rounded to bfloat16 (nearest even)
    a = (a & 0xFFFF0000).view(F4).astype(F8)
    for column, want in enumerate([np.sin(a), np.exp(a), np.sqrt(a), a * a + a]):
        np.testing.assert_allclose(out[:, column], want, rtol=2**-7, err_msg=f"bfloat16 column {column}")


FP16_UNARY = {
    "hsqrt": np.sqrt,
    "hceil": np.ceil,
    "hfloor": np.floor,
    "hrint": np.rint,
    "htrunc": np.trunc,
    "hexp2": np.exp2,
    "hlog2": np.log2,
    "hexp": np.exp,
    "hexp10": lambda x: 10.0**x,
    "hlog": np.log,
    "hlog10": np.log10,
    "hsin": np.sin,
    "hcos": np.cos,
    "hrsqrt": lambda x: 1 / np.sqrt(x),
    "hrcp": lambda x: 1 / x,
    "hneg": np.negative,
    "habs": np.abs,
}
FP16_BINARY = {
    "hadd": np.add,
    "hsub": np.subtract,
    "hmul": np.multiply,
    "hdiv": np.divide,
    "hmax": np.fmax,
    "hmin": np.fmin,
}


@pytest.mark.parametrize("name", list(FP16_UNARY) + list(FP16_BINARY))
def test_every_fp16_function(rng, name):
    fn = getattr(cuda.fp16, name)
    a = floats(rng, np.float16, 0.1, 4)
    b = floats(rng, np.float16, 0.1, 4)
    if name in FP16_UNARY:
        got, want = run(fn, np.float16, a), FP16_UNARY[name](a.astype(F8))
    else:
        got, want = run(fn, np.float16, a, b), FP16_BINARY[name](a.astype(F8), b.astype(F8))
    assert_ulp(got, want.astype(np.float16), 1, f"cuda.fp16.{name}")
    if name == "hmax":
        assert run(fn, np.float16, np.array([np.nan], np.float16), np.array([2], np.float16))[0] == 2
