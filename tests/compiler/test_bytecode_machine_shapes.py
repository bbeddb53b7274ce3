"""Machine-made shapes the bytecode reader (cujit.bytecode) once refused, reduced from the fuzzer's programs
(random_programs.py), compiled through both readers: the PTX must be the same byte for byte. And the order of a
function's locals when CPython dropped every assignment of one of them."""

import ast

import pytest

import bytecode_differential
from cujit import bytecode, cuda, float64, int64
from test_bytecode_frontend import exec_function, import_path, needs_reader, write_module


@pytest.fixture(autouse=True)
def default_reader(monkeypatch):
    """The rule chooses the reader (a CUJIT_FRONTEND set for the whole run does not)."""
    monkeypatch.delenv("CUJIT_FRONTEND", raising=False)


# Machine-made shapes the reader once refused (reduced from the fuzzer's programs): a conditional expression testing
# an if at a loop's end (3.12 turns the jump back into the inverse jump over a copy of it), returns CPython copied
# into blocks that run into them, constant arms that jump out of a condition or leave the jump over them, a break
# a chained comparison's test jumps to, a constant `if` ending a block before a return, loops every pass of which
# breaks, a continue ending an if's arm, returns of values CPython folded.
MACHINE_SHAPES = {
    "loop_end_conditional_body": """
def f(a, b, n):
    v = 0.0
    for k in range(n):
        if ((k << 1) if math.fabs(8) else a):
            v = b
    return v
""",
    "copied_returns": """
def f(a, b, n):
    v = a
    if b:
        if (v or n) and b:
            v = b
        else:
            v = a
        if bool(v):
            if n >> 1:
                v = b
        else:
            for k in range(5, 0, -1):
                v = 57.0
    return 7
""",
    "copied_return_after_a_while": """
def f(a, b, n):
    v = a
    if b:
        w = 0
        while w < 4:
            w += 1
            v += b
        if v > n:
            for k in range(n):
                v -= 1.0
            w = 0
            while w < 4:
                w += 1
        else:
            v = 3.0
    return v
""",
    "constant_arm_in_or": """
def f(a, b, n):
    v = 0.0
    for k in range(n):
        if ((22 >= b != k) == -5) or (n if (k // 3) else 1):
            v = a
        else:
            v = b
        v += 1.0
    return v
""",
    "constant_arms_in_a_test": """
def f(a, b, n):
    v = 0.0
    if a > 0.0:
        if (((34 or b) if math.expm1(n) else 0) if ((int(b) << 8) // (a and b)) else (math.hypot(30, 14) and n)):
            v = a
        v //= 3
    return v
""",
    "constant_false_arm_then_more": """
def f(a, b, n):
    v = 0.0
    if (((-n) if b else (n if b else 100)) if ((not b) >= min(a, b)) else a):
        v = a
    return v
""",
    "break_on_a_chained_comparison": """
def f(a, b, n):
    w = 0
    while w < 4:
        w += 1
        if (a if b else n) == n > b:
            break
    return a + w
""",
    "constant_if_before_a_return": """
def f(a, b, n):
    v = 0.0
    if 16.5:
        w = 0
        while w < 4:
            w += 1
            if b:
                v = a
        w -= ((n - -0.0) if (b + a) else v)
    return v
""",
    "loop_that_always_breaks": """
def f(a, b, n):
    v = 0.0
    for k in range(3):
        if 3:
            break
        v += a
    return v + (k and n)
""",
    "continue_ending_an_arm": """
def f(a, b, n):
    v = 0.0
    w = 0
    while w < 4:
        w += 1
        if a > w:
            v += 1.0
            if v // b:
                continue
        else:
            v -= 1.0
        v *= 2.0
    return v
""",
    "while_that_always_breaks": """
def f(a, b, n):
    w = n
    if a and b:
        w = 0
        while w < 4:
            w += 1
            if 0.001:
                break
    else:
        w -= n
    return w
""",
    "constant_arms_that_hold": """
def f(a, b, n):
    v = 0.0
    for k in range(n):
        v += a
        if (44 if (a >= (b * -1) != 20) else 62):
            continue
    for k in range(n):
        if (44 if a > b else 62):
            continue
    return v
""",
    "continue_ending_an_else": """
def f(a, b, n):
    v = 0.0
    for k in range(n):
        if max(67, k):
            v = a
        else:
            v += b
            if -3:
                continue
    return v
""",
    "constant_return_after_a_break": """
def f(a, b, n):
    for k in range(5, 0, -1):
        if max(a, b):
            break
        a += 1.0
    return (54 and False)
""",
    "folded_return_after_a_loop": """
def f(a, b, n):
    if a > b:
        for k in range(3):
            a += 1.0
    else:
        b = a
    return (79 if 84 else a)
""",
}


@needs_reader
@pytest.mark.parametrize("name", sorted(MACHINE_SHAPES))
def test_machine_made_shapes_compile_like_their_source(tmp_path, name):
    text = "import math\nfrom cujit import cuda\n" + MACHINE_SHAPES[name]
    module = import_path(f"machine_{name}", write_module(tmp_path, f"machine_{name}", text))
    from_text = exec_function(text, "f", __name__=f"machine_{name}")
    bytecode.decompile(from_text)  # not refused
    ptx_file, _ = cuda.compile_ptx(module.f, (float64, float64, int64), device=True)
    ptx_text, _ = cuda.compile_ptx(from_text, (float64, float64, int64), device=True)
    assert bytecode_differential.comparable(ptx_text) == bytecode_differential.comparable(ptx_file)


def locals_in_order(tree):
    """The names a function assigns, in the order the compiler collects them (build_ir.cpp: each statement's
    targets, then its blocks)."""
    names = []

    def targets(t):
        if isinstance(t, ast.Name) and t.id not in names:
            names.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)

    def walk(stmts):
        for s in stmts:
            for t in s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]:
                targets(t)
            walk(getattr(s, "body", []) if not isinstance(s, ast.FunctionDef) else [])
            walk(getattr(s, "orelse", []))

    walk(tree.body)
    return names


DEAD_LOCAL = """
def f(a, n):
    x = a + 1.5
    if 0:
        y = 2
    z = x * n
    for k in range(n):
        if 0.0:
            w = k
        z -= x
    return z
"""


@needs_reader
def test_locals_only_assigned_in_dropped_code_keep_their_place():
    """CPython drops `if 0: y = 2`, but y stays a local (the reader assigns it in an `if False:`): where the source
    had it among the other locals, so the compiler numbers the function's locals alike from both readers."""
    fn = exec_function(DEAD_LOCAL, "f")
    rebuilt = bytecode.decompile(fn)
    assert locals_in_order(rebuilt) == locals_in_order(ast.parse(DEAD_LOCAL).body[0]) == ["x", "y", "z", "k", "w"]
    assert "if False:" in ast.unparse(rebuilt)
