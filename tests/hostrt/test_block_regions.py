"""A block's threads as loops between its barriers (cpp/src/hostgen/host_block_regions.cpp): kernels whose threads
meet only at cuda.syncthreads, reached by every thread alike, run each stretch between two barriers as a loop over
the block's threads; what a thread keeps across a barrier has one copy per thread. Every other kernel keeps its
fibers. Results against numpy on fresh random data."""

import numpy as np

from cujit import cuda, float32, float64, int32


def runs_as_loops(kernel):
    return kernel.overloads[next(iter(kernel.overloads))].native.runs_as_loop


def test_the_tiled_matmul_of_numbas_docs(rng):
    tpb = 16

    @cuda.jit(target="cpu")
    def matmul(A, B, C):
        sA = cuda.shared.array(shape=(tpb, tpb), dtype=float32)
        sB = cuda.shared.array(shape=(tpb, tpb), dtype=float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tmp = float32(0.0)
        for i in range(cuda.gridDim.x):
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * tpb) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * tpb]
            if x < B.shape[1] and (ty + i * tpb) < B.shape[0]:
                sB[ty, tx] = B[ty + i * tpb, x]
            cuda.syncthreads()
            for j in range(tpb):
                tmp += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    n = int(rng.integers(40, 100))
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    blocks = (n + tpb - 1) // tpb
    matmul[(blocks, blocks), (tpb, tpb)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
    assert runs_as_loops(matmul)


def test_a_block_tree_sum(rng):
    @cuda.jit(target="cpu")
    def block_sums(x, out):
        buf = cuda.shared.array(256, dtype=float64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = cuda.blockDim.x // 2
        while step > 0:
            if t < step:
                buf[t] += buf[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[cuda.blockIdx.x] = buf[0]

    x = rng.random(int(rng.integers(5000, 9000)))
    blocks = (x.size + 255) // 256
    out = np.zeros(blocks)
    block_sums[blocks, 256](x, out)
    padded = np.concatenate([x, np.zeros(blocks * 256 - x.size)])
    np.testing.assert_allclose(out, padded.reshape(blocks, 256).sum(axis=1))
    assert runs_as_loops(block_sums)


def test_what_a_thread_keeps_across_barriers_is_its_own(rng):
    @cuda.jit(target="cpu")
    def keep(x, out):
        t = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
        mine = cuda.local.array(8, float64)
        for k in range(8):
            mine[k] = x[cuda.blockIdx.x, t] * k
        total = 0.0
        for rounds in range(3):  # a barrier in a uniform loop, the locals and the sum live across it
            cuda.syncthreads()
            for k in range(8):
                total += mine[k] + rounds
        out[cuda.blockIdx.x, t] = total

    x = rng.random((3, 96))
    out = np.zeros((3, 96))
    keep[3, (32, 3)](x, out)
    np.testing.assert_allclose(out, x * 28 * 3 + 8 * 3)
    assert runs_as_loops(keep)


def test_shared_memory_reversal_with_a_block_of_three_dimensions(rng):
    @cuda.jit(target="cpu")
    def reverse(x, out):
        buf = cuda.shared.array(120, dtype=int32)
        t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
        n = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
        base = cuda.blockIdx.x * n
        buf[t] = x[base + t]
        cuda.syncthreads()
        out[base + t] = buf[n - 1 - t]

    x = rng.integers(0, 1000, 4 * 120, dtype=np.int32)
    out = np.zeros_like(x)
    reverse[4, (5, 4, 6)](x, out)
    np.testing.assert_array_equal(out, x.reshape(4, 120)[:, ::-1].ravel())
    assert runs_as_loops(reverse)


def test_barriers_that_threads_may_reach_differently_keep_fibers():
    @cuda.jit(target="cpu")
    def early_exit(x):  # threads past the end leave before the barrier (CUDA leaves it undefined)
        i = cuda.grid(1)
        if i >= x.size:
            return
        cuda.syncthreads()
        x[i] += 1

    @cuda.jit(target="cpu")
    def loop_by_thread(x):  # a loop whose trip count is the thread's: its barrier is reached differently
        t = cuda.threadIdx.x
        for _ in range(t % 2):
            cuda.syncthreads()
        x[t] = t

    @cuda.jit(device=True)
    def wait_in_device_function():
        cuda.syncthreads()

    @cuda.jit(target="cpu")
    def barrier_in_callee(x):
        x[cuda.threadIdx.x] = 1
        wait_in_device_function()

    @cuda.jit(target="cpu")
    def counting(x, out):  # a barrier reduction is another collective
        out[0] = cuda.syncthreads_count(x[cuda.threadIdx.x] > 0)

    x = np.zeros(40, np.int32)
    early_exit[2, 32](x)
    assert (x == 1).all()
    barrier_in_callee[1, 32](x)
    counting[1, 32](np.ones(32, np.int32), x)
    assert x[0] == 32
    for k in (early_exit, barrier_in_callee, counting):
        assert not runs_as_loops(k), k
    loop_by_thread[1, 2](x)  # (the fibers let thread 1 pass once thread 0 has returned)
    assert list(x[:2]) == [0, 1]
    assert not runs_as_loops(loop_by_thread)


def test_too_much_kept_per_thread_keeps_fibers():
    @cuda.jit(target="cpu")
    def big(out):
        t = cuda.threadIdx.x
        mine = cuda.local.array(1024, float64)  # 8 KiB a thread across the barrier
        for k in range(1024):
            mine[k] = k + t
        cuda.syncthreads()
        out[t] = mine[1023 - t]

    out = np.zeros(4)
    big[1, 4](out)
    np.testing.assert_array_equal(out, 1023 - np.arange(4) + np.arange(4))
    assert not runs_as_loops(big)


def test_barriers_in_nested_uniform_loops_and_a_uniform_return(rng):
    @cuda.jit(target="cpu")
    def nested(x, out, rounds, flag):
        buf = cuda.shared.array(64, dtype=float64)
        t = cuda.threadIdx.x
        acc = 0.0
        for r in range(rounds):
            for s in range(2):
                buf[t] = x[t] * (r + 1) + s
                cuda.syncthreads()
                acc += buf[(t + 1) % 64]
                cuda.syncthreads()
            if flag:  # uniform: a kernel argument
                cuda.syncthreads()
                if r == rounds - 2:
                    out[t] = acc
                    return  # every thread leaves at the same point
        out[t] = -acc

    def expected(x, rounds, stop):
        acc = np.zeros(64)
        for r in range(rounds):
            for s in range(2):
                acc += np.roll(x * (r + 1) + s, -1)
            if r == stop:
                break
        return acc

    x = rng.random(64)
    out = np.zeros(64)
    nested[1, 64](x, out, 4, True)
    np.testing.assert_allclose(out, expected(x, 4, 2))
    nested[1, 64](x, out, 3, False)
    np.testing.assert_allclose(out, -expected(x, 3, None))
    assert runs_as_loops(nested)


def test_a_shared_memory_scan_keeps_each_threads_value_across_barriers(rng):
    @cuda.jit(target="cpu")
    def scan(x, out):  # Hillis-Steele: read, barrier, add, barrier, per step
        buf = cuda.shared.array(128, dtype=int32)
        t = cuda.threadIdx.x
        buf[t] = x[t]
        cuda.syncthreads()
        d = 1
        while d < cuda.blockDim.x:
            v = buf[t - d] if t >= d else 0
            cuda.syncthreads()
            buf[t] += v
            cuda.syncthreads()
            d *= 2
        out[t] = buf[t]

    x = rng.integers(0, 10, 128, dtype=np.int32)
    out = np.zeros_like(x)
    scan[1, 128](x, out)
    np.testing.assert_array_equal(out, np.cumsum(x))
    assert runs_as_loops(scan)


def test_the_thread_loops_run_along_the_axis_the_accesses_are_contiguous_in(rng):
    # The innermost loop over a block's threads is y when the kernel's arrays are read along y (i, j = grid(2) and
    # a[i, j] of a C-order array: consecutive x are rows apart), x otherwise. `seen` records the order the threads
    # ran in: a counter in shared memory that no barrier orders (a race on a GPU; one thread after another here).
    def make(rows_along_x):
        @cuda.jit(target="cpu")
        def k(a, out, seen):
            n = cuda.shared.array(1, dtype=int32)
            i, j = cuda.grid(2)
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            if tx == 0 and ty == 0:
                n[0] = 0
            cuda.syncthreads()
            if rows_along_x:
                out[i, j] = 2 * a[i, j] + a[i, j - 1 if j > 0 else j]
            else:
                out[j, i] = 2 * a[j, i] + a[j, i - 1 if i > 0 else i]
            if cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0:
                at = n[0]
                seen[at] = tx * 100 + ty
                n[0] = at + 1

        return k

    for rows_along_x, fastest in ((True, "y"), (False, "x")):
        k = make(rows_along_x)
        a = rng.random((64, 64))
        out = np.zeros_like(a)
        seen = np.full(16 * 16, -1, np.int64)
        k[(4, 4), (16, 16)](a, out, seen)
        np.testing.assert_allclose(out, 2 * a + np.concatenate([a[:, :1], a[:, :-1]], axis=1))
        assert runs_as_loops(k)
        (face,) = k.overloads.values()
        assert face.native.blocks_axis == (1 if fastest == "y" else 0)  # blocks taken along the rows too
        second = (0 * 100 + 1) if fastest == "y" else (1 * 100 + 0)  # the thread after (0, 0)
        assert seen[0] == 0 and seen[1] == second, (fastest, seen[:4])
        assert sorted(seen) == sorted(tx * 100 + ty for tx in range(16) for ty in range(16))


def test_values_the_same_in_every_thread_updated_in_loops_between_barriers(rng):
    # A value every thread computes alike (`k`, `step`) is kept once for the block, not per thread: each thread
    # starts a region with the value it held at the region's start, also in a loop that updates it before reading.
    @cuda.jit(target="cpu")
    def k_loop(x, out, n):
        buf = cuda.shared.array(128, dtype=float64)
        t = cuda.threadIdx.x
        k = 0
        step = 1
        for j in range(n):
            k += j * step
            step += 1
        buf[t] = x[t] + k
        cuda.syncthreads()
        for j in range(n):
            k += step
        out[t] = buf[(t + 1) % 128] + k + step

    x = rng.random(128)
    out = np.zeros(128)
    n = int(rng.integers(3, 9))
    k, step = 0, 1
    for j in range(n):
        k += j * step
        step += 1
    first = k
    k += n * step
    k_loop[1, 128](x, out, n)
    np.testing.assert_allclose(out, np.roll(x + first, -1) + k + step)
    assert runs_as_loops(k_loop)


def test_threads_that_sit_a_level_out_and_those_that_must_not_be_skipped(rng):
    # Where every thread reaches `if t < bound` alike and the other side does nothing, the threads from `bound` on
    # end their row; where they compute something first, do something else, or meet the test in a loop, they run.
    @cuda.jit(target="cpu")
    def guarded(x, out, lim):
        buf = cuda.shared.array(128, dtype=float64)
        t = cuda.threadIdx.x
        v = x[t] * 2.0  # every thread's own, kept across the barrier: computed before the test
        buf[t] = 0.0
        cuda.syncthreads()
        if t < lim:
            buf[t] = v
        cuda.syncthreads()
        acc = 0.0
        for k in range(3):  # the test in a loop: reached three times by every thread
            if t < lim + k:
                acc += 1.0
        cuda.syncthreads()
        if lim > t:  # the other side does something
            out[t] = buf[t] + v + acc
        else:
            out[t] = -v - acc
        step = 64
        while step > 0:  # the tree: the threads from `step` on sit each level out
            if t < step:
                buf[t] += buf[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[128] = buf[0]

    x = rng.random(128)
    lim = int(rng.integers(10, 100))
    out = np.zeros(129)
    guarded[1, 128](x, out, lim)
    t = np.arange(128)
    acc = sum((t < lim + k).astype(float) for k in range(3))
    buf = np.where(t < lim, 2 * x, 0.0)
    want = np.where(t < lim, buf + 2 * x + acc, -2 * x - acc)
    np.testing.assert_allclose(out[:128], want)
    np.testing.assert_allclose(out[128], buf.sum())
    assert runs_as_loops(guarded)


def test_a_tiles_joined_bounds_check_still_reports_the_thread_outside_it(rng):
    # The two axes' checks of a 16 x 16 shared tile are one test of `(tx | ty) < 16` to LLVM, split back into two so
    # that the loops lose them where they provably hold: a block taller than the tile still raises IndexError.
    @cuda.jit(target="cpu")
    def transpose_tile(a, out):
        tile = cuda.shared.array((16, 16), dtype=float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        tile[ty, tx] = a[ty, tx]
        cuda.syncthreads()
        out[tx, ty] = tile[ty, tx]

    a = rng.random((32, 32), dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    transpose_tile[1, (16, 16)](a, out)
    np.testing.assert_array_equal(out[:16, :16], a[:16, :16].T)
    assert runs_as_loops(transpose_tile)
    try:
        transpose_tile[1, (16, 20)](a, out)
    except IndexError as e:
        assert "index (16, 0) is out of bounds for axis 0" in str(e) and "thread (0, 16, 0)" in str(e), str(e)
    else:
        raise AssertionError("the thread at ty = 16 wrote outside the tile without an IndexError")
