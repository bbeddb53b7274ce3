"""@cuda.jit kernels run on a GPU and checked against numpy.

1. scalar semantics (promotion, floor division and modulo, division by zero, powers,
   shifts, logic, loops, math functions within a few ulp, builtins, device functions), by small kernels that
   store their results into arrays;
2. every construct of the kernel language (indexing, layouts, views, slices, attributes, indices, shared /
   local / constant memory, atomics, warp shuffles and votes, bit intrinsics, complex, float16, tuples);
3. typical kernels (reduction, stencil, tiled matmul, histograms, warp reduction, saxpy);
4. dispatch (lazy and eager compilation, signatures, streams, launch configurations, host arrays, specialize,
   inspection, launch errors) and arrays from CuPy and torch.

Every test draws fresh random data; the seed is printed and is part of every assertion message, so a failure can
be replayed with ``np.random.default_rng(seed)``. The kernels live in gpu_kernels_src.py.
"""

import math
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import gpu_support

try:
    import mpmath  # comes with torch (through sympy); the reference for erf, erfc, gamma and lgamma when present
except ImportError:
    mpmath = None

import cujit
import gpu_kernels_src as K
import kernels_src
from cujit import cuda, errors, float32, float64, int32, int64, uint32, uint64
from cujit._typeof import typeof

pytestmark = gpu_support.gpu + [
    # Small grids (numba's low-occupancy warning) and host arrays (copy warning) are deliberate here.
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]

N = 4099  # elements of the elementwise tests: not a multiple of any block size
TPB_1D = 128


# ---- helpers -----------------------------------------------------------------------------------------------


class Check:
    """Fresh random data and numpy comparisons whose messages carry the seed."""

    def __init__(self):
        self.seed = np.random.SeedSequence().entropy
        self.rng = np.random.default_rng(self.seed)

    def note(self, what=""):
        return f"{what} [replay with np.random.default_rng({self.seed})]"

    def equal(self, got, want, what=""):
        np.testing.assert_array_equal(got, want, err_msg=self.note(what))

    def close(self, got, want, what="", rtol=1e-7, atol=0.0):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=self.note(what))

    def within(self, got, want, bound, what=""):
        """|got - want| <= bound elementwise (an error bound computed by the test); complex values too."""

        def wide(x):
            x = np.asarray(x)
            return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)

        err = np.abs(wide(got) - wide(want))
        bad = err > bound
        if bad.any():
            k = np.flatnonzero(bad.ravel())[0]
            raise AssertionError(
                self.note(
                    f"{what}: {bad.sum()} of {bad.size} outside the bound; first at flat "
                    f"index {k}: got {np.ravel(got)[k]!r}, want {np.ravel(want)[k]!r}, "
                    f"bound {np.ravel(np.broadcast_to(bound, err.shape))[k]!r}"
                )
            )

    def ulp(self, got, want, maxulp, what="", inputs=()):
        """At most `maxulp` units in the last place apart; NaNs must be at the same places."""
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype, self.note(f"{what}: dtype {got.dtype}, expected {want.dtype}")
        nan = np.isnan(want)
        self.equal(np.isnan(got), nan, f"{what}: NaN positions")
        if maxulp == 0:
            self.equal(got[~nan], want[~nan], what)
            return
        try:
            np.testing.assert_array_max_ulp(got[~nan], want[~nan], maxulp=maxulp)
        except AssertionError as exc:
            g, w = got[~nan].astype(np.float64), want[~nan].astype(np.float64)
            k = int(np.argmax(np.abs(g - w) / np.maximum(np.abs(w), np.finfo(want.dtype).tiny)))
            args = ", ".join(repr(x[~nan][k]) for x in inputs)
            raise AssertionError(self.note(f"{what}: {exc}; worst: f({args}) = {g[k]!r}, numpy {w[k]!r}")) from None

    # -- random data --
    def ints(self, dtype, n=N, lo=None, hi=None, zeros=0.0, specials=()):
        info = np.iinfo(dtype)
        x = self.rng.integers(
            info.min if lo is None else lo, info.max if hi is None else hi, size=n, dtype=dtype, endpoint=True
        )
        if zeros:
            x[self.rng.random(n) < zeros] = 0
        x[: len(specials)] = specials
        return x

    def floats(self, dtype, n=N, intervals=((-1.0, 1.0),), nonzero=False, specials=()):
        """Uniform values from the given intervals, in equal shares."""
        pick = self.rng.integers(0, len(intervals))
        lo = np.array([a for a, _ in intervals])[pick]
        hi = np.array([b for _, b in intervals])[pick]
        x = (lo + (hi - lo) * self.rng.random(n)).astype(dtype)
        if nonzero:
            x[x == 0] = 1
        x[: len(specials)] = specials
        return x


@pytest.fixture
def check():
    c = Check()
    print(f"random seed: {c.seed}")
    return c


def blocks(n, tpb=TPB_1D):
    return (n + tpb - 1) // tpb


def run_1d(kernel, out, *inputs, tpb=TPB_1D, grid=None):
    """Launches `kernel(out, *inputs)` over len(out) threads (or `grid` blocks) with device copies of the numpy
    arguments; returns out on the host."""
    d_out = cuda.to_device(out)
    args = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in inputs]
    kernel[grid or blocks(len(out), tpb), tpb](d_out, *args)
    return d_out.copy_to_host()


def run_map(fn, out_dtype, *inputs):
    """out[i] = fn(*(x[i] for x in inputs)) on the GPU (a grid-stride kernel over a device function)."""
    out = np.zeros(inputs[0].shape[0], out_dtype)
    return run_1d(K.map_kernel(fn), out, *inputs, grid=min(blocks(out.size), 24))


def fp_ref(fn, dtype):
    """A numpy/math reference computed in float64 and rounded to `dtype`."""
    return lambda *xs: np.asarray(fn(*(np.asarray(x, np.float64) for x in xs))).astype(dtype)


def special(name):
    """math.<name> over a float64 array, for the functions numpy lacks: correctly rounded from mpmath at 113 bits
    when it is installed, else CPython's math (see MAXULP_F64 for its own error)."""
    if mpmath is None:
        return np.vectorize(getattr(math, name), otypes=[np.float64])
    fn = {"erf": mpmath.erf, "erfc": mpmath.erfc, "gamma": mpmath.gamma, "lgamma": mpmath.loggamma}[name]

    def ref(x):
        with mpmath.workprec(113):
            return np.array([float(fn(mpmath.mpf(float(v)))) for v in x])

    return ref


I1, I4, I8, U4, U8 = np.int8, np.int32, np.int64, np.uint32, np.uint64
F2, F4, F8, C8, C16 = np.float16, np.float32, np.float64, np.complex64, np.complex128
I32_MIN = int(np.iinfo(I4).min)


# =============================================================================================================
# 0. compiling the same kernel again must not take the process down (it runs before everything else)
# =============================================================================================================

RECOMPILE = """
import gpu_kernels_src as K
import kernels_src
from cujit import cuda, float32, int64, void
sig = void(float32[::1], int64[::1], float32[::1])
kernels = [K.shared_load_then_atomic] + [K.atomic_kernel(op, space, float32).py_func
                                         for op in (cuda.atomic.add, cuda.atomic.sub, cuda.atomic.max)
                                         for space in ("global", "shared")]
for kernel in kernels:
    for attempt in range(2):
        cuda.compile_ptx(kernel, sig, cc=(9, 0))
print("compiled twice")
"""


