"""CUDA vector types without a GPU: numba-cuda's 40 cuda.<base>x<N> types and their CUDA C aliases compile in
every construction form numba-cuda accepts to PTX that ptxas assembles for sm_75 and sm_90 (conftest); Dim3
values of cuda.threadIdx and friends; vectors across declare_device calls laid out exactly as nvcc passes
CUDA's vector types (checked against NVRTC's PTX of the same prototypes); the host-side stubs; and each misuse is
a TypingError that names the problem at its line."""

import re

import pytest

import vector_types_src as V
from cujit import _core, cuda, errors, linking, types
from cujit.vector_types import vector_types
from source_lines import assert_located

CCS = [(7, 5), (9, 0)]


def ptx_of(fn, sig, cc=(9, 0)):
    return cuda.compile_ptx(fn, sig, cc=cc)[0]


# ---- the names --------------------------------------------------------------------------------------------------

# numba-cuda's aliases on a 64-bit Linux host (numpy's C types there: long is 64 bits).
C_NAMES = {
    "char": "int8",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "longlong": "int64",
    "uchar": "uint8",
    "ushort": "uint16",
    "uint": "uint32",
    "ulong": "uint64",
    "ulonglong": "uint64",
    "float": "float32",
    "double": "float64",
}


def test_every_vector_type_and_alias_resolves_from_cuda():
    assert sorted(vector_types) == sorted(V.NAMES) and len(V.NAMES) == 40
    for name in V.NAMES:
        stub = getattr(cuda, name)
        assert stub.__name__ == name and stub.num_elements == int(name[-1])
        assert stub.base_type is getattr(types, name[:-2])
        assert repr(stub) == f"<cujit vector type {name}>"
        expected = [f"{c}{name[-1]}" for c, base in C_NAMES.items() if base == name[:-2]]
        assert stub.aliases == expected
        for alias in stub.aliases:
            assert getattr(cuda, alias) is stub
    assert cuda.int64x3.aliases == ["long3", "longlong3"] and cuda.float4 is cuda.float32x4
    assert not hasattr(cuda, "float16x2") and not hasattr(cuda, "float5")


def test_stubs_cannot_be_called_on_the_host():
    with pytest.raises(RuntimeError, match="cuda.float32x4 can only be used inside a CUDA kernel"):
        cuda.float4(1.0, 2.0, 3.0, 4.0)


def test_signature_strings_name_vector_types_and_dim3():
    assert str(_core.parse_type("float4")) == "float32x4"
    assert str(_core.parse_type("ulonglong2")) == "uint64x2"
    assert types.dim3 is types.Dim3 and str(types.dim3) == "Dim3"
    assert cuda.types.dim3 is _core.parse_type("dim3")
    sig = _core.parse_signature("float32(float32x4, uchar2)")
    assert [str(a) for a in sig.args] == ["float32x4", "uint8x2"]


# ---- construction and components ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cc", CCS, ids=["sm_75", "sm_90"])
@pytest.mark.parametrize("name", V.NAMES)
def test_each_type_is_built_and_read(name, cc):
    ptx = ptx_of(V.make_readout(name), f"void({name[:-2]}[::1], float64[::1])", cc)
    assert ".entry" in ptx


@pytest.mark.parametrize("cc", CCS, ids=["sm_75", "sm_90"])
@pytest.mark.parametrize("base", V.BASES)
def test_every_construction_form(base, cc):
    assert sum(len(c) for c in V.MIXED_COMPONENTS) == 66
    ptx_of(V.make_mixed(base), f"void({base}[::1], float64[::1])", cc)


def test_components_are_the_stored_values():
    # float32x4(a0, a1, a2, a3) then .w .z .y .x: no memory round trip, the loaded registers are stored back.
    ptx = ptx_of(V.make_readout("float32x4"), "void(float32[::1], float64[::1])")
    assert len(re.findall(r"cvt\.rn\.f32\.f64", ptx)) == 4
    assert not re.search(r"\b(ld|st)\.local", ptx)


@pytest.mark.parametrize("cc", CCS, ids=["sm_75", "sm_90"])
def test_aliases_device_functions_optionals_and_tuples(cc):
    ptx_of(V.aliases, "void(float64[::1], float64[::1])", cc)
    ptx_of(V.cross_products, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])", cc)
    ptx_of(V.optional_vectors, "void(float64[:, ::1], float64[::1])", cc)


def test_device_function_returns_and_takes_vectors_by_value():
    ptx = cuda.compile_ptx(V.cross.py_func, "float32x3(float32x3, float32x3)", device=True, abi="c", cc=(7, 5))[0]
    assert re.search(
        r"\(\.param \.align 4 \.b8 func_retval0\[12\]\) cross\(\s*"
        r"\.param \.align 4 \.b8 cross_param_0\[12\],\s*\.param \.align 4 \.b8 cross_param_1\[12\]",
        ptx,
    )


# ---- Dim3 -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cc", CCS, ids=["sm_75", "sm_90"])
def test_thread_indices_are_dim3_values(cc):
    ptx = ptx_of(V.dim3_values, "void(int64[:, ::1])", cc)
    for register in ("%tid.x", "%tid.y", "%tid.z", "%ctaid.z", "%ntid.y", "%nctaid.y"):
        assert register in ptx


