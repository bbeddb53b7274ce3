"""The runtime's behaviour that needs no GPU: imports, a clear "no driver" story, launch-configuration checks,
the kernel argument layout (against struct.pack), argument plans from types, device-array views (on fake
memory), and linking with nvJitLink when the library can be found."""

import glob
import os
import struct
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from cujit import _core, errors
from cujit.cudadrv import devicearray, devices, launch, linker, modules
from cujit.cudadrv import stream as streams

_drv = _core.driver
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository

no_driver = pytest.mark.skipif(devices.is_available(), reason="a CUDA driver is available here")


# ---- no driver -----------------------------------------------------------------------------------------------


def test_import_and_names():
    for name in (
        "is_available",
        "detect",
        "get_current_device",
        "select_device",
        "current_context",
        "synchronize",
        "gpus",
    ):
        assert hasattr(devices, name)
    for name in ("DeviceNDArray", "to_device", "device_array", "device_array_like"):
        assert hasattr(devicearray, name)
    for name in ("Stream", "stream", "default_stream"):
        assert hasattr(streams, name)
    assert callable(launch.launch)


@no_driver
def test_unavailable_is_false_with_a_reason():
    assert devices.is_available() is False
    reason = devices.cuda_error()
    assert "libcuda" in reason or "cuInit" in reason or "no GPU" in reason
    status = _drv.status()
    assert status.available is False and status.reason == reason


@no_driver
@pytest.mark.parametrize(
    "call",
    [
        lambda: devices.get_current_device(),
        lambda: devices.current_context(),
        lambda: devices.select_device(0),
        lambda: devices.synchronize(),
        lambda: devicearray.device_array(10),
        lambda: devicearray.to_device(np.arange(4)),
        lambda: streams.stream(),
        lambda: modules.load_module("k", b"\x7fELF"),
        lambda: _drv.allocate(16),
    ],
)
def test_gpu_calls_raise_cuda_support_error(call):
    with pytest.raises(errors.CudaSupportError, match="CUDA is not available"):
        call()


@no_driver
def test_detect_and_gpus_without_driver(capsys):
    assert devices.detect() is False
    assert "not available" in capsys.readouterr().out
    assert len(devices.gpus) == 0
    devices.close()  # no context: nothing to do


def test_error_names_without_driver():
    assert _drv.error_name(1) == "CUDA_ERROR_INVALID_VALUE"
    assert _drv.error_name(700) == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert _drv.error_name(123456).startswith("CUDA_ERROR_")


def test_exit_handler_does_not_touch_the_driver():
    assert modules.loaded_module_count() == 0
    modules._unload_at_exit()


# ---- launch configuration ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grid, block, shared, fragment",
    [
        (1, 0, 0, "zero threads"),
        (0, 32, 0, "grid (0, 1, 1) has 0 in x"),
        ((1, 1), (32, 0), 0, "block (32, 0, 1) has 0 in y"),
        (1, 1025, 0, "at most 1024"),
        (1, (32, 64), 0, "2048 threads per block"),
        (1, (1, 1, 65), 0, "has 65 in z; the device allows at most 64"),
        ((1, 65536), 1, 0, "has 65536 in y"),
        (2**31, 1, 0, "has 2147483648 in x"),
        (1, -4, 0, "has -4 in x"),
        (1, 32, 48 * 1024 + 1, "49153 bytes of dynamic shared memory"),
    ],
)
def test_launch_config_errors(grid, block, shared, fragment):
    with pytest.raises(errors.LaunchConfigError) as info:
        launch.validate_launch_config(grid, block, shared)
    message = str(info.value)
    assert message.startswith("CUDA_ERROR_INVALID_VALUE")
    assert fragment in message
    assert isinstance(info.value, errors.CudaDriverError) and isinstance(info.value, ValueError)
    assert info.value.code_name == "CUDA_ERROR_INVALID_VALUE"


