"""The CPU target's worker threads (issue 30): created once per process and reused by every launch, sized to the
machine (CUJIT_HOST_THREADS overrides), safe for launches from several Python threads at once (plain, barrier and
cooperative kernels side by side), each checked against numpy on fresh random data. No GPU needed."""

import os
import sys
import threading

import numpy as np
import pytest

from cujit import _core, cuda


@cuda.jit(target="cpu")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 3.0 * x[i]


@cuda.jit(target="cpu")
def block_max(x, out):
    buf = cuda.shared.array(128, dtype=np.float64)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            buf[t] = max(buf[t], buf[t + step])
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit(target="cpu")
def shift_across_blocks(x, tmp, out):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    tmp[i] = x[i]
    g.sync()
    out[i] = tmp[(i + 1) % tmp.size]


def os_threads():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads through /proc")
def test_workers_are_created_once_and_reused():
    rng = np.random.default_rng()
    x = rng.random(64 * 128)
    out = np.zeros(64)
    block_max[64, 128](x, out)  # the pool exists from here on
    scale[64, 128](x, np.zeros_like(x))
    before = os_threads()
    for _ in range(20):
        block_max[64, 128](x, out)
        scale[64, 128](x, np.zeros_like(x))
    assert os_threads() == before
    np.testing.assert_array_equal(out, x.reshape(64, 128).max(axis=1))


def test_worker_count_follows_the_machine_and_the_override(monkeypatch):
    monkeypatch.delenv("CUJIT_HOST_THREADS", raising=False)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert _core.host.worker_count() == max(1, cores or 1)
    monkeypatch.setenv("CUJIT_HOST_THREADS", "3")
    assert _core.host.worker_count() == 3
    assert _core.host.max_cooperative_blocks(256) == 3 * 8
    rng = np.random.default_rng()
    x = rng.random(40 * 128)
    out = np.zeros(40)
    block_max[40, 128](x, out)
    np.testing.assert_array_equal(out, x.reshape(40, 128).max(axis=1))
    monkeypatch.setenv("CUJIT_HOST_THREADS", "1")
    block_max[40, 128](x, out)
    np.testing.assert_array_equal(out, x.reshape(40, 128).max(axis=1))


def test_launches_from_several_python_threads_at_once():
    failures = []

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(5):
                x = rng.random(32 * 128)
                y = np.zeros_like(x)
                scale[32, 128](x, y)
                np.testing.assert_array_equal(y, 3.0 * x)
                m = np.zeros(32)
                block_max[32, 128](x, m)
                np.testing.assert_array_equal(m, x.reshape(32, 128).max(axis=1))
                tmp, out = np.zeros(4 * 64), np.zeros(4 * 64)
                shift_across_blocks[4, 64](x[:256], tmp, out)
                np.testing.assert_array_equal(out, np.roll(x[:256], -1))
        except BaseException as e:  # noqa: BLE001  (reported below)
            failures.append(e)

    seeds = np.random.default_rng().integers(1 << 30, size=6)
    threads = [threading.Thread(target=worker, args=(int(s),)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_launches_with_workers_of_its_own():
    import warnings

    rng = np.random.default_rng()
    x = rng.random(64 * 128)
    out = np.zeros(64)
    block_max[64, 128](x, out)  # the parent's workers exist
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a process with threads
        pid = os.fork()
    if pid == 0:
        child = np.zeros(64)
        block_max[64, 128](x, child)
        os._exit(0 if np.array_equal(child, x.reshape(64, 128).max(axis=1)) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    block_max[64, 128](x, out)
    np.testing.assert_array_equal(out, x.reshape(64, 128).max(axis=1))
