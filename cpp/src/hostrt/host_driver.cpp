// The CPU target's driver (cujit/host_driver.h): the Driver API table of
// driver/driver_api.h implemented on the host, so that device arrays, streams,
// events, contexts and the device queries work without libcuda. Every call is
// synchronous: a stream's work is done when the call returns, so streams are
// trivially in order and synchronising is a no-op.
#include "cujit/host_driver.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "cujit/hostrt.h"
#include "driver_api.h"

namespace cujit::hostrt {
namespace {

using namespace cujit::driver;
using detail::DriverApi;

constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidDevice = 101, kInvalidContext = 201,
                   kInvalidHandle = 400, kNotFound = 500, kNotReady = 600, kNotSupported = 801;
constexpr std::size_t kAlignment = 256;  // cudaMalloc's alignment
constexpr unsigned kEventDisableTiming = 2;

// ---- errors ----------------------------------------------------------------

const char* name_of(CUresult r) {
  switch (r) {
    case kSuccess:
      return "CUDA_SUCCESS";
    case kInvalidValue:
      return "CUDA_ERROR_INVALID_VALUE";
    case kOutOfMemory:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case kInvalidDevice:
      return "CUDA_ERROR_INVALID_DEVICE";
    case kInvalidContext:
      return "CUDA_ERROR_INVALID_CONTEXT";
    case kInvalidHandle:
      return "CUDA_ERROR_INVALID_HANDLE";
    case kNotFound:
      return "CUDA_ERROR_NOT_FOUND";
    case kNotReady:
      return "CUDA_ERROR_NOT_READY";
    case kNotSupported:
      return "CUDA_ERROR_NOT_SUPPORTED";
    default:
      return nullptr;
  }
}

const char* description_of(CUresult r) {
  switch (r) {
    case kSuccess:
      return "no error";
    case kInvalidValue:
      return "invalid argument";
    case kOutOfMemory:
      return "out of memory (host memory, on the CPU target)";
    case kInvalidDevice:
      return "invalid device ordinal (the CPU target has one device, 0)";
    case kInvalidContext:
      return "invalid device context";
    case kInvalidHandle:
      return "invalid resource handle";
    case kNotFound:
      return "named symbol not found";
    case kNotReady:
      return "device not ready";
    case kNotSupported:
      return "not supported on the CPU target: cujit's host driver runs no GPU code (GPU modules, cuLaunchKernel, "
             "IPC); kernels run on the host through the CPU target's dispatcher";
    default:
      return nullptr;
  }
}

CUresult get_error_name(CUresult r, const char** out) {
  *out = name_of(r);
  return *out ? kSuccess : kInvalidValue;
}

CUresult get_error_string(CUresult r, const char** out) {
  *out = description_of(r);
  return *out ? kSuccess : kInvalidValue;
}

// ---- the device ------------------------------------------------------------

std::size_t page_bytes() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
std::size_t physical_bytes() { return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * page_bytes(); }

// MemAvailable from /proc/meminfo (what the machine can still give), else the free pages.
std::size_t available_bytes() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f) != nullptr)
      found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    std::fclose(f);
    if (found) return static_cast<std::size_t>(kib) * 1024;
  }
  return static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) * page_bytes();
}

CUresult init(unsigned flags) { return flags == 0 ? kSuccess : kInvalidValue; }
CUresult driver_version(int* v) {
  *v = 13000;  // the CUDA version the host driver answers as
  return kSuccess;
}
CUresult device_count(int* n) {
  *n = 1;
  return kSuccess;
}
CUresult device_get(CUdevice* dev, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *dev = 0;
  return kSuccess;
}
CUresult device_name(char* name, int len, CUdevice dev) {
  if (dev != 0) return kInvalidDevice;
  if (len <= 0) return kInvalidValue;
  std::snprintf(name, static_cast<std::size_t>(len), "%s", "cujit CPU target");
  return kSuccess;
}
CUresult device_total_mem(std::size_t* bytes, CUdevice dev) {
  if (dev != 0) return kInvalidDevice;
  *bytes = physical_bytes();
  return kSuccess;
}
CUresult device_uuid(detail::CUuuid* uuid, CUdevice dev) {
  if (dev != 0) return kInvalidDevice;
  static const char tag[16] = {'c', 'u', 'j', 'i', 't', '-', 'c', 'p', 'u', '-', 't', 'a', 'r', 'g', 'e', 't'};
  std::memcpy(uuid->bytes, tag, sizeof tag);
  return kSuccess;
}

