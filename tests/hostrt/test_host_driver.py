"""The runtime on the CPU target (issue 30): with the process-wide target the CPU (``CUJIT_TARGET=cpu``), the host
driver stands in for libcuda, so device arrays, streams, events, pinned/mapped/managed memory, CAI and DLPack
objects work without a GPU, and kernels take them as on the GPU. Against numpy, on fresh random data.

These tests run where the process-wide target is the CPU: ``make test-cpu-target``, or in a process of their own
from test_host_driver_process.py (which the plain suite runs)."""

import io
import contextlib

import numpy as np
import pytest

import gpu_support

from cujit import _core, cuda
from cujit.cudadrv import devices

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_support.ON_CPU_TARGET, reason="the process-wide target is not the CPU"),
]


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_the_device_is_the_cpu_target():
    assert devices.on_host_driver()
    assert cuda.is_available() is True  # as numba-cuda's simulator answers: kernels run here
    assert devices.gpu_available() is bool(_core.driver.status().available)  # a GPU or not: the truth
    assert len(cuda.gpus) == 1 and list(cuda.gpus) == [cuda.gpus[0]]
    dev = cuda.get_current_device()
    assert dev.name == "cujit CPU target"
    assert dev.compute_capability == (9, 0)
    assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE == 32
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK == 48 * 1024
    assert dev.MULTIPROCESSOR_COUNT >= 1
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    with cuda.gpus[0]:
        assert cuda.gpus.current == dev
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cuda.detect() is True
    assert "CPU target" in out.getvalue()