def test_launch_config_limits_of_a_kernel():
    launch.validate_launch_config((65535, 65535, 65535), (1024, 1, 1), 48 * 1024)  # fine everywhere
    limits = {"max_threads_per_block": 256, "static_shared": 1024, "max_shared_per_block": 100 * 1024}
    with pytest.raises(errors.LaunchConfigError, match="limit of 256 for this kernel"):
        launch.validate_launch_config(1, 512, 0, limits)
    launch.validate_launch_config(1, 256, 99 * 1024, limits)
    with pytest.raises(errors.LaunchConfigError, match="plus 1024 bytes of static shared memory"):
        launch.validate_launch_config(1, 256, 99 * 1024 + 1, limits)


def test_normalize_dims_matches_numba():
    assert launch.normalize_dims(4, "griddim") == (4, 1, 1)
    assert launch.normalize_dims((4, 2), "griddim") == (4, 2, 1)
    assert launch.normalize_dims([1, 2, 3], "blockdim") == (1, 2, 3)
    assert launch.normalize_dims(np.int64(7), "blockdim") == (7, 1, 1)
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, got \[1, 2, 3, 4\]"):
        launch.normalize_dims((1, 2, 3, 4), "griddim")
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got \[1.5\]"):
        launch.normalize_dims(1.5, "blockdim")
    with pytest.raises(ValueError, match="Kernel launch configuration was not specified"):
        launch.configure(None, 32)


