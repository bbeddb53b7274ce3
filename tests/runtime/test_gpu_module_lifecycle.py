"""Module lifecycle on the GPU (numba-cuda's test_module_callbacks rewritten for cujit), results against numpy on
fresh random data: a setup callback writes a ``__device__`` table that kernels read; setup once per module,
specialisation and kernel; callbacks through ``declare_device(link=...)`` and ``jit(link=...)``; teardown on every
unload path and at exit (each in a subprocess); threads first-calling kernels compile and load once; 16 threads x 50
kernels; 10 000 load/launch/unload cycles; two contexts on one device."""

import ctypes
import os
import textwrap
import threading

import numpy as np
import pytest

import gpu_support

from cujit import cuda, dispatcher

import gpu_lifecycle_src as L
from script_runs import run_script
from threads import run_threads

pytestmark = gpu_support.gpu + [
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
    gpu_support.needs_device("modules loaded by the driver, with linked CUDA C++ and their setup/teardown"),
]

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def compiles(monkeypatch):
    """The names of the functions compiled during the test."""
    seen = []
    real = dispatcher.CUDADispatcher._compile_request

    def counting(self, *args, **kwargs):
        seen.append(self.py_func.__name__)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(dispatcher.CUDADispatcher, "_compile_request", counting)
    return seen


def _table(rng):
    return rng.standard_normal(64).astype(np.float32)


def test_setup_writes_a_global_the_kernel_reads(rng):
    values, counts = _table(rng), L.Counts()
    lib = L.table_lib(values, counts, "declared")
    table_at = cuda.declare_device("table_at", "float32(int32)", link=[lib])  # through the declaration
    k = L.scale_kernel(table_at)
    x = rng.random(1000, dtype=np.float32)
    np.testing.assert_allclose(L.launch(k, x), L.expected(x, values), rtol=1e-6, atol=1e-6)

    values2, counts2 = _table(rng), L.Counts()
    bare = cuda.declare_device("table_at", "float32(int32)")  # through jit(link=)
    k2 = L.scale_kernel(bare, link=[L.table_lib(values2, counts2, "jit")])
    np.testing.assert_allclose(L.launch(k2, x), L.expected(x, values2), rtol=1e-6, atol=1e-6)
    assert len(counts.setups) == len(counts2.setups) == 1 and not counts.teardowns


def test_setup_once_per_module_specialisation_and_kernel(rng, compiles):
    values, counts = _table(rng), L.Counts()
    table_at = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(values, counts, "counts")])
    k = L.scale_kernel(table_at, offset=1)
    x32, x64 = rng.random(500, dtype=np.float32), rng.random(300)
    for _ in range(3):
        np.testing.assert_allclose(L.launch(k, x32), L.expected(x32, values, 1), rtol=1e-6, atol=1e-6)
    assert len(counts.setups) == 1
    np.testing.assert_allclose(L.launch(k, x64), L.expected(x64, values, 1), rtol=1e-6, atol=1e-6)
    assert len(counts.setups) == 2 and compiles == ["scale_1", "scale_1"]
    k2 = L.scale_kernel(table_at, offset=2)  # another kernel, same linked code
    np.testing.assert_allclose(L.launch(k2, x32), L.expected(x32, values, 2), rtol=1e-6, atol=1e-6)
    assert len(counts.setups) == 3 == len(set(counts.setups))
    k.unload()
    k2.unload()
    assert sorted(counts.teardowns) == sorted(counts.setups)


def _first_calls(kernel, xs):
    """Launches `kernel` on xs[t] from len(xs) threads released together; returns the outputs."""
    return run_threads(lambda t: L.launch(kernel, xs[t]), len(xs))


@pytest.mark.parametrize("nthreads", [8, 16])
def test_threads_first_calling_one_kernel(rng, compiles, nthreads):
    values, counts = _table(rng), L.Counts()
    table_at = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(values, counts, nthreads)])
    k = L.scale_kernel(table_at, offset=nthreads)
    xs = [rng.random(256 + t, dtype=np.float32) for t in range(nthreads)]
    for x, out in zip(xs, _first_calls(k, xs)):
        np.testing.assert_allclose(out, L.expected(x, values, nthreads), rtol=1e-6, atol=1e-6)
    assert compiles == [f"scale_{nthreads}"] and len(counts.setups) == 1
    assert k._kernels.module_count == 1


