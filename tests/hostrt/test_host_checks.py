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

    with pytest.raises(IndexError, match=r"index 8 is out of bounds for axis 0 with size 8 of array 'tmp' "
                                         r".*\(local memory\)"):
        local_overrun[2, 4](np.zeros(8, np.int64), 9)


def test_atomics_check_their_index():
    @cuda.jit(target="cpu")
    def histogram(values, bins):
        i = cuda.grid(1)
        if i < values.size:
            cuda.atomic.add(bins, values[i], 1)

    bins = np.zeros(4, np.int32)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
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