def test_low_occupancy_warning(monkeypatch):
    monkeypatch.delenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)
    monkeypatch.delenv("CUJIT_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)
    with pytest.warns(
        errors.NumbaPerformanceWarning,
        match="Grid size 4 will likely result in GPU under-utilization due to low occupancy",
    ):
        assert launch.configure((2, 2), 32) == ((2, 2, 1), (32, 1, 1), 0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launch.configure(128, 32)
        monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
        launch.configure(1, 32)


# ---- the kernel parameter buffer ------------------------------------------------------------------------------


def _struct_layout(fmt, *values):
    """struct's native ('@') layout aligns each field to its size, as the plan does; pad the end to 8."""
    raw = struct.pack("@" + fmt, *values)
    return raw + b"\0" * (-len(raw) % 8)


def test_pack_scalars_against_struct():
    k = _drv.KernelLauncher([("b", 1), ("i", 4), ("u", 1), ("f", 8), ("u", 2), ("f", 4), ("i", 8), ("f", 2)])
    values = [True, -7, 200, 2.5, 65535, 0.1, -(2**40), 1.5]
    expected = _struct_layout("?iBdHfqe", True, -7, 200, 2.5, 65535, 0.1, -(2**40), 1.5)
    assert k.pack(values) == expected
    assert k.param_count == 8
    assert k.param_offsets == [0, 4, 8, 16, 24, 28, 32, 40]
    assert k.param_sizes == [1, 4, 1, 8, 2, 4, 8, 2]
    assert k.buffer_size == len(expected) == 48
    assert k.slots == [("b", 1), ("i", 4), ("u", 1), ("f", 8), ("u", 2), ("f", 4), ("i", 8), ("f", 2)]


def test_pack_arrays_against_struct():
    k = _drv.KernelLauncher([("i", 4), ("array", 2), ("f", 4), ("array", 0), ("array", 1)])
    a2 = (0xDEAD0000, 12, 8, (3, 4), (32, 8))
    a0 = (0x1000, 1, 4, (), ())
    a1 = (0x2000, 5, 2, (5,), (-2,))
    got = k.pack([3, a2, 1.25, a0, a1])
    expected = _struct_layout(
        "i" + "qqqqq" + "qq" + "qq" + "f" + "qqqqq" + "qqqqq" + "q" + "q",
        3,
        0,
        0,
        12,
        8,
        0xDEAD0000,
        3,
        4,
        32,
        8,
        1.25,
        0,
        0,
        1,
        4,
        0x1000,
        0,
        0,
        5,
        2,
        0x2000,
        5,
        -2,
    )
    assert got == expected
    assert k.param_count == 1 + 9 + 1 + 5 + 7


def test_pack_integer_wrapping_and_errors():
    k = _drv.KernelLauncher([("u", 1), ("i", 2), ("u", 8), ("i", 4)])
    got = k.pack([-1, 40000, -1, np.int64(-5)])
    assert got == _struct_layout("BhQi", 255, 40000 - 65536, 2**64 - 1, -5)
    with pytest.raises(TypeError, match="slot 0 expects an integer, got float"):
        k.pack([1.5, 0, 0, 0])
    with pytest.raises(TypeError, match="the argument plan has 4 slots, got 3 values"):
        k.pack([1, 2, 3])
    fk = _drv.KernelLauncher([("f", 4)])
    with pytest.raises(TypeError, match="expects a real number, got str"):
        fk.pack(["x"])
    ak = _drv.KernelLauncher([("array", 2)])
    with pytest.raises(TypeError, match="is a 2-d array"):
        ak.pack([(0, 1, 4, (1,), (4,))])
    with pytest.raises(TypeError, match=r"expected \(data, nitems, itemsize, shape, strides\)"):
        ak.pack([np.zeros((2, 2))])


@pytest.mark.parametrize("slot", [("f", 1), ("i", 3), ("u", 16), ("array", -1), ("x", 4)])
def test_bad_slots(slot):
    with pytest.raises(ValueError):
        _drv.KernelLauncher([slot])


def test_half_bits_matches_numpy():
    rng = np.random.default_rng(0)
    special = [
        0.0,
        -0.0,
        1.0,
        -2.0,
        65504.0,
        65519.99,
        65520.0,
        1e6,
        -1e6,
        2**-24,
        2**-25,
        2**-25 * 1.0001,
        2**-26,
        3 * 2**-25,
        2**-14,
        2**-14 - 2**-25,
        1 + 2**-11,
        1 + 3 * 2**-11,
        5e-324,
        float("inf"),
        float("-inf"),
        1 / 3,
        0.1,
        6.1e-5,
    ]
    values = special + list(rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 6, 2000))
    with np.errstate(over="ignore"):
        for v in values:
            assert _drv.half_bits(v) == int(np.float16(v).view(np.uint16)), v
    nan = _drv.half_bits(float("nan"))
    assert nan & 0x7C00 == 0x7C00 and nan & 0x3FF


# ---- plans from argument types -------------------------------------------------------------------------------


class FakeCudaArray:
    """An object that describes device memory without any driver: enough to pack a launch."""

    def __init__(self, ptr, shape, dtype, strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": np.dtype(dtype).str,
            "data": (ptr, False),
            "strides": strides,
            "version": 3,
            "stream": None,
        }


def test_plan_slots_follow_the_kernel_abi():
    plan = launch.LaunchPlan(
        [
            "float32[::1]",
            "int8",
            "uint16",
            "float16",
            "complex64",
            "complex128",
            "bool",
            "UniTuple(int32, 2)",
            "float64[:, :]",
            "voidptr",
            "none",
            "int64",
        ]
    )
    assert plan.slots == (
        ("array", 1),
        ("i", 1),
        ("u", 2),
        ("f", 2),
        ("f", 4),
        ("f", 4),
        ("f", 8),
        ("f", 8),
        ("b", 1),
        ("i", 4),
        ("i", 4),
        ("array", 2),
        ("u", 8),
        ("i", 8),
    )
    assert plan.launcher.param_count == 7 + 1 + 1 + 1 + 2 + 2 + 1 + 2 + 9 + 1 + 1
    assert launch.plan_for(("float32[::1]",)) is launch.plan_for(("float32[::1]",))


def test_plan_pack_against_struct():
    plan = launch.LaunchPlan(
        ["float32[::1]", "float32", "complex128", "Tuple((int32, float64))", "int32[:, ::1]", "voidptr", "bool"]
    )
    x = FakeCudaArray(0x7000, (10,), np.float32)
    y = FakeCudaArray(0x9000, (3, 4), np.int32)
    got = plan.pack([x, np.float32(2.0), 1 + 2j, (5, 0.5), y, 0x1234, False])
    expected = _struct_layout(
        "qqqqqqq" + "f" + "dd" + "id" + "qqqqqqqqq" + "Q" + "?",
        0,
        0,
        10,
        4,
        0x7000,
        10,
        4,
        2.0,
        1.0,
        2.0,
        5,
        0.5,
        0,
        0,
        12,
        4,
        0x9000,
        3,
        4,
        16,
        4,
        0x1234,
        False,
    )
    assert got == expected


def test_plan_argument_errors():
    plan = launch.LaunchPlan(["float32[:, :]", "UniTuple(int64, 2)"])
    two_d = FakeCudaArray(0x100, (2, 2), np.float32)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        plan.pack([two_d])
    with pytest.raises(TypeError, match="must be a 2-d array, got a 1-d array"):
        plan.pack([FakeCudaArray(0x100, (4,), np.float32), (1, 2)])
    with pytest.raises(TypeError, match="must be a tuple of 2 elements"):
        plan.pack([two_d, (1, 2, 3)])
    with pytest.raises(TypeError, match="must be an array"):
        plan.pack([[1.0, 2.0], (1, 2)])


# ---- device-array views on fake memory -----------------------------------------------------------------------


def _fake_device_array(host):
    base = 0x10_0000_0000
    owner = devicearray._ExternalMemory(base, None)
    return devicearray.DeviceNDArray(host.shape, host.strides, host.dtype, gpu_data=owner, ptr=base), base


@pytest.mark.parametrize(
    "key",
    [
        0,
        -1,
        slice(None),
        slice(1, 3),
        slice(None, None, -1),
        slice(None, None, 2),
        (slice(None), 1),
        (1, slice(None, None, -2)),
        Ellipsis,
        (Ellipsis, 2),
        (None, slice(1, 2)),
        (slice(2, 2),),
        (slice(None), None, 0),
        (slice(-2, None), slice(None, 1)),
    ],
)
def test_views_match_numpy(key):
    host = np.zeros((4, 6), np.float64)
    dev, base = _fake_device_array(host)
    expected = host[key]
    view = dev[key]
    assert view.shape == expected.shape
    assert view.strides == expected.strides
    assert view.dtype == expected.dtype
    if expected.size:
        assert view.ptr - base == expected.ctypes.data - host.ctypes.data
    assert view.gpu_data is dev.gpu_data
    assert view.is_c_contiguous() == expected.flags.c_contiguous
    assert view.is_f_contiguous() == expected.flags.f_contiguous
    assert view.alloc_size == (
        0
        if not expected.size
        else devicearray._extent(expected.shape, expected.strides, 8)[1]
        - devicearray._extent(expected.shape, expected.strides, 8)[0]
    )


def test_element_offsets():
    dev, _ = _fake_device_array(np.zeros((4, 6), np.float64))
    assert dev._view_of((1, 2)) == ((), (), 1 * 48 + 2 * 8)
    assert dev._view_of((-1, -1)) == ((), (), 3 * 48 + 5 * 8)
    reverse = dev[::-1]
    assert reverse.ptr - dev.ptr == 3 * 48 and reverse.strides == (-48, 8)


def test_view_errors_and_len():
    dev, _ = _fake_device_array(np.zeros((4, 6), np.int32))
    assert len(dev) == 4
    assert dev.size == 24 and dev.ndim == 2 and dev.nbytes == 96
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 6"):
        dev[0, 6]
    with pytest.raises(IndexError, match="too many indices"):
        dev[0, 0, 0]
    with pytest.raises(IndexError, match="valid indices"):
        dev[[0, 1]]
    with pytest.raises(TypeError, match="unsized"):
        len(devicearray.DeviceNDArray((), None, np.int32, gpu_data=devicearray._ExternalMemory(0x100, None)))


def test_cuda_array_interface_and_layout():
    host = np.zeros((3, 5), np.float32)
    dev, base = _fake_device_array(host)
    cai = dev.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 5) and cai["strides"] is None
    assert cai["typestr"] == "<f4" and cai["data"] == (base, False) and cai["stream"] is None
    t = dev.T
    assert t.shape == (5, 3) and t.strides == (4, 20) and t.layout == "F"
    assert t.__cuda_array_interface__["strides"] == (4, 20)
    assert dev[:, ::2].layout == "A"
    assert dev.reshape(15).shape == (15,) and dev.reshape(5, -1).strides == (12, 4)
    assert dev.view(np.int32).dtype == np.int32 and dev.view(np.uint8).shape == (3, 20)
    with pytest.raises(NotImplementedError):
        dev[:, ::2].reshape(9)
    wrapped = devicearray.as_cuda_array(FakeCudaArray(0x5000, (2, 3), np.int16, (2, 4)))
    assert wrapped.shape == (2, 3) and wrapped.strides == (2, 4) and wrapped.ptr == 0x5000
    assert devicearray.is_cuda_array(wrapped) and not devicearray.is_cuda_array(host)


