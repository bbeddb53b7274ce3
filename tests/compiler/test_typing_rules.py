"""numba's typing rules (arithmetic, builtins, conversions, literals, range indices), checked through the returned
type and through the PTX.

Every expected type was produced by numba-cuda 0.30.4 (``compile(..., device=True)`` / ``compile_ptx`` at
cc 7.5). The PTX checks look at how the result leaves the function: the Numba ABI stores it through the
return pointer with a store of the result's width and kind (``st.u64``, ``st.f32``, ``st.u8`` for bool...),
the C ABI returns it in a ``.b32``/``.b64`` ``func_retval0``.
"""

import math
import re

import numpy as np
import pytest

from cujit import cuda, errors
from cujit import boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64

# LLVM 22's NVPTX stores untyped bits (st.b64 for an int64 and a float64 alike): the width is what the store
# shows, the kind (int, float) is checked on the returned type.
STORE_KIND = {
    int64: "b64",
    uint64: "b64",
    int32: "b32",
    uint32: "b32",
    int16: "b16",
    uint16: "b16",
    int8: "b8",
    uint8: "b8",
    boolean: "b8",
    float32: "b32",
    float64: "b64",
}
C_RETVAL = {int64: "b64", uint64: "b64", float64: "b64"}  # everything narrower is a .b32


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def truediv(x, y):
    return x / y


def floordiv(x, y):
    return x // y


def mod(x, y):
    return x % y


def power(x, y):
    return x**y


def square(x):
    return x**2


def neg(x):
    return -x


def pos(x):
    return +x


def invert(x):
    return ~x


def not_(x):
    return not x


def lshift(x, y):
    return x << y


def rshift(x, y):
    return x >> y


def and_(x, y):
    return x & y


def or_(x, y):
    return x | y


def xor(x, y):
    return x ^ y


def lt(x, y):
    return x < y


def eq(x, y):
    return x == y


def ge(x, y):
    return x >= y


def ne(x, y):
    return x != y


def call_with(fn):
    """A device function calling `fn` (a closure variable, frozen at compile time) on its arguments."""

    def call1(x):
        return fn(x)

    def call2(x, y):
        return fn(x, y)

    def call3(x, y, z):
        return fn(x, y, z)

    return {1: call1, 2: call2, 3: call3}


def body(ptx):
    return ptx[ptx.index("{", ptx.index(".visible")) :]


def return_stores(ptx):
    """Kinds of the stores through a pointer register (only the return slot, in optimised scalar code)."""
    return set(re.findall(r"^\s*st\.(\w+)\s+\[%rd\d+(?:\+0)?\]", body(ptx), re.M))


def c_retval(ptx):
    m = re.search(r"\.visible\s+\.func\s+\(\.param\s+\.(\w+)\s+func_retval0\)", ptx)
    return m.group(1) if m else None


def check_typing(pyfunc, argtypes, expected, op=None, no_op=None):
    """resty of both ABIs, the stores of the Numba ABI, the return width of the C ABI, optional opcodes."""
    ptx, resty = cuda.compile_ptx(pyfunc, argtypes, device=True)
    assert resty == expected, f"{pyfunc.__name__}{argtypes}: got {resty}, numba gives {expected}"
    assert return_stores(ptx) == {STORE_KIND[expected]}
    c_ptx, c_resty = cuda.compile(pyfunc, argtypes)
    assert c_resty == expected
    assert c_retval(c_ptx) == C_RETVAL.get(expected, "b32")
    for text in (ptx, c_ptx):
        if op is not None:
            assert re.search(op, body(text)), f"no {op!r} in the PTX"
        if no_op is not None:
            assert not re.search(no_op, body(text)), f"unexpected {no_op!r} in the PTX"


F32_ONLY = r"\.f64\b"  # float32 results must not go through double precision
F64_ADD, F32_ADD = r"\badd(\.rn)?\.f64\b", r"\badd(\.rn)?\.f32\b"

