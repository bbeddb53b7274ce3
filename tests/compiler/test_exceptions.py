"""raise and assert in CUDA code without a GPU: compiled with and without debug=True (PTX assembled by ptxas),
numba-cuda's exception channel globals in debug kernels only, the raise sites the host maps status codes back
to, status codes passed on by callers, and misuse located with a caret."""

import re

import pytest

import exceptions_src as X
from cujit import cuda, errors
from cujit.compiler import make_options, parse_signature, type_function
from source_lines import assert_located, source_position

CC = (9, 0)
CHANNEL = ("errcode", "tidx", "ctaidx", "tidy", "ctaidy", "tidz", "ctaidz")


def test_debug_kernels_get_the_exception_channel_globals():
    ptx, _ = cuda.compile_ptx(X.raise_at, "void(float64[:], int64)", cc=CC, debug=True, opt=False)
    entry = re.search(r"\.entry (\w+)\(", ptx).group(1)
    for name in CHANNEL:
        assert re.search(rf"\.visible \.global \.align 4 \.u32 {entry}__{name}__", ptx), name
    assert re.search(r"\batom(\.relaxed\.sys)?(\.global)?\.cas\.b32\b", ptx)  # LLVM 22: with order and scope
    assert ".target sm_90, debug" in ptx


def test_without_debug_a_raise_ends_the_thread_silently():
    ptx, _ = cuda.compile_ptx(X.raise_at, "void(float64[:], int64)", cc=CC)
    assert "__errcode__" not in ptx and "atom" not in ptx


def test_raise_sites_in_status_code_order():
    sig = parse_signature("void(float64[:, :], float64)")
    options = make_options(
        device=False, abi="numba", abi_info=None, cc=CC, fastmath=False, opt=False, debug=True, lineinfo=False
    )
    typed = type_function(X.through_device_function, sig, options, [])
    sites = typed.exceptions
    assert len(sites) == 1
    cls, args, function, filename, line = sites[0]
    assert cls is X.BadValue and args == ("value over the limit", 7) and function == "checked_double"
    assert filename == X.__file__ and line == source_position(X.checked_double.py_func, "raise BadValue")[0]
    typed = type_function(X.assert_positive, parse_signature("void(float64[:])"), options, [])
    assert [(s[0], s[1]) for s in typed.exceptions] == [(AssertionError, ("items must be positive",))]
    typed = type_function(X.assert_without_message, parse_signature("void(float64[:])"), options, [])
    assert [(s[0], s[1]) for s in typed.exceptions] == [(AssertionError, ())]


def test_device_functions_return_the_status_and_callers_pass_it_on():
    ptx, _ = cuda.compile_ptx(X.through_device_function, "void(float64[:, :], float64)", cc=CC, debug=True, opt=False)
    assert re.search(r"\.func\s+\(\.param \.b32 func_retval0\) \w*checked_double\w*\(", ptx), ptx
    # The kernel tests the status the callee returns (code 1 for its raise).
    assert re.search(r"setp\.(ne|eq)\.[sb]32\s+%p\d+, %r\d+, 0;", ptx), ptx
    cuda.compile_ptx(X.assert_positive, "void(float32[:])", cc=CC, debug=True, opt=False)
    cuda.compile_ptx(X.assert_without_message, "void(float32[:])", cc=CC)
    ptx, _ = cuda.compile_ptx(X.checked_double, "float64(float64, float64)", cc=CC, device=True)
    assert ".func" in ptx


def raise_not_exception(a):
    raise a


def raise_runtime_argument(a):
    raise ValueError(a[0])


def raise_keyword(a):
    raise ValueError(msg="x")


def bare_raise(a):
    raise


@pytest.mark.parametrize(
    "fn, message, construct",
    [
        (raise_not_exception, "raise needs an exception class", "raise a"),
        (raise_runtime_argument, "must be constants", "a[0]"),
        (raise_keyword, "positional arguments only", '"x"'),
        (bare_raise, "re-raising (a bare raise)", "    raise"),
    ],
)
def test_raise_misuse_is_located(fn, message, construct):
    with pytest.raises((errors.TypingError, errors.UnsupportedError)) as info:
        cuda.compile_ptx(fn, "void(float64[:])", cc=CC)
    text = str(info.value)
    assert message in text, text
    assert_located(text, fn, construct, __file__)
