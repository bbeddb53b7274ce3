"""NVRTC through the core: CUDA C++ to PTX and LTO-IR with relocatable device code, the process
cache (two kernels linking one source compile it once), logs as one UserWarning, failures as NvrtcError with
NVRTC's log and the source's name, CUDA headers and extra include paths."""

import concurrent.futures
import os
import signal
import subprocess
import sys
import time
import types
import warnings

import pytest

from cujit import _core, config, cuda, errors, linking, toolkit

import link_program_src as src

DATA = src.DATA


def _compile(name, arch="sm_80", lto=False, **kw):
    text = open(os.path.join(DATA, name)).read()
    return _core.nvrtc.compile(text, name, arch, lto=lto, include_dirs=linking.nvrtc_include_dirs(), **kw)


def test_ptx_exports_device_functions_and_links():
    ptx, log, _ = _compile("functions.cu")
    assert ".visible .func" in ptx and "mul_f32_f32" in ptx and ".target sm_80" in ptx
    # NVRTC's PTX may be newer than the local ptxas: nvJitLink (NVRTC's release) assembles it. A link
    # without a kernel keeps no device function, so this proves only that it assembles and links.
    cubin, _ = _core.link.link([("ptx", ptx, "functions.ptx")], "sm_80")
    assert cubin[:4] == b"\x7fELF"


def test_ltoir_has_the_magic():
    code, _, _ = _compile("functions.cu", lto=True)
    assert isinstance(code, bytes) and code[:4] == b"\xed\x43\x4e\x7f"


def test_options():
    assert _core.nvrtc.options("sm_90a", lto=True, debug=True, lineinfo=True, include_dirs=["/x"]) == [
        "-arch=compute_90a",
        "-rdc=true",
        "-dlto",
        "-G",
        "-lineinfo",
        "-I/x",
    ]


def test_one_source_in_two_kernels_compiles_once():
    text = open(os.path.join(DATA, "functions.cu")).read() + "\n// cache probe\n"
    first = _core.nvrtc.compile(text, "probe.cu", "sm_86")
    again = _core.nvrtc.compile(text, "other-name.cu", "sm_86")
    assert first[2] is False and again[2] is True and again[0] == first[0]
    assert _core.nvrtc.compile(text, "probe.cu", "sm_86", lineinfo=True)[2] is False  # options are in the key


def test_callers_during_a_compile_wait_for_it():
    text = open(os.path.join(DATA, "functions.cu")).read() + "\n// eight threads at once\n"
    before = _core.nvrtc.compile_count()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: _core.nvrtc.compile(text, "threads.cu", "sm_80"), range(8)))
    assert _core.nvrtc.compile_count() == before + 1
    assert len({r[0] for r in results}) == 1 and [r[2] for r in results].count(False) == 1


def test_a_failed_compile_is_not_kept():
    text = "int broken( { }\n// not kept\n"
    before = _core.nvrtc.compile_count()
    for _ in range(2):
        with pytest.raises(errors.NvrtcError, match="NVRTC_ERROR_COMPILATION"):
            _core.nvrtc.compile(text, "broken.cu", "sm_80")
    assert _core.nvrtc.compile_count() == before + 2


def test_a_prefetch_leaves_the_log_to_the_first_link():
    text = open(os.path.join(DATA, "warn.cu")).read() + "\n// prefetched\n"
    code, log, cached = _core.nvrtc.compile(text, "warn.cu", "sm_80", report=False)
    assert "declared but never referenced" in log and cached is True
    before = _core.nvrtc.compile_count()
    assert _core.nvrtc.compile(text, "warn.cu", "sm_80")[1:] == (log, False)  # the link reports it
    assert _core.nvrtc.compile(text, "warn.cu", "sm_80")[2] is True  # and only once
    assert _core.nvrtc.compile_count() == before


def _join_prefetches():
    _core.wait_for_background_work()


class _FakeContext:
    device_id = 0


def _with_a_context(monkeypatch, cc=(8, 0)):
    """declare_device and jit prefetch only when a context is current: a stand-in one, for a device of cc."""
    monkeypatch.setattr(_core.driver, "current_context_or_none", lambda: _FakeContext())
    monkeypatch.setattr(_core.driver, "device_info", lambda i: types.SimpleNamespace(compute_capability=cc))


def _until_a_compile_starts(before, seconds=60):
    """Returns once NVRTC's compile count passes ``before``: a prefetch's compile has its cache entry and runs."""
    deadline = time.monotonic() + seconds
    while _core.nvrtc.compile_count() == before:
        assert time.monotonic() < deadline, "the prefetch did not start"


