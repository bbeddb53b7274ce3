"""The C++ KernelCache as a dispatcher's one owner of its specialisations (cpp/include/cujit/kernel_cache.h): the
compile gate (one compile per key, other keys meanwhile, a failed compile retried, a thread asking for the key it
compiles refused), the listing a dispatcher's ``overloads`` reads; the interfaces Python implements for the core
(``_core.Callee``, ``_core.Dispatcher``, ``_core.Resolved``); and what a first launch asks of Python."""

import gc
import os
import textwrap
import threading
import time
import weakref

import pytest

from cujit import _core, cuda
from cujit.declarations import ExternFunction
from cujit.dispatcher import CUDADispatcher
from script_runs import run_script

f32, i32 = _core.types.lookup("float32"), _core.types.lookup("int32")


class Face:
    """A stand-in for a dispatcher's _Kernel: what the cache hands back."""

    def __init__(self, name):
        self.name = name


def specialisation(name, **kw):
    return _core.driver.Specialisation(Face(name), **kw)


# ---- the compile gate ------------------------------------------------------------------------------------------


def test_one_compile_per_key_while_other_keys_compile():
    cache = _core.driver.KernelCache()
    compiles, started, overlapped = [], {"a": threading.Event(), "b": threading.Event()}, {}

    def compiler(name, other):
        def compile():
            compiles.append(name)
            started[name].set()
            overlapped[name] = started[other].wait(timeout=10)  # the other key compiles meanwhile
            time.sleep(0.02)
            return specialisation(name)

        return compile

    faces = []
    threads = [
        threading.Thread(target=lambda: faces.append(cache.specialise([f32], "a", compiler("a", "b"))))
        for _ in range(8)
    ]
    threads.append(threading.Thread(target=lambda: cache.specialise([i32], "b", compiler("b", "a"))))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(compiles) == ["a", "b"] and overlapped == {"a": True, "b": True}
    assert len(faces) == 8 and all(f is faces[0] for f in faces) and faces[0].name == "a"
    assert cache.find([f32], "a") is faces[0] and cache.find([f32], "b") is None
    assert sorted((str(args[0]), face.name) for args, face in cache.specialisations()) == [
        ("float32", "a"),
        ("int32", "b"),
    ]


def test_a_failed_compile_is_retried_and_a_reentry_refused():
    cache = _core.driver.KernelCache()
    attempts = []

    def failing():
        attempts.append(1)
        raise ValueError("the first compile fails")

    with pytest.raises(ValueError, match="the first compile fails"):
        cache.specialise([f32], "k", failing)
    assert cache.find([f32], "k") is None and cache.specialisations() == []
    face = cache.specialise([f32], "k", lambda: specialisation("second"))
    assert face.name == "second" and attempts == [1]

    seen = {}

    def reenters():
        seen["compiling_here"] = cache.compiling_here
        cache.specialise([i32], "r", lambda: specialisation("inner"))  # the key it is compiling
        return specialisation("outer")

    with pytest.raises(ValueError, match="requested again while it compiles"):
        cache.specialise([i32], "r", reenters)
    assert seen == {"compiling_here": True} and not cache.compiling_here


def test_unlisted_variants_and_compile_answers():
    cache = _core.driver.KernelCache()
    cache.specialise([f32], "plain", lambda: specialisation("plain"))
    cache.specialise([f32], "variant", lambda: specialisation("variant", listed=False))
    assert [face.name for _, face in cache.specialisations()] == ["plain"]
    assert cache.find([f32], "variant").name == "variant"
    with pytest.raises(TypeError, match="must return a Specialisation"):
        cache.specialise([i32], "bad", lambda: "not a specialisation")
    kernel = cache.kernel([f32], "plain")
    assert kernel.face.name == "plain" and cache.kernel([i32], "bad") is None


# ---- the interfaces ---------------------------------------------------------------------------------------------


