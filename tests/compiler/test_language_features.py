"""Loops with else, enumerate/zip, ranges, membership, tuple comparisons, the operator module, keyword and default
arguments, print, cuda.fp16, cuda.libdevice and grid sync without a GPU: each kernel of language_src.py compiles
to PTX that ptxas assembles (conftest), the PTX shows the construct's lowering, the intrinsic table is what the
Python stubs offer, and misuse is a TypingError located at the construct (file:line, the source line and a
caret)."""

import cmath
import math
import re

import pytest

import language_src as L
from cujit import _core, cuda, errors
from cujit import void
from source_lines import assert_located

CC = (9, 0)


def ptx_of(fn, sig, **kwargs):
    ptx, resty = cuda.compile_ptx(fn, sig, cc=CC, **kwargs)
    assert resty == void
    return ptx


def test_loops_with_else_compile():
    ptx = ptx_of(L.loop_else, "void(float64[:], float64[:])")
    assert ".entry" in ptx


def test_enumerate_zip_and_rows():
    ptx_of(L.enumerate_zip, "void(float64[:], float64[:], float64[:, :], float64[:])")


def test_range_values_membership_and_tuples():
    ptx_of(L.ranges, "void(int64, int64[:])")
    ptx_of(L.membership, "void(float64[:], int64[:])")
    ptx_of(L.tuple_compare, "void(float64[:], float64[:])")


def test_operator_module_is_the_operators():
    ptx = ptx_of(L.operator_calls, "void(float64[:], float64[:])")
    assert "add.f64" in ptx and "mul.f64" in ptx and "neg.f64" in ptx


def test_keyword_and_default_arguments_are_bound_at_compile_time():
    ptx = ptx_of(L.keyword_arguments, "void(float64[:], float64[:])")
    assert ".entry" in ptx


def test_literal_arguments_specialise_device_functions_like_numba():
    """f(1, z=4) compiles the callee for Literal[int](1) ... as numba does, so the mangled name shows them."""

    def caller(out):
        out[0] = L.weighted(1, z=4)

    ptx = ptx_of(caller, "void(float64[:])", opt=False)
    names = set(re.findall(r"_ZN\w*8weighted\w*", ptx))
    assert any("23Literal_5bint_5d_281_29" in n and "23Literal_5bint_5d_284_29" in n for n in names), names


def test_print_uses_vprintf_with_numba_formats():
    ptx = ptx_of(L.printing, "void(float32[:])")
    assert "vprintf" in ptx
    strings = {
        bytes(int(c) for c in body.split(",") if c.strip()).decode()
        for body in re.findall(r"\.b8 [\w$]+\[\d+\] = \{([\d, ]+)\}", ptx)
    }
    assert "%s %lld %f %s %s %lld\n" in strings, strings
    assert {"values:", "True", "False", "%f\n", "\n"} <= strings, strings


def test_math_constants():
    ptx_of(L.math_constants, "void(float64[:])")


def test_fp16_functions():
    ptx = ptx_of(L.half_precision, "void(float16[:], float16[:], float16[:, :])")
    assert re.search(r"\badd\.(rn\.)?f16\b", ptx) and re.search(r"\bfma\.rn\.f16\b", ptx), ptx


def test_libdevice_functions_by_numba_names():
    ptx = ptx_of(L.libdevice_calls, "void(float64[:], float64[:, :])")
    # out-parameters come back as a tuple: sincos and frexp were called and their results stored
    assert ".entry" in ptx
    paths = set(_core.intrinsic_paths())
    assert {"cuda.libdevice.sincos", "cuda.libdevice.frexpf", "cuda.libdevice.ullmax"} <= paths
    assert len([p for p in paths if p.startswith("cuda.libdevice.")]) == 317


def test_grid_sync_needs_the_device_runtime_and_a_cooperative_launch():
    ptx = ptx_of(L.grid_sync, "void(int32[:], int32[:])")
    assert "cudaCGGetIntrinsicHandle" in ptx and "cudaCGSynchronize" in ptx
    k = cuda.jit("void(int32[:], int32[:])")(L.grid_sync)
    assert k.overloads[(cuda.int32[:], cuda.int32[:])].cooperative


