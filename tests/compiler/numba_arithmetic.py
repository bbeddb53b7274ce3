"""Python's value of an arithmetic expression under numba's typing, on the host: the reference of the GPU
differential test. Types follow numba's typing rules: integer arithmetic in 64 bits, float32 only when both
operands are float32, true division of integers in float64, min/max/abs unify or keep the type; values
follow Python (floor division and modulo with Python's signs, CPython's float divmod) with numba's numpy
error model for zero divisors. float32 steps round to float32 (numpy scalars)."""

import ast
import math

import numpy as np

INT_BITS = {"int32": 32, "int64": 64}
FLOATS = {"float32": np.float32, "float64": np.float64}


def wrap(value, bits):
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def result_type(a, b, op=None):
    if a in INT_BITS and b in INT_BITS:
        if op == "/":
            return "float64"
        if op in ("min", "max"):
            return a if a == b else "int64"
        return "int64"
    if a == b == "float32":
        return "float32"
    return "float64"


def convert(value, source, target):
    if target in INT_BITS:
        return wrap(int(value), INT_BITS[target])
    return FLOATS[target](value)


def float_divmod(a, b, t):
    """CPython's float_divmod in type t (numpy scalars round each step to t)."""
    f = FLOATS[t]
    a, b = f(a), f(b)
    if b == 0:
        with np.errstate(all="ignore"):
            return a / b, f(np.nan)
    with np.errstate(all="ignore"):
        mod = f(np.fmod(a, b))
        div = f((a - mod) / b)
        if mod != 0 or np.isnan(mod):
            if (b < 0) != (mod < 0):
                mod = f(mod + b)
                div = f(div - f(1))
        else:
            mod = f(math.copysign(0.0, b))
        if div != 0 or np.isnan(div):
            floordiv = f(np.floor(div))
            if div - floordiv > f(0.5):
                floordiv = f(floordiv + f(1))
        else:
            floordiv = f(math.copysign(0.0, a / b))
    return floordiv, mod


def int_floordiv_mod(a, b):
    if b == 0:
        return 0, 0
    return a // b, a % b


def evaluate(text, env):
    """(value, numba type) of `text` with env {name: (value, type)}."""
    return _eval(ast.parse(text, mode="eval").body, env)


def _eval(node, env):
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return (node.value, "int64") if isinstance(node.value, int) else (np.float64(node.value), "float64")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v, t = _eval(node.operand, env)
        return (wrap(-v, 64), "int64") if t in INT_BITS else (-v, t)
    if isinstance(node, ast.Call):
        name = node.func.id
        args = [_eval(a, env) for a in node.args]
        if name == "abs":
            v, t = args[0]
            return (wrap(abs(v), INT_BITS[t]), t) if t in INT_BITS else (abs(v), t)
        (a, ta), (b, tb) = args
        t = result_type(ta, tb, name)
        a, b = convert(a, ta, t), convert(b, tb, t)
        return (b if (b > a if name == "max" else b < a) else a), t
    if isinstance(node, ast.BinOp):
        (a, ta), (b, tb) = _eval(node.left, env), _eval(node.right, env)
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}[type(node.op)]
        t = result_type(ta, tb, op)
        a, b = convert(a, ta, t), convert(b, tb, t)
        if t in INT_BITS:
            if op in ("//", "%"):
                q, m = int_floordiv_mod(a, b)
                return wrap(q if op == "//" else m, 64), t
            return wrap({"+": a + b, "-": a - b, "*": a * b}[op], 64), t
        if op in ("//", "%"):
            q, m = float_divmod(a, b, t)
            return (q if op == "//" else m), t
        with np.errstate(all="ignore"):
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op], t
    raise ValueError(f"unsupported node {ast.dump(node)}")
