"""examples/demo.py (`make demo`): it compiles UDFs to PTX, then runs its saxpy kernel, on the GPU when one is usable
and on the CPU target otherwise, saying which, and checks the result against numpy (a wrong result exits 1)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import gpu_support

DEMO = pathlib.Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def _run_demo(tmp_path, **env):
    env = dict(
        {k: v for k, v in os.environ.items() if k not in ("CUJIT_TARGET", "NUMBA_ENABLE_CUDASIM")},
        **env,
        CUJIT_CACHE_DIR=str(tmp_path / "cache"),
    )
    proc = subprocess.run(
        [sys.executable, str(DEMO)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 0, f"--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_demo_without_a_gpu_runs_its_kernel_on_the_cpu_target(tmp_path):
    out = _run_demo(tmp_path, CUJIT_CUDA_DRIVER=str(tmp_path / "no-gpu" / "libcuda.so.1"))
    assert "C ABI, abi_name    -> float32  [sm_75]" in out and ".func (.b32) add_f32(.b32, .b32)" in out, out
    assert "no GPU here (cuda.is_available() is False): running the kernel on the CPU target instead" in out, out
    assert out.rstrip().endswith("saxpy on the CPU target: matches numpy"), out


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a usable GPU: the demo's GPU path")
def test_demo_with_a_gpu_runs_its_kernel_there(tmp_path):
    """The GPU path (CUJIT_TARGET is left out of the demo's environment, also under `make test-cpu-target`)."""
    out = _run_demo(tmp_path)
    assert "no GPU here" not in out and "CPU target" not in out, out
    last = out.rstrip().splitlines()[-1]
    assert re.fullmatch(r"saxpy on .+: matches numpy", last), out
