// Devices and contexts: device properties read once, primary contexts
// retained once per device and made current per thread, contexts made by
// other libraries recognised, and each context's deferred free list.
#include <cstdio>
#include <memory>

#include "cujit/context_stack.h"
#include "cujit/memory.h"
#include "driver_api.h"

namespace cujit::driver {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<int, std::unique_ptr<DeviceInfo>> devices;
  std::map<int, std::unique_ptr<Context>> primary;      // by device ordinal
  std::map<CUcontext, Context*> by_handle;              // every context cujit knows
  std::vector<std::unique_ptr<Context>> foreign;        // made current by other code
};

// Leaked on purpose (see driver_api.cpp): frees during shutdown use it.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void check_ordinal(int ordinal) {
  int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    throw DriverError(DriverErrorKind::Argument, "device " + std::to_string(ordinal) +
                                                     " does not exist: " + std::to_string(count) + " CUDA device" +
                                                     (count == 1 ? " is" : "s are") + " visible");
}

std::string format_uuid(const unsigned char* b) {
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::unique_ptr<DeviceInfo> read_device(int ordinal) {
  const detail::DriverApi& a = detail::api();
  CUdevice dev = 0;
  detail::check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  auto info = std::make_unique<DeviceInfo>();
  info->id = ordinal;
  char name[256] = {0};
  detail::check(a.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  info->name = name;
  if (a.cuDeviceGetUuid != nullptr) {
    detail::CUuuid uuid{};
    if (a.cuDeviceGetUuid(&uuid, dev) == detail::CUDA_SUCCESS) info->uuid = format_uuid(uuid.bytes);
  }
  detail::check(a.cuDeviceTotalMem(&info->total_memory, dev), "cuDeviceTotalMem");
  auto attr = [&](int which) {
    int value = 0;
    detail::check(a.cuDeviceGetAttribute(&value, which, dev), "cuDeviceGetAttribute");
    return value;
  };
  namespace A = device_attr;
  info->cc_major = attr(A::ComputeCapabilityMajor);
  info->cc_minor = attr(A::ComputeCapabilityMinor);
  info->pci_domain_id = attr(A::PciDomainId);
  info->pci_bus_id = attr(A::PciBusId);
  info->pci_device_id = attr(A::PciDeviceId);
  info->multiprocessor_count = attr(A::MultiprocessorCount);
  info->warp_size = attr(A::WarpSize);
  info->max_threads_per_block = attr(A::MaxThreadsPerBlock);
  info->max_block_dim = {attr(A::MaxBlockDimX), attr(A::MaxBlockDimY), attr(A::MaxBlockDimZ)};
  info->max_grid_dim = {attr(A::MaxGridDimX), attr(A::MaxGridDimY), attr(A::MaxGridDimZ)};
  info->max_shared_memory_per_block = attr(A::MaxSharedMemoryPerBlock);
  info->max_shared_memory_per_block_optin = attr(A::MaxSharedMemoryPerBlockOptin);
  if (info->max_shared_memory_per_block_optin < info->max_shared_memory_per_block)
    info->max_shared_memory_per_block_optin = info->max_shared_memory_per_block;
  info->cooperative_launch = attr(A::CooperativeLaunch) != 0;
  return info;
}

}  // namespace

int device_count() {
  ensure_driver();
  if (const detail::DriverApi* table = detail::table_override()) {  // the CPU target's host driver
    int count = 0;
    detail::check(table->cuDeviceGetCount(&count), "cuDeviceGetCount");
    return count;
  }
  return driver_status().device_count;
}

const DeviceInfo& device_info(int ordinal) {
  check_ordinal(ordinal);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.devices[ordinal];
  if (!slot) slot = read_device(ordinal);
  return *slot;
}

int device_attribute(int ordinal, int attribute) {
  check_ordinal(ordinal);
  const detail::DriverApi& a = detail::api();
  CUdevice dev = 0;
  detail::check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  int value = 0;
  detail::check(a.cuDeviceGetAttribute(&value, attribute, dev), "cuDeviceGetAttribute");
  return value;
}

// ---- Context --------------------------------------------------------------

Context::Context(CUcontext handle, int device_id, bool primary)
    : handle_(handle), device_id_(device_id), primary_(primary) {}

void Context::make_current() const { detail::check(detail::api().cuCtxSetCurrent(handle_), "cuCtxSetCurrent"); }

void Context::synchronize() {
  ScopedCurrent current(*this);  // the thread keeps its own context
  detail::check(detail::api().cuCtxSynchronize(), "cuCtxSynchronize");
  flush_deferred();
}

std::pair<std::size_t, std::size_t> Context::memory_info() {
  ScopedCurrent current(*this);
  std::size_t free_bytes = 0, total = 0;
  detail::check(detail::api().cuMemGetInfo(&free_bytes, &total), "cuMemGetInfo");
  return {free_bytes, total};
}

void Context::reset() {
  module_loader().unload_context(*this);
  flush_deferred();
}

void Context::defer_free(CUdeviceptr ptr, std::size_t bytes) {
  if (ptr == 0) return;
  bool flush = false;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    pending_.push_back(ptr);
    pending_bytes_ += bytes;
    double limit = kMaxPendingFraction * static_cast<double>(device().total_memory);
    flush = pending_.size() > kMaxPending || static_cast<double>(pending_bytes_) > limit;
  }
  if (flush) flush_deferred();
}

