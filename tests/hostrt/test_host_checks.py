"""Bounds checks on the CPU target: an out-of-bounds array index raises IndexError after the grid has run, naming
the kernel, the array (and whether it is shared or local memory), the index, the axis and its size, and the
thread's block and thread ids; the bad access itself goes to a scratch slot (memory around the array is left
alone), negative indices wrap as in Python first, ``boundscheck=False`` turns the checks off. No GPU needed."""

import numpy as np
import pytest

from cujit import cuda

pytestmark = pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning")


@cuda.jit(target="cpu")
def copy_shifted(x, out, shift):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i + shift]


def test_read_out_of_bounds_names_kernel_array_index_and_thread():
    x = np.arange(100.0)
    out = np.zeros(100)
    with pytest.raises(IndexError) as info:
        copy_shifted[4, 32](x, out, 3)
    message = str(info.value)
    assert "copy_shifted" in message
    assert "array 'x'" in message and "test_host_checks.py" in message
    assert "index 100 is out of bounds for axis 0 with size 100" in message
    # The first bad access: thread 97 (block 3, thread 1) reads x[100]; threads run block by block, but blocks
    # run in parallel: any of the three bad threads may come first.
    assert any(f"block (3, 0, 0), thread ({t}, 0, 0)" in message for t in (1, 2, 3)), message
    np.testing.assert_array_equal(out[:97], x[3:])  # the good threads ran


def test_the_kernel_runs_again_after_an_error():
    x = np.arange(10.0)
    out = np.zeros(10)
    with pytest.raises(IndexError):
        copy_shifted[1, 10](x, out, 1)
    copy_shifted[1, 10](x, out, 0)
    np.testing.assert_array_equal(out, x)


def test_an_out_of_bounds_write_goes_nowhere():
    @cuda.jit(target="cpu")
    def fill(a, n):
        for i in range(n):
            a[i] = 7

    backing = np.zeros(30, np.int64)
    view = backing[10:20]
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 10 of array 'a'"):
        fill[1, 1](view, 15)
    assert (backing[10:20] == 7).all()
    assert (backing[:10] == 0).all() and (backing[20:] == 0).all()


def test_negative_indices_wrap_before_the_check():
    @cuda.jit(target="cpu")
    def from_end(x, out, k):
        out[0] = x[-1]
        out[1] = x[k]

    x = np.arange(10, dtype=np.int32)
    out = np.zeros(2, np.int32)
    from_end[1, 1](x, out, -10)
    assert list(out) == [9, 0]
    with pytest.raises(IndexError, match=r"index -11 is out of bounds for axis 0 with size 10 of array 'x'"):
        from_end[1, 1](x, out, -11)


def test_two_dimensional_index_names_its_axis():
    @cuda.jit(target="cpu")
    def transpose(a, out):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            out[j, i] = a[i, j + 1]

    a = np.ones((4, 6))
    out = np.zeros((6, 4))
    with pytest.raises(IndexError) as info:
        transpose[(1, 1), (4, 6)](a, out)
    message = str(info.value)
    assert "is out of bounds for axis 1 with size 6 of array 'a'" in message and "(shape (4, 6))" in message
    assert "index (" in message and ", 6)" in message


def test_a_view_taken_with_a_bad_index_is_reported_and_empty():
    @cuda.jit(target="cpu")
    def row_sums(a, out, k):
        i = cuda.grid(1)
        if i < out.size:
            row = a[i + k]  # a view: the row's index is checked
            s = 0.0
            for j in range(row.size):  # an empty view for the bad row: nothing read
                s += row[j]
            out[i] = s

    a = np.arange(12.0).reshape(4, 3)
    out = np.zeros(4)
    row_sums[1, 4](a, out, 0)
    np.testing.assert_array_equal(out, a.sum(axis=1))
    with pytest.raises(
        IndexError,
        match=r"index 4 is out of bounds for axis 0 with size 4 of array 'a'.*"
        r"thread \(2, 0, 0\)",
    ):  # the block's threads run in order here
        row_sums[1, 4](a, out, 2)
    np.testing.assert_array_equal(out, [a[2].sum(), a[3].sum(), 0, 0])


