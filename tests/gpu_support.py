"""Where the project's GPU tests run (issue 30): the one condition every ``gpu`` test file uses.

Kernels can run where there is a usable GPU, or where the process-wide target is the CPU (``CUJIT_TARGET=cpu`` or
``NUMBA_ENABLE_CUDASIM=1``: kernels compile for the host and the runtime runs on the host driver, so device
arrays, streams and events work without a GPU). ``make test-cpu-target`` runs every ``gpu`` test that way.

- ``gpu``: a test module's ``pytestmark`` (the ``gpu`` marker, skipped where kernels cannot run);
- ``needs_device(reason)``: a test that needs the GPU itself (linked PTX/cubin/LTO-IR, the driver's module
  loading, PTX inspection, IPC across processes, several GPUs...), skipped on the CPU target with its reason;
- ``cpu_target_xfail(feature)``: a test of a kernel-language feature the CPU target does not have yet, expected to
  fail there (not strictly: it passes as the feature lands).
"""

import pytest

from cujit import _target
from cujit.cudadrv import devices

ON_CPU_TARGET = not _target.process_target().on_gpu
GPU_AVAILABLE = devices.gpu_available()
KERNELS_RUN = ON_CPU_TARGET or GPU_AVAILABLE


def _why_not():
    return f"no usable GPU ({devices.cuda_error()}) and the CPU target is not in use (CUJIT_TARGET=cpu)"


gpu = [pytest.mark.gpu, pytest.mark.skipif(not KERNELS_RUN, reason=_why_not() if not KERNELS_RUN else "")]


def needs_device(reason):
    """Skips a test on the CPU target: it needs a real GPU, for ``reason`` (one line)."""
    return pytest.mark.skipif(ON_CPU_TARGET, reason=f"needs a GPU, not the CPU target: {reason}")


def cpu_target_xfail(feature):
    """Expects a test to fail on the CPU target until ``feature`` runs there (issue 30)."""
    return pytest.mark.xfail(ON_CPU_TARGET, reason=f"CPU target: {feature} (issue 30, in progress)", strict=False)
