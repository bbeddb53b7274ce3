// Loading libcuda: dlopen on first use, symbol resolution, cuInit, and the
// naming of result codes for error messages.
#include "driver_api.h"

#include "cujit/toolkit.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace cujit::driver {
namespace detail {
namespace {

struct LoadedDriver {
  DriverApi api;
  DriverStatus status;
  bool api_ready = false;  // symbols resolved (cuInit may still have failed)
};

// Codes cujit mentions even when no driver is there to name them.
const char* builtin_error_name(CUresult code) {
  switch (code) {
    case 0:
      return "CUDA_SUCCESS";
    case 1:
      return "CUDA_ERROR_INVALID_VALUE";
    case 2:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case 4:
      return "CUDA_ERROR_DEINITIALIZED";
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 36:
      return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
    case 46:
      return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    case 101:
      return "CUDA_ERROR_INVALID_DEVICE";
    case 200:
      return "CUDA_ERROR_INVALID_IMAGE";
    case 201:
      return "CUDA_ERROR_INVALID_CONTEXT";
    case 209:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218:
      return "CUDA_ERROR_INVALID_PTX";
    case 222:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400:
      return "CUDA_ERROR_INVALID_HANDLE";
    case 500:
      return "CUDA_ERROR_NOT_FOUND";
    case 600:
      return "CUDA_ERROR_NOT_READY";
    case 700:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701:
      return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 702:
      return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 709:
      return "CUDA_ERROR_CONTEXT_IS_DESTROYED";
    case 710:
      return "CUDA_ERROR_ASSERT";
    case 715:
      return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case 716:
      return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case 719:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case 720:
      return "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE";
    case 801:
      return "CUDA_ERROR_NOT_SUPPORTED";
    case 803:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 804:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case 999:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return nullptr;
  }
}

std::string name_with(const DriverApi* a, CUresult code) {
  // The driver's own names first: they cover codes newer than this file.
  const char* name = nullptr;
  if (a != nullptr && a->cuGetErrorName(code, &name) == CUDA_SUCCESS && name != nullptr) return name;
  name = builtin_error_name(code);
  return name ? name : "CUDA_ERROR_" + std::to_string(code);
}

std::string describe_with(const DriverApi* a, CUresult code) {
  std::string text = name_with(a, code) + " (" + std::to_string(code) + ")";
  const char* description = nullptr;
  if (a != nullptr && a->cuGetErrorString(code, &description) == CUDA_SUCCESS && description != nullptr)
    text += ": " + std::string(description);
  return text;
}

template <typename Fn>
bool resolve(void* lib, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(dlsym(lib, name));
  return slot != nullptr;
}

// Returns an empty string on success, else which symbol is missing.
std::string resolve_all(void* lib, DriverApi& a) {
#define CUJIT_REQUIRE(field, symbol) \
  if (!resolve(lib, a.field, symbol)) return symbol;
  CUJIT_REQUIRE(cuInit, "cuInit")
  CUJIT_REQUIRE(cuDriverGetVersion, "cuDriverGetVersion")
  CUJIT_REQUIRE(cuGetErrorName, "cuGetErrorName")
  CUJIT_REQUIRE(cuGetErrorString, "cuGetErrorString")
  CUJIT_REQUIRE(cuDeviceGetCount, "cuDeviceGetCount")
  CUJIT_REQUIRE(cuDeviceGet, "cuDeviceGet")
  CUJIT_REQUIRE(cuDeviceGetName, "cuDeviceGetName")
  CUJIT_REQUIRE(cuDeviceGetAttribute, "cuDeviceGetAttribute")
  CUJIT_REQUIRE(cuDeviceTotalMem, "cuDeviceTotalMem_v2")
  CUJIT_REQUIRE(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  CUJIT_REQUIRE(cuCtxSetCurrent, "cuCtxSetCurrent")
  CUJIT_REQUIRE(cuCtxGetCurrent, "cuCtxGetCurrent")
  CUJIT_REQUIRE(cuCtxGetDevice, "cuCtxGetDevice")
  CUJIT_REQUIRE(cuCtxSynchronize, "cuCtxSynchronize")
  CUJIT_REQUIRE(cuMemGetInfo, "cuMemGetInfo_v2")
  CUJIT_REQUIRE(cuMemAlloc, "cuMemAlloc_v2")
  CUJIT_REQUIRE(cuMemFree, "cuMemFree_v2")
  CUJIT_REQUIRE(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
  CUJIT_REQUIRE(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
  CUJIT_REQUIRE(cuMemcpyDtoD, "cuMemcpyDtoD_v2")
  CUJIT_REQUIRE(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")
  CUJIT_REQUIRE(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
  CUJIT_REQUIRE(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")
  CUJIT_REQUIRE(cuMemsetD8, "cuMemsetD8_v2")
  CUJIT_REQUIRE(cuMemsetD8Async, "cuMemsetD8Async")
  CUJIT_REQUIRE(cuStreamCreate, "cuStreamCreate")
  CUJIT_REQUIRE(cuStreamDestroy, "cuStreamDestroy_v2")
  CUJIT_REQUIRE(cuStreamSynchronize, "cuStreamSynchronize")
  CUJIT_REQUIRE(cuStreamQuery, "cuStreamQuery")
  CUJIT_REQUIRE(cuModuleLoadData, "cuModuleLoadData")
  CUJIT_REQUIRE(cuModuleUnload, "cuModuleUnload")
  CUJIT_REQUIRE(cuModuleGetFunction, "cuModuleGetFunction")
  CUJIT_REQUIRE(cuModuleGetGlobal, "cuModuleGetGlobal_v2")
  CUJIT_REQUIRE(cuFuncGetAttribute, "cuFuncGetAttribute")
  CUJIT_REQUIRE(cuFuncSetAttribute, "cuFuncSetAttribute")
  CUJIT_REQUIRE(cuLaunchKernel, "cuLaunchKernel")
#undef CUJIT_REQUIRE
  resolve(lib, a.cuDeviceGetUuid, "cuDeviceGetUuid_v2") || resolve(lib, a.cuDeviceGetUuid, "cuDeviceGetUuid");
  resolve(lib, a.cuLibraryLoadData, "cuLibraryLoadData");
  resolve(lib, a.cuLibraryUnload, "cuLibraryUnload");
  resolve(lib, a.cuLibraryGetKernel, "cuLibraryGetKernel");
  resolve(lib, a.cuLibraryGetGlobal, "cuLibraryGetGlobal");
  resolve(lib, a.cuKernelGetFunction, "cuKernelGetFunction");
  resolve(lib, a.cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel");
  resolve(lib, a.cuStreamGetFlags, "cuStreamGetFlags");
  resolve(lib, a.cuEventCreate, "cuEventCreate");
  resolve(lib, a.cuEventRecord, "cuEventRecord");
  resolve(lib, a.cuEventDestroy, "cuEventDestroy_v2") || resolve(lib, a.cuEventDestroy, "cuEventDestroy");
  resolve(lib, a.cuStreamWaitEvent, "cuStreamWaitEvent");
  resolve(lib, a.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  // Events, the context stack and the profiler (the host runtime API; optional).
  resolve(lib, a.cuEventSynchronize, "cuEventSynchronize");
  resolve(lib, a.cuEventQuery, "cuEventQuery");
  resolve(lib, a.cuEventElapsedTime, "cuEventElapsedTime_v2") ||
      resolve(lib, a.cuEventElapsedTime, "cuEventElapsedTime");
  resolve(lib, a.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  resolve(lib, a.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  resolve(lib, a.cuProfilerStart, "cuProfilerStart");
  resolve(lib, a.cuProfilerStop, "cuProfilerStop");
  // Host memory, managed memory and IPC (host_memory.cpp, ipc.cpp; optional).
  resolve(lib, a.cuMemHostAlloc, "cuMemHostAlloc");
  resolve(lib, a.cuMemFreeHost, "cuMemFreeHost");
  resolve(lib, a.cuMemHostRegister, "cuMemHostRegister_v2") || resolve(lib, a.cuMemHostRegister, "cuMemHostRegister");
  resolve(lib, a.cuMemHostUnregister, "cuMemHostUnregister");
  resolve(lib, a.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
  resolve(lib, a.cuMemAllocManaged, "cuMemAllocManaged");
  resolve(lib, a.cuMemGetAddressRange, "cuMemGetAddressRange_v2");
  resolve(lib, a.cuIpcGetMemHandle, "cuIpcGetMemHandle");
  resolve(lib, a.cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2");
  resolve(lib, a.cuIpcCloseMemHandle, "cuIpcCloseMemHandle");
  return {};
}

LoadedDriver& loaded() {
  // Leaked on purpose: device arrays and modules freed during interpreter
  // shutdown must still find the table after static destructors ran.
  static LoadedDriver* driver = [] {
    auto* d = new LoadedDriver;
    DriverStatus& st = d->status;
    // Found by the toolkit locator: CUJIT_CUDA_DRIVER / NUMBA_CUDA_DRIVER, else libcuda.so.1 on the loader path.
    const toolkit::Located& located = toolkit::library(toolkit::Library::Driver);
    st.library = located.path.empty() ? "libcuda.so.1" : located.path;
    void* lib = located.handle;
    if (lib == nullptr) {
      st.reason = located.reason + " (this machine may have no NVIDIA driver)";
      return d;
    }
    std::string missing = resolve_all(lib, d->api);
    if (!missing.empty()) {
      st.reason = "the CUDA driver library " + st.library + " lacks " + missing +
                  ": the NVIDIA driver is too old for cujit (CUDA 12 or newer is needed)";
      return d;
    }
    d->api_ready = true;
    CUresult rc = d->api.cuInit(0);
    if (rc != CUDA_SUCCESS) {
      st.reason = "cuInit failed with " + describe_with(&d->api, rc) +
                  (rc == 100 ? " (no CUDA-capable GPU is visible; check CUDA_VISIBLE_DEVICES)" : "");
      return d;
    }
    d->api.cuDriverGetVersion(&st.version);
    if (d->api.cuDeviceGetCount(&st.device_count) != CUDA_SUCCESS) st.device_count = 0;
    if (st.device_count == 0) {
      st.reason = "the CUDA driver reports no GPU";
      return d;
    }
    st.available = true;
    return d;
  }();
  return *driver;
}

std::atomic<const DriverApi*> override_table{nullptr};

}  // namespace

void use_table(const DriverApi* table) { override_table.store(table); }

const DriverApi* table_override() { return override_table.load(std::memory_order_acquire); }

const DriverApi& api() {
  if (const DriverApi* table = table_override()) return *table;
  LoadedDriver& d = loaded();
  if (!d.status.available)
    throw DriverError(DriverErrorKind::Support, "CUDA is not available: " + d.status.reason +
                                                    " (CUJIT_TARGET=cpu runs kernels and the runtime on this "
                                                    "machine's CPU instead: docs/cpu_target.md)");
  return d.api;
}

const DriverApi* api_if_loaded() {
  if (const DriverApi* table = table_override()) return table;
  LoadedDriver& d = loaded();
  return d.status.available ? &d.api : nullptr;
}

std::string describe(CUresult result) {
  if (const DriverApi* table = table_override()) return describe_with(table, result);
  LoadedDriver& d = loaded();
  return describe_with(d.api_ready ? &d.api : nullptr, result);
}

void check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  // numba's CudaAPIError reads "[<code>] Call to <fn> results in <NAME>".
  throw DriverError(DriverErrorKind::Driver,
                    "[" + std::to_string(result) + "] Call to " + call + " results in " + describe(result), result,
                    error_name(result), call);
}

void ensure_current(const Context& ctx) {
  const DriverApi& a = api();
  CUcontext current = nullptr;
  check(a.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != ctx.handle()) check(a.cuCtxSetCurrent(ctx.handle()), "cuCtxSetCurrent");
}

}  // namespace detail

std::string error_name(CUresult code) {
  if (const detail::DriverApi* table = detail::table_override()) return detail::name_with(table, code);
  detail::LoadedDriver& d = detail::loaded();
  return detail::name_with(d.api_ready ? &d.api : nullptr, code);
}

const DriverStatus& driver_status() { return detail::loaded().status; }

void ensure_driver() { detail::api(); }

}  // namespace cujit::driver
