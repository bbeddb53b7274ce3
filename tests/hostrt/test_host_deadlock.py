"""Deadlocks on the CPU target (issue 30): a barrier, warp function or grid sync that can never complete (it would
hang on a GPU) ends the launch with a RuntimeError naming the kernel, the calls with their source lines, and the
block and thread ids waiting at each; never a hang. The runtime stays usable afterwards. No GPU needed."""

import re
import threading

import numpy as np
import pytest

from cujit import cuda

FULL = 0xFFFFFFFF


def line_of(fn, text):
    """The file line of the first source line of `fn` containing `text`."""
    import inspect

    lines, first = inspect.getsourcelines(fn.py_func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_syncthreads_against_a_warp_shuffle_is_reported():
    @cuda.jit(target="cpu")
    def split(out):
        t = cuda.threadIdx.x
        if t < 16:
            cuda.syncthreads()  # waits for lanes 16..31
        else:
            out[t] = cuda.shfl_sync(FULL, t, 0)  # waits for lanes 0..15

    with pytest.raises(RuntimeError) as info:
        split[3, 32](np.zeros(32))
    message = str(info.value)
    assert "kernel 'test_syncthreads_against_a_warp_shuffle_is_reported.<locals>.split' deadlocked" in message
    assert re.search(r"block \(\d, 0, 0\)", message)
    assert (
        f"16 threads (0, 0, 0)..(15, 0, 0) wait at cuda.syncthreads() at {__file__}:"
        f"{line_of(split, 'cuda.syncthreads()')}"
    ) in message
    assert (
        f"16 threads (16, 0, 0)..(31, 0, 0) wait at cuda.shfl_sync() with mask 0xffffffff at {__file__}:"
        f"{line_of(split, 'shfl_sync')}"
    ) in message


def test_different_kinds_of_block_barrier_are_reported():
    @cuda.jit(target="cpu")
    def mixed(p, out):
        t = cuda.threadIdx.x
        if p[t] > 0:
            out[t] = cuda.syncthreads_count(True)
        else:
            cuda.syncthreads()

    p = np.zeros(64, np.int32)
    p[np.random.default_rng().choice(64, 10, replace=False)] = 1
    with pytest.raises(RuntimeError, match="different kinds of barrier") as info:
        mixed[1, 64](p, np.zeros(64, np.int32))
    message = str(info.value)
    assert "wait at cuda.syncthreads_count()" in message and "wait at cuda.syncthreads()" in message
    assert "10 threads" in message and "54 threads" in message


def test_a_grid_sync_after_a_block_returned_is_reported():
    @cuda.jit(target="cpu")
    def early(out):
        g = cuda.cg.this_grid()
        if cuda.blockIdx.x == 2:
            return
        g.sync()
        out[cuda.grid(1)] = 1

    with pytest.raises(RuntimeError) as info:
        early[4, 32](np.zeros(128))
    message = str(info.value)
    assert "deadlocked" in message and "wait at grid.sync()" in message
    assert "1 block of the grid returned whole ((2, 0, 0))" in message
    for b in (0, 1, 3):
        assert f"block ({b}, 0, 0):" in message


def test_a_syncwarp_mask_naming_a_lane_at_a_block_barrier_is_reported():
    @cuda.jit(target="cpu")
    def lanes(out):
        t = cuda.threadIdx.x
        if t == 5:
            cuda.syncthreads()
        else:
            cuda.syncwarp(FULL)
            out[t] = 1

    with pytest.raises(RuntimeError) as info:
        lanes[1, 32](np.zeros(32))
    message = str(info.value)
    assert "thread (5, 0, 0) wait at cuda.syncthreads()" in message
    assert (
        "31 threads (0, 0, 0)..(4, 0, 0), (6, 0, 0)..(31, 0, 0) wait at cuda.syncwarp() with mask 0xffffffff" in message
    )


def test_a_lane_outside_its_own_mask_is_reported():
    @cuda.jit(target="cpu")
    def wrong_mask(out):
        t = cuda.threadIdx.x
        out[t] = cuda.ballot_sync(0x0000FFFF, t > 3)

    with pytest.raises(
        RuntimeError,
        match=r"cuda.ballot_sync\(\) was called by lane 16 of a warp with mask "
        r"0x0000ffff",
    ):
        wrong_mask[1, 32](np.zeros(32, np.int32))


def test_a_deadlock_in_one_block_of_many_names_that_block_and_2d_thread_ids():
    @cuda.jit(target="cpu")
    def one_bad_block(out):
        ty = cuda.threadIdx.y
        if cuda.blockIdx.x == 5 and cuda.blockIdx.y == 1 and ty == 1:
            cuda.syncwarp()  # the warp's other half waits at the block barrier below
        else:
            cuda.syncthreads()
        out[0] = 1

    with pytest.raises(RuntimeError) as info:
        one_bad_block[(7, 3), (16, 4)](np.zeros(1))
    message = str(info.value)
    assert "block (5, 1, 0):" in message
    assert "16 threads (0, 1, 0)..(15, 1, 0) wait at cuda.syncwarp() with mask 0xffffffff" in message
    assert "48 threads (0, 0, 0)..(15, 0, 0), (0, 2, 0)..(15, 3, 0) wait at cuda.syncthreads()" in message


def test_the_runtime_goes_on_after_a_deadlock_and_from_several_threads():
    @cuda.jit(target="cpu")
    def stuck(out):
        if cuda.threadIdx.x == 0:
            cuda.syncwarp(0x3)
        else:
            cuda.syncthreads()

    @cuda.jit(target="cpu")
    def block_sums(x, out):
        buf = cuda.shared.array(128, dtype=np.float64)
        t = cuda.threadIdx.x
        buf[t] = x[cuda.grid(1)]
        cuda.syncthreads()
        if t == 0:
            s = 0.0
            for k in range(128):
                s += buf[k]
            out[cuda.blockIdx.x] = s

    rng = np.random.default_rng()
    failures = []

    def run(seed):
        try:
            local = np.random.default_rng(seed)
            x = local.random(64 * 128)
            out = np.zeros(64)
            for _ in range(3):
                block_sums[64, 128](x, out)
                np.testing.assert_allclose(out, x.reshape(64, 128).sum(axis=1), rtol=1e-12)
                with pytest.raises(RuntimeError, match="deadlocked"):
                    stuck[4, 64](np.zeros(1))
        except BaseException as e:  # noqa: BLE001  (reported below)
            failures.append(e)

    threads = [threading.Thread(target=run, args=(int(rng.integers(1 << 30)),)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_barriers_in_divergent_branches_are_reported_under_debug():
    def balanced(x, out):
        t = cuda.threadIdx.x
        if x[t] > 0.5:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        out[t] = x[t]

    rng = np.random.default_rng()
    x = rng.random(64)
    x[0], x[1] = 0.9, 0.1  # both branches taken
    out = np.zeros(64)
    cuda.jit(target="cpu")(balanced)[1, 64](x, out)  # without debug: every call of the barrier counts (as bar.sync)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(RuntimeError, match="reached a barrier in divergent code") as info:
        cuda.jit(target="cpu", debug=True, opt=False)(balanced)[1, 64](x, out)
    message = str(info.value)
    high, low = int((x > 0.5).sum()), int((x <= 0.5).sum())
    assert f"{high} threads" in message and f"{low} threads" in message
    assert message.count("wait at cuda.syncthreads()") == 2
