"""Read-only arrays load through the non-coherent cache (ld.global.nc), compile-only.

A ``@cuda.jit`` kernel whose arguments are arrays and scalars compiles with its array data ``noalias`` (CUDA C's
``__restrict__``): the arrays it only reads are then loaded with ``ld.global.nc``. That is only true while no two
array arguments share bytes, so each launch checks the arrays' extents and runs a variant compiled without it when
they overlap. ``compile_ptx`` keeps numba-cuda's PTX (no ``noalias``). The GPU half is in test_gpu_kernels.py.
"""

import re

import pytest

from cujit import cuda, float32, float64, int32, int64, void, CPointer, UniTuple
from cujit._core import driver as _drv
from cujit.compiler import parse_signature

VEC = float32[::1]
CCS = [(8, 0), (9, 0)]


@pytest.fixture(params=CCS, ids=[f"sm_{a}{b}" for a, b in CCS])
def cc(request):
    return request.param


def axpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def accumulate(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] += x[i]


def through_pointer(r, x, p):  # p is only passed: what matters is that it could point into r or x
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i]


def with_tuple(r, x, t):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] + t[0]


def stencil(out, a):
    i, j = cuda.grid(2)
    n, m = a.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        out[i, j] = a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4 * a[i, j]


def loads(ptx):
    return re.findall(r"\bld\.global(\.nc)?\.\w+", ptx)


def kernel_for(pyfunc, sig, cc):
    return cuda.jit(pyfunc).compile(sig, cc=cc)


def test_read_only_arrays_load_through_the_non_coherent_cache(cc):
    kernel = kernel_for(axpy, void(VEC, float32, VEC, VEC), cc)
    assert kernel.options.noalias_arrays
    assert loads(kernel.ptx) == [".nc", ".nc"], kernel.ptx
    assert re.search(r"\bst\.global\.b32\b", kernel.ptx)
    assert re.search(r"ptr noalias readonly %x\.4", kernel.llvm_ir)
    assert re.search(r"ptr noalias %r\.4", kernel.llvm_ir) and not re.search(r"noalias readonly %r\.4", kernel.llvm_ir)


def test_compile_ptx_keeps_numba_cudas_loads(cc):
    ptx, _ = cuda.compile_ptx(axpy, void(VEC, float32, VEC, VEC), cc=cc)
    assert loads(ptx) == ["", ""], ptx


def test_an_array_that_is_written_is_not_read_through_the_cache(cc):
    kernel = kernel_for(accumulate, void(VEC, VEC), cc)
    ptx = kernel.ptx
    assert sorted(loads(ptx)) == ["", ".nc"], ptx  # r[i] coherent (it is written), x[i] non-coherent


def test_two_dimensional_stencil(cc):
    kernel = kernel_for(stencil, void(float64[:, :], float64[:, :]), cc)
    assert loads(kernel.ptx) and set(loads(kernel.ptx)) == {".nc"}, kernel.ptx


@pytest.mark.parametrize(
    "pyfunc, sig",
    [
        (through_pointer, void(VEC, VEC, CPointer(float32))),
        (with_tuple, void(VEC, VEC, UniTuple(float32, 2))),
    ],
    ids=["pointer", "tuple"],
)
def test_other_ways_to_memory_keep_the_arrays_coherent(pyfunc, sig, cc):
    """A raw pointer may point into an array without the launch knowing its extent: no noalias then."""
    kernel = kernel_for(pyfunc, sig, cc)
    assert not kernel.options.noalias_arrays and kernel.if_overlap is None
    assert ".nc" not in loads(kernel.ptx)


def test_overlaps_are_checked_only_with_two_arrays(cc):
    one = kernel_for(double_in_place, void(VEC, int32), cc)
    assert one.options.noalias_arrays and one.if_overlap is None
    two = kernel_for(axpy, void(VEC, float32, VEC, VEC), cc)
    assert callable(two.if_overlap)


def double_in_place(r, n):
    i = cuda.grid(1)
    if i < n:
        r[i] = r[i] * 2