def test_stream_arguments_without_driver():
    assert streams.native_stream(0) is None and streams.native_stream(None) is None
    assert streams.stream_handle(0) == 0
    with pytest.raises(TypeError, match="expected a stream"):
        streams.native_stream("fast")


# ---- nvJitLink -----------------------------------------------------------------------------------------------


def _nvjitlink_candidates():
    found = []
    from cujit import toolkit

    for d in toolkit.wheel_roots():
        found += sorted(glob.glob(os.path.join(d, "lib", "libnvJitLink.so*")))
    for pattern in (
        os.path.join(ROOT, ".*venv*", "lib", "python*", "site-packages", "nvidia", "*", "lib"),
        os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64"),
    ):
        for d in glob.glob(pattern):
            found += sorted(glob.glob(os.path.join(d, "libnvJitLink.so*")))
    return found


NVJITLINK = os.environ.get("CUJIT_NVJITLINK") or next(iter(_nvjitlink_candidates()), None)
needs_nvjitlink = pytest.mark.skipif(NVJITLINK is None, reason="libnvJitLink not found")

KERNEL_CU = r"""
extern "C" __global__ void fill(float* x, float v) { x[threadIdx.x] = v; }
extern "C" __device__ int helper(int);
extern "C" __global__ void call_helper(int* x) { x[0] = helper(x[1]); }
"""
HELPER_CU = r"""extern "C" __device__ int helper(int v) { return v + 1; }"""