// The attributes of a compute capability 9.0 device as the host runtime runs kernels: 1024 threads per
// block, warps of 32, 48 KiB of shared memory per block, one multiprocessor per worker thread; host memory
// is mapped, managed and unified with "device" memory. Attributes not listed read 0, as a driver's unknown
// (but valid) ones do.
int attribute_value(int attr) {
  switch (attr) {
    case 1:
      return 1024;                                     // MAX_THREADS_PER_BLOCK
    case 2:
    case 3:
      return 1024;                             // MAX_BLOCK_DIM_X, _Y
    case 4:
      return 64;                                       // MAX_BLOCK_DIM_Z
    case 5:
      return 2147483647;                               // MAX_GRID_DIM_X
    case 6:
    case 7:
      return 65535;                            // MAX_GRID_DIM_Y, _Z
    case 8:
      return 49152;                                    // MAX_SHARED_MEMORY_PER_BLOCK
    case 9:
      return 65536;                                    // TOTAL_CONSTANT_MEMORY
    case 10:
      return 32;                                      // WARP_SIZE
    case 11:
      return 2147483647;                              // MAX_PITCH
    case 12:
      return 65536;                                   // MAX_REGISTERS_PER_BLOCK
    case 13:
      return 1000000;                                 // CLOCK_RATE (kHz)
    case 14:
      return 512;                                     // TEXTURE_ALIGNMENT
    case 16:
      return static_cast<int>(worker_count());        // MULTIPROCESSOR_COUNT
    case 18:
      return 1;                                       // INTEGRATED: device memory is host memory
    case 19:
      return 1;                                       // CAN_MAP_HOST_MEMORY
    case 31:
      return 1;                                       // CONCURRENT_KERNELS
    case 39:
      return 2048;                                    // MAX_THREADS_PER_MULTIPROCESSOR
    case 41:
      return 1;                                       // UNIFIED_ADDRESSING
    case 75:
      return 9;                                       // COMPUTE_CAPABILITY_MAJOR
    case 76:
      return 0;                                       // COMPUTE_CAPABILITY_MINOR
    case 81:
      return 233472;                                  // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    case 82:
      return 65536;                                   // MAX_REGISTERS_PER_MULTIPROCESSOR
    case 83:
    case 88:
    case 89:
      return 1;                     // MANAGED_MEMORY, PAGEABLE_, CONCURRENT_MANAGED_ACCESS
    case 95:
      return 1;                                       // COOPERATIVE_LAUNCH
    case 97:
      return 232448;                                  // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (as an H100)
    default:
      return 0;
  }
}

CUresult device_attribute(int* v, int attr, CUdevice dev) {
  if (dev != 0) return kInvalidDevice;
  if (attr <= 0 || attr > 200) return kInvalidValue;
  *v = attribute_value(attr);
  return kSuccess;
}

// ---- contexts: the device's primary context, and a stack per thread ----------

int primary_context_object = 0;
CUcontext primary() { return reinterpret_cast<CUcontext>(&primary_context_object); }
thread_local std::vector<CUcontext> context_stack;

CUresult primary_retain(CUcontext* ctx, CUdevice dev) {
  if (dev != 0) return kInvalidDevice;
  *ctx = primary();
  return kSuccess;
}
CUresult ctx_set_current(CUcontext ctx) {
  if (ctx != nullptr && ctx != primary()) return kInvalidContext;
  if (context_stack.empty()) {
    if (ctx != nullptr) context_stack.push_back(ctx);
  } else if (ctx == nullptr) {
    context_stack.pop_back();
  } else {
    context_stack.back() = ctx;
  }
  return kSuccess;
}
CUresult ctx_get_current(CUcontext* ctx) {
  *ctx = context_stack.empty() ? nullptr : context_stack.back();
  return kSuccess;
}
CUresult ctx_get_device(CUdevice* dev) {
  if (context_stack.empty()) return kInvalidContext;
  *dev = 0;
  return kSuccess;
}
CUresult ctx_synchronize() { return context_stack.empty() ? kInvalidContext : kSuccess; }
CUresult ctx_push(CUcontext ctx) {
  if (ctx != primary()) return kInvalidContext;
  context_stack.push_back(ctx);
  return kSuccess;
}
CUresult ctx_pop(CUcontext* ctx) {
  if (context_stack.empty()) return kInvalidContext;
  if (ctx != nullptr) *ctx = context_stack.back();
  context_stack.pop_back();
  return kSuccess;
}

