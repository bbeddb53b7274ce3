"""cujit's CUDA runtime in Python: devices and contexts, device arrays, streams, linking and kernel launch.

The work is done by the C++ runtime in ``cujit._core.driver`` and ``cujit._core.link``; these modules give it
numba-cuda's Python shapes. Nothing here loads libcuda at import time: the driver is opened on the first call
that needs a GPU, so ``import cujit`` and the compile-only API work on machines without one.

- ``devices``: ``is_available``, ``detect``, ``gpus``, ``get_current_device``, ``select_device``,
  ``current_context``, ``synchronize``
- ``devicearray``: ``DeviceNDArray``, ``to_device``, ``device_array``, ``device_array_like``, ``as_cuda_array``
- ``stream``: ``Stream``, ``stream``, ``default_stream`` and friends
- ``linker``: nvJitLink (``link``), with the library searched in NVIDIA's pip wheels too
- ``modules``: ``load_module`` (one module per key and context, setup/teardown hooks)
- ``launch``: argument plans and ``launch`` (numba's kernel argument marshalling)

When the process-wide target is the CPU (``cujit._target``), the runtime runs on the CPU target's host driver
instead of libcuda (``_core.host.use_host_driver``; docs/cpu_target.md).
"""

from cujit import _core, _target

# The CPU target for the whole process (CUJIT_TARGET=cpu, NUMBA_ENABLE_CUDASIM=1 when the runtime is first imported):
# the runtime runs on the host driver (device memory is host memory, streams run in order at once), from before any
# driver call.
if not _target.process_target().on_gpu:
    _core.host.use_host_driver()

from cujit.cudadrv import devices, stream, devicearray, linker, modules, launch  # noqa: E402,F401
from cujit.cudadrv import driver  # noqa: E402,F401  (numba-cuda's cuda.cudadrv.driver, reached as an attribute)

# nvJitLink is large, and the first compile for a target builds its code generator:
# start both now, in the background, so the first kernel launch finds them ready.
linker.preload()
if devices.gpu_available():
    from cujit.compiler import warm_up as _warm_up

    _warm_up(devices.get_device(0).compute_capability)
