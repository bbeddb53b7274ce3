"""The disk cache (python/cujit/caching.py, cpp/src/cache) without a GPU.

Keys: each input the cache keys on changes the key, and only those do. Programs: scripts that run twice (or
more, at once) on the fake libcuda (tests/fake_cuda) with one cache directory: the first compiles and writes,
the next loads with no typing, NVRTC or nvJitLink (the C++ stage counters say so) and runs the setup callbacks;
corrupt entries are compiled again; an unwritable directory warns once; the size bound evicts."""

import linecache
import os
import sys
import textwrap

import numpy as np
import pytest

from cujit import _core, caching, config, cuda, types

import programs

ARCH = "sm_90a"


def key_of(dispatcher, argtypes=(types.float32[:],), fastmath=False, arch=ARCH, cc=(9, 0)):
    options = dispatcher._options(cc)
    options.fastmath = fastmath
    return caching.kernel_key(dispatcher, argtypes, options, arch)[0]


# ---- keys ---------------------------------------------------------------------------------------------------

SCALE = 2.0
OFFSET = np.float32(1.5)
UNRELATED = 7


def exec_source(source, filename, namespace):
    """Runs ``source`` in ``namespace`` with its text in linecache: functions made by exec are keyed (and
    compiled) from their source."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def make(scale_expr="SCALE", **jit):
    namespace = {"cuda": cuda, "np": np, "SCALE": SCALE, "OFFSET": OFFSET, "UNRELATED": UNRELATED}
    source = textwrap.dedent(f"""
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] * {scale_expr} + OFFSET
    """)
    exec_source(source, f"<cache-test-{abs(hash(source))}>", namespace)
    return cuda.jit(**jit)(namespace["k"]), namespace


def test_keys_change_with_each_input_and_only_with_them(tmp_path):
    base, ns = make()
    same, _ = make()
    assert key_of(base) == key_of(same)
    assert key_of(base) == key_of(base)
    assert key_of(make("SCALE * 1")[0]) != key_of(base)  # the source
    changed, ns2 = make()
    ns2["SCALE"] = 3.0
    assert key_of(changed) != key_of(base)  # a global's value
    ns2["SCALE"], ns2["OFFSET"] = 2.0, np.float32(2.5)
    assert key_of(changed) != key_of(base)  # a numpy scalar (CCCL #9468)
    ns2["OFFSET"] = np.float64(1.5)
    assert key_of(changed) == key_of(base)  # the same constant to typing
    ns2["UNRELATED"] = 8
    assert key_of(changed) == key_of(base)  # a name the code does not use
    assert key_of(base, (types.float64[:],)) != key_of(base)  # the argument types
    assert key_of(base, fastmath=True) != key_of(base)  # an option
    assert key_of(base, arch="sm_80", cc=(8, 0)) != key_of(base)  # the architecture
    assert key_of(make(lineinfo=True)[0]) != key_of(base)  # ...through the options
    before = key_of(base)
    caching.toolchain_id()
    saved, caching._toolchain = caching._toolchain, caching._toolchain + "another NVRTC"
    try:
        assert key_of(base) != before  # the toolchain's identity
    finally:
        caching._toolchain = saved


def test_keys_follow_the_globals_the_code_reads_not_attribute_names():
    # `cuda.threadIdx.x` names the attribute x, not the module's global x: a script's global `x` (a random array
    # each run) must not change the key of every kernel that reads threadIdx.x.
    namespace = {"cuda": cuda, "x": np.zeros(4), "width": 2}
    source = "def k(a):\n    i = cuda.threadIdx.x\n    a[i] = width\n"
    kernel = cuda.jit(exec_source(source, "<attribute-names>", namespace)["k"])
    first = key_of(kernel)
    namespace["x"] = np.ones(4)
    assert key_of(kernel) == first
    namespace["width"] = 3
    assert key_of(kernel) != first  # a global it reads


def closure_kernel(value):
    @cuda.jit
    def k(a):
        a[0] = value

    return k


def test_keys_follow_closures_callees_links_and_hooks(tmp_path):
    assert key_of(closure_kernel(1.0)) == key_of(closure_kernel(1.0))
    assert key_of(closure_kernel(1.0)) != key_of(closure_kernel(2.0))

    def with_callee(body):
        src = f"@cuda.jit(device=True)\ndef f(x):\n    return {body}\n\n@cuda.jit\ndef k(a):\n    a[0] = f(a[0])\n"
        return exec_source(src, f"<callee-{body}>", {"cuda": cuda})["k"]

    assert key_of(with_callee("x + 1")) != key_of(with_callee("x + 2"))  # a device function's source

    cu = tmp_path / "mul.cu"
    cu.write_text('extern "C" __device__ int mul(float* r, float x, float y) { *r = x * y; return 0; }\n')
    mul = cuda.declare_device("mul", "float32(float32, float32)", link=[str(cu)])

    @cuda.jit
    def k(a):
        a[0] = mul(a[0], a[1])

    first = key_of(k)
    assert key_of(k) == first
    cu.write_text('extern "C" __device__ int mul(float* r, float x, float y) { *r = x + y; return 0; }\n')
    assert key_of(k) != first  # a link file's content

    import io

    text = io.StringIO("// v1\n")
    src = cuda.CUSource(text, name="mem.cu")
    decl = cuda.declare_device("mem", "float32(float32)", link=[src])

    @cuda.jit
    def k2(a):
        a[0] = decl(a[0])

    first = key_of(k2)
    text.seek(0)
    text.write("// v2\n")
    assert key_of(k2) != first  # in-memory LinkableCode

    returned = {"code": "// one\n"}
    hooked = cuda.declare_device(
        "hooked", "float32(float32)", link=lambda *argtypes: cuda.CUSource(returned["code"], name="hooked.cu")
    )

    @cuda.jit
    def k3(a):
        a[0] = hooked(a[0])

    first = key_of(k3)
    returned["code"] = "// two\n"
    assert key_of(k3) != first  # what a hook returns


def test_objects_the_walk_cannot_key_are_uncacheable():
    class Declaring:
        __slots__ = ()

        def __numba_cuda_declare__(self, *argtypes):
            return ("f", "float32(float32)")

    d = Declaring()

    @cuda.jit
    def k(a):
        a[0] = d(a[0])

    with pytest.raises(caching.Uncacheable, match="__numba_cuda_declare__"):
        key_of(k)


# ---- programs on the fake driver ------------------------------------------------------------------------------

PROGRAM = """
import json, os, sys, warnings
import numpy as np
import cujit
from cujit import cuda, _core