def test_declarations_and_kernels_start_nvrtc_when_a_context_exists(tmp_path, monkeypatch):
    sig = "float32(float32, float32)"
    path = tmp_path / "prefetched.cu"
    path.write_text(open(os.path.join(DATA, "functions.cu")).read() + "\n// declared\n")
    monkeypatch.setattr(_core.driver, "current_context_or_none", lambda: None)  # (a GPU machine may have one)
    before = _core.nvrtc.compile_count()
    cuda.declare_device("mul_f32_f32", sig, link=[str(path)])  # no context: nothing starts
    _join_prefetches()
    assert _core.nvrtc.compile_count() == before
    _with_a_context(monkeypatch)
    mul = cuda.declare_device("mul_f32_f32", sig, link=[str(path)])
    _join_prefetches()
    assert _core.nvrtc.compile_count() == before + 1
    compiled = cuda.jit(_calls(mul)).compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    assert compiled.lto is linking.lto_available()  # CUDA C++ links with LTO by default
    assert _core.link.cubin_has_symbol(compiled.link((8, 0)), compiled.entry)
    assert _core.nvrtc.compile_count() == before + 1  # the link used the prefetched compile


@pytest.mark.parametrize(
    "options", [{"lto": False}, {"lto": True}, {"debug": True, "opt": False}], ids=["lto=False", "lto=True", "debug"]
)
def test_a_kernel_prefetches_with_the_options_its_link_uses(tmp_path, monkeypatch, options):
    """jit(link=...) prefetches with the kernel's own lto and debug (lto=None under debug: no LTO, decided on
    the prefetch's thread), so that the link finds the compile it needs and runs NVRTC no more."""
    _with_a_context(monkeypatch)
    path = tmp_path / "kernel_options.cu"
    path.write_text(open(os.path.join(DATA, "functions.cu")).read() + f"\n// {sorted(options.items())}\n")
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
    before = _core.nvrtc.compile_count()
    kernel = cuda.jit(link=[str(path)], **options)(_calls(mul))
    _join_prefetches()
    assert _core.nvrtc.compile_count() == before + 1
    compiled = kernel.compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    assert compiled.lto is bool(options.get("lto"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (debug builds warn about their speed)
        assert _core.link.cubin_has_symbol(compiled.link((8, 0)), compiled.entry)
    assert _core.nvrtc.compile_count() == before + 1


def test_a_prefetch_that_fails_leaves_the_error_to_the_link(tmp_path, monkeypatch):
    _with_a_context(monkeypatch)
    path = tmp_path / "broken.cu"
    path.write_text('extern "C" __device__ int mul_f32_f32(float* r, float x, float y) { return oops; }\n')
    before = _core.nvrtc.compile_count()
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[str(path)])  # no error here
    cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[str(tmp_path / "missing.cu")])
    _join_prefetches()
    assert _core.nvrtc.compile_count() == before + 1  # the broken source was tried; the missing one was not
    compiled = cuda.jit(_calls(mul)).compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    with pytest.raises(errors.NvrtcError, match=r'(?s)identifier "oops" is undefined.*broken\.cu'):
        compiled.link((8, 0))


