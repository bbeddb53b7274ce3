"""Python's literals, expressions and statements, calls to device functions, and globals and closures frozen at
compile time: each compiles, with numba-cuda 0.30.4's result types."""

import re
import sys

import pytest

from cujit import cuda
from cujit import boolean, int8, int32, int64, uint32, uint64, float32, float64, void, UniTuple, Tuple


def body(ptx):
    return ptx[ptx.index("{", ptx.index(".visible")) :]


# -- literals and expressions -------------------------------------------------------------------


def int_literals(x):
    return x + 0x10 + 0o7 + 0b11 + 1_000 - 5


def float_literals(x):
    return x + 1e3 + 0.5 + 2.5e-3 - 0.25


def bool_literals(x):
    return (x > 0) == True or False  # noqa: E712


def all_binary_int(a, b):
    return (a + b) - (a * b) + (a // b) + (a % b) + (a**2) + (a << 1) + (a >> 1) + (a & b) + (a | b) + (a ^ b)


def all_binary_float(a, b):
    return (a + b) - (a * b) + (a / b) + (a // b) + (a % b) + (a**b)


def unary_ops(a):
    return -a + (+a) + (~a) + (not a)


def chained(a, b, c):
    return a < b <= c


def chained_long(a, b, c, d):
    return a < b < c != d


def bool_ops(a, b):
    return (a > 0 and b > 0) or a == b


def and_value(a, b):
    return a and b


def or_value(a, b):
    return a or b


def ternary(a, b):
    return a if a > b else b


def ternary_mixed(a, b):
    return a if a > 0 else 1.5


# -- statements ---------------------------------------------------------------------------------------


def if_elif_else(a):
    if a < 0:
        r = -1
    elif a == 0:
        r = 0
    else:
        r = 1
    return r


def while_loop(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s


def for_range1(n):
    s = 0
    for i in range(n):
        s += i
    return s


def for_range2(a, b):
    s = 0
    for i in range(a, b):
        s += i
    return s


def for_range3(a, b, c):
    s = 0
    for i in range(a, b, c):
        s += i
    return s


def for_negative_step(n):
    s = 0
    for i in range(n, 0, -2):
        s += i
    for j in range(10, -10, -3):
        s -= j
    return s


def break_continue(n):
    s = 0
    for i in range(n):
        if i == 50:
            break
        if i % 3 == 0:
            continue
        s += i
    k = 0
    while True:
        k += 1
        if k > n:
            break
    return s + k


def nested_loops(n):
    s = 0
    for i in range(n):
        for j in range(i, n):
            if j > 10:
                break
            s += i * j
    return s


def augmented(a):
    x = a
    x += 1
    x -= 2
    x *= 3
    x //= 2
    x %= 7
    x **= 2
    x <<= 1
    x >>= 1
    x &= 255
    x |= 1
    x ^= 3
    return x


def augmented_float(a):
    x = a
    x += 1.0
    x /= 2.0
    x -= 0.5
    x *= x
    return x


def tuples(a, b):
    t = (a, b)
    x, y = t
    x, y = y, x
    (p, q), r = (x, y), a
    return p - q + r


def return_tuple(a):
    return a, a


def return_mixed_tuple(a, b):
    return a, b


def multiple_returns(a):
    if a > 0:
        return a
    elif a < -10:
        return -a
    return 0


def multiple_returns_mixed(a):
    if a > 0:
        return a
    return 1.5


def type_changes(a):
    x = 1
    if a > 0:
        x = 2.5
    return x


def type_changes_straight(a):
    x = 1
    x = x + 0.5
    return x


def no_return(a):
    x = a + 1  # noqa: F841


def return_none(a):
    return None


def bare_return(a):
    if a > 0:
        return
    x = a  # noqa: F841


def pass_only(a):
    pass


CASES = [
    (int_literals, (int32,), int64),
    (float_literals, (float32,), float64),
    (bool_literals, (int32,), boolean),
    (all_binary_int, (int32, int32), int64),
    (all_binary_float, (float32, float32), float32),
    (all_binary_float, (float64, float32), float64),
    (unary_ops, (int32,), int64),
    (unary_ops, (boolean,), int64),
    (chained, (int32, int32, int32), boolean),
    (chained, (float32, int32, float64), boolean),
    (chained_long, (int32, int64, float32, uint32), boolean),
    (bool_ops, (int32, int32), boolean),
    (and_value, (int32, int32), int32),
    (and_value, (float32, float32), float32),
    (or_value, (uint32, uint32), uint32),
    (ternary, (int32, int32), int32),
    (ternary, (float32, float32), float32),
    (ternary_mixed, (int32, int32), float64),
    (if_elif_else, (int32,), int64),
    (if_elif_else, (float32,), int64),
    (while_loop, (int32,), int64),
    (for_range1, (int32,), int64),
    (for_range2, (int32, int32), int64),
    (for_range3, (int32, int32, int32), int64),
    (for_range3, (int64, int64, int64), int64),
    (for_negative_step, (int32,), int64),
    (break_continue, (int32,), int64),
    (nested_loops, (int64,), int64),
    (augmented, (int32,), int64),
    (augmented, (uint32,), int64),
    (augmented_float, (float32,), float64),
    (tuples, (int32, int32), int64),
    (tuples, (float32, float32), float32),
    (tuples, (uint32, uint32), uint64),
    (return_tuple, (int32,), UniTuple(int32, 2)),
    (return_mixed_tuple, (int32, float64), Tuple((int32, float64))),
    (multiple_returns, (int32,), int64),
    (multiple_returns, (float32,), float64),
    (multiple_returns_mixed, (int32,), float64),
    (type_changes, (int32,), float64),
    (type_changes, (float32,), float64),
    (type_changes_straight, (int32,), float64),
    (no_return, (int32,), void),
    (return_none, (float32,), void),
    (bare_return, (int32,), void),
    (pass_only, (int8,), void),
]


@pytest.mark.parametrize(
    "pyfunc, argtypes, expected", CASES, ids=[f"{f.__name__}-" + "-".join(map(str, a)) for f, a, _ in CASES]
)
def test_construct_compiles_with_numba_result_type(pyfunc, argtypes, expected):
    _, resty = cuda.compile_ptx(pyfunc, argtypes, device=True)
    assert resty == expected


@pytest.mark.parametrize(
    "pyfunc, argtypes",
    [
        (for_range1, (int32,)),
        (while_loop, (int64,)),
        (for_negative_step, (int32,)),
        (break_continue, (int32,)),
    ],
)
def test_loops_are_loops_in_ptx(pyfunc, argtypes):
    """A loop over a runtime bound is a backward branch in unoptimised code (LLVM may close-form it otherwise)."""
    ptx, _ = cuda.compile_ptx(pyfunc, argtypes, device=True, opt=False)
    labels = {m.group(1): m.start() for m in re.finditer(r"^(\$L__\w+):", ptx, re.M)}
    branches = [(m.group(1), m.start()) for m in re.finditer(r"\bbra(?:\.uni)?\s+(\$L__\w+);", ptx)]
    assert any(labels.get(target, sys.maxsize) < pos for target, pos in branches), body(ptx)


def test_kernels_accept_the_same_constructs():
    for pyfunc, argtypes, expected in CASES:
        if expected == void:
            _, resty = cuda.compile_ptx(pyfunc, argtypes)
            assert resty == void


LAMBDAS = {
    "in_dict": (lambda x: x + 1, "first"),
}
LAMBDA_LIST = [
    lambda x: x * 2,
    lambda x, y: x - y,
]


def test_lambdas_defined_inside_literals():
    """numba compiles lambdas wherever they are written (here inside a dict and a list)."""
    _, resty = cuda.compile(LAMBDAS["in_dict"][0], (int32,))
    assert resty == int64
    _, resty = cuda.compile(LAMBDA_LIST[0], (float32,))
    assert resty == float64
    _, resty = cuda.compile(LAMBDA_LIST[1], (int32, int32))
    assert resty == int64


# -- calls to device functions ---------------------------------------------------------------------


@cuda.jit(device=True)
def triple(x):
    return x * 3


@cuda.jit(device=True)
def triple_plus_one(x):
    return triple(x) + 1


@cuda.jit(device=True)
def pick(a, b):
    if a > b:
        return a
    return b


def call_device(x):
    return triple(x)


def call_nested_device(x):
    return triple_plus_one(x) * 2


def call_device_twice_with_different_types(x, y):
    return triple(x) + triple(y)


def call_with_expression_arguments(a, b):
    return pick(a + 1, b * 2) + pick(a, a)


def kernel_calling_device(a, b):
    c = pick(a, b) + triple(a)  # noqa: F841


DEVICE_CALLS = [
    (call_device, (int32,), int64),
    (call_device, (float32,), float64),  # float32 * 3: the int64 literal makes it float64
    (call_nested_device, (int32,), int64),
    (call_nested_device, (float64,), float64),
    (call_device_twice_with_different_types, (int32, float32), float64),
    (call_with_expression_arguments, (int32, int32), int64),
]


@pytest.mark.parametrize(
    "pyfunc, argtypes, expected",
    DEVICE_CALLS,
    ids=[f"{f.__name__}-" + "-".join(map(str, a)) for f, a, _ in DEVICE_CALLS],
)
@pytest.mark.parametrize("abi", ["numba", "c"])
def test_calls_to_device_functions(pyfunc, argtypes, expected, abi):
    _, resty = cuda.compile_ptx(pyfunc, argtypes, device=True, abi=abi)
    assert resty == expected


def test_kernel_calls_device_functions():
    ptx, resty = cuda.compile_ptx(kernel_calling_device, (int32, int32))
    assert resty == void
    assert re.search(r"\.visible\s+\.entry", ptx)


def test_device_function_calls_without_optimisation():
    """At opt=False the callees stay separate Numba-ABI functions that the caller calls."""
    ptx, resty = cuda.compile_ptx(call_nested_device, (int32,), device=True, opt=False)
    assert resty == int64
    called = set(re.findall(r"\bcall(?:\.uni)?\s*(?:\([^)]*\),)?\s*(\w+)\s*,", ptx))
    assert any("15triple_plus_one" in name for name in called), called


def test_jit_decorated_device_function_is_not_callable_from_python():
    with pytest.raises(TypeError):
        triple(3)


# -- globals and closures are frozen at compile time ----------------------------------------------

SCALE = 1000003


def scaled(x):
    return x * SCALE


def test_globals_are_frozen_at_each_compile(monkeypatch):
    first, _ = cuda.compile_ptx(scaled, (int32,), device=True)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 2000003)
    second, _ = cuda.compile_ptx(scaled, (int32,), device=True)
    assert re.search(r"\b1000003\b", body(first)) and not re.search(r"\b2000003\b", body(first))
    assert re.search(r"\b2000003\b", body(second)) and not re.search(r"\b1000003\b", body(second))


def make_scaler(factor):
    def scale(x):
        return x * factor

    return scale


def test_closure_variables_are_frozen():
    a, _ = cuda.compile_ptx(make_scaler(1000003), (int32,), device=True)
    b, _ = cuda.compile_ptx(make_scaler(2000003), (int32,), device=True)
    assert re.search(r"\b1000003\b", body(a)) and not re.search(r"\b2000003\b", body(a))
    assert re.search(r"\b2000003\b", body(b)) and not re.search(r"\b1000003\b", body(b))


FLOAT_GLOBAL = 0.5
BOOL_GLOBAL = True


def uses_scalar_globals(x):
    if BOOL_GLOBAL:
        return x * FLOAT_GLOBAL
    return x


def test_float_and_bool_globals():
    _, resty = cuda.compile_ptx(uses_scalar_globals, (float32,), device=True)
    assert resty == float64