SRC = 'extern "C" __device__ int mul(float* r, float x, float y) {{ *r = x * y; return 0; }}\\n'
events = []
lib = cuda.CUSource(SRC, name="mul.cu", setup_callback=lambda m: events.append("setup"))
mul = cuda.declare_device("mul", "float32(float32, float32)", link=[lib])

@cuda.jit(cache=True)
def k(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], np.float32(2))

{extra}
r = cuda.to_device(np.zeros(4, np.float32))
k[1, 32](r, cuda.to_device(np.ones(4, np.float32)))
stats = cujit.stats()
print(json.dumps({{"setup": events.count("setup"), "hits": stats["cache hits"], "misses": stats["cache misses"],
                  "compiles": stats["compiles"], "writes": stats["cache writes"],
                  "compiler": _core.compiler_loaded(), "modules": sorted(m for m in sys.modules if m.startswith("cujit")),
                  "stages": {{name: s["count"] for name, s in stats["stages"].items()}}}}))
"""


def run_program(fake_driver, tmp_path, cache_dir, extra="", env=None, name="prog.py", wait=True):
    path = tmp_path / name
    if not path.exists():
        path.write_text(PROGRAM.format(extra=extra))
    full = {k: v for k, v in os.environ.items() if k not in ("CUJIT_CACHE", "CUJIT_LOG")}
    full.update(
        CUJIT_CUDA_DRIVER=fake_driver,
        CUJIT_CACHE_DIR=str(cache_dir),
        NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
        **(env or {}),
    )
    proc = programs.start([path], env=full)
    return programs.result(proc) if wait else proc


def test_second_process_loads_linked_kernel_and_runs_setup(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    first, _ = run_program(fake_driver, tmp_path, cache)
    assert first["compiles"] == 1 and first["misses"] == 1 and first["writes"] == 1 and first["setup"] == 1
    assert first["stages"].get("nvJitLink") == 1 and first["stages"].get("NVRTC") == 1
    second, _ = run_program(fake_driver, tmp_path, cache)
    assert second["hits"] == 1 and second["compiles"] == 0 and second["setup"] == 1
    for stage in ("frontend", "typing", "lowering", "LLVM optimisation", "PTX emission", "NVRTC", "nvJitLink"):
        assert stage not in second["stages"], (stage, second["stages"])
    assert second["stages"]["module load"] == 1
    # The compiler (cujit._compiler, LLVM) is never loaded: the kernel comes from the cache and launches.
    assert first["compiler"] and not second["compiler"]
    assert "cujit._compiler" not in second["modules"] and "cujit._runtime" in second["modules"]
    entries = [f for _, _, files in os.walk(cache / "kernel") for f in files]
    assert len(entries) == 1


def test_nvrtc_results_are_cached_on_their_own(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    run_program(fake_driver, tmp_path, cache)
    other, _ = run_program(
        fake_driver,
        tmp_path,
        cache,
        name="other.py",
        extra=textwrap.dedent("""
        @cuda.jit(cache=True)
        def k(r, x):                       # another kernel linking the same CUDA C++
            r[0] = mul(x[0], np.float32(3))
    """),
    )
    assert other["compiles"] == 1 and other["stages"].get("nvJitLink") == 1
    assert "NVRTC" not in other["stages"]


def test_corrupt_entries_are_compiled_again(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    run_program(fake_driver, tmp_path, cache)
    (entry,) = [os.path.join(d, f) for d, _, files in os.walk(cache / "kernel") for f in files]
    data = bytearray(open(entry, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(entry, "wb").write(bytes(data))
    again, _ = run_program(fake_driver, tmp_path, cache)
    assert again["hits"] == 0 and again["compiles"] == 1 and again["writes"] == 1
    with open(entry, "r+b") as f:  # torn: cut short
        f.truncate(100)
    torn, _ = run_program(fake_driver, tmp_path, cache)
    assert torn["hits"] == 0 and torn["compiles"] == 1
    healed, _ = run_program(fake_driver, tmp_path, cache)
    assert healed["hits"] == 1


def test_processes_racing_on_one_directory(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    procs = [run_program(fake_driver, tmp_path, cache, wait=False) for _ in range(6)]
    results = [programs.result(p)[0] for p in procs]
    assert all(r["setup"] == 1 for r in results)
    assert all(r["hits"] + r["compiles"] == 1 for r in results)
    assert sum(r["compiles"] for r in results) == 1  # the others waited on its lock, then loaded
    last, _ = run_program(fake_driver, tmp_path, cache)
    assert last["hits"] == 1
    leftovers = [f for _, _, files in os.walk(cache) for f in files if f.startswith(".tmp")]
    assert not leftovers


def test_an_unwritable_directory_warns_once_and_compiles(fake_driver, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out, err = run_program(fake_driver, tmp_path, blocker / "cache", env={"PYTHONWARNINGS": "always"})
    assert out["compiles"] == 1 and out["setup"] == 1
    assert err.count("cannot be written") == 1, err


def test_cache_switches_and_the_compile_log(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    off, _ = run_program(fake_driver, tmp_path, cache, env={"CUJIT_CACHE": "0"})
    assert off["writes"] == 0 and not cache.exists()
    _, err = run_program(fake_driver, tmp_path, cache, env={"CUJIT_LOG": "compile"})
    assert "cujit: compiled k(array(float32, 1d, C), array(float32, 1d, C)): and cached" in err, err
    _, err = run_program(fake_driver, tmp_path, cache, env={"CUJIT_LOG": "compile"})
    assert "cujit: cache hit k(" in err, err


def test_eviction_keeps_the_directory_under_its_bound(tmp_path):
    disk = _core.cache.DiskCache(str(tmp_path), 64 * 1024)
    for i in range(40):
        assert disk.put("kernel", f"{i:04d}abcdef", os.urandom(8 * 1024))
    assert disk.total_bytes() <= 64 * 1024
    assert disk.get("kernel", "0039abcdef") is not None
    assert disk.stats()["evictions"] > 0


def test_compile_outputs_are_cached_with_cujit_cache_1(tmp_path, register_ptx):
    (tmp_path / "udf.py").write_text("def udf(x):\n    return x * 2.0 + 1.0\n")
    script = tmp_path / "prog.py"
    script.write_text(
        textwrap.dedent("""
        import json, sys
        import cujit
        from cujit import cuda, float32
        from udf import udf
        ptx, ret = cuda.compile(udf, "float32(float32)", abi_info={"abi_name": "udf"})
        ltoir, ret2 = cuda.compile(udf, "float32(float32)", output="ltoir", cc=(9, 0))
        s = cujit.stats()
        print(json.dumps({"ret": [str(ret), str(ret2)], "ptx": ptx, "ltoir": ltoir.hex(), "hits": s["cache hits"],
                          "writes": s["cache writes"], "typing": "typing" in s["stages"]}))
    """)
    )
    env = dict(
        os.environ,
        CUJIT_CACHE="1",
        CUJIT_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path),
    )
    first, second = programs.run([script], env), programs.run([script], env)
    assert first["writes"] == 2 and first["hits"] == 0 and first["typing"]
    assert second["hits"] == 2 and second["writes"] == 0 and not second["typing"]
    assert second["ptx"] == first["ptx"] and second["ltoir"] == first["ltoir"]
    assert second["ret"] == ["float32", "float32"]
    assert bytes.fromhex(second["ltoir"])[:4] == bytes.fromhex("ed434e7f")
    register_ptx(second["ptx"])  # assembled by ptxas after the test


def test_settings_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert caching.directory() == str(tmp_path / "xdg" / "cujit")
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "mine"))
    assert caching.directory() == str(tmp_path / "mine")
    monkeypatch.setenv("CUJIT_CACHE_MAX_MB", "0.5")
    assert caching.max_bytes() == 512 * 1024
    assert caching.store().max_bytes == 512 * 1024  # the store of that directory is bounded by it
    for mode, option, wanted in (("", True, True), ("", False, False), ("1", False, True), ("0", True, False)):
        monkeypatch.setenv("CUJIT_CACHE", mode)
        assert config.cache_wanted(option) is wanted, (mode, option)