void Context::flush_deferred() {
  if (cleanup_paused(*this)) return;  // numba's defer_cleanup(): frees wait for the pause to end (memory.h)
  std::vector<CUdeviceptr> batch;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    batch.swap(pending_);
    pending_bytes_ = 0;
  }
  if (batch.empty()) return;
  const detail::DriverApi* a = detail::api_if_loaded();
  if (a == nullptr) return;
  // Frees run in whatever thread dropped the last reference: put this
  // context in for them and give the thread its own context back.
  CUcontext previous = nullptr;
  if (a->cuCtxGetCurrent(&previous) != detail::CUDA_SUCCESS) return;  // driver shut down: the process is exiting
  if (previous != handle_ && a->cuCtxSetCurrent(handle_) != detail::CUDA_SUCCESS) return;
  for (CUdeviceptr p : batch) a->cuMemFree(p);  // errors here have no one to go to; the memory is gone either way
  if (previous != handle_) a->cuCtxSetCurrent(previous);
}

std::size_t Context::pending_frees() const {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  return pending_.size();
}

Context& primary_context(int ordinal) {
  check_ordinal(ordinal);
  const detail::DriverApi& a = detail::api();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.primary[ordinal];
  if (!slot) {
    CUdevice dev = 0;
    detail::check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    CUcontext handle = nullptr;
    detail::check(a.cuDevicePrimaryCtxRetain(&handle, dev), "cuDevicePrimaryCtxRetain");
    slot = std::make_unique<Context>(handle, ordinal, true);
    r.by_handle[handle] = slot.get();
  }
  return *slot;
}

Context* current_context_or_null() {
  const detail::DriverApi* a = detail::api_if_loaded();
  if (a == nullptr) return nullptr;
  CUcontext current = nullptr;
  if (a->cuCtxGetCurrent(&current) != detail::CUDA_SUCCESS || current == nullptr) return nullptr;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.by_handle.find(current);
    if (it != r.by_handle.end()) return it->second;
  }
  CUdevice dev = 0;
  detail::check(a->cuCtxGetDevice(&dev), "cuCtxGetDevice");
  // Another library made a context current. If it is the primary context we
  // would retain anyway, record it as that; otherwise as a foreign context.
  int ordinal = static_cast<int>(dev);
  Context& primary = primary_context(ordinal);
  if (primary.handle() == current) return &primary;
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_handle.find(current);
  if (it != r.by_handle.end()) return it->second;
  r.foreign.push_back(std::make_unique<Context>(current, ordinal, false));
  r.by_handle[current] = r.foreign.back().get();
  return r.foreign.back().get();
}

CUcontext current_context_handle() {
  CUcontext current = nullptr;
  detail::check(detail::api().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  return current;
}

Context& current_context() {
  ensure_driver();
  if (Context* ctx = current_context_or_null()) return *ctx;
  Context& ctx = primary_context(0);
  ctx.make_current();
  return ctx;
}

std::vector<Context*> known_contexts() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<Context*> out;
  for (const auto& [handle, ctx] : r.by_handle) out.push_back(ctx);
  return out;
}

Context& select_device(int ordinal) {
  Context& ctx = primary_context(ordinal);
  ctx.make_current();
  return ctx;
}

}  // namespace cujit::driver