def test_to_device_copy_to_host_and_kernels_on_device_arrays():
    rng = np.random.default_rng()
    x, y = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    dout = cuda.device_array_like(dx)
    axpy[8, 128](np.float32(3.0), dx, dy, dout)
    np.testing.assert_allclose(dout.copy_to_host(), np.float32(3.0) * x + y, rtol=2.5e-7)
    np.testing.assert_array_equal(dx.copy_to_host(), x)  # real copies: the device array is its own memory
    x[0] = 99.0
    assert dx[0] != 99.0
    empty = cuda.device_array((3, 4), dtype=np.int64)
    empty.copy_to_device(np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(empty.copy_to_host(), np.arange(12).reshape(3, 4))


def test_streams_run_in_order_and_events_time_them():
    rng = np.random.default_rng()
    x = rng.integers(0, 100, 5000).astype(np.int64)
    s = cuda.stream()
    start, end = cuda.event(), cuda.event()
    start.record(s)
    d = cuda.to_device(x, stream=s)
    for _ in range(3):
        add_one[40, 128, s](d)
    out = d.copy_to_host(stream=s)
    end.record(s)
    s.synchronize()
    end.synchronize()
    np.testing.assert_array_equal(out, x + 3)
    assert end.query() and s.query() if hasattr(s, "query") else end.query()
    assert cuda.event_elapsed_time(start, end) >= 0.0
    other = cuda.external_stream(0x7F00_1234)  # a handle the host driver did not make: used, never read
    add_one[40, 128, other](d)
    np.testing.assert_array_equal(d.copy_to_host(stream=other), x + 4)
    cuda.synchronize()


def test_sharedmem_and_forall_on_a_stream():
    @cuda.jit
    def reverse(x):
        buf = cuda.shared.array(0, dtype=np.float64)
        t = cuda.threadIdx.x
        buf[t] = x[t]
        cuda.syncthreads()
        x[t] = buf[x.size - 1 - t]

    x = np.random.default_rng().random(64)
    d = cuda.to_device(x)
    reverse[1, 64, cuda.default_stream(), 64 * 8](d)
    np.testing.assert_array_equal(d.copy_to_host(), x[::-1])
    add_one.forall(d.size, stream=cuda.stream())(d)
    np.testing.assert_array_equal(d.copy_to_host(), x[::-1] + 1)


def test_pinned_mapped_and_managed_arrays_in_kernels():
    x = np.random.default_rng().integers(0, 1000, 300)
    for make in (cuda.pinned_array, cuda.mapped_array, cuda.managed_array):
        a = make(x.shape, dtype=x.dtype)
        a[:] = x
        add_one[3, 128](a)
        np.testing.assert_array_equal(np.asarray(a), x + 1, err_msg=make.__name__)


class _Cai:
    """A foreign __cuda_array_interface__ producer over a device array's memory."""

    def __init__(self, dev):
        self._dev = dev
        self.__cuda_array_interface__ = dev.__cuda_array_interface__


class _DLPack:
    """A DLPack producer on the host (kDLCPU), as numpy and CPU tensors are."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_cai_and_dlpack_host_producers():
    x = np.random.default_rng().integers(0, 1000, 500)
    d = cuda.to_device(x)
    add_one[4, 128](_Cai(d))
    np.testing.assert_array_equal(d.copy_to_host(), x + 1)
    view = cuda.as_cuda_array(_Cai(d))
    np.testing.assert_array_equal(view.copy_to_host(), x + 1)
    y = x.copy()
    add_one[4, 128](_DLPack(y))  # host memory in place
    np.testing.assert_array_equal(y, x + 1)


def test_dispatcher_parity_with_the_gpu_dispatcher():
    @cuda.jit(["void(float64[::1])", "void(int64[::1])"])
    def twice(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    assert twice.target == "cpu"
    assert len(twice.signatures) == 2 and len(twice.overloads) == 2
    d = cuda.to_device(np.arange(10, dtype=np.int32))  # int32 is converted to an eager signature's int64: no
    with pytest.raises(TypeError, match="No matching definition"):
        twice[1, 32](cuda.to_device(np.zeros(3, dtype=np.complex128)))
    x = np.arange(10, dtype=np.float64)
    twice[1, 32](x)
    np.testing.assert_array_equal(x, np.arange(10) * 2.0)
    assert "define" in twice.inspect_llvm()[next(iter(twice.overloads))]
    text = io.StringIO()
    twice.inspect_types(file=text)
    assert "twice" in text.getvalue()
    assert twice.py_func.__name__ == "twice"
    del d

    spec = add_one.specialize(np.zeros(3, dtype=np.float32))
    assert spec.specialized and spec.target == "cpu"
    y = np.zeros(5, dtype=np.float32)
    spec[1, 8](y)
    np.testing.assert_array_equal(y, np.ones(5, dtype=np.float32))
    with pytest.raises(ValueError, match="launch configuration"):
        add_one(y)
    with pytest.raises(ValueError, match="griddim and blockdim"):
        add_one[(1,)](y)


def test_device_functions_called_from_host_kernels():
    @cuda.jit(device=True)
    def square(v):
        return v * v

    @cuda.jit
    def squares(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = square(x[i])

    x = np.random.default_rng().integers(-50, 50, 200)
    d = cuda.to_device(x)
    squares[2, 128](d)
    np.testing.assert_array_equal(d.copy_to_host(), x * x)


def test_what_needs_a_gpu_says_so(tmp_path):
    ptx = tmp_path / "helper.ptx"
    ptx.write_text("// not used\n")

    @cuda.jit(link=[str(ptx)])
    def linked(x):
        x[0] = 1

    with pytest.raises(NotImplementedError, match=r"'helper\.ptx'.*CPU target"):
        linked[1, 1](np.zeros(1))

    @cuda.jit(target="cuda")
    def on_gpu(x):
        x[0] = 1

    with pytest.raises(Exception, match="CPU target"):  # the host driver loads no GPU modules
        on_gpu[1, 1](cuda.to_device(np.zeros(1)))


def test_debug_kernels_raise_on_the_host_as_on_the_gpu():
    @cuda.jit(debug=True, opt=False)
    def check_positive(x):
        i = cuda.grid(1)
        if i < x.size and x[i] <= 0:
            raise ValueError("not positive")

    x = np.random.default_rng().random(300) + 0.5
    check_positive[3, 128](x)  # no thread raises
    x[257] = -1.0
    with pytest.raises(
        ValueError,
        match=r"In function 'check_positive'.*tid=\[0, 0, 1\] ctaid=\[0, 0, 2\]: "
        r"not positive",
    ):
        check_positive[3, 128](x)
    x[257] = 1.0
    check_positive[3, 128](x)  # the record is cleared for each launch


def test_print_in_kernels(capfd):
    @cuda.jit
    def show(a):
        print("thread", cuda.threadIdx.x, a[cuda.threadIdx.x], a[0] > 1.0, np.uint32(7))

    a = np.array([0.5, 2.25, -3.0])
    show[1, 3](a)
    cuda.synchronize()
    lines = sorted(capfd.readouterr().out.splitlines())
    assert lines == [f"thread {i} {v:f} False 7" for i, v in enumerate(a)]
