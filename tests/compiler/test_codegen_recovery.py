"""Code generation never takes the user's process down: LLVM's fatal errors and invalid lowered IR become
LoweringError naming the function, and the compiler keeps working (codegen/fatal_error_recovery.cpp,
codegen/fault_injection.cpp). Also the lowering bug that used to abort: ordered comparisons of booleans."""

import itertools
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from cujit import _core, cuda, errors, int64

OPTIONS = [
    dict(zip(("opt", "debug", "lineinfo", "fastmath"), combo)) for combo in itertools.product((False, True), repeat=4)
]


def add(a, b):
    return a + b


@pytest.fixture
def fault():
    """fault(name): plant that defect in the following compiles; cleared after the test."""
    yield _core._inject_fault
    _core._inject_fault("")


@pytest.mark.parametrize(
    "name, says",
    [("invalid_ir", "the lowered LLVM IR is invalid"), ("unselectable", "LLVM reported a fatal error: Cannot select")],
)
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(k for k, v in o.items() if v) or "none")
def test_fault_becomes_lowering_error_and_compiler_recovers(fault, name, says, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.NumbaInvalidConfigWarning)
        fault(name)
        with pytest.raises(errors.LoweringError) as info:
            cuda.compile_ptx(add, (int64, int64), device=True, **options)
        message = str(info.value)
        assert says in message and "'add'" in message and "bug in cujit" in message
        assert isinstance(info.value, errors.InternalError) and isinstance(info.value, errors.NumbaError)
        fault("")
        # The next compiles, same options, get a healthy pipeline.
        for _ in range(2):
            ptx, resty = cuda.compile_ptx(add, (int64, int64), device=True, **options)
            assert resty == int64 and ".visible .func" in ptx


def test_fault_in_a_kernel_through_jit(fault):
    def k(a):
        a[0] = 1

    fault("unselectable")
    with pytest.raises(errors.LoweringError, match="'test_fault_in_a_kernel_through_jit.<locals>.k'"):
        cuda.jit("void(int64[:])")(k)
    fault("")
    kernel = cuda.jit("void(int64[:])")(k)
    assert ".entry" in next(iter(kernel.overloads.values())).ptx


def test_fault_does_not_kill_the_process():
    """In a child process: a fatal error inside LLVM ends as an exception, and the process exits normally."""
    code = textwrap.dedent("""
        from cujit import _core, cuda, errors, int64
        from test_codegen_recovery import add
        _core._inject_fault("unselectable")
        try:
            cuda.compile_ptx(add, (int64, int64), device=True, opt=False)
        except errors.LoweringError:
            print("recovered")
        _core._inject_fault("")
        print(cuda.compile_ptx(add, (int64, int64), device=True)[1])
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(__file__), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["recovered", "int64"]


# ----------------------------------------------------------------------------------------------
# Ordered comparisons of booleans (such a comparison once aborted code generation at opt=False)
# ----------------------------------------------------------------------------------------------


def cmp_bool_vars(a, b, c):
    x = a < b
    y = b > c
    r = 0
    for i in range(c):
        if x <= y:
            r += 1
        x = a > i
    return r


def bool_orderings(a, b):
    x = a < b
    y = b < a
    r = 0
    if x < y:
        r += 1
    if x <= y:
        r += 2
    if x > y:
        r += 4
    if x >= y:
        r += 8
    if x == y:
        r += 16
    if x != y:
        r += 32
    return r + min(x, y) + max(x, y)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(k for k, v in o.items() if v) or "none")
@pytest.mark.parametrize("fn", [cmp_bool_vars, bool_orderings])
def test_boolean_comparisons_compile_under_every_option(fn, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.NumbaInvalidConfigWarning)
        args = (int64,) * (3 if fn is cmp_bool_vars else 2)
        ptx, resty = cuda.compile_ptx(fn, args, device=True, **options)
    assert resty == int64
