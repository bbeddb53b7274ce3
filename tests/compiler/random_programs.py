"""A seeded generator of small random device functions and kernels, valid and invalid, for the robustness
test (test_random_programs.py), the LTO-IR tests (test_ltoir_output.py) and random arithmetic expressions for
the differential test of arithmetic (test_arithmetic_semantics.py).

A program is the source of one module defining `f` (and sometimes a helper device function), the
signature to compile it for, and compile options. Valid programs mix numba's scalar types, operators,
builtins, math functions, control flow and arrays; invalid ones plant one mistake a user makes (a name
read before assignment, an unsupported construct, a wrong call, a literal no integer type holds...).
"""

import importlib.util
import os
import random
from dataclasses import dataclass, field

INT_TYPES = ("int32", "int64", "uint32", "uint64")
FLOAT_TYPES = ("float32", "float64")
SCALAR_TYPES = INT_TYPES + FLOAT_TYPES + ("boolean", "float16")

BINARY = ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>")
BITWISE = ("&", "|", "^", "<<", ">>")
COMPARE = ("<", "<=", ">", ">=", "==", "!=")
MATH1 = (
    "sqrt",
    "sin",
    "cos",
    "exp",
    "log",
    "fabs",
    "floor",
    "ceil",
    "trunc",
    "tanh",
    "atan",
    "expm1",
    "log1p",
    "erf",
    "gamma",
    "isnan",
    "isinf",
    "isfinite",
)
MATH2 = ("pow", "atan2", "hypot", "fmod", "copysign")
BUILTINS1 = ("abs", "int", "float", "bool", "round")


@dataclass
class Program:
    seed: int
    source: str
    signature: str
    options: dict = field(default_factory=dict)
    kernel: bool = False
    jit: bool = False  # compile through @cuda.jit(signature) rather than compile_ptx
    invalid: str = ""  # the planted mistake, if any


