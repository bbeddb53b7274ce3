"""The bytecode frontend (the cujit.bytecode subpackage): functions with no source -- built with exec or compile(), a cuDF-style
template, lambdas, a module whose file was deleted or edited after import, a .pyc-only module, ``python -c`` --
compile from their code object into the same IR as from source, so the PTX is the same byte for byte.

The differential tests hold the two readers to that: the fuzzer's programs (bytecode_differential.py), and the
PTX every compile-only test file makes, run once per reader (CUJIT_FRONTEND=source / bytecode) with the
ptx_recorder plugin. Names that follow the process's compile order (the uid in mangled names, shared-memory
symbols made from it, the AsmPrinter's callseq counter) are compared without that number."""

import ast
import json
import os
import py_compile
import re
import subprocess
import sys
import textwrap

import pytest

import bytecode_differential
from cujit import _source, bytecode, cuda, errors, float32, float64, int32, int64, void
from cujit.bytecode import _ops as _bytecode_ops, _reader
from math import floor as math_floor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
F1 = float32[::1]
SAXPY = """
def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]
"""
COVERED = tuple(sys.version_info[:2]) in _bytecode_ops.TABLES
needs_reader = pytest.mark.skipif(not COVERED, reason=f"no bytecode reader for {sys.version_info[:2]}")


@pytest.fixture(autouse=True)
def default_reader(monkeypatch):
    """The rule chooses the reader (a CUJIT_FRONTEND set for the whole run does not)."""
    monkeypatch.delenv("CUJIT_FRONTEND", raising=False)


def exec_function(text, name, **namespace):
    namespace.setdefault("__name__", "templated")
    exec(compile(textwrap.dedent(text), "<generated>", "exec"), namespace)
    return namespace[name]


def write_module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def read_both_ways(tmp_path, name, text, **namespace):
    """`f` of `text` twice: from a module file (read from its source) and exec'd (read from its bytecode), each with
    the globals `namespace` adds."""
    module = import_path(name, write_module(tmp_path, name, text))
    for key, value in namespace.items():
        setattr(module, key, value)
    return module.f, exec_function(text, "f", __name__=name, **namespace)


def assert_same_ptx(from_file, from_text, sig, **options):
    """Both compile to the same PTX (but for the numbers that follow the process's compile order); returns it."""
    ptx_file, _ = cuda.compile_ptx(from_file, sig, **options)
    ptx_text, _ = cuda.compile_ptx(from_text, sig, **options)
    assert bytecode_differential.comparable(ptx_text) == bytecode_differential.comparable(ptx_file)
    return ptx_text


