"""Typical kernels (kernels_src.py), compile-only: they compile for sm_80 and sm_90, their PTX shows what a
CUDA C programmer expects (.shared declarations, bar.sync, atom.global/atom.shared, shfl.sync, ld/st.global,
fma), ptxas -v reports no stack frame and no spills, and the index math is what nvcc would emit."""

import os
import re
import subprocess
import tempfile

import pytest

import kernels_src as K
from cujit import cuda, float32, int32, void

CCS = [(8, 0), (9, 0)]

F1 = float32[::1]
F2 = float32[:, ::1]
I1 = int32[::1]

# name -> (kernel, signature)
KERNELS = {
    "saxpy": (K.saxpy, (F1, float32, F1, F1)),
    "block_sum": (K.block_sum, (F1, F1)),
    "stencil_2d": (K.stencil_2d, (F2, F2)),
    "fast_matmul": (K.fast_matmul, (F2, F2, F2)),
    "histogram": (K.histogram, (I1, I1)),
    "histogram_shared": (K.histogram_shared, (I1, I1)),
    "warp_reduce": (K.warp_reduce, (F1, F1)),
}

SHARED_DECL = r"^\s*(\.visible\s+)?\.shared\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[{}\];"

# name -> regexes the PTX must match (what a CUDA C programmer expects to see)
EXPECTED = {
    "saxpy": [
        r"\bld\.global(\.nc)?\.b32\b",
        r"\bst\.global\.b32\b",
        r"\bfma\.rn\.f32\b",
        r"%tid\.x",
        r"%ctaid\.x",
        r"%ntid\.x",
    ],
    "block_sum": [
        SHARED_DECL.format(4 * K.BLOCK),
        r"\bbar\.sync\s+0;",
        r"\bld\.shared\.b32\b",
        r"\bst\.shared\.b32\b",
        r"\bld\.global(\.nc)?\.b32\b",
        r"\bst\.global\.b32\b",
        r"%ctaid\.x",
    ],
    "stencil_2d": [r"\bld\.global(\.nc)?\.b32\b", r"\bst\.global\.b32\b", r"%tid\.y", r"%ctaid\.y"],
    "fast_matmul": [
        SHARED_DECL.format(4 * K.TPB * K.TPB),
        r"\bbar\.sync\s+0;",
        r"\bld\.shared\.b32\b",
        r"\bst\.shared\.b32\b",
        r"\bfma\.rn\.f32\b",
        r"\bld\.global(\.nc)?\.b32\b",
        r"\bst\.global\.b32\b",
        r"%nctaid\.x",
    ],
    "histogram": [r"\batom\.global\.add\.[us]32\b", r"\bld\.global(\.nc)?\.b32\b"],
    "histogram_shared": [
        SHARED_DECL.format(4 * K.NBINS),
        r"\batom\.shared\.add\.[us]32\b",
        r"\batom\.global\.add\.[us]32\b",
        r"\bbar\.sync\s+0;",
    ],
    "warp_reduce": [r"\bshfl\.sync\.down\.b32\b", r"\batom\.global\.add\.f32\b", r"\bld\.global(\.nc)?\.b32\b"],
}


@pytest.fixture(params=CCS, ids=[f"sm_{a}{b}" for a, b in CCS])
def cc(request):
    return request.param


_PTX = {}


def compiled(name, cc):
    """PTX of a typical kernel for `cc` (compiled once per session)."""
    key = (name, cc)
    if key not in _PTX:
        pyfunc, sig = KERNELS[name]
        ptx, resty = cuda.compile_ptx(pyfunc, sig, cc=cc)
        assert resty == void
        _PTX[key] = ptx
    return _PTX[key]


@pytest.mark.parametrize("name", KERNELS)
def test_compiles_to_an_entry(name, cc, prototypes):
    ptx = compiled(name, cc)
    assert re.search(rf"^\.target\s+sm_{cc[0]}{cc[1]}\b", ptx, re.M)
    assert prototypes.visible(ptx).kind == "entry"


@pytest.mark.parametrize("name", KERNELS)
def test_ptx_has_what_a_cuda_programmer_expects(name, cc):
    ptx = compiled(name, cc)
    missing = [pattern for pattern in EXPECTED[name] if not re.search(pattern, ptx, re.M)]
    assert not missing, f"{name}: not in the PTX: {missing}"


@pytest.mark.parametrize("name", KERNELS)
def test_no_local_memory(name, cc):
    """Small kernels keep everything in registers: no .local depot, no local loads or stores."""
    ptx = compiled(name, cc)
    assert ".local" not in ptx
    assert not re.search(r"\b(ld|st)\.local\b", ptx)


