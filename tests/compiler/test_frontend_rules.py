"""The frontend's share of numba's rules (frontend/build_ir.cpp): variables read before any assignment,
dead-branch pruning of constant conditions before typing, integer literals beyond int64 and the constant
folding CPython does before numba sees the code. Expected results were checked against numba-cuda 0.30.4."""

import pytest

from cujit import _core, cuda, errors, float64, int64
from source_lines import source_position


def compile_device(fn, *argtypes):
    return cuda.compile_ptx(fn, argtypes, device=True)


def assert_located(exc_info, fn, construct):
    line, text = source_position(fn, construct)
    message = str(exc_info.value)
    assert f":{line}" in message and text.strip() in message and "^" in message, message


# ----------------------------------------------------------------------------------------------
# Reads before assignment
# ----------------------------------------------------------------------------------------------


def read_then_assign(x):
    y = z + 1  # noqa: F821
    z = 2  # noqa: F841
    return y


def read_in_loop_before_assignment(n):
    r = 0
    for i in range(n):
        if i > 0:
            r += z  # noqa: F821
        z = i  # noqa: F841
    return r


def augmented_before_assignment(x):
    t += x  # noqa: F821
    return t


def range_of_itself(x):
    for i in range(i):  # noqa: F821
        pass
    return x


@pytest.mark.parametrize(
    "fn, construct",
    [
        (read_then_assign, "z + 1"),
        (read_in_loop_before_assignment, "r += z"),
        (augmented_before_assignment, "t += x"),
        (range_of_itself, "range(i)"),
    ],
)
def test_read_before_any_assignment_is_not_defined(fn, construct):
    with pytest.raises(errors.NotDefinedError, match="Variable '[ztri]' is not defined") as info:
        compile_device(fn, int64)
    assert_located(info, fn, construct)
    assert isinstance(info.value, errors.NumbaError)


def assigned_on_some_paths(x):
    if x > 0:
        z = 1
    return z


def assigned_in_the_other_branch(x):
    if x > 0:
        z = 1
    else:
        y = z  # noqa: F841
    return x


@pytest.mark.parametrize(
    "fn, expected", [(assigned_on_some_paths, _core.types.integer_literal(1)), (assigned_in_the_other_branch, int64)]
)
def test_assignment_earlier_in_the_source_is_numbas_business(fn, expected):
    assert compile_device(fn, int64)[1] == expected


# ----------------------------------------------------------------------------------------------
# Constant conditions pruned before typing
# ----------------------------------------------------------------------------------------------


def pruned_ifexp(c):
    return (-2.5 if 10.0 == -2.5 else c) + 1


def pruned_if(c):
    if 1 > 2:
        c = 2.5
    return c


def pruned_else(c):
    if 3:
        r = c
    else:
        r = 0.5
    return r


def pruned_while(c):
    while 0:
        c = 2.5
    return c


def pruned_not(c):
    return c if not (2 < 1 < 0) else 1.5


def not_pruned(c):
    return 2.5 if c == 1 else c


@pytest.mark.parametrize(
    "fn, expected",
    [
        (pruned_ifexp, int64),
        (pruned_if, int64),
        (pruned_else, int64),
        (pruned_while, int64),
        (pruned_not, int64),
        (not_pruned, float64),
    ],
)
def test_constant_conditions_pruned_before_typing(fn, expected):
    assert compile_device(fn, int64)[1] == expected


# ----------------------------------------------------------------------------------------------
# Integer literals beyond int64, and folding
# ----------------------------------------------------------------------------------------------


def add_uint64_max(x):
    return x + 18446744073709551615


def uint64_literal(x):
    return 9223372036854775808


def int64_min_literal(x):
    return x + -9223372036854775808


def folded_shift(x):
    return 1 << 63


def too_large(x):
    return x + 184467440737095516150


def folded_too_large(x):
    return x + 2**64


def negated_too_large(x):
    return x + -18446744073709551615


GLOBAL_UINT64 = 2**64 - 2
GLOBAL_TOO_LARGE = 2**70


def uses_global_uint64(x):
    return GLOBAL_UINT64


def uses_global_too_large(x):
    return x + GLOBAL_TOO_LARGE


def test_int64_plus_uint64_literal_is_int64():
    # numba: int64 + uint64 picks the signed 64-bit template
    assert compile_device(add_uint64_max, int64)[1] == int64
    assert compile_device(int64_min_literal, int64)[1] == int64


@pytest.mark.parametrize("fn, value", [(uint64_literal, 2**63), (folded_shift, 2**63), (uses_global_uint64, 2**64 - 2)])
def test_literals_in_uint64_range_are_uint64(fn, value):
    ptx, resty = compile_device(fn, int64)
    assert str(resty) == f"Literal[int]({value})" and resty.kind == "integer_literal" and not resty.signed
    assert resty.literal_value == value or resty.literal_value == value - 2**64


@pytest.mark.parametrize(
    "fn, construct, value",
    [
        (too_large, "184467440737095516150", "184467440737095516150"),
        (folded_too_large, "2**64", "18446744073709551616"),
        (negated_too_large, "-18446744073709551615", "-18446744073709551615"),
        (uses_global_too_large, "GLOBAL_TOO_LARGE", str(2**70)),
    ],
)
def test_literal_no_integer_type_holds(fn, construct, value):
    with pytest.raises(errors.TypingError, match=f"Int value is too large: {value}") as info:
        compile_device(fn, int64)
    assert_located(info, fn, construct)