def test_shared_and_local_arrays_are_named_as_such():
    @cuda.jit(target="cpu")
    def shared_overrun(out, k):
        buf = cuda.shared.array(32, np.float32)
        t = cuda.threadIdx.x
        buf[t] = t
        cuda.syncthreads()
        out[t] = buf[t + k]

    out = np.zeros(32, np.float32)
    with pytest.raises(IndexError, match=r"array 'buf' .*\(shared memory\)"):
        shared_overrun[1, 32](out, 1)
    shared_overrun[1, 32](out, 0)
    np.testing.assert_array_equal(out, np.arange(32))

    @cuda.jit(target="cpu")
    def local_overrun(out, n):
        tmp = cuda.local.array(8, np.int64)
        for i in range(n):
            tmp[i] = i
        out[cuda.grid(1)] = tmp[0]

    with pytest.raises(
        IndexError,
        match=r"index 8 is out of bounds for axis 0 with size 8 of array 'tmp' "
        r".*\(local memory\)",
    ):
        local_overrun[2, 4](np.zeros(8, np.int64), 9)


def test_atomics_check_their_index():
    @cuda.jit(target="cpu")
    def histogram(values, bins):
        i = cuda.grid(1)
        if i < values.size:
            cuda.atomic.add(bins, values[i], 1)

    bins = np.zeros(4, np.int32)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4 of array 'bins'"):
        histogram[1, 8](np.array([0, 1, 2, 3, 4, 1, 1, 0], np.int64), bins)
    assert list(bins) == [2, 3, 1, 1]


def test_boundscheck_false_turns_the_checks_off():
    @cuda.jit(target="cpu", boundscheck=False)
    def unchecked(a, n):
        for i in range(n):
            a[i] = 5

    backing = np.zeros(20, np.int64)
    unchecked[1, 1](backing[:10], 12)  # writes past the view, inside the allocation: what the GPU would do
    assert (backing[:12] == 5).all() and (backing[12:] == 0).all()
    assert "__cujit_host_index_error" not in next(iter(unchecked.inspect_llvm().values()))


def test_boundscheck_is_still_refused_for_the_gpu():
    with pytest.raises(NotImplementedError, match="bounds checking"):
        cuda.jit(target="cuda", boundscheck=True)


# ---- debug=True: uninitialised shared memory and data races on shared memory ----------------------------


def test_debug_reports_a_read_of_uninitialised_shared_memory():
    @cuda.jit(target="cpu", debug=True, opt=False)
    def forgot_one(out):
        buf = cuda.shared.array(64, np.int32)
        t = cuda.threadIdx.x
        if t != 5:
            buf[t] = t
        cuda.syncthreads()
        out[t] = buf[63 - t]

    out = np.zeros(64, np.int32)
    with pytest.raises(RuntimeError) as info:
        forgot_one[2, 64](out)
    message = str(info.value)
    assert "forgot_one" in message and "debug=True" in message
    assert "thread (58, 0, 0) reads shared memory no thread of its block has written" in message
    assert "array 'buf'" in message and "byte 20 of the block's shared memory" in message
    assert "block (0, 0, 0)" in message or "block (1, 0, 0)" in message