class _Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed

    def choice(self, seq):
        return self.rng.choice(seq)

    def chance(self, p):
        return self.rng.random() < p

    # -- expressions ------------------------------------------------------------------------
    def literal(self):
        r = self.rng.random()
        if r < 0.35:
            return str(self.rng.randint(-5, 9))
        if r < 0.5:
            return repr(self.choice((0.5, 1.5, -2.25, 3.0, 1e-3, 0.1, 16.5, -0.0)))
        if r < 0.58:
            return self.choice(("True", "False"))
        if r < 0.6:
            return str(self.choice((2**31, 2**40, -(2**63), 2**63, 18446744073709551615)))
        return str(self.rng.randint(0, 100))

    def expr(self, names, depth=0):
        r = self.rng.random()
        if depth > 2 or r < 0.3:
            return self.choice(names) if names and self.chance(0.7) else self.literal()
        if r < 0.55:
            op = self.choice(BINARY)
            a, b = self.expr(names, depth + 1), self.expr(names, depth + 1)
            if op in BITWISE:  # integers only: the operands go through int()
                return f"(int({a}) {op} int({b}))"
            return f"({a} {op} {b})"
        if r < 0.65:
            ops = " ".join(
                f"{self.choice(COMPARE)} {self.expr(names, depth + 1)}" for _ in range(self.rng.randint(1, 2))
            )
            return f"({self.expr(names, depth + 1)} {ops})"
        if r < 0.7:
            op = self.choice(("-", "+", "~", "not "))
            return f"(~int({self.expr(names, depth + 1)}))" if op == "~" else f"({op}{self.expr(names, depth + 1)})"
        if r < 0.75:
            return f"({self.expr(names, depth + 1)} {self.choice(('and', 'or'))} {self.expr(names, depth + 1)})"
        if r < 0.8:
            return (
                f"({self.expr(names, depth + 1)} if {self.expr(names, depth + 1)} else {self.expr(names, depth + 1)})"
            )
        if r < 0.87:
            return f"math.{self.choice(MATH1)}({self.expr(names, depth + 1)})"
        if r < 0.9:
            return f"math.{self.choice(MATH2)}({self.expr(names, depth + 1)}, {self.expr(names, depth + 1)})"
        if r < 0.95:
            return f"{self.choice(BUILTINS1)}({self.expr(names, depth + 1)})"
        return f"{self.choice(('min', 'max'))}({self.expr(names, depth + 1)}, {self.expr(names, depth + 1)})"

    # -- statements -------------------------------------------------------------------------
    def block(self, names, indent, depth, out, in_loop=False):
        for _ in range(self.rng.randint(1, 3)):
            self.statement(names, indent, depth, out, in_loop)

    def statement(self, names, indent, depth, out, in_loop):
        pad = "    " * indent
        r = self.rng.random()
        if depth > 2 or r < 0.35:
            target = f"v{self.rng.randint(0, 3)}"
            out.append(f"{pad}{target} = {self.expr(names)}")
            if target not in names:
                names.append(target)
        elif r < 0.45 and names:
            out.append(f"{pad}{self.choice(names)} {self.choice(('+=', '-=', '*=', '//='))} {self.expr(names)}")
        elif r < 0.65:
            out.append(f"{pad}if {self.expr(names)}:")
            self.block(names, indent + 1, depth + 1, out, in_loop)
            if self.chance(0.5):
                out.append(f"{pad}else:")
                self.block(names, indent + 1, depth + 1, out, in_loop)
        elif r < 0.8:
            counter = f"i{depth}"
            out.append(f"{pad}for {counter} in range({self.choice(('3', 'n', '1, 7, 2', '5, 0, -1'))}):")
            names.append(counter)
            self.block(names, indent + 1, depth + 1, out, True)
        elif r < 0.88:
            counter = f"w{depth}"
            out.append(f"{pad}{counter} = 0")
            out.append(f"{pad}while {counter} < 4:")
            out.append(f"{pad}    {counter} += 1")
            names.append(counter)
            self.block(names, indent + 1, depth + 1, out, True)
        elif r < 0.93 and in_loop:
            out.append(f"{pad}if {self.expr(names)}:")
            out.append(f"{pad}    {self.choice(('break', 'continue'))}")
        else:
            # Booleans held in variables (reassigned, so they live in memory) and compared with an ordering
            # operator: NVPTX could not select that at opt=False.
            out.append(f"{pad}b{depth} = {self.expr(names)} < {self.expr(names)}")
            out.append(f"{pad}c{depth} = {self.expr(names)} > n")
            out.append(f"{pad}for k{depth} in range(n):")
            out.append(f"{pad}    if b{depth} {self.choice(('<=', '<', '>=', '>'))} c{depth}:")
            out.append(f"{pad}        v0 = {self.expr(names)}")
            out.append(f"{pad}    b{depth} = {self.expr(names)} > k{depth}")
            if "v0" not in names:
                names.append("v0")

    # -- programs -----------------------------------------------------------------------------
    def options(self):
        opt, debug = self.chance(0.7), self.chance(0.2)
        return {"opt": opt, "debug": debug, "lineinfo": self.chance(0.2) and not debug, "fastmath": self.chance(0.3)}

    def device_function(self):
        types = [self.choice(SCALAR_TYPES) for _ in range(2)]
        names = ["a", "b", "n"]
        body = ["def f(a, b, n):"]
        if self.chance(0.2):
            # The shape of a past abort in code generation: a boolean in memory (reassigned in a loop) ordered
            # against one bound once at the top level (an SSA value).
            body += [
                f"    bb = {self.expr(names)} < {self.expr(names)}",
                f"    cc = {self.expr(names)} > n",
                "    for kk in range(n):",
                f"        if bb {self.choice(('<=', '<', '>=', '>'))} cc:",
                f"            v0 = {self.expr(names)}",
                f"        bb = {self.expr(names)} > kk",
            ]
            names = names + ["v0"]
        self.block(names, 1, 0, body)
        body.append(f"    return {self.expr(names)}")
        return "\n".join(body), f"({types[0]}, {types[1]}, int64)"

    def kernel(self, jit):
        dtype = self.choice(INT_TYPES[:2] + FLOAT_TYPES)
        names = ["x", "n"]
        body = ["def f(out, a, n):", "    i = cuda.grid(1)", "    if i < out.size:", "        x = a[i]"]
        inner = []
        self.block(names, 2, 1, inner)
        body += inner
        if self.chance(0.3):
            # Over 48 KiB only where @cuda.jit must refuse it: compile_ptx returns such PTX as numba-cuda does,
            # and ptxas rejects it.
            size = self.choice((32, 256, 4096, 7000) if jit else (32, 256, 4096))
            body.insert(1, f"    s = cuda.shared.array({size}, dtype={dtype})")
            body.append("        s[i % 32] = x")
            body.append("        cuda.syncthreads()")
            names.append("s[0]")
        body.append(f"        out[i] = {self.expr(names)}")
        return "\n".join(body), f"void({dtype}[:], {dtype}[:], int64)"

    # Each plants one mistake a user makes; `source` is a valid device function to spoil.
    def spoil(self, source):
        kind = self.choice(
            (
                "read_before_assign",
                "undefined_name",
                "unsupported",
                "bad_call",
                "huge_literal",
                "bad_attribute",
                "tuple_index",
                "string",
                "recursion",
                "subscript_scalar",
            )
        )
        # At the top of the body: never in a branch that constant pruning could drop.
        lines = source.split("\n")
        at, pad = 1, "    "
        planted = {
            "read_before_assign": [f"{pad}q = zz + 1", f"{pad}zz = q"],
            "undefined_name": [f"{pad}q = undefined_name_xyz + 1"],
            "unsupported": [f"{pad}q = {self.choice(('[1, 2]', '{1: 2}', '(lambda: 1)()', '(x for x in a)'))}"],
            "bad_call": [f"{pad}q = helper(a, b, n, 1)"],
            "huge_literal": [f"{pad}q = a + {self.choice(('2 ** 64', '18446744073709551616', '(-(2 ** 63) - 1)'))}"],
            "bad_attribute": [f"{pad}q = math.no_such_function(a)"],
            "tuple_index": [f"{pad}q = (a, b)[5]"],
            "string": [f"{pad}q = 'text' + a"],
            "recursion": [f"{pad}q = helper(a, b)"],
            "subscript_scalar": [f"{pad}q = a[0]"],
        }[kind]
        lines[at:at] = planted
        return "\n".join(lines), kind

    def program(self):
        kernel = self.chance(0.35)
        jit = kernel and self.chance(0.5)
        source, signature = self.kernel(jit) if kernel else self.device_function()
        invalid = ""
        if not kernel and self.chance(0.25):
            source, invalid = self.spoil(source)
        helper = (
            "@cuda.jit(device=True)\ndef helper(a, b):\n    return helper(b, a)\n"
            if invalid == "recursion"
            else "@cuda.jit(device=True)\ndef helper(a, b):\n    return a + b\n"
        )
        header = "import math\nfrom cujit import cuda, types\nfrom cujit.types import *\n\n" + helper + "\n"
        return Program(self.seed, header + source + "\n", signature, self.options(), kernel, jit=jit, invalid=invalid)


