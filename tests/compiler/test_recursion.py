"""Self-recursion of device functions (issue 42), on both frontends, as numba-cuda types it: through a global name
with an explicit signature (compiled at decoration, before the name is bound), through a closure's name, and
without a signature (the recursive calls take the type of the returns that do not depend on them); a recursive
function whose argument types change once; an Optional return. Runaway recursion, a return type that keeps
growing and mutual recursion are errors at the call. Compiled (PTX assembled by the suite's ptxas check) and run
against Python where kernels run."""

import re

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, errors, types

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
from cujit import cuda

@cuda.jit("i8(i8)", device=True)
def fib1(n):
    if n < 2:
        return n
    return fib1(n - 1) + fib1(n - 2)

def make_fib2():
    @cuda.jit("i8(i8)", device=True)
    def fib2(n):
        if n < 2:
            return n
        return fib2(n - 1) + fib2(n - 2)
    return fib2

fib2 = make_fib2()

@cuda.jit(device=True)
def fib3(n):
    if n < 2:
        return n
    return fib3(n - 1) + fib3(n - 2)

@cuda.jit(device=True)
def power(n):  # the recursive return comes first
    if n > 0:
        return power(n - 1) * 1.5
    return 1.0

@cuda.jit
def type_change(x, y):  # (int64, float64), then (float64, float64)
    if x > 1 and y > 0:
        return x + type_change(x - y, y)
    return y

@cuda.jit(device=True)
def above_five(x):
    if x > 5:
        return x - 1
    return None

@cuda.jit(device=True)
def chain(x):  # an Optional return, recursive
    out = above_five(x)
    if out is None:
        return out
    elif out < 8:
        return out
    return x * chain(out)

@cuda.jit
def kernel(out, n, y):
    out[0] = fib1(n)
    out[1] = fib2(n)
    out[2] = fib3(n)
    out[3] = power(n)
    out[4] = type_change(n, y)
    res = chain(n)
    if res is None:
        res = 999
    out[5] = res
"""

ERRORS = """
from cujit import cuda

@cuda.jit(device=True)
def runaway(x):
    return runaway(x)

@cuda.jit(device=True)
def make_list(n):
    if n <= 0:
        return None
    return (n, make_list(n - 1))

@cuda.jit(device=True)
def ping(n):
    return pong(n - 1) if n > 0 else 0

@cuda.jit(device=True)
def pong(n):
    return ping(n - 1) if n > 0 else 1

def calls_runaway():
    runaway(1)

def calls_make_list(n):
    make_list(n)

def calls_ping(n):
    return ping(n)
"""


def expected(n, y):
    def fib(k):
        return k if k < 2 else fib(k - 1) + fib(k - 2)

    def type_change(x, y):
        return x + type_change(x - y, y) if x > 1 and y > 0 else y

    def chain(x):
        out = x - 1 if x > 5 else None
        if out is None or out < 8:
            return out
        return x * chain(out)

    res = chain(n)
    return [fib(n), fib(n), fib(n), 1.5**n, type_change(n, y), 999 if res is None else res]


def function_bodies(ptx):
    """{symbol: body} of the PTX's function definitions."""
    out = {}
    for match in re.finditer(r"\.func\s+(?:\([^)]*\)\s*)?(\w+)\s*\((.*?)\n}\n", ptx, re.S):
        out[match.group(1)] = match.group(2)
    return out


def test_compiles_a_call_to_itself(frontend):
    scope = define(PROGRAM, frontend)
    signature = "void(float64[::1], int64, float64)"
    ptx, _ = cuda.compile_ptx(scope["kernel"].py_func, signature, cc=(9, 0))
    # Each recursive function's body calls its own symbol.
    bodies = function_bodies(ptx)
    for name in ("fib1", "fib2", "fib3", "power", "type_change", "chain"):
        own = [symbol for symbol in bodies if re.search(rf"\d{name}B", symbol)]
        assert any(re.search(rf"call\.uni\s*(\(\w+\),\s*)?{symbol},", bodies[symbol]) for symbol in own), name
    assert scope["fib3"].overloads and scope["fib1"].overloads


def test_return_types(frontend):
    scope = define(PROGRAM, frontend)
    assert scope["fib1"].compile_device((types.int64,)).signature.return_type == types.int64
    assert scope["fib3"].compile_device((types.int64,)).signature.return_type == types.int64
    assert scope["power"].compile_device((types.int64,)).signature.return_type == types.float64
    assert scope["chain"].compile_device((types.int64,)).signature.return_type.name == "OptionalType(int64)"


def test_ltoir(frontend):
    scope = define(PROGRAM, frontend)
    code, _ = cuda.compile(scope["fib3"].py_func, (types.int64,), device=True, cc=(9, 0), output="ltoir")
    assert len(code) > 0


@pytest.mark.parametrize(
    "caller, at, says",
    [
        ("calls_runaway", "runaway(x)", "cannot type infer runaway recursion"),
        ("calls_make_list", "make_list(n - 1)", "Return type of recursive function does not converge"),
        ("calls_ping", "ping(n - 1)", "mutually recursive device functions are not supported"),
    ],
    ids=["runaway", "growing-return", "mutual"],
)
def test_errors_point_at_the_call(frontend, caller, at, says):
    scope = define(ERRORS, frontend)
    argtypes = () if caller == "calls_runaway" else (types.int64,)
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(scope[caller], argtypes, device=True, cc=(9, 0))
    message = str(info.value)
    line = next(i for i, text in enumerate(ERRORS.split("\n"), 1) if at in text and "def" not in text)
    assert says in message and f"line {line}" in message and "^" in message, message
    if frontend == "source":
        assert at in message, message


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_runs(frontend):
    scope = define(PROGRAM, frontend)
    rng = np.random.default_rng()
    for n in (int(rng.integers(0, 5)), int(rng.integers(6, 16))):
        y = float(rng.choice([1.0, 2.0, 4.0]))  # at most 15 levels: the GPU's default stack is 1 KiB a thread
        out = np.zeros(6)
        scope["kernel"][1, 1](out, n, y)
        np.testing.assert_allclose(out, expected(n, y), rtol=1e-12)
