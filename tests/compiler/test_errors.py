"""Errors: unsupported constructs, functions without source, bad signatures, and a crash-proofing fuzz."""

import json
import os
import re
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import cujit
from cujit import cuda, errors, types
from cujit import int32

from source_lines import source_position


def unknown_helper(x):
    return x


def uses_try(a):
    try:
        b = a + 1
    except Exception:
        b = 0
    return b


def uses_with(a):
    with open("f") as fh:  # noqa: F841
        a = a + 1
    return a


def uses_yield(a):
    yield a


def uses_print_object(a):
    print(object())
    return a


def calls_unknown_function(a):
    return unknown_helper(a) + 1


def uses_fstring(a):
    s = f"{a}"  # noqa: F841
    return a


def uses_lambda(a):
    return (lambda y: y + 1)(a)  # a lambda not bound to a name


def uses_list(a):
    items = [a, a, 1]  # noqa: F841
    return a


def uses_dict(a):
    d = {1: a}  # noqa: F841
    return a


def uses_list_comprehension(a):
    items = [i for i in range(3)]  # noqa: F841
    return a


def uses_matmul(a):
    return a @ a


def uses_undefined_name(a):
    return a + not_defined_anywhere  # noqa: F821


# (function, text of the construct in its source line, what the message must name)
UNSUPPORTED = [
    (uses_try, "try:", r"\btry\b"),
    (uses_with, 'with open("f") as fh:', r"\bwith\b"),
    (uses_yield, "yield a", r"yield|generator"),
    (uses_print_object, "print(object())", r"object|print"),
    (calls_unknown_function, "unknown_helper(a)", r"unknown_helper"),
    (uses_fstring, 'f"{a}"', r"f-string"),
    (uses_lambda, "lambda y: y + 1", r"lambda"),
    (uses_list, "[a, a, 1]", r"\blist"),
    (uses_dict, "{1: a}", r"\bdict"),
    (uses_list_comprehension, "[i for i in range(3)]", r"comprehension|\blist"),
    (uses_matmul, "a @ a", r"MatMult|matmul|@"),
    (uses_undefined_name, "not_defined_anywhere", r"not_defined_anywhere"),
]


@pytest.mark.parametrize("pyfunc, construct, names", UNSUPPORTED, ids=[c[0].__name__ for c in UNSUPPORTED])
@pytest.mark.parametrize("abi", ["numba", "c"])
def test_unsupported_construct_message(pyfunc, construct, names, abi):
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(pyfunc, (int32,), device=True, abi=abi)
    message = str(info.value)
    lineno, line = source_position(pyfunc, construct)
    assert f"{__file__}:{lineno}" in message, message
    assert re.search(names, message), f"the message does not say what is unsupported:\n{message}"

    shown = message.splitlines()
    index = next((i for i, text in enumerate(shown) if text.strip() == line.strip()), None)
    assert index is not None, f"source line {line.strip()!r} not shown in:\n{message}"
    assert index + 1 < len(shown) and set(shown[index + 1].strip()) == {"^"}, f"no caret line in:\n{message}"
    caret_start = shown[index + 1].index("^")
    start = shown[index].index(construct)
    assert start <= caret_start < start + len(construct), (
        f"caret at column {caret_start}, construct {construct!r} spans {start}..{start + len(construct)}:\n{message}"
    )


def test_unsupported_error_is_a_typing_error():
    assert issubclass(errors.UnsupportedError, errors.TypingError)


def test_function_without_source_compiles_from_its_bytecode(monkeypatch):
    monkeypatch.delenv("CUJIT_FRONTEND", raising=False)
    namespace = {}
    exec("def built_by_exec(x):\n    return x + 1\n", namespace)
    _, resty = cuda.compile_ptx(namespace["built_by_exec"], (int32,), device=True)
    assert resty == types.int64
    # CUJIT_FRONTEND=source turns the bytecode reader off: the error names the function and the missing source.
    exec("def built_again(x):\n    return x + 1\n", namespace)
    monkeypatch.setenv("CUJIT_FRONTEND", "source")
    with pytest.raises(errors.UnsupportedError) as info:
        cuda.compile_ptx(namespace["built_again"], (int32,), device=True)
    message = str(info.value)
    assert "built_again" in message
    assert "source" in message


def ok(a, b):
    return a + b


