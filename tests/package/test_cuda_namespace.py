"""numba-cuda's user API that a ported program reaches through ``cuda.``: every name resolves from ``cujit.cuda``
and is documented in docs/ (each page names numba-cuda's spelling beside cujit's)."""

import pathlib

import pytest

import cujit
from cujit import cuda

DOCS = "\n".join(p.read_text() for p in (pathlib.Path(__file__).resolve().parents[2] / "docs").glob("*.md"))

# What a numba-cuda 0.30.4 program calls: kernel-side, host-side and array-function names.
NAMES = """
float32x2 float32x3 float32x4 float64x2 float64x4 int8x4 int16x2 int32x3 int64x2 uint8x4 uint16x3 uint32x2 uint64x3
float2 float4 int2 uchar4 double2 long4 short2 char3 ulong2 longlong2 ulonglong4 dim3 Dim3
ldca ldcg ldcs ldcv ldlu stcg stcs stwb stwt activemask lanemask_lt match_any_sync match_all_sync ffs cbrt
literal_unroll is_fp8_supported is_float16_supported cg fp8
event event_elapsed_time pinned_array pinned_array_like pinned mapped_array mapped_array_like mapped managed_array
open_ipc_array set_memory_manager BaseCUDAMemoryManager HostOnlyCUDAMemoryManager GetIpcHandleMixin MemoryPointer
MemoryInfo IpcHandle defer_cleanup require_context profile_start profile_stop profiling from_cuda_array_interface
KernelRuntimeError is_supported_version gpus select_device close get_current_device
vectorize guvectorize reduce Reduce
""".split()


@pytest.mark.parametrize("name", NAMES)
def test_the_name_resolves_and_is_documented(name):
    assert hasattr(cuda, name), f"cuda.{name} is missing"
    assert f"{name}" in DOCS, f"cuda.{name} is not in docs/"


def test_device_array_members():
    from cujit.cudadrv.devicearray import DeviceNDArray

    for member in ("split", "squeeze", "get_ipc_handle", "as_cuda_arg"):
        assert callable(getattr(DeviceNDArray, member)), member


def test_numba_spellings_of_the_array_functions():
    assert cujit.vectorize is cuda.vectorize or callable(cujit.vectorize)
    assert callable(cujit.guvectorize)
