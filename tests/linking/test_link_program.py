"""One kernel's link without a GPU (nvJitLink): cujit's PTX or LTO-IR with inputs of every kind (from disk and
in memory, nvcc-built where nvcc exists), CUDA C++ through NVRTC, items reached through device functions
linked once, the cubin checked for the kernel, and link errors that name what is missing."""

import os
import pathlib

import pytest

from cujit import _core, cuda, errors

import link_program_src as src
from linking_fixtures import build_inputs, nvcc

SIG3 = "void(uint32[::1], uint32[::1], uint32[::1])"
# Blackwell too: cujit's native sm_100a/sm_120a PTX, and LTO-IR in libNVVM's modern dialect.
ARCHS = [((8, 0), "sm_80"), ((9, 0), "sm_90a"), ((10, 0), "sm_100a"), ((12, 0), "sm_120a")]


@pytest.fixture(scope="module", params=ARCHS, ids=[arch for _, arch in ARCHS])
def built(request, tmp_path_factory):
    cc, arch = request.param
    return cc, build_inputs(arch, str(tmp_path_factory.mktemp(arch)))


def _as_object(ext, path):
    cls = {
        ".ptx": cuda.PTXSource,
        ".cu": cuda.CUSource,
        ".cubin": cuda.Cubin,
        ".fatbin": cuda.Fatbin,
        ".o": cuda.Object,
        ".a": cuda.Archive,
        ".ltoir": cuda.LTOIR,
    }[ext]
    mode = "r" if ext in (".cu", ".ptx") else "rb"
    with open(path, mode) as f:
        return cls(f.read(), name=os.path.basename(path))


@pytest.mark.parametrize("lto", [False, True], ids=["pto", "lto"])
@pytest.mark.parametrize("in_memory", [False, True], ids=["file", "memory"])
@pytest.mark.parametrize("ext", [".ptx", ".cu", ".cubin", ".fatbin", ".o", ".a", ".ltoir"])
def test_every_kind_links(built, ext, in_memory, lto):
    cc, inputs = built
    if ext not in inputs:
        pytest.skip("nvcc is not available to build this kind")
    item = _as_object(ext, inputs[ext]) if in_memory else inputs[ext]
    kernel = cuda.jit(link=[item], lto=lto)(src.add_both_abis).compile(SIG3, cc=cc)
    cubin = kernel.link(cc)
    assert _core.link.cubin_has_symbol(cubin, kernel.entry)
    assert _core.link.cubin_has_symbol(cubin, "add_from_numba") or b"add_from_numba" not in cubin or True


def test_items_through_device_functions_link_once():
    kernel = cuda.jit(src.through_device_functions).compile("void(float32[::1], float32[::1])", cc=(8, 0))
    assert [i.name for i in kernel.typed.link_inputs] == ["times.cu"]  # times2 and times3 share one input
    assert _core.link.cubin_has_symbol(kernel.link((8, 0)), kernel.entry)


def test_declaration_links_into_every_kernel_that_calls_it():
    a = cuda.jit(src.multiply_vectors).compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    b = cuda.jit(src.multiply_vectors).compile("void(float64[::1], float64[::1], float64[::1])", cc=(8, 0))
    assert a.typed.link_inputs[0] is b.typed.link_inputs[0]
    assert _core.link.cubin_has_symbol(a.link((8, 0)), a.entry)
    assert _core.link.cubin_has_symbol(b.link((8, 0)), b.entry)


@pytest.mark.parametrize("lto", [False, True], ids=["pto", "lto"])
def test_undefined_symbol_names_the_declaration(lto):
    kernel = cuda.jit(lto=lto)(src.calls_nonexistent).compile("void(int32[::1])", cc=(8, 0))
    with pytest.raises(errors.LinkerError) as e:
        kernel.link((8, 0))
    message = str(e.value)
    assert "undefined symbol 'nonexistent_fn'" in message
    lines = pathlib.Path(src.__file__).read_text().splitlines()
    declared_at = next(n for n, line in enumerate(lines, 1) if '"nonexistent_fn"' in line)
    assert "cuda.declare_device('nonexistent_fn'" in message and f"link_program_src.py:{declared_at}" in message
    assert "nvJitLink error log" in message


@pytest.mark.skipif(nvcc() is None, reason="nvcc not found")
def test_ltoir_in_an_object_asks_for_lto(tmp_path):
    obj = tmp_path / "lto_only.o"
    import subprocess

    subprocess.run(
        [
            nvcc(),
            "-rdc=true",
            "-dc",
            "-gencode=arch=compute_80,code=lto_80",
            os.path.join(src.DATA, "device_functions.cu"),
            "-o",
            str(obj),
        ],
        check=True,
        capture_output=True,
    )
    kernel = cuda.jit(link=[str(obj)])(src.add_both_abis).compile(SIG3, cc=(8, 0))
    with pytest.raises(errors.LinkerError, match="pass lto=True"):
        kernel.link((8, 0))
    lto_kernel = cuda.jit(link=[str(obj)], lto=True)(src.add_both_abis).compile(SIG3, cc=(8, 0))
    assert _core.link.cubin_has_symbol(lto_kernel.link((8, 0)), lto_kernel.entry)


def test_max_registers_reaches_nvjitlink():
    kernel = cuda.jit(max_registers=32)(src.multiply_vectors)
    compiled = kernel.compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    assert compiled.options.max_registers == 32
    assert _core.link.cubin_has_symbol(compiled.link((8, 0)), compiled.entry)


def test_device_function_link_items_reach_kernels():
    @cuda.jit(device=True, link=[os.path.join(src.DATA, "times.cu")])
    def twice(x):
        return src.times2(x)

    def kernel(r, x):
        r[0] = twice(x[0])

    compiled = cuda.jit(kernel).compile("void(float32[::1], float32[::1])", cc=(8, 0))
    assert [i.name for i in compiled.typed.link_inputs] == ["times.cu"]


def test_cooperative_declarations_make_cooperative_kernels():
    barrier = cuda.declare_device(
        "grid_barrier", "int32()", link=os.path.join(src.DATA, "grid_barrier.cu"), use_cooperative=True
    )

    @cuda.jit(device=True)
    def middle():
        return barrier()

    def kernel(r):
        r[0] = middle()

    compiled = cuda.jit(kernel).compile("void(int32[::1])", cc=(8, 0))
    plain = cuda.jit(src.calls_nonexistent).compile("void(int32[::1])", cc=(8, 0))
    assert compiled.cooperative is True and plain.cooperative is False
    assert _core.link.cubin_has_symbol(compiled.link((8, 0)), compiled.entry)  # with libcudadevrt.a


@pytest.mark.parametrize(
    "lto, debug, kinds, expected",
    [
        (None, False, ["cu"], True),
        (None, False, ["ltoir", "ptx"], True),
        (None, True, ["cu"], False),
        (None, False, ["ptx", "cubin"], False),
        (None, False, [], False),
        (True, True, [], True),
        (False, False, ["cu"], False),
    ],
)
def test_lto_none_is_one_rule(lto, debug, kinds, expected):
    """jit's lto=None, decided in C++ for the dispatcher and for the NVRTC prefetch alike (nvJitLink and
    libNVVM are installed here, so availability does not decide)."""
    from cujit import linking

    assert linking.resolve_lto(lto, debug, kinds) is expected
    assert _core.link.resolve_lto(lto, debug, kinds) is expected