@pytest.mark.parametrize(
    "sig, exc_types, names",
    [
        ("foo(int32, int32)", NameError, "foo"),
        ("int32(bar, int32)", NameError, "bar"),
        ("int33(int32, int32)", NameError, "int33"),
        ("__import__('os')", (NameError, ValueError, TypeError), "__import__"),
        ("int32(int32, int32", SyntaxError, "int32(int32, int32"),
        ("int32(int32,, int32)", SyntaxError, ","),
        ("int32 int32", SyntaxError, "int32 int32"),
        ("int32(int32) + 1", SyntaxError, "+"),
        ("1", TypeError, "int"),
        ("int32(1, int32)", TypeError, "1"),
    ],
)
def test_bad_signature_strings(sig, exc_types, names):
    with pytest.raises(exc_types) as info:
        cuda.compile_ptx(ok, sig, device=True)
    assert names in str(info.value), str(info.value)


@pytest.mark.parametrize(
    "sig",
    [int32, None, 42, (int32, "int32"), (1, 2), object()],
    ids=["single-type", "None", "int", "str-in-tuple", "ints", "object"],
)
def test_bad_signature_objects(sig):
    with pytest.raises(TypeError):
        cuda.compile_ptx(ok, sig, device=True)


@pytest.mark.parametrize("sig", [(int32,), (int32, int32, int32), "float64()", "int32(int32)"])
def test_signature_arity_mismatch(sig):
    with pytest.raises(TypeError, match=r"\b2\b"):
        cuda.compile_ptx(ok, sig, device=True)


# ----------------------------------------------------------------------------------------------
# fuzz: ~200 invalid functions, signatures and options, compiled in a subprocess
# ----------------------------------------------------------------------------------------------

INVALID_BODIES = [
    "try:\n    b = a\nexcept Exception:\n    b = a\nreturn b",
    "try:\n    b = a\nfinally:\n    b = a\nreturn b",
    "with open('f') as fh:\n    pass\nreturn a",
    "yield a",
    "yield from range(a)",
    "d = {1: a}\nreturn a",
    "s = {a}\nreturn a",
    "items = [a, a]\nreturn a",
    "items = [i for i in range(3)]\nreturn a",
    "items = {i for i in range(3)}\nreturn a",
    "items = {i: i for i in range(3)}\nreturn a",
    "return sum(i for i in range(3))",
    "s = f'{a}'\nreturn a",
    "return a + 'x'",
    "return -'x'",
    "import os\nreturn a",
    "from math import sqrt\nreturn sqrt(a)",
    "global G\nG = a\nreturn a",
    "b = a\ndel b\nreturn a",
    "g = lambda y: y\nreturn g",
    "return (lambda: 1)()",
    "def g(y):\n    return g(y)\nreturn g(a)",
    "def g():\n    return 1\nwhile g() < a:\n    a -= 1\nreturn a",
    "return a.foo",
    "a.foo = 1\nreturn a",
    "return a[0]",
    "a[0] = 1\nreturn a",
    "return a(1)",
    "return a @ a",
    "return min(a)",
    "return max()",
    "return abs()",
    "return abs(a, a)",
    "return round(a, 1, 2)",
    "return math.sqrt(a, a)",
    "return math.not_a_function(a)",
    "return np.not_a_function(a)",
    "return cuda.not_a_thing",
    "return undefined_name + a",
    "return helper(a)",
    "print(object())\nreturn a",
    "return object()",
    "return open('f')",
    "return len(a)",
    "return str(a)",
    "for i in a:\n    pass\nreturn a",
    "x, y = a\nreturn a",
    "x, y = (a, a, a)\nreturn a",
    "if a:\n    return (a, a)\nreturn a",
    "return a if a else (a, a)",
    "return range()",
    "for i in range(1, 2, 3, 4):\n    pass\nreturn a",
    "if (b := a) > 0:\n    return b\nreturn a",
    "class C:\n    pass\nreturn a",
    "return None + a",
    "return a + b'x'",
]

ARG_TYPES = ["int32", "float64", "boolean"]

INVALID_SIGNATURES = [
    "'int32('",
    "')'",
    "'int32((int32, int32)'",
    "'int32[int32]'",
    "'int32(int32, int32, int8)'",
    "'float64()'",
    "'complex999(int32, int32)'",
    "'int32(int32; int32)'",
    "'lambda: 1'",
    "'int32(int32=1, int32)'",
    "'int32(*int32)'",
    "'int32(int32, int32) if 1 else 2'",
    "'[int32]'",
    "'{int32: int32}'",
    "'int32.foo(int32, int32)'",
    "'int32(int32, int32).bar'",
    "\"'int32'\"",
    "'\\x00'",
    "'(' * 500 + ')' * 500",
    "'a' * 10000",
    "'int32(ïnt32, int32)'",
    "'int32(int32, int32)(int32)'",
    "'void(int32, int32)'",
    "'int32[::1](int32, int32)'",
    "'int32(int32[:, :, :, ::1, 4], int32)'",
    "''",
    "'   '",
    "'int32(,)'",
    "42",
    "None",
    "3.5",
    "(1,)",
    "{}",
    "object()",
    "int32",
    "b'int32(int32, int32)'",
    "(int32, 'int32')",
    "(int32, int32, int32)",
    "(int32,) * 1000",
]

