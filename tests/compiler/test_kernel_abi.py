"""numba's kernel ABI, compile-only: `.visible .entry` kernels whose parameters are
the flattened arguments, arrays as 5 + 2*ndim u64 fields, the scalar parameter types, complex and tuple
flattening, void-only kernels, and launch bounds. Each kernel is compiled for sm_80 and sm_90; conftest assembles
every PTX with ptxas. The expected layouts were checked against numba-cuda 0.30.4."""

import re

import pytest

from cujit import cuda, errors
from cujit import (
    Array,
    CPointer,
    Tuple,
    UniTuple,
    boolean,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
    voidptr,
)

CCS = [(8, 0), (9, 0)]


@pytest.fixture(params=CCS, ids=[f"sm_{a}{b}" for a, b in CCS])
def cc(request):
    return request.param


def type_id(t):
    """A test id for a type without spaces: ``array(float32, 1d, C)`` -> ``array(float32,1d,C)``."""
    return str(t).replace(" x ", "x").replace(" ", "")


def kernel(pyfunc, sig, cc, **kwargs):
    ptx, resty = cuda.compile_ptx(pyfunc, sig, cc=cc, **kwargs)
    assert resty == void
    return ptx


def entry(ptx, prototypes):
    proto = prototypes.visible(ptx)
    assert proto.kind == "entry", proto
    return proto


def takes_one(a):
    pass


def takes_seven(a, b, c, d, e, f, g):
    pass


def takes_none():
    pass


def add_arrays(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] + y[i]


# -- the shape of a kernel --------------------------------------------------------------------------------------


def test_kernel_is_a_visible_entry(cc, prototypes):
    ptx = kernel(add_arrays, (float32[:],) * 3, cc)
    proto = entry(ptx, prototypes)
    assert re.search(r"^\.visible\s+\.entry\s+" + re.escape(proto.name) + r"\(", ptx, re.M)
    assert ".visible .func" not in ptx
    assert "func_retval" not in ptx
    assert proto.retval is None
    assert proto.params == ["u64"] * 21


def test_entry_name_is_the_mangled_name(cc, prototypes):
    ptx = kernel(add_arrays, (float32[:], float32[:], float32[::1]), cc)
    name = entry(ptx, prototypes).name
    assert name.startswith("_ZN") and "10add_arrays" in name
    assert name.endswith(
        "5ArrayIfLi1E1A7mutable7alignedE5ArrayIfLi1E1A7mutable7alignedE5ArrayIfLi1E1C7mutable7alignedE"
    )
    # parameters are named <entry>_param_<i>, in order
    names = re.findall(
        r"\.param\s+\.\w+\s+(?:\.ptr\s+(?:\.\w+\s+)*?\.align\s+\d+\s+)?([\w$]+)",
        ptx[ptx.index(".entry") : ptx.index(")", ptx.index(".entry"))],
    )
    assert names == [f"{name}_param_{i}" for i in range(21)]


def test_kernel_module_has_the_numba_env_global(cc, prototypes):
    ptx = kernel(add_arrays, (float32[:],) * 3, cc)
    name = entry(ptx, prototypes).name
    env = "_ZN08NumbaEnv" + name[len("_ZN") :]
    assert re.search(r"^\.common\s+\.global\s+\.align\s+8\s+\.u64\s+" + re.escape(env) + ";", ptx, re.M), (
        "no .common .global NumbaEnv for the kernel"
    )


def test_explicit_void_signature(cc, prototypes):
    ptx = kernel(add_arrays, void(float32[::1], float32[::1], float32[::1]), cc)
    assert entry(ptx, prototypes).params == ["u64"] * 21
    ptx = kernel(add_arrays, "void(float32[::1], float32[::1], float32[::1])", cc)
    assert entry(ptx, prototypes).params == ["u64"] * 21


def early_return(a):
    if a.size == 0:
        return
    a[0] = 1


def return_none(a):
    a[0] = 1
    return None


@pytest.mark.parametrize("pyfunc", [early_return, return_none], ids=lambda f: f.__name__)
def test_bare_returns_are_allowed(pyfunc, cc):
    kernel(pyfunc, (int32[::1],), cc)


# -- arrays: 5 + 2*ndim u64 fields ----------------------------------------------------------------------------

ARRAY_LAYOUTS = [(0, "C")] + [(n, layout) for n in (1, 2, 3, 4) for layout in ("C", "F", "A")]