def _nvcc():
    for candidate in (
        os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"),
        "/usr/local/cuda/bin/nvcc",
    ):
        if os.path.exists(candidate):
            return candidate
    return None


def _compile(source, tmp_path, name, *flags):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(source)
    out = tmp_path / f"{name}.out"
    subprocess.run(
        [_nvcc(), "-arch=sm_80", "-rdc=true", *flags, str(cu), "-o", str(out)], check=True, capture_output=True
    )
    return out.read_bytes()


def _run_with_nvjitlink(script, library=NVJITLINK):
    """nvJitLink is loaded once per process: each case runs in a fresh interpreter."""
    env = dict(os.environ, CUJIT_NVJITLINK=library)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_link_options():
    assert linker.link_options(["ptx"], (9, 0)) == ["-arch=sm_90a"]
    assert linker.link_options(["ptx", "cubin"], (8, 6)) == ["-arch=sm_86"]
    assert linker.link_options(["ptx", "ltoir"], "sm_80", max_registers=40, lineinfo=True) == [
        "-arch=sm_80",
        "-maxrregcount=40",
        "-lineinfo",
        "-lto",
    ]
    assert linker.link_options(["ltoir"], (7, 5), ptx=True, debug=True) == ["-arch=sm_75", "-g", "-lto", "-ptx"]
    assert linker.arch_for((9, 0, "")) == "sm_90" and linker.arch_for((10, 0)) == "sm_100a"


