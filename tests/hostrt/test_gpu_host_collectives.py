"""The CPU target's collectives against the GPU's (issue 30): the same kernels with warp shuffles, votes, matches,
activemask, block reductions and a grid sync, compiled for both targets in one process and run on the same fresh
random inputs; the results must be equal. Only cases CUDA defines are compared (no lane reads a lane outside its
warp's mask). Needs a GPU."""

import numpy as np
import pytest

import gpu_support
from cujit import cuda

FULL = 0xFFFFFFFF

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a GPU and the CPU target"),
    gpu_support.needs_device("runs the same kernels on the GPU, beside the CPU target"),
]


def both(fn):
    return cuda.jit(target="cuda")(fn), cuda.jit(target="cpu")(fn)


def run_both(fn, config, *arrays):
    """Runs fn on both targets with copies of `arrays`; returns (gpu arrays, cpu arrays)."""
    gpu, cpu = both(fn)
    on_gpu = [a.copy() for a in arrays]
    on_cpu = [a.copy() for a in arrays]
    gpu[config](*on_gpu)
    cuda.synchronize()
    cpu[config](*on_cpu)
    return on_gpu, on_cpu


def shuffles(x, src, delta, out):
    i = cuda.grid(1)
    out[i, 0] = cuda.shfl_sync(FULL, x[i], src[i])
    out[i, 1] = cuda.shfl_up_sync(FULL, x[i], delta[0])
    out[i, 2] = cuda.shfl_down_sync(FULL, x[i], delta[0])
    out[i, 3] = cuda.shfl_xor_sync(FULL, x[i], delta[0])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_shuffles_agree(dtype):
    rng = np.random.default_rng()
    n = 256
    x = (rng.random(n) * 1e6).astype(dtype)
    src = rng.integers(0, 64, n).astype(np.int32)
    for delta in (0, 1, int(rng.integers(2, 31)), 31, 40):
        out = np.zeros((n, 4), dtype)
        (_, _, _, g), (_, _, _, c) = run_both(shuffles, (4, 64), x, src, np.array([delta], np.int32), out)
        np.testing.assert_array_equal(c, g)


def votes_and_matches(x, p, out):
    i = cuda.grid(1)
    pred = p[i] != 0
    out[i, 0] = cuda.all_sync(FULL, pred)
    out[i, 1] = cuda.any_sync(FULL, pred)
    out[i, 2] = cuda.eq_sync(FULL, pred)
    out[i, 3] = cuda.ballot_sync(FULL, pred)
    out[i, 4] = cuda.match_any_sync(FULL, x[i])
    mask, same = cuda.match_all_sync(FULL, x[i])
    out[i, 5] = mask
    out[i, 6] = same
    out[i, 7] = cuda.lanemask_lt()


def test_votes_and_matches_agree():
    rng = np.random.default_rng()
    n = 8 * 32
    p = (rng.random(n) < 0.5).astype(np.int32)
    p[:32], p[32:64] = 1, 0
    x = rng.integers(0, 3, n).astype(np.int64)
    x[64:96] = 5
    out = np.zeros((n, 8), np.int64)
    (_, _, g), (_, _, c) = run_both(votes_and_matches, (2, 128), x, p, out)
    np.testing.assert_array_equal(c, g)


def partial_masks(x, split, masks, out):
    # Each branch names its lanes explicitly: which lanes activemask() reports inside divergent code is up to the
    # compiler (an H100 runs both arms of this if converged), so it is compared only where the warp has converged.
    i = cuda.grid(1)
    lane = cuda.laneid
    k = split[0]
    if lane < k:
        out[i, 1] = cuda.shfl_sync(masks[0], x[i], 0)
        out[i, 2] = cuda.ballot_sync(masks[0], x[i] > 0.5)
    else:
        out[i, 1] = cuda.shfl_sync(masks[1], x[i], k)
        out[i, 2] = cuda.ballot_sync(masks[1], x[i] > 0.5)
    cuda.syncwarp()
    out[i, 0] = cuda.activemask()


def test_activemask_and_partial_masks_agree():
    rng = np.random.default_rng()
    x = rng.random(128)
    for k in (1, int(rng.integers(2, 31)), 31):
        low = (1 << k) - 1
        masks = np.array([low, FULL & ~low], np.uint32)
        out = np.zeros((128, 3))
        (_, _, _, g), (_, _, _, c) = run_both(partial_masks, (2, 64), x, np.array([k], np.int32), masks, out)
        np.testing.assert_array_equal(c, g)
        assert (g[:, 0] == FULL).all()


def block_reductions(p, out):
    b = cuda.blockIdx.x
    i = cuda.grid(1)
    c = cuda.syncthreads_count(p[i])
    a = cuda.syncthreads_and(p[i])
    o = cuda.syncthreads_or(p[i])
    if cuda.threadIdx.x == 0:
        out[b, 0] = c
        out[b, 1] = a
        out[b, 2] = o


def test_block_reductions_agree():
    rng = np.random.default_rng()
    p = (rng.random(8 * 96) < 0.5).astype(np.int32)
    p[:96], p[96:192] = 1, 0
    out = np.zeros((8, 3), np.int32)
    (_, g), (_, c) = run_both(block_reductions, (8, 96), p, out)
    np.testing.assert_array_equal(c, g)


def sequential_rows(m):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows, cols = m.shape
    for row in range(1, rows):
        m[row, col] = m[row - 1, cols - col - 1] + 1
        g.sync()


def test_grid_sync_agrees():
    rng = np.random.default_rng()
    m = np.zeros((32, 4 * 64), np.int32)
    m[0] = rng.integers(0, 1000, m.shape[1])
    (g,), (c,) = run_both(sequential_rows, (4, 64), m)
    np.testing.assert_array_equal(c, g)
