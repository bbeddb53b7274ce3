"""Module lifecycle (setup and teardown callbacks of linked code) without a GPU, on the fake libcuda
(tests/fake_cuda): one module per (specialisation, context), setup once per module before its first launch, teardown
once per module with the object setup saw, on every unload path; setup errors propagate and the next launch starts
afresh; teardown errors are warnings; compile once and load once under threads; one module and one setup per
context.

The fake driver loads any image and launches kernels cujit compiled as no-ops, so these tests count compiles,
modules and callbacks; test_gpu_module_lifecycle.py beside it checks results on a GPU. Each scenario runs in its
own process (the fake driver is chosen with ``CUJIT_CUDA_DRIVER`` before cujit opens libcuda)."""

import os
import textwrap

from script_runs import run_script

PRELUDE = """
import gc, threading, warnings
import numpy as np
from cujit import cuda, _core
from cujit import dispatcher as _dispatcher

compiles = []
_real_compile = _dispatcher.CUDADispatcher._compile_request
def _counting_compile(self, *args, **kwargs):
    compiles.append(self.py_func.__name__)
    return _real_compile(self, *args, **kwargs)
_dispatcher.CUDADispatcher._compile_request = _counting_compile

events = []
def setup(module):
    events.append(("setup", module.key, int(module)))
    assert module.loaded and module.handle == int(module)
def teardown(module):
    events.append(("teardown", module.key, int(module)))
    assert module.loaded  # teardown, then unload
def count(kind):
    return sum(1 for e in events if e[0] == kind)
def modules():
    return _core.driver.loaded_module_count()

SRC = "__device__ int table[4];\\nextern \\"C\\" __device__ int twice(int* r, int x) { *r = 2 * x; return 0; }\\n"
lib = cuda.CUSource(SRC, name="table.cu", setup_callback=setup, teardown_callback=teardown)
twice = cuda.declare_device("twice", "int32(int32)", link=[lib])
a = cuda.to_device(np.zeros(4, np.int32))
warnings.simplefilter("ignore")  # the low-occupancy warning of tiny launches

def make_kernel(i, link=(lib,)):
    def kernel(out):
        out[0] = i
    kernel.__name__ = kernel.__qualname__ = f"kernel_{i}"
    return cuda.jit(link=list(link))(kernel)
"""


def run(fake_driver, body, expect_exit=0):
    """Runs PRELUDE + body as a script file (cujit compiles functions from their source) on the fake driver."""
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver, PYTHONWARNINGS="default")
    return run_script(PRELUDE + textwrap.dedent(body), "_lifecycle.py", env, expect_exit)


def test_setup_runs_once_per_module(fake_driver):
    run(
        fake_driver,
        """
        k = make_kernel(1)
        k[1, 1](a)
        assert count("setup") == 1 and modules() == 1
        for _ in range(5):
            k[1, 1](a)                              # served by the loaded module
        assert count("setup") == 1
        k[1, 1](np.zeros(4, np.float64))            # a second specialisation: a second module
        assert count("setup") == 2 and modules() == 2 and compiles == ["kernel_1", "kernel_1"]
        make_kernel(2)[1, 1](a)                     # another kernel linking the same code: its own module
        assert count("setup") == 3 and modules() == 3
        assert len({e[1] for e in events}) == 3 and len({e[2] for e in events}) == 3

        @cuda.jit
        def calls_twice(out):                       # the callbacks come through the declaration
            out[0] = twice(out[1])
        calls_twice[1, 1](a)
        assert count("setup") == 4

        @cuda.jit(link=[lib, lib])
        def twice_listed(out):                      # one input reached twice: one setup per module
            out[0] = twice(3)
        twice_listed[1, 1](a)
        assert count("setup") == 5 and count("teardown") == 0
        print("OK")
    """,
    )


def test_the_module_object(fake_driver):
    run(
        fake_driver,
        """
        seen = []
        def look(module):
            seen.append((module.handle, module.device, module.context, module.loaded, module.key))
            ptr, size = module.get_global("magic")  # the fake's one global
            cuda.driver.memcpy_htod(ptr, np.array([42], np.int32))
            back = np.zeros(1, np.int32)
            cuda.driver.memcpy_dtoh(back, ptr)
            assert back[0] == 42 and size == 4
        k = make_kernel(1, link=[cuda.CUSource(SRC + "// look", setup_callback=look)])
        k[1, 1](a)
        handle, device, context, loaded, key = seen[0]
        assert isinstance(handle, int) and handle != 0 and loaded
        assert device == cuda.get_current_device() and context.handle == cuda.current_context().handle
        print("OK")
    """,
    )