INVALID_OPTIONS = [
    "cc=(1,)",
    "cc='sm_75'",
    "cc=(7, 5, 'z')",
    "cc=(7, 5, 'a')",
    "cc=(-1, -1)",
    "cc=(6, 1)",
    "cc=(9, 1, 'a')",
    "cc=None, abi='C'",
    "output=None",
    "abi_info='x'",
    "launch_bounds=(1, 2, 3, 4, 5)",
    "forceinline=True",
    "output='cubin'",
    "device=False, abi='c'",
    "abi=None",
]

FUZZ_HEADER = """\
import math
import numpy as np
from cujit import cuda
from cujit import *


def helper(x):
    return x


def ok(a, b):
    return a + b

"""

FUZZ_RUNNER = """\
import json, sys, traceback
sys.path.insert(0, sys.argv[1])
import fuzz_cases
progress = open(sys.argv[2], "w")
results = []
for name, call in fuzz_cases.CASES:
    progress.write(name + "\\n")
    progress.flush()
    try:
        ptx, resty = call()
    except Exception as exc:
        results.append({"case": name, "raised": type(exc).__name__, "message": str(exc)[:300]})
    else:
        results.append({"case": name, "raised": None, "ptx": ptx if isinstance(ptx, str) else "",
                        "resty": str(resty)})
json.dump(results, open(sys.argv[3], "w"))
"""


def fuzz_module():
    """Source of a module with the invalid functions and a CASES list of (name, call) pairs."""
    parts, cases = [FUZZ_HEADER], []
    for i, body in enumerate(INVALID_BODIES):
        parts.append(f"def body_{i:03d}(a):\n{textwrap.indent(body, '    ')}\n\n")
        for j, ty in enumerate(ARG_TYPES):
            abi = "numba" if (i + j) % 2 else "c"
            cases.append(
                f"('body_{i:03d}[{ty},{abi}]', "
                f"lambda: cuda.compile_ptx(body_{i:03d}, ({ty},), device=True, abi={abi!r}))"
            )
    for i, sig in enumerate(INVALID_SIGNATURES):
        cases.append(f"('signature_{i:03d}', lambda: cuda.compile_ptx(ok, {sig}, device=True))")
    for i, opts in enumerate(INVALID_OPTIONS):
        cases.append(f"('options_{i:03d}', lambda: cuda.compile(ok, (int32, int32), {opts}))")
    parts.append("CASES = [\n" + "".join(f"    {c},\n" for c in cases) + "]\n")
    return "".join(parts), len(cases)


def test_fuzz_invalid_inputs_raise_python_exceptions(tmp_path, register_ptx):
    source, count = fuzz_module()
    assert count >= 200
    (tmp_path / "fuzz_cases.py").write_text(source)
    (tmp_path / "runner.py").write_text(FUZZ_RUNNER)
    progress, report = tmp_path / "progress.txt", tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "runner.py"), str(tmp_path), str(progress), str(report)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(tmp_path),
        env=dict(os.environ, PYTHONFAULTHANDLER="1"),
    )
    if proc.returncode != 0:
        started = progress.read_text().split() if progress.exists() else []
        pytest.fail(
            f"the fuzz process died (exit code {proc.returncode}) while compiling case "
            f"{started[-1] if started else '?'}:\n{proc.stderr[-4000:]}",
            pytrace=False,
        )
    results = json.loads(report.read_text())
    assert len(results) == count
    compiled = [r for r in results if r["raised"] is None]
    for r in compiled:
        if r["ptx"]:
            register_ptx(r["ptx"])
    assert not compiled, "invalid inputs compiled without an error:\n" + "\n".join(
        f"  {r['case']} -> {r['resty']}" for r in compiled
    )
    internal = [r for r in results if r["raised"] in ("InternalError", "SystemError")]
    assert not internal, "invalid inputs hit internal errors instead of user errors:\n" + "\n".join(
        f"  {r['case']}: {r['raised']}: {r['message'][:200]}" for r in internal
    )


# ----------------------------------------------------------------------------------------------
# Bad input never leaks an internal exception type
# ----------------------------------------------------------------------------------------------


