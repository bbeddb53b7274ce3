"""The disk cache for the CPU target's kernels (python/cujit/caching.py ``HostKernelStore``,
cpp/src/hostgen/host_object.cpp): a kernel's object code and launch facts are kept, and a second process loads
them with no typing, lowering or LLVM optimisation, then runs them as a fresh compile does: threads as loops
between barriers, fibers for warp functions, bounds checks and a debug kernel's exceptions."""

import os
import textwrap

import numpy as np
import pytest

from cujit import _core, caching, cuda, types
from cujit.host_target import HostKernel

import programs

PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import cujit
    from cujit import cuda

    @cuda.jit(target="cpu", cache=True)
    def saxpy(out, x, y, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    TILE = 16

    @cuda.jit(target="cpu", cache=True)
    def tiled_matmul(c, a, b):
        sa = cuda.shared.array((TILE, TILE), np.float32)
        sb = cuda.shared.array((TILE, TILE), np.float32)
        x, y = cuda.grid(2)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        acc = np.float32(0)
        for t in range(a.shape[1] // TILE):
            sa[ty, tx] = a[y, t * TILE + tx]
            sb[ty, tx] = b[t * TILE + ty, x]
            cuda.syncthreads()
            for j in range(TILE):
                acc += sa[ty, j] * sb[j, tx]
            cuda.syncthreads()
        c[y, x] = acc

    @cuda.jit(target="cpu", cache=True)
    def stencil(a, out):
        i, j = cuda.grid(2)
        if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
            out[i, j] = a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4 * a[i, j]

    @cuda.jit(target="cpu", cache=True)
    def warp_sums(out, x):
        i = cuda.grid(1)
        v = x[i]
        for offset in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        if cuda.threadIdx.x % 32 == 0:
            out[i // 32] = v

    @cuda.jit(target="cpu", cache=True)
    def off_by_one(out):
        i = cuda.grid(1)
        out[i + 1] = i

    @cuda.jit(target="cpu", cache=True, debug=True, opt=False)
    def checked(out):
        i = cuda.grid(1)
        if i == 5:
            raise ValueError("thread five", 3)
        out[i] = i

    rng = np.random.default_rng(int(sys.argv[1]))
    x = rng.random(1000, dtype=np.float32)
    y = rng.random(1000, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[8, 128](out, x, y, np.float32(2.5))
    a = rng.random((64, 64), dtype=np.float32)
    b = rng.random((64, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    tiled_matmul[(4, 4), (16, 16)](c, a, b)
    g = rng.random((64, 64))
    lap = np.zeros_like(g)
    stencil[(4, 4), (16, 16)](g, lap)
    want = np.zeros_like(g)
    want[1:-1, 1:-1] = g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] - 4 * g[1:-1, 1:-1]
    w = rng.random(256, dtype=np.float32)
    sums = np.zeros(8, np.float32)
    warp_sums[2, 128](sums, w)
    errors = []
    try:
        off_by_one[1, 8](np.zeros(8, np.int64))
    except IndexError as e:
        errors.append(str(e))
    try:
        checked[1, 8](np.zeros(8, np.int64))
    except ValueError as e:
        errors.append(repr(e.args))

    def facts(dispatcher):
        (face,) = dispatcher.overloads.values()
        n = face.native
        return {"loop": n.runs_as_loop, "barrier": n.uses_barrier, "frame": n.frame_bytes,
                "shared": n.static_shared_bytes, "blocks_axis": n.blocks_axis, "typed": face._compiled is not None}

    stats = cujit.stats()
    print(json.dumps({
        "saxpy": bool(np.allclose(out, 2.5 * x + y, rtol=1e-6)),
        "matmul": bool(np.allclose(c, a @ b, rtol=1e-4)),
        "warp": bool(np.allclose(sums, w.reshape(8, 32).sum(axis=1), rtol=1e-4)),
        "stencil": bool(np.allclose(lap, want)),
        "errors": errors,
        "facts": {d.__name__: facts(d) for d in (saxpy, tiled_matmul, stencil, warp_sums, off_by_one, checked)},
        "hits": stats["cache hits"], "misses": stats["cache misses"], "compiles": stats["compiles"],
        "writes": stats["cache writes"],
        "stages": sorted(stats["stages"]),
        "ir": len(next(iter(saxpy.inspect_llvm().values()))),
    }))
""")


def run(tmp_path, cache, seed, env=None):
    script = tmp_path / "host_prog.py"
    script.write_text(PROGRAM)
    full = {k: v for k, v in os.environ.items() if k not in ("CUJIT_CACHE", "CUJIT_LOG", "CUJIT_TARGET")}
    full.update(CUJIT_CACHE_DIR=str(cache), **(env or {}))
    return programs.run([script, seed], env=full)


def test_a_second_process_loads_its_host_kernels_from_the_disk_cache(tmp_path):
    cache = tmp_path / "cache"
    first = run(tmp_path, cache, 1)
    second = run(tmp_path, cache, 2)
    for out in (first, second):
        assert out["saxpy"] and out["matmul"] and out["warp"] and out["stencil"], out
        (index_error, raised) = out["errors"]
        assert "off_by_one" in index_error and "index 8" in index_error, index_error
        assert "In function 'checked'" in raised and "tid=[0, 0, 5]" in raised, raised
        assert raised.endswith('thread five", 3)'), raised
    assert first["compiles"] == 6 and first["misses"] == 6 and first["writes"] == 6 and first["hits"] == 0
    assert second["compiles"] == 0 and second["hits"] == 6 and second["writes"] == 0
    assert second["stages"] == ["cache key", "cache read"]
    for stage in ("frontend", "IR passes", "typing"):
        assert stage in first["stages"] and stage not in second["stages"], (stage, second["stages"])
    # The same code, run the same way: the launch facts come from the object.
    for name, fresh in first["facts"].items():
        loaded = second["facts"][name]
        assert fresh.pop("typed") and not loaded.pop("typed")
        assert loaded == fresh, name
    assert first["facts"]["saxpy"]["loop"] and first["facts"]["tiled_matmul"]["loop"]
    assert first["facts"]["tiled_matmul"]["shared"] == 2 * 16 * 16 * 4
    assert first["facts"]["stencil"]["blocks_axis"] == 1 and first["facts"]["saxpy"]["blocks_axis"] == 0
    assert not first["facts"]["warp_sums"]["loop"] and first["facts"]["warp_sums"]["barrier"]
    entries = [f for _, _, files in os.walk(cache / "host") for f in files]
    assert len(entries) == 6 and not (cache / "kernel").exists()
    # inspect_llvm() on a loaded kernel compiles it again for its IR.
    assert second["ir"] == first["ir"] > 1000


def test_a_damaged_entry_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    run(tmp_path, cache, 3)
    entries = sorted(os.path.join(d, f) for d, _, files in os.walk(cache / "host") for f in files)
    data = bytearray(open(entries[0], "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(entries[0], "wb").write(bytes(data))
    again = run(tmp_path, cache, 4)
    assert again["saxpy"] and again["matmul"] and again["warp"]
    assert again["compiles"] == 1 and again["hits"] == 5 and again["writes"] == 1


def test_cache_off_and_kernels_without_cache_true_compile_every_time(tmp_path):
    cache = tmp_path / "cache"
    off = run(tmp_path, cache, 5, env={"CUJIT_CACHE": "0"})
    assert off["compiles"] == 6 and off["writes"] == 0 and not cache.exists()


def test_an_object_that_is_not_one_cujit_made_is_refused_with_the_jits_reason():
    with pytest.raises(RuntimeError, match=r"the CPU target's JIT failed \(adding the object\)"):
        _core.load_host_kernel(b"\x7fELF not an object", "k", "k")


def test_objects_round_trip_in_process_and_keys_name_the_machine():
    @cuda.jit(target="cpu")
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    a = np.random.default_rng(6).random(300)
    expected = a + 2
    add_one[3, 128](a)
    (face,) = add_one.overloads.values()
    loaded = _core.load_host_kernel(face.native.object, face.native.symbol, "add_one")
    assert loaded.runs_as_loop == face.native.runs_as_loop and loaded.frame_bytes == face.native.frame_bytes
    assert loaded.llvm_ir == "" and face.native.object[:4] == b"\x7fELF"
    again = HostKernel(loaded, face.argtypes, face.options, (), False, "add_one")
    again.launch((3,), (128,), 0, (a,))
    np.testing.assert_array_equal(a, expected)
    machine = _core.host_machine_id()
    assert machine.split()[0].startswith(("x86_64", "aarch64")) and len(machine.split()) == 3
    options = add_one._options(None)
    gpu = caching.kernel_key(add_one, (types.float64[:],), options, "sm_90")[0]
    host = caching.HostKernelStore(add_one, (types.float64[:],), options, 0.0).key
    assert host and host != gpu


def test_processes_starting_at_once_compile_each_kernel_once(tmp_path):
    cache = tmp_path / "cache"
    script = tmp_path / "host_prog.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("CUJIT_CACHE", "CUJIT_LOG", "CUJIT_TARGET")}
    env["CUJIT_CACHE_DIR"] = str(cache)
    procs = [programs.start([script, 10 + i], env=env) for i in range(4)]
    results = [programs.result(p)[0] for p in procs]
    for out in results:
        assert out["saxpy"] and out["matmul"] and out["warp"] and out["stencil"], out
        assert out["compiles"] + out["hits"] == 6
    assert sum(out["compiles"] for out in results) == 6  # the others waited on each entry's lock, then loaded it
