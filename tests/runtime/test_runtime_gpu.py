"""The runtime on a GPU: devices and contexts, memory round trips, views, streams, and kernels written in CUDA C
with numba's kernel ABI spelled out (arrays as meminfo, parent, nitems, itemsize, data, shape..., strides...),
linked with nvJitLink (or, without it, handed to the driver as PTX), loaded by the ModuleLoader and launched
by the KernelLauncher; results are compared with numpy.

The PTX comes from nvcc when it is on the machine, else from tests/data/runtime_kernels.ptx, which
``python tests/runtime/test_runtime_gpu.py`` regenerates from KERNELS_CU below."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest

import gpu_support

from cujit import _core, errors
from cujit.cudadrv import devicearray, devices, launch, linker, modules
from cujit.cudadrv import stream as streams

from threads import run_threads

pytestmark = gpu_support.gpu

_drv = _core.driver
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
STORED_PTX = os.path.join(ROOT, "tests", "data", "runtime_kernels.ptx")

KERNELS_CU = r"""
#define ARR1(T, n) void *n##_meminfo, void *n##_parent, long long n##_nitems, long long n##_itemsize, T *n, \
                   long long n##_shape0, long long n##_stride0
#define ARR2(T, n) void *n##_meminfo, void *n##_parent, long long n##_nitems, long long n##_itemsize, T *n, \
                   long long n##_shape0, long long n##_shape1, long long n##_stride0, long long n##_stride1
#define AT1(T, n, i) (*(T *)((char *)(n) + (i) * n##_stride0))
#define AT2(T, n, i, j) (*(T *)((char *)(n) + (i) * n##_stride0 + (j) * n##_stride1))

extern "C" __global__ void saxpy(ARR1(float, r), float a, ARR1(float, x), ARR1(float, y)) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < r_shape0) AT1(float, r, i) = a * AT1(float, x, i) + AT1(float, y, i);
}

extern "C" __global__ void affine2d(ARR2(double, out), ARR2(double, in)) {
  long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < out_shape0 && j < out_shape1) AT2(double, out, i, j) = 2.0 * AT2(double, in, i, j) + 1000.0 * i + j;
}

extern "C" __global__ void scalars(ARR1(double, out), signed char i8, unsigned short u16, int i32, long long i64,
                                   unsigned long long u64, unsigned short f16, float f32, double f64, bool b,
                                   double c_re, double c_im, int t0, float t1) {
  out[0] = i8; out[1] = u16; out[2] = i32; out[3] = (double)i64; out[4] = (double)u64; out[5] = f16;
  out[6] = f32; out[7] = f64; out[8] = b ? 1.0 : 0.0; out[9] = c_re; out[10] = c_im; out[11] = t0; out[12] = t1;
  out[13] = out_nitems; out[14] = out_itemsize; out[15] = out_shape0; out[16] = out_stride0;
  out[17] = (out_meminfo == 0 && out_parent == 0) ? 1.0 : 0.0;
}

extern "C" __global__ void reverse_shared(ARR1(float, out), ARR1(float, in)) {
  extern __shared__ float buf[];
  int n = (int)in_shape0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}

__device__ int magic;
extern "C" __global__ void read_magic(ARR1(int, out)) { out[0] = magic; }

extern "C" __global__ void __launch_bounds__(128) bounded(ARR1(int, out)) { out[threadIdx.x] = threadIdx.x; }

