"""Mangled names of compiled functions (numba's Itanium-style scheme) and the mangling helpers.

Name shape: ``_ZN<module components><qualname components>B<len>v<uid>B<len><flags tag>E<argument codes>``.
The flags-tag summaries below were produced by numba-cuda 0.30.4's ``compile_ptx`` at the given options and
decoded; the helpers' vectors are names and flags tags numba-cuda 0.30.4 produces.
"""

import re

import pytest

from cujit import cuda, compiler
from cujit import (
    void,
    boolean,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    float32,
    float64,
    intp,
    complex64,
    complex128,
    voidptr,
    CPointer,
    UniTuple,
    Tuple,
    Array,
)
from cujit import _core
from cujit._core import mangle as M


def scalar_fn(a, b):
    return a + b


def no_args():
    return 1.5


def many_args(a, b, c, d, e, f):
    return a


def kernel_fn(a, b):
    c = a + b  # noqa: F841


LAMBDA = lambda a: a + 1  # noqa: E731


def make_adder(k):
    def inner(x):
        return x + k

    return inner


class Holder:
    @staticmethod
    def method(x):
        return x


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def split_mangled(name):
    """``_ZN<ident>+<B tag>*E<args>`` -> (identifier texts, tag texts, argument codes)."""
    assert name.startswith("_ZN"), name
    pos, idents, tags = 3, [], []
    while name[pos].isdigit():
        m = re.match(r"\d+", name[pos:])
        n = int(m.group(0))
        pos += m.end()
        idents.append(name[pos : pos + n])
        pos += n
    while name[pos] == "B":
        m = re.match(r"\d+", name[pos + 1 :])
        n = int(m.group(0))
        pos += 1 + m.end()
        tags.append(name[pos : pos + n])
        pos += n
    assert name[pos] == "E", f"expected E at {pos} in {name}"
    return idents, tags, name[pos + 1 :]


def expected_idents(pyfunc):
    return [M.escape_string(part) for part in (pyfunc.__module__ + "." + pyfunc.__qualname__).split(".")]


def visible_name(ptx):
    m = re.search(r"^\.visible\s+\.(?:func|entry)\s+(?:\([^)]*\)\s*)?(\S+?)\s*\(", ptx, re.M)
    return m.group(1)


def env_name(ptx):
    m = re.search(r"^\.common\s+\.global\s+\.align\s+8\s+\.u64\s+(_ZN08NumbaEnv\w+);", ptx, re.M)
    return m.group(1) if m else None


def options_for(device, **kwargs):
    """The CompileOptions that compile_ptx builds for these keyword arguments."""
    args = dict(
        device=device, abi="numba", abi_info=None, cc=None, fastmath=False, opt=None, debug=None, lineinfo=False
    )
    args.update(kwargs)
    return compiler.make_options(**args)


# ----------------------------------------------------------------------------------------------
# structure of real names
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pyfunc, argtypes, codes",
    [
        (scalar_fn, (int32, int32), "ii"),
        (scalar_fn, (float64, uint8), "dh"),
        (many_args, (boolean, int8, uint16, int16, uint32, uint64), "batsjy"),
        (many_args, (int64, float32, float64, int32, uint8, boolean), "xfdihb"),
        (no_args, (), ""),
        (LAMBDA, (int64,), "x"),
        (Holder.method, (float32,), "f"),
    ],
)
def test_device_function_name_structure(pyfunc, argtypes, codes):
    ptx, _ = cuda.compile_ptx(pyfunc, argtypes, device=True)
    name = visible_name(ptx)
    idents, tags, args = split_mangled(name)
    assert idents == expected_idents(pyfunc)
    assert len(tags) == 2
    assert re.fullmatch(r"v\d+", tags[0]), tags
    assert tags[1].startswith("cw51c")
    assert args == codes
    # the whole name is the mangler's output for the same inputs
    assert name == M.mangle(
        pyfunc.__module__ + "." + pyfunc.__qualname__, list(argtypes), [_raw_flags_tag(tags[1])], int(tags[0][1:])
    )