def test_fork_waits_for_a_prefetch_and_the_child_has_its_compile(tmp_path, monkeypatch):
    """No thread the user does not know of may be inside NVRTC when the process forks (the child could
    deadlock on a lock that thread held): fork() waits for the prefetch, and the child finds its compile
    done instead of waiting for a thread it does not have, at exit or when it links."""
    _with_a_context(monkeypatch)
    text = open(os.path.join(DATA, "functions.cu")).read() + f"\n// forked {os.getpid()}\n"
    path = tmp_path / "forked.cu"
    path.write_text(text)
    before = _core.nvrtc.compile_count()
    cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[str(path)])
    _until_a_compile_starts(before)
    lto = linking.resolve_lto(None, False, ["cu"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (3.12: fork() of a process with threads)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(60)  # a hang fails the test instead of stalling it
            _core.wait_for_background_work()  # (what exit does)
            out, _, _ = _core.nvrtc.compile(
                text, "forked.cu", "sm_80", lto=lto, include_dirs=linking.nvrtc_include_dirs()
            )
            code = 0 if out and _core.nvrtc.compile_count() == before + 1 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_a_process_that_exits_while_a_prefetch_compiles_exits_cleanly(tmp_path):
    path = tmp_path / "at_exit.cu"
    path.write_text(open(os.path.join(DATA, "functions.cu")).read() + "\n// at exit\n")
    script = f"""
import time, types
from cujit import _core, cuda
class Context:
    device_id = 0
_core.driver.current_context_or_none = lambda: Context()
_core.driver.device_info = lambda i: types.SimpleNamespace(compute_capability=(8, 0))
before = _core.nvrtc.compile_count()
cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[{str(path)!r}])
deadline = time.monotonic() + 60
while _core.nvrtc.compile_count() == before and time.monotonic() < deadline:
    pass
print("exiting while NVRTC compiles")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "exiting while NVRTC compiles" in done.stdout, done.stderr


def _calls(mul):
    def multiply_vectors(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])

    return multiply_vectors


def test_warnings_come_once_per_compile():
    kernel = cuda.jit(link=[os.path.join(DATA, "warn.cu")])(src.multiply_vectors)
    compiled = kernel.compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    with pytest.warns(UserWarning, match="NVRTC log messages") as record:
        compiled.link((8, 0))
    nvrtc = [w for w in record if "NVRTC log messages" in str(w.message)]
    assert len(nvrtc) == 1 and "declared but never referenced" in str(nvrtc[0].message)


def test_errors_carry_the_log_and_the_source_name():
    kernel = cuda.jit(link=[os.path.join(DATA, "error.cu")])(src.multiply_vectors)
    compiled = kernel.compile("void(float32[::1], float32[::1], float32[::1])", cc=(8, 0))
    with pytest.raises(errors.NvrtcError) as e:
        compiled.link((8, 0))
    message = str(e.value)
    assert "NVRTC_ERROR_COMPILATION" in message and 'identifier "SYNTAX" is undefined' in message
    assert 'in the compilation of "error.cu"' in message


def test_cuda_headers_are_on_the_include_path():
    ptx, _, _ = _compile("cuda_include.cu")
    assert "block_rank" in ptx


def test_extra_include_paths_are_read_at_each_compile(monkeypatch):
    with pytest.raises(errors.NvrtcError, match="add.cuh"):
        _compile("saxpy.cu")
    monkeypatch.setattr(
        config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", os.path.join(DATA, "includeA") + ":" + os.path.join(DATA, "includeB")
    )
    ptx, _, _ = _compile("saxpy.cu")
    assert "saxpy" in ptx


def test_user_include_path_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("CUJIT_CUDA_INCLUDE_PATH", str(tmp_path))
    monkeypatch.setenv("NUMBA_CUDA_INCLUDE_PATH", os.path.join(DATA, "includeA"))
    dirs = toolkit.include_dirs()
    assert dirs[:2] == [str(tmp_path), os.path.join(DATA, "includeA")]


def test_supported_archs_and_version():
    major, _ = _core.nvrtc.version()
    assert major >= 12 and 75 in _core.nvrtc.supported_archs() and 90 in _core.nvrtc.supported_archs()


def test_missing_nvrtc_names_the_places_and_cuda_home(tmp_path):
    import subprocess, sys, textwrap

    script = textwrap.dedent("""
        from cujit import _core, errors
        try:
            _core.nvrtc.compile("int x;", "x.cu", "sm_80")
        except errors.NvrtcError as e:
            print(e)
        """)
    env = dict(os.environ, CUJIT_NVRTC=str(tmp_path / "libnvrtc.so.13"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True).stdout
    assert "NVRTC" in out and "CUJIT_NVRTC" in out and str(tmp_path) in out
    env = dict(os.environ, CUDA_HOME=str(tmp_path), PYTHONNOUSERSITE="1")
    script = textwrap.dedent("""
        import sys
        from cujit import _core, toolkit
        _core.toolkit.set_wheel_roots([])  # as if no wheels were installed
        info = _core.toolkit.library("nvrtc")
        print(info.reason if not info.found else "found " + info.path)
        """)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True).stdout
    # (where /usr/local/cuda has NVRTC, the GPU machine's, it is found there, after CUDA_HOME)
    assert out.startswith("found /usr/local/cuda") or (str(tmp_path) in out and "CUDA_HOME" in out), out


def test_sources_that_need_the_runtime_declarations_compile():
    # NVRTC runs with -minimal first (faster); a source using the runtime's types compiles without it.
    src_text = 'extern "C" __device__ int status(int* r) { cudaError_t e = cudaSuccess; *r = (int)e; return 0; }'
    ptx, log, _ = _core.nvrtc.compile(src_text, "needs_runtime.cu", "sm_80")
    assert "status" in ptx and log == ""
