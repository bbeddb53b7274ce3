"""Cooperative groups on the CPU target (issue 30): a kernel reaching ``cuda.cg.this_grid().sync()`` launches
cooperatively (every block of the grid resident at once), so a grid barrier orders all blocks' writes;
``max_cooperative_grid_blocks`` answers for the CPU. Compared against numpy on fresh random data. No GPU needed."""

import numpy as np
import pytest

from cujit import cuda


def test_grid_sync_orders_every_blocks_writes():
    @cuda.jit(target="cpu")
    def reverse(x, tmp, out):
        g = cuda.cg.this_grid()
        i = cuda.grid(1)
        tmp[i] = x[i] * 2.0
        g.sync()
        out[i] = tmp[tmp.size - 1 - i]  # written by another block

    rng = np.random.default_rng()
    n = 8 * 64
    x = rng.random(n)
    tmp, out = np.zeros(n), np.zeros(n)
    reverse[8, 64](x, tmp, out)
    np.testing.assert_array_equal(out, 2 * x[::-1])


def test_sequential_rows_with_a_grid_sync_per_row():
    """numba-cuda's cooperative-groups example: each row depends on the previous row, computed by other blocks."""

    @cuda.jit(target="cpu")
    def sequential_rows(m):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        rows, cols = m.shape
        for row in range(1, rows):
            opposite = cols - col - 1
            m[row, col] = m[row - 1, opposite] + 1
            g.sync()

    rng = np.random.default_rng()
    rows, cols = 16, 4 * 32
    m = np.zeros((rows, cols), np.int32)
    m[0] = rng.integers(0, 100, cols)
    expected = m.copy()
    for row in range(1, rows):
        expected[row] = expected[row - 1, ::-1] + 1
    sequential_rows[4, 32](m)
    np.testing.assert_array_equal(m, expected)


def test_grid_sync_with_block_barriers_and_warp_functions():
    @cuda.jit(target="cpu")
    def two_phases(x, partial, out):
        g = cuda.cg.this_grid()
        buf = cuda.shared.array(64, dtype=np.float64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        v = x[i]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
        if cuda.laneid == 0:
            buf[t // 32] = v
        cuda.syncthreads()
        if t == 0:
            partial[cuda.blockIdx.x] = buf[0] + buf[1]
        g.sync()
        if i == 0:
            s = 0.0
            for b in range(partial.size):
                s += partial[b]
            out[0] = s

    rng = np.random.default_rng()
    blocks = 6
    x = rng.random(blocks * 64)
    partial, out = np.zeros(blocks), np.zeros(1)
    two_phases[blocks, 64](x, partial, out)
    np.testing.assert_allclose(partial, x.reshape(blocks, 64).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-12)


def test_max_cooperative_grid_blocks_as_users_call_it():
    @cuda.jit("void(float64[::1])", target="cpu")
    def grid_kernel(a):
        g = cuda.cg.this_grid()
        a[cuda.grid(1)] += 1.0
        g.sync()

    from cujit import float64

    overload = grid_kernel.overloads[(float64[::1],)]
    most = overload.max_cooperative_grid_blocks(128)
    assert isinstance(most, int) and most >= 16  # 2048 threads of 128 per worker, at least one worker
    assert overload.max_cooperative_grid_blocks((16, 8)) == most
    assert overload.max_cooperative_grid_blocks(1024, 0) * 1024 <= most * 128
    assert overload.max_cooperative_grid_blocks(2048) == 0  # more threads than a block may have
    with pytest.raises(ValueError, match="blockdim"):
        overload.max_cooperative_grid_blocks(0)
    a = np.zeros(16 * 128)
    grid_kernel[16, 128](a)
    np.testing.assert_array_equal(a, 1.0)


def test_a_cooperative_grid_larger_than_the_cpu_holds_is_an_error():
    @cuda.jit(target="cpu")
    def grid_kernel(a):
        cuda.cg.this_grid().sync()
        a[0] = 1

    a = np.zeros(1)
    grid_kernel[1, 32](a)  # compiles the specialisation
    most = next(iter(grid_kernel.overloads.values())).max_cooperative_grid_blocks(1024)
    with pytest.raises(ValueError, match="max_cooperative_grid_blocks"):
        grid_kernel[most + 1, 1024](a)


def test_kernels_without_grid_sync_do_not_launch_cooperatively():
    @cuda.jit(target="cpu")
    def plain(a):
        a[cuda.grid(1)] = cuda.blockIdx.x

    a = np.zeros(100_000, np.int32)
    plain[a.size // 100, 100](a)  # far more blocks than a cooperative launch may have
    np.testing.assert_array_equal(a, np.arange(a.size) // 100)
    assert not next(iter(plain.overloads.values())).cooperative


def test_the_largest_cooperative_grid_runs():
    @cuda.jit(target="cpu")
    def rotate(x, tmp, out):
        g = cuda.cg.this_grid()
        i = cuda.grid(1)
        tmp[i] = x[i] + 1
        g.sync()
        out[i] = tmp[(i + cuda.blockDim.x) % tmp.size]  # the next block's first write

    blocks = _core_max_blocks(256)
    rng = np.random.default_rng()
    x = rng.integers(0, 1000, blocks * 256).astype(np.int64)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    rotate[blocks, 256](x, tmp, out)
    np.testing.assert_array_equal(out, np.roll(x + 1, -256))


def _core_max_blocks(threads):
    from cujit import _core

    return _core.host.max_cooperative_blocks(threads)