@cuda.jit(device=True)
def decorated_add(x, y):
    return x + y


def test_compile_accepts_a_device_dispatcher():
    ptx, resty = cuda.compile_ptx(decorated_add, (int32, int32), device=True)
    assert resty == types.int64 and ".visible .func" in ptx
    ptx, resty = cuda.compile(decorated_add, "float32(float32, float32)")
    assert resty == types.float32


@pytest.mark.parametrize("bad", [42, "add", print])
def test_compile_rejects_what_is_not_a_function(bad):
    with pytest.raises(TypeError, match="compiles a Python function"):
        cuda.compile_ptx(bad, (int32,), device=True)


@pytest.mark.parametrize(
    "make, exc, says",
    [
        (lambda: types.Array(types.float64, 1, "Q"), ValueError, "Array: layout must be 'C', 'F' or 'A', got 'Q'"),
        (lambda: types.Array(types.float64, -1, "C"), ValueError, "Array: ndim must be between 0 and 64, got -1"),
        (lambda: types.Array(3, 1, "C"), TypeError, "Array: dtype must be a cujit type"),
        (lambda: types.Array(types.float64, 1.5, "C"), TypeError, "Array: ndim must be an int"),
        (lambda: types.UniTuple(types.int32, -1), ValueError, "UniTuple: count must be between 0 and"),
        (lambda: types.UniTuple(types.int32, 2**40), ValueError, "UniTuple: count must be between 0 and"),
        (lambda: types.Tuple([types.int32, 5]), TypeError, "Tuple: element 1 must be a cujit type"),
        (lambda: types.CPointer("float32"), TypeError, "CPointer: dtype must be a cujit type"),
    ],
)
def test_type_constructors_name_the_bad_argument(make, exc, says):
    with pytest.raises(exc) as info:
        make()
    assert says in str(info.value)


@cuda.jit(device=True)
def grows(x, n):
    if n > 0:
        return grows((x, x), n - 1)
    return 0


def calls_grows(n):
    return grows(1, n)


@cuda.jit(device=True)
def two_args(a, b):
    return a + b


def calls_with_one_argument(x):
    return two_args(x)


@cuda.jit(device=True)
def ping(x):
    return pong(x)


@cuda.jit(device=True)
def pong(x):
    return ping(x)


def calls_ping(x):
    return ping(x)


@pytest.mark.parametrize(
    "fn, where, construct, says",
    [
        (
            calls_grows,
            grows,
            "grows((x, x), n - 1)",
            "cannot type infer runaway recursion: 'grows' calls itself with new argument types at each level",
        ),
        (
            calls_with_one_argument,
            calls_with_one_argument,
            "two_args(x)",
            "two_args() takes 2 positional arguments but 1 was given",
        ),
        (calls_ping, pong, "ping(x)", "mutually recursive device functions are not supported"),
    ],
)
def test_call_errors_point_at_the_call(fn, where, construct, says):
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(fn, (types.int64,), device=True)
    message = str(info.value)
    line, text = source_position(where.py_func if hasattr(where, "py_func") else where, construct)
    assert says in message and f":{line}" in message and text.strip() in message and "^" in message, message


# ----------------------------------------------------------------------------------------------
# Limits known at compile time: static shared memory
# ----------------------------------------------------------------------------------------------


def too_much_shared(a):
    s = cuda.shared.array(16384, dtype=types.float64)
    s[0] = a[0]
    a[0] = s[0]


@cuda.jit(device=True)
def tile_user(a):
    t = cuda.shared.array((64, 80), dtype=types.float64)
    t[0, 0] = a[0]
    return t[0, 0]


def shared_in_callee_too(a):
    s = cuda.shared.array(4096, dtype=types.int32)
    s[0] = 1
    a[0] = s[0] + tile_user(a)


def just_enough_shared(a):
    s = cuda.shared.array(6144, dtype=types.float64)  # 48 KiB exactly
    s[0] = a[0]
    a[0] = s[0]


@pytest.mark.parametrize(
    "fn, where, construct, says",
    [
        (
            too_much_shared,
            too_much_shared,
            "cuda.shared.array(16384",
            "declares 131072 bytes of static shared memory, more than the 49152 bytes (48 KiB) a CUDA device allows: "
            "shared array 's' of float64, shape (16384,), takes 131072 bytes",
        ),
        (
            shared_in_callee_too,
            tile_user,
            "cuda.shared.array((64, 80)",
            "declares 57344 bytes of static shared memory, more than the 49152 bytes (48 KiB) a CUDA device allows: "
            "shared array 't' (in device function 'tile_user') of float64, shape (64, 80), takes 40960 bytes",
        ),
    ],
)
def test_jit_kernel_over_the_static_shared_memory_limit(fn, where, construct, says):
    with pytest.raises(errors.TypingError) as info:
        cuda.jit("void(float64[:])")(fn)
    message = str(info.value)
    line, text = source_position(where.py_func if hasattr(where, "py_func") else where, construct)
    assert says in message and f":{line}" in message and text.strip() in message, message


