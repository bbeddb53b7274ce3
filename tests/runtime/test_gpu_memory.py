"""Memory on a GPU: pinned, mapped and managed arrays with kernels (against numpy on fresh random data), the
pinned()/mapped() context managers, a counting memory manager that sees every allocation (in a process of its
own: a plug-in is process-wide), defer_cleanup, DeviceNDArray split/squeeze/as_cuda_arg, and CUDA IPC across
two processes (multiprocessing's spawn)."""

import multiprocessing
import os
import pickle
import sys
import textwrap

import numpy as np
import pytest

import gpu_support

from cujit import cuda
import gpu_ipc_child
from script_runs import run_script

pytestmark = gpu_support.gpu


@pytest.fixture(autouse=True)
def _no_low_occupancy_warnings(monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")


@cuda.jit
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def scale2d(out, x, a):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a * x[i, j]


def _launch1(n):
    return (n + 127) // 128, 128


def test_pinned_arrays_copy_both_ways(rng):
    host = rng.standard_normal((300, 7)).astype(np.float32)
    pinned = cuda.pinned_array(host.shape, np.float32)
    pinned[:] = host
    stream = cuda.stream()
    dev = cuda.to_device(pinned, stream=stream)
    back = cuda.pinned_array_like(pinned)
    dev.copy_to_host(back, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(back, host)


def test_mapped_arrays_are_read_and_written_by_kernels(rng):
    n = 1000
    x = cuda.mapped_array(n, np.float32)
    y = cuda.mapped_array(n, np.float32, wc=True)
    out = cuda.mapped_array(n, np.float32, portable=True)
    x[:] = rng.standard_normal(n)
    y[:] = rng.standard_normal(n)
    axpy[_launch1(n)](out, np.float32(3), x, y)
    cuda.synchronize()
    np.testing.assert_allclose(out, 3 * x + y, rtol=1e-6, atol=1e-6)  # a * x + y contracts to an fma
    view = cuda.mapped_array_like(np.zeros((40, 30), np.float64, order="F"))
    src = cuda.mapped_array((40, 30), np.float64, order="F")
    src[:] = rng.standard_normal((40, 30))
    scale2d[(2, 2), (32, 32)](view, src, 0.5)
    cuda.synchronize()
    np.testing.assert_allclose(view, 0.5 * src)
    half = out[::2]  # a strided view of mapped memory
    axpy[_launch1(n // 2)](half, np.float32(0), x[::2], y[::2])
    cuda.synchronize()
    np.testing.assert_allclose(out[::2], y[::2])


@pytest.mark.parametrize("attach_global", [True, False])
def test_managed_arrays_are_read_and_written_by_kernels(rng, attach_global):
    n = 2048
    x = cuda.managed_array(n, np.float64, attach_global=attach_global)
    y = cuda.managed_array(n, np.float64, attach_global=attach_global)
    out = cuda.managed_array(n, np.float64, attach_global=attach_global)
    x[:] = rng.standard_normal(n)
    y[:] = rng.standard_normal(n)
    axpy[_launch1(n)](out, 2.5, x, y)
    cuda.synchronize()
    np.testing.assert_allclose(out, 2.5 * x + y)


def test_pinned_and_mapped_context_managers(rng):
    n = 1 << 18  # 2 MiB each: numpy gives each its own pages (registrations cannot share one)
    a = rng.standard_normal(n)
    b = rng.standard_normal(n)
    with cuda.pinned(a, b):
        stream = cuda.stream()
        da = cuda.to_device(a, stream=stream)
        db = cuda.to_device(b, stream=stream)
        stream.synchronize()
    out = np.zeros(n)
    with cuda.mapped(out, a, b) as (dout, dx, dy):
        axpy[_launch1(n)](dout, 4.0, dx, dy)
        cuda.synchronize()
    np.testing.assert_allclose(out, 4 * a + b)
    np.testing.assert_array_equal(da.copy_to_host(), a)
    np.testing.assert_array_equal(db.copy_to_host(), b)


def test_split_squeeze_and_as_cuda_arg(rng):
    host = rng.standard_normal(1000)
    dev = cuda.to_device(host)
    parts = list(dev.split(300))
    assert [p.size for p in parts] == [300, 300, 300, 100]
    for i, part in enumerate(parts):
        axpy[_launch1(part.size)](part, 2.0, part, part)
        np.testing.assert_allclose(part.copy_to_host(), 3 * host[i * 300 : (i + 1) * 300])
    sq = cuda.to_device(host.reshape(1, 1000, 1)).squeeze()
    assert sq.shape == (1000,)
    np.testing.assert_array_equal(sq.copy_to_host(), host)
    arg = dev[10:].as_cuda_arg()
    assert arg.ptr == dev.ptr + 80 and arg.size == 990 * 8


def test_defer_cleanup_waits_with_frees():
    ctx = cuda.current_context()
    cuda.synchronize()
    before = ctx.deallocations_pending()
    with cuda.defer_cleanup():
        for _ in range(40):
            cuda.device_array(1 << 16)
        cuda.synchronize()  # a flush waits too
        assert ctx.deallocations_pending() >= before + 40
    assert ctx.deallocations_pending() <= 10


@gpu_support.needs_device("host arrays copied to device memory and back (the CPU target passes them in place)")
def test_a_counting_manager_sees_every_allocation_on_the_gpu():
    body = textwrap.dedent("""
        import gc
        import numpy as np
        from cujit import cuda, _core

        class Counting(cuda.GetIpcHandleMixin, cuda.HostOnlyCUDAMemoryManager):
            calls = []
            live = {}

            def initialize(self):
                pass

            def memalloc(self, size):
                self.calls.append(("memalloc", size))
                block = _core.driver.allocate(size, cuda.current_context()._native)
                self.live[block.ptr] = size
                def release(ptr=block.ptr, held=[block]):
                    del self.live[ptr]
                    held.clear()
                return cuda.MemoryPointer(cuda.current_context(), block.ptr, size, finalizer=release)

            def memhostalloc(self, size, mapped=False, portable=False, wc=False):
                self.calls.append(("memhostalloc", size, mapped))
                return super().memhostalloc(size, mapped, portable, wc)

            def memallocmanaged(self, size, attach_global):
                self.calls.append(("memallocmanaged", size))
                return super().memallocmanaged(size, attach_global)

            def get_memory_info(self):
                return cuda.MemoryInfo(*cuda.current_context()._native.memory_info())

            @property
            def interface_version(self):
                return 1

        cuda.set_memory_manager(Counting)

        @cuda.jit
        def axpy(out, a, x, y):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = a * x[i] + y[i]

        rng = np.random.default_rng()
        x, y = rng.standard_normal(1000), rng.standard_normal(1000)
        dx = cuda.to_device(x)
        out = cuda.device_array_like(x)
        axpy[8, 128](out, 2.0, dx, y)                  # y: a host array, copied through the manager
        np.testing.assert_allclose(out.copy_to_host(), 2 * x + y)
        m = cuda.mapped_array(1000)
        g = cuda.managed_array(1000)
        m[:] = x
        g[:] = y
        axpy[8, 128](out, 1.0, m, g)
        np.testing.assert_allclose(out.copy_to_host(), x + y)
        sizes = sorted(c[1] for c in Counting.calls if c[0] == "memalloc")
        assert sizes == [8000, 8000, 8000], Counting.calls
        assert ("memhostalloc", 8000, True) in Counting.calls and ("memallocmanaged", 8000) in Counting.calls
        gc.collect()
        assert sum(Counting.live.values()) == 16000     # dx and out; y's copy is gone
        del dx, out
        gc.collect()
        assert Counting.live == {}
        print("OK")
    """)
    env = dict(os.environ, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0", CUJIT_CUDA_WARN_ON_IMPLICIT_COPY="0")
    proc = run_script(body, "_gpu_emm.py", env)
    assert proc.stdout.strip().endswith("OK"), proc.stdout[-3000:] + proc.stderr[-3000:]


# ---- IPC across two processes ------------------------------------------------------------------------------


def _in_child(target, *args):
    """Runs gpu_ipc_child.<target>(*args, results) in a spawned process; returns what it put."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    proc = ctx.Process(target=getattr(gpu_ipc_child, target), args=(*args, results))
    proc.start()
    status, value = results.get(timeout=300)
    proc.join(timeout=60)
    assert proc.exitcode == 0, proc.exitcode
    assert status == "ok", value
    return value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CUDA IPC is Linux only")
@gpu_support.needs_device("CUDA IPC between processes")
def test_ipc_array_across_processes(rng):
    host = rng.standard_normal((64, 33))
    dev = cuda.to_device(host)
    handle = dev[5:].get_ipc_handle()  # a view at an offset into the allocation
    seen = _in_child("open_and_double", pickle.dumps(handle))
    np.testing.assert_array_equal(seen, host[5:])
    expected = host.copy()
    expected[5:] *= 2
    np.testing.assert_array_equal(dev.copy_to_host(), expected)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CUDA IPC is Linux only")
@gpu_support.needs_device("CUDA IPC between processes")
def test_open_ipc_array_with_a_raw_handle(rng):
    host = rng.integers(0, 1 << 30, 1000).astype(np.int32)
    dev = cuda.to_device(host)
    raw = dev.get_ipc_handle()._ipc_handle.handle  # 64 bytes, as another library would send
    got = _in_child("open_raw", raw, (10, 20), "int32", 400)
    np.testing.assert_array_equal(got, host[100:300].reshape(10, 20))