# binary arithmetic: every operator over the scalar types (plus the verified neighbours of some rows)
ARITHMETIC = [
    (add, (int32, int32), int64, None, None),
    (add, (int8, int8), int64, None, None),
    (add, (uint32, int32), int64, None, None),
    (mul, (int32, int32), int64, None, None),
    (add, (uint32, uint32), uint64, None, None),
    (sub, (uint32, uint32), uint64, None, None),
    (add, (uint64, int64), int64, None, None),
    (add, (int32, float32), float64, F64_ADD, None),
    (add, (int16, float32), float32, F32_ADD, F32_ONLY),
    (add, (int8, float32), float32, F32_ADD, F32_ONLY),
    (add, (int64, float32), float64, F64_ADD, None),
    (mul, (float32, float64), float64, r"\bmul(\.rn)?\.f64\b", None),
    (add, (float32, float32), float32, F32_ADD, F32_ONLY),
    (truediv, (int32, int32), float64, r"\bdiv\.rn\.f64\b", None),
    (truediv, (int8, int8), float64, r"\bdiv\.rn\.f64\b", None),
    (truediv, (uint64, int16), float64, r"\bdiv\.rn\.f64\b", None),
    (truediv, (float32, float32), float32, r"\bdiv\.rn\.f32\b", F32_ONLY),
    (floordiv, (int32, int32), int64, None, None),
    (mod, (int32, int32), int64, None, None),
    (floordiv, (float32, float32), float32, None, None),
    (floordiv, (float64, int32), float64, None, None),
    (mod, (float32, float32), float32, None, None),
    (power, (int32, int32), int64, None, None),
    (power, (float32, int32), float32, None, None),
    (power, (float32, float32), float32, None, None),
    (power, (int32, float32), float64, None, None),
    (power, (float64, float64), float64, None, None),
    (square, (float32,), float32, r"\bmul(\.rn)?\.f32\b", F32_ONLY),
    (neg, (uint32,), uint64, None, None),
    (invert, (int32,), int64, None, None),
    (neg, (int8,), int64, None, None),
    (pos, (int8,), int64, None, None),
    (not_, (int32,), boolean, None, None),
    (lshift, (int32, int32), int64, None, None),
    (lshift, (uint64, int32), uint64, None, None),
    (rshift, (uint32, int32), uint64, None, None),
    (and_, (int32, int32), int64, None, None),
    (or_, (uint8, uint8), uint64, None, None),
    (xor, (int16, uint16), int64, None, None),
    (add, (boolean, boolean), int64, None, None),
    (add, (boolean, int32), int64, None, None),
    (and_, (boolean, boolean), boolean, None, None),
    (lt, (int32, int32), boolean, None, None),
    (eq, (int32, int32), boolean, None, None),
    (lt, (int32, float32), boolean, None, None),
    (ge, (float64, uint64), boolean, None, None),
    (ne, (boolean, float32), boolean, None, None),
]


def _id(row):
    return f"{row[0].__name__}-" + "-".join(str(t) for t in row[1])


@pytest.mark.parametrize("pyfunc, argtypes, expected, op, no_op", ARITHMETIC, ids=[_id(r) for r in ARITHMETIC])
def test_binary_and_unary_result_types(pyfunc, argtypes, expected, op, no_op):
    check_typing(pyfunc, argtypes, expected, op, no_op)


BUILTINS = [
    (
        abs,
        [
            (int8, int8),
            (int32, int32),
            (int64, int64),
            (uint32, uint32),
            (float32, float32),
            (float64, float64),
            (boolean, int8),
        ],
    ),
    (
        int,
        [
            (float32, int64),
            (float64, int64),
            (int32, int32),
            (int64, int64),
            (uint32, uint32),
            (int8, int8),
            (boolean, int64),
        ],
    ),
    (
        float,
        [
            (float32, float32),
            (float64, float64),
            (int32, float64),
            (int64, float64),
            (uint32, float64),
            (int8, float64),
        ],
    ),
    (bool, [(float32, boolean), (int32, boolean), (boolean, boolean), (uint64, boolean)]),
    (round, [(float32, int64), (float64, int64), (int32, int64), (int64, int64), (uint32, int64), (int8, int64)]),
]
BUILTIN_CASES = [(fn, arg, res) for fn, rows in BUILTINS for arg, res in rows]


@pytest.mark.parametrize(
    "fn, argtype, expected", BUILTIN_CASES, ids=[f"{fn.__name__}-{a}" for fn, a, _ in BUILTIN_CASES]
)
def test_unary_builtins(fn, argtype, expected):
    """int/float/bool of numbers and the unary builtins (abs, round...), as numba types them."""
    check_typing(call_with(fn)[1], (argtype,), expected)


MIN_MAX = [
    ((int32, int64), int64),
    ((int32, int32), int32),
    ((float32, float32), float32),
    ((float64, float64), float64),
    ((int32, float32), float64),
    ((uint32, int32), int64),
    ((float32, float64), float64),
    ((int16, float32), float32),
    ((uint64, int64), float64),
    ((int32, int32, int32), int32),
    ((float32, float32, float32), float32),
]