def test_static_shared_memory_at_the_limit_compiles(ptxas):
    kernel = cuda.jit("void(float64[:])")(just_enough_shared)
    assert ".shared" in next(iter(kernel.overloads.values())).ptx


def test_compile_ptx_over_the_limit_behaves_as_numba_cuda(ptxas, tmp_path):
    """compile_ptx returns the PTX (numba-cuda does; ptxas then rejects it, as at numba-cuda's load)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_errors as t; from cujit import cuda; "
        "sys.stdout.write(cuda.compile_ptx(t.too_much_shared, 'void(float64[:])')[0])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "k.ptx"
    path.write_text(proc.stdout)
    asm = subprocess.run([ptxas, "-arch=sm_75", "-o", os.devnull, str(path)], capture_output=True, text=True)
    assert asm.returncode != 0 and "shared data" in asm.stderr + asm.stdout


# ---- where errors are raised from -------------------------------------------------------------------------------


def reads_no_such_attribute(a):
    a[0] = a.nosuch


def scalar_reads_no_such_attribute(x):
    return x.nosuch


def copies_no_such_attribute(a, out):
    out[0] = a.nosuch


def calls_the_bad_device_function(a):
    a[0] = bad_device_function(a[0])


bad_device_function = cuda.jit(device=True)(scalar_reads_no_such_attribute)

USER_CALLS = [
    ("launch on the CPU target", lambda: cuda.jit(target="cpu")(reads_no_such_attribute)[1, 1](np.zeros(2))),
    (
        "launch, error in a device function",
        lambda: cuda.jit(target="cpu")(calls_the_bad_device_function)[1, 1](np.zeros(2)),
    ),
    ("jit with a signature", lambda: cuda.jit("void(float64[:])")(reads_no_such_attribute)),
    ("kernel.compile", lambda: cuda.jit(reads_no_such_attribute).compile("void(float64[:])")),
    ("compile_ptx", lambda: cuda.compile_ptx(reads_no_such_attribute, "void(float64[:])")),
    ("compile", lambda: cuda.compile(scalar_reads_no_such_attribute, "float64(float64)")),
    ("vectorize with signatures", lambda: cuda.vectorize(["float64(float64)"])(scalar_reads_no_such_attribute)),
    (
        "guvectorize with signatures",
        lambda: cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")(copies_no_such_attribute),
    ),
]


def _cujit_frames(error):
    package = os.path.dirname(os.path.abspath(cujit.__file__)) + os.sep
    return [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename.startswith(package)]


@pytest.mark.parametrize("call", [c[1] for c in USER_CALLS], ids=[c[0] for c in USER_CALLS])
def test_a_typing_error_is_raised_from_the_users_call(call, monkeypatch):
    monkeypatch.delenv("CUJIT_FULL_TRACEBACK", raising=False)
    with pytest.raises(errors.TypingError, match="Unknown attribute 'nosuch'") as info:
        call()
    frames = traceback.extract_tb(info.value.__traceback__)
    ours = _cujit_frames(info.value)
    assert len(ours) == 1 and ours[0] == frames[-1], frames  # the entry point, after the user's call
    assert os.path.basename(ours[0].filename) == "errors.py"
    assert os.path.basename(frames[-2].filename) == "test_errors.py"
    assert ".py:" in str(info.value) and "^^^" in str(info.value)  # still located

    monkeypatch.setenv("CUJIT_FULL_TRACEBACK", "1")
    with pytest.raises(errors.TypingError, match="Unknown attribute 'nosuch'") as info:
        call()
    files = {os.path.basename(f.filename) for f in _cujit_frames(info.value)}
    assert "compiler.py" in files and len(_cujit_frames(info.value)) > 3, files


def test_a_bug_in_cujit_keeps_its_traceback():
    @errors.entry_point
    def fails_inside():
        raise errors.LoweringError("invalid LLVM IR")

    with pytest.raises(errors.LoweringError) as info:
        fails_inside()
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [f.name for f in frames[-2:]] == ["fails_inside", "fails_inside"]  # the entry point's, and the raise