// ---- memory: "device", managed and pinned allocations are host allocations -----

struct Allocations {
  std::mutex mutex;
  std::map<CUdeviceptr, std::size_t> live;  // base -> bytes, every kind
};
Allocations& allocations() {
  static Allocations* a = new Allocations;  // leaked: frees at interpreter exit still find it
  return *a;
}

void* allocate(std::size_t bytes) {
  std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) return nullptr;
  Allocations& a = allocations();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.live[reinterpret_cast<CUdeviceptr>(p)] = bytes;
  return p;
}

CUresult release(CUdeviceptr p) {
  Allocations& a = allocations();
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    if (a.live.erase(p) == 0) return kInvalidValue;
  }
  std::free(reinterpret_cast<void*>(p));
  return kSuccess;
}

CUresult mem_alloc(CUdeviceptr* p, std::size_t bytes) {
  if (bytes == 0) return kInvalidValue;
  void* mem = allocate(bytes);
  if (mem == nullptr) return kOutOfMemory;
  *p = reinterpret_cast<CUdeviceptr>(mem);
  return kSuccess;
}
CUresult mem_free(CUdeviceptr p) { return p == 0 ? kSuccess : release(p); }
CUresult mem_alloc_managed(CUdeviceptr* p, std::size_t bytes, unsigned) { return mem_alloc(p, bytes); }
CUresult host_alloc(void** p, std::size_t bytes, unsigned) {
  if (bytes == 0) return kInvalidValue;
  *p = allocate(bytes);
  return *p == nullptr ? kOutOfMemory : kSuccess;
}
CUresult free_host(void* p) { return release(reinterpret_cast<CUdeviceptr>(p)); }
CUresult host_register(void* p, std::size_t bytes, unsigned) {
  return p == nullptr || bytes == 0 ? kInvalidValue : kSuccess;
}
CUresult host_unregister(void* p) { return p == nullptr ? kInvalidValue : kSuccess; }
CUresult host_device_pointer(CUdeviceptr* d, void* h, unsigned flags) {
  if (flags != 0 || h == nullptr) return kInvalidValue;
  *d = reinterpret_cast<CUdeviceptr>(h);  // one address space: a mapped host pointer is its device pointer
  return kSuccess;
}
CUresult address_range(CUdeviceptr* base, std::size_t* size, CUdeviceptr p) {
  Allocations& a = allocations();
  std::lock_guard<std::mutex> lock(a.mutex);
  auto it = a.live.upper_bound(p);
  if (it == a.live.begin()) return kNotFound;
  --it;
  if (p >= it->first + std::max<std::size_t>(it->second, 1)) return kNotFound;
  if (base != nullptr) *base = it->first;
  if (size != nullptr) *size = it->second;
  return kSuccess;
}
CUresult mem_info(std::size_t* free_bytes, std::size_t* total) {
  *free_bytes = available_bytes();
  *total = physical_bytes();
  return kSuccess;
}