@pytest.mark.parametrize("argtypes, expected", MIN_MAX, ids=["-".join(map(str, a)) for a, _ in MIN_MAX])
@pytest.mark.parametrize("fn", [min, max])
def test_min_max(fn, argtypes, expected):
    check_typing(call_with(fn)[len(argtypes)], argtypes, expected)


ROUND_NDIGITS = [
    (float32, float32),
    (float64, float64),
    (int32, float64),
    (int64, float64),
    (uint32, float64),
    (int8, float32),
    (boolean, float32),
]


def round2(x):
    return round(x, 2)


@pytest.mark.parametrize("argtype, expected", ROUND_NDIGITS, ids=[str(a) for a, _ in ROUND_NDIGITS])
def test_round_with_ndigits(argtype, expected):
    check_typing(round2, (argtype,), expected)


CONSTRUCTORS = [
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    boolean,
]
CONSTRUCTED = {
    np.float32: float32,
    np.float64: float64,
    np.int8: int8,
    np.int16: int16,
    np.int32: int32,
    np.int64: int64,
    np.uint8: uint8,
    np.uint16: uint16,
    np.uint32: uint32,
    np.uint64: uint64,
    np.bool_: boolean,
}


@pytest.mark.parametrize("source", [int32, uint64, float32, float64, boolean])
@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=[getattr(c, "__name__", str(c)) for c in CONSTRUCTORS])
def test_scalar_constructors(ctor, source):
    """np.float32(x), float32(x)... return that type whatever the number they convert."""
    check_typing(call_with(ctor)[1], (source,), CONSTRUCTED.get(ctor, ctor))


CONVERSIONS = [  # (target constructor, source type, an instruction the conversion needs)
    (float32, int32, r"\bcvt\.rn\.f32\.s32\b"),
    (float32, uint32, r"\bcvt\.rn\.f32\.u32\b"),
    (float64, int64, r"\bcvt\.rn\.f64\.s64\b"),
    (float32, float64, r"\bcvt\.rn\.f32\.f64\b"),
    (float64, float32, r"\bcvt\.f64\.f32\b"),
    (int32, float64, r"\bcvt\.rzi\.s32\.f64\b"),
    (uint32, float32, r"\bcvt\.rzi\.u32\.f32\b"),
    (int64, float32, r"\bcvt\.rzi\.s64\.f32\b"),
    (boolean, float64, r"\bsetp\.(ne|neu)\.f64\b"),
    (boolean, int32, r"\bsetp\.ne\.[bs]32\b"),  # LLVM 22: setp.ne.b32 (equality has no sign)
]


@pytest.mark.parametrize("target, source, instr", CONVERSIONS, ids=[f"{s}-to-{t}" for t, s, _ in CONVERSIONS])
def test_conversion_instructions(target, source, instr):
    """C-like conversions (round to nearest for int->float, truncation for float->int, != 0 for bool)."""
    ptx, resty = cuda.compile(call_with(target)[1], (source,))
    assert resty == target
    assert re.search(instr, body(ptx)), f"no {instr!r} in\n{body(ptx)}"


# literals -------------------------------------------------------------------------------


def plus_one(x):
    return x + 1


def times_two_float(x):
    return x * 2.0


def times_two(x):
    return x * 2


def lt_float_literal(x):
    return x < 1.5


def plus_true(x):
    return x + True


LITERALS = [
    (plus_one, int32, int64),
    (plus_one, uint32, int64),
    (plus_one, uint64, int64),
    (plus_one, int8, int64),
    (times_two_float, float32, float64),
    (times_two, float32, float64),
    (times_two, float64, float64),
    (lt_float_literal, int32, boolean),
    (plus_true, int32, int64),
]


@pytest.mark.parametrize("pyfunc, argtype, expected", LITERALS, ids=[f"{f.__name__}-{a}" for f, a, _ in LITERALS])
def test_literal_operands(pyfunc, argtype, expected):
    """Integer literals are int64, float literals float64, so they widen the other operand."""
    check_typing(pyfunc, (argtype,), expected)


def return_int_literal():
    return 1


def return_big_literal():
    return 2**40


def return_bool_literal():
    return True


def return_float_literal():
    return 1.5


@pytest.mark.parametrize(
    "pyfunc, expected_name, retval",
    [
        (return_int_literal, "Literal[int](1)", "b64"),
        (return_big_literal, "Literal[int](1099511627776)", "b64"),
        (return_bool_literal, "Literal[bool](True)", "b32"),
        (return_float_literal, "float64", "b64"),
    ],
)
def test_function_returning_a_literal(pyfunc, expected_name, retval):
    """numba reports the literal type itself as the inferred return type."""
    c_ptx, resty = cuda.compile(pyfunc, ())
    assert str(resty) == expected_name
    assert c_retval(c_ptx) == retval


