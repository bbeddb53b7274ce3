"""Linking on the GPU, against numpy on fresh random data: numba-cuda's FFI documentation examples, each link kind
from disk and in memory with LTO on and off, declarations reached through device functions, one .cu in two kernels,
C-ABI declarations, cffi pointers, and Python UDFs compiled by ``cuda.compile`` then linked back (C-ABI PTX,
numba-ABI PTX by its mangled name, LTO-IR with lto=True)."""

import os
import re

import numpy as np
import pytest

import gpu_support

from cujit import config, cuda, errors
from cujit.cudadrv import devices

import gpu_linking_src as K
from linking_fixtures import build_inputs

pytestmark = gpu_support.gpu + [
    gpu_support.needs_device("linked PTX, cubin, fatbin, objects, archives, LTO-IR and CUDA C++ are GPU code"),
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]


def _arch():
    major, minor = devices.get_current_device().compute_capability
    return f"sm_{major}{minor}{'a' if major >= 9 else ''}"


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    return build_inputs(_arch(), str(tmp_path_factory.mktemp("bin")))


def _launch(kernel, n, *args):
    kernel[(n + 127) // 128, 128](*args)
    cuda.synchronize()


def test_doc_linking_cu(rng):
    x = rng.random(1000, dtype=np.float32)
    y = rng.random(1000, dtype=np.float32)
    r = np.zeros_like(x)
    _launch(cuda.jit(K.multiply_vectors), 1000, r, x, y)
    np.testing.assert_array_equal(r, x * y)


def test_doc_from_buffer(rng):
    x = rng.random(777, dtype=np.float32)
    result = np.zeros((), dtype=np.float32)
    cuda.jit(K.reduction_caller)[1, 1](result, x)
    cuda.synchronize()
    np.testing.assert_allclose(result, x.sum(dtype=np.float64), rtol=1e-4)


def test_doc_extra_includes(rng, monkeypatch):
    monkeypatch.setattr(
        config,
        "CUDA_NVRTC_EXTRA_SEARCH_PATHS",
        os.path.join(K.DATA, "includeA") + ":" + os.path.join(K.DATA, "includeB"),
    )
    n = 10000
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    r = np.zeros_like(x)
    a = np.float32(rng.random())
    _launch(cuda.jit(K.vector_saxpy), n, r, a, x, y)
    np.testing.assert_allclose(r, a * x + y, rtol=1e-6)


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
    with open(path, "r" if ext in (".cu", ".ptx") else "rb") as f:
        return cls(f.read(), name=os.path.basename(path))


@pytest.mark.parametrize("lto", [False, True], ids=["pto", "lto"])
@pytest.mark.parametrize("in_memory", [False, True], ids=["file", "memory"])
@pytest.mark.parametrize("ext", [".ptx", ".cu", ".cubin", ".fatbin", ".o", ".a", ".ltoir"])
def test_every_link_kind(binaries, rng, ext, in_memory, lto):
    if ext not in binaries:
        pytest.skip("nvcc is not available to build this kind")
    item = _as_object(ext, binaries[ext]) if in_memory else binaries[ext]
    n = 513
    a = rng.integers(0, 1 << 20, n, dtype=np.uint32)
    b = rng.integers(0, 1 << 20, n, dtype=np.uint32)
    r = np.zeros_like(a)
    _launch(cuda.jit(link=[item], lto=lto)(K.add_both_abis), n, r, a, b)
    np.testing.assert_array_equal(r, 3 * (a + b))


@pytest.mark.parametrize("lto", [False, True], ids=["pto", "lto"])
def test_through_device_functions(rng, lto):
    x = rng.random(300, dtype=np.float32)
    r = np.zeros_like(x)
    _launch(cuda.jit(lto=lto)(K.through_device_functions), 300, r, x)
    np.testing.assert_allclose(r, 10 * x, rtol=1e-6)


def test_one_cu_in_two_kernels(rng):
    x = rng.random(100, dtype=np.float32)
    r1, r2 = np.zeros_like(x), np.zeros_like(x)
    _launch(cuda.jit(K.times_five), 100, r1, x)
    _launch(cuda.jit(K.through_device_functions), 100, r2, x)
    np.testing.assert_allclose(r1, 5 * x, rtol=1e-6)
    np.testing.assert_allclose(r2, 10 * x, rtol=1e-6)


def test_link_forms_give_the_same_kernel(rng):
    times2_src = cuda.CUSource('extern "C" __device__ int t2(float* r, float x) { *r = 2 * x; return 0; }')
    times4_src = cuda.CUSource(
        'extern "C" __device__ int t2(float* r, float x);\n'
        'extern "C" __device__ int t4(float* r, float x) { float h; t2(&h, x); '
        "*r = 2 * h; return 0; }"
    )
    x = rng.random(64, dtype=np.float32)
    for form in ([times2_src, times4_src], (times2_src, times4_src), {times2_src, times4_src}):
        t4 = cuda.declare_device("t4", "float32(float32)", link=form)

        def times4(r, x):
            i = cuda.grid(1)
            if i < len(r):
                r[i] = t4(x[i])

        r = np.zeros_like(x)
        _launch(cuda.jit(times4), 64, r, x)
        np.testing.assert_allclose(r, 4 * x, rtol=1e-6)


def test_c_abi_declarations(rng):
    n = 200
    x = rng.random(n)
    r = np.zeros(n)
    _launch(cuda.jit(K.c_abi_shapes), n, r, np.zeros(1), x)
    np.testing.assert_allclose(r, x * 2.0 + 42.0 + 3.0)
    ints = rng.integers(0, 100, 50, dtype=np.int32)
    _launch(cuda.jit(K.set_all_42), 50, ints)
    assert (ints == 42).all()


def test_pointers_into_c_and_cujit_functions(rng):
    m = rng.random((8, 33), dtype=np.float32)
    expected = m * np.float32(1.5)
    _launch(cuda.jit(K.scale_rows), 8, m, np.float32(1.5))
    np.testing.assert_allclose(m, expected, rtol=1e-6)
    v = rng.random(40, dtype=np.float32)
    expected = np.float32(3.0) * v + 1.0
    cuda.jit(K.pointer_device_function)[1, 1](v, np.float32(3.0))
    cuda.synchronize()
    np.testing.assert_allclose(v, expected, rtol=1e-6)


def _check_udf(rng, call_udf, lto=False):
    """A kernel calling the declared UDF computes K.udf on random data."""

    def kernel(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = call_udf(x[i])

    x = rng.random(256, dtype=np.float32)
    r = np.zeros_like(x)
    _launch(cuda.jit(kernel, lto=lto), 256, r, x)
    np.testing.assert_allclose(r, x * x + 2 * x - 1, rtol=1e-5, atol=1e-6)


def test_python_udf_round_trip_c_abi(rng):
    ptx, resty = cuda.compile(K.udf, "float32(float32)", abi="c", abi_info={"abi_name": "udf_c"})
    _check_udf(rng, cuda.declare_device("udf_c", "float32(float32)", abi="c", link=[cuda.PTXSource(ptx.encode())]))


def test_python_udf_round_trip_numba_abi_by_mangled_name(rng):
    ptx, _ = cuda.compile(K.udf, "float32(float32)", abi="numba")
    name = re.search(r"\.visible \.func\s+\(.*?\)\s+(\S+)\(", ptx, re.S).group(1)
    _check_udf(rng, cuda.declare_device(name, "float32(float32)", link=[cuda.PTXSource(ptx)]))


def test_python_udf_round_trip_ltoir(rng):
    cc = devices.get_current_device().compute_capability
    ltoir, _ = cuda.compile(K.udf, "float32(float32)", output="ltoir", cc=cc, abi_info={"abi_name": "udf_lto"})
    assert ltoir[:4] == b"\xed\x43\x4e\x7f"
    _check_udf(rng, cuda.declare_device("udf_lto", "float32(float32)", abi="c", link=[cuda.LTOIR(ltoir)]), lto=True)


def test_debug_with_lto(rng):
    x = rng.random(64, dtype=np.float32)
    y = rng.random(64, dtype=np.float32)
    r = np.zeros_like(x)
    _launch(cuda.jit(K.multiply_vectors, debug=True, opt=False, lto=True), 64, r, x, y)
    np.testing.assert_array_equal(r, x * y)


def test_missing_definition_fails_at_launch_naming_it():
    with pytest.raises(errors.LinkerError, match="undefined symbol 'not_defined_anywhere'.*gpu_linking_src.py"):
        cuda.jit(K.calls_missing)[1, 1](np.zeros(1, np.float32))


def test_compile_for_current_device():
    cc = devices.get_current_device().compute_capability
    ptx, _ = cuda.compile_for_current_device(K.udf, "float32(float32)")
    assert f".target sm_{cc[0]}{cc[1]}" in ptx
    ptx, _ = cuda.compile_ptx_for_current_device(K.multiply_vectors, "void(float32[::1], float32[::1], float32[::1])")
    assert f".target sm_{cc[0]}{cc[1]}" in ptx


def test_curand_header_when_present(rng):
    include = [
        d for d in __import__("cujit").toolkit.include_dirs() if os.path.exists(os.path.join(d, "curand_kernel.h"))
    ]
    if not include:
        pytest.skip("curand_kernel.h is not in the CUDA include directories here")
    first = cuda.declare_device("first_curand", "uint32(uint64)", link=os.path.join(K.DATA, "curand_user.cu"))

    def kernel(r, seeds):
        for i in range(len(r)):
            r[i] = first(seeds[i])

    r = np.zeros(3, np.uint32)
    cuda.jit(kernel)[1, 1](r, np.array([1, 1, 2], np.uint64))
    cuda.synchronize()
    assert r[0] == r[1] != r[2] and r[0] != 0  # curand's generator ran: deterministic per seed


def test_cooperative_declaration():
    kernel = cuda.jit(K.neighbours_after_barrier)
    blocks, threads = 4, 64
    x = np.zeros(blocks * threads, np.int64)
    out = np.zeros_like(x)
    kernel[blocks, threads](x, out)
    cuda.synchronize()
    (compiled,) = kernel.overloads.values()
    assert compiled.cooperative is True
    i = np.arange(blocks * threads)
    np.testing.assert_array_equal(out, ((i + threads) % x.size) * 3 + 1)