CUresult copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return kSuccess;
  if (dst == nullptr || src == nullptr) return kInvalidValue;
  std::memmove(dst, src, bytes);
  return kSuccess;
}
void* at(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
CUresult htod(CUdeviceptr d, const void* h, std::size_t n) { return copy(at(d), h, n); }
CUresult dtoh(void* h, CUdeviceptr d, std::size_t n) { return copy(h, at(d), n); }
CUresult dtod(CUdeviceptr d, CUdeviceptr s, std::size_t n) { return copy(at(d), at(s), n); }
CUresult htod_async(CUdeviceptr d, const void* h, std::size_t n, CUstream) { return htod(d, h, n); }
CUresult dtoh_async(void* h, CUdeviceptr d, std::size_t n, CUstream) { return dtoh(h, d, n); }
CUresult dtod_async(CUdeviceptr d, CUdeviceptr s, std::size_t n, CUstream) { return dtod(d, s, n); }
CUresult memset8(CUdeviceptr d, unsigned char v, std::size_t n) {
  if (n == 0) return kSuccess;
  if (d == 0) return kInvalidValue;
  std::memset(at(d), v, n);
  return kSuccess;
}
CUresult memset8_async(CUdeviceptr d, unsigned char v, std::size_t n, CUstream) { return memset8(d, v, n); }

// ---- streams: work runs when it is issued, so every stream is always idle ---------

// The streams this driver made, by handle, with their flags: a handle it did not make (an external stream's) is
// never dereferenced.
struct Streams {
  std::mutex mutex;
  std::map<CUstream, unsigned> flags;
  std::uintptr_t next = 0x1000;  // handles are numbers, not addresses
};
Streams& streams() {
  static Streams* s = new Streams;  // leaked: streams destroyed at interpreter exit still find it
  return *s;
}

CUresult stream_create(CUstream* s, unsigned flags) {
  Streams& all = streams();
  std::lock_guard<std::mutex> lock(all.mutex);
  *s = reinterpret_cast<CUstream>(all.next += 16);
  all.flags[*s] = flags;
  return kSuccess;
}
CUresult stream_destroy(CUstream s) {
  Streams& all = streams();
  std::lock_guard<std::mutex> lock(all.mutex);
  return all.flags.erase(s) == 1 ? kSuccess : kInvalidHandle;
}
CUresult stream_idle(CUstream) { return kSuccess; }
CUresult stream_flags(CUstream s, unsigned* flags) {
  Streams& all = streams();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = all.flags.find(s);
  *flags = it == all.flags.end() ? 0 : it->second;  // the default streams and external ones: blocking
  return kSuccess;
}
CUresult stream_wait_event(CUstream, void* event, unsigned) { return event == nullptr ? kInvalidHandle : kSuccess; }

// ---- events: the host's steady clock when recorded ------------------------------

struct HostEvent {
  unsigned flags;
  bool recorded = false;
  std::chrono::steady_clock::time_point when{};
};
HostEvent* event_of(void* e) { return static_cast<HostEvent*>(e); }

CUresult event_create(void** e, unsigned flags) {
  *e = new HostEvent{flags};
  return kSuccess;
}
CUresult event_record(void* e, CUstream) {
  if (e == nullptr) return kInvalidHandle;
  event_of(e)->recorded = true;
  event_of(e)->when = std::chrono::steady_clock::now();
  return kSuccess;
}
CUresult event_destroy(void* e) {
  delete event_of(e);
  return kSuccess;
}
CUresult event_done(void* e) { return e == nullptr ? kInvalidHandle : kSuccess; }
CUresult event_elapsed(float* ms, void* start, void* end) {
  HostEvent *s = event_of(start), *t = event_of(end);
  if (s == nullptr || t == nullptr) return kInvalidHandle;
  if ((s->flags & kEventDisableTiming) || (t->flags & kEventDisableTiming) || !s->recorded || !t->recorded)
    return kInvalidHandle;  // as the driver answers; the runtime's message says which
  *ms = std::chrono::duration<float, std::milli>(t->when - s->when).count();
  return kSuccess;
}

// ---- what needs a GPU: CUDA_ERROR_NOT_SUPPORTED --------------------------------

CUresult module_load(CUmodule*, const void*) { return kNotSupported; }
CUresult module_unload(CUmodule) { return kNotSupported; }
CUresult module_function(CUfunction*, CUmodule, const char*) { return kNotSupported; }
CUresult module_global(CUdeviceptr*, std::size_t*, CUmodule, const char*) { return kNotSupported; }
CUresult func_attribute(int*, int, CUfunction) { return kNotSupported; }
CUresult func_set_attribute(CUfunction, int, int) { return kNotSupported; }
CUresult launch_kernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void**, void**) {
  return kNotSupported;
}
CUresult launch_cooperative(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**) {
  return kNotSupported;
}
CUresult ipc_get(detail::CUipcMemHandle*, CUdeviceptr) { return kNotSupported; }
CUresult ipc_open(CUdeviceptr*, detail::CUipcMemHandle, unsigned) { return kNotSupported; }
CUresult ipc_close(CUdeviceptr) { return kNotSupported; }
CUresult profiler_switch() { return kSuccess; }

