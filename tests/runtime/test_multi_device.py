"""Several GPUs without GPUs: the fake libcuda (tests/fake_cuda) pretends CUJIT_FAKE_DEVICES of them, each with its
own primary context, and counts the modules loaded and the kernels launched per device. Checked here, as users
write it: ``cuda.gpus`` (len, indexing, slices, iteration, ``current``), ``with cuda.gpus[n]:`` pushing and
popping that device's primary context (nested, on errors, per thread), ``cuda.select_device``,
``cuda.get_current_device``, ``cuda.close``, ``cuda.require_context``; arrays allocated in the current context,
a kernel compiled once and loaded once per device it runs on, launched where the current context is; threads each
on their own device. Each scenario runs in its own process (the fake is chosen before cujit opens libcuda)."""

import os
import textwrap

from script_runs import run_script

PRELUDE = """
import ctypes, gc, os, threading, warnings
import numpy as np
from cujit import cuda, _core

fake = ctypes.CDLL(os.environ["CUJIT_CUDA_DRIVER"])
warnings.simplefilter("ignore")  # the low-occupancy warning of tiny launches

def depth():
    return fake.fake_context_depth()

def device_of(array):
    ctx = array.gpu_data.context
    return ctx.device_id if hasattr(ctx, "device_id") else ctx.device.id

def raises(cls, text, call, *args):
    try:
        call(*args)
    except cls as e:
        assert text in str(e), (text, str(e))
        return str(e)
    raise AssertionError(f"{call} did not raise {cls.__name__}")

@cuda.jit
def fill(out, value):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = value
"""


def run(fake_driver, body, devices=2):
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver, CUJIT_FAKE_DEVICES=str(devices))
    here = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})  # threads.py\n"
    return run_script(here + PRELUDE + textwrap.dedent(body), "_multi_device.py", env)


def test_gpus_as_a_list(fake_driver):
    run(
        fake_driver,
        """
        assert len(cuda.gpus) == 3
        assert cuda.gpus.current is None              # nothing made a context current yet (numba's answer)
        g0, g1, g2 = cuda.gpus                        # iteration
        assert [g.id for g in cuda.gpus] == [0, 1, 2] and cuda.list_devices() == [g0, g1, g2]
        assert cuda.gpus[1] is g1 and cuda.gpus[-1] is g2 and cuda.gpus[1:] == [g1, g2]
        assert g0.name == "cujit fake GPU" and g1.name == "cujit fake GPU 1" and g0.uuid != g1.uuid
        assert g1.compute_capability == (9, 0) and g1.MULTIPROCESSOR_COUNT == 132
        raises(IndexError, "there is no device 3; 3 CUDA devices are visible", lambda: cuda.gpus[3])
        raises(IndexError, "there is no device -4", lambda: cuda.gpus[-4])
        raises(TypeError, "cuda.gpus indices must be integers or slices, not str", lambda: cuda.gpus["1"])
        assert cuda.gpus[np.int64(2)] is g2
        cuda.current_context()
        assert cuda.gpus.current is g0                # device 0's primary context is the default
        print("OK")
    """,
        devices=3,
    )


def test_with_gpus_pushes_and_pops(fake_driver):
    run(
        fake_driver,
        """
        assert depth() == 0
        with cuda.gpus[1] as g:
            assert g is cuda.gpus[1] and cuda.get_current_device() is g and cuda.gpus.current is g
            assert depth() == 1 and cuda.current_context().device is g
            with cuda.gpus[0]:
                assert depth() == 2 and cuda.get_current_device().id == 0
            assert depth() == 1 and cuda.get_current_device().id == 1
        assert depth() == 0 and cuda.gpus.current is None   # popped: no context, as before the block
        cuda.select_device(0)
        with cuda.gpus[1]:
            assert cuda.get_current_device().id == 1
        assert depth() == 1 and cuda.get_current_device().id == 0   # the thread's own context again
        try:
            with cuda.gpus[1]:
                raise KeyError("inside")
        except KeyError:
            pass
        assert depth() == 1 and cuda.get_current_device().id == 0   # popped on the error too
        print("OK")
    """,
    )


def test_select_device_and_current_device(fake_driver):
    run(
        fake_driver,
        """
        dev = cuda.select_device(1)
        assert dev is cuda.gpus[1] and cuda.get_current_device() is dev and depth() == 1
        assert cuda.current_context() == dev.get_primary_context()
        assert cuda.current_context() != cuda.gpus[0].get_primary_context()
        raises(ValueError, "device 2 does not exist: 2 CUDA devices are visible", cuda.select_device, 2)
        assert cuda.select_device(0).id == 0 and depth() == 1       # replaces the current context, no push
        print("OK")
    """,
    )


def test_arrays_allocate_in_the_current_context(fake_driver):
    run(
        fake_driver,
        """
        x = np.arange(16, dtype=np.float32)
        a = cuda.to_device(x)
        with cuda.gpus[1]:
            b = cuda.to_device(x)
            c = cuda.device_array(8)
            d = cuda.device_array_like(x)
            assert (device_of(b), device_of(c), device_of(d)) == (1, 1, 1)
        assert device_of(a) == 0
        np.testing.assert_array_equal(b.copy_to_host(), x)      # its data, from outside the block
        with cuda.gpus[1]:
            np.testing.assert_array_equal(a.copy_to_host(), x)  # and device 0's from inside device 1's
            a.copy_to_device(x)
            assert cuda.get_current_device().id == 1            # which leaves the thread on device 1
        print("OK")
    """,
    )


