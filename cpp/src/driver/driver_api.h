// The Driver API entry points cujit calls, resolved from libcuda with dlsym
// under the versioned names cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2),
// and the checking helper that turns a CUresult into a DriverError.
#pragma once

#include "cujit/driver.h"

namespace cujit::driver::detail {

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// CUfunction_attribute
constexpr int FUNC_MAX_THREADS_PER_BLOCK = 0, FUNC_SHARED_SIZE_BYTES = 1, FUNC_CONST_SIZE_BYTES = 2,
              FUNC_LOCAL_SIZE_BYTES = 3, FUNC_NUM_REGS = 4, FUNC_PTX_VERSION = 5, FUNC_BINARY_VERSION = 6,
              FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8, FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT = 9;

struct CUuuid {
  unsigned char bytes[16];
};

struct CUipcMemHandle {  // passed by value to cuIpcOpenMemHandle
  unsigned char reserved[64];
};

struct DriverApi {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(std::size_t*, CUdevice) = nullptr;  // _v2
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;        // _v2, optional
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice*) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemGetInfo)(std::size_t*, std::size_t*) = nullptr;                         // _v2
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t) = nullptr;                             // _v2
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;                                            // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t) = nullptr;               // _v2
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t) = nullptr;                     // _v2
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, std::size_t) = nullptr;               // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream) = nullptr;        // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream) = nullptr;  // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, std::size_t) = nullptr;                 // _v2
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;  // _v2
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamQuery)(CUstream) = nullptr;
  // Ordering a stream after another's work (CAI v3 producers); optional, a synchronisation is the fallback.
  CUresult (*cuStreamGetFlags)(CUstream, unsigned*) = nullptr;
  CUresult (*cuEventCreate)(void**, unsigned) = nullptr;
  CUresult (*cuEventRecord)(void*, CUstream) = nullptr;
  CUresult (*cuEventDestroy)(void*) = nullptr;  // _v2
  CUresult (*cuStreamWaitEvent)(CUstream, void*, unsigned) = nullptr;
  // The library API (CUDA >= 12.0); optional, the module API is the fallback.
  CUresult (*cuLibraryLoadData)(CUlibrary*, const void*, void*, void**, unsigned, void*, void**, unsigned) = nullptr;
  CUresult (*cuLibraryUnload)(CUlibrary) = nullptr;
  CUresult (*cuLibraryGetKernel)(CUkernel*, CUlibrary, const char*) = nullptr;
  CUresult (*cuLibraryGetGlobal)(CUdeviceptr*, std::size_t*, CUlibrary, const char*) = nullptr;
  CUresult (*cuKernelGetFunction)(CUfunction*, CUkernel) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuModuleGetGlobal)(CUdeviceptr*, std::size_t*, CUmodule, const char*) = nullptr;  // _v2
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**) = nullptr;
  CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void**) = nullptr;  // optional
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, std::size_t) = nullptr;  // optional

  // ---- events, the context stack, the profiler (events.cpp, context_stack.cpp, profiler.cpp); optional:
  // a driver without one raises when it is used ----
  CUresult (*cuEventSynchronize)(void*) = nullptr;
  CUresult (*cuEventQuery)(void*) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, void*, void*) = nullptr;  // _v2 where the driver has it
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;                 // _v2
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;                 // _v2
  CUresult (*cuProfilerStart)() = nullptr;
  CUresult (*cuProfilerStop)() = nullptr;

  // ---- host memory, managed memory, IPC (host_memory.cpp, ipc.cpp); optional: a driver without one raises
  // when it is used ----
  CUresult (*cuMemHostAlloc)(void**, std::size_t, unsigned) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
  CUresult (*cuMemHostRegister)(void*, std::size_t, unsigned) = nullptr;  // _v2
  CUresult (*cuMemHostUnregister)(void*) = nullptr;
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned) = nullptr;  // _v2
  CUresult (*cuMemAllocManaged)(CUdeviceptr*, std::size_t, unsigned) = nullptr;
  CUresult (*cuMemGetAddressRange)(CUdeviceptr*, std::size_t*, CUdeviceptr) = nullptr;  // _v2
  CUresult (*cuIpcGetMemHandle)(CUipcMemHandle*, CUdeviceptr) = nullptr;
  CUresult (*cuIpcOpenMemHandle)(CUdeviceptr*, CUipcMemHandle, unsigned) = nullptr;  // _v2
  CUresult (*cuIpcCloseMemHandle)(CUdeviceptr) = nullptr;

  bool has_library_api() const {
    return cuLibraryLoadData && cuLibraryUnload && cuLibraryGetKernel && cuKernelGetFunction;
  }
};

// The loaded driver; throws DriverError{Support} when there is none.
const DriverApi& api();
// The loaded driver or null; for destructors, which must not throw.
const DriverApi* api_if_loaded();

// Throws DriverError{Driver} for a failed call, naming the call and the code.
void check(CUresult result, const char* call);
std::string describe(CUresult result);  // "CUDA_ERROR_X (n): <driver's description>"

// Makes `ctx` current on this thread if it is not already.
void ensure_current(const Context& ctx);

// Another implementation of the table in place of libcuda's, for the rest of the process (the CPU target's
// host driver, hostrt/host_driver.cpp): api() returns it from then on and libcuda is not needed. The real
// driver's status (driver_status(), cuda.is_available()) still describes libcuda and the GPUs.
void use_table(const DriverApi* table);
// The table in place of libcuda's, or null.
const DriverApi* table_override();

}  // namespace cujit::driver::detail
