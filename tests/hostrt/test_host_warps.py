"""The CPU target's warp functions and block reductions (issue 30): warps of 32 consecutive linear thread ids run
shuffles, votes and matches together (a rendezvous of the lanes in the mask), and syncthreads_count/and/or reduce a
predicate over the block; every result is compared against a Python reference on fresh random data. No GPU needed."""

import numpy as np
import pytest

from cujit import cuda

FULL = 0xFFFFFFFF


def warps(a, block):
    """The lanes of each warp of each block of a 1-d launch: a list of index arrays."""
    out = []
    for start in range(0, a.size, block):
        for w in range(start, min(start + block, a.size), 32):
            out.append(np.arange(w, min(w + 32, start + block, a.size)))
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_shfl_sync_reads_the_source_lane(dtype):
    @cuda.jit(target="cpu")
    def shuffle(x, src, out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_sync(FULL, x[i], src[i])

    rng = np.random.default_rng()
    n = 256
    x = (rng.random(n) * 1e6).astype(dtype)
    src = rng.integers(0, 64, n).astype(np.int32)  # lanes above 31 wrap (PTX takes the low 5 bits)
    out = np.zeros(n, dtype)
    shuffle[4, 64](x, src, out)
    expected = np.array([x[(i // 32) * 32 + (src[i] & 31)] for i in range(n)], dtype)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("kind", ["up", "down", "xor"])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_shfl_up_down_xor(kind, dtype):
    @cuda.jit(target="cpu")
    def up(x, delta, out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_up_sync(FULL, x[i], delta)

    @cuda.jit(target="cpu")
    def down(x, delta, out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_down_sync(FULL, x[i], delta)

    @cuda.jit(target="cpu")
    def xor(x, delta, out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_xor_sync(FULL, x[i], delta)

    rng = np.random.default_rng()
    n = 128
    x = (rng.random(n) * 1000).astype(dtype)
    for delta in (0, 1, int(rng.integers(2, 31)), 31):
        out = np.zeros(n, dtype)
        {"up": up, "down": down, "xor": xor}[kind][2, 64](x, np.int32(delta), out)
        expected = np.empty_like(x)
        for i in range(n):
            lane = i % 32
            j = {"up": lane - delta, "down": lane + delta, "xor": lane ^ delta}[kind]
            expected[i] = x[i - lane + j] if 0 <= j <= 31 else x[i]  # out of range: the lane's own value
        np.testing.assert_array_equal(out, expected)


def test_warp_sum_by_shfl_down_partial_last_warp():
    @cuda.jit(target="cpu")
    def warp_sums(x, out):
        i = cuda.grid(1)
        v = x[i] if i < x.size else 0.0
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(FULL, v, offset)
            offset //= 2
        if cuda.laneid == 0:
            out[i // 32] = v

    rng = np.random.default_rng()
    n = 1000
    x = rng.random(n)
    blocks = (n + 127) // 128
    out = np.zeros(blocks * 4)
    warp_sums[blocks, 128](x, out)
    padded = np.concatenate([x, np.zeros(blocks * 128 - n)])
    np.testing.assert_allclose(out, padded.reshape(-1, 32).sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("block", [64, 48])
def test_votes_and_ballot(block):
    @cuda.jit(target="cpu")
    def votes(p, out):
        i = cuda.grid(1)
        pred = p[i] != 0
        out[i, 0] = cuda.all_sync(FULL, pred)
        out[i, 1] = cuda.any_sync(FULL, pred)
        out[i, 2] = cuda.eq_sync(FULL, pred)
        out[i, 3] = cuda.ballot_sync(FULL, pred)

    rng = np.random.default_rng()
    n = block * 4
    p = (rng.random(n) < 0.5).astype(np.int32)
    p[:32] = 1  # an all-true warp, an all-false one
    p[block : block + 32] = 0
    out = np.zeros((n, 4), np.int64)
    votes[4, block](p, out)
    for lanes in warps(p, block):
        bits = p[lanes] != 0
        ballot = sum(1 << k for k in range(lanes.size) if bits[k])
        for i in lanes:
            assert list(out[i]) == [
                bits.all(),
                bits.any(),
                bits.all() or not bits.any(),
                np.int64(np.int32(np.uint32(ballot))),
            ]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_match_any_and_match_all(dtype):
    @cuda.jit(target="cpu")
    def match(x, out):
        i = cuda.grid(1)
        out[i, 0] = cuda.match_any_sync(FULL, x[i])
        mask, pred = cuda.match_all_sync(FULL, x[i])
        out[i, 1] = mask
        out[i, 2] = pred

    rng = np.random.default_rng()
    n = 128
    x = rng.integers(0, 4, n).astype(dtype)
    x[64:96] = 7  # a warp whose lanes all hold the same value
    out = np.zeros((n, 3), np.int64)
    match[2, 64](x, out)
    for lanes in warps(x, 64):
        for i in lanes:
            same = sum(1 << k for k, j in enumerate(lanes) if x[j] == x[i])
            assert np.uint32(out[i, 0]) == same
            uniform = bool((x[lanes] == x[lanes[0]]).all())
            assert np.uint32(out[i, 1]) == (FULL if uniform else 0) and out[i, 2] == uniform


def test_activemask_in_divergent_branches_and_lanemask_lt():
    @cuda.jit(target="cpu")
    def masks(split, out):
        i = cuda.grid(1)
        lane = cuda.laneid
        if lane < split[0]:
            out[i, 0] = cuda.activemask()
        else:
            out[i, 0] = cuda.activemask()
        out[i, 1] = cuda.lanemask_lt()

    rng = np.random.default_rng()
    k = int(rng.integers(1, 31))
    out = np.zeros((64, 2), np.int64)
    masks[1, 64](np.array([k], np.int32), out)
    low = (1 << k) - 1
    for i in range(64):
        lane = i % 32
        assert np.uint32(out[i, 0]) == (low if lane < k else FULL & ~low)
        assert out[i, 1] == (1 << lane) - 1


def test_partial_masks_in_two_halves_of_a_warp():
    @cuda.jit(target="cpu")
    def halves(x, out):
        i = cuda.grid(1)
        lane = cuda.laneid
        if lane < 16:
            out[i] = cuda.shfl_sync(0x0000FFFF, x[i], 15 - lane)
        else:
            out[i] = cuda.shfl_sync(0xFFFF0000, x[i], 47 - lane)

    rng = np.random.default_rng()
    x = rng.random(64)
    out = np.zeros(64)
    halves[2, 32](x, out)
    np.testing.assert_array_equal(out, x.reshape(-1, 16)[:, ::-1].ravel())


def test_syncwarp_orders_shared_memory_between_lanes():
    @cuda.jit(target="cpu")
    def rotate(x, out):
        buf = cuda.shared.array(64, dtype=np.float64)
        t = cuda.threadIdx.x
        buf[t] = x[cuda.grid(1)]
        cuda.syncwarp()
        warp = t // 32 * 32
        v = buf[warp + (t + 1) % 32]
        cuda.syncwarp(FULL)
        buf[t] = v * 2.0
        cuda.syncwarp()
        out[cuda.grid(1)] = buf[t]

    rng = np.random.default_rng()
    x = rng.random(128)
    out = np.zeros(128)
    rotate[2, 64](x, out)
    np.testing.assert_array_equal(out, 2 * np.roll(x.reshape(-1, 32), -1, axis=1).ravel())


def test_syncthreads_count_and_or():
    @cuda.jit(target="cpu")
    def reduce(p, out):
        i = cuda.grid(1)
        b = cuda.blockIdx.x
        c = cuda.syncthreads_count(p[i])
        a = cuda.syncthreads_and(p[i])
        o = cuda.syncthreads_or(p[i])
        if cuda.threadIdx.x == 0:
            out[b, 0] = c
            out[b, 1] = a
            out[b, 2] = o

    rng = np.random.default_rng()
    blocks, block = 6, 96
    p = (rng.random(blocks * block) < 0.5).astype(np.int32) * rng.integers(1, 5, blocks * block).astype(np.int32)
    p[:block] = 3  # every thread true
    p[block : 2 * block] = 0  # none
    out = np.zeros((blocks, 3), np.int32)
    reduce[blocks, block](p, out)
    per_block = p.reshape(blocks, block) != 0
    np.testing.assert_array_equal(out[:, 0], per_block.sum(axis=1))
    np.testing.assert_array_equal(out[:, 1], per_block.all(axis=1))
    np.testing.assert_array_equal(out[:, 2], per_block.any(axis=1))


def test_warp_functions_with_2d_blocks_use_linear_thread_ids():
    @cuda.jit(target="cpu")
    def ids(out):
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        linear = ty * cuda.blockDim.x + tx
        out[ty, tx] = cuda.shfl_sync(FULL, linear, 0)

    out = np.zeros((8, 16), np.int32)
    ids[1, (16, 8)](out)
    np.testing.assert_array_equal(out.ravel(), np.repeat(np.arange(0, 128, 32), 32))


def test_kernels_that_return_early_still_meet_at_barriers():
    """PTX's exit: a barrier waiting only on threads that have returned completes (numba's `if i >= n: return`)."""

    @cuda.jit(target="cpu")
    def tail(x, out):
        i = cuda.grid(1)
        if i >= x.size:
            return
        c = cuda.syncthreads_count(x[i] > 0.5)
        v = cuda.shfl_xor_sync(FULL, x[i], 1)
        out[i] = v + c * 0.0

    rng = np.random.default_rng()
    n = 100  # the last block has threads that return first, and a warp of 4 lanes
    x = rng.random(n)
    out = np.zeros(n)
    tail[2, 64](x, out)
    expected = np.array([x[i ^ 1] if (i ^ 1) < n else x[i] for i in range(n)])
    np.testing.assert_array_equal(out, expected)


def test_nanosleep_lets_the_blocks_other_threads_run():
    """A thread spinning on another thread's write with nanosleep in its loop sees it (the sleep yields)."""

    @cuda.jit(target="cpu")
    def handoff(flags, out):
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        if t == 0:
            while cuda.atomic.add(flags, b, 0) == 0:
                cuda.nanosleep(100)
            out[b] = flags[b]
        elif t == cuda.blockDim.x - 1:
            cuda.atomic.add(flags, b, b + 1)

    flags, out = np.zeros(8, np.int32), np.zeros(8, np.int32)
    handoff[8, 64](flags, out)
    np.testing.assert_array_equal(out, np.arange(1, 9))
