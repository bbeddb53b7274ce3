"""The CPU target's runtime tests (test_host_driver.py) in a process of their own whose target is the CPU
(``CUJIT_TARGET=cpu``): the plain suite, whose process keeps the default target, runs them this way; and what a
fresh process does when its target is the CPU from before the runtime's first use."""

import os
import subprocess
import sys
import pathlib
import textwrap

from script_runs import run_script


def test_host_driver_tests_pass_on_the_cpu_target():
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, CUJIT_TARGET="cpu")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(here / "test_host_driver.py")],
        cwd=here.parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout[-2000:]


def _run_fresh(text, **env):
    """A scenario in a fresh process (cujit's runtime not yet imported), with ``env`` over this one's."""
    full = dict(os.environ, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0", **env)
    for name in ("CUJIT_TARGET", "NUMBA_ENABLE_CUDASIM"):
        if name not in env:
            full.pop(name, None)
    return run_script(textwrap.dedent(text), "_target.py", full)


def test_compile_for_current_device_before_any_runtime_call():
    proc = _run_fresh(
        """
        from cujit import cuda

        def add(x, y):
            return x + y

        ptx, resty = cuda.compile_for_current_device(add, "float32(float32, float32)")
        assert ".target sm_90" in ptx and str(resty) == "float32", ptx[:400]
        ptx, _ = cuda.compile_ptx_for_current_device(add, "float32(float32, float32)", device=True)
        assert ".target sm_90" in ptx
        assert cuda.get_current_device().compute_capability == (9, 0)
        print("OK")
    """,
        CUJIT_TARGET="cpu",
    )
    assert proc.stdout.strip() == "OK"


def test_a_gpu_kernel_launched_after_the_target_changed_says_why():
    proc = _run_fresh("""
        import os
        import numpy as np
        from cujit import cuda, errors

        @cuda.jit                      # decorated while the target is the GPU
        def inc(x):
            x[cuda.grid(1)] += 1

        @cuda.jit(target="cuda")
        def inc_on_gpu(x):
            x[cuda.grid(1)] += 1

        os.environ["CUJIT_TARGET"] = "cpu"   # the runtime, first used below, runs on the CPU target
        for kernel, why in ((inc, "CUJIT_TARGET was not 'cpu' then"), (inc_on_gpu, "jit(target='cuda')")):
            try:
                kernel[1, 4](np.zeros(4))
            except errors.CudaSupportError as e:
                message = str(e)
            else:
                raise AssertionError("launched")
            assert f"@cuda.jit function '{kernel.__name__}' at " in message and why in message, message
            assert "this process runs on the CPU target" in message and "cannot load GPU code" in message, message
            assert "cuModuleLoadData" not in message, message

        @cuda.jit                      # decorated now: the CPU target's
        def inc_here(x):
            x[cuda.grid(1)] += 1

        x = np.zeros(4)
        inc_here[1, 4](x)
        assert (x == 1).all()
        print("OK")
    """)
    assert proc.stdout.strip() == "OK"
