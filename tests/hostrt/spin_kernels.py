"""Kernels whose threads spin-wait for each other without a barrier or warp function (issue 30), shared by the
CPU target's tests (test_host_spin_waits.py) and their GPU twins (test_gpu_spin_waits.py): a thread loops on an
atomic, a fence or ``nanosleep`` until another thread of its block, or of another block, writes what it waits for.
GPU threads run independently (since Volta), so these finish there; the CPU target yields at those calls.

Each case is a kernel, its launch, fresh random inputs and the results the GPU gives (from numpy)."""

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from cujit import cuda


def flag_across_warps(flags, data, out):
    """Thread 0 of each block spins on an atomic until thread 40 (another warp) publishes its block's value."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if t == 0:
        while cuda.atomic.add(flags, b, 0) == 0:
            pass
        cuda.threadfence()
        out[b] = data[b] + flags[b]
    elif t == 40:
        data[b] = data[b] * 2
        cuda.threadfence()
        cuda.atomic.exch(flags, b, 1)


def flag_across_warps_then_barrier(flags, data, out):
    """The same with a barrier after the spin (the block's threads run as fibers): every thread then reads it."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if t == 0:
        while cuda.atomic.compare_and_swap(flags[b:], 7, 7) != 7:
            pass
    elif t == 40:
        data[b] = data[b] * 2
        cuda.threadfence()
        cuda.atomic.exch(flags, b, 7)
    cuda.syncthreads()
    out[b, t] = data[b] + flags[b]


def spin_lock(locks, counts, work, out):
    """Every thread takes its block's lock (cuda.atomic.cas), does atomics holding it and a plain read-modify-write,
    then releases it; a barrier ends the block. Holders yield inside the lock, so others spin on it."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    while cuda.atomic.cas(locks, b, 0, 1) != 0:
        pass
    cuda.threadfence()
    for k in range(100):
        cuda.atomic.add(work, b, 1)
    counts[b] = counts[b] + 1
    cuda.threadfence()
    cuda.atomic.exch(locks, b, 0)
    cuda.syncthreads()
    # An atomic read: on an H100 a plain read here gave each thread the count it had written itself (a weak load
    # served from the SM's L1), though the PTX orders it after bar.sync.
    out[b, t] = cuda.atomic.add(counts, b, 0)


def bounded_queue(values, queue, counters, out):
    """Thread 32 (warp 1) produces values[b, :] through a 4-slot queue that thread 0 (warp 0) consumes: each
    waits on the other (a full or an empty queue), with atomic counters and fences."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    n = values.shape[1]
    if t == 32:
        for i in range(n):
            while cuda.atomic.add(counters, (b, 0), 0) - cuda.atomic.add(counters, (b, 1), 0) >= 4:
                pass
            queue[b, i % 4] = values[b, i]
            cuda.threadfence()
            cuda.atomic.add(counters, (b, 0), 1)
    elif t == 0:
        for i in range(n):
            while cuda.atomic.add(counters, (b, 0), 0) <= i:
                pass
            cuda.threadfence()
            out[b, i] = queue[b, i % 4]
            cuda.threadfence()
            cuda.atomic.add(counters, (b, 1), 1)


def turns_with_nanosleep(turn, order):
    """The threads of a block take turns from the last to the first, each sleeping (cuda.nanosleep) in its wait:
    order[b, k] is the thread that had the k-th turn."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    n = cuda.blockDim.x
    mine = n - 1 - t
    while cuda.atomic.add(turn, b, 0) != mine:
        cuda.nanosleep(100)
    order[b, mine] = t
    cuda.atomic.add(turn, b, 1)


def fence_and_plain_flag(flags, data, out):
    """Thread 5 spins on a plain read of its block's flag with cuda.threadfence() in its loop; thread 63 (the
    block's second warp) writes the data, fences and sets the flag with a plain store."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if t == 5:
        while flags[b] == 0:
            cuda.threadfence()
        out[b] = data[b]
    elif t == 63:
        data[b] = data[b] + 1
        cuda.threadfence()
        flags[b] = 1


def block_waits_for_the_last_block(flags, data, out):
    """Block 0's thread 0 spins until the grid's last block has written its value (blocks outnumber workers)."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    last = cuda.gridDim.x - 1
    if t == 0:
        if b == 0:
            while cuda.atomic.add(flags, 0, 0) == 0:
                pass
            cuda.threadfence()
            out[0] = cuda.atomic.add(data, last, 0) + 1  # read at the device's level (another block wrote it)
        elif b == last:
            data[last] = data[last] * 3
            cuda.threadfence()
            cuda.atomic.exch(flags, 0, 1)
        else:
            out[b] = data[b]


def chain_of_blocks(flags, out):
    """Each block waits for the next block's flag before raising its own (the last block starts), then a barrier:
    out[b, t] counts the blocks after b."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    nb = cuda.gridDim.x
    if t == 0:
        if b < nb - 1:
            while cuda.atomic.add(flags, b + 1, 0) == 0:
                cuda.threadfence()
            cuda.atomic.exch(flags, b, cuda.atomic.add(flags, b + 1, 0) + 1)
        else:
            cuda.atomic.exch(flags, b, 1)
    cuda.syncthreads()
    out[b, t] = cuda.atomic.add(flags, b, 0) - 1


def queue_between_blocks(values, queue, counters, out):
    """Block 1 produces values through a 4-slot queue in global memory that block 0 consumes: the two blocks wait
    on each other in turn (ping-pong), so neither can run to its end first."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    n = values.size
    if t == 0 and b == 1:
        for i in range(n):
            while cuda.atomic.add(counters, 0, 0) - cuda.atomic.add(counters, 1, 0) >= 4:
                pass
            queue[i % 4] = values[i]
            cuda.threadfence()
            cuda.atomic.add(counters, 0, 1)
    elif t == 0 and b == 0:
        for i in range(n):
            while cuda.atomic.add(counters, 0, 0) <= i:
                pass
            cuda.threadfence()
            out[i] = cuda.atomic.add(queue, i % 4, 0)  # read at the device's level (the other block wrote it)
            cuda.threadfence()
            cuda.atomic.add(counters, 1, 1)


@dataclass
class Case:
    name: str
    kernel: Callable
    grid: int
    block: int
    make: Callable  # rng -> the kernel's arrays
    expect: Callable  # the arrays before the launch -> {argument index: what it holds after}
    workers: Optional[int] = None  # CUJIT_HOST_THREADS for the CPU target (1: blocks outnumber workers)


def _flags_data(nb, rng):
    return np.zeros(nb, np.int32), rng.integers(1, 1000, nb).astype(np.int64), np.zeros(nb, np.int64)


def _queue(nb, n, rng):
    return (
        rng.integers(-(10**6), 10**6, (nb, n)).astype(np.int64),
        np.zeros((nb, 4), np.int64),
        np.zeros((nb, 2), np.int32),
        np.zeros((nb, n), np.int64),
    )


def _last_block_expect(a):
    flags, data, out = a
    want = data.copy()
    want[0] = data[-1] * 3 + 1
    want[-1] = 0
    return {2: want}


CASES = [
    Case("flag_across_warps", flag_across_warps, 4, 64, lambda rng: _flags_data(4, rng), lambda a: {2: a[1] * 2 + 1}),
    Case(
        "flag_across_warps_then_barrier",
        flag_across_warps_then_barrier,
        4,
        64,
        lambda rng: (np.zeros(4, np.int32), rng.integers(1, 1000, 4).astype(np.int64), np.zeros((4, 64), np.int64)),
        lambda a: {2: np.repeat((a[1] * 2 + 7)[:, None], 64, axis=1)},
    ),
    Case(
        "spin_lock",
        spin_lock,
        3,
        96,
        lambda rng: (np.zeros(3, np.int32), np.zeros(3, np.int64), np.zeros(3, np.int32), np.zeros((3, 96), np.int64)),
        lambda a: {1: np.full(3, 96), 2: np.full(3, 9600), 3: np.full((3, 96), 96)},
    ),
    Case("bounded_queue", bounded_queue, 3, 64, lambda rng: _queue(3, 50, rng), lambda a: {3: a[0]}),
    Case(
        "turns_with_nanosleep",
        turns_with_nanosleep,
        2,
        64,
        lambda rng: (np.zeros(2, np.int32), np.full((2, 64), -1, np.int32)),
        lambda a: {1: np.tile(np.arange(63, -1, -1, dtype=np.int32), (2, 1))},
    ),
    Case("fence_and_plain_flag", fence_and_plain_flag, 4, 64, lambda rng: _flags_data(4, rng), lambda a: {2: a[1] + 1}),
    Case(
        "block_waits_for_the_last_block",
        block_waits_for_the_last_block,
        6,
        32,
        lambda rng: _flags_data(6, rng),
        _last_block_expect,
        workers=1,
    ),
    Case(
        "chain_of_blocks",
        chain_of_blocks,
        8,
        64,
        lambda rng: (np.zeros(8, np.int32), np.zeros((8, 64), np.int32)),
        lambda a: {1: np.repeat(np.arange(7, -1, -1, dtype=np.int32)[:, None], 64, axis=1)},
        workers=1,
    ),
    Case(
        "queue_between_blocks",
        queue_between_blocks,
        2,
        32,
        lambda rng: (
            rng.integers(-(10**6), 10**6, 40).astype(np.int64),
            np.zeros(4, np.int64),
            np.zeros(2, np.int32),
            np.zeros(40, np.int64),
        ),
        lambda a: {3: a[0]},
        workers=1,
    ),
]


def check(case, before, after):
    """Asserts that `after` (the arrays after the launch) holds what the GPU gives for inputs `before`."""
    for index, want in case.expect(before).items():
        np.testing.assert_array_equal(after[index], want, err_msg=f"{case.name}: argument {index}")