# range index types -------------------------------------------------------------------------


def range1(n):
    for i in range(n):
        pass
    return i


def range2(a, b):
    for i in range(a, b):
        pass
    return i


def range3(a, b, c):
    for i in range(a, b, c):
        pass
    return i


def range_literal():
    for i in range(10):
        pass
    return i


def range_down_to_literal(n):
    for i in range(n, 0, -1):
        pass
    return i


def range_from_literal(n):
    for i in range(1, n):
        pass
    return i


def literal_accumulator(n):
    s = 0
    for i in range(n):
        s += i
    return s


def int32_accumulator(n):
    s = int32(0)
    s += int32(1)
    return s


def float_literal_accumulator(x):
    s = 0.0
    for i in range(3):
        s += x
    return s


def float32_accumulator(x):
    s = float32(0)
    for i in range(3):
        s += x
    return s


RANGES = [
    (range1, (int32,), int32),
    (range1, (int64,), int64),
    (range1, (uint64,), uint64),
    (range1, (uint32,), uint64),
    (range1, (int16,), int32),
    (range1, (uint8,), uint64),
    (range2, (int32, int32), int32),
    (range2, (int32, int64), int64),
    (range2, (uint64, uint64), uint64),
    (range2, (int32, uint64), int32),
    (range2, (int16, int32), int32),
    (range3, (int32, int32, int32), int32),
    (range3, (int64, int32, int32), int64),
    (range3, (uint64, uint64, uint64), uint64),
    (range_literal, (), int64),
    (range_down_to_literal, (int32,), int64),
    (range_down_to_literal, (int64,), int64),
    (range_from_literal, (int32,), int64),
    (range_from_literal, (uint64,), int64),
    (literal_accumulator, (int32,), int64),
    (int32_accumulator, (int32,), int64),
    (float_literal_accumulator, (float32,), float64),
    (float32_accumulator, (float32,), float32),
]


@pytest.mark.parametrize(
    "pyfunc, argtypes, expected", RANGES, ids=[f"{f.__name__}-" + "-".join(map(str, a)) for f, a, _ in RANGES]
)
def test_range_index_types(pyfunc, argtypes, expected):
    """The loop variable's type (returned after the loop) and accumulators."""
    check_typing(pyfunc, argtypes, expected)


# Python semantics of integer // and % ----------------------------------------------------------------


# x * 0 keeps the operands out of CPython's constant folding (and numba's literal typing); LLVM folds it.
def floor_div_neg_num(x):
    return (x * 0 - 7) // 2


def floor_div_neg_den(x):
    return (x * 0 + 7) // -2


def mod_neg_num(x):
    return (x * 0 - 7) % 2


def mod_neg_den(x):
    return (x * 0 + 7) % -2


def div_by_zero(x):
    return x // 0


def mod_by_zero(x):
    return x % 0


def stored_constant(ptx):
    """The immediate stored through the return pointer (directly or through a mov)."""
    text = body(ptx)
    m = re.search(r"^\s*st\.\w+\s+\[%rd\d+(?:\+0)?\],\s*(%\w+|-?\d+);", text, re.M)
    assert m, f"no store to the return slot in\n{text}"
    operand = m.group(1)
    if not operand.startswith("%"):
        return int(operand)
    mov = re.search(rf"^\s*mov\.\w+\s+{re.escape(operand)},\s*(-?\d+);", text, re.M)
    assert mov, f"{operand} is not a constant in\n{text}"
    return int(mov.group(1))


@pytest.mark.parametrize(
    "pyfunc, value",
    [
        (floor_div_neg_num, -4),
        (floor_div_neg_den, -4),
        (mod_neg_num, 1),
        (mod_neg_den, -1),
    ],
)
def test_floor_division_semantics_in_code(pyfunc, value):
    """Python floor division/modulo (not C truncation) is what the compiler folds to."""
    ptx, resty = cuda.compile_ptx(pyfunc, (int32,), device=True)
    assert resty == int64
    assert stored_constant(ptx) == value


@pytest.mark.parametrize("pyfunc", [div_by_zero, mod_by_zero])
@pytest.mark.parametrize("argtype", [int32, int64, uint32])
def test_integer_division_by_zero_gives_zero(pyfunc, argtype):
    """numpy error model: integer // and % by zero compile and give 0 (no trap)."""
    ptx, resty = cuda.compile_ptx(pyfunc, (argtype,), device=True)
    assert resty in (int64, uint64)
    assert stored_constant(ptx) == 0
    assert "trap" not in ptx