def test_compiling_a_shared_atomic_kernel_twice_does_not_crash():
    """Regression: cujit @ dd82fec aborted ("LLVM ERROR: Bad address space found while emitting PTX") or segfaulted
    on the second compilation of such kernels in one thread (stale codegen state, fixed in f310cea). In a child
    process, so that a crash cannot take the rest of the suite down with it."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(cujit.__file__)))  # where cujit/ is
    paths = [os.path.dirname(os.path.abspath(__file__)), package_root]
    paths += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    proc = subprocess.run([sys.executable, "-c", RECOMPILE], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "compiled twice" in proc.stdout, (
        f"exit status {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    )


# =============================================================================================================
# 1. scalar semantics
# =============================================================================================================


def _ignore_int_warnings(fn):
    def ref(*xs):
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return fn(*xs)

    return ref


def wide(x):
    return np.asarray(x).astype(I8)


# (id, scalar function compiled as a device function, numpy reference, inputs(check), output dtype)
INTEGER_CASES = [
    ("int32+int32 is int64", lambda a, b: a + b, lambda a, b: wide(a) + b, lambda c: (c.ints(I4), c.ints(I4)), I8),
    ("int32-int32 is int64", lambda a, b: a - b, lambda a, b: wide(a) - b, lambda c: (c.ints(I4), c.ints(I4)), I8),
    ("int32*int32 is int64", lambda a, b: a * b, lambda a, b: wide(a) * b, lambda c: (c.ints(I4), c.ints(I4)), I8),
    ("int8*int8 is int64", lambda a, b: a * b, lambda a, b: wide(a) * b, lambda c: (c.ints(I1), c.ints(I1)), I8),
    ("uint32+int32 is int64", lambda a, b: a + b, lambda a, b: wide(a) + b, lambda c: (c.ints(U4), c.ints(I4)), I8),
    ("-int32 is int64", lambda a: -a, lambda a: -wide(a), lambda c: (c.ints(I4, specials=[I32_MIN]),), I8),
    ("int64+int64 wraps", lambda a, b: a + b, np.add, lambda c: (c.ints(I8), c.ints(I8)), I8),
    ("int64*int64 wraps", lambda a, b: a * b, np.multiply, lambda c: (c.ints(I8), c.ints(I8)), I8),
    ("uint64+uint64 wraps", lambda a, b: a + b, np.add, lambda c: (c.ints(U8), c.ints(U8)), U8),
    (
        "int64//int64 floors, //0 is 0",
        lambda a, b: a // b,
        _ignore_int_warnings(np.floor_divide),
        lambda c: (c.ints(I8, lo=-1000, hi=1000), c.ints(I8, lo=-40, hi=40, zeros=0.1, specials=[0, -1, 7])),
        I8,
    ),
    (
        "int64%int64 floors, %0 is 0",
        lambda a, b: a % b,
        _ignore_int_warnings(np.mod),
        lambda c: (c.ints(I8, lo=-1000, hi=1000), c.ints(I8, lo=-40, hi=40, zeros=0.1, specials=[0, -1, 7])),
        I8,
    ),
    (
        "int32//int32 in int64 (min//-1)",
        lambda a, b: a // b,
        _ignore_int_warnings(lambda a, b: wide(a) // wide(b)),
        lambda c: (
            c.ints(I4, specials=[I32_MIN, I32_MIN, -7]),
            c.ints(I4, lo=-50, hi=50, zeros=0.1, specials=[-1, 0, 2]),
        ),
        I8,
    ),
    (
        "int32%int32 in int64",
        lambda a, b: a % b,
        _ignore_int_warnings(lambda a, b: wide(a) % wide(b)),
        lambda c: (c.ints(I4, specials=[I32_MIN, -7]), c.ints(I4, lo=-50, hi=50, zeros=0.1, specials=[-1, 2])),
        I8,
    ),
    (
        "int32/int32 is float64",
        lambda a, b: a / b,
        lambda a, b: a.astype(F8) / b,
        lambda c: (c.ints(I4), c.ints(I4, lo=-1000, hi=1000, specials=[1, -1]) | 1),
        F8,
    ),
    (
        "int64/int64 is float64",
        lambda a, b: a / b,
        lambda a, b: a.astype(F8) / b.astype(F8),
        lambda c: (c.ints(I8), c.ints(I8) | 1),
        F8,
    ),
    ("int64**int64", lambda a, b: a**b, np.power, lambda c: (c.ints(I8, lo=-15, hi=15), c.ints(I8, lo=0, hi=12)), I8),
    ("int64<<int64", lambda a, b: a << b, np.left_shift, lambda c: (c.ints(I8), c.ints(I8, lo=0, hi=63)), I8),
    (
        "int64>>int64 is arithmetic",
        lambda a, b: a >> b,
        np.right_shift,
        lambda c: (c.ints(I8), c.ints(I8, lo=0, hi=63)),
        I8,
    ),
    (
        "uint64>>uint64 is logical",
        lambda a, b: a >> b,
        np.right_shift,
        lambda c: (c.ints(U8), c.ints(U8, lo=0, hi=63)),
        U8,
    ),
    (
        "int32<<int32 in int64",
        lambda a, b: a << b,
        lambda a, b: wide(a) << wide(b),
        lambda c: (c.ints(I4), c.ints(I4, lo=0, hi=32)),
        I8,
    ),
    ("int64&int64", lambda a, b: a & b, np.bitwise_and, lambda c: (c.ints(I8), c.ints(I8)), I8),
    ("int64|int64", lambda a, b: a | b, np.bitwise_or, lambda c: (c.ints(I8), c.ints(I8)), I8),
    ("int64^int64", lambda a, b: a ^ b, np.bitwise_xor, lambda c: (c.ints(I8), c.ints(I8)), I8),
    ("~int32 is int64", lambda a: ~a, lambda a: ~wide(a), lambda c: (c.ints(I4),), I8),
    ("abs(int64)", lambda a: abs(a), np.abs, lambda c: (c.ints(I8, lo=-(2**62), hi=2**62),), I8),
    ("min(int64, int64)", lambda a, b: min(a, b), np.minimum, lambda c: (c.ints(I8), c.ints(I8)), I8),
    (
        "max(int64, int64, int64)",
        lambda a, b, d: max(a, b, d),
        lambda a, b, d: np.maximum(np.maximum(a, b), d),
        lambda c: (c.ints(I8), c.ints(I8), c.ints(I8)),
        I8,
    ),
    (
        "max(int64, float64) is float64",
        lambda a, b: max(a, b),
        lambda a, b: np.maximum(a.astype(F8), b),
        lambda c: (c.ints(I8, lo=-100, hi=100), c.floats(F8, intervals=[(-100, 100)])),
        F8,
    ),
    ("float(int64)", lambda a: float(a), lambda a: a.astype(F8), lambda c: (c.ints(I8),), F8),
    (
        "int(float64) truncates",
        lambda a: int(a),
        lambda a: np.trunc(a).astype(I8),
        lambda c: (c.floats(F8, intervals=[(-1e9, 1e9), (-3, 3)]),),
        I8,
    ),
    (
        "int(float32) truncates",
        lambda a: int(a),
        lambda a: np.trunc(a).astype(I8),
        lambda c: (c.floats(F4, intervals=[(-1e6, 1e6), (-3, 3)]),),
        I8,
    ),
    (
        "round(float64) to even",
        lambda a: round(a),
        lambda a: np.round(a).astype(I8),
        lambda c: (c.ints(I8, lo=-4000, hi=4000).astype(F8) / 4,),
        I8,
    ),
    (
        "round(float32) to even",
        lambda a: round(a),
        lambda a: np.round(a).astype(I8),
        lambda c: (c.ints(I8, lo=-4000, hi=4000).astype(F4) / F4(4),),
        I8,
    ),
    ("abs(float64)", lambda a: abs(a), np.abs, lambda c: (c.floats(F8, intervals=[(-5, 5)], specials=[-0.0]),), F8),
    (
        "min(float64, float64)",
        lambda a, b: min(a, b),
        np.minimum,
        lambda c: (c.floats(F8, intervals=[(-5, 5)]), c.floats(F8, intervals=[(-5, 5)])),
        F8,
    ),
]


def _small_float_ints(c, dtype):
    """Small integers as floats (exact quotients and ties) and uniform values, half and half."""
    x = c.floats(dtype, intervals=[(-60, 60)])
    x[::2] = np.round(x[::2] / 4)
    return x


def _divisors(c, dtype):
    x = _small_float_ints(c, dtype) / 3
    x[x == 0] = dtype(-2.5)
    return x


FLOAT_OP_CASES = [
    # Python's float floor division and modulo (CPython's divmod algorithm, which numpy follows): exact.
    (
        "float64//float64",
        lambda a, b: a // b,
        np.floor_divide,
        lambda c: (_small_float_ints(c, F8), _divisors(c, F8)),
        F8,
        0,
    ),
    ("float64%float64", lambda a, b: a % b, np.mod, lambda c: (_small_float_ints(c, F8), _divisors(c, F8)), F8, 0),
    (
        "float32//float32",
        lambda a, b: a // b,
        np.floor_divide,
        lambda c: (_small_float_ints(c, F4), _divisors(c, F4)),
        F4,
        0,
    ),
    ("float32%float32", lambda a, b: a % b, np.mod, lambda c: (_small_float_ints(c, F4), _divisors(c, F4)), F4, 0),
    (
        "int64//float64",
        lambda a, b: a // b,
        lambda a, b: np.floor_divide(a.astype(F8), b),
        lambda c: (c.ints(I8, lo=-100, hi=100), _divisors(c, F8)),
        F8,
        0,
    ),
    (
        "float64/float64",
        lambda a, b: a / b,
        np.divide,
        lambda c: (c.floats(F8, intervals=[(-1e3, 1e3)]), _divisors(c, F8)),
        F8,
        0,
    ),
    (
        "float64**float64",
        lambda a, b: a**b,
        np.power,
        lambda c: (c.floats(F8, intervals=[(0.01, 10)]), c.floats(F8, intervals=[(-8, 8)])),
        F8,
        2,
    ),
    (
        "float32**float32",
        lambda a, b: a**b,
        fp_ref(np.power, F4),
        lambda c: (c.floats(F4, intervals=[(0.01, 10)]), c.floats(F4, intervals=[(-8, 8)])),
        F4,
        5,
    ),
    (
        "float64**int64",
        lambda a, b: a**b,
        lambda a, b: np.power(a, b.astype(F8)),
        lambda c: (c.floats(F8, intervals=[(-3, 3)], nonzero=True), c.ints(I8, lo=-6, hi=6)),
        F8,
        8,
    ),
    (
        "float64*int64",
        lambda a, b: a * b,
        lambda a, b: a * b.astype(F8),
        lambda c: (c.floats(F8, intervals=[(-1e3, 1e3)]), c.ints(I8, lo=-1000, hi=1000)),
        F8,
        0,
    ),
    # numpy's error model: no exception, IEEE results
    (
        "float64/0.0 is inf or nan",
        lambda a, b: a / b,
        np.divide,
        lambda c: (c.floats(F8, intervals=[(-5, 5)], specials=[0.0, -1.0, 1.0]), np.zeros(N)),
        F8,
        0,
    ),
    (
        "int64/0 is inf or nan",
        lambda a, b: a / b,
        lambda a, b: a.astype(F8) / b.astype(F8),
        lambda c: (c.ints(I8, lo=-5, hi=5, specials=[0, -3, 3]), c.ints(I8, lo=-2, hi=2, zeros=0.5)),
        F8,
        0,
    ),
]


def _ties(c, dtype=F8):
    return c.ints(I8, lo=-3, hi=3).astype(dtype)


LOGIC_CASES = [
    ("a<b", lambda a, b: a < b, np.less, lambda c: (_ties(c), _ties(c))),
    ("a<=b", lambda a, b: a <= b, np.less_equal, lambda c: (_ties(c), _ties(c))),
    ("a==b", lambda a, b: a == b, np.equal, lambda c: (_ties(c), _ties(c))),
    ("a!=b", lambda a, b: a != b, np.not_equal, lambda c: (_ties(c), _ties(c))),
    ("a>b", lambda a, b: a > b, np.greater, lambda c: (_ties(c), _ties(c))),
    ("a>=b", lambda a, b: a >= b, np.greater_equal, lambda c: (_ties(c), _ties(c))),
    (
        "int64<float64",
        lambda a, b: a < b,
        lambda a, b: a.astype(F8) < b,
        lambda c: (c.ints(I8, lo=-3, hi=3), _ties(c) / 2),
    ),
    (
        "a<b<=c",
        lambda a, b, d: a < b <= d,
        lambda a, b, d: (a < b) & (b <= d),
        lambda c: (_ties(c), _ties(c), _ties(c)),
    ),
    (
        "a==b!=c",
        lambda a, b, d: a == b != d,
        lambda a, b, d: (a == b) & (b != d),
        lambda c: (_ties(c), _ties(c), _ties(c)),
    ),
    ("a>b>c", lambda a, b, d: a > b > d, lambda a, b, d: (a > b) & (b > d), lambda c: (_ties(c), _ties(c), _ties(c))),
    (
        "(a>0 and b>0) or not c",
        lambda a, b, d: (a > 0 and b > 0) or not d,
        lambda a, b, d: ((a > 0) & (b > 0)) | (d == 0),
        lambda c: (_ties(c, I8), _ties(c, I8), _ties(c, I8)),
    ),
    ("not a", lambda a: not a, lambda a: a == 0, lambda c: (_ties(c, I8),)),
]

VALUE_LOGIC_CASES = [
    ("a and b", lambda a, b: a and b, lambda a, b: np.where(a != 0, b, a), lambda c: (_ties(c, I8), _ties(c, I8)), I8),
    ("a or b", lambda a, b: a or b, lambda a, b: np.where(a != 0, a, b), lambda c: (_ties(c, I8), _ties(c, I8)), I8),
    (
        "a if a > b else b * 2",
        lambda a, b: a if a > b else b * 2,
        lambda a, b: np.where(a > b, a, b * 2),
        lambda c: (c.ints(I8, lo=-100, hi=100), c.ints(I8, lo=-100, hi=100)),
        I8,
    ),
    (
        "a if a > 0 else 1.5",
        lambda a, b: a if a > 0 else 1.5,
        lambda a, b: np.where(a > 0, a.astype(F8), 1.5),
        lambda c: (c.ints(I8, lo=-100, hi=100), c.ints(I8, lo=-100, hi=100)),
        F8,
    ),
]


def _case_ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize("name, fn, ref, inputs, out_dtype", INTEGER_CASES, ids=_case_ids(INTEGER_CASES))
def test_integer_semantics(check, name, fn, ref, inputs, out_dtype):
    xs = inputs(check)
    check.equal(run_map(fn, out_dtype, *xs), ref(*xs).astype(out_dtype), name)


@pytest.mark.parametrize("name, fn, ref, inputs, out_dtype, maxulp", FLOAT_OP_CASES, ids=_case_ids(FLOAT_OP_CASES))
def test_float_operators(check, name, fn, ref, inputs, out_dtype, maxulp):
    xs = inputs(check)
    with np.errstate(all="ignore"):
        want = np.asarray(ref(*xs)).astype(out_dtype)
    check.ulp(run_map(fn, out_dtype, *xs), want, maxulp, name, inputs=xs)


@pytest.mark.parametrize("name, fn, ref, inputs", LOGIC_CASES, ids=_case_ids(LOGIC_CASES))
def test_comparisons_and_logic(check, name, fn, ref, inputs):
    xs = inputs(check)
    check.equal(run_map(fn, np.bool_, *xs), ref(*xs), name)


@pytest.mark.parametrize("name, fn, ref, inputs, out_dtype", VALUE_LOGIC_CASES, ids=_case_ids(VALUE_LOGIC_CASES))
def test_and_or_and_conditional_values(check, name, fn, ref, inputs, out_dtype):
    xs = inputs(check)
    check.equal(run_map(fn, out_dtype, *xs), ref(*xs).astype(out_dtype), name)


def test_loops_negative_steps_break_continue(check):
    n = check.ints(I8, lo=-30, hi=30)
    m = check.ints(I8, lo=-30, hi=30)
    step = check.rng.choice(np.array([-3, -2, -1, 1, 2, 3], I8), size=len(n))
    want = np.array([K.loop_mix(int(a), int(b), int(s)) for a, b, s in zip(n, m, step)], I8)
    check.equal(run_map(K.loop_mix, I8, n, m, step), want, "loop_mix (the same function run by Python)")


# ---- math functions ----------------------------------------------------------------------------------------

WIDE = ((-100.0, 100.0),)
# (math function, numpy/Python reference on float64, argument intervals, output kind)
MATH_CASES = {
    "sqrt": (math.sqrt, np.sqrt, [((0, 1e6), (0, 1e-3))], "float"),
    "sin": (math.sin, np.sin, [WIDE], "float"),
    "cos": (math.cos, np.cos, [WIDE], "float"),
    "tan": (math.tan, np.tan, [WIDE], "float"),
    "asin": (math.asin, np.arcsin, [((-1, 1),)], "float"),
    "acos": (math.acos, np.arccos, [((-1, 1),)], "float"),
    "atan": (math.atan, np.arctan, [((-1e3, 1e3), (-2, 2))], "float"),
    "atan2": (math.atan2, np.arctan2, [((-10, 10),), ((-10, 10),)], "float"),
    "sinh": (math.sinh, np.sinh, [((-20, 20),)], "float"),
    "cosh": (math.cosh, np.cosh, [((-20, 20),)], "float"),
    "tanh": (math.tanh, np.tanh, [((-10, 10),)], "float"),
    "exp": (math.exp, np.exp, [((-50, 50),)], "float"),
    "expm1": (math.expm1, np.expm1, [((-5, 5), (-1e-6, 1e-6))], "float"),
    "log": (math.log, np.log, [((1e-5, 1e5), (0.5, 2))], "float"),
    "log1p": (math.log1p, np.log1p, [((-0.9, 10), (-1e-6, 1e-6))], "float"),
    "log2": (math.log2, np.log2, [((1e-5, 1e5),)], "float"),
    "log10": (math.log10, np.log10, [((1e-5, 1e5),)], "float"),
    "pow": (math.pow, np.power, [((0.01, 10),), ((-8, 8),)], "float"),
    "fabs": (math.fabs, np.fabs, [WIDE], "float"),
    "hypot": (math.hypot, np.hypot, [((-1e3, 1e3),), ((-1e3, 1e3),)], "float"),
    "copysign": (math.copysign, np.copysign, [WIDE, WIDE], "float"),
    "fmod": (math.fmod, np.fmod, [WIDE, ((-10, -0.5), (0.5, 10))], "float"),
    "erf": (math.erf, special("erf"), [((-5, 5),)], "float"),
    "erfc": (math.erfc, special("erfc"), [((-2, 8),)], "float"),
    "gamma": (math.gamma, special("gamma"), [((0.5, 20),)], "float"),
    "lgamma": (math.lgamma, special("lgamma"), [((2.5, 100),)], "float"),
    # math.floor / ceil / trunc return int64 in numba, as int in Python
    "floor": (math.floor, np.floor, [WIDE], "int"),
    "ceil": (math.ceil, np.ceil, [WIDE], "int"),
    "trunc": (math.trunc, np.trunc, [WIDE], "int"),
    "isnan": (math.isnan, np.isnan, [WIDE], "bool"),
    "isinf": (math.isinf, np.isinf, [WIDE], "bool"),
    "isfinite": (math.isfinite, np.isfinite, [WIDE], "bool"),
}
EXACT = {"fabs", "copysign", "fmod"}
# float64: within 2 ulp of numpy; erf, erfc, gamma and lgamma (not in numpy) within CUDA's documented maximum
# error (libdevice, which numba-cuda calls too: erfc 5 ulp, tgamma 10, lgamma 4 outside (-23, -2.26)) of mpmath.
# Measured on an H200 against mpmath: libdevice 1 (erf), 3 (erfc), 2 (gamma), 2 (lgamma) ulp at most. Without
# mpmath the reference is CPython's math, whose own error is added: up to 1, 3, 7 and 30 ulp (lgamma near 2.68).
MAXULP_F64 = (
    {"erfc": 5, "gamma": 10, "lgamma": 4} if mpmath is not None else {"erf": 3, "erfc": 8, "gamma": 17, "lgamma": 34}
)
# float32 against the float64 result rounded to float32: CUDA's single-precision bounds plus the rounding.
MAXULP_F32 = {"tan": 5, "pow": 5, "erfc": 5, "gamma": 6, "lgamma": 7, "sqrt": 1}
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]


@pytest.mark.parametrize("dtype", [F8, F4], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(MATH_CASES))
def test_math_functions(check, name, dtype):
    fn, ref, domains, kind = MATH_CASES[name]
    specials = SPECIALS if kind == "bool" else ()
    xs = [check.floats(dtype, intervals=d, specials=specials) for d in domains]
    out_dtype = {"float": dtype, "int": I8, "bool": np.bool_}[kind]
    kernel = K.math_kernel(fn, len(xs))
    got = run_1d(kernel, np.zeros(N, out_dtype), *xs)
    want = np.asarray(ref(*(x.astype(F8) for x in xs)))
    what = f"math.{name}({', '.join(np.dtype(dtype).name for _ in xs)})"
    if kind != "float":
        check.equal(got, want.astype(out_dtype), what)
        return
    want = want.astype(dtype)
    maxulp = 0 if name in EXACT else (MAXULP_F64.get(name, 2) if dtype is F8 else MAXULP_F32.get(name, 4))
    check.ulp(got, want, maxulp, what, inputs=xs)


# ---- device functions ----------------------------------------------------------------------------------------


def test_calls_to_device_functions(check):
    x = check.floats(F8, intervals=[(-3, 3)])
    ia = check.ints(I8, lo=-100, hi=100)
    ib = check.ints(I8, lo=-9, hi=9, specials=[-1, 3])
    ib[ib == 0] = 5
    m = check.floats(F8, n=N * 7, intervals=[(-1, 1)]).reshape(N, 7)
    got = run_1d(K.device_calls, np.zeros((N, 5)), x, ia, ib, m)
    poly = ((2.0 * x - 3.0) * x + 0.5) * x - 7.0
    check.close(got[:, 0], poly, "horner (device function)", rtol=1e-13, atol=1e-13)
    check.close(got[:, 1], np.clip(poly, -10, 10), "clamp(horner()) (nested device functions)", rtol=1e-13, atol=1e-13)
    check.equal(got[:, 2], np.floor_divide(ia, ib), "quotient from a device function returning a tuple")
    check.equal(got[:, 3], np.mod(ia, ib), "remainder from a device function returning a tuple")
    check.close(got[:, 4], m.sum(axis=1), "an array passed on to a device function", rtol=1e-12, atol=1e-14)


# =============================================================================================================
# 2. the kernel language
# =============================================================================================================


def test_negative_indexing(check):
    a = check.floats(F4, n=1001)
    ends = np.zeros(3, F4)
    d_ends = cuda.to_device(ends)
    got = run_1d(K.negative_index, np.zeros_like(a), d_ends, a)
    check.equal(got, a[::-1], "out[i] = a[-1 - i]")
    check.equal(d_ends.copy_to_host(), [a[-1], a[0], a[a.size // 2]], "a[-1], a[-n] and ends[-1] = ...")


EVERY_2ND = slice(None, None, 2)
BACKWARDS_2 = slice(None, None, -2)
VIEW_KEY = {2: (EVERY_2ND, BACKWARDS_2), 3: (EVERY_2ND, EVERY_2ND, BACKWARDS_2)}


class Operand:
    """A float64 kernel operand of `shape` in `layout`: "C", "F", a strided host view ("A-host") or a strided
    device view with a negative step ("A-device"). ``arg`` goes to the kernel, ``values`` are its values and
    ``result()`` reads it back; views also check that nothing outside them changed."""

    def __init__(self, check, shape, layout, zero=False):
        self.check, self.layout, self.key = check, layout, VIEW_KEY[len(shape)]
        full = shape if layout in ("C", "F") else tuple(2 * s for s in shape)
        host = np.zeros(full) if zero else check.floats(F8, n=int(np.prod(full)), intervals=[(-10, 10)]).reshape(full)
        if layout == "F":
            host = np.asfortranarray(host)
        self.parent, self.before = host, host.copy()
        if layout in ("C", "F"):
            self.arg, self.values = cuda.to_device(host), host
        elif layout == "A-host":
            self.arg = self.values = host[self.key]
        else:
            self.device_parent = cuda.to_device(host)
            self.arg, self.values = self.device_parent[self.key], host[self.key]

    def result(self):
        if self.layout in ("C", "F"):
            return self.arg.copy_to_host()
        parent = self.parent if self.layout == "A-host" else self.device_parent.copy_to_host()
        outside = np.ones(parent.shape, bool)
        outside[self.key] = False
        self.check.equal(parent[outside], self.before[outside], "elements outside the view are untouched")
        return parent[self.key]


@pytest.mark.parametrize("layout", ["C", "F", "A-host", "A-device"])
@pytest.mark.parametrize("ndim", [2, 3])
def test_layouts_and_views(check, ndim, layout):
    shape = (37, 53) if ndim == 2 else (9, 13, 21)
    a = Operand(check, shape, layout)
    out = Operand(check, shape, layout, zero=True)
    want_layout = "A" if layout.startswith("A") else layout
    assert typeof(a.arg).layout == want_layout, check.note(f"typeof gives layout {typeof(a.arg).layout}")
    idx = np.indices(shape)
    if ndim == 2:
        K.affine_2d[(blocks(shape[0], 8), blocks(shape[1], 16)), (8, 16)](out.arg, a.arg)
        want = 2 * a.values + idx[0] * 1000 + idx[1]
    else:
        K.affine_3d[(blocks(shape[0], 4), blocks(shape[1], 4), blocks(shape[2], 8)), (4, 4, 8)](out.arg, a.arg)
        want = a.values * 3 + idx[0] * 10000 + idx[1] * 100 + idx[2]
    check.close(out.result(), want, f"{ndim}-d arrays in layout {layout}", rtol=1e-15)


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_array_attributes(check, layout):
    a = check.floats(F4, n=4 * 5 * 6).reshape(4, 5, 6)
    d = cuda.to_device(np.asfortranarray(a) if layout == "F" else a)
    if layout == "A":
        d = d[::2, 1:, ::-2]
    out = run_1d(K.array_attributes, np.zeros(11, I8), d, grid=1, tpb=1)
    want = [d.size, d.shape[0], 3, *d.shape, *d.strides, d.shape[-1], 4]
    check.equal(out, want, f"size, len, ndim, shape, strides, shape[-1], itemsize of a {layout} array")


def test_slices_inside_kernels(check):
    n, m = 300, 12
    a = check.floats(F8, n=n * m).reshape(n, m)
    got = run_1d(K.slice_views, np.zeros((n, 8)), a)
    rows = np.arange(n)
    want = np.stack(
        [a[:, ::2].sum(1), a[:, -2], a[:, -1], a[:, 1], a[rows, 3], np.full(n, m - 2.0), a.sum(1), a[:, -1] * 2], axis=1
    )
    check.close(
        got,
        want,
        "row[::2] sum, row[1:-1][-1], row[::-1][0], a[:, 1][i], a[i:, ::3][0, 1], "
        "len(row[2:]), for v in row, a write through out[i, 7:]",
        rtol=1e-13,
        atol=1e-14,
    )


def test_thread_and_block_indices():
    grid, block = (3, 2, 2), (8, 4, 2)
    extent = [g * b for g, b in zip(grid, block)]  # x, y, z
    out = cuda.device_array((extent[2], extent[1], extent[0], 17), I4)
    K.thread_indices[grid, block](out)
    got = out.copy_to_host()
    z, y, x = np.indices((extent[2], extent[1], extent[0]))
    tx, ty, tz = x % block[0], y % block[1], z % block[2]
    want = np.stack(
        [
            tx,
            ty,
            tz,
            x // block[0],
            y // block[1],
            z // block[2],
            *[np.full_like(x, v) for v in (*block, *grid, *extent)],
            (tx + block[0] * (ty + block[1] * tz)) % 32,
            np.full_like(x, 32),
        ],
        axis=-1,
    )
    names = [
        "threadIdx.x",
        "threadIdx.y",
        "threadIdx.z",
        "blockIdx.x",
        "blockIdx.y",
        "blockIdx.z",
        "blockDim.x",
        "blockDim.y",
        "blockDim.z",
        "gridDim.x",
        "gridDim.y",
        "gridDim.z",
        "gridsize x",
        "gridsize y",
        "gridsize z",
        "laneid",
        "warpsize",
    ]
    for k, name in enumerate(names):
        np.testing.assert_array_equal(got[..., k], want[..., k], err_msg=name)


def test_grid_stride_loops():
    out = cuda.to_device(np.zeros(10_007, I8))
    K.grid_stride_1d[7, 96](out)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(10_007) + 1, "cuda.grid(1)/gridsize(1)")
    out2 = cuda.to_device(np.zeros((300, 500), I8))
    K.grid_stride_2d[(3, 2), (16, 8)](out2)
    i, j = np.indices((300, 500))
    np.testing.assert_array_equal(out2.copy_to_host(), i * 1000 + j, "cuda.grid(2)/gridsize(2)")


def test_dynamic_shared_memory(check):
    n = int(check.rng.integers(1000, 12_000))  # up to 48 KB: no opt-in needed
    a = check.floats(F4, n=n)
    out = cuda.device_array(n, F4)
    K.reverse_dynamic_shared[1, 256, 0, n * 4](out, cuda.to_device(a))
    check.equal(out.copy_to_host(), a[::-1], f"reversed through {n * 4} bytes of dynamic shared memory")


def test_static_shared_2d_transpose(check):
    a = check.floats(F8, n=200 * 333).reshape(200, 333)
    out = cuda.device_array((333, 200), F8)
    K.transpose_tiled[(blocks(333, K.TILE), blocks(200, K.TILE)), (K.TILE, K.TILE)](out, cuda.to_device(a))
    check.equal(out.copy_to_host(), a.T, "transpose through a (32, 33) shared tile")


def test_static_shared_3d():
    out = cuda.device_array((2, 4, 8), I4)
    K.shared_3d[1, (8, 4, 2)](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64, dtype=I4).reshape(2, 4, 8)[::-1, ::-1, ::-1])


def test_local_arrays(check):
    n = 1000
    a = check.floats(F8, n=n * K.SORT_K).reshape(n, K.SORT_K)
    got = run_1d(K.local_sort, np.zeros((n, K.SORT_K + 1)), a)
    check.equal(got[:, : K.SORT_K], np.sort(a, axis=1), "insertion sort in a local array")
    check.equal(got[:, K.SORT_K], 3 * np.arange(n), "a 2-D local array")


def test_const_array_like(check):
    x = check.floats(F8, intervals=[(-2, 2)])
    got = run_1d(K.const_poly, np.zeros(N), x)
    i = np.arange(N)
    want = np.polyval(K.POLY_COEFFS, x) + K.CONST_TABLE[i % 3, i % 4]
    check.close(got, want, "polynomial and table from cuda.const.array_like", rtol=1e-12, atol=1e-12)


# ---- atomics ---------------------------------------------------------------------------------------------------

INT_TYPES = [I4, U4, I8, U8]
ALL_TYPES = INT_TYPES + [F4, F8]
CUJIT_TYPE = {I4: int32, U4: uint32, I8: int64, U8: uint64, F4: float32, F8: float64}
REDUCING_ATOMICS = {
    "add": (cuda.atomic.add, np.add, ALL_TYPES),
    "sub": (cuda.atomic.sub, np.subtract, ALL_TYPES),
    "max": (cuda.atomic.max, np.maximum, ALL_TYPES),
    "min": (cuda.atomic.min, np.minimum, ALL_TYPES),
    "and_": (cuda.atomic.and_, np.bitwise_and, INT_TYPES),
    "or_": (cuda.atomic.or_, np.bitwise_or, INT_TYPES),
    "xor": (cuda.atomic.xor, np.bitwise_xor, INT_TYPES),
}
SPACES = ["global", "shared"]


def _values(check, dtype, n, integral=False):
    """Random values over the whole integer range, or floats in (-100, 100) (integer-valued if asked: their
    sums are then exact in any order)."""
    if np.issubdtype(dtype, np.integer):
        return check.ints(dtype, n=n)
    x = check.floats(dtype, n=n, intervals=[(-100, 100)])
    return np.round(x) if integral else x


def _launch_atomic(kernel, space, n, *args):
    if space == "global":
        kernel[blocks(n, 256), 256](*args)
    else:
        kernel[1, 1024](*args)  # one block: every update goes to its shared copy


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize(
    "op, dtype",
    [(op, t) for op, (_, _, types) in REDUCING_ATOMICS.items() for t in types],
    ids=[f"{op}-{np.dtype(t).name}" for op, (_, _, types) in REDUCING_ATOMICS.items() for t in types],
)
def test_atomic_reductions(check, op, dtype, space):
    fn, ufunc, _ = REDUCING_ATOMICS[op]
    n = 5000
    init = _values(check, dtype, K.N_SLOTS, integral=True)
    idx = check.ints(I8, n=n, lo=0, hi=K.N_SLOTS - 1)
    val = _values(check, dtype, n, integral=op in ("add", "sub"))
    slots = cuda.to_device(init)
    _launch_atomic(
        K.atomic_kernel(fn, space, CUJIT_TYPE[dtype]), space, n, slots, cuda.to_device(idx), cuda.to_device(val)
    )
    want = init.copy()
    ufunc.at(want, idx, val)
    check.equal(slots.copy_to_host(), want, f"cuda.atomic.{op} on {space} {np.dtype(dtype).name}")


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("dtype", INT_TYPES, ids=[np.dtype(t).name for t in INT_TYPES])
def test_atomic_exch(check, dtype, space):
    # numba-cuda types cuda.atomic.exch for integer arrays only; floats are a TypingError.
    n = 1000
    init = _values(check, dtype, 1)
    val = _values(check, dtype, n)
    slot, olds = cuda.to_device(init), cuda.device_array(n, dtype)
    _launch_atomic(K.exch_kernel(space, CUJIT_TYPE[dtype]), space, n, slot, cuda.to_device(val), olds)
    seen = np.sort(np.concatenate([olds.copy_to_host(), slot.copy_to_host()]))
    check.equal(
        seen,
        np.sort(np.concatenate([val, init])),
        f"cuda.atomic.exch on {space}: the old values and the final value are the values and the initial one",
    )


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("dtype", INT_TYPES, ids=[np.dtype(t).name for t in INT_TYPES])
def test_atomic_cas(check, dtype, space):
    n = 1000
    init = _values(check, dtype, n + 1)
    init[n] = 0  # the CAS-loop counter
    hit = check.rng.random(n) < 0.5
    with np.errstate(over="ignore"):
        cmp = np.where(hit, init[:n], init[:n] + dtype(1)).astype(dtype)
    val = _values(check, dtype, n)
    arr, olds = cuda.to_device(init), cuda.device_array(n, dtype)
    _launch_atomic(
        K.cas_kernel(space, CUJIT_TYPE[dtype]), space, n, arr, cuda.to_device(cmp), cuda.to_device(val), olds
    )
    got = arr.copy_to_host()
    what = f"cuda.atomic.cas on {space} {np.dtype(dtype).name}"
    check.equal(olds.copy_to_host(), init[:n], f"{what}: returns the old value")
    check.equal(got[:n], np.where(hit, val, init[:n]), f"{what}: swaps where the comparison matches")
    check.equal(got[n], n, f"{what}: a CAS-loop counter incremented by every thread")


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("dtype", [U4, U8], ids=["uint32", "uint64"])
def test_atomic_inc_dec(check, dtype, space):
    limit = int(check.rng.integers(5, 1000))
    n = int(check.rng.integers(1000, 5000))
    start = check.ints(dtype, n=2, lo=0, hi=limit)
    counters = cuda.to_device(start)
    _launch_atomic(K.inc_dec_kernel(space, CUJIT_TYPE[dtype]), space, n, counters, dtype(limit), n)
    want = [(int(start[0]) + n) % (limit + 1), (int(start[1]) - n) % (limit + 1)]
    check.equal(
        counters.copy_to_host(),
        np.array(want, dtype),
        f"{n} x cuda.atomic.inc / dec with limit {limit} from {start.tolist()} on {space}",
    )


# ---- warp intrinsics -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [I4, I8, F4, F8], ids=["int32", "int64", "float32", "float64"])
def test_warp_shuffles(check, dtype):
    n = 32 * 64
    a = _values(check, dtype, n)
    src = check.ints(I4, n=n, lo=0, hi=31)
    delta = int(check.rng.integers(1, 32))
    out = cuda.device_array((4, n), dtype)
    K.shuffles[blocks(n), TPB_1D](out, cuda.to_device(a), cuda.to_device(src), delta)
    got = out.copy_to_host()
    i = np.arange(n)
    lane, base = i % 32, i - i % 32
    for row, name, want in [
        (0, "shfl_sync", a[base + src]),
        (1, "shfl_up_sync", np.where(lane >= delta, a[np.maximum(i - delta, 0)], a)),
        (2, "shfl_down_sync", np.where(lane + delta < 32, a[np.minimum(i + delta, n - 1)], a)),
        (3, "shfl_xor_sync", a[base + (lane ^ delta)]),
    ]:
        check.equal(got[row], want, f"{name} of {np.dtype(dtype).name}, delta {delta}")


def _warp_predicates(check, n, group):
    """0/1 predicates, constant (all 0 or all 1) in some groups of `group` threads and random in the others."""
    mode = check.rng.integers(0, 3, size=n // group).repeat(group)
    return np.where(mode == 2, check.rng.integers(0, 2), mode).astype(I4)


def test_warp_votes(check):
    n = 32 * 96
    pred = _warp_predicates(check, n, 32)
    out = cuda.device_array((4, n), I8)
    K.votes[blocks(n), TPB_1D](out, cuda.to_device(pred))
    got = out.copy_to_host()
    warps = pred.reshape(-1, 32).astype(I8)
    ballot = (warps << np.arange(32, dtype=I8)).sum(axis=1)
    ballot = (ballot + 2**31) % 2**32 - 2**31  # numba types ballot_sync as int32: all 32 lanes set is -1
    for row, name, per_warp in [
        (0, "all_sync", warps.all(1)),
        (1, "any_sync", warps.any(1)),
        (2, "ballot_sync", ballot),
        (3, "popc(ballot_sync)", warps.sum(1)),
    ]:
        want = np.repeat(per_warp.astype(I8), 32)
        if row < 2:
            check.equal(got[row] != 0, want != 0, name)
        else:
            check.equal(got[row], want, name)


def test_syncthreads_count_and_or(check):
    nblocks, tpb = 64, 128
    pred = _warp_predicates(check, nblocks * tpb, tpb)
    out = cuda.device_array((nblocks, 3), I8)
    K.block_votes[nblocks, tpb](out, cuda.to_device(pred))
    got = out.copy_to_host()
    per_block = pred.reshape(nblocks, tpb)
    check.equal(got[:, 0], per_block.sum(1), "syncthreads_count")
    check.equal(got[:, 1] != 0, per_block.all(1), "syncthreads_and")
    check.equal(got[:, 2] != 0, per_block.any(1), "syncthreads_or")


@pytest.mark.parametrize("dtype", INT_TYPES, ids=[np.dtype(t).name for t in INT_TYPES])
def test_popc_clz(check, dtype):
    info = np.iinfo(dtype)
    a = check.ints(dtype, specials=[0, 1, info.max, info.min, dtype(-1) if info.min < 0 else info.max >> 1])
    out = cuda.device_array((2, N), I8)
    K.bit_counts[blocks(N), TPB_1D](out, cuda.to_device(a))
    got = out.copy_to_host()
    bits = info.bits
    unsigned = [int(v) & ((1 << bits) - 1) for v in a]
    check.equal(got[0], [bin(u).count("1") for u in unsigned], f"popc({np.dtype(dtype).name})")
    check.equal(got[1], [bits - u.bit_length() for u in unsigned], f"clz({np.dtype(dtype).name})")


@pytest.mark.parametrize("dtype", [F4, F8], ids=["float32", "float64"])
def test_fma_selp(check, dtype):
    n = 2000
    a, b, c = (check.floats(dtype, n=n, intervals=[(-4, 4)]) for _ in range(3))
    out = cuda.device_array((2, n), dtype)
    K.fma_selp[blocks(n), TPB_1D](out, cuda.to_device(a), cuda.to_device(b), cuda.to_device(c))
    got = out.copy_to_host()
    exact = np.array(
        [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)]
    ).astype(dtype)  # correctly rounded for float64
    check.ulp(got[0], exact, 0 if dtype is F8 else 1, "cuda.fma (one rounding)", inputs=(a, b, c))
    check.equal(got[1], np.where(a > b, a, c), "cuda.selp")


# ---- complex, float16, tuples --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, rtol", [(C8, 2e-6), (C16, 1e-14)], ids=["complex64", "complex128"])
def test_complex_arithmetic(check, dtype, rtol):
    real = F4 if dtype is C8 else F8

    def cplx():
        parts = [check.floats(real, intervals=[(-10, 10)]) for _ in range(2)]
        return (parts[0] + 1j * parts[1]).astype(dtype)

    a, b = cplx(), cplx()
    out = cuda.device_array((9, N), dtype)
    K.complex_ops[blocks(N), TPB_1D](out, cuda.to_device(a), cuda.to_device(b))
    got = out.copy_to_host()
    A, B = a.astype(C16), b.astype(C16)
    wants = [A + B, A - B, A * B, A / B, np.conj(A), -A, np.abs(A), 2 * A.real + 1j * B.imag, A * A.real + B.imag]
    names = [
        "x + y",
        "x - y",
        "x * y",
        "x / y",
        "x.conjugate()",
        "-x",
        "abs(x)",
        "complex(x.real * 2, y.imag)",
        "x * x.real + y.imag",
    ]
    scales = {2: np.abs(A) * np.abs(B), 8: np.abs(A) ** 2 + np.abs(B)}  # products may cancel
    for row, (name, want) in enumerate(zip(names, wants)):
        scale = scales.get(row, np.abs(want))
        check.within(got[row], want, rtol * scale + 1e-30, f"{np.dtype(dtype).name}: {name}")


def test_float16_arithmetic(check):
    a = check.floats(F2, intervals=[(-8, 8)])
    b = check.floats(F2, intervals=[(-4, -0.5), (0.5, 4)])
    out = cuda.device_array((8, N), F2)
    K.half_ops[blocks(N), TPB_1D](out, cuda.to_device(a), cuda.to_device(b))
    got = out.copy_to_host()
    wants = [a + b, a - b, a * b, a / b, -a, np.abs(a), np.maximum(a, b), a * F2(2) + b]
    names = ["x + y", "x - y", "x * y", "x / y", "-x", "abs(x)", "max(x, y)", "x * float16(2) + y"]
    for row, (name, want) in enumerate(zip(names, wants)):
        check.ulp(got[row], want.astype(F2), 1, f"float16 {name}", inputs=(a, b))
    flags = cuda.device_array((3, N), np.bool_)
    K.half_compare[blocks(N), TPB_1D](flags, cuda.to_device(a), cuda.to_device(b))
    check.equal(flags.copy_to_host(), np.stack([a < b, a >= b, a == b]), "float16 comparisons")


def test_tuples(check):
    a = check.floats(F8, intervals=[(-10, 10)])
    b = check.floats(F8, intervals=[(-10, 10)])
    params = (float(check.rng.uniform(-3, 3)), float(check.rng.uniform(-3, 3)))
    got = run_1d(K.tuple_ops, np.zeros((N, 6)), a, b, params)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    want = np.stack([lo, hi, lo + hi, lo + hi + (lo + hi), np.full(N, 123.0), a * params[0] + params[1]], axis=1)
    check.close(got, want, "tuple return/unpack/index, for over tuples, a tuple argument", rtol=1e-15, atol=1e-14)


# =============================================================================================================
# 3. typical kernels
# =============================================================================================================


def test_saxpy(check):
    n = 1 << 20
    x, y = check.rng.random(n, dtype=F4), check.rng.random(n, dtype=F4)
    a = F4(check.rng.uniform(0.5, 4))
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    r = cuda.device_array_like(dx)
    K.saxpy[blocks(n, 256), 256](r, a, dx, dy)
    check.close(r.copy_to_host(), a * x + y, "saxpy on 2^20 float32", rtol=3e-7)  # fma or not


def test_shared_memory_reduction_with_atomics(check):
    n = int(check.rng.integers(500_000, 1_000_000))
    x = check.ints(I8, n=n, lo=-1000, hi=1000).astype(F8)  # integers: every sum is exact, in any order
    nblocks = blocks(n, K.BLOCK)
    total, partials = cuda.to_device(np.zeros(1)), cuda.device_array(nblocks)
    K.block_sum_atomic[nblocks, K.BLOCK](total, partials, cuda.to_device(x))
    padded = np.zeros(nblocks * K.BLOCK)
    padded[:n] = x
    check.equal(partials.copy_to_host(), padded.reshape(nblocks, K.BLOCK).sum(1), "per-block sums")
    check.equal(total.copy_to_host()[0], x.sum(), f"atomic sum of the {nblocks} block sums of {n} values")


def test_stencil_2d(check):
    a = check.floats(F4, n=300 * 257).reshape(300, 257)
    out = np.zeros_like(a)
    K.stencil_2d[(blocks(300, 16), blocks(257, 16)), (16, 16)](out, a)  # host arrays, copied in and back
    w = a.astype(F8)
    want = np.zeros_like(w)
    want[1:-1, 1:-1] = w[:-2, 1:-1] + w[2:, 1:-1] + w[1:-1, :-2] + w[1:-1, 2:] - 4 * w[1:-1, 1:-1]
    check.within(out, want, 1e-5 * (np.abs(w).max() * 8), "5-point stencil")
    check.equal(out[[0, -1], :], 0, "the border rows stay untouched")


@pytest.mark.parametrize("m, k, n", [(256, 256, 256), (200, 300, 100)], ids=["256x256", "200x300x100"])
def test_tiled_matmul(check, m, k, n):
    A = check.floats(F4, n=m * k).reshape(m, k)
    B = check.floats(F4, n=k * n).reshape(k, n)
    C = np.zeros((m, n), F4)
    tpb = K.TPB
    grid = (max(blocks(n, tpb), blocks(k, tpb)), blocks(m, tpb))  # gridDim.x also covers the inner dimension
    K.fast_matmul[grid, (tpb, tpb)](cuda.to_device(A), cuda.to_device(B), C)
    want = A.astype(F8) @ B.astype(F8)
    bound = k * np.finfo(F4).eps * (np.abs(A).astype(F8) @ np.abs(B).astype(F8))
    check.within(C, want, bound, f"fast_matmul {m}x{k} @ {k}x{n}")


@pytest.mark.parametrize(
    "kernel, grid", [(K.histogram_global, None), (K.histogram_shared, 32)], ids=["global-atomics", "shared-atomics"]
)
def test_histogram(check, kernel, grid):
    n = 100_003
    data = check.ints(I4, n=n, lo=-1000, hi=1000)
    hist = cuda.to_device(np.zeros(K.NBINS, I4))
    kernel[grid or blocks(n, 256), 256](hist, cuda.to_device(data))
    check.equal(hist.copy_to_host(), np.bincount(np.mod(data, K.NBINS), minlength=K.NBINS), "histogram")


def test_warp_shuffle_reduction(check):
    n = 100_000
    x = check.ints(I4, n=n, lo=0, hi=9).astype(F4)  # integers: float32 sums stay exact (< 2^24) in any order
    out = cuda.to_device(np.zeros(1, F4))
    K.warp_reduce[blocks(n, 256), 256](out, cuda.to_device(x))
    check.equal(out.copy_to_host()[0], x.astype(F8).sum(), "warp-shuffle reduction")


# =============================================================================================================
# 4. dispatch, launch and interop
# =============================================================================================================


def test_lazy_compilation_per_argument_types(check):
    kernel = cuda.jit(K.copy_kernel)
    assert len(kernel.overloads) == 0
    # (dtype, strided view?, number of specialisations after the launch)
    for dtype, view, count in [(F4, False, 1), (F8, False, 2), (F4, False, 2), (I4, False, 3), (F4, True, 4)]:
        a = _values(check, dtype, 2 * N)
        src = cuda.to_device(a)
        if view:
            src, a = src[::2], a[::2]  # layout A: a specialisation of its own
        out = cuda.device_array(a.size, dtype)
        kernel[blocks(a.size), TPB_1D](out, src)
        what = f"copy of {np.dtype(dtype).name}{' view' if view else ''}"
        check.equal(out.copy_to_host(), a, what)
        assert len(kernel.overloads) == count, check.note(f"after the {what}: {list(kernel.overloads)}")


def test_eager_signature(check):
    kernel = cuda.jit("void(float32[::1], float32)")(K.scale_inplace)
    assert list(kernel.overloads) == [(float32[::1], float32)]
    a = check.floats(F4)
    d = cuda.to_device(a)
    kernel[blocks(N), TPB_1D](d, F4(3))
    check.equal(d.copy_to_host(), a * F4(3), "eager float32 kernel")
    with pytest.raises(TypeError):
        kernel[blocks(N), TPB_1D](cuda.to_device(a.astype(F8)), F4(3))
    assert len(kernel.overloads) == 1


def test_eager_signature_converts_python_scalars(check):
    """numba launches a single-signature kernel with Python scalars converted to the parameter types
    (numba-cuda's test_coerce_input_types): a float for a float32, an int for an int32."""
    scale_f32 = cuda.jit("void(float32[::1], float32)")(K.scale_inplace)
    a = check.floats(F4)
    d = cuda.to_device(a)
    scale_f32[blocks(N), TPB_1D](d, 2.0)
    check.equal(d.copy_to_host(), a * F4(2), "Python float for a float32 parameter")
    scale_i32 = cuda.jit("void(int32[::1], int32)")(K.scale_inplace)
    b = check.ints(I4, lo=-1000, hi=1000)
    db = cuda.to_device(b)
    scale_i32[blocks(N), TPB_1D](db, 3)
    check.equal(db.copy_to_host(), b * 3, "Python int for an int32 parameter")


def test_list_of_signatures(check):
    kernel = cuda.jit(["void(float32[::1], float32)", "void(float64[::1], float64)"])(K.scale_inplace)
    assert set(kernel.overloads) == {(float32[::1], float32), (float64[::1], float64)}
    for dtype in (F4, F8):
        a = check.floats(dtype)
        d = cuda.to_device(a)
        kernel[blocks(N), TPB_1D](d, dtype(-2))
        check.equal(d.copy_to_host(), a * dtype(-2), np.dtype(dtype).name)
    with pytest.raises(TypeError):
        kernel[blocks(N), TPB_1D](cuda.to_device(check.ints(I4)), I4(2))
    assert len(kernel.overloads) == 2


@pytest.mark.parametrize("which", ["new", "default"])
def test_launch_on_a_stream(check, which):
    s = cuda.stream() if which == "new" else cuda.default_stream()
    kernel = cuda.jit(K.scale_inplace)
    n = 1 << 20
    a = check.floats(F4, n=n)
    d = cuda.to_device(a, stream=s)
    kernel[blocks(n, 256), 256, s](d, F4(0.5))
    kernel[blocks(n, 256), 256, s](d, F4(-4))
    got = d.copy_to_host(stream=s)
    s.synchronize()
    check.equal(got, a * F4(0.5) * F4(-4), f"two launches on the {which} stream, then a copy on it")


@pytest.mark.parametrize(
    "griddim, blockdim",
    [
        (5, 64),
        ((5,), (64,)),
        ((3, 2), (16, 4)),
        ((2, 3, 2), (4, 4, 4)),
        ([2, 2], [8, 8]),
        (np.int64(3), np.int32(96)),
    ],
    ids=["ints", "1-tuples", "2-tuples", "3-tuples", "lists", "numpy-ints"],
)
def test_launch_configurations(griddim, blockdim):
    def total(d):
        return int(np.prod(np.atleast_1d(np.asarray(d, dtype=I8))))

    threads = total(griddim) * total(blockdim)
    out = cuda.to_device(np.zeros(threads, I4))
    K.mark_threads[griddim, blockdim](out)
    np.testing.assert_array_equal(
        out.copy_to_host(), np.ones(threads, I4), err_msg=f"every thread of [{griddim}, {blockdim}] ran exactly once"
    )


@gpu_support.needs_device("host arrays copied to device memory and back (the CPU target passes them in place)")
def test_host_arrays_are_copied_in_and_back(check):
    kernel = cuda.jit(K.copy_kernel)
    a = check.floats(F8)
    a.flags.writeable = False  # read-only input: copied in, never back
    out = np.zeros(N)
    with pytest.warns(errors.NumbaPerformanceWarning, match="Host array"):
        kernel[blocks(N), TPB_1D](out, a)
    check.equal(out, a, "the host output array was copied back")
    assert list(kernel.overloads) == [(typeof(out), typeof(a))] and typeof(a) != typeof(out)  # readonly input


@gpu_support.needs_device("the PTX of noalias kernels (ld.global.nc) and the driver-loaded overlap variant")
def test_overlapping_arrays_run_the_variant_without_noalias(check):
    """Kernels compile with noalias array data (read-only arrays load with ld.global.nc); a launch whose arrays
    share bytes runs a variant compiled without it, on first need."""
    kernel = cuda.jit(kernels_src.saxpy)
    x, y, z = check.floats(F4), check.floats(F4), check.floats(F4, N + 1)
    d_x, d_y, d_r = cuda.to_device(x), cuda.to_device(y), cuda.device_array(N, F4)
    a = F4(1.5)  # a * x + y contracts to an fma: compared within 1e-7 (absolute) where it cancels
    kernel[blocks(N), TPB_1D](d_r, a, d_x, d_y)
    check.close(d_r.copy_to_host(), a * x + y, "disjoint arrays", rtol=1e-6, atol=1e-7)
    (only,) = kernel.overloads.values()

    def variants():  # the specialisations kept out of overloads: the variant for overlaps
        return [face for _, face in kernel._kernels.specialisations(listed_only=False) if face is not only]

    assert only.options.noalias_arrays and ".nc." in only.ptx and not variants()
    kernel[blocks(N), TPB_1D](d_x, a, d_x, d_y)  # in place: r is x
    check.close(d_x.copy_to_host(), a * x + y, "r is x", rtol=1e-6, atol=1e-7)
    (variant,) = variants()
    assert not variant.options.noalias_arrays and ".nc." not in variant.ptx
    d_z = cuda.to_device(z)
    kernel[blocks(N), TPB_1D](d_r, a, d_z[1:], d_z[:-1])  # two overlapping read-only views
    check.close(d_r.copy_to_host(), a * z[1:] + z[:-1], "overlapping views", rtol=1e-6, atol=1e-7)
    assert variants() == [variant]
    kernel[blocks(N), TPB_1D](d_r, a, d_y, d_y)  # the same array twice
    check.close(d_r.copy_to_host(), a * y + y, "x is y", rtol=1e-6, atol=1e-7)


def test_specialize(check):
    kernel = cuda.jit(K.copy_kernel)
    a = check.floats(F4)
    d_a, d_out = cuda.to_device(a), cuda.device_array(N, F4)
    spec = kernel.specialize(d_out, d_a)
    assert spec.specialized and len(spec.overloads) == 1
    spec[blocks(N), TPB_1D](d_out, d_a)
    check.equal(d_out.copy_to_host(), a, "specialized kernel")
    with pytest.raises(TypeError):
        spec[blocks(N), TPB_1D](cuda.device_array(N, F8), cuda.to_device(a.astype(F8)))
    with pytest.raises(RuntimeError, match="already specialized"):
        spec.specialize(d_out, d_a)
    assert kernel.specialize(d_out, d_a) is spec


@gpu_support.needs_device("PTX inspection")
def test_inspect_asm_and_llvm():
    kernel = cuda.jit(K.copy_kernel)
    out = cuda.device_array(64, F4)
    kernel[1, 64](out, cuda.to_device(np.arange(64, dtype=F4)))
    sig = (float32[::1], float32[::1])
    asm, llvm = kernel.inspect_asm(), kernel.inspect_llvm()
    assert list(asm) == [sig] and list(llvm) == [sig]
    assert ".entry" in asm[sig] and "ld.global" in asm[sig] and "st.global" in asm[sig]
    assert "define" in llvm[sig] and "copy_kernel" in llvm[sig]
    assert kernel.inspect_asm(sig) == asm[sig] and kernel.inspect_llvm(sig) == llvm[sig]


@pytest.mark.parametrize(
    "config, message",
    [
        ((1, 0), r"zero threads"),
        ((0, 32), r"zero threads"),
        ((1, 2048), r"block \(2048, 1, 1\).*at most 1024|2048 threads per block"),
        ((1, (32, 32, 2)), r"2048 threads per block"),
        ((1, 32, 0, 1 << 20), r"1048576 bytes of dynamic shared memory"),
    ],
    ids=["block-0", "grid-0", "block-2048", "block-32x32x2", "sharedmem-1MiB"],
)
def test_launch_configuration_errors(config, message):
    out = cuda.device_array(16, F4)
    with pytest.raises(errors.LaunchConfigError, match=message):
        K.reverse_dynamic_shared[config](out, out)


def test_wrong_argument_count():
    lazy = cuda.jit(K.copy_kernel)
    out = cuda.device_array(16, F4)
    with pytest.raises(TypeError, match=r"takes 2 .*argument.*1|expected 2.* got 1"):
        lazy[1, 16](out)
    with pytest.raises(TypeError, match=r"argument"):
        lazy[1, 16](out, out, out)
    eager = cuda.jit("void(float32[::1], float32[::1])")(K.copy_kernel)
    with pytest.raises(TypeError, match=r"argument"):
        eager[1, 16](out)


def test_launch_without_configuration():
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        cuda.jit(K.copy_kernel)(cuda.device_array(4), cuda.device_array(4))


# ---- interop -------------------------------------------------------------------------------------------------


def _interop_case(check):
    x = check.floats(F4, n=64 * 96).reshape(64, 96)
    y = check.floats(F4, n=64 * 96).reshape(64, 96)
    return x, y, F4(check.rng.uniform(-2, 2))


def _run_interop(out, x, y, alpha):
    kernel = cuda.jit(K.interop_axpy)
    kernel[(blocks(out.shape[0], 8), blocks(out.shape[1], 32)), (8, 32)](out, x, y, alpha)
    cuda.synchronize()


@gpu_support.needs_device("CuPy arrays live on a GPU (CuPy and the host driver in one process crashed a worker)")
def test_cupy_arrays(check):
    cp = pytest.importorskip("cupy")
    x, y, alpha = _interop_case(check)
    out = cp.zeros(x.shape, cp.float32)
    _run_interop(out, cp.asarray(x), cp.asarray(y), alpha)
    check.close(cp.asnumpy(out), alpha * x + y, "CuPy arrays", rtol=1e-6, atol=1e-6)
    # a strided CuPy view and a transposed (F-ordered) one
    out2 = cp.zeros((64, 48), cp.float32)
    _run_interop(out2, cp.asarray(x)[:, ::2], cp.asarray(np.ascontiguousarray(y[:, ::2].T)).T, alpha)
    check.close(cp.asnumpy(out2), alpha * x[:, ::2] + y[:, ::2], "CuPy views", rtol=1e-6, atol=1e-6)


@gpu_support.needs_device(
    "PyTorch CUDA tensors live on a GPU (torch and the host driver in one process crashed a worker)"
)
def test_torch_tensors(check):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    x, y, alpha = _interop_case(check)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    out = torch.zeros_like(tx)
    _run_interop(out, tx, ty, alpha)
    check.close(out.cpu().numpy(), alpha * x + y, "torch CUDA tensors", rtol=1e-6, atol=1e-6)
    out2 = torch.zeros((96, 64), device="cuda")
    _run_interop(out2, tx.t(), ty.t(), alpha)  # transposed tensors: F layout
    check.close(out2.cpu().numpy(), (alpha * x + y).T, "transposed torch tensors", rtol=1e-6, atol=1e-6)