def test_the_variant_for_overlaps_is_compiled_on_demand_and_kept_out_of_sight(cc):
    d = cuda.jit(axpy)
    sig = void(VEC, float32, VEC, VEC)
    kernel = d.compile(sig, cc=cc)
    assert len(d._kernels.specialisations()) == 1
    plain = d._compile_signature(parse_signature(sig), cc, noalias=False)
    assert not plain.options.noalias_arrays
    assert loads(plain.ptx) == ["", ""]
    assert plain.entry != kernel.entry
    assert d.overloads[tuple(sig.args)] is kernel
    assert d.inspect_asm(sig) == kernel.ptx and len(d._kernels.specialisations()) == 1  # the variant unlisted
    assert d._kernels.find(list(sig.args), plain.options.key()) is plain  # its options key it apart
    assert d._compile_signature(parse_signature(sig), cc, noalias=False) is plain


# ---- the launch-time check ---------------------------------------------------------------------------------


def _array(ptr, shape, strides, itemsize=4):
    n = 1
    for s in shape:
        n *= s
    return (ptr, n, itemsize, tuple(shape), tuple(strides))


@pytest.mark.parametrize(
    "values, overlap",
    [
        ([_array(0x1000, [100], [4]), 1.0, _array(0x1190, [100], [4])], False),  # adjacent: 0x1000 + 400 = 0x1190
        ([_array(0x1000, [100], [4]), 1.0, _array(0x118C, [100], [4])], True),  # shares the last element
        ([_array(0x1000, [100], [4]), 1.0, _array(0x1000, [100], [4])], True),  # the same array twice
        ([_array(0x1000, [0], [4]), 1.0, _array(0x1000, [100], [4])], False),  # an empty array touches nothing
        ([_array(0x1000 + 396, [100], [-4]), 1.0, _array(0x1000 - 400, [100], [4])], False),  # reversed view, below
        ([_array(0x1000 + 396, [100], [-4]), 1.0, _array(0x1100, [1], [4])], True),  # inside the reversed view
        ([_array(0x2000, [10], [8]), 1.0, _array(0x2004, [10], [8])], True),  # interleaved columns: conservative
    ],
    ids=["adjacent", "last-element", "same", "empty", "negative-stride", "inside-negative", "interleaved"],
)
def test_launcher_overlap_check(values, overlap):
    k = _drv.KernelLauncher([("array", 1), ("f", 4), ("array", 1)])
    assert k.arrays_overlap(values) is overlap


def test_launcher_overlap_check_in_two_dimensions():
    k = _drv.KernelLauncher([("array", 2), ("array", 2), ("i", 8)])
    a = _array(0x10000, [16, 16], [64, 4])  # 1024 bytes
    inner = _array(0x10000 + 64 * 8 + 16, [2, 2], [64, 4])
    after = _array(0x10000 + 1024, [16, 16], [64, 4])
    f_order = _array(0x10000 + 1020, [16, 16], [4, 64])
    assert k.arrays_overlap([a, inner, 3])
    assert not k.arrays_overlap([a, after, 3])
    assert k.arrays_overlap([a, f_order, 3])


def test_plans_with_a_single_array_never_overlap():
    k = _drv.KernelLauncher([("array", 1), ("i", 4)])
    assert not k.arrays_overlap([_array(0x1000, [4], [4]), 7])


def test_overlap_check_far_apart_addresses():
    k = _drv.KernelLauncher([("array", 1), ("array", 1)])
    assert not k.arrays_overlap([_array(0x7FFF_0000_0000, [1 << 20], [8], 8), _array(0x1000, [1 << 20], [8], 8)])


def store_nothing(v):
    pass


@pytest.mark.parametrize("argtype", [int64, float64])
def test_scalar_only_kernels_have_nothing_to_declare(argtype, cc):
    kernel = cuda.jit(store_nothing).compile(void(argtype), cc=cc)
    assert not kernel.options.noalias_arrays and kernel.if_overlap is None
