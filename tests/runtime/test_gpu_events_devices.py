"""Events, devices and the profiler on a GPU, as users write them, results against numpy on fresh random data:
events time a kernel and order one stream after another (``record``/``wait``), ``query`` before and after
``synchronize``; every visible GPU (one or more) through ``with cuda.gpus[n]:`` and ``select_device`` gets its
arrays and its kernel module, and with two or more GPUs the kernel runs on each (and in threads, one per GPU) with
the thread's device left as it chose; ``cuda.close()``; the profiler switch; ``from_cuda_array_interface``."""

import gc
import numpy as np
import pytest

import gpu_support

from cujit import _core, cuda

from threads import run_threads

pytestmark = gpu_support.gpu


@pytest.fixture(autouse=True)
def _no_low_occupancy_warnings(monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")


@cuda.jit
def axpb(out, x, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


@cuda.jit
def spin_then_write(out, x, rounds):
    # Long enough that the host sees the work still running unless it waits.
    i = cuda.grid(1)
    if i < x.size:
        acc = x[i]
        for _ in range(rounds):
            acc = acc * 0.999999 + 0.000001
        out[i] = acc


def launch(kernel, out, *args, stream=0):
    n = out.size
    kernel[(n + 255) // 256, 256, stream](out, *args)


def test_events_time_a_kernel(rng):
    x = rng.standard_normal(1 << 20).astype(np.float32)
    d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
    launch(axpb, d_out, d_x, 2.0, 1.0)  # compiled and loaded before timing
    start, end = cuda.event(timing=True), cuda.event()
    start.record()
    for _ in range(10):
        launch(axpb, d_out, d_x, np.float32(2.0), np.float32(1.0))
    end.record()
    end.synchronize()
    assert end.query() is True and start.query() is True
    ms = cuda.event_elapsed_time(start, end)
    assert ms > 0.0 and ms == pytest.approx(start.elapsed_time(end), rel=1e-6)
    np.testing.assert_allclose(d_out.copy_to_host(), 2.0 * x + 1.0, rtol=1e-6)


def test_an_event_orders_one_stream_after_another(rng):
    x = rng.standard_normal(1 << 18).astype(np.float32)
    s1, s2 = cuda.stream(), cuda.stream()
    d_x = cuda.to_device(x, stream=s1)
    d_mid, d_out = cuda.device_array_like(x, stream=s1), cuda.device_array_like(x, stream=s2)
    done = cuda.event(timing=False)
    launch(spin_then_write, d_mid, d_x, 2000, stream=s1)
    done.record(s1)
    done.wait(s2)  # s2's work waits for s1's; the host does not
    launch(axpb, d_out, d_mid, np.float32(3.0), np.float32(-1.0), stream=s2)
    s2.synchronize()
    assert done.query() is True
    expected = x.astype(np.float64)  # the kernel's literals are float64, as in numba
    for _ in range(2000):
        expected = expected * 0.999999 + 0.000001
    np.testing.assert_allclose(d_out.copy_to_host(), 3.0 * expected.astype(np.float32) - 1.0, rtol=1e-5, atol=1e-6)


@gpu_support.needs_device(
    "spins long enough to be seen running (minutes on the CPU target, where launches are synchronous)"
)
def test_query_sees_running_work(rng):
    x = rng.standard_normal(1 << 16).astype(np.float32)
    d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
    launch(spin_then_write, d_out, d_x, 1)  # compiled first
    s = cuda.stream()
    e = cuda.event()
    launch(spin_then_write, d_out, d_x, 2_000_000, stream=s)
    e.record(s)
    seen_running = e.query() is False  # almost surely still running (not asserted)
    e.synchronize()
    assert e.query() is True, seen_running


@gpu_support.needs_device("counts the modules the driver loaded")
def test_every_gpu_runs_its_own_module(rng):
    @cuda.jit
    def affine(out, x, a, b):  # a kernel of this test alone: its modules are counted
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + b

    x = rng.standard_normal(4096).astype(np.float64)
    cuda.select_device(0)
    gc.collect()  # earlier tests' dead kernels unload now, not while this one counts
    gc.disable()
    try:
        counted_launches(affine, x)
    finally:
        gc.enable()


def counted_launches(affine, x):
    before = _core.driver.loaded_module_count()
    for dev in cuda.gpus:
        with dev:
            assert cuda.get_current_device() is dev and cuda.gpus.current is dev
            d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
            e = cuda.event()
            launch(affine, d_out, d_x, dev.id + 1.0, 0.5)
            e.record()
            e.synchronize()
            np.testing.assert_allclose(d_out.copy_to_host(), (dev.id + 1.0) * x + 0.5)
            assert e.context.device is dev
        assert cuda.get_current_device().id == 0  # the thread's own context again
    assert _core.driver.loaded_module_count() == before + len(cuda.gpus)  # one module in each device's context
    assert len(affine.overloads) == 1  # compiled once


@gpu_support.needs_device("two GPUs")
@pytest.mark.skipif(cuda.is_available() and len(cuda.gpus) < 2, reason="needs two GPUs")
def test_two_gpus_from_two_threads(rng):
    x = rng.standard_normal(1 << 16).astype(np.float32)

    def work(i):
        dev = cuda.gpus[i % 2]
        with dev:
            d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
            for _ in range(20):
                launch(axpb, d_out, d_x, np.float32(i), np.float32(1.0))
            assert cuda.get_current_device() is dev
            return d_out.copy_to_host()

    for i, got in enumerate(run_threads(work, 4)):
        np.testing.assert_allclose(got, np.float32(i) * x + 1.0, rtol=1e-6, atol=1e-6)  # an fma where it cancels


@gpu_support.needs_device("two GPUs")
@pytest.mark.skipif(cuda.is_available() and len(cuda.gpus) < 2, reason="needs two GPUs")
def test_arrays_of_one_gpu_read_from_another(rng):
    x = rng.standard_normal(1000)
    with cuda.gpus[1]:
        d1 = cuda.to_device(x)
    with cuda.gpus[0]:
        np.testing.assert_array_equal(d1.copy_to_host(), x)
        assert cuda.get_current_device().id == 0


def test_close_then_carry_on(rng):
    x = rng.standard_normal(256).astype(np.float32)
    d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
    launch(axpb, d_out, d_x, np.float32(1.0), np.float32(2.0))
    cuda.close()
    assert _core.driver.loaded_module_count() == 0
    launch(axpb, d_out, d_x, np.float32(1.0), np.float32(2.0))  # arrays stay valid; the kernel loads again
    np.testing.assert_allclose(d_out.copy_to_host(), x + 2.0)


def test_profiler_switch():
    cuda.profile_start()
    cuda.profile_stop()
    with cuda.profiling():
        cuda.synchronize()


def test_from_cuda_array_interface(rng):
    x = rng.standard_normal((8, 16))
    d = cuda.to_device(x)
    s = cuda.stream()
    view = cuda.from_cuda_array_interface(dict(d.__cuda_array_interface__, stream=s.handle), owner=d)
    np.testing.assert_array_equal(view.copy_to_host(), x)
    out = cuda.device_array(x.size)
    launch(axpb, out, view.reshape(x.size), 2.0, 0.0)
    np.testing.assert_allclose(out.copy_to_host(), 2.0 * x.ravel())


@gpu_support.needs_device("the CUDA driver's version")
def test_versions():
    assert cuda.runtime.get_version() >= (12, 0)
    assert cuda.is_supported_version() == (cuda.runtime.get_version()[0] in (12, 13))
    assert cuda.cuda_error() is None