def test_python_stubs_come_from_the_intrinsic_table():
    paths = _core.intrinsic_paths()
    for path in paths:
        if not path.startswith("cuda."):  # cmath.*, math.*: typed through the module itself
            assert path.split(".")[0] in ("cmath", "math") and not hasattr(cuda, path.split(".")[1]), path
            continue
        obj = cuda
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
        assert obj._cujit_intrinsic == path
    assert "cuda.fp16.hadd" in paths and "cuda.cg.this_grid" in paths and "cuda.threadIdx.x" in paths


# ---- misuse: Python's errors, located -------------------------------------------------------------------


def k_unexpected_keyword(out):
    out[0] = L.weighted(1, w=2)


def k_duplicate_argument(out):
    out[0] = L.weighted(1, x=2)


def k_missing_argument(out):
    out[0] = L.weighted(y=2)


def k_too_many(out):
    out[0] = L.weighted(1, 2, 3, 4)


def k_print_complex(out):
    print(out[0] * 1j)


def k_in_array(out):
    if 1.0 in out:
        out[0] = 1


def k_fp16_arity(out):
    out[0] = cuda.fp16.hadd(out[0])


def k_range_float_index(out):
    out[0] = range(3)[1.5]


@pytest.mark.parametrize(
    "fn, construct, message",
    [
        (k_unexpected_keyword, "w=2", "got an unexpected keyword argument 'w'"),
        (k_duplicate_argument, "x=2", "got multiple values for argument 'x'"),
        (k_missing_argument, "L.weighted(y=2)", "missing required argument 'x'"),
        (k_too_many, "L.weighted(1, 2, 3, 4)", "takes 3 positional arguments but 4 were given"),
        (k_print_complex, "out[0] * 1j", "print() in CUDA code prints string literals"),
        (k_in_array, "1.0 in out", "No implementation of 'in'"),
        (k_fp16_arity, "cuda.fp16.hadd(out[0])", "No implementation of cuda.fp16.hadd"),
        (k_range_float_index, "1.5", "range indices must be integers"),
    ],
)
def test_misuse_is_a_located_typing_error(fn, construct, message):
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(fn, "void(float64[:])", cc=CC)
    text = str(info.value)
    assert message in text, text
    assert_located(text, fn, construct, __file__)


@pytest.mark.parametrize("complex_type", ["complex64", "complex128"])
def test_cmath_functions_compile_for_both_complex_types(complex_type):
    ptx_of(L.complex_functions, f"void({complex_type}[:], {complex_type}[:, :])")
    ptx_of(L.complex_parts, f"void({complex_type}[:], float64[:, :], boolean[:, :], complex128[:])")


def cmath_types(z, out):
    p = cmath.phase(z[0])
    q = cmath.polar(z[0])
    s = cmath.sqrt(z[0])
    n = cmath.isnan(2.0)  # a real argument converts to complex, as numba's overloads allow
    r = cmath.rect(1.0, 2.0)
    out[0] = p + q[0] + s.real + n + r.imag


def cmath_rect_of_complex(z):
    z[0] = cmath.rect(z[0], z[0])


def test_cmath_result_types_follow_numba():
    from cujit.compiler import make_options, parse_signature, type_function

    options = make_options(
        device=False, abi="numba", abi_info=None, cc=CC, fastmath=False, opt=True, debug=False, lineinfo=False
    )
    typed = type_function(cmath_types, parse_signature("void(complex64[:], float32[:])"), options, [])
    names = {name: str(t) for name, t in typed.variables}
    assert names["p"] == "float32" and names["q"] == "UniTuple(float32 x 2)" and names["s"] == "complex64"
    assert names["n"] == "bool" and names["r"] == "complex128"
    with pytest.raises(errors.TypingError, match=r"No implementation of cmath.rect"):
        cuda.compile_ptx(cmath_rect_of_complex, "void(complex128[:])", cc=CC)


def optional_is_misuse(a):
    x = a[0]
    if x is a[1]:
        a[0] = 1.0