def ptxas_verbose(ptxas, ptx, cc):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
        fh.write(ptx)
        path = fh.name
    try:
        proc = subprocess.run(
            [ptxas, "-v", f"-arch=sm_{cc[0]}{cc[1]}", "-o", os.devnull, path],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.unlink(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("name", KERNELS)
def test_ptxas_reports_no_spills_and_no_stack(name, cc, ptxas):
    log = ptxas_verbose(ptxas, compiled(name, cc), cc)
    frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert frames, log
    for stack, spill_stores, spill_loads in frames:
        assert (stack, spill_stores, spill_loads) == ("0", "0", "0"), log
    assert re.search(r"Used \d+ registers", log), log


# -- quality of the generated code -------------------------------------------------------------------------------


def opcodes(ptx):
    return re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)", ptx[ptx.index("{", ptx.index(".entry")) :], re.M)


def test_saxpy_has_no_division_and_no_64_bit_multiply(cc):
    ptx = compiled("saxpy", cc)
    ops = opcodes(ptx)
    assert not [op for op in ops if op.startswith(("div", "rem"))], ops
    assert "mul.lo.s64" not in ops and "mul.lo.u64" not in ops, ops
    # blockIdx.x * blockDim.x as a widening 32-bit multiply, element offsets as shifts
    assert re.search(r"\bmul\.wide\.[us]32\b", ptx), ops
    assert re.search(r"\bshl\.b64\b", ptx) or re.search(r"\bmul\.wide\.[us]32\s+%rd\d+, %r\d+, 4;", ptx), ops


def test_saxpy_is_one_fma_two_loads_one_store(cc):
    ops = opcodes(compiled("saxpy", cc))
    assert ops.count("fma.rn.f32") == 1
    assert len([op for op in ops if op.startswith("ld.global")]) == 2
    assert ops.count("st.global.b32") == 1
    assert not [op for op in ops if op.startswith(("call", "ld.local", "st.local"))]


def test_matmul_inner_loop_reads_shared_memory(cc):
    """Between the two barriers of an iteration the tile product reads sA and sB from shared memory only:
    two ld.shared.b32 per fma, no global memory traffic."""
    ptx = compiled("fast_matmul", cc)
    segments = re.split(r"^\s*bar\.sync\s+0;\s*$", ptx, flags=re.M)
    inner = [s for s in segments if "fma.rn.f32" in s]
    assert inner, "no fma.rn.f32 between barriers"
    for segment in inner:
        fmas = len(re.findall(r"\bfma\.rn\.f32\b", segment))
        loads = len(re.findall(r"\bld\.shared\.b32\b", segment))
        assert loads == 2 * fmas, f"{loads} ld.shared.b32 for {fmas} fma.rn.f32"
        assert not re.search(r"\b(ld|st)\.global\b", segment), "global memory access in the tile product"


def test_matmul_has_two_barriers_per_tile(cc):
    assert len(re.findall(r"\bbar\.sync\s+0;", compiled("fast_matmul", cc))) == 2


def test_matmul_shared_tiles_are_two_declarations(cc):
    ptx = compiled("fast_matmul", cc)
    assert len(re.findall(SHARED_DECL.format(4 * K.TPB * K.TPB), ptx, re.M)) == 2


def test_block_sum_tree_has_no_division(cc):
    """stride //= 2 on a positive power of two and the bounds test need no div/rem instruction."""
    ops = opcodes(compiled("block_sum", cc))
    assert not [op for op in ops if op.startswith("div")], ops


def test_warp_reduce_unrolls_the_tuple_loop(cc):
    assert len(re.findall(r"\bshfl\.sync\.down\.b32\b", compiled("warp_reduce", cc))) == 5


def test_histogram_modulo_of_a_power_of_two_is_not_a_division(cc):
    ops = opcodes(compiled("histogram", cc))
    assert not [op for op in ops if op.startswith(("div", "rem"))], ops


def saxpy_int32_index(r, a, x, y):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < r.size:
        r[i] = a * x[i] + y[i]


def test_saxpy_with_an_int32_computed_index(cc):
    ptx, _ = cuda.compile_ptx(saxpy_int32_index, (F1, float32, F1, F1), cc=cc)
    ops = opcodes(ptx)
    assert "fma.rn.f32" in ops
    assert not [op for op in ops if op.startswith(("div", "rem"))], ops
