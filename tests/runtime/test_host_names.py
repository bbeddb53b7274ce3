"""Small host names of numba-cuda's ``cuda`` namespace, as users write them: ``cuda.KernelRuntimeError``,
``cuda.is_float16_supported()``, ``cuda.cuda_error()``, ``cuda.is_supported_version()`` and ``cuda.runtime``,
``cuda.from_cuda_array_interface(desc, owner=None, sync=True)``; and that every host-runtime name of issue 27
resolves from ``cujit.cuda``. The driver-dependent ones run on the fake libcuda (tests/fake_cuda) in their own
process; the rest here."""

import os
import textwrap

import pytest

from cujit import cuda, errors
from cujit.cudadrv import devices
from script_runs import run_script

# numba-cuda 0.30.4's host-runtime names that cujit.cuda resolves (docs/runtime.md and the memory pages).
HOST_NAMES = """
    event event_elapsed_time gpus select_device get_current_device list_devices close current_context
    require_context profile_start profile_stop profiling from_cuda_array_interface KernelRuntimeError
    is_supported_version runtime is_float16_supported is_bfloat16_supported detect is_available cuda_error
    synchronize stream default_stream legacy_default_stream per_thread_default_stream external_stream to_device
    device_array device_array_like as_cuda_array is_cuda_array
""".split()


@pytest.mark.parametrize("name", HOST_NAMES)
def test_the_name_resolves(name):
    assert getattr(cuda, name) is not None


def test_kernel_runtime_error():
    assert cuda.KernelRuntimeError is errors.KernelRuntimeError and issubclass(cuda.KernelRuntimeError, RuntimeError)
    e = cuda.KernelRuntimeError("index out of range", tid=[0, 0, 3], ctaid=[0, 0, 1])
    assert (e.msg, e.tid, e.ctaid) == ("index out of range", [0, 0, 3], [0, 0, 1])
    assert str(e) == "An exception was raised in thread=[0, 0, 3] block=[0, 0, 1]\n\tindex out of range"
    with pytest.raises(cuda.KernelRuntimeError, match="thread=None block=None"):
        raise cuda.KernelRuntimeError("plain")


def test_float16_is_always_supported():
    assert cuda.is_float16_supported() is True


@pytest.mark.skipif(devices.is_available(), reason="a CUDA driver is available here")
def test_cuda_error_without_a_driver():
    assert isinstance(cuda.cuda_error(), str) and cuda.cuda_error() == devices.cuda_error()


def test_with_the_fake_driver(fake_driver):
    body = textwrap.dedent("""
        import numpy as np
        from cujit import cuda
        assert cuda.cuda_error() is None
        assert cuda.runtime.get_version() == (13, 0) and cuda.is_supported_version() is True
        assert (13, 0) in cuda.runtime.supported_versions and cuda.runtime.is_supported_version()

        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        d = cuda.to_device(x)
        view = cuda.from_cuda_array_interface(d.__cuda_array_interface__, owner=d)
        assert view.shape == (3, 4) and view.dtype == np.float32 and view.ptr == d.ptr
        np.testing.assert_array_equal(view.copy_to_host(), x)
        s = cuda.stream()
        desc = dict(d.__cuda_array_interface__, stream=s.handle)
        np.testing.assert_array_equal(cuda.from_cuda_array_interface(desc, owner=d, sync=True).copy_to_host(), x)
        cuda.from_cuda_array_interface(desc, sync=False)
        try:
            cuda.from_cuda_array_interface(dict(desc, mask=object()))
        except NotImplementedError as e:
            assert "masked" in str(e)
        else:
            raise AssertionError("a masked array was accepted")
        print("OK")
    """)
    run_script(body, "_host_names.py", dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver))
