"""cujit builds LLVM's NVPTX codegen pipeline less a few passes that cost compile time and give ptxas nothing
(cpp/src/codegen/codegen_passes.cpp). The list is matched by pass name, so these tests fail if an LLVM update
renames what is left out, rather than letting compile time regress silently."""

import pytest

from cujit import _core, cuda, float32, void


def _passes(cc=(8, 0)):
    return _core.codegen_passes(cc)


def test_straight_line_scalar_optimisations_and_constant_hoisting_are_left_out():
    dropped = [name for name, kept in _passes() if not kept]
    assert dropped == [
        "Straight line strength reduction",
        "Early CSE",
        "Nary reassociation",
        "Early CSE",
        "Constant Hoisting",
    ]


def test_the_rest_of_the_pipeline_is_kept():
    kept = [name for name, kept in _passes() if kept]
    # The address-space inference, GEP splitting, vectorizer, instruction selection and printer stay.
    for name in (
        "Infer address spaces",
        "Split GEPs to a variadic base and a constant offset for better CSE",
        "GPU Load and Store Vectorizer",
        "NVPTX DAG->DAG Pattern Instruction Selection",
        "NVPTX Assembly Printer",
    ):
        assert name in kept
    # One EarlyCSE run stays: the one after LLVM's generic IR passes.
    assert kept.count("Early CSE") == 1
    assert kept[-2:] == ["NVPTX Assembly Printer", "Free MachineFunction"]


# LLVM 22 adds this pass only for targets whose PTX ISA version needs it (8.0 here: up to sm_90a).
EXIT_BEFORE_UNREACHABLE = "add an exit instruction before every unreachable"


@pytest.mark.parametrize("cc", [(7, 5), (9, 0), (10, 0), (12, 0)])
def test_every_target_gets_the_same_pipeline(cc):
    def pipeline(cc):
        return [p for p in _passes(cc) if p[0] != EXIT_BEFORE_UNREACHABLE]

    assert pipeline(cc) == pipeline((8, 0))


def test_an_unsupported_target_is_a_python_error():
    with pytest.raises(Exception, match="compute capability 5.0 is not supported"):
        _passes((5, 0))


def test_ptx_from_the_untracked_printer_is_plain_text():
    """The printer writes through a stream that tracks no columns: PTX lines carry no padding."""

    def scale(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = x[i] * 2.0

    ptx, _ = cuda.compile_ptx(scale, void(float32[::1], float32[::1]), cc=(8, 0))
    assert ".visible .entry" in ptx and "ld.global" in ptx and ptx.endswith("}\n")
    assert not any(line != line.rstrip() for line in ptx.splitlines())
    assert "  //" not in ptx


def test_a_while_grid_stride_loop_is_counted_and_unrolled():
    """`while i < x.size: acc += x[i]; i += stride` (numba's grid-stride idiom written with while): the array's size
    has a value range below 2**62, so the loop cannot wrap and LLVM counts its trips; with the trip count's division
    within the expansion budget, it unrolls the loop as nvcc does (one load per trip left it at 0.61x nvcc -O3)."""
    import re

    from cujit import cuda, float32

    def grid_sum(x, out):
        acc = float32(0.0)
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            acc += x[i]
            i += stride
        cuda.atomic.add(out, 0, acc)

    ptx, _ = cuda.compile_ptx(grid_sum, (float32[::1], float32[::1]), cc=(9, 0))
    assert len(re.findall(r"ld\.global(\.nc)?\.[bf]32", ptx)) >= 4, ptx