DriverApi make_table() {
  DriverApi t;
  t.cuInit = init;
  t.cuDriverGetVersion = driver_version;
  t.cuGetErrorName = get_error_name;
  t.cuGetErrorString = get_error_string;
  t.cuDeviceGetCount = device_count;
  t.cuDeviceGet = device_get;
  t.cuDeviceGetName = device_name;
  t.cuDeviceGetAttribute = device_attribute;
  t.cuDeviceTotalMem = device_total_mem;
  t.cuDeviceGetUuid = device_uuid;
  t.cuDevicePrimaryCtxRetain = primary_retain;
  t.cuCtxSetCurrent = ctx_set_current;
  t.cuCtxGetCurrent = ctx_get_current;
  t.cuCtxGetDevice = ctx_get_device;
  t.cuCtxSynchronize = ctx_synchronize;
  t.cuMemGetInfo = mem_info;
  t.cuMemAlloc = mem_alloc;
  t.cuMemFree = mem_free;
  t.cuMemcpyHtoD = htod;
  t.cuMemcpyDtoH = dtoh;
  t.cuMemcpyDtoD = dtod;
  t.cuMemcpyHtoDAsync = htod_async;
  t.cuMemcpyDtoHAsync = dtoh_async;
  t.cuMemcpyDtoDAsync = dtod_async;
  t.cuMemsetD8 = memset8;
  t.cuMemsetD8Async = memset8_async;
  t.cuStreamCreate = stream_create;
  t.cuStreamDestroy = stream_destroy;
  t.cuStreamSynchronize = stream_idle;
  t.cuStreamQuery = stream_idle;
  t.cuStreamGetFlags = stream_flags;
  t.cuEventCreate = event_create;
  t.cuEventRecord = event_record;
  t.cuEventDestroy = event_destroy;
  t.cuStreamWaitEvent = stream_wait_event;
  t.cuModuleLoadData = module_load;
  t.cuModuleUnload = module_unload;
  t.cuModuleGetFunction = module_function;
  t.cuModuleGetGlobal = module_global;
  t.cuFuncGetAttribute = func_attribute;
  t.cuFuncSetAttribute = func_set_attribute;
  t.cuLaunchKernel = launch_kernel;
  t.cuLaunchCooperativeKernel = launch_cooperative;
  t.cuEventSynchronize = event_done;
  t.cuEventQuery = event_done;
  t.cuEventElapsedTime = event_elapsed;
  t.cuCtxPushCurrent = ctx_push;
  t.cuCtxPopCurrent = ctx_pop;
  t.cuProfilerStart = profiler_switch;
  t.cuProfilerStop = profiler_switch;
  t.cuMemHostAlloc = host_alloc;
  t.cuMemFreeHost = free_host;
  t.cuMemHostRegister = host_register;
  t.cuMemHostUnregister = host_unregister;
  t.cuMemHostGetDevicePointer = host_device_pointer;
  t.cuMemAllocManaged = mem_alloc_managed;
  t.cuMemGetAddressRange = address_range;
  t.cuIpcGetMemHandle = ipc_get;
  t.cuIpcOpenMemHandle = ipc_open;
  t.cuIpcCloseMemHandle = ipc_close;
  return t;  // the library API stays null: the runtime loads through the module API, which says no
}

std::atomic<bool> installed{false};

}  // namespace

void install_host_driver() {
  static const DriverApi* table = new DriverApi(make_table());  // leaked: frees at exit still call it
  driver::detail::use_table(table);
  installed = true;
}

bool host_driver_installed() { return installed.load(); }

}  // namespace cujit::hostrt
