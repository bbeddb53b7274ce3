"""numba's names in cujit (issue 41): the exception and warning hierarchy of numba.core.errors."""

import inspect

import pytest

from cujit import errors


def test_errors_have_numbas_hierarchy():
    numba_errors = pytest.importorskip("numba.core.errors")
    checked = 0
    for name, cls in vars(numba_errors).items():
        if not (inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == "numba.core.errors"):
            continue
        ours = getattr(errors, name, None)
        assert ours is not None, f"cujit.errors lacks {name}"
        for base in cls.__bases__:
            expected = getattr(errors, base.__name__, base)
            assert issubclass(ours, expected), f"{name} is not a {base.__name__}"
        checked += 1
    assert checked >= 40


def test_cujits_own_errors_keep_their_builtin_bases():
    assert issubclass(errors.NumbaValueError, ValueError) and issubclass(errors.NumbaValueError, errors.TypingError)
    assert issubclass(errors.InternalError, RuntimeError) and issubclass(errors.LoweringError, errors.NumbaError)
    assert issubclass(errors.NumbaPerformanceWarning, errors.NumbaWarning)
    assert issubclass(errors.NumbaDeprecationWarning, DeprecationWarning)


def test_numba_cuda_names():
    from cujit import cuda, types

    assert cuda.bool is types.boolean and cuda.char is types.int8 and cuda.uchar is types.uint8
    assert cuda.size_t is types.uintp and cuda.ssize_t is types.intp and cuda.optional is types.Optional
    assert isinstance(cuda.HAS_NUMBA, bool)
    assert cuda.cudadrv.__name__ == "cujit.cudadrv" and cuda.errors is errors
    assert cuda.devicearray.DeviceNDArray is cuda.DeviceNDArray and cuda.compiler.compile_ptx is cuda.compile_ptx
    from cujit.cuda.libdevice import fmaf

    assert fmaf is cuda.libdevice.fmaf and "sinf" in cuda.libdevice.__all__
    from cujit import config

    assert config.CUDA_DEFAULT_PTX_CC == cuda.DEFAULT_CC and isinstance(config.ENABLE_CUDASIM, bool)


def test_dispatcher_resource_queries_on_the_cpu_target():
    import numpy as np

    from cujit import cuda

    @cuda.jit("void(float32[::1])", target="cpu")
    def kernel(x):
        s = cuda.shared.array(32, np.float32)
        s[cuda.threadIdx.x] = x[cuda.threadIdx.x]
        cuda.syncthreads()
        x[cuda.threadIdx.x] = s[31 - cuda.threadIdx.x]

    sig = "void(float32[::1])"
    assert kernel.get_shared_mem_per_block(sig) == 128
    assert kernel.get_regs_per_thread() == {(cuda.float32[::1],): 0}
    assert kernel.get_max_threads_per_block(sig) == 1024 and kernel.get_const_mem_size(sig) == 0
    assert kernel.get_local_mem_per_thread(sig) >= 0
    assert kernel.extensions == []
    with pytest.raises(NotImplementedError, match="no SASS"):
        kernel.inspect_sass()


def test_warning_switches_are_config_attributes(monkeypatch):
    import warnings

    from cujit import config
    from cujit.cudadrv import launch

    monkeypatch.delenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)
    monkeypatch.delenv("CUJIT_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launch.configure(1, 1)  # no low-occupancy warning: switched off at run time
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", None)  # the environment decides: on
    with pytest.warns(errors.NumbaPerformanceWarning, match="low occupancy"):
        launch.configure(1, 1)
    monkeypatch.setenv("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")
    assert not config.warning_enabled("CUDA_WARN_ON_IMPLICIT_COPY")
    monkeypatch.setattr(config, "CUDA_WARN_ON_IMPLICIT_COPY", 1)
    assert config.warning_enabled("CUDA_WARN_ON_IMPLICIT_COPY")


def test_a_contexts_pending_deallocations(monkeypatch):
    """numba-cuda's Context.deallocations and memory_manager.deallocations (stumpy clears them)."""
    import gc

    import numpy as np

    import gpu_support
    from cujit import cuda

    if not gpu_support.KERNELS_RUN:
        pytest.skip("needs a GPU or the CPU target")
    ctx = cuda.current_context()
    pending = ctx.deallocations
    pending.clear()
    assert len(pending) == 0
    with pending.disable():
        a = cuda.to_device(np.arange(10))
        del a
        gc.collect()
        assert len(ctx.memory_manager.deallocations) == 1
    pending.clear()
    assert len(pending) == 0


def test_cc_given_as_a_string():
    from cujit import compiler, cuda

    assert compiler.normalize_cc("90") == (9, 0) and compiler.normalize_cc("100a") == (10, 0, "a")
    for bad in ("9", "x90", "90ab"):
        with pytest.raises(ValueError, match="cc must be"):
            compiler.normalize_cc(bad)

    def add(x, y):
        return x + y

    ptx, _ = cuda.compile_ptx(add, "int32(int32, int32)", device=True, cc="86")
    assert ".target sm_86" in ptx


def test_is_available_answers_as_the_simulator_on_the_cpu_target(tmp_path):
    import os
    import subprocess
    import sys

    code = "from cujit import cuda; from cujit.cudadrv import devices; print(cuda.is_available(), devices.on_host_driver())"
    env = dict(os.environ, CUJIT_TARGET="cpu", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["True", "True"], out.stderr[-2000:]


def test_prepare_shape_strides_dtype_and_default_cc():
    import numpy as np

    from cujit import cuda

    assert cuda.prepare_shape_strides_dtype(4, None, np.float32, "C") == ((4,), (4,), np.dtype(np.float32))
    assert cuda.prepare_shape_strides_dtype((2, 3), None, "f8", "F") == ((2, 3), (8, 16), np.dtype(np.float64))
    assert cuda.prepare_shape_strides_dtype((2, 3), (24, 8), "f8", "C")[1] == (24, 8)
    with pytest.raises(TypeError, match="shape must be an integer"):
        cuda.prepare_shape_strides_dtype(2.0, None, "f8", "C")
    assert cuda.config_default_cc == cuda.numba_cuda_default_ptx_cc == cuda.DEFAULT_CC


def test_more_runtime_names(monkeypatch):
    import numpy as np

    import gpu_support
    from cujit import config
    from cujit.cudadrv import devicearray, driver, events, stream

    assert driver.Stream is stream.Stream and driver.Event is events.Event
    monkeypatch.setattr(config, "DISABLE_PERFORMANCE_WARNINGS", 1)
    assert not config.warning_enabled("CUDA_LOW_OCCUPANCY_WARNINGS")
    monkeypatch.setattr(config, "DISABLE_PERFORMANCE_WARNINGS", 0)
    if not gpu_support.KERNELS_RUN:
        return
    like = devicearray.from_array_like(np.zeros((3, 4), np.float32))
    assert (like.shape, like.strides, like.dtype) == ((3, 4), (16, 4), np.dtype(np.float32))


def test_gpus_lst_lists_the_devices():
    from cujit import cuda

    assert cuda.gpus.lst == list(cuda.gpus)
