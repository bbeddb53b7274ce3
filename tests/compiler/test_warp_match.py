"""Warp masks and matches and the bit/math functions numba-cuda keeps in its cuda namespace: activemask() and
lanemask_lt() read uint32 warp state; match_any_sync(mask, value) gives an int32 mask and match_all_sync(mask,
value) an (int32, bool) tuple, as PTX match.any/all.sync of the value's width (32 or 64 bits; floats by their
bits); ffs(x) is uint32; cbrt keeps float32/float64. Each compiles for sm_75 and sm_90 (assembled by ptxas
through conftest), with numba-cuda 0.30.4's result types; misuse is a TypingError."""

import re

import pytest

from cujit import cuda
from cujit import boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64, Tuple
from cujit.errors import TypingError

CCS = [(7, 5), (9, 0)]
cc_ids = lambda cc: f"sm_{cc[0]}{cc[1]}"  # noqa: E731


def masks(out):
    i = cuda.threadIdx.x
    out[i] = cuda.activemask() ^ cuda.lanemask_lt()


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_activemask_and_lanemask_lt(cc):
    ptx, _ = cuda.compile_ptx(masks, (uint32[:],), cc=cc)
    assert "activemask.b32" in ptx
    assert "%lanemask_lt" in ptx


def test_mask_results_are_uint32():
    assert cuda.compile_ptx(lambda: cuda.activemask(), (), device=True)[1] == uint32
    assert cuda.compile_ptx(lambda: cuda.lanemask_lt(), (), device=True)[1] == uint32


def match_any(mask, v):
    return cuda.match_any_sync(mask, v)


def match_all(mask, v):
    return cuda.match_all_sync(mask, v)


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
@pytest.mark.parametrize(
    "vtype, bits",
    [(int32, 32), (int64, 64), (float32, 32), (float64, 64), (int8, 32), (uint16, 32), (uint32, 64), (uint64, 64)],
    ids=str,
)
def test_match_any_sync(vtype, bits, cc):
    ptx, resty = cuda.compile_ptx(match_any, (uint32, vtype), device=True, cc=cc)
    assert resty == int32
    assert re.search(rf"match\.any\.sync\.b{bits}", ptx)


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
@pytest.mark.parametrize("vtype, bits", [(int32, 32), (int64, 64), (float32, 32), (float64, 64)], ids=str)
def test_match_all_sync_returns_mask_and_predicate(vtype, bits, cc):
    ptx, resty = cuda.compile_ptx(match_all, (uint32, vtype), device=True, cc=cc)
    assert resty == Tuple([int32, boolean])
    assert re.search(rf"match\.all\.sync\.b{bits}", ptx)


def match_in_kernel(out, values):
    i = cuda.threadIdx.x
    m = cuda.match_any_sync(0xFFFFFFFF, values[i])
    mask, pred = cuda.match_all_sync(cuda.activemask(), values[i])
    out[i] = m + mask + pred


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_matches_in_a_kernel(cc):
    ptx, _ = cuda.compile_ptx(match_in_kernel, (int64[:], float32[:]), cc=cc)
    assert "match.any.sync.b32" in ptx and "match.all.sync.b32" in ptx


def ffs(x):
    return cuda.ffs(x)


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
@pytest.mark.parametrize("xtype", [int8, int16, int32, int64, uint8, uint16, uint32, uint64], ids=str)
def test_ffs_is_uint32(xtype, cc):
    _, resty = cuda.compile_ptx(ffs, (xtype,), device=True, cc=cc)
    assert resty == uint32


def cbrt(x):
    return cuda.cbrt(x)


@pytest.mark.parametrize("xtype, resty", [(float32, float32), (float64, float64), (int32, float64)], ids=str)
def test_cbrt_keeps_float_width(xtype, resty):
    ptx, got = cuda.compile_ptx(cbrt, (xtype,), device=True)
    assert got == resty


@pytest.mark.parametrize(
    "fn, argtypes, message",
    [
        (match_any, (uint32, complex64), "the value must be a 32- or 64-bit integer or float, got complex64"),
        (match_all, (uint32, float32[:]), "the value must be a 32- or 64-bit integer or float, got array(float32"),
        (ffs, (float32,), "No implementation of cuda.ffs(float32)"),
        (cbrt, (complex64,), "No implementation of cuda.cbrt(complex64)"),
    ],
)
def test_misuse_is_a_typing_error(fn, argtypes, message):
    with pytest.raises(TypingError, match=re.escape(message)):
        cuda.compile_ptx(fn, argtypes, device=True)


def test_match_needs_two_arguments():
    def one_arg(m):
        return cuda.match_any_sync(m)

    with pytest.raises(TypingError, match=re.escape("takes 2 arguments (mask, value), got 1")):
        cuda.compile_ptx(one_arg, (uint32,), device=True)


@pytest.mark.parametrize("fn", [match_any, match_all], ids=["match_any_sync", "match_all_sync"])
@pytest.mark.parametrize("cc", [(6, 0), (6, 1), (7, 0)], ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
def test_match_below_sm_70_is_refused(fn, cc):
    # match.sync needs sm_70; cujit generates nothing below sm_75 (its lowest target), so a target below sm_70
    # is refused, naming the capability and the requirement, before any code is made.
    from cujit.errors import CCSupportError

    with pytest.raises(
        CCSupportError, match=re.escape(f"GPU compute capability {cc[0]}.{cc[1]} is not supported (requires >=7.5)")
    ):
        cuda.compile_ptx(fn, (uint32, int32), device=True, cc=cc)
