"""The host side of CUDA ufuncs, gufuncs and reductions end to end without a GPU: fake_driver_calls.py run in a
process whose libcuda is the fake (tests/fake_cuda)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def test_calls_on_the_fake_driver(fake_driver):
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(HERE, "fake_driver_calls.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "passed" in result.stdout and "skipped" not in result.stdout and "failed" not in result.stdout