def test_input_kinds_for_paths(tmp_path):
    for ext, kind in [
        (".ptx", "ptx"),
        (".cubin", "cubin"),
        (".fatbin", "fatbin"),
        (".o", "object"),
        (".a", "library"),
        (".ltoir", "ltoir"),
    ]:
        path = tmp_path / f"x{ext}"
        path.write_bytes(b"x")
        assert linker.input_kind_for_path(str(path)) == kind
    with pytest.raises(errors.LinkerError, match="not found"):
        linker.input_kind_for_path(str(tmp_path / "missing.ptx"))
    with pytest.raises(RuntimeError, match="Don't know how to link file with no extension"):
        linker.input_kind_for_path("noext")
    with pytest.raises(RuntimeError, match="Don't know how to link file with extension .cuh"):
        linker.input_kind_for_path("a.cuh")
    with pytest.raises(TypeError, match="Expected path to file or a LinkableCode object"):
        linker.input_kind_for_path(b"bytes")


def test_missing_nvjitlink_names_the_library_and_places():
    out = _run_with_nvjitlink(
        """
        from cujit import errors
        from cujit.cudadrv import linker
        status = linker.nvjitlink_status()
        assert not status.available
        try:
            linker.link([("ptx", ".version 8.0", "x")], "sm_80")
        except errors.LinkerError as e:
            print(e)
        """,
        library="/nonexistent/libnvJitLink.so.13",
    )
    assert "nvJitLink" in out and "/nonexistent/libnvJitLink.so.13" in out and "CUJIT_NVJITLINK" in out


def test_search_order_lists_cuda_home_first():
    out = _run_with_nvjitlink(
        """
        import os
        os.environ["CUDA_HOME"] = "/opt/some-cuda"
        from cujit import toolkit
        info = toolkit.library("nvrtc")
        searched = [p for p in info.searched if "/" in p]
        print(searched[0])
        print(info.found and not info.path.startswith("/opt/some-cuda"))
        """,
        library="",
    )
    first, found_elsewhere = out.split()[-2:]
    assert first.startswith("/opt/some-cuda/lib64/") and found_elsewhere == "True"


@needs_nvjitlink
@pytest.mark.skipif(_nvcc() is None, reason="nvcc not found")
def test_link_ptx_to_cubin(tmp_path):
    ptx = _compile(KERNEL_CU, tmp_path, "kernel", "-ptx")
    helper = _compile(HELPER_CU, tmp_path, "helper", "-ptx")
    helper_cubin = _compile(HELPER_CU, tmp_path, "helper_cubin", "-cubin")
    (tmp_path / "kernel.ptx").write_bytes(ptx)
    (tmp_path / "helper.ptx").write_bytes(helper)
    (tmp_path / "helper.cubin").write_bytes(helper_cubin)
    out = _run_with_nvjitlink(f"""
        from cujit import errors
        from cujit.cudadrv import linker
        status = linker.nvjitlink_status()
        assert status.available, status
        assert status.version >= (12, 3), status
        kernel = open({str(tmp_path / "kernel.ptx")!r}).read()
        image, log = linker.link([("ptx", kernel, "<cudapy-ptx>"), linker.read_input({str(tmp_path / "helper.ptx")!r})],
                                 (8, 0))
        assert image[:4] == b"\\x7fELF", image[:16]
        image, _ = linker.link([("ptx", kernel.encode(), "<cudapy-ptx>"),
                                linker.read_input({str(tmp_path / "helper.cubin")!r})], "sm_80")
        assert image[:4] == b"\\x7fELF"
        image, _ = linker.link([("ptx", kernel, "<cudapy-ptx>"), linker.read_input({str(tmp_path / "helper.ptx")!r})],
                               (9, 0))
        assert image[:4] == b"\\x7fELF"
        try:
            linker.link([("ptx", kernel, "<cudapy-ptx>")], "sm_80")
        except errors.LinkerError as e:
            print("UNDEFINED:", e)
        try:
            linker.link([("ptx", kernel, "<cudapy-ptx>")], "sm_80", extra=["-no-such-option"])
        except errors.LinkerError as e:
            print("OPTION:", e)
        try:
            linker.link([("ptx", "this is not ptx", "junk")], "sm_80")
        except errors.LinkerError as e:
            print("JUNK:", e)
        print("OK")
        """)
    assert "OK" in out
    assert "UNDEFINED: ERROR_INTERNAL (6)\nnvJitLink error log: " in out
    assert "Undefined reference to 'helper' in '<cudapy-ptx>'" in out
    assert "OPTION: ERROR_UNRECOGNIZED_OPTION" in out or "OPTION: ERROR_" in out
    assert "JUNK: ERROR_" in out