def import_path(name, path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- functions without source ------------------------------------------------------------------


@needs_reader
def test_exec_built_kernel_compiles_like_its_source(tmp_path):
    from_exec = exec_function(SAXPY, "saxpy", cuda=cuda, __name__="saxpy_mod")
    from_file = import_path("saxpy_mod", write_module(tmp_path, "saxpy_mod", "from cujit import cuda\n" + SAXPY)).saxpy
    sig = (F1, float32, F1, F1)
    ptx_exec, _ = cuda.compile_ptx(from_exec, sig)
    ptx_file, _ = cuda.compile_ptx(from_file, sig)
    assert bytecode_differential.comparable(ptx_exec) == bytecode_differential.comparable(ptx_file)
    assert ".entry" in ptx_exec and "fma.rn.f32" in ptx_exec


@needs_reader
def test_exec_built_device_function_called_from_a_kernel():
    scale = exec_function(
        """
        def scale(x, k):
            if x > 0:
                return x * k
            return -x
    """,
        "scale",
    )
    device = cuda.jit(device=True)(scale)
    kernel = exec_function(
        """
        def kernel(out, a):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = device(a[i], 2.0)
    """,
        "kernel",
        cuda=cuda,
        device=device,
    )
    ptx, resty = cuda.compile_ptx(kernel, (F1, F1))
    assert resty == void and ".entry" in ptx
    _, resty = cuda.compile_ptx(scale, (float32, float32), device=True)
    assert resty == float32


TEMPLATE = """
def {name}(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = {op}(a[i], b[i])
"""


def cudf_style_kernel(name, op, udf):
    """A kernel made the way cuDF makes its UDF kernels: a string template filled in and exec'd, calling the
    user's device function."""
    return exec_function(TEMPLATE.format(name=name, op="udf" if op == "udf" else op), name, cuda=cuda, udf=udf)


@cuda.jit(device=True)
def user_udf(x, y):
    return x * x + y if x > y else y - x


@needs_reader
def test_cudf_style_templated_kernel_calls_a_user_device_function(tmp_path):
    sig = "void(float32[::1], float32[::1], float32[::1])"
    kernel = cuda.jit(sig)(cudf_style_kernel("udf_kernel", "udf", user_udf))
    ptx = next(iter(kernel.overloads.values())).ptx
    # the same kernel written in a file
    module = import_path(
        "templated",
        write_module(tmp_path, "templated", "from cujit import cuda\n" + TEMPLATE.format(name="udf_kernel", op="udf")),
    )
    module.udf = user_udf
    from_file = cuda.jit(sig)(module.udf_kernel)
    assert bytecode_differential.comparable(ptx) == bytecode_differential.comparable(
        next(iter(from_file.overloads.values())).ptx
    )


@needs_reader
def test_lambdas_without_source():
    double = eval("lambda x: x * 2 + 1")
    _, resty = cuda.compile_ptx(double, (int32,), device=True)
    assert resty == int64
    pick = eval("lambda a, b: a if a > b else b")
    _, resty = cuda.compile_ptx(pick, (float32, float32), device=True)
    assert resty == float32


@needs_reader
def test_module_whose_file_was_deleted_after_import(tmp_path):
    import linecache

    path = write_module(tmp_path, "vanishing", "from cujit import cuda\n" + SAXPY)
    module = import_path("vanishing", path)
    path.unlink()
    linecache.clearcache()
    ptx, _ = cuda.compile_ptx(module.saxpy, (F1, float32, F1, F1))
    assert ".entry" in ptx


@needs_reader
def test_module_edited_after_import_compiles_what_runs(tmp_path):
    import linecache

    path = write_module(
        tmp_path,
        "edited",
        """
        def f(x):
            return x + 1
    """,
    )
    module = import_path("edited", path)
    path.write_text("\n\n\ndef f(x):\n    return x + 1.5\n")  # what the file says now returns a float
    linecache.clearcache()
    _, resty = cuda.compile_ptx(module.f, (int32,), device=True)
    assert resty == int64  # compiled from the code object: x + 1


@needs_reader
def test_pyc_only_module(tmp_path):
    source = write_module(tmp_path, "compiled_only", "from cujit import cuda\n" + SAXPY)
    pyc = tmp_path / "compiled_only.pyc"
    py_compile.compile(str(source), cfile=str(pyc), doraise=True)
    source.unlink()
    sys.path.insert(0, str(tmp_path))
    try:
        import compiled_only
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("compiled_only", None)
    assert compiled_only.__file__.endswith(".pyc")
    ptx, _ = cuda.compile_ptx(compiled_only.saxpy, (F1, float32, F1, F1))
    assert ".entry" in ptx


PYTHON_C = """
from cujit import cuda, float32
def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]
ptx, _ = cuda.compile_ptx(saxpy, (float32[::1], float32, float32[::1], float32[::1]))
print("ENTRIES", ptx.count(".entry"))
"""


@needs_reader
def test_python_c_program_compiles(register_ptx):
    proc = subprocess.run([sys.executable, "-c", PYTHON_C], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "ENTRIES 1" in proc.stdout


# -- the same IR, the same names, the same errors ----------------------------------------------------------


# Shapes each CPython version spells its own way (bytecode/_decode.py): 3.10's per-operator opcodes, absolute jumps,
# stack rotations and lines without columns (a one-line `if c: continue` / `if c: return`), 3.13's paired loads
# and stores of locals, CALL_KW and TO_BOOL; 3.11 on: each chained comparison's cleanup with its own copy of the
# return after it (a bounds test of a stencil); 3.14's borrowed loads, small ints, subscripts as BINARY_OP, slices
# of constants as one constant, while loops tested at the top only (a break goes to the test's exit, where the
# code after the loop is), constants folded after constant tests are compiled away (`if 2 ** 3:` stays a test) and
# an and/or value's jump threaded into the next one's cleanup.
VERSION_SHAPES = {
    "one_line_arms": """
def f(out, a, n):
    i = cuda.grid(1)
    if i >= out.size: return
    s = 0.0
    for k in range(n):
        if k == 3: continue
        if a[k] < 0: break
        s += a[k] * k
    else:
        s = -s
    out[i] = s
""",
    "rotations_and_pairs": """
def f(out, a, n):
    i = cuda.grid(1)
    x, y = a[0], a[1]
    x, y = y, x
    out[i] += x - y
    out[i] -= 0.5 if 0 < i < n else 1.5
    j = k = i
    while j < n and not k > 9:
        j += 2
        k = j % 7
    out[i] *= j + k
""",
    "chained_bounds": """
def f(out, a, n):
    i = cuda.grid(1)
    m = out.size
    if 0 < i < m - 1 and 0 < n < m:
        out[i] = a[i - 1] + a[i + 1] - 2.0 * a[i]
""",
    "calls_with_keywords": """
def f(out, a, n):
    i = cuda.grid(1)
    v = max(a[i], 0.0) ** 2 // 3 % 5
    out[i] = helper(v, scale=2.0) - helper(x=n) * v
""",
    "slices_and_loop_breaks": """
def f(out, a, n):
    i = cuda.grid(1)
    head, tail, every, last = a[:4], a[1:], a[::2], a[-1:]
    w = 0
    while w < n:
        w += 1
        if a[w] - a[0] > 2.0:
            break
    out[i] = head[0] + tail[0] + every[0] + last[0] + int(int(abs(w))) * (0.5 if w else 1.5)
""",
    "constants_folded_late": """
def f(out, a, n):
    i = cuda.grid(1)
    x = a[i] if 2 ** 3 else -a[i]
    y = (n and 75) or 86
    z = a[i] if (n if i else 0) else a[0]
    if -0.0:
        x = 1.0
    out[i] = x + y + z
""",
}


@needs_reader
@pytest.mark.parametrize("name", sorted(VERSION_SHAPES))
def test_version_specific_shapes_compile_like_their_source(tmp_path, name):
    text = "from cujit import cuda\n" + VERSION_SHAPES[name]
    helper = cuda.jit(device=True)(exec_function("def helper(x, scale=1.0):\n    return x * scale\n", "helper"))
    from_file, from_text = read_both_ways(tmp_path, f"shapes_{name}", text, helper=helper)
    ptx_text = assert_same_ptx(from_file, from_text, (float64[::1], float64[::1], int64))
    assert ".entry" in ptx_text


# `x = a if c else b` before a return: CPython 3.12 copies the store and the return into each arm, which is the
# bytecode of an if/else too; the reader rebuilds the conditional expression (the stores share one place).
CONDITIONAL_STORES = {
    "subscript": """
def f(out, a, n):
    i = cuda.grid(1)
    if i >= out.size:
        return
    out[i] = a[i] if i < n else 2.0 * a[i]
""",
    "nested": """
def f(out, a, n):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (a[i] if n > 3 else -a[i]) if i < n else (0.5 if n > 1 else a[0])
        return
    out[0] = 1.0
""",
    "local_and_copied_code": """
def f(out, a, n):
    i = cuda.grid(1)
    v = a[i] if i < n else a[0]
    out[i] = v
""",
    "if_else_statement": """
def f(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i]
    else:
        out[i] = 2.0 * a[i]
""",
}


@needs_reader
@pytest.mark.parametrize("name", sorted(CONDITIONAL_STORES))
def test_conditional_stores_before_a_return_compile_like_their_source(tmp_path, name):
    text = "from cujit import cuda\n" + CONDITIONAL_STORES[name]
    from_file, from_text = read_both_ways(tmp_path, f"stores_{name}", text)
    rebuilt = __import__("ast").unparse(bytecode.decompile(from_text))
    assert ("if i < n:" in rebuilt) == (name == "if_else_statement"), rebuilt
    assert_same_ptx(from_file, from_text, (float64[::1], float64[::1], int64))


# Conditions CPython decides or leaves odd traces of (the fuzzer writes them): a test a constant decides after a
# variable (the arm never taken is not in the bytecode), a constant arm inside an `or`, a chained comparison that
# ends an arm, an `if 71: ... else: ...` in a loop.
DECIDED_CONDITIONS = {
    "decided_inside_a_call": """
def f(out, a, n):
    i = cuda.grid(1)
    out[i] = int(2 if (n or 100) else (int(a[i]) << int(n))) >> 1
""",
    "always_false_test": """
def f(out, a, n):
    i = cuda.grid(1)
    out[i] = (max(a[i], 47.0) if (False if n else -0.0) else (39 if 17 else 83)) == a[i]
""",
    "constant_arm_in_or": """
def f(out, a, n):
    i = cuda.grid(1)
    out[i] = a[i] if (n if (int(a[i]) >> int(n)) else (3 or a[i])) else 2.0
""",
    "chain_ends_an_arm": """
def f(out, a, n):
    i = cuda.grid(1)
    out[i] = 1.0 if ((a[i] <= n != 0) if (i + 92) else a[0]) else 2.0
    if (77 if n else (8 != a[i] > a[0])):
        out[i] += 1.0
""",
    "constant_if_in_a_loop": """
def f(out, a, n):
    i = cuda.grid(1)
    for k in range(n):
        if a[k] > 0:
            if 71:
                out[i] = a[k]
            else:
                out[i] = -a[k]
""",
}


@needs_reader
@pytest.mark.parametrize("name", sorted(DECIDED_CONDITIONS))
def test_decided_conditions_compile_like_their_source(tmp_path, name):
    text = "from cujit import cuda\n" + DECIDED_CONDITIONS[name]
    from_file, from_text = read_both_ways(tmp_path, f"decided_{name}", text)
    assert_same_ptx(from_file, from_text, (float64[::1], float64[::1], int64))


# Values whose code after them (up to the return) CPython 3.12 copies into each of their paths.
RETURN_TAILS = {
    "and_ending_in_a_chain": "def f(b, w):\n    return +(max(b, 0.1) and (b < w != 59))\n",
    "conditional_in_an_arm": "def f(b, w):\n    return (b if w else 3.0) - (b if w > 1 else (b if w > 2 else w))\n",
    "chain_in_an_arm": "def f(b, w):\n    return b ** (w if (66 > False) else (b <= w == 2.0))\n",
}


@needs_reader
@pytest.mark.parametrize("name", sorted(RETURN_TAILS))
def test_copied_tails_before_a_return_compile_like_their_source(tmp_path, name):
    from_file, from_text = read_both_ways(tmp_path, f"tails_{name}", RETURN_TAILS[name])
    assert_same_ptx(from_file, from_text, (float64, float64), device=True)


# One return after an if whose first arm is a while loop and whose elif jumps to the return: CPython copies the
# return into each arm, and a jump to a later copy must not be read as a jump back to the first (a loop that never
# ends: the reader hung on these before). And ifs whose body is `pass` alone, and a `break` CPython turned into a
# return (they were refused).
RETURN_COPIES = {
    "loop_then_elif": "def f(a, b, n):\n    if not a:\n        while n < 4:\n            n = n + 1\n"
    "    elif b:\n        n = 1\n    return n\n",
    "loop_then_elif_pass": "def f(a, b, n):\n    if not a:\n        while n < 4:\n            n = n + 1\n"
    "    elif b:\n        pass\n    return n\n",
    # (an if whose body is `pass` alone: its test jumps to where it falls through, past no code)
    "if_pass": "def f(a, b, n):\n    if b:\n        pass\n    if n is None:\n        pass\n    return n\n",
    "if_not_pass": "def f(a, b, n):\n    if not b:\n        pass\n    return n\n",
    # (a CAS loop's `break` at the end of a function: CPython puts a copy of the implicit return in its place)
    "break_at_the_end": "def f(a, b, n):\n    if a < n:\n        while True:\n            a = a + 1\n"
    "            if a == b:\n                break\n            n = n + 1\n",
    # (the implicit return CPython copies to each part's jump is located on that part, here six columns wide,
    # as an explicit `return` is: a 3D kernel's bounds check)
    "and_of_three_at_the_end": "def f(i, j, k):\n    if i < 10 and j < 20 and k < 30:\n        i = j + k\n",
}


@needs_reader
@pytest.mark.parametrize("name", sorted(RETURN_COPIES))
def test_copied_returns_and_empty_bodies_compile_like_their_source(tmp_path, name):
    from_file, from_text = read_both_ways(tmp_path, f"copies_{name}", RETURN_COPIES[name])
    with within_seconds(20):
        assert_same_ptx(from_file, from_text, (int64, int64, int64), device=True)


@needs_reader
def test_reader_never_reads_the_same_code_twice():
    """A shape the reader misreads is refused, never read round and round (this one hung it before: the test of
    the elif is a conditional expression)."""
    fn = exec_function(
        "def f(a, b, n):\n    if not a:\n        while n < 4:\n            n = 0\n"
        "    elif a if b else n:\n        pass\n",
        "f",
    )
    with within_seconds(20):
        try:
            tree = bytecode.decompile(fn)
        except errors.UnsupportedError as exc:
            assert "source code is not available" in str(exc)
        else:
            assert "while n < 4" in __import__("ast").unparse(tree)


class Expired(BaseException):
    """Raised by within_seconds: no Exception, so the reader's refusal of a shape it misreads does not catch it."""


class within_seconds:
    """Fails the test (instead of hanging it) where the block runs longer than `seconds` (SIGALRM)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        import signal

        def expired(signum, frame):
            raise Expired(f"still running after {self.seconds} s")

        self.previous = signal.signal(signal.SIGALRM, expired)
        signal.alarm(self.seconds)

    def __exit__(self, *exc):
        import signal

        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.previous)
        return False


@needs_reader
def test_conditional_attribute_store_is_rebuilt_as_written():
    fn = exec_function("def f(p, a, c):\n    p.x = a if c else 0.0\n    return\n", "f")
    assert __import__("ast").unparse(bytecode.decompile(fn)).splitlines()[1:] == [
        "    p.x = a if c else 0.0",
        "    return",
    ]


@needs_reader
def test_inspect_types_and_mangled_names_match(tmp_path, monkeypatch):
    path = write_module(
        tmp_path,
        "typed_mod",
        """
        from cujit import cuda
        def kernel(out, a, n):
            i = cuda.grid(1)
            s = 0.0
            for k in range(n):
                s += a[k] * k
            if i < out.size:
                out[i] = s
    """,
    )
    outputs = []
    for reader in ("source", "bytecode"):
        monkeypatch.setenv("CUJIT_FRONTEND", reader)
        module = import_path("typed_mod", path)
        kernel = cuda.jit("void(float64[::1], float64[::1], int64)")(module.kernel)
        import io

        text = io.StringIO()
        kernel.inspect_types(file=text)
        ptx = next(iter(kernel.overloads.values())).ptx
        outputs.append((text.getvalue(), bytecode_differential.comparable(ptx)))
    assert outputs[0] == outputs[1]


@needs_reader
@pytest.mark.parametrize(
    "body, construct",
    [
        ("q = [v * 2 for v in range(3)]", "list comprehensions"),
        ("q = {1: x}", "dicts"),
        ("q = (lambda: 1)()", "lambda expressions used other than bound to a name"),
    ],
)
def test_unsupported_constructs_give_the_source_paths_error(body, construct):
    fn = exec_function(f"def f(x):\n    {body}\n    return x\n", "f")
    with pytest.raises(errors.UnsupportedError, match=construct):
        cuda.compile_ptx(fn, (int32,), device=True)


@needs_reader
def test_try_statements_are_rejected_from_bytecode():
    fn = exec_function("def f(x):\n    try:\n        x += 1\n    except ValueError:\n        pass\n    return x\n", "f")
    with pytest.raises(errors.UnsupportedError, match="try statements"):
        cuda.compile_ptx(fn, (int32,), device=True)


SHOWN_AT = {"a[0] = ": "y[0]", "out[i] = ": "n[0]"}  # where the tests' carets go (3.10 shows none to check)


def shown_line_and_caret(message, text):
    """The line of `message` holding `text`, and the columns its caret line under it marks."""
    lines = message.splitlines()
    index = next(i for i, line in enumerate(lines) if text in line)
    caret = lines[index + 1] if index + 1 < len(lines) else ""
    if not COLUMNS:  # 3.10: no columns, no caret (any position is the line's)
        assert "^" not in caret, message
        line = lines[index]
        return line, (line.index(SHOWN_AT[text]), line.index(SHOWN_AT[text]) + len(SHOWN_AT[text]))
    assert set(caret.strip()) == {"^"}, message
    start = len(caret) - len(caret.lstrip())
    return lines[index], (start, len(caret.rstrip()))


BAD_INDEX = "def f(x, a):\n    y = x + 1\n    if y > 2:\n        a[0] = y[0] * 2  # the bad line\n    return y\n"


@needs_reader
def test_typing_errors_show_the_rebuilt_statement_and_a_caret():
    """No source anywhere: file:line, the statement rebuilt from the bytecode (marked so), a caret under the
    sub-expression at fault (its column from co_positions)."""
    fn = exec_function(BAD_INDEX, "f")
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(fn, (int32, F1), device=True)
    message = str(info.value)
    assert getattr(info.value, "cujit_location", None) == ("<generated>", 4)
    assert "<generated>:4" in message and "rebuilt from bytecode" in message, message
    line, (start, end) = shown_line_and_caret(message, "a[0] = ")
    assert line.strip() == "a[0] = y[0] * 2"  # ast.unparse of the rebuilt statement: no comment
    assert (start, end) == (line.index("y[0]"), line.index("y[0]") + len("y[0]")), message


@needs_reader
def test_typing_errors_show_the_files_line_where_linecache_has_this_code(monkeypatch):
    import linecache

    filename = "<registered-in-linecache>"
    linecache.cache[filename] = (len(BAD_INDEX), None, BAD_INDEX.splitlines(True), filename)
    monkeypatch.setenv("CUJIT_FRONTEND", "bytecode")  # the rule would read the source itself
    try:
        namespace = {}
        exec(compile(BAD_INDEX, filename, "exec"), namespace)
        with pytest.raises(errors.TypingError) as info:
            cuda.compile_ptx(namespace["f"], (int32, F1), device=True)
        message = str(info.value)
        assert f"{filename}:4" in message and "rebuilt" not in message, message
        line, (start, end) = shown_line_and_caret(message, "a[0] = ")
        assert line == "        a[0] = y[0] * 2  # the bad line"  # the file's own text, as the source path shows it
        assert (start, end) == (line.index("y[0]"), line.index("y[0]") + 4), message
        # The file now says something else: its line is not shown, the rebuilt statement is.
        edited = BAD_INDEX.replace("y[0] * 2", "y[0] * 3")
        linecache.cache[filename] = (len(edited), None, edited.splitlines(True), filename)
        exec(compile(BAD_INDEX, filename, "exec"), namespace)
        with pytest.raises(errors.TypingError) as info:
            cuda.compile_ptx(namespace["f"], (int32, F1), device=True)
        message = str(info.value)
        assert "rebuilt from bytecode" in message and "y[0] * 3" not in message, message
    finally:
        linecache.cache.pop(filename, None)


PYTHON_C_ERROR = """
from cujit import cuda, float32, int32
def kernel(out, n):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = n[0] + 1
try:
    cuda.compile_ptx(kernel, (float32[::1], int32))
except Exception as exc:
    print(exc)
"""


@needs_reader
def test_python_c_typing_error_shows_line_and_caret():
    proc = subprocess.run([sys.executable, "-c", PYTHON_C_ERROR], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    message = proc.stdout
    assert "<string>:6" in message, message
    # 3.13 keeps a -c program's text in linecache: its own line is shown; before, the rebuilt statement
    assert ("rebuilt from bytecode" in message) == (sys.version_info < (3, 13)), message
    line, (start, end) = shown_line_and_caret(message, "out[i] = ")
    assert line == "        out[i] = n[0] + 1", message
    assert (start, end) == (line.index("n[0]"), line.index("n[0]") + 4), message


def test_covered_versions():
    """Every CPython the project supports: make test runs this file under 3.10, 3.12, 3.13 and 3.14 too
    (Makefile: test-bytecode-versions; 3.14 from Debian's packages, .ci/python-from-debian)."""
    assert _bytecode_ops.covered() == "3.10, 3.11, 3.12, 3.13, 3.14"
    for version in _bytecode_ops.TABLES:
        assert set(_bytecode_ops.ARGUMENTS[version]) == {
            "name_shift",
            "compare_shift",
            "absolute_jumps",
            "columns",
            "late_folding",
            "rotated_loops",
            "threaded_value_jumps",
        }
    assert _bytecode_ops.table((3, 15)) is None


def _decoded_sample(a, n):
    s = 0.0
    for i in range(n):
        if a[i] > 2 and i % 3:
            s += a[i] * 2.5
        else:
            continue
    while s > 100.0:
        s -= math_floor(s) - 99
    return s


def test_the_decoder_reads_what_dis_reads():
    """The C++ decoder (cpp/bindings/py_bytecode.cpp) against dis, on this interpreter: every kept instruction is
    one dis lists at its offset, names, locals and constants are dis's, and a jump the reader follows goes to the
    first kept instruction at or after dis's target."""
    import dis
    from cujit.bytecode._decode import _decode

    ins = _decode(_decoded_sample.__code__, _bytecode_ops.table(sys.version_info[:2]))
    assert ins[-1].op == "<end>" and [x.index for x in ins] == list(range(len(ins)))
    listed = {d.offset: d for d in dis.get_instructions(_decoded_sample)}
    kept_offsets = [x.offset for x in ins[:-1]]
    compared = jumps = 0
    for x in ins[:-1]:
        d = listed[x.offset]
        assert x.name == d.opname
        if d.opname in ("LOAD_FAST", "STORE_FAST", "LOAD_GLOBAL", "LOAD_CONST", "LOAD_FAST_BORROW", "LOAD_ATTR"):
            assert x.argval == d.argval, (x, d)
            compared += 1
        if x.target is not None:
            assert x.op in _bytecode_ops.JUMPS
            assert (
                ins[x.target].offset == min((o for o in kept_offsets if o >= d.argval), default=-1)
                or ins[x.target].op == "<end>"
            ), (x, d)
            jumps += 1
    assert compared >= 10 and jumps >= 3


def test_the_reader_leaves_nothing_for_the_garbage_collector():
    """A reading frees what it made as it ends: no reference cycle holds the reader, its instructions and graph
    (a kernel's reading left 346 objects for the collector while the condition search was closures calling each
    other). And a compiled function keeps no rebuilt tree: its error excerpt rebuilds one at an error."""
    import gc

    fn = exec_function(
        "def f(a, b, n):\n    if a > 0 and b < n or a < -1:\n        return a\n"
        "    while n > 0:\n        n -= 1\n        if a > n and b:\n            break\n"
        "    return b\n",
        "f",
    )
    bytecode.decompile(fn)
    gc.collect()
    bytecode.decompile(fn)
    assert gc.collect() < 10  # (the standard library's fix_missing_locations leaves 3)

    def rebuilt_ifs():  # (trees other tests' errors rebuilt stay with their excerpts)
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, ast.If) and getattr(o, "_serial", None) is not None)

    before = rebuilt_ifs()
    cuda.compile_ptx(fn, (int32, int32, int32), device=True)
    assert rebuilt_ifs() == before


def test_the_decoders_plan_is_checked():
    from cujit import _core
    from cujit.bytecode._decode import _Ins, _Position

    with pytest.raises(ValueError, match="256 opcodes"):
        _core.BytecodePlan([], [], 144, [], (), 0, (), (), _Ins, _Position)
    rules = [("NOP", None, 0, None)] * 256
    with pytest.raises(TypeError, match="no slot"):
        _core.BytecodePlan(rules, [0] * 256, 144, [], (), 0, (), (), object, _Position)


def test_uncovered_python_version_is_named(monkeypatch):
    monkeypatch.setattr(_bytecode_ops, "TABLES", {})
    fn = exec_function("def f(x):\n    return x\n", "f")
    with pytest.raises(errors.UnsupportedError) as info:
        cuda.compile_ptx(fn, (int32,), device=True)
    message = str(info.value)
    assert f"CPython {sys.version_info[0]}.{sys.version_info[1]}" in message and "source code" in message


def test_frontend_setting_is_checked(monkeypatch):
    monkeypatch.setenv("CUJIT_FRONTEND", "ast")
    fn = exec_function("def f(x):\n    return x\n", "f")
    with pytest.raises(ValueError, match="CUJIT_FRONTEND must be one of auto, source, bytecode"):
        cuda.compile_ptx(fn, (int32,), device=True)


def test_the_rule_prefers_matching_source():
    def here(x):
        return x + 1

    from cujit import _source_text

    lines, first = _source_text.source_lines(here)
    assert _source.source_matches(here.__code__, lines, first)
    assert not _source.source_matches(here.__code__, lines, first + 1)
    assert not _source.source_matches(here.__code__, lines + ["        x = 2\n"], first)


@needs_reader
def test_rebuilt_tree_is_checked_against_the_bytecode(monkeypatch):
    """A tree the reader gets wrong never compiles: compiling it again must give the original instructions."""
    fn = exec_function("def f(x):\n    return x + 1\n", "f")
    real = _reader._Reader.function

    def wrong(self):
        body = real(self)
        body[0].value.op = __import__("ast").Sub()
        return body

    monkeypatch.setattr(_reader._Reader, "function", wrong)
    with pytest.raises(errors.UnsupportedError, match="does not compile back to the same bytecode"):
        bytecode.decompile(fn)


# -- the differential tests -------------------------------------------------------------------------


# 1000 programs: about a minute on a loaded 2-core machine. Measured there (identical / refused / differing PTX):
# CPython 3.10, 3.11, 3.12, 3.13 and 3.14 1000 / 0 / 0.
FUZZ_SEEDS = int(os.environ.get("CUJIT_BYTECODE_SEEDS", "1000"))
# The share of the fuzzer's programs the reader may refuse (it recovers no tree that compiles back to their
# bytecode): none, on every version read.
REFUSED_AT_MOST = 0


@needs_reader
def test_differential_fuzzer_programs(tmp_path):
    differing = bytecode_differential.compare(range(FUZZ_SEEDS), str(tmp_path))
    wrong, refused = [], []
    for seed, (a, b) in differing.items():
        reader_refused = b[0] == "error" and "bytecode" in b[1] and "source code is not available" in b[1]
        (refused if reader_refused else wrong).append(seed)
    problems = [
        f"seed {seed}: source gives {differing[seed][0][1][:200]!r}, bytecode gives "
        f"{differing[seed][1][1][:200]!r}\n{bytecode_differential.generate(seed).source}"
        for seed in wrong
    ]
    assert not problems, "\n\n".join(problems[:5])
    refusals = [
        f"seed {seed}: {differing[seed][1][1][:300]}\n{bytecode_differential.generate(seed).source}" for seed in refused
    ]
    assert len(refused) <= REFUSED_AT_MOST * FUZZ_SEEDS, (
        f"the reader refused {len(refused)} programs: {refused}\n\n" + "\n\n".join(refusals[:5])
    )


DWARF_BYTES = re.compile(r"^\.b8 \d+\n", re.M)
# CPython 3.10's code objects have lines but no columns: there the two readers' .loc directives agree on lines only.
COLUMNS = _bytecode_ops.ARGUMENTS.get(sys.version_info[:2], {}).get("columns", True)
LOC_COLUMN = re.compile(r"((?:\.loc|inlined_at)\s+\d+\s+\d+)\s+\d+")


def lines_only(ptx):
    """`ptx` with its .loc directives' columns left out, and so each .loc that repeats the one before it (LLVM
    writes one where only the column changed)."""
    out, last = [], None
    for line in LOC_COLUMN.sub(r"\1", ptx).splitlines():
        if line.lstrip().startswith(".loc"):
            if line == last:
                continue
            last = line
        out.append(line)
    return "\n".join(out)


CORPUS = [
    "tests/compiler/test_language.py",
    "tests/compiler/test_typical_kernels.py",
    "tests/compiler/test_kernel_language.py",
    "tests/compiler/test_literal_unroll.py",
    "tests/compiler/test_records.py",
    "tests/compiler/test_vector_types.py",
    "tests/compiler/test_exceptions.py",
    "tests/compiler/test_bytecode_shapes.py",
    "tests/linking/test_declare_device.py",
    "tests/linking/test_link_hooks.py",
]


def recorded_ptx(files, reader, out):
    env = dict(
        os.environ,
        CUJIT_FRONTEND=reader,
        CUJIT_PTX_RECORD=str(out),
        PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]),
    )
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "ptx_recorder", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    with open(out) as f:
        return json.load(f)


