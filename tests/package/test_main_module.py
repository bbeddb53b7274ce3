"""``python -m cujit`` (python/cujit/__main__.py): --info reports the CPU target (whether this build has it, its
worker threads, how to select it) and the target kernels compile for, without opening the CUDA driver."""

import os
import subprocess
import sys

import pytest

from cujit import __main__ as cli
from cujit import _core

_TARGET_VARIABLES = ("CUJIT_TARGET", "NUMBA_ENABLE_CUDASIM", "CUJIT_HOST_THREADS")


def _info(monkeypatch, capsys, **env):
    for name in _TARGET_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["--info"]) == 0
    return capsys.readouterr().out


def test_info_reports_the_cpu_target(monkeypatch, capsys):
    out = _info(monkeypatch, capsys)
    workers = _core.host.worker_count()
    assert (
        f"cpu target: available; kernels compiled for this machine's CPU run on {workers} worker "
        f"thread{'s' if workers != 1 else ''} (one per core"
    ) in out, out
    assert "select it with CUJIT_TARGET=cpu (every kernel of the process" in out, out
    assert 'cuda.jit(target="cpu")' in out, out
    assert "kernels compile for: cuda (the GPU; the default: CUJIT_TARGET is not set)" in out, out


def test_info_names_the_worker_threads_asked_for(monkeypatch, capsys):
    out = _info(monkeypatch, capsys, CUJIT_HOST_THREADS="3")
    assert "run on 3 worker threads (CUJIT_HOST_THREADS=3)" in out, out


@pytest.mark.parametrize("variable, value", [("CUJIT_TARGET", "cpu"), ("NUMBA_ENABLE_CUDASIM", "1")])
def test_info_says_when_the_cpu_target_is_selected(monkeypatch, capsys, variable, value):
    out = _info(monkeypatch, capsys, **{variable: value})
    assert f"kernels compile for: cpu (the CPU target; {variable}={value})" in out, out


def test_info_reports_a_wrong_target(monkeypatch, capsys):
    out = _info(monkeypatch, capsys, CUJIT_TARGET="tpu")
    assert "kernels compile for: unknown: CUJIT_TARGET='tpu': the targets are 'cuda', 'cpu'" in out, out


def test_info_without_a_driver_points_to_the_cpu_target(tmp_path):
    """As `python -m cujit --info` runs on a machine with no driver: it says kernels cannot launch on the GPU and
    how to run them on the CPU; it loads no libcuda (nothing in --info starts the runtime)."""
    env = {k: v for k, v in os.environ.items() if k not in _TARGET_VARIABLES}
    env["CUJIT_CUDA_DRIVER"] = str(tmp_path / "no-gpu" / "libcuda.so.1")
    proc = subprocess.run(
        [sys.executable, "-m", "cujit", "--info"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "driver: not found" in proc.stdout, proc.stdout
    assert "cpu target: available" in proc.stdout, proc.stdout
    assert (
        "kernels compile for: cuda (the GPU; the default: CUJIT_TARGET is not set); with no CUDA driver here "
        "they cannot launch: CUJIT_TARGET=cpu runs them on the CPU"
    ) in proc.stdout, proc.stdout
