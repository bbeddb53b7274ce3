"""Threads cujit starts on its own (the code generator's warm-up, loading nvJitLink and NVRTC prefetches in the
core, cujit/background.h; the disk cache's toolchain lookup in Python): a process that forks while they run
has a child that compiles and links, instead of one that waits forever on a lock or a result of a thread it
does not have."""

import subprocess
import sys

import pytest

SCRIPT = """
import os, signal, sys, time
from cujit import _core, cuda

def f(x):
    return x * 2.0 + 1.0

_core.start_warm_up((9, 0))  # what the runtime starts when it first meets a device
_core.link.preload()         # and when it is imported
time.sleep(float(sys.argv[1]) / 1000)  # (they take tens of ms: the fork comes while they run)
pid = os.fork()
if pid == 0:
    signal.alarm(30)  # a hang fails instead of stalling the test
    ptx, _ = cuda.compile_ptx(f, "float32(float32)", device=True, cc=(9, 0))
    ok = ".visible .func" in ptx and _core.link.status().available
    os._exit(0 if ok else 2)
_, status = os.waitpid(pid, 0)
sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 3)
"""


def run_script(path, text, delay_ms):
    """Runs ``text`` as the script ``path`` with the delay before its fork; it exits 0 when its child did."""
    path.write_text(text)
    done = subprocess.run([sys.executable, str(path), str(delay_ms)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("delay_ms", [0, 2, 5, 10, 20])
def test_a_child_forked_during_the_warm_up_compiles_and_links(tmp_path, delay_ms):
    # (before fork() waited for cujit's threads, the children forked after 2 to 20 ms hung)
    run_script(tmp_path / "fork_during_warm_up.py", SCRIPT, delay_ms)


PREPARE_SCRIPT = """
import os, signal, sys, time
from cujit import caching

caching.prepare()  # what jit(cache=True) starts at decoration: a Python thread finding the toolchain's identity
time.sleep(float(sys.argv[1]) / 1000)
pid = os.fork()
if pid == 0:
    signal.alarm(30)
    os._exit(0 if caching.toolchain_id() else 2)
_, status = os.waitpid(pid, 0)
sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 3)
"""


@pytest.mark.parametrize("delay_ms", [0, 0.2])
def test_a_child_forked_while_the_cache_prepares_finds_the_toolchain(tmp_path, delay_ms):
    # (before the child took a lock of its own, children forked within 0.2 ms of the decoration hung)
    run_script(tmp_path / "fork_during_prepare.py", PREPARE_SCRIPT, delay_ms)
