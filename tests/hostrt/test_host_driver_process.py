"""The CPU target's runtime tests (test_host_driver.py) in a process of their own whose target is the CPU
(``CUJIT_TARGET=cpu``): the plain suite, whose process keeps the default target, runs them this way."""

import os
import subprocess
import sys
import pathlib


def test_host_driver_tests_pass_on_the_cpu_target():
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, CUJIT_TARGET="cpu")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(here / "test_host_driver.py")], cwd=here.parents[1], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout[-2000:]
