"""numba's Dispatcher interface on cujit's dispatcher (issue 41), beside compile() and specialize():
_compile_for_args, typeof_pyval, nopython_signatures, stats (the disk cache's hits and misses), recompile(),
configure() and call(). Kernels compile for sm_90 without a GPU; launches run on the CPU target."""

import linecache
import textwrap

import numpy as np
import pytest

from cujit import cuda, types
from gpu_support import KERNELS_RUN

SIG = (types.float32[::1],)


def make(scale, **jit):
    """A kernel from source text of its own (so that the disk cache keys it by that text)."""
    source = textwrap.dedent(f"""
        def scale_by(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] * SCALE + {scale}
    """)
    filename = f"<dispatcher-interface-{abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"cuda": cuda, "SCALE": 2.0}
    exec(compile(source, filename, "exec"), namespace)
    return cuda.jit(target="cuda", **jit)(namespace["scale_by"]), namespace


def test_typeof_pyval_and_compile_for_args():
    kernel, _ = make(1)
    x = np.zeros(4, np.float32)
    assert kernel.typeof_pyval(x) == types.float32[::1] and kernel.typeof_pyval(3) == types.int64
    compiled = kernel._compile_for_args(x)
    assert list(kernel.overloads) == [SIG] and kernel.overloads[SIG] is compiled
    assert [str(s) for s in kernel.nopython_signatures] == ["none(array(float32, 1d, C))"]
    with pytest.raises(TypeError, match="no keyword arguments"):
        kernel._compile_for_args(x, stream=0)


def test_stats_count_the_disk_caches_hits_and_misses(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUJIT_CACHE", raising=False)
    first, _ = make(3, cache=True)
    first.compile(SIG, cc=(9, 0))
    assert first.stats.cache_path == str(tmp_path / "cache")
    assert first.stats.cache_misses == {SIG: 1} and not first.stats.cache_hits
    second, _ = make(3, cache=True)  # the same function again: read from the disk
    second.compile(SIG, cc=(9, 0))
    assert second.stats.cache_hits == {SIG: 1} and not second.stats.cache_misses
    plain, _ = make(3)
    plain.compile(SIG, cc=(9, 0))
    assert plain.stats == (None, {}, {})


def test_recompile_reads_globals_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "cache"))
    kernel, namespace = make(5, cache=True)
    kernel.compile(SIG, cc=(9, 0))
    before = kernel.inspect_asm(SIG)
    namespace["SCALE"] = 7.0
    kernel.recompile()
    assert list(kernel.overloads) == [SIG] and kernel.inspect_asm(SIG) != before
    assert "0d401C000000000000" in kernel.inspect_asm(SIG)  # 7.0 as a PTX double
    assert kernel.stats.cache_misses == {SIG: 2}  # a new key: the value read is part of it


@pytest.mark.gpu
@pytest.mark.skipif(not KERNELS_RUN, reason="no GPU and not the CPU target")
def test_configure_and_call_launch_as_indexing_does():
    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    data = np.random.default_rng().random(50, dtype=np.float32)
    d = cuda.to_device(data)
    add_one.configure(2, 32)(d)
    add_one.call((d,), 2, 32)
    np.testing.assert_allclose(d.copy_to_host(), data + 2, rtol=1e-6)


def test_inspect_sass_cfg_on_the_cpu_target():
    @cuda.jit("void(float32[::1])", target="cpu")
    def noop(a):
        pass

    with pytest.raises(NotImplementedError, match="no SASS"):
        noop.inspect_sass_cfg()