def _raw_flags_tag(escaped):
    """The unescaped (base64) text of an escaped flags tag."""
    return re.sub(r"_([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), escaped)


def test_kernel_name_structure():
    ptx, _ = cuda.compile_ptx(kernel_fn, (int32, float32))
    idents, tags, args = split_mangled(visible_name(ptx))
    assert idents == expected_idents(kernel_fn)
    assert re.fullmatch(r"v\d+", tags[0])
    assert args == "if"


def test_qualname_components_are_escaped():
    ptx, _ = cuda.compile_ptx(make_adder(1), (int32,), device=True)
    idents, _, _ = split_mangled(visible_name(ptx))
    assert idents[-3:] == ["make_adder", "_3clocals_3e", "inner"]
    assert "10make_adder12_3clocals_3e5innerB" in visible_name(ptx)
    ptx, _ = cuda.compile_ptx(LAMBDA, (int32,), device=True)
    assert "12_3clambda_3eB" in visible_name(ptx)


def test_name_contains_python_name():
    """The mangled name contains the Python function's name, and the PTX uses it."""
    ptx, _ = cuda.compile_ptx(scalar_fn, (int32, int32), device=True)
    name = visible_name(ptx)
    assert "scalar_fn" in name
    assert ptx.count(name) >= 2  # definition and .param names / globl comment


def test_env_name_is_function_name_in_numbaenv_namespace():
    """The environment global is _ZN08NumbaEnv + the rest of the function's name (same tags and args)."""
    for call in (
        lambda: cuda.compile_ptx(scalar_fn, (int32, float64), device=True),
        lambda: cuda.compile_ptx(kernel_fn, (int32, float64)),
    ):
        ptx, _ = call()
        name = visible_name(ptx)
        assert env_name(ptx) == "_ZN08NumbaEnv" + name[len("_ZN") :]


def test_uid_disambiguates_closures():
    """Two closures of one factory differ only by their uid tag."""
    ptx_a, _ = cuda.compile_ptx(make_adder(1), (int32,), device=True)
    ptx_b, _ = cuda.compile_ptx(make_adder(2), (int32,), device=True)
    name_a, name_b = visible_name(ptx_a), visible_name(ptx_b)
    assert name_a != name_b
    idents_a, tags_a, args_a = split_mangled(name_a)
    idents_b, tags_b, args_b = split_mangled(name_b)
    assert (idents_a, tags_a[1:], args_a) == (idents_b, tags_b[1:], args_b)
    assert tags_a[0] != tags_b[0]
    assert env_name(ptx_a) != env_name(ptx_b)


def test_uid_is_new_for_each_compilation():
    names = {visible_name(cuda.compile_ptx(scalar_fn, (int32, int32), device=True)[0]) for _ in range(3)}
    assert len(names) == 3


# ----------------------------------------------------------------------------------------------
# the flags tag of real names
# ----------------------------------------------------------------------------------------------

_BASE = "no_cfunc_wrapper=True, no_compile=True, no_cpython_wrapper=True"
NUMBA_SUMMARIES = {  # compile_ptx keyword arguments -> numba-cuda 0.30.4's flags summary (kernels and device fns)
    "default": (
        {},
        f"CUDAFlags(compute_capability=(7, 5), error_model=numpy, {_BASE}, "
        "nvvm_options={'fastmath': False, 'opt': 3})",
    ),
    "fastmath": (
        dict(fastmath=True),
        f"CUDAFlags(compute_capability=(7, 5), error_model=numpy, fastmath=FastMathOptions({{'fast'}}), "
        f"{_BASE}, nvvm_options={{'fastmath': True, 'opt': 3}})",
    ),
    "lineinfo": (
        dict(lineinfo=True),
        f"CUDAFlags(compute_capability=(7, 5), dbg_directives_only=True, debuginfo=True, error_model=numpy, "
        f"{_BASE}, nvvm_options={{'fastmath': False, 'opt': 3}})",
    ),
    "debug": (
        dict(debug=True, opt=False),
        f"CUDAFlags(compute_capability=(7, 5), dbg_extend_lifetimes=True, debuginfo=True, {_BASE}, "
        "nvvm_options={'fastmath': False, 'opt': 0, 'g': None})",
    ),
    "opt0": (
        dict(opt=False),
        f"CUDAFlags(compute_capability=(7, 5), error_model=numpy, {_BASE}, "
        "nvvm_options={'fastmath': False, 'opt': 0})",
    ),
    "cc77": (
        dict(cc=(7, 7)),
        f"CUDAFlags(compute_capability=(7, 7), error_model=numpy, {_BASE}, "
        "nvvm_options={'fastmath': False, 'opt': 3})",
    ),
    "cc90": (
        dict(cc=(9, 0)),
        f"CUDAFlags(compute_capability=(9, 0), error_model=numpy, {_BASE}, "
        "nvvm_options={'fastmath': False, 'opt': 3})",
    ),
    "cc90a": (
        dict(cc=(9, 0, "a")),
        f"CUDAFlags(compute_capability=(9, 0, 'a'), error_model=numpy, {_BASE}, "
        "nvvm_options={'fastmath': False, 'opt': 3})",
    ),
}


def _compiled_flags_tag(device, kwargs):
    func = scalar_fn if device else kernel_fn
    ptx, _ = cuda.compile_ptx(func, (int32, int32), device=device, **kwargs)
    return split_mangled(visible_name(ptx))[1][1]


@pytest.mark.parametrize("case", list(NUMBA_SUMMARIES))
@pytest.mark.parametrize("device", [False, True], ids=["kernel", "device"])
def test_flags_tag_is_flags_summary(device, case):
    """The tag decodes to cujit's own summary of the options used."""
    kwargs, _ = NUMBA_SUMMARIES[case]
    tag = _compiled_flags_tag(device, kwargs)
    assert M.decode_flags(tag) == _core.flags_summary(options_for(device, **kwargs))


@pytest.mark.parametrize("case", list(NUMBA_SUMMARIES))
@pytest.mark.parametrize("device", [False, True], ids=["kernel", "device"])
def test_flags_tag_matches_numba(device, case):
    """The tag carries numba-cuda's summary for the same compile_ptx call, byte for byte.

    numba-cuda 0.30.4's compile_ptx builds nvvm_options as {'fastmath', 'opt'(, 'g')} for kernels *and*
    device functions (verified: compile_ptx(add, (int32, int32), device=True, cc=(7, 5)) is named
    ``..._3addB2v1B92cw51c...agIAEii``, the first tag of FLAGS_TAGS below); it records the cc with its suffix.
    """
    kwargs, summary = NUMBA_SUMMARIES[case]
    tag = _compiled_flags_tag(device, kwargs)
    assert M.decode_flags(tag) == summary
    assert tag == M.escape_string(M.encode_flags(summary))


def test_kernel_default_tag_is_numbas_b92_vector():
    tag = _compiled_flags_tag(False, {})
    assert f"B{len(tag)}{tag}" == FLAGS_TAGS[0][1]


# ----------------------------------------------------------------------------------------------
# the mangling helpers on numba's vectors
# ----------------------------------------------------------------------------------------------

FLAGS_TAGS = [  # numba-cuda's flags summary -> tag as it appears in a symbol
    (
        "CUDAFlags(compute_capability=(7, 5), error_model=numpy, no_cfunc_wrapper=True, no_compile=True, "
        "no_cpython_wrapper=True, nvvm_options={'fastmath': False, 'opt': 3})",
        "B92cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIA",
    ),
    (
        "CUDAFlags(compute_capability=(7, 5), error_model=numpy, no_cfunc_wrapper=True, no_compile=True, "
        "no_cpython_wrapper=True, nvvm_options={'opt': 3, 'fastmath': False})",
        "B100cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3d",
    ),
    (
        "CUDAFlags(compute_capability=(9, 0), error_model=numpy, lto=True, no_cfunc_wrapper=True, no_compile=True, "
        "no_cpython_wrapper=True, nvvm_options={'fastmath': False, 'opt': 3})",
        "B104cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3Cw6igA9duC0hkwnNGiHEkYkrqQBFBTDEwCyQe21eqwcFW3UoDGjzpQEsgzrtUEAA_3d_3d",
    ),
    (
        "CUDAFlags(compute_capability=(7, 5), dbg_extend_lifetimes=True, debuginfo=True, no_cfunc_wrapper=True, "
        "no_compile=True, no_cpython_wrapper=True, nvvm_options={'opt': 0, 'fastmath': False, 'g': None})",
        "B108cw51cXTLSUwv1sDUaKthrqNgqqmjgM2RtqBUBpSCpRooHz0BIAlD0hqSAGr6gUkg_2bce2Wh3IUrdSMNBRUIeFN5ALjTf1dCAb5Jl"
        "aTQA_3d",
    ),
    (
        "CUDAFlags(compute_capability=(7, 5), error_model=numpy, fastmath=FastMathOptions({'fast'}), "
        "no_cfunc_wrapper=True, no_compile=True, no_cpython_wrapper=True, nvvm_options={'opt': 3, 'fastmath': True})",
        "B114cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMQ6ntbdO9Xq4Ok1GuB2tATgy0oYUKEIekOSQA1LcEkkPxmW60OZKlbKRjrKKjDbAd"
        "yQSprNQE_3d",
    ),
    (
        "CUDAFlags(compute_capability=(7, 5), dbg_directives_only=True, debuginfo=True, error_model=numpy, "
        "no_cfunc_wrapper=True, no_compile=True, no_cpython_wrapper=True, nvvm_options={'opt': 3, 'fastmath': False})",
        "B112cw51cXTLSUwv1sDUaKthrqNgqqmjgMVuW1AiA8rAEg2UjxRKtuAIAMYDWpKAqkSkPiQB1BQFk0DyoW21OpClbqVgrKOgDosBIBfsl1p"
        "NAA_3d_3d",
    ),
    (
        "CUDAFlags(compute_capability=(7, 5), error_model=numpy, no_cfunc_wrapper=True, no_compile=True, "
        "no_cpython_wrapper=True)",
        "B72cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkELKEJAA_3d_3d",
    ),
    ("CUDAFlags()", "B24cw51cXTLSUwv1tAEAA_3d_3d"),
]


@pytest.mark.parametrize("summary, tag", FLAGS_TAGS, ids=[t[:5] for _, t in FLAGS_TAGS])
def test_flags_tag_vectors(summary, tag):
    """Encode each summary to exactly the listed tag; decode the tag back."""
    escaped = M.escape_string(M.encode_flags(summary))
    assert f"B{len(escaped)}{escaped}" == tag
    text = re.match(r"B\d+(.*)$", tag).group(1)
    assert M.decode_flags(text) == summary


def test_decode_flags_rejects_garbage():
    with pytest.raises(Exception):
        M.decode_flags("!!!")


@pytest.mark.parametrize(
    "text, escaped",
    [
        ("hello", "hello"),
        ("my_func_2", "my_func_2"),
        ("<lambda>", "_3clambda_3e"),
        ("a.b", "a_2eb"),
        ("", ""),
        ("é", "_c3_a9"),
        ("*[]()=+/- ,", "_2a_5b_5d_28_29_3d_2b_2f_2d_20_2c"),
    ],
)
def test_escape_string(text, escaped):
    """Characters outside [A-Za-z0-9_] are escaped as _xx, UTF-8 byte by byte."""
    assert M.escape_string(text) == escaped


def test_escape_string_non_ascii():
    assert re.fullmatch(r"\d*f(_[a-z0-9][a-z0-9])+z", M.escape_string("f∂ƒ©z"))


@pytest.mark.parametrize(
    "ident, mangled",
    [
        ("apple", "5apple"),
        ("ap_ple", "6ap_ple"),
        ("apple213", "8apple213"),
        ("9abc", "5_9abc"),
        ("<locals>", "12_3clocals_3e"),
    ],
)
def test_mangle_identifier(ident, mangled):
    """An identifier is its length then itself; one starting with a digit gets a leading underscore."""
    assert M.mangle_identifier(ident) == mangled


@pytest.mark.parametrize(
    "ty, code",
    [
        (void, "v"),
        (boolean, "b"),
        (uint8, "h"),
        (int8, "a"),
        (uint16, "t"),
        (int16, "s"),
        (uint32, "j"),
        (int32, "i"),
        (uint64, "y"),
        (int64, "x"),
        (intp, "x"),
        (float16, "Dh"),
        (float32, "f"),
        (float64, "d"),
        (complex64, "9complex64"),
        (complex128, "10complex128"),
        (CPointer(float32), "10float32_2a"),
        (voidptr, "7void_2a"),
        (float32[::1], "5ArrayIfLi1E1C7mutable7alignedE"),
        (float32[:], "5ArrayIfLi1E1A7mutable7alignedE"),
        (Array(float32, 2, "F", readonly=True, aligned=False), "5ArrayIfLi2E1F8readonly9unalignedE"),
        (int64[:, :, :], "5ArrayIxLi3E1A7mutable7alignedE"),
        (UniTuple(int8, 3), "8UniTupleIaLi3EE"),
        (UniTuple(int32, 2), "8UniTupleIiLi2EE"),
        (Tuple((int32, float64)), "5TupleIidE"),
    ],
)
def test_mangle_type(ty, code):
    """The code of each scalar type (Itanium builtins), arrays, tuples and pointers, as numba mangles them."""
    assert M.mangle_type(ty) == code


@pytest.mark.parametrize("value, mangled", [(123, "Li123E"), (-3, "Li-3E"), (0, "Li0E")])
def test_mangle_value(value, mangled):
    """Integer values as template arguments: Li<value>E."""
    assert M.mangle_value(value) == mangled


@pytest.mark.parametrize(
    "name, args, kwargs, mangled",
    [
        ("f", [], {}, "_Z1f"),
        ("<lambda>", [], {}, "_Z12_3clambda_3e"),
        ("x.<locals>.f", [intp], {}, "_ZN1x12_3clocals_3e1fEx"),
        ("what", [int32, float32], {}, "_Z4whatif"),
        ("a_little_brown_fox", [uint64, uint32, float64], {}, "_Z18a_little_brown_foxyjd"),
        (
            "a.b.c",
            [
                int32,
                float32[::1],
                UniTuple(int8, 3),
                Tuple((int32, float64)),
                CPointer(float32),
                voidptr,
                complex64,
                boolean,
                float16,
                uint64,
            ],
            dict(abi_tags=["xyz"], uid=7),
            "_ZN1a1b1cB2v7B3xyzEi5ArrayIfLi1E1C7mutable7alignedE8UniTupleIaLi3EE5TupleIidE10float32_2a7void_2a"
            "9complex64bDhy",
        ),
        (".NumbaEnv.mod.f", [int32], dict(uid=3), "_ZN08NumbaEnv3mod1fB2v3Ei"),
    ],
)
def test_mangle(name, args, kwargs, mangled):
    """Whole names: nested components, argument codes, abi tags and the uid tag, as numba builds them."""
    assert M.mangle(name, args, **kwargs) == mangled