def load_program(program, workdir):
    """The program's function ``f``, from a module file written to `workdir` (so its source can be read)."""
    path = os.path.join(workdir, f"prog_{program.seed}.py")
    with open(path, "w") as fh:
        fh.write(program.source)
    spec = importlib.util.spec_from_file_location(f"prog_{program.seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def generate(seed):
    """The program of `seed` (the same program for the same seed, on every machine)."""
    return _Generator(seed).program()


# ----------------------------------------------------------------------------------------------
# Arithmetic expressions for the GPU differential test: typed operands, numba's result type.
# ----------------------------------------------------------------------------------------------

DIFF_TYPES = ("int32", "int64", "float32", "float64")
_DIFF_OPS = ("+", "-", "*", "//", "%", "/", "min", "max", "abs")


def arithmetic_expression(rng, depth=0, product_allowed=True):
    """A random expression over the parameters x, y, z (text). A product is never a direct operand of + or -:
    the GPU contracts those into one fma (as nvcc does), which the host's separately rounded steps cannot
    reproduce; every other operation rounds the same way on both sides."""
    if depth > 2 or (depth > 0 and rng.random() < 0.3):
        return rng.choice(("x", "y", "z", str(rng.randint(1, 7)), repr(rng.choice((0.5, 2.5, -1.25)))))
    op = rng.choice(_DIFF_OPS if product_allowed else tuple(o for o in _DIFF_OPS if o != "*"))
    child = op not in ("+", "-")
    a = arithmetic_expression(rng, depth + 1, child)
    b = arithmetic_expression(rng, depth + 1, child)
    if op in ("min", "max"):
        return f"{op}({a}, {b})"
    if op == "abs":
        return f"abs({a})"
    return f"({a} {op} {b})"
