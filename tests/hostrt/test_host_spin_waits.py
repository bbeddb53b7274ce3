"""Spin-waits on the CPU target (issue 30): threads that loop on an atomic, a fence or nanosleep until another
thread of their block, or another block, writes what they wait for, finish with the GPU's results (the kernels
and their expected results: spin_kernels.py; the same kernels on the GPU: test_gpu_spin_waits.py). Each launch
runs in a forked child with a time limit, so a spin that hangs fails its test instead of hanging the suite."""

import multiprocessing
import os

import numpy as np
import pytest

import spin_kernels
from cujit import cuda

HANG_SECONDS = 60


def run_guarded(kernel, config, arrays, workers=None, timeout=HANG_SECONDS):
    """Launches kernel[config](*arrays) in a forked child (CUJIT_HOST_THREADS=workers there, if given); returns the
    arrays after the launch, or fails the test if the child hangs or raises."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child():
        try:
            if workers is not None:
                os.environ["CUJIT_HOST_THREADS"] = str(workers)
            kernel[config](*arrays)
            send.send(("ok", arrays))
        except BaseException as e:  # noqa: BLE001 - reported by the parent
            send.send(("error", f"{type(e).__name__}: {e}"))

    process = context.Process(target=child, daemon=True)
    process.start()
    try:
        if not receive.poll(timeout):
            pytest.fail(f"the launch did not finish in {timeout} s (a spin-wait hangs on the CPU target)")
        status, value = receive.recv()
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    assert status == "ok", value
    return value


@pytest.mark.parametrize("case", spin_kernels.CASES, ids=lambda c: c.name)
def test_spin_waits_finish_with_the_gpus_results(case):
    before = case.make(np.random.default_rng())
    kernel = cuda.jit(target="cpu")(case.kernel)
    after = run_guarded(kernel, (case.grid, case.block), [a.copy() for a in before], workers=case.workers)
    spin_kernels.check(case, before, after)


@pytest.mark.parametrize("workers", [1, 2])
def test_many_blocks_each_waiting_on_the_next(workers):
    """Blocks outnumber workers: each block waits for the next one's flag (the last starts); 24 blocks of 32
    threads, with and without a barrier (threads as fibers, or one after another until one spins)."""
    chain = cuda.jit(target="cpu")(spin_kernels.chain_of_blocks)
    flags, out = np.zeros(24, np.int32), np.zeros((24, 32), np.int32)
    _, out = run_guarded(chain, (24, 32), [flags, out], workers=workers)
    np.testing.assert_array_equal(out, np.repeat(np.arange(23, -1, -1, dtype=np.int32)[:, None], 32, axis=1))

    last = cuda.jit(target="cpu")(spin_kernels.block_waits_for_the_last_block)
    flags, data, out = np.zeros(24, np.int32), np.arange(24, dtype=np.int64) + 5, np.zeros(24, np.int64)
    _, _, out = run_guarded(last, (24, 32), [flags, data, out], workers=workers)
    want = np.arange(24) + 5
    want[0], want[-1] = (23 + 5) * 3 + 1, 0
    np.testing.assert_array_equal(out, want)


def test_a_thread_doing_many_atomics_without_spinning_keeps_its_results():
    """Atomics yield every 256th time; a kernel whose threads do thousands of them (no spin) gives the same results
    with a barrier (fibers) and without (threads one after another, the rest of a block turned into fibers)."""

    def histogram(x, hist, out):
        i = cuda.grid(1)
        for k in range(x.shape[1]):
            cuda.atomic.add(hist, x[i, k], 1)
        out[i] = cuda.atomic.add(hist, 0, 0) >= 0

    def histogram_barrier(x, hist, out):
        i = cuda.grid(1)
        for k in range(x.shape[1]):
            cuda.atomic.add(hist, x[i, k], 1)
        cuda.syncthreads()
        out[i] = cuda.atomic.add(hist, 0, 0) >= 0

    x = np.random.default_rng().integers(0, 16, (256, 3000))
    for fn in (histogram, histogram_barrier):
        hist, out = np.zeros(16, np.int64), np.zeros(256, np.int32)
        cuda.jit(target="cpu")(fn)[4, 64](x, hist, out)
        np.testing.assert_array_equal(hist, np.bincount(x.ravel(), minlength=16))
        assert out.all()


def test_activemask_after_a_loop_of_atomics_names_the_whole_warp():
    """Lanes yield at atomics: activemask() (the lanes that reached the call while no other lane could go on) waits
    for lanes still in their loop of atomics, which could go on."""

    @cuda.jit(target="cpu")
    def masks(counts, out):
        t = cuda.threadIdx.x
        for k in range(t * 10):
            cuda.atomic.add(counts, t, 1)
        out[t] = cuda.activemask()

    counts, out = np.zeros(32, np.int64), np.zeros(32, np.uint32)
    masks[1, 32](counts, out)
    np.testing.assert_array_equal(out, np.full(32, 0xFFFFFFFF, np.uint32))
    np.testing.assert_array_equal(counts, np.arange(32) * 10)


def test_a_deadlock_in_the_block_a_spinning_block_waits_for_is_still_reported():
    """Block 0 spins on a flag block 1 would set after a barrier its threads can never complete (a GPU hangs): the
    launch raises the deadlock report naming block 1, with one worker holding both blocks, instead of hanging."""

    def stuck(flags, out):
        t = cuda.threadIdx.x
        if cuda.blockIdx.x == 0:
            if t == 0:
                while cuda.atomic.add(flags, 0, 0) == 0:
                    pass
        else:
            if t < 16:
                cuda.syncthreads()
            else:
                out[t] = cuda.shfl_sync(0xFFFFFFFF, t, 0)
            cuda.atomic.exch(flags, 0, 1)
        cuda.syncthreads()

    kernel = cuda.jit(target="cpu")(stuck)
    with pytest.raises(AssertionError) as failed:
        run_guarded(kernel, (2, 32), [np.zeros(1, np.int32), np.zeros(32, np.int32)], workers=1)
    report = str(failed.value)
    assert "RuntimeError: kernel " in report and "stuck' deadlocked" in report, report
    assert "block (1, 0, 0)" in report, report