def test_an_interface_without_its_methods_fails_when_the_class_is_defined():
    with pytest.raises(TypeError, match="without its method _call_parameters"):

        class NoParameters(_core.Callee):
            def _type_for_caller(self, argtypes, caller_options):
                raise AssertionError

    with pytest.raises(TypeError, match="without its method _select_kernel"):

        class Renamed(_core.Dispatcher):
            def _type_for_caller(self, argtypes, caller_options): ...
            def _call_parameters(self): ...
            def _launch_slow(self, configured, args): ...
            def _configure(self, config): ...

            def _kernel_for(self, argtypes):  # the old name
                raise AssertionError

    assert issubclass(CUDADispatcher, _core.Dispatcher) and issubclass(ExternFunction, _core.Callee)
    assert set(_core.Dispatcher._cujit_methods) <= set(dir(CUDADispatcher))


def test_resolved_answers():
    R = _core.Resolved
    assert (R.int(5).kind, R.int(5).value) == ("int", 5)
    assert R.int(2**63 + 1).value == 2**63 + 1  # uint64, as numba types it
    assert R.float(1.5).value == 1.5 and R.bool(True).value is True and R.none().kind == "none"
    assert R.complex(1.0, -2.0).value == complex(1, -2)
    assert R.builtin("math.sqrt").value == "math.sqrt" and R.module("cuda").kind == "module"
    assert R.type(f32).value == f32
    dtype, shape, data = R.ndarray(f32, (2, 3), bytes(24), "array(float32, 2d)").value
    assert (str(dtype.dtype), shape, len(data)) == ("float32", (2, 3), 24)
    with pytest.raises(TypeError, match="Callee"):
        R.device(object(), "f")

    declared = cuda.declare_device("ext", "float32(float32)")
    assert R.device(declared, "ext").value is declared


def test_a_dispatcher_is_collected_with_its_specialisations():
    """A face keeps its cache alive; the cache shows its faces to the collector, so the three are freed together
    (with the modules, teardown first) once neither the dispatcher nor a face is in use."""

    def axpy(r, a, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = a * x[i] + y[i]

    vec = _core.types.array(f32, 1, "C")
    d = cuda.jit(axpy)
    kernel = d.compile((vec, f32, vec, vec), cc=(8, 0))
    assert kernel.if_overlap is not None and d.overloads[(vec, f32, vec, vec)] is kernel
    dispatcher, cache = weakref.ref(d), weakref.ref(d._kernels)
    del d
    gc.collect()
    assert dispatcher() is None and cache() is not None  # the face in use keeps its specialisation
    assert kernel.native().face is kernel
    del kernel
    gc.collect()
    assert cache() is None


# ---- a first launch --------------------------------------------------------------------------------------------


def test_what_a_first_launch_asks_of_python(fake_driver):
    """Python functions the core calls during launches (each a crossing from C++): a first launch configures and
    selects its specialisation (one call of the compile driver); the device array's type is read in C++ and the
    image is linked in C++; a second launch calls no Python at all."""
    script = textwrap.dedent('''
        import sys
        import numpy as np
        from cujit import cuda

        @cuda.jit("void(float32[::1], float32)")
        def scale(x, a):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= a

        x = cuda.to_device(np.ones(64, np.float32))

        def crossings(launch):
            """The Python functions the launch's C++ calls directly (the lambda holds one launch expression)."""
            calls = []

            def profile(frame, event, arg):
                if event == "call" and frame.f_back is not None and frame.f_back.f_code is launch.__code__:
                    calls.append(frame.f_code.co_name)
            sys.setprofile(profile)
            try:
                launch()
            finally:
                sys.setprofile(None)
            return calls

        first = crossings(lambda: scale[2, 32](x, 2.0))
        second = crossings(lambda: scale[2, 32](x, 3.0))
        print(first, second)
        assert first == ["_configure", "_select_kernel"], first
        assert second == [], second
        print("OK")
    ''')
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
    proc = run_script(script, "_first_launch.py", env)
    assert proc.stdout.strip().endswith("OK"), proc.stdout[-2000:]
