"""Real libraries written for numba-cuda, unchanged, with cujit standing in for ``numba.cuda`` (``import
cujit.as_numba``; issue 41): stumpy's GPU matrix profiles, nvmath-python's FFT prolog/epilog callbacks compiled to
LTO-IR, pytorch-numba-extension-jit's operators. Each runs in a process of its own (cujit must stand in before the
library imports ``numba.cuda``) and is skipped where its package is not installed. Kernels run on the GPU where
there is one, else on the CPU target."""

import os
import subprocess
import sys
import textwrap

import pytest

from gpu_support import GPU_AVAILABLE, ON_CPU_TARGET


def run_program(code, tmp_path, runs_kernels=True):
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    if runs_kernels and not GPU_AVAILABLE:
        env["CUJIT_TARGET"] = "cpu"
    elif not runs_kernels:  # compiles GPU code only: whatever target this process runs on
        env.pop("CUJIT_TARGET", None)
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


STUMPY = """
    import cujit.as_numba
    import numpy as np
    import stumpy
    from numba import cuda

    assert cuda.__name__ == "cujit.cuda"


    def naive_profile(T, m, normalize, T_B=None):
        A = np.lib.stride_tricks.sliding_window_view(T, m)
        B = A if T_B is None else np.lib.stride_tricks.sliding_window_view(T_B, m)
        if normalize:
            A = (A - A.mean(1)[:, None]) / A.std(1)[:, None]
            B = (B - B.mean(1)[:, None]) / B.std(1)[:, None]
        D = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
        if T_B is None:  # the exclusion zone around each subsequence's own position
            zone = int(np.ceil(m / 4))
            for i in range(len(D)):
                D[i, max(0, i - zone) : i + zone + 1] = np.inf
        return D.min(1), D.argmin(1)


    rng = np.random.default_rng()
    T, T_B, m = rng.random(240), rng.random(170), 12
    for profile, normalize, kwargs in [
        (stumpy.gpu_stump(T, m), True, {}),
        (stumpy.gpu_aamp(T, m), False, {}),
        (stumpy.gpu_stump(T, m, T_B=T_B, ignore_trivial=False), True, {"T_B": T_B}),
    ]:
        P, I = naive_profile(T, m, normalize, **kwargs)
        assert np.allclose(profile[:, 0].astype(float), P, atol=1e-6), (profile[:5], P[:5])
        assert np.array_equal(profile[:, 1].astype(int), I)
    print("OK")
"""


def test_stumpy_gpu_matrix_profiles_match_numpy(tmp_path):
    pytest.importorskip("stumpy")
    run_program(STUMPY, tmp_path)


NVMATH = """
    import cujit.as_numba
    import cffi
    import numpy as np
    import nvmath.fft
    from cujit import _core, cuda, types


    def prolog(data_in, offset, user_info, unused):  # as nvmath's docs write a load callback
        return data_in[offset] * 3.0 + user_info[0]


    def epilog(data_out, offset, value, user_info, unused):
        data_out[offset] = value * 2.0 - user_info[0]


    load = nvmath.fft.compile_prolog(prolog, "float32", "float32", name="load_f32", compute_capability="90")
    store = nvmath.fft.compile_epilog(epilog, "float32", "float32", name="store_f32", compute_capability="90")
    assert load[:4] == store[:4] == b"\\xed\\x43\\x4e\\x7f"  # LTO-IR
    ptr = types.CPointer(types.float32)
    load_f32 = cuda.declare_device(
        "load_f32", types.float32(ptr, types.uint64, ptr, ptr), abi="c", link=[cuda.LTOIR(load)]
    )
    store_f32 = cuda.declare_device(
        "store_f32", types.void(ptr, types.uint64, types.float32, ptr, ptr), abi="c", link=[cuda.LTOIR(store)]
    )


    ffi = cffi.FFI()


    def kernel(x, out, info):
        i = cuda.grid(1)
        if i < x.size:
            xp, infop = ffi.from_buffer(x), ffi.from_buffer(info)
            store_f32(ffi.from_buffer(out), i, load_f32(xp, i, infop, xp), infop, xp)


    sig = "void(float32[::1], float32[::1], float32[::1])"
    compiled = cuda.jit(kernel).compile(sig, cc=(9, 0))
    assert _core.link.cubin_has_symbol(compiled.link((9, 0)), compiled.entry)
    if {run}:
        rng = np.random.default_rng()
        x, info = rng.random(1000, dtype=np.float32), rng.random(1, dtype=np.float32)
        out = cuda.device_array_like(x)
        cuda.jit(sig)(kernel).forall(x.size)(cuda.to_device(x), out, cuda.to_device(info))
        assert np.allclose(out.copy_to_host(), (x * 3 + info[0]) * 2 - info[0], rtol=1e-6)
    print("OK")
"""


def test_nvmath_fft_callbacks_compile_and_link(tmp_path):
    """compile_prolog/compile_epilog (numba.cuda.compile with abi="c", abi_info, output="ltoir", cc from a string's
    digits, numba's CPointer of cujit's types): the LTO-IR links into a kernel that calls it, for sm_90."""
    pytest.importorskip("nvmath.fft")
    run_program(NVMATH.replace("{run}", "False"), tmp_path, runs_kernels=False)


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_AVAILABLE or ON_CPU_TARGET, reason="the callbacks' LTO-IR links into GPU code only")
def test_nvmath_fft_callbacks_run(tmp_path):
    pytest.importorskip("nvmath.fft")
    run_program(NVMATH.replace("{run}", "True"), tmp_path)


PNEX = """
    import cujit.as_numba
    import numpy as np
    import torch
    import pytorch_numba_extension_jit as pnex
    from numba import cuda


    @pnex.jit(n_threads="result.numel()")
    def muladd(
        a: pnex.In(torch.float32, (None, None)),
        b: pnex.In("f32", ("a.size(0)", "a.size(1)")),
        c: float,
        result: pnex.Out("float32", "a"),
    ):
        idx = cuda.grid(1)
        y, x = divmod(idx, result.shape[1])
        if y < result.shape[0]:
            result[y, x] = a[y, x] * b[y, x] + c


    a, b = torch.rand(37, 53, device="cuda"), torch.rand(37, 53, device="cuda")
    got = muladd(a, b, 0.5)
    assert np.allclose(got.cpu().numpy(), a.cpu().numpy() * b.cpu().numpy() + 0.5, rtol=1e-6)
    print("OK")
"""


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_AVAILABLE or ON_CPU_TARGET, reason="PyTorch's CUDA tensors need a GPU")
def test_pytorch_numba_extension_jit_operator(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("pytorch_numba_extension_jit")
    run_program(PNEX, tmp_path)
