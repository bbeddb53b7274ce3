"""Inner functions, closures, ``nonlocal`` and lambdas (issue 42), inlined where they are called as numba inlines
closures (cpp/src/passes/inline_inner_functions.cpp), on both frontends: compiled everywhere, run against Python's
own run of the same function where kernels run; numba-cuda's refusals as errors at the line, with a caret."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, types
from cujit.errors import UnsupportedError, TypingError

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
from cujit import cuda


def closures(out, x, n):
    scale = 3.0

    def affine(a, b=2.0):
        return a * scale + b

    square = lambda v: v * v

    def first_above(limit):
        for i in range(n):
            if x[i] > limit:
                return i
        return -1

    count = 0

    def bump(by=1):
        nonlocal count
        count += by

    def outer_helper(v):
        def twice(w):
            return 2 * w
        return twice(v) + affine(v)

    out[0] = affine(x[0])
    out[1] = affine(x[1], b=5.0)
    out[2] = square(affine(x[2]))
    out[3] = first_above(0.5)
    bump()
    bump(by=2)
    out[4] = count
    scale = 10.0  # read at the call, as Python's closures read it
    out[5] = affine(1.0)
    out[6] = outer_helper(x[3])
"""

SIG = "void(float64[::1], float64[::1], int64)"


def run_on_host(fn, *args):
    fn(*args)


def test_compiles(frontend):
    fn = define(PROGRAM, frontend)["closures"]
    ptx, _ = cuda.compile_ptx(fn, SIG, cc=(9, 0))
    assert ".entry" in ptx


def test_lambda_as_a_device_function(frontend):
    square = define("square = lambda x: x * x\n", frontend)["square"]
    device = cuda.jit(device=True)(square)
    caller = define("def f(a):\n    return sq(a) * a\n", frontend, {"sq": device})["f"]
    assert cuda.compile_ptx(caller, "(float32,)", device=True)[1] == types.float32


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_runs_as_python_does(frontend):
    fn = define(PROGRAM, frontend)["closures"]
    x = np.random.default_rng().random(8)
    out, expected = np.zeros(7), np.zeros(7)
    cuda.jit(SIG)(fn)[1, 1](out, x, x.size)
    fn(expected, x, x.size)  # the same function, run by Python
    np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize(
    "body, error, pattern, excerpt",
    [
        ("def g(y):\n    return g(y)\nreturn g(a)", UnsupportedError, "recursive inner function", "g(y)"),
        ("def g():\n    return 1\nwhile g() < a:\n    a -= 1\nreturn a", UnsupportedError, "while loop", "g()"),
        ("def g(y):\n    return y\nreturn a and g(a)", UnsupportedError, "may not evaluate", "g(a)"),
        ("def g(y):\n    return y\nreturn g(a, a)", TypingError, "takes 1 positional", "g(a, a)"),
        ("g = lambda y: y\nreturn g", TypingError, "inner function 'g' as a value", "return g"),
    ],
    ids=["recursion", "while-test", "and-operand", "argument-count", "as-value"],
)
def test_refused_at_the_line(frontend, body, error, pattern, excerpt):
    source = "def f(a):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    fn = define(source, frontend)["f"]
    with pytest.raises(error, match=pattern) as info:
        cuda.compile_ptx(fn, "(int64,)", device=True)
    message = str(info.value)
    assert excerpt in message and "^" in message, message
