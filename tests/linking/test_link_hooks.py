"""``__numba_cuda_link__`` / ``__numba_cuda_declare__`` without a GPU (docs/link_hooks.md): the hook is called
with the call's types whenever a call to the object is compiled, and its items are linked (the cubin is checked
for the kernel); ``compile_all`` lists them; errors name the object at the call; the declare path."""

import pytest

from cujit import _core, cuda, errors

import link_hooks_src as src

SIG = "void(float32[::1], float32[::1])"
CC = (9, 0)


def _linked(kernel):
    cubin = kernel.link(CC)
    assert _core.link.cubin_has_symbol(cubin, kernel.entry)
    return cubin


def test_the_hook_is_called_with_the_declared_types_and_its_code_linked():
    src.scale32.calls.clear()
    k = cuda.jit(src.k32, lto=False)  # (with LTO the function is inlined: no symbol to look for)
    compiled = k.compile(SIG, cc=CC)
    assert src.scale32.calls == [("float32", "float32")]
    assert [i.name for i in compiled.typed.link_inputs] == ["scale_float32.cu"]
    assert b"scale_float32" in _linked(compiled)
    k.compile(SIG, cc=CC)  # the compiled specialisation: no new call
    assert len(src.scale32.calls) == 1
    k.compile("void(float32[:], float32[:])", cc=CC)  # a new specialisation: called again
    cuda.jit(src.k32).compile(SIG, cc=CC)  # a new kernel: again
    assert len(src.scale32.calls) == 3


def test_compile_ptx_and_compile_all():
    src.scale32.calls.clear()
    ptx, _ = cuda.compile_ptx(src.udf, "float32(float32)", device=True, cc=CC)
    assert "scale_float32" in ptx and src.scale32.calls == [("float32", "float32")]
    codes, _ = cuda.compile_all(src.udf, "float32(float32)", cc=CC)
    assert isinstance(codes[1], cuda.LTOIR) and codes[1].name == "scale_float32.cu"
    assert codes[1].data[:4] == b"\xed\x43\x4e\x7f" and len(codes) == 2


def test_not_called_for_a_kernel_that_does_not_call_it():
    src.scale32.calls.clear()
    cuda.compile_ptx(src.unused, SIG, cc=CC)
    assert src.scale32.calls == []


def test_each_dtype_links_its_own_code():
    compiled = cuda.jit(src.k64, lto=False).compile("void(float64[::1], float64[::1])", cc=CC)
    cubin = _linked(compiled)
    assert b"scale_float64" in cubin and b"scale_float32" not in cubin


def test_two_calls_in_one_kernel_link_the_code_once():
    src.scale32.calls.clear()
    compiled = cuda.jit(src.twice_in_one).compile(SIG, cc=CC)
    assert len(src.scale32.calls) == 1  # asked once per kernel for the same types
    _linked(compiled)


def test_items_travel_with_device_functions():
    compiled = cuda.jit(src.through_device_function).compile(SIG, cc=CC)
    assert "scale_float32.cu" in [i.name for i in compiled.typed.link_inputs]
    _linked(compiled)


def test_declare_device_link_callable():
    src.shorthand_calls.clear()
    compiled = cuda.jit(src.calls_mul, lto=False).compile(SIG, cc=CC)
    assert src.shorthand_calls == [("float32", "float32")]
    assert b"mul_f32_f32" in _linked(compiled)


@pytest.mark.parametrize(
    "kernel, message",
    [
        (
            src.calls_raising,
            r"__numba_cuda_link__ of cuda.declare_device\('never_defined'.*raised LookupError: "
            r"no code for this type \(called with float32\)",
        ),
        (src.calls_number, r"__numba_cuda_link__ of cuda.declare_device\('never_defined'.*returned int 42"),
        (src.calls_bad_path, r"returned an item cujit cannot link: .*extension \.unknown"),
    ],
)
def test_hook_errors_name_the_object_at_the_call(kernel, message):
    with pytest.raises(errors.TypingError, match=message) as e:
        cuda.compile_ptx(kernel, SIG, cc=CC)
    text = str(e.value)
    assert "link_hooks_src.py:" in text and "out[0] = d_" in text and "^" in text
    if kernel is src.calls_raising:
        assert isinstance(e.value.__cause__, LookupError)  # the hook's own exception, chained


def test_declare_hook_types_the_call_through_the_declaration_it_gives():
    src.negate.calls.clear()
    compiled = cuda.jit(src.calls_negate, lto=False).compile(SIG, cc=CC)
    assert src.negate.calls == [("float32",)]
    assert b"negate_float32" in _linked(compiled)
    ptx, _ = cuda.compile_ptx(src.calls_negate, "void(float64[::1], float64[::1])", cc=CC)
    assert "negate_float64" in ptx  # (symbol, signature): declared, nothing to link
    with pytest.raises(errors.LinkerError, match="negate_float64"):
        cuda.jit(src.calls_negate).compile("void(float64[::1], float64[::1])", cc=CC).link(CC)