@needs_reader
def test_differential_test_corpus(tmp_path):
    """Every PTX the compile-only tests make (lineinfo and debug included), once from source and once from
    bytecode. CUJIT_DIFFERENTIAL_ALL=1 runs every compile-only test file (a few minutes)."""
    files = CORPUS
    if os.environ.get("CUJIT_DIFFERENTIAL_ALL"):
        files = sorted(
            os.path.relpath(os.path.join(d, f), ROOT)
            for d in (HERE, os.path.join(ROOT, "tests/linking"))
            for f in os.listdir(d)
            if f.startswith("test_")
            and f.endswith(".py")
            and not f.startswith("test_gpu_")
            and f not in ("test_bytecode_frontend.py", "test_random_programs.py", "test_depth_scaling.py")
        )
    source = recorded_ptx(files, "source", tmp_path / "source.json")
    bytecode = recorded_ptx(files, "bytecode", tmp_path / "bytecode.json")
    compared, differing, missing = 0, [], []
    for test, made in source.items():
        got = bytecode.get(test, [])
        if len(got) != len(made):
            missing.append(test)
            continue
        for a, b in zip(made, got):
            compared += 1
            if ".debug_info" in a:  # debug=True: DWARF spells the mangled names (with their uid) byte by byte
                a, b = (DWARF_BYTES.sub("", x) for x in (a, b))
            if not COLUMNS:
                a, b = lines_only(a), lines_only(b)
            if bytecode_differential.comparable(a) != bytecode_differential.comparable(b):
                differing.append(test)
    assert compared > 100
    assert not differing, f"{len(differing)} of {compared} PTX differ: {differing[:10]}"
    assert len(missing) <= 0.05 * len(source), f"the bytecode reader refused functions in {missing}"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 numbers locals and cells apart")
def test_local_slots_are_numbered_as_cpython_numbers_them():
    """The decoders name a local slot from the code object's public attributes; CPython's private lookup agrees."""
    from cujit.bytecode._decode import local_slots

    def outer(a, b):
        c = a + b

        def inner(d):
            return a + c + d  # a and c are cells, a also an argument

        return inner

    for code in (outer.__code__, outer(1, 2).__code__, test_local_slots_are_numbered_as_cpython_numbers_them.__code__):
        slots = local_slots(code)
        assert slots == tuple(code._varname_from_oparg(i) for i in range(len(slots)))


@needs_reader
def test_an_eval_lambda_in_a_python_c_program_is_read_from_its_bytecode():
    """CPython 3.13 keeps a -c program's text in linecache as "<string>", the name eval() gives its code too: a
    one-line lambda then seems to stand on the program's first line, which holds no lambda (was an error)."""
    program = (
        "from cujit import cuda, int32\n"
        "double = eval('lambda x: x * 2 + 1')\n"
        "print(cuda.compile_ptx(double, (int32,), device=True)[1])\n"
    )
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["int64"]