def test_teardown_on_each_unload_path(fake_driver):
    run(
        fake_driver,
        """
        k = make_kernel(1)
        k[1, 1](a)
        k.unload()                                   # explicit unload: teardown with setup's module
        assert events[-1][0] == "teardown" and events[-1][1:] == events[-2][1:] and modules() == 0
        k[1, 1](a)                                   # loads again, setup again, no recompile
        assert count("setup") == 2 and compiles == ["kernel_1"] and modules() == 1

        cuda.current_context().reset()               # context reset
        assert count("teardown") == 2 and modules() == 0
        k[1, 1](a)                                   # never the stale function (B7): reload, setup
        assert count("setup") == 3 and modules() == 1

        cuda.close()                                 # cuda.close()
        assert count("teardown") == 3 and modules() == 0
        k[1, 1](a)
        del k                                        # the last reference to the kernel
        gc.collect()
        assert count("teardown") == 4 and modules() == 0

        k = make_kernel(2)
        k[1, 1](np.zeros(4, np.float32))
        compiled = k.overloads[next(iter(k.overloads))]
        del k
        gc.collect()
        assert count("teardown") == 4               # a kernel object of it is still alive
        del compiled
        gc.collect()
        assert count("teardown") == 5 == count("setup")
        setups = {e[1:] for e in events if e[0] == "setup"}
        assert setups == {e[1:] for e in events if e[0] == "teardown"}
        print("OK")
    """,
    )


def test_teardown_at_interpreter_exit(fake_driver):
    proc = run(
        fake_driver,
        """
        def loud(module):
            print("TEARDOWN", module.key.split(":")[-1][:14], module.loaded, flush=True)
        kernels = [make_kernel(i, link=[cuda.CUSource(SRC + f"// {i}", teardown_callback=loud)]) for i in range(3)]
        for k in kernels:
            k[1, 1](a)
        print("EXIT", modules(), flush=True)
    """,
    )
    lines = proc.stdout.split("\n")
    assert lines[0] == "EXIT 3" and [ln.split()[0] for ln in lines[1:4]] == ["TEARDOWN"] * 3, proc.stdout
    assert all(ln.endswith("True") for ln in lines[1:4]) and proc.stderr == ""


def test_a_failing_setup_propagates_and_the_next_launch_starts_afresh(fake_driver):
    run(
        fake_driver,
        """
        calls = []
        def flaky(module):
            calls.append(int(module))
            if len(calls) == 1:
                raise KeyError("not yet")
        k = make_kernel(1, link=[cuda.CUSource(SRC + "// flaky", setup_callback=flaky, teardown_callback=teardown)])
        try:
            k[1, 1](a)
            raise AssertionError("no error")
        except KeyError as e:
            assert "not yet" in str(e)
        assert modules() == 0 and count("teardown") == 0   # unloaded, never usable: no teardown
        k[1, 1](a)
        assert len(calls) == 2 and modules() == 1 and compiles == ["kernel_1"]
        print("OK")
    """,
    )


def test_a_failing_teardown_is_a_warning_and_the_others_run(fake_driver):
    run(
        fake_driver,
        """
        def bad(module):
            raise ValueError("teardown failed on purpose")
        k = make_kernel(1, link=[cuda.CUSource("__device__ int bad_flag;", teardown_callback=bad), lib])
        k[1, 1](a)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            k.unload()
        assert modules() == 0 and count("teardown") == 1
        message = str(caught[0].message)
        assert caught[0].category is RuntimeWarning
        assert "teardown failed on purpose" in message and "Traceback" in message, message
        print("OK")
    """,
    )


