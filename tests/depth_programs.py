"""Programs of a given depth for each recursive structure of the language, for the depth-scaling test.

Each generator returns (source, entry name, signature, extra globals); the source defines device functions
and a kernel. CPython bounds some structures itself: 100 levels of indentation (nested conditionals), 20
statically nested blocks (loops), 200 nested parentheses (tuple literals); those are swept up to the bound."""

import numpy as np

from cujit import float64, from_dtype

# The deepest each structure can be written in Python source (CPython's own limits), and the depth swept.
PYTHON_LIMITS = {"nested loops": 19, "nested conditionals": 98, "nested tuples": 190}


def nested_tuples(depth):
    build = "(" * depth + "x" + ",)" * depth
    return (f"def f(x):\n    t = {build}\n    return t{'[0]' * depth}\n", "f", "int64(int64)", {})


def device_call_chain(depth):
    lines = ["def g0(x):\n    return x + 1\n"]
    for i in range(1, depth):
        lines.append(f"@cuda.jit(device=True)\ndef g{i}(x):\n    return g{i - 1}(x) + 1\n")
    lines[0] = "@cuda.jit(device=True)\n" + lines[0]
    lines.append(f"def f(x):\n    return g{depth - 1}(x)\n")
    return "\n".join(lines), "f", "int64(int64)", {}


def nested_conditionals(depth):
    body, indent = [], "    "
    for i in range(depth):
        body.append(f"{indent}if x > {i}:")
        indent += " "
    body.append(f"{indent}x = x * 2")
    return "def f(x):\n" + "\n".join(body) + "\n    return x\n", "f", "int64(int64)", {}


def elif_chain(depth):
    lines = ["def f(x):", "    if x == 0:", "        y = 0"]
    for i in range(1, depth):
        lines += [f"    elif x == {i}:", f"        y = {i * 3}"]
    lines += ["    else:", "        y = -1", "    return y"]
    return "\n".join(lines) + "\n", "f", "int64(int64)", {}


def long_expression(depth):
    terms = " + ".join(f"x * {i}" for i in range(depth))
    return f"def f(x):\n    return {terms}\n", "f", "int64(int64)", {}


def nested_loops(depth):
    body, indent = [], "    "
    for i in range(depth):
        body.append(f"{indent}for i{i} in range(2):")
        indent += " "
    body.append(f"{indent}s += 1")
    return "def f(x):\n    s = x\n" + "\n".join(body) + "\n    return s\n", "f", "int64(int64)", {}


def nested_records(depth):
    dtype = np.dtype([("v", np.float64)])
    for _ in range(depth):
        dtype = np.dtype([("r", dtype), ("w", np.int32)])
    source = f"def f(recs, out):\n    out[0] = recs[0]{'.r' * depth}.v\n"
    return source, "f", (from_dtype(dtype)[::1], float64[::1]), {}


STRUCTURES = {
    "nested tuples": nested_tuples,
    "nested device calls": device_call_chain,
    "nested conditionals": nested_conditionals,
    "long elif chains": elif_chain,
    "long expressions": long_expression,
    "nested loops": nested_loops,
    "nested records": nested_records,
}