@needs_nvjitlink
def test_stored_gpu_test_ptx_links():
    """The PTX the GPU tests fall back on (no nvcc on the GPU machine) links."""
    path = os.path.join(ROOT, "tests", "data", "runtime_kernels.ptx")
    out = _run_with_nvjitlink(f"""
        from cujit.cudadrv import linker
        image, log = linker.link([("ptx", open({path!r}).read(), "runtime_kernels.ptx")], (9, 0))
        assert image[:4] == b"\\x7fELF"
        print("OK")
        """)
    assert "OK" in out


def test_link_input_validation():
    with pytest.raises(ValueError, match="Don't know how to link bogus"):
        linker.link([("bogus", b"x", "x")], "sm_80")
    with pytest.raises(ValueError, match="no inputs"):
        linker.link([], "sm_80")


# ---- the GPU suite on a host-side stand-in for libcuda ------------------------------------------------------


def test_gpu_suite_on_the_fake_driver(fake_driver):
    """Every GPU test, against a libcuda stand-in that keeps "device" memory on the host and runs the test
    kernels there: contexts, copies, views, streams, module hooks and the kernel ABI end to end."""
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            os.path.join(ROOT, "tests", "runtime", "test_runtime_gpu.py"),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "passed" in result.stdout and "skipped" not in result.stdout and "failed" not in result.stdout


def test_nothing_leaks_on_the_fake_driver(fake_driver):
    script = f"""
        import ctypes, gc
        import numpy as np
        from cujit.cudadrv import devicearray, devices, launch, modules, stream
        fake = ctypes.CDLL({fake_driver!r})
        fake.fake_live_bytes.restype = ctypes.c_longlong
        assert devices.is_available()
        ptx = open({os.path.join(ROOT, "tests", "data", "runtime_kernels.ptx")!r}, "rb").read() + b"\\0"
        for round in range(3):
            arrays = [devicearray.to_device(np.arange(1000.0)) for _ in range(25)]
            views = [a[::3] for a in arrays]
            del arrays
            streams = [stream.stream() for _ in range(5)]
            mod = modules.load_module("leak", ptx)
            out = np.zeros(1000)
            with np.testing.suppress_warnings() as sup:
                sup.filter(Warning)
                launch.launch(mod.get_function("saxpy"), ("float32[::1]", "float32", "float32[::1]", "float32[::1]"),
                              4, 256, 0, 0,
                              (np.zeros(1000, np.float32), 1.0, np.ones(1000, np.float32), np.ones(1000, np.float32)))
            assert fake.fake_live_bytes() > 0
            del views, streams, mod, out
            gc.collect()
            modules.unload_key("leak")
            devices.synchronize()  # flushes deferred frees
            assert fake.fake_live_bytes() == 0, fake.fake_live_bytes()
            assert fake.fake_live_streams() == 0 and fake.fake_live_libraries() == 0
        modules.load_module("at-exit", ptx, teardown=lambda m: print("TEARDOWN", m.key, m.loaded))
        print("DONE")
        """
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["DONE", "TEARDOWN", "at-exit", "True"]