def test_two_signatures_from_8_threads(rng, compiles):
    values, counts = _table(rng), L.Counts()
    table_at = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(values, counts, "two")])
    k = L.scale_kernel(table_at, offset=3)
    xs = [rng.random(200, dtype=np.float32) if t % 2 else rng.random(200) for t in range(8)]
    for x, out in zip(xs, _first_calls(k, xs)):
        np.testing.assert_allclose(out, L.expected(x, values, 3), rtol=1e-6, atol=1e-6)
    assert compiles == ["scale_3", "scale_3"] and len(counts.setups) == 2


def test_8_different_kernels_first_called_at_once(rng, compiles):
    shared_values, shared_counts = _table(rng), L.Counts()
    shared = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(shared_values, shared_counts, 8)])
    kernels, tables, own_counts = [], [], []
    for i in range(8):
        if i % 2:
            values, counts = _table(rng), L.Counts()
            bare = cuda.declare_device("table_at", "float32(int32)")
            kernels.append(L.scale_kernel(bare, offset=10 + i, link=[L.table_lib(values, counts, f"own {i}")]))
            tables.append(values)
            own_counts.append(counts)
        else:
            kernels.append(L.scale_kernel(shared, offset=10 + i))
            tables.append(shared_values)
    x = rng.random(333, dtype=np.float32)
    outs = run_threads(lambda i: L.launch(kernels[i], x), 8)
    for i in range(8):
        np.testing.assert_allclose(outs[i], L.expected(x, tables[i], 10 + i), rtol=1e-6, atol=1e-6)
    assert sorted(compiles) == sorted(f"scale_{10 + i}" for i in range(8))
    assert len(shared_counts.setups) == 4 and all(len(c.setups) == 1 for c in own_counts)


def test_stress_16_threads_50_kernels(rng, compiles):
    values, counts = _table(rng), L.Counts()
    table_at = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(values, counts, "stress")])
    kernels = [L.scale_kernel(table_at, offset=1000 + i) for i in range(50)]
    x = rng.random(129, dtype=np.float32)
    orders, wrong = [np.random.default_rng(seed).permutation(50) for seed in range(16)], []

    def go(t):
        for i in orders[t]:
            out = L.launch(kernels[i], x)
            if not np.allclose(out, L.expected(x, values, 1000 + i), rtol=1e-6, atol=1e-6):
                wrong.append(i)

    run_threads(go, 16)
    assert not wrong, wrong[:5]
    assert len(compiles) == 50 == len(set(compiles))
    assert len(counts.setups) == 50 == len(set(counts.setups))
    assert sum(k._kernels.module_count for k in kernels) == 50
    for k in kernels:
        k.unload()
    assert sorted(counts.teardowns) == sorted(counts.setups)


def _libcuda():
    return ctypes.CDLL("libcuda.so.1")


def test_one_module_and_one_setup_per_context(rng, compiles):
    values, counts = _table(rng), L.Counts()
    table_at = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(values, counts, "contexts")])
    k = L.scale_kernel(table_at, offset=7)
    x = rng.random(400, dtype=np.float32)
    np.testing.assert_allclose(L.launch(k, x), L.expected(x, values, 7), rtol=1e-6, atol=1e-6)
    libcuda = _libcuda()
    primary = ctypes.c_void_p(cuda.current_context().handle)
    other = ctypes.c_void_p()
    # A second context on the same device stands in for a second GPU (the GPU machine has one).
    create = getattr(libcuda, "cuCtxCreate_v4", None)
    rc = create(ctypes.byref(other), None, 0, 0) if create else libcuda.cuCtxCreate_v2(ctypes.byref(other), 0, 0)
    assert rc == 0, rc
    assert libcuda.cuCtxSetCurrent(primary) == 0  # creating made it current here: the test's thread uses it
    try:
        result = {}

        def in_other_context():
            assert libcuda.cuCtxSetCurrent(other) == 0
            result["out"] = L.launch(k, x)
            result["context"] = cuda.current_context().handle
            cuda.current_context()._native.flush_deferred()  # its temporaries, before the context goes
            libcuda.cuCtxSetCurrent(None)

        t = threading.Thread(target=in_other_context)
        t.start()
        t.join()
        assert result["context"] == other.value
        np.testing.assert_allclose(result["out"], L.expected(x, values, 7), rtol=1e-6, atol=1e-6)
        assert len(counts.setups) == 2 and compiles == ["scale_7"] and k._kernels.images_built == 1
        assert k._kernels.module_count == 2
        k.unload()  # both contexts, teardown first
        assert sorted(counts.teardowns) == sorted(counts.setups)
    finally:
        assert libcuda.cuCtxDestroy_v2(other) == 0