def test_a_kernel_loads_once_per_device_and_launches_where_the_context_is(fake_driver):
    run(
        fake_driver,
        """
        a = cuda.device_array(32, np.float32)
        fill[1, 32](a, 1.0)
        assert (fake.fake_loads_on(0), fake.fake_loads_on(1)) == (1, 0)
        assert (fake.fake_launches_on(0), fake.fake_launches_on(1)) == (1, 0)
        with cuda.gpus[1]:
            b = cuda.device_array(32, np.float32)
            for _ in range(3):
                fill[1, 32](b, 2.0)
            assert cuda.get_current_device().id == 1
        assert (fake.fake_loads_on(0), fake.fake_loads_on(1)) == (1, 1)   # its own module in device 1's context
        assert (fake.fake_launches_on(0), fake.fake_launches_on(1)) == (1, 3)
        assert len(fill.overloads) == 1 and _core.driver.loaded_module_count() == 2   # compiled once
        fill[1, 32](a, 3.0)                                               # device 0's module, still loaded
        assert fake.fake_loads_on(0) == 1 and fake.fake_launches_on(0) == 2
        cuda.gpus[1].reset()                                              # device 1's modules only
        assert _core.driver.loaded_module_count() == 1
        with cuda.gpus[1]:
            fill[1, 32](b, 4.0)
        assert fake.fake_loads_on(1) == 2 and _core.driver.loaded_module_count() == 2
        print("OK")
    """,
    )


def test_threads_each_on_their_own_device(fake_driver):
    run(
        fake_driver,
        """
        from threads import run_threads
        fill[1, 32](cuda.device_array(32, np.float32), 0.0)   # compiled before the threads start
        cuda.select_device(0)
        def work(i):
            dev = i % 2
            with cuda.gpus[dev]:
                out = cuda.device_array(32, np.float32)
                for _ in range(25):
                    fill[1, 32](out, float(i))
                    assert cuda.get_current_device().id == dev and fake.fake_current_device() == dev
                assert device_of(out) == dev
            assert depth() == 0                            # a new thread starts with no context
            return dev
        assert run_threads(work, 8) == [0, 1] * 4
        assert fake.fake_launches_on(0) == 1 + 4 * 25 and fake.fake_launches_on(1) == 4 * 25
        assert fake.fake_loads_on(0) == 1 and fake.fake_loads_on(1) == 1   # one module per context
        assert cuda.get_current_device().id == 0            # the main thread's context is its own
        print("OK")
    """,
    )


def test_close_pops_and_unloads_everywhere(fake_driver):
    run(
        fake_driver,
        """
        a = cuda.device_array(32, np.float32)
        fill[1, 32](a, 1.0)
        cuda.select_device(1)
        fill[1, 32](cuda.device_array(32, np.float32), 1.0)
        with cuda.gpus[0]:
            assert depth() == 2 and _core.driver.loaded_module_count() == 2
            cuda.close()
            assert depth() == 0 and _core.driver.loaded_module_count() == 0
        assert cuda.get_current_device().id == 0            # the next call makes device 0 current again
        fill[1, 32](a, 2.0)                                 # arrays stay valid; the kernel loads again
        assert fake.fake_loads_on(0) == 2
        def in_thread():
            cuda.select_device(1)
            fill[1, 32](cuda.device_array(32, np.float32), 1.0)
            cuda.close()                                    # outside the main thread: pops only
            assert depth() == 0
        t = threading.Thread(target=in_thread)
        t.start(); t.join()
        assert _core.driver.loaded_module_count() == 2
        print("OK")
    """,
    )


def test_require_context(fake_driver):
    run(
        fake_driver,
        """
        @cuda.require_context
        def needs_a_context(x, *, scale=1):
            \"\"\"Docstring kept.\"\"\"
            assert depth() >= 1 and cuda.current_context() is not None
            return x * scale
        assert needs_a_context.__name__ == "needs_a_context" and needs_a_context.__doc__ == "Docstring kept."
        seen = []
        t = threading.Thread(target=lambda: seen.append(needs_a_context(3, scale=2)))
        t.start(); t.join()
        assert seen == [6]
        with cuda.gpus[1]:
            assert needs_a_context(1) == 1 and cuda.get_current_device().id == 1   # the current one is kept
        print("OK")
    """,
    )


def test_another_devices_stream_and_context_leave_the_thread_where_it_was(fake_driver):
    run(
        fake_driver,
        """
        with cuda.gpus[1]:
            s1 = cuda.stream()
            ctx1 = cuda.current_context()
        cuda.select_device(0)
        s1.synchronize(); assert s1.query()
        ctx1.synchronize(); ctx1.get_memory_info()
        assert cuda.get_current_device().id == 0 and fake.fake_current_device() == 0 and depth() == 1
        print("OK")
    """,
    )


def test_current_context_of_a_device(fake_driver):
    run(
        fake_driver,
        """
        ctx = cuda.current_context(1)                 # numba's get_context(devnum): device 1 becomes current
        assert ctx.device.id == 1 and cuda.get_current_device().id == 1 and ctx == cuda.current_context()
        assert cuda.current_context(0).device.id == 0 and depth() == 1
        raises(ValueError, "device 7 does not exist", cuda.current_context, 7)
        raises(TypeError, "", cuda.current_context, "1")
        print("OK")
    """,
    )