@pytest.mark.parametrize("ndim, layout", ARRAY_LAYOUTS, ids=[f"{n}d-{lay}" for n, lay in ARRAY_LAYOUTS])
@pytest.mark.parametrize("dtype", [float32, int8, complex128, boolean], ids=type_id)
def test_array_parameter_count(dtype, ndim, layout, cc, prototypes):
    ptx = kernel(takes_one, (Array(dtype, ndim, layout),), cc)
    assert entry(ptx, prototypes).params == ["u64"] * (5 + 2 * ndim)


@pytest.mark.parametrize(
    "arytype, count",
    [
        (float32[:], 7),
        (float32[::1], 7),
        (float32[:, ::1], 9),
        (float32[::1, :], 9),
        (int64[:, :, :], 11),
        (Array(float32, 1, "C", readonly=True), 7),
        (Array(float64, 2, "A", readonly=True), 9),
        (Array(float32, 1, "C", aligned=False), 7),
    ],
    ids=type_id,
)
def test_array_representation_examples(arytype, count, cc, prototypes):
    """Layout, mutability and alignment do not change the representation."""
    ptx = kernel(takes_one, (arytype,), cc)
    assert entry(ptx, prototypes).params == ["u64"] * count


def read_fields(r, a):
    r[0] = a.size
    r[1] = a.shape[0]
    r[2] = a.shape[1]
    r[3] = a.strides[0]
    r[4] = a.strides[1]
    r[5] = a[0, 0]


def test_array_fields_are_in_numba_order(cc, prototypes):
    """meminfo, parent, nitems, itemsize, data, shape..., strides...: for a (params 7-15), shape is 12-13,
    strides 14-15 and data 11."""
    ptx = kernel(read_fields, (int64[::1], int64[:, :]), cc)
    name = entry(ptx, prototypes).name
    loaded = set(int(i) for i in re.findall(rf"\[{re.escape(name)}_param_(\d+)\]", ptx))
    assert {11, 12, 13, 14, 15} <= loaded, sorted(loaded)
    assert not {7, 8} & loaded, "meminfo and parent are never read"


# -- scalars, complex, tuples, pointers ---------------------------------------------------------------------------

SCALAR_PARAMS = [
    (boolean, ["u8"]),
    (int8, ["u8"]),
    (uint8, ["u8"]),
    (int16, ["u16"]),
    (uint16, ["u16"]),
    (int32, ["u32"]),
    (uint32, ["u32"]),
    (int64, ["u64"]),
    (uint64, ["u64"]),
    (float16, ["u16"]),
    (float32, ["f32"]),
    (float64, ["f64"]),
    (complex64, ["f32", "f32"]),
    (complex128, ["f64", "f64"]),
    (UniTuple(int32, 2), ["u32", "u32"]),
    (UniTuple(float64, 3), ["f64"] * 3),
    (Tuple((int32, float64)), ["u32", "f64"]),
    (Tuple((complex64, int8)), ["f32", "f32", "u8"]),
    (UniTuple(float32[::1], 2), ["u64"] * 14),
    (CPointer(float32), ["u64"]),
    (voidptr, ["u64"]),
]


@pytest.mark.parametrize("argtype, params", SCALAR_PARAMS, ids=[type_id(t) for t, _ in SCALAR_PARAMS])
def test_parameter_types(argtype, params, cc, prototypes):
    ptx = kernel(takes_one, (argtype,), cc)
    assert entry(ptx, prototypes).params == params


def test_parameters_are_concatenated_in_argument_order(cc, prototypes):
    sig = (float32[:], int32, complex64, float64[:, ::1], boolean, UniTuple(int16, 2), float16)
    ptx = kernel(takes_seven, sig, cc)
    assert entry(ptx, prototypes).params == (
        ["u64"] * 7 + ["u32"] + ["f32", "f32"] + ["u64"] * 9 + ["u8"] + ["u16", "u16"] + ["u16"]
    )


def test_no_parameters(cc, prototypes):
    ptx = kernel(takes_none, (), cc)
    assert entry(ptx, prototypes).params == []


def uses_complex(r, z):
    r[0] = z.real
    r[1] = z.imag


@pytest.mark.parametrize(
    "ctype, ftype, width", [(complex64, float32, "b32"), (complex128, float64, "b64")], ids=type_id
)
def test_complex_parts_are_read_from_two_params(ctype, ftype, width, cc, prototypes):
    ptx = kernel(uses_complex, (ftype[::1], ctype), cc)
    name = entry(ptx, prototypes).name
    assert re.search(rf"ld\.param\.{width}\s+%\w+, \[{name}_param_7\]", ptx)
    assert re.search(rf"ld\.param\.{width}\s+%\w+, \[{name}_param_8\]", ptx)


