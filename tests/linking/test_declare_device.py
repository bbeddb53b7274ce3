"""cuda.declare_device: the descriptor, its errors, the PTX prototypes of
declared functions in numba's and the C ABI, calls from kernels and device functions, argument conversion,
CPointer items and cffi's from_buffer."""

import re

import pytest

from cujit import cuda, errors, types
from cujit.compiler import parse_signature

import declare_device_src as src


def test_descriptor():
    f = cuda.declare_device("f1", types.int32(types.float32[:]))
    assert f.name == "f1" and tuple(f.sig.args) == (types.float32[:],) and f.sig.return_type == types.int32
    g = cuda.declare_device("f1", "int32(float32[:])")
    assert tuple(g.sig.args) == (types.float32[:],) and g.sig.return_type == types.int32


@pytest.mark.parametrize("sig", [(types.float32[:],), "(float32[:],)"])
def test_return_type_is_required(sig):
    with pytest.raises(TypeError, match="Return type must be provided for device declarations"):
        cuda.declare_device("f", sig)


def test_bad_declarations():
    with pytest.raises(NameError, match="int33"):
        cuda.declare_device("f", "int33(int32)")
    with pytest.raises(TypeError, match="invalid signature: 'int32'"):
        cuda.declare_device("f", "int32")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fastcall"):
        cuda.declare_device("f", "int32(int32)", abi="fastcall")
    with pytest.raises(TypeError, match="name must be"):
        cuda.declare_device("", "int32(int32)")
    with pytest.raises(TypeError, match="declared device function"):
        cuda.declare_device("f", "int32(int32)")(1)


def _ptx(fn, sig, **kw):
    ptx, _ = cuda.compile_ptx(fn, sig, cc=(8, 0), **kw)
    return ptx


def _extern(ptx, name):
    m = re.search(r"\.extern \.func\s*(\(.*?\))?\s*" + re.escape(name) + r"\s*\((.*?)\)\s*;", ptx, re.S)
    assert m, f"no .extern .func {name} in\n{ptx}"
    return m.group(1) or "", re.findall(r"\.param (\.\w+)", m.group(2))


def test_numba_abi_prototypes():
    ret, params = _extern(_ptx(src.call_void, "void(int32[::1])"), "ext_void")
    assert ".b32 func_retval0" in ret and params == [".b64", ".b32"]  # return slot, then the argument
    ret, params = _extern(_ptx(src.call_fn, "void(float32[::1], UniTuple(int32, 2))"), "ext_fn")
    # return slot; 7 array fields; the pointer; the bool; 2 tuple elements; complex64's 2 parts
    assert params == [".b64"] + [".b64"] * 7 + [".b64", ".b32", ".b32", ".b32", ".b32", ".b32"]


def test_c_abi_prototypes():
    ret, params = _extern(_ptx(src.call_c, "void(float32[::1])"), "ext_c")
    assert ".b32 func_retval0" in ret and params == [".b32", ".b64"]
    ret, params = _extern(_ptx(src.call_pointer_slice, "void(int32[::1])"), "c_void")
    assert ret == "" and params == [".b64"]


def test_arguments_convert_to_the_declared_types():
    ptx = _ptx(src.converts_arguments, "void(int32[::1], int64)")
    _, params = _extern(ptx, "narrow")
    assert params == [".b64", ".b32"]


def test_numba_abi_function_calling_a_c_abi_declaration_returns_ok_status():
    # numba-cuda's TestDeclareDeviceCABI status propagation: the numba-ABI caller returns status 0.
    ptx, resty = cuda.compile(src.calls_c_abi, "(CPointer(float32),)", abi="numba", cc=(8, 0))
    assert resty == types.float32
    body = ptx[ptx.index(".visible .func") :]
    assert re.search(r"call\.uni \(retval0\),\s*ext_c,", body)
    assert re.search(r"mov\.b32\s+(%r\d+), 0;\s*st\.param\.b32\s+\[func_retval0(\+0)?\], \1;", body) or re.search(
        r"st\.param\.b32\s+\[func_retval0\], 0;", body
    )  # status 0


def test_calls_from_device_functions_collect_the_declaration():
    k = cuda.jit(src.call_c)
    kernel = k.compile("void(float32[::1])", cc=(8, 0))
    assert kernel.typed.externs == [("ext_c", src.ext_c._describe())]


def test_pointer_items_load_and_store():
    ptx = _ptx(src.pointer_items, "void(float32[::1])")
    assert re.search(r"ld(\.global)?\.b32", ptx) and re.search(r"st(\.global)?\.b32", ptx)


def test_from_buffer_errors():
    with pytest.raises(errors.TypingError, match=r"from_buffer\(\) expected a buffer object, got int64"):
        cuda.compile(src.from_buffer_of_a_scalar, "(int64,)", cc=(8, 0))
    with pytest.raises(errors.TypingError, match=r"from_buffer\(\) unsupported on non-contiguous buffers"):
        cuda.compile_ptx(src.from_buffer_of_strided, "void(float32[:])", cc=(8, 0))
    with pytest.raises(errors.TypingError, match=r"only supports multidimensional arrays with C layout"):
        cuda.compile_ptx(src.from_buffer_of_strided, "void(float32[::1, :])", cc=(8, 0))


def test_call_errors_are_located():
    with pytest.raises(errors.TypingError, match=r"narrow\(\) takes 1 argument") as e:
        cuda.compile_ptx(src.wrong_arity, "void(int32[::1])", cc=(8, 0))
    assert "declare_device_src.py" in str(e.value) and "narrow(1, 2)" in str(e.value)
    with pytest.raises(errors.TypingError, match="does not convert to the declared int32"):
        cuda.compile_ptx(src.wrong_type, "void(int32[::1])", cc=(8, 0))


def test_signature_of_declaration_reaches_parse_signature():
    assert parse_signature("float32(CPointer(float32), voidptr)").args[1] == types.voidptr
