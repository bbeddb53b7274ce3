"""Programs of a given depth for each recursive structure of the language, for the depth-scaling test (each
compiled from its source and, without it, from its bytecode: depth_child.py).

Each generator returns (source, signature): the source defines `f` (a device function, or a kernel where the
signature is a tuple of array types) and the device functions it calls. CPython bounds some structures itself: 100 levels of indentation (nested conditionals), 20
statically nested blocks (loops), 200 nested parentheses (tuple literals); those are swept up to the bound."""

import numpy as np

from cujit import float64, from_dtype

# The deepest each structure can be written in Python source (CPython's own limits), and the depth swept.
PYTHON_LIMITS = {"nested loops": 19, "nested conditionals": 98, "nested tuples": 190}


def nested_tuples(depth):
    build = "(" * depth + "x" + ",)" * depth
    return (f"def f(x):\n    t = {build}\n    return t{'[0]' * depth}\n", "int64(int64)")


def device_call_chain(depth):
    lines = ["def g0(x):\n    return x + 1\n"]
    for i in range(1, depth):
        lines.append(f"@cuda.jit(device=True)\ndef g{i}(x):\n    return g{i - 1}(x) + 1\n")
    lines[0] = "@cuda.jit(device=True)\n" + lines[0]
    lines.append(f"def f(x):\n    return g{depth - 1}(x)\n")
    return "\n".join(lines), "int64(int64)"


def nested(headers, innermost):
    """Block headers each one space inside the one before (a function body's indentation first), and the
    innermost statement inside them all."""
    lines = [" " * (4 + level) + header for level, header in enumerate(headers)]
    return "\n".join(lines + [" " * (4 + len(headers)) + innermost])


def nested_conditionals(depth):
    body = nested([f"if x > {i}:" for i in range(depth)], "x = x * 2")
    return f"def f(x):\n{body}\n    return x\n", "int64(int64)"


def elif_chain(depth):
    lines = ["def f(x):", "    if x == 0:", "        y = 0"]
    for i in range(1, depth):
        lines += [f"    elif x == {i}:", f"        y = {i * 3}"]
    lines += ["    else:", "        y = -1", "    return y"]
    return "\n".join(lines) + "\n", "int64(int64)"


def long_expression(depth):
    terms = " + ".join(f"x * {i}" for i in range(depth))
    return f"def f(x):\n    return {terms}\n", "int64(int64)"


def nested_loops(depth):
    body = nested([f"for i{i} in range(2):" for i in range(depth)], "s += 1")
    return f"def f(x):\n    s = x\n{body}\n    return s\n", "int64(int64)"


def nested_records(depth):
    dtype = np.dtype([("v", np.float64)])
    for _ in range(depth):
        dtype = np.dtype([("r", dtype), ("w", np.int32)])
    source = f"def f(recs, out):\n    out[0] = recs[0]{'.r' * depth}.v\n"
    return source, (from_dtype(dtype)[::1], float64[::1])


# (The terms of a chain test distinct elements: LLVM's InstCombine merges range tests of one value pairwise, and
# SimplifyCFG turns tests of one value into a switch, both faster than the chain grows, in LLVM: `x > 0 and x > 1
# ...` at 200 terms spends 8 ms there, `0 if x == 0 else 3 if x == 1 ...` 5 ms.)
def and_chain(depth):
    test = " and ".join(f"a[{i}] > {i}" for i in range(depth))
    return f"def f(a):\n    if {test}:\n        return 1\n    return 0\n", "int64(float64[::1])"


def or_chain(depth):
    test = " or ".join(f"a[{i}] == {i}" for i in range(depth))
    return f"def f(a):\n    if {test}:\n        return 1\n    return 0\n", "int64(float64[::1])"


def chained_comparison(depth):
    chain = " < ".join(f"x + {i}" for i in range(depth))
    return f"def f(x):\n    return {chain}\n", "boolean(int64)"


def conditional_expressions(depth):
    arms = " else ".join(f"{i * 3} if a[{i}] > 0" for i in range(depth))
    return f"def f(a):\n    return {arms} else -1\n", "int64(float64[::1])"


STRUCTURES = {
    "nested tuples": nested_tuples,
    "nested device calls": device_call_chain,
    "nested conditionals": nested_conditionals,
    "long elif chains": elif_chain,
    "long expressions": long_expression,
    "nested loops": nested_loops,
    "nested records": nested_records,
    "and chains": and_chain,
    "or chains": or_chain,
    "chained comparisons": chained_comparison,
    "conditional expressions": conditional_expressions,
}