# ---- the ABI of vectors across declare_device: nvcc's --------------------------------------------------------------


def _prototype(ptx, name):
    """(return parameter, [parameters]) of `name` in PTX, parameter names dropped, spaces normalised."""
    m = re.search(r"\.func\s*(\([^)]*\))?\s*" + name + r"\s*\(([^)]*)\)", ptx)
    assert m, f"no prototype of {name}"
    ret = re.sub(r"\s+", " ", (m.group(1) or "").replace("func_retval0", "R")).strip()
    params = [re.sub(r"\s+", " ", re.sub(name + r"_param_\d+", "P", p)).strip() for p in m.group(2).split(",")]
    return ret, [p for p in params if p]


CUDA_NAMES = {
    "int8": "char",
    "int16": "short",
    "int32": "int",
    "int64": "longlong",
    "uint8": "uchar",
    "uint16": "ushort",
    "uint32": "uint",
    "uint64": "ulonglong",
    "float32": "float",
    "float64": "double",
}


def test_vectors_cross_declare_device_as_nvcc_passes_them():
    """For each vector type T, a C-ABI `T c_T(T)` and a numba-ABI `int n_T(T*, T)` declared to cujit have
    exactly the PTX prototypes NVRTC gives the CUDA C++ definitions (float4 as .param .align 16 .b8 [16])."""
    cuda_src = []  # (CUDA 13 warns that double4, long4... are deprecated: their 16-byte alignment is kept)
    for name in V.NAMES:
        ctype = CUDA_NAMES[name[:-2]] + name[-1]
        cuda_src.append(f'extern "C" __device__ {ctype} c_{name}({ctype} v) {{ return v; }}')
        cuda_src.append(f'extern "C" __device__ int n_{name}({ctype}* r, {ctype} v) {{ *r = v; return 0; }}')
    cuda_src.append('extern "C" __device__ int dim(int* r, dim3 d) { *r = d.x; return 0; }')
    nvrtc_ptx, _, _ = _core.nvrtc.compile(
        "\n".join(cuda_src), "vectors.cu", linking.arch_for((7, 5)), include_dirs=linking.nvrtc_include_dirs()
    )
    dim = cuda.declare_device("dim", "int32(dim3)")

    def dim_kernel(out):
        out[0] = dim(cuda.threadIdx)

    ours = ptx_of(dim_kernel, "void(int32[::1])", (7, 5))
    assert _prototype(ours, "dim") == _prototype(nvrtc_ptx, "dim")
    for name in V.NAMES:
        c_fn = cuda.declare_device(f"c_{name}", f"{name}({name})", abi="c")
        n_fn = cuda.declare_device(f"n_{name}", f"{name}({name})")
        ours = ptx_of(V.make_through(name, c_fn, n_fn), f"void({name[:-2]}[::1], float64[::1])", (7, 5))
        for fn in (f"c_{name}", f"n_{name}"):
            assert _prototype(ours, fn) == _prototype(nvrtc_ptx, fn), fn


DECLARED_SIG = "void(float32[:, ::1], float64[:, ::1], uint8[:, ::1], int16[:, ::1])"


@pytest.mark.parametrize("lto", [False, True], ids=["ptx", "lto"])
def test_declared_cuda_functions_link_with_vector_arguments(lto):
    if lto and not linking.lto_available():
        pytest.skip("LTO needs libNVVM")
    kernel = cuda.jit(V.declared_vectors, lto=lto).compile(DECLARED_SIG, cc=(7, 5))
    assert _core.link.cubin_has_symbol(kernel.link((7, 5)), kernel.entry)


# ---- misuse ---------------------------------------------------------------------------------------------------

MISUSE = [
    (
        V.too_few,
        "cuda.float32x4(1.0, 2.0, 3.0)",
        "No implementation of cuda.float32x4(float64, float64, float64): float32x4 has 4 components; the arguments "
        "give 3",
    ),
    (
        V.other_base,
        "cuda.float32x2(cuda.int32x2(1, 2))",
        "int32x2 is not a vector of float32 (a float32x2 is built from scalars and float32 vectors)",
    ),
    (V.assign_component, "v.x", "cannot assign to 'x' of a float32x2: the components of a vector type are read-only"),
    (V.missing_component, "v.z", "Unknown attribute 'z' of type float32x2"),
    (V.vector_arithmetic, "v + v", "No implementation of operator '+' for operands (float32x2, float32x2)"),
    (V.store_vector, "out[0] = v", "cannot store a value of type float32x2 into an array of float32"),
    (V.complex_component, "cuda.float32x2(1j, 2.0)", "a complex128 does not convert to float32"),
    (V.assign_thread_index, "t.x", "cannot assign to 'x' of a Dim3"),
    (V.index_vector, "v[0]", "cannot index a value of type float32x2"),
]


@pytest.mark.parametrize("fn, construct, message", MISUSE, ids=[m[0].__name__ for m in MISUSE])
def test_misuse_is_a_located_typing_error(fn, construct, message):
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(fn, "void(float32[::1])", cc=(7, 5))
    text = str(info.value)
    assert message in text
    assert_located(text, fn, construct, "vector_types_src.py")