# -- kernels return nothing -----------------------------------------------------------------------------------


def returns_value(a):
    return a


def returns_sum(a, b):
    return a + b


@pytest.mark.parametrize(
    "pyfunc, sig",
    [
        (returns_value, (int32,)),
        (returns_value, "int32(int32)"),
        (returns_sum, (float32, float32)),
        (returns_sum, int64(int64, int64)),
    ],
    ids=["inferred", "declared-string", "inferred-sum", "declared-signature"],
)
def test_non_void_kernel_is_a_type_error(pyfunc, sig, cc):
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.compile_ptx(pyfunc, sig, cc=cc)


def test_non_void_kernel_from_jit(cc):
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.jit("int32(int32)")(returns_value)


def test_void_signature_with_a_returned_value_is_a_typing_error(cc):
    with pytest.raises(errors.TypingError):
        cuda.compile_ptx(returns_value, "void(int32)", cc=cc)


def test_kernel_llvm_ir_returns_void_and_is_marked_as_a_kernel():
    k = cuda.jit("void(float32[::1], float32[::1], float32[::1])")(add_arrays)
    ir = k.inspect_llvm((float32[::1],) * 3)
    define_line = re.search(r"^define\b[^\n]*", ir, re.M)
    assert define_line, ir[:2000]
    # (array sizes carry a value range, `range(i64 0, 2**62)`: their parentheses are not the parameter list's)
    line = re.sub(r"range\([^)]*\)\s*", "", define_line.group(0))
    define = re.search(r"@(\S+)\(([^)]*)\)", line)
    params = define.group(2)
    assert "range(i64 0, 4611686018427387904)" in define_line.group(0)
    assert re.search(r"\bvoid\s+@", line), line
    assert ".ret" not in params, "the return-slot parameter was not removed"
    assert len([p for p in params.split(",") if p.strip()]) == 21
    name = define.group(1)
    # nvvm.annotations kernel metadata (NVVM) or the ptx_kernel calling convention (LLVM >= 20)
    annotated = re.search(r"!\{[^}]*@" + re.escape(name) + r', !"kernel", i32 1\}', ir)
    assert annotated or re.search(r"^define\s+ptx_kernel\b", line), line


# -- launch bounds --------------------------------------------------------------------------------------------


def bounded(a):
    a[cuda.grid(1)] = 1


@pytest.mark.parametrize(
    "bounds, lines, absent",
    [
        (128, [r"\.maxntid\s+128(, 1, 1)?"], ["minnctapersm", "maxclusterrank"]),
        ((128,), [r"\.maxntid\s+128(, 1, 1)?"], ["minnctapersm", "maxclusterrank"]),
        ((256, 2), [r"\.maxntid\s+256(, 1, 1)?", r"\.minnctapersm\s+2\b"], ["maxclusterrank"]),
    ],
    ids=["int", "1-tuple", "2-tuple"],
)
def test_launch_bounds(bounds, lines, absent, cc):
    ptx = kernel(bounded, (int32[::1],), cc, launch_bounds=bounds)
    for line in lines:
        assert re.search(line, ptx), f"{line} not in the PTX"
    for name in absent:
        assert name not in ptx


def test_launch_bounds_cluster_rank(cc):
    ptx = kernel(bounded, (int32[::1],), cc, launch_bounds=(128, 2, 4))
    assert re.search(r"\.maxntid\s+128(, 1, 1)?", ptx) and re.search(r"\.minnctapersm\s+2\b", ptx)
    if cc >= (9, 0):
        assert re.search(r"\.maxclusterrank\s+4\b", ptx)
    else:  # clusters need sm_90: numba-cuda drops the third bound below it
        assert "maxclusterrank" not in ptx


def test_no_launch_bounds_no_directives(cc):
    ptx = kernel(bounded, (int32[::1],), cc)
    for name in ("maxntid", "minnctapersm", "maxclusterrank", "reqntid"):
        assert name not in ptx


def test_four_launch_bounds_are_rejected(cc):
    with pytest.raises(ValueError, match=r"Got 4 launch bounds"):
        cuda.compile_ptx(bounded, (int32[::1],), cc=cc, launch_bounds=(128, 2, 4, 1))