def test_optional_results_of_device_functions():
    from cujit.compiler import make_options, parse_signature, type_function

    options = make_options(
        device=True, abi="numba", abi_info=None, cc=CC, fastmath=False, opt=True, debug=False, lineinfo=False
    )
    typed = type_function(L.first_index.py_func, parse_signature("(float64[:], float64)"), options, [])
    assert str(typed.return_type) == "OptionalType(int64)"
    typed = type_function(L.positive_half.py_func, parse_signature("(float64,)"), options, [])
    assert str(typed.return_type) == "OptionalType(float64)"
    ptx = ptx_of(L.optional_results, "void(float64[:], float64[:], int64[:], float64[:])", opt=False)
    assert "OptionalType" not in ptx.split(".entry")[1].split("(")[0]  # only callees carry it in their names
    assert any("first_index" in n for n in re.findall(r"\.func\s+\(\.param \.b32 func_retval0\) (\w+)", ptx))
    with pytest.raises(errors.TypingError, match="only comparisons with None are supported"):
        cuda.compile_ptx(optional_is_misuse, "void(float64[:])", cc=CC)


def test_bfloat16_kernel_compiles_for_every_architecture():
    sig = "void(float32[:], float32[:], float32[:, :], boolean[:, :], int64[:, :])"
    for cc in ((7, 5), (8, 0), (9, 0)):  # no bf16 instructions are needed: rounding is integer arithmetic
        ptx, _ = cuda.compile_ptx(L.bfloat16_ops, sig, cc=cc)
        assert ".entry" in ptx


def bf16_mixed(a):
    x = cuda.bf16.bfloat16(a[0])
    a[0] = x + a[1]


def test_bfloat16_types_and_misuse():
    from cujit import types
    from cujit.cuda import bf16

    assert str(types.bfloat16) == "__nv_bfloat16" and types.bfloat16.kind == "bfloat16"
    assert "hfma_relu" in bf16.__all__ and "uint64_to_bfloat16_rd" in bf16.__all__ and "bfloat16" in bf16.__all__
    with pytest.raises(
        errors.TypingError,
        match=r"No implementation of operator '\+' for operands \(__nv_bfloat16, "
        r"float32\)",
    ):
        cuda.compile_ptx(bf16_mixed, "void(float32[:])", cc=(8, 0))


def bf16_math(a, out):
    x = cuda.bf16.bfloat16(a[0])
    out[0] = math.sqrt(x)
    out[1] = math.floor(x) + math.exp(x) + math.log(x) + math.tanh(x)


def test_math_functions_of_bfloat16_are_the_bf16_functions():
    from cujit.compiler import make_options, parse_signature, type_function

    options = make_options(
        device=False, abi="numba", abi_info=None, cc=(8, 0), fastmath=False, opt=True, debug=False, lineinfo=False
    )
    type_function(bf16_math, parse_signature("void(float32[:], float32[:])"), options, [])
    ptx, _ = cuda.compile_ptx(bf16_math, "void(float32[:], float32[:])", cc=(8, 0))
    assert "sqrt.rn.f32" in ptx


def test_memory_arrays_name_a_bad_dtype_and_show_their_types():
    """cuda.shared/local.array with a dtype name numpy does not know is numba's typing error; a specialisation's
    _type_annotation.typemap gives each variable's type (numba-cuda's tests read it)."""
    import numpy as np

    from cujit import int32

    def f(x):
        s = cuda.shared.array(10, dtype=np.int32)
        s[0] = x[0]
        x[0] = s[0]

    kernel = cuda.jit(void(int32[::1]))(f)
    typemap = next(iter(kernel.overloads.values()))._type_annotation.typemap
    assert typemap["s"].dtype == int32 and typemap["x"] == int32[::1]

    def g(x):
        s = cuda.local.array(10, dtype="int33")
        s[0] = x[0]

    with pytest.raises(errors.TypingError, match=r"Invalid NumPy dtype specified: 'int33'[\s\S]*\^"):
        cuda.compile_ptx(g, (int32[::1],), cc=(9, 0))