def test_threads_compile_once_and_load_once(fake_driver):
    run(
        fake_driver,
        """
        def first_calls(kernel, nthreads, args_for=lambda t: (a,)):
            barrier = threading.Barrier(nthreads)
            errors = []
            def go(t):
                barrier.wait()
                try:
                    kernel[1, 1](*args_for(t))
                except BaseException as e:
                    errors.append(e)
            threads = [threading.Thread(target=go, args=(t,)) for t in range(nthreads)]
            for t in threads: t.start()
            for t in threads: t.join()
            assert not errors, errors

        for n in (8, 16):
            before, setups = len(compiles), count("setup")
            first_calls(make_kernel(100 + n), n)
            assert len(compiles) == before + 1 and count("setup") == setups + 1

        before, setups = len(compiles), count("setup")
        f = np.zeros(4, np.float64)
        first_calls(make_kernel(200), 8, lambda t: (a,) if t % 2 else (f,))   # two signatures from 8 threads
        assert len(compiles) == before + 2 and count("setup") == setups + 2

        kernels = [make_kernel(300 + i, link=[cuda.CUSource(SRC + f"// {i}", setup_callback=setup)] if i % 2 else [lib])
                   for i in range(8)]
        before, setups = len(compiles), count("setup")
        barrier = threading.Barrier(8)
        def one(k):
            barrier.wait()
            k[1, 1](a)
        threads = [threading.Thread(target=one, args=(k,)) for k in kernels]
        for t in threads: t.start()
        for t in threads: t.join()
        assert len(compiles) == before + 8 and count("setup") == setups + 8
        print("OK")
    """,
    )


def test_stress_16_threads_50_kernels(fake_driver):
    run(
        fake_driver,
        """
        import random
        kernels = [make_kernel(i) for i in range(50)]
        modules_before, setups_before = modules(), count("setup")
        errors = []
        barrier = threading.Barrier(16)
        def go(seed):
            order = list(kernels)
            random.Random(seed).shuffle(order)
            barrier.wait()
            try:
                for k in order:
                    k[1, 1](a)
            except BaseException as e:
                errors.append(e)
        threads = [threading.Thread(target=go, args=(s,)) for s in range(16)]
        for t in threads: t.start()
        for t in threads: t.join()
        assert not errors, errors[:3]
        assert len(compiles) == 50 and sorted(set(compiles)) == sorted(f"kernel_{i}" for i in range(50))
        assert modules() == modules_before + 50 and count("setup") == setups_before + 50
        for k in kernels:
            k.unload()
        assert count("teardown") == 50 and modules() == 0
        print("OK")
    """,
    )


def test_one_module_and_one_setup_per_context(fake_driver):
    run(
        fake_driver,
        f"""
        import ctypes
        fake = ctypes.CDLL({fake_driver!r})
        k = make_kernel(1)
        k[1, 1](a)
        other = ctypes.c_void_p()
        assert fake.cuCtxCreate_v2(ctypes.byref(other), 0, 0) == 0
        def in_other_context():
            assert fake.cuCtxSetCurrent(other) == 0
            b = cuda.to_device(np.zeros(4, np.int32))
            k[1, 1](b)
            k[1, 1](b)
            assert cuda.current_context().handle == other.value
        t = threading.Thread(target=in_other_context)
        t.start(); t.join()
        assert count("setup") == 2 and modules() == 2 and compiles == ["kernel_1"]
        assert k._kernels.images_built == 1         # one image per architecture, loaded in both contexts
        cuda.current_context().reset()              # the primary context's module only
        assert count("teardown") == 1 and modules() == 1
        k[1, 1](a)
        assert count("setup") == 3 and modules() == 2
        k.unload()
        assert count("teardown") == 3 and modules() == 0
        print("OK")
    """,
    )


def test_load_unload_cycles_leak_nothing(fake_driver):
    run(
        fake_driver,
        """
        def rss_kib():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4
        n = [0, 0]  # counters, not events: a list of events would grow by itself
        def up(module): n[0] += 1
        def down(module): n[1] += 1
        k = make_kernel(1, link=[cuda.CUSource(SRC + "// cycles", setup_callback=up, teardown_callback=down)])
        for _ in range(300):
            k[1, 1](a)
            k.unload()
        gc.collect()
        rss0 = rss_kib()
        for _ in range(3000):
            k[1, 1](a)
            k.unload()
        gc.collect()
        rss1 = rss_kib()
        assert n == [3300, 3300] and modules() == 0
        assert rss1 - rss0 < 256, (rss0, rss1)  # KiB, for 3000 cycles (a leaked module would be ~2 KiB each)
        print("OK")
    """,
    )