def test_debug_reports_races_between_barriers():
    @cuda.jit(target="cpu", debug=True, opt=False)
    def no_barrier(out, k):
        buf = cuda.shared.array(32, np.float64)
        t = cuda.threadIdx.x
        buf[t] = t
        cuda.syncthreads()
        buf[t] = 2 * t
        if k == 1:
            cuda.syncthreads()
        out[t] = buf[(t + 1) % 32]  # reads the neighbour's new value: needs the barrier

    out = np.zeros(32)
    no_barrier[1, 32](out, 1)  # with the barrier: no report
    np.testing.assert_array_equal(out, 2 * ((np.arange(32) + 1) % 32))
    # Without: thread 0 reads buf[1] and thread 1 writes it between the same two barriers.
    with pytest.raises(
        RuntimeError,
        match=r"a data race on shared memory: thread \(0, 0, 0\) reads and thread "
        r"\(1, 0, 0\) writes array 'buf' at .*test_host_checks.py:\d+ \(byte 8 ",
    ):
        no_barrier[1, 32](out, 0)

    @cuda.jit(target="cpu", debug=True, opt=False)
    def same_slot(out):
        flag = cuda.shared.array(1, np.int32)
        t = cuda.threadIdx.x
        if t == 0:
            flag[0] = 0
        cuda.syncthreads()
        flag[0] = t  # every thread writes the one element between the same barriers
        cuda.syncthreads()
        out[t] = flag[0]

    with pytest.raises(RuntimeError, match=r"threads \(0, 0, 0\) and \(1, 0, 0\) both write array 'flag'"):
        same_slot[1, 8](np.zeros(8, np.int32))


def test_debug_accepts_a_correct_reduction_and_atomics():
    @cuda.jit(target="cpu", debug=True, opt=False)
    def block_sum(x, out):
        buf = cuda.shared.array(128, np.float64)
        count = cuda.shared.array(1, np.int32)
        t = cuda.threadIdx.x
        if t == 0:
            count[0] = 0
        buf[t] = x[cuda.grid(1)]
        cuda.syncthreads()
        cuda.atomic.add(count, 0, 1)  # atomics do not race
        step = 64
        while step > 0:
            if t < step:
                buf[t] += buf[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[cuda.blockIdx.x, 0] = buf[0]
            out[cuda.blockIdx.x, 1] = count[0]

    x = np.random.default_rng().random(512)
    out = np.zeros((4, 2))
    block_sum[4, 128](x, out)
    np.testing.assert_allclose(out[:, 0], x.reshape(4, 128).sum(axis=1), rtol=1e-12)
    assert (out[:, 1] == 128).all()


def test_numba_boundscheck_environment_variable(monkeypatch):
    def fill(a, n):
        for i in range(n):
            a[i] = 3

    backing = np.zeros(20, np.int64)
    monkeypatch.setenv("NUMBA_BOUNDSCHECK", "0")
    cuda.jit(fill, target="cpu")[1, 1](backing[:10], 12)  # checks off for every kernel
    assert (backing[:12] == 3).all()
    monkeypatch.setenv("NUMBA_BOUNDSCHECK", "1")
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        cuda.jit(fill, target="cpu", boundscheck=False)[1, 1](backing[:10], 12)
    monkeypatch.setenv("NUMBA_BOUNDSCHECK", "yes")
    with pytest.raises(ValueError, match="NUMBA_BOUNDSCHECK='yes'"):
        cuda.jit(fill, target="cpu")[1, 1](backing[:10], 1)


def test_debug_takes_syncwarp_as_ordering_a_warps_lanes():
    @cuda.jit(target="cpu", debug=True, opt=False)
    def warp_sum(x, out, sync):
        buf = cuda.shared.array(32, np.float64)
        t = cuda.threadIdx.x
        buf[t] = x[t]
        cuda.syncwarp()
        step = 16
        while step > 0:
            v = 0.0
            if t < step:
                v = buf[t + step]
            if sync:
                cuda.syncwarp()
            if t < step:
                buf[t] += v
            if sync:
                cuda.syncwarp()
            step //= 2
        if t == 0:
            out[0] = buf[0]

    x = np.arange(32.0)
    out = np.zeros(1)
    warp_sum[1, 32](x, out, True)
    assert out[0] == x.sum()
    # Without the syncwarps: lane 0 runs its rounds first and reads buf[1] before lane 1 writes it, in one interval.
    with pytest.raises(
        RuntimeError,
        match=r"a data race on shared memory: thread \(0, 0, 0\) reads and thread "
        r"\(1, 0, 0\) writes array 'buf'",
    ):
        warp_sum[1, 32](x, out, False)