extern "C" __global__ void slow_add(ARR1(float, x), float v, int iters) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < x_shape0) {
    float acc = x[i];
    for (int k = 0; k < iters; ++k) acc = acc * 0.999999f + 0.000001f * acc;
    x[i] = acc + v;
  }
}
"""


def _nvcc():
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    for candidate in (shutil.which("nvcc"), os.path.join(home, "bin", "nvcc")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def compile_kernels_ptx(arch="sm_75"):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "runtime_kernels.cu")
        with open(src, "w") as f:
            f.write(KERNELS_CU)
        out = os.path.join(tmp, "runtime_kernels.ptx")
        subprocess.run([_nvcc(), "-ptx", f"-arch={arch}", src, "-o", out], check=True, capture_output=True)
        with open(out) as f:
            return f.read()


def kernels_ptx():
    if _nvcc() is not None:
        return compile_kernels_ptx()
    with open(STORED_PTX) as f:
        return f.read()


@pytest.fixture(scope="module")
def image():
    """A cubin for the current device (nvJitLink), or the PTX itself for the driver to JIT."""
    ptx = kernels_ptx()
    if linker.nvjitlink_available():
        cubin, _ = linker.link([("ptx", ptx, "runtime_kernels.ptx")], devices.get_current_device().compute_capability)
        assert cubin[:4] == b"\x7fELF"
        return cubin
    return ptx.encode() + b"\0"


_keys = iter(range(10**6))


@pytest.fixture
def module(image):
    key = f"test-runtime-{next(_keys)}"
    mod = modules.load_module(key, image)
    yield mod
    modules.unload_module(key)


# ---- devices and contexts --------------------------------------------------------------------------------------


@gpu_support.needs_device("the CUDA driver's version")
def test_devices_and_contexts(capsys):
    dev = devices.get_current_device()
    assert isinstance(dev.name, str) and dev.name
    assert len(dev.compute_capability) == 2 and dev.compute_capability >= (5, 0)
    assert dev.id == 0 or dev.id < len(devices.gpus)
    assert dev.WARP_SIZE == 32 and dev.MULTIPROCESSOR_COUNT > 0 and dev.MAX_THREADS_PER_BLOCK == 1024
    assert dev.uuid.startswith("GPU-")
    assert devices.select_device(dev.id) is dev
    ctx = devices.current_context()
    assert ctx.device is dev and ctx.handle != 0 and ctx == devices.current_context()
    free, total = ctx.get_memory_info()
    assert 0 < free <= total
    assert devices.driver_version() >= (12, 0)
    assert devices.detect() is True and "Found" in capsys.readouterr().out
    with devices.gpus[0] as g:
        assert devices.get_current_device() is g
    devices.synchronize()


def test_threads_get_the_primary_context():
    seen = []
    t = threading.Thread(target=lambda: seen.append(devices.current_context()))
    t.start()
    t.join()
    assert seen == [devices.current_context()]


# ---- memory ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.complex128, np.bool_])
@pytest.mark.parametrize("order", ["C", "F"])
def test_round_trips(dtype, order):
    rng = np.random.default_rng(1)
    host = np.asarray(rng.standard_normal((5, 7)) * 100, order=order).astype(dtype, order=order)
    d = devicearray.to_device(host)
    assert d.shape == host.shape and d.dtype == host.dtype and d.strides == host.strides
    np.testing.assert_array_equal(d.copy_to_host(), host)
    out = np.empty_like(host)
    assert d.copy_to_host(out) is out
    np.testing.assert_array_equal(out, host)
    like = devicearray.device_array_like(host)
    assert like.strides == host.strides
    like.copy_to_device(d)  # device to device
    np.testing.assert_array_equal(like.copy_to_host(), host)
    other = (host[::-1] if dtype is not np.bool_ else ~host).copy(order=order)
    like.copy_to_device(other)
    np.testing.assert_array_equal(like.copy_to_host(), other)


def test_views_read_and_write():
    host = np.arange(60, dtype=np.int32).reshape(6, 10)
    d = devicearray.to_device(host)
    for key in [
        (slice(1, 4), slice(None, None, 3)),
        slice(None, None, -1),
        (slice(None), 2),
        2,
        (slice(None, None, -2), slice(None, None, -3)),
        (Ellipsis, 7),
        (None, 1),
    ]:
        np.testing.assert_array_equal(d[key].copy_to_host(), host[key])
    assert d[2, 3] == host[2, 3] and isinstance(d[2, 3], np.int32)
    assert len(d) == 6 and len(d[1]) == 10
    np.testing.assert_array_equal(d.T.copy_to_host(), host.T)
    d[1] = 7
    host[1] = 7
    d[3:5] = np.full((2, 10), -1, np.int32)
    host[3:5] = -1
    d[0, 0] = 99
    host[0, 0] = 99
    np.testing.assert_array_equal(d.copy_to_host(), host)
    with pytest.raises(NotImplementedError):
        d[:, 1] = 5
    empty = d[2:2]
    assert empty.size == 0 and empty.copy_to_host().shape == (0, 10)
    assert devicearray.device_array((0, 3)).copy_to_host().shape == (0, 3)


def test_cuda_array_interface_interop():
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = devicearray.to_device(host)

    class Foreign:
        def __init__(self, desc):
            self.__cuda_array_interface__ = desc

    view = devicearray.as_cuda_array(Foreign(d[:, 1:].__cuda_array_interface__))
    assert view.ptr == d.ptr + 8
    np.testing.assert_array_equal(view.copy_to_host(), host[:, 1:])
    assert devicearray.to_device(view) is view


@gpu_support.needs_device("reads libcuda's memory info through ctypes")
def test_memory_is_freed_when_the_last_view_goes():
    import ctypes

    ctx = devices.current_context()
    ctx.synchronize()
    block, addresses = 64 << 20, []
    for _ in range(40):  # 2.5 GiB in all
        d = devicearray.device_array(block // 4, np.float32)
        addresses.append(d.__cuda_array_interface__["data"][0])
        view = d[10:]
        del d
        assert view.gpu_data.size == block
        del view
        assert ctx.deallocations_pending() <= 11  # flushed in batches of at most 10
    ctx.synchronize()
    assert ctx.deallocations_pending() == 0
    # Every allocation is gone from this process's address space (the device's free memory would not say:
    # other test processes share the GPU).
    get_range = ctypes.CDLL(os.environ.get("CUJIT_CUDA_DRIVER") or "libcuda.so.1").cuMemGetAddressRange_v2
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    assert all(get_range(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(a)) != 0 for a in set(addresses))


def test_driver_errors_carry_the_driver_name():
    with pytest.raises(errors.CudaDriverError) as info:
        _drv.device_attribute(0, 100000)  # no such attribute
    assert info.value.code_name == "CUDA_ERROR_INVALID_VALUE" and info.value.call == "cuDeviceGetAttribute"
    assert info.value.code == 1
    assert "Call to cuDeviceGetAttribute results in CUDA_ERROR_INVALID_VALUE" in str(info.value)
    with pytest.raises(ValueError, match="does not exist"):
        devices.select_device(len(devices.gpus) + 5)


# ---- streams ---------------------------------------------------------------------------------------------------


def test_streams_order_copies():
    s = streams.stream()
    assert s.handle != 0 and "CUDA stream" in repr(s)
    host = np.arange(1 << 20, dtype=np.float32)
    d = devicearray.to_device(host, stream=s)
    out = d.copy_to_host(stream=s)
    s.synchronize()
    assert s.query() is True
    np.testing.assert_array_equal(out, host)
    with s.auto_synchronize():
        d.copy_to_device(host * 2, stream=s)
    np.testing.assert_array_equal(d.copy_to_host(), host * 2)
    for special in (streams.default_stream(), streams.legacy_default_stream(), streams.per_thread_default_stream()):
        special.synchronize()
    assert streams.default_stream().handle == 0
    assert streams.external_stream(s.handle).handle == s.handle


# ---- kernels ---------------------------------------------------------------------------------------------------


@gpu_support.needs_device("loads a PTX module with the driver")
def test_saxpy_device_arrays_and_host_arrays(module):
    fn = module.get_function("saxpy")
    assert fn.attributes.num_regs > 0 and fn.attributes.max_threads_per_block >= 256
    n = 100_003
    rng = np.random.default_rng(2)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    dx, dy = devicearray.to_device(x), devicearray.to_device(y)
    dr = devicearray.device_array_like(dx)
    plan = launch.plan_for(("float32[::1]", "float32", "float32[::1]", "float32[::1]"))
    grid = (n + 255) // 256
    launch.launch(fn, plan, grid, 256, 0, 0, (dr, np.float32(2.0), dx, dy))
    np.testing.assert_allclose(dr.copy_to_host(), 2 * x + y, rtol=1e-6)

    r = np.zeros_like(x)
    with pytest.warns(errors.NumbaPerformanceWarning, match="Host array used in CUDA kernel"):
        launch.launch(fn, plan, grid, 256, 0, 0, (r, 3.0, x, y))
    np.testing.assert_allclose(r, 3 * x + y, rtol=1e-6)

    # strided views and objects that only have __cuda_array_interface__, with a raw CUfunction handle
    class Foreign:
        def __init__(self, arr):
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    half = (n + 1) // 2
    out = devicearray.device_array(half, np.float32)
    launch.launch(
        fn.handle,
        ("float32[:]", "float32", "float32[:]", "float32[:]"),
        (half + 127) // 128,
        128,
        0,
        0,
        (out, -1.0, Foreign(dx[::2]), dy[::2]),
    )
    np.testing.assert_allclose(out.copy_to_host(), -x[::2] + y[::2], rtol=1e-6)


@gpu_support.needs_device("loads a PTX module with the driver")
def test_in_out_hints(module):
    fn = module.get_function("saxpy")
    n = 1000
    x, y = np.ones(n, np.float32), np.arange(n, dtype=np.float32)
    r = np.zeros(n, np.float32)
    plan = launch.plan_for(("float32[::1]", "float32", "float32[::1]", "float32[::1]"))
    launch.launch(fn, plan, 8, 128, 0, 0, (launch.Out(r), 1.0, launch.In(x), launch.In(y)))
    np.testing.assert_array_equal(r, x + y)


@gpu_support.needs_device("loads a PTX module with the driver")
def test_two_d_strided(module):
    fn = module.get_function("affine2d")
    host = np.random.default_rng(3).standard_normal((37, 53))
    d_in = devicearray.to_device(host)
    out = devicearray.device_array((53, 37), np.float64, order="F")  # out.T is C-contiguous (37, 53)
    plan = launch.plan_for(("float64[:, :]", "float64[:, :]"))
    launch.launch(fn, plan, ((53 + 15) // 16, (37 + 15) // 16), (16, 16), 0, 0, (out.T, d_in))
    i, j = np.indices(host.shape)
    np.testing.assert_allclose(out.copy_to_host().T, 2 * host + 1000 * i + j)
    view = d_in[::2, ::-3]
    res = devicearray.device_array(view.shape, np.float64)
    launch.launch(fn, plan, (8, 8), (16, 16), 0, 0, (res, view))
    i, j = np.indices(view.shape)
    np.testing.assert_allclose(res.copy_to_host(), 2 * host[::2, ::-3] + 1000 * i + j)


@gpu_support.needs_device("loads a PTX module with the driver")
def test_scalar_packing_on_device(module):
    fn = module.get_function("scalars")
    out = devicearray.device_array(18, np.float64)
    types = (
        "float64[::1]",
        "int8",
        "uint16",
        "int32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
        "bool",
        "complex128",
        "Tuple((int32, float32))",
    )
    values = (
        out,
        -5,
        65000,
        -123456,
        -(2**50) + 1,
        2**40 + 3,
        1.5,
        np.float32(0.25),
        1e300,
        True,
        complex(3.5, -4.5),
        (7, 2.5),
    )
    launch.launch(module.get_function("scalars"), types, 1, 1, 0, 0, values)
    got = out.copy_to_host()
    expected = [
        -5,
        65000,
        -123456,
        -(2**50) + 1,
        2**40 + 3,
        int(np.float16(1.5).view(np.uint16)),
        0.25,
        1e300,
        1.0,
        3.5,
        -4.5,
        7,
        2.5,
        18,
        8,
        18,
        8,
        1.0,
    ]
    np.testing.assert_array_equal(got, np.array(expected, np.float64))
    assert fn.name == "scalars"


@gpu_support.needs_device("loads a PTX module with the driver")
def test_dynamic_shared_memory(module):
    fn = module.get_function("reverse_shared")
    dev = devices.get_current_device()
    limit = dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN - fn.attributes.shared_size_bytes
    n = min(limit // 4, 20_000)  # 80 KB when the device allows it: above the 48 KB default
    host = np.arange(n, dtype=np.float32)
    out = devicearray.device_array(n, np.float32)
    plan = launch.plan_for(("float32[::1]", "float32[::1]"))
    launch.launch(fn, plan, 1, 256, 0, n * 4, (out, devicearray.to_device(host)))
    np.testing.assert_array_equal(out.copy_to_host(), host[::-1])
    with pytest.raises(errors.LaunchConfigError, match="bytes of dynamic shared memory"):
        launch.launch(fn, plan, 1, 256, 0, limit + 4, (out, out))


@gpu_support.needs_device("loads a PTX module with the driver")
def test_launch_config_errors_on_device(module):
    out = devicearray.device_array(256, np.int32)
    plan = launch.plan_for(("int32[::1]",))
    bounded = module.get_function("bounded")
    assert bounded.attributes.max_threads_per_block == 128
    launch.launch(bounded, plan, 1, 128, 0, 0, (out,))
    np.testing.assert_array_equal(out[:128].copy_to_host(), np.arange(128))
    with pytest.raises(errors.LaunchConfigError, match="limit of 128 for this kernel"):
        launch.launch(bounded, plan, 1, 256, 0, 0, (out,))
    with pytest.raises(errors.CudaDriverError, match="CUDA_ERROR_INVALID_VALUE"):
        launch.launch(module.get_function("read_magic"), plan, 1, 1025, 0, 0, (out,))
    with pytest.raises(errors.LaunchConfigError, match="zero threads"):
        launch.launch(bounded, plan, 0, 32, 0, 0, (out,))
    with pytest.raises(TypeError, match="takes 1 argument, got 2"):
        launch.launch(bounded, plan, 1, 32, 0, 0, (out, out))


@gpu_support.needs_device("loads a PTX module with the driver")
def test_launch_on_a_stream(module):
    fn = module.get_function("slow_add")
    s = streams.stream()
    n = 1 << 20
    d = devicearray.to_device(np.ones(n, np.float32), stream=s)
    plan = launch.plan_for(("float32[::1]", "float32", "int32"))
    launch.launch(fn, plan, n // 256, 256, s, 0, (d, 1.0, 2000))
    out = d.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_allclose(out, 2.0, rtol=1e-3)


@gpu_support.needs_device("loads a PTX module with the driver")
def test_module_hooks_globals_unload_and_reload(image):
    calls = []

    def setup(mod):
        calls.append(("setup", mod.handle))
        ptr, size = mod.get_global("magic")
        assert size == 4
        _drv.copy_htod(ptr, np.array([42], np.int32))

    def teardown(mod):
        assert mod.loaded and mod.get_global("magic")[1] == 4  # still usable: unloaded after teardown
        calls.append(("teardown", mod.handle))

    key = "test-runtime-hooks"
    results = run_threads(lambda _: modules.load_module(key, image, setup=setup, teardown=teardown), 8, together=False)
    assert len(results) == 8 and all(r is results[0] or r.handle == results[0].handle for r in results)
    assert calls == [("setup", results[0].handle)]
    mod = modules.find_module(key)
    assert mod.loaded and mod.kind in ("library", "module") and int(mod) == mod.handle
    out = devicearray.device_array(1, np.int32)
    fn = mod.get_function("read_magic")
    launch.launch(fn, ("int32[::1]",), 1, 1, 0, 0, (out,))
    assert out.copy_to_host()[0] == 42

    assert modules.unload_module(key) is True
    assert calls[-1] == ("teardown", results[0].handle) and not mod.loaded
    assert modules.find_module(key) is None and modules.unload_module(key) is False
    with pytest.raises(errors.CudaDriverError, match="unloaded"):
        launch.launch(fn, ("int32[::1]",), 1, 1, 0, 0, (out,))

    def failing_setup(mod):
        raise KeyError("setup failed")

    count = modules.loaded_module_count()
    with pytest.raises(KeyError, match="setup failed"):
        modules.load_module(key, image, setup=failing_setup, teardown=teardown)
    assert modules.loaded_module_count() == count and calls[-1][0] == "teardown" and len(calls) == 2
    again = modules.load_module(key, image, setup=setup, teardown=teardown)
    assert calls[-1] == ("setup", again.handle)
    devices.current_context().reset()  # unloads every module of the context, teardown first
    assert calls[-1] == ("teardown", again.handle) and not again.loaded


def test_bad_images_raise_driver_errors():
    # With CUDA's lazy module loading (the default since 12.2) a bad image may only be
    # rejected when a kernel is first looked up in it: either step must raise.
    with pytest.raises(errors.CudaDriverError) as info:
        module = modules.load_module("test-runtime-junk", b"definitely not a cubin\0")
        module.get_function("kernel")
    assert info.value.code_name.startswith("CUDA_ERROR_")
    modules.unload_key("test-runtime-junk")
    assert modules.find_module("test-runtime-junk") is None


if __name__ == "__main__":
    # Regenerates the stored PTX the tests use where nvcc is missing.
    if len(sys.argv) > 1 and sys.argv[1] == "--write-ptx":
        os.makedirs(os.path.dirname(STORED_PTX), exist_ok=True)
        with open(STORED_PTX, "w") as f:
            f.write(compile_kernels_ptx())
        print("wrote", STORED_PTX)
    else:
        print("usage: python tests/runtime/test_runtime_gpu.py --write-ptx")
