"""The CUDA profiler's collection switch, as numba-cuda has it: ``cuda.profile_start()``,
``cuda.profile_stop()`` and ``with cuda.profiling():``. Nsight Systems (``nsys profile
--capture-range=cudaProfilerApi``) and Nsight Compute (``ncu --profile-from-start off``) record only between
start and stop; without a profiler attached the calls do nothing visible. Each makes a context current first
(device 0's primary context when the thread has none), as numba's ``require_context`` does.
"""

import contextlib

from cujit import _core

_drv = _core.driver


def profile_start():
    """Enables profile collection by the active profiling tool (cuProfilerStart)."""
    _drv.profiler_start()


def profile_stop():
    """Disables profile collection by the active profiling tool (cuProfilerStop)."""
    _drv.profiler_stop()


@contextlib.contextmanager
def profiling():
    """``with cuda.profiling():`` profiles the block: ``profile_start()`` on entry, ``profile_stop()`` on exit
    (also when the block raises)."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()
