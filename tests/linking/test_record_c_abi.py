"""The C ABI of a record by value and by pointer is nvcc's (issue 43): a C-ABI function taking and returning a
record has nvcc's PTX prototype for the C struct of the same fields; its LTO-IR links with nvJitLink beside CUDA C++
(NVRTC, -dlto) that declares the struct and calls it, and a kernel calls CUDA C++ that takes the struct by value and
by pointer (``cuda.declare_device``), and a local vector value by its address (numbast's shims take ``T*``). The cubins are checked for their symbols; the kernel runs against NumPy on a
GPU."""

import re

import numpy as np
import pytest

import gpu_support
from cujit import _core, cuda, from_dtype, linking, types

try:
    import cffi

    ffi = cffi.FFI()
except ImportError:  # the test extra has it
    ffi = None

PAIR = np.dtype([("v", np.float32), ("i", np.int32)], align=True)
R = from_dtype(PAIR)
CC = (9, 0)
ARCH = "sm_90"

STRUCT = "struct Pair { float v; int i; };\n"

CALLER = (
    STRUCT
    + """
extern "C" __device__ Pair better(Pair a, Pair b);
extern "C" __global__ void reduce_pairs(Pair* out, const Pair* items, int n) {
  Pair best = items[0];
  for (int k = 1; k < n; ++k) best = better(best, items[k]);
  *out = best;
}
"""
)

CALLEE = (
    STRUCT
    + """
extern "C" __device__ Pair pair_max(Pair a, Pair b) { return a.v >= b.v ? a : b; }
extern "C" __device__ float pair_sum(const Pair* p) { return p->v + p->i; }
extern "C" __device__ float norm2(const float2* v) { return v->x * v->x + v->y * v->y; }
"""
)


def better(a, b):
    return a if a.v > b.v else b


def prototype(ptx, name):
    return re.search(r"\.func\s*(\([^)]*\))\s*" + name + r"\(([^)]*)\)", ptx, re.S).groups()


def test_a_record_by_value_has_nvccs_prototype():
    ptx, resty = cuda.compile_ptx(better, R(R, R), device=True, abi="c", cc=CC, abi_info={"abi_name": "better"})
    assert resty == R
    nvrtc_ptx, _, _ = _core.nvrtc.compile(
        STRUCT + 'extern "C" __device__ Pair better(Pair a, Pair b) { return a.v > b.v ? a : b; }\n',
        "pair.cu",
        ARCH,
        lto=False,
        include_dirs=linking.nvrtc_include_dirs(),
    )
    mine, theirs = prototype(ptx, "better"), prototype(nvrtc_ptx, "better")
    assert ".param .align 4 .b8 func_retval0[8]" in mine[0]
    assert re.sub(r"\s+", " ", mine[0]) == re.sub(r"\s+", " ", theirs[0])
    assert re.sub(r"\s+", " ", mine[1]) == re.sub(r"\s+", " ", theirs[1])


def test_ltoir_links_beside_cuda_cpp_that_declares_the_struct():
    ltoir, _ = cuda.compile(
        better, R(R, R), device=True, abi="c", output="ltoir", cc=CC, abi_info={"abi_name": "better"}
    )
    caller, _, _ = _core.nvrtc.compile(CALLER, "caller.cu", ARCH, lto=True, include_dirs=linking.nvrtc_include_dirs())
    cubin, _ = _core.link.link([("ltoir", ltoir, "better"), ("ltoir", caller, "caller.cu")], ARCH)
    assert _core.link.cubin_has_symbol(cubin, "reduce_pairs")


pair_max = cuda.declare_device("pair_max", R(R, R), abi="c", link=[cuda.CUSource(CALLEE)])
pair_sum = cuda.declare_device("pair_sum", types.float32(types.CPointer(R)), abi="c", link=[cuda.CUSource(CALLEE)])


norm2 = cuda.declare_device(
    "norm2", types.float32(types.CPointer(cuda.float32x2)), abi="c", link=[cuda.CUSource(CALLEE)]
)


def reduce_kernel(items, out, sums):
    best = items[0]
    for k in range(1, items.size):
        best = pair_max(best, items[k])
    out[0] = best
    for k in range(items.size):
        sums[k] = pair_sum(ffi.from_buffer(items[k:]))
    v = cuda.local.array(1, cuda.float32x2)  # the address of a local value (numbast's shims take T*)
    v[0] = cuda.float32x2(out[0].v, 2.0)
    sums[items.size] = norm2(ffi.from_buffer(v))


def test_a_kernel_calls_cuda_cpp_with_records_by_value_and_by_pointer():
    if ffi is None:
        pytest.skip("no cffi")
    kernel = cuda.jit(reduce_kernel).compile((R[::1], R[::1], types.float32[::1]), cc=CC)
    assert _core.link.cubin_has_symbol(kernel.link(CC), kernel.entry)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="linked CUDA C++ runs only on a GPU")
@gpu_support.needs_device("linked CUDA C++")
def test_runs():
    if ffi is None:
        pytest.skip("no cffi")
    rng = np.random.default_rng()
    items = np.zeros(16, PAIR)
    items["v"], items["i"] = rng.random(16), rng.integers(0, 100, 16)
    out, sums = np.zeros(1, PAIR), np.zeros(17, np.float32)
    cuda.jit(reduce_kernel)[1, 1](items, out, sums)
    k = int(items["v"].argmax())
    assert tuple(out[0]) == tuple(items[k])
    np.testing.assert_allclose(sums[:16], items["v"] + items["i"], rtol=1e-6)
    np.testing.assert_allclose(sums[16], items["v"][k] ** 2 + 4, rtol=1e-6)