def true_div_by_zero(x):
    return x / 0


def test_true_division_by_zero_compiles():
    ptx, resty = cuda.compile_ptx(true_div_by_zero, (int32,), device=True)
    assert resty == float64


@pytest.mark.parametrize("pyfunc", [floordiv, mod])
def test_variable_integer_floor_division_compiles_without_trap(pyfunc):
    ptx, resty = cuda.compile_ptx(pyfunc, (int32, int32), device=True)
    assert resty == int64
    assert re.search(r"\b(div|rem)\.[su](32|64)\b", ptx)
    assert "trap" not in ptx


# math functions ------------------------------------------------------------------------------------

UNARY_MATH = [
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "fabs",
    "floor",
    "ceil",
    "trunc",
    "erf",
    "erfc",
    "gamma",
    "lgamma",
]
PREDICATES = ["isnan", "isinf", "isfinite"]
BINARY_MATH = ["atan2", "pow", "hypot", "copysign", "fmod"]


UNARY_MATH_TYPES = [
    (float32, float32),
    (float64, float64),
    (int32, float64),
    (int64, float64),
    (uint32, float64),
    (int8, float64),
]


@pytest.mark.parametrize("argtype, expected", UNARY_MATH_TYPES, ids=[str(a) for a, _ in UNARY_MATH_TYPES])
@pytest.mark.parametrize("name", UNARY_MATH)
def test_unary_math(name, argtype, expected):
    """math.* on float32 -> float32, on float64 and integers -> float64 (numba-cuda's cudamath, floor/ceil/trunc
    included: numba-cuda 0.30.4 gives math.floor(float32) -> float32, not int64 as CPython/numba-CPU do)."""
    check_typing(call_with(getattr(math, name))[1], (argtype,), expected)


@pytest.mark.parametrize("argtype", [float32, float64, int32, int64])
@pytest.mark.parametrize("name", PREDICATES)
def test_math_predicates(name, argtype):
    check_typing(call_with(getattr(math, name))[1], (argtype,), boolean)


BINARY_MATH_TYPES = [
    ((float32, float32), float32),
    ((float64, float64), float64),
    ((int32, int32), float64),
    ((int64, int64), float64),
    ((float32, float64), float64),
]


@pytest.mark.parametrize(
    "argtypes, expected", BINARY_MATH_TYPES, ids=["-".join(map(str, a)) for a, _ in BINARY_MATH_TYPES]
)
@pytest.mark.parametrize("name", BINARY_MATH)
def test_binary_math(name, argtypes, expected):
    check_typing(call_with(getattr(math, name))[2], argtypes, expected)


@pytest.mark.parametrize(
    "name, expected",
    [("pow", float32), ("atan2", float64), ("hypot", float64), ("copysign", float64), ("fmod", float64)],
)
def test_binary_math_float32_int32(name, expected):
    """math.pow has a (float32, int32) signature; the others convert both to float64."""
    check_typing(call_with(getattr(math, name))[2], (float32, int32), expected)


@pytest.mark.parametrize(
    "name, instr",
    [
        ("sqrt", r"\bsqrt\.rn\.{t}\b"),
        ("fabs", r"\babs\.{t}\b"),
        ("floor", r"\bcvt\.rmi\.{t}\.{t}\b"),
        ("ceil", r"\bcvt\.rpi\.{t}\.{t}\b"),
        ("trunc", r"\bcvt\.rzi\.{t}\.{t}\b"),
    ],
)
@pytest.mark.parametrize("argtype, t", [(float32, "f32"), (float64, "f64")])
def test_math_instructions(name, instr, argtype, t):
    """The precision of the argument is kept: float32 math uses the f32 instruction."""
    ptx, _ = cuda.compile(call_with(getattr(math, name))[1], (argtype,))
    assert re.search(instr.format(t=t), body(ptx)), body(ptx)


def bad_bitwise(x, y):
    return x & y


def bad_invert(x):
    return ~x


@pytest.mark.parametrize(
    "pyfunc, argtypes", [(bad_bitwise, (float32, float32)), (bad_invert, (float64,)), (lshift, (float32, int32))]
)
def test_bitwise_operators_reject_floats(pyfunc, argtypes):
    """numba has no bitwise operators on floats: a TypingError, not a silently typed result."""
    with pytest.raises(errors.TypingError):
        cuda.compile_ptx(pyfunc, argtypes, device=True)