# ---- in subprocesses: unload paths, exit, endurance ----------------------------------------------------------

PRELUDE = f"""
import gc, os, sys, warnings
sys.path.insert(0, {HERE!r})
import numpy as np
from cujit import cuda
import gpu_lifecycle_src as L
warnings.simplefilter("ignore")
rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
values, counts = rng.standard_normal(64).astype(np.float32), L.Counts()
table_at = cuda.declare_device("table_at", "float32(int32)", link=[L.table_lib(values, counts)])
x = rng.random(1000, dtype=np.float32)
def check(k, offset=0):
    np.testing.assert_allclose(L.launch(k, x), L.expected(x, values, offset), rtol=1e-6, atol=1e-6)
"""


def _run(body, timeout=600):
    return run_script(PRELUDE + textwrap.dedent(body), "_gpu_lifecycle.py", timeout=timeout)


UNLOAD_PATHS = {
    "unload": "k.unload()",
    "reset": "cuda.current_context().reset()",
    "close": "cuda.close()",
    "gc": "del k; gc.collect()",
}


@pytest.mark.parametrize("path", sorted(UNLOAD_PATHS))
def test_teardown_on_each_unload_path(path):
    _run(f"""
        k = L.scale_kernel(table_at)
        check(k)
        {UNLOAD_PATHS[path]}
        assert counts.teardowns == counts.setups, (counts.setups, counts.teardowns)  # teardown saw setup's module
        assert cuda.current_context() and not __import__("cujit")._core.driver.loaded_module_count()
        if "k" in globals():
            check(k)                                 # loads again (never a stale handle), setup writes again
            assert len(counts.setups) == 2  # (the driver may give the new module the old handle)
        print("OK")
    """)


def test_teardown_at_interpreter_exit():
    proc = _run("""
        def loud(module):
            print("TEARDOWN", module.loaded, flush=True)
        kernels = [L.scale_kernel(cuda.declare_device("table_at", "float32(int32)"), offset=i,
                                  link=[L.table_lib(values, counts, i), cuda.CUSource("// %d" % i, teardown_callback=loud)])
                   for i in range(3)]
        for i, k in enumerate(kernels):
            check(k, i)
        print("EXIT")
    """)
    assert proc.stdout.split("\n")[:4] == ["EXIT"] + ["TEARDOWN True"] * 3, proc.stdout
    assert proc.stderr == ""


def test_endurance_10000_cycles():
    _run(
        """
        import resource
        def rss_kib():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
        k = L.scale_kernel(table_at)
        ctx = cuda.current_context()
        for _ in range(200):                        # warm up: allocators, caches
            check(k)
            k.unload()
        cuda.synchronize()
        rss0, free0 = rss_kib(), ctx.get_memory_info().free
        for i in range(10000):
            out = L.launch(k, x)
            if i % 1000 == 0:
                np.testing.assert_allclose(out, L.expected(x, values), rtol=1e-6, atol=1e-6)
            k.unload()
        cuda.synchronize()
        gc.collect()
        rss1, free1 = rss_kib(), ctx.get_memory_info().free
        assert len(counts.setups) == len(counts.teardowns) == 10200
        assert rss1 <= rss0 * 1.05, (rss0, rss1)
        # Free memory is the device's: other processes (pytest-xdist workers) move it too.
        assert free1 == free0 or os.environ.get("PYTEST_XDIST_WORKER"), (free0, free1)
        print("OK", rss0, rss1, free0, free1)
    """,
        timeout=900,
    )
