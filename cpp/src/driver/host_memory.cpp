// Page-locked host memory (allocated or registered), managed memory, and the per-context pause of deferred
// frees that numba's defer_cleanup() is (see cujit/memory.h).
#include <map>
#include <vector>

#include "cujit/memory.h"
#include "driver_api.h"

namespace cujit::driver {
namespace {

// cuda.h's flag values.
constexpr unsigned kHostAllocPortable = 1, kHostAllocDeviceMap = 2, kHostAllocWriteCombined = 4;
constexpr unsigned kHostRegisterPortable = 1, kHostRegisterDeviceMap = 2;
constexpr unsigned kAttachGlobal = 1, kAttachHost = 2;

template <typename Fn>
Fn require(Fn fn, const char* name) {
  if (fn == nullptr)
    throw DriverError(DriverErrorKind::Support,
                      std::string("the CUDA driver library lacks ") + name + " (the NVIDIA driver is too old)");
  return fn;
}

// Adds what was being allocated to an out-of-memory (or other) failure of `call`.
void check_allocation(CUresult rc, const char* call, std::size_t bytes) {
  try {
    detail::check(rc, call);
  } catch (DriverError& e) {
    throw DriverError(e.kind(), std::string(e.what()) + " (allocating " + std::to_string(bytes) + " bytes)", e.code(),
                      e.code_name(), e.call());
  }
}

// Retries an allocation once after freeing what only waits to be freed (numba's _attempt_allocation).
template <typename Alloc>
CUresult allocate_retrying(Context& ctx, Alloc&& alloc) {
  CUresult rc = alloc();
  if (rc == detail::CUDA_ERROR_OUT_OF_MEMORY && ctx.pending_frees() > 0) {
    ctx.flush_deferred();
    rc = alloc();
  }
  return rc;
}

// ---- the cleanup pause --------------------------------------------------------

struct PauseState {
  int depth = 0;
  std::vector<void*> host_frees;  // cuMemFreeHost calls that wait for the pause to end
};

struct Pauses {
  std::mutex mutex;
  std::map<const Context*, PauseState> by_context;
};

Pauses& pauses() {
  static Pauses* p = new Pauses;  // leaked: frees during interpreter shutdown may still ask
  return *p;
}

// Runs `call` with `ctx` current, then gives the thread its own context back (frees run in whatever thread
// dropped the last reference). Errors have no one to go to: the memory is gone either way.
template <typename Call>
void in_context(const Context& ctx, Call&& call) {
  const detail::DriverApi* a = detail::api_if_loaded();
  if (a == nullptr) return;
  CUcontext previous = nullptr;
  if (a->cuCtxGetCurrent(&previous) != detail::CUDA_SUCCESS) return;  // driver shut down: the process is exiting
  if (previous != ctx.handle() && a->cuCtxSetCurrent(ctx.handle()) != detail::CUDA_SUCCESS) return;
  call(*a);
  if (previous != ctx.handle()) a->cuCtxSetCurrent(previous);
}

void free_host_now(const Context& ctx, const std::vector<void*>& hosts) {
  in_context(ctx, [&](const detail::DriverApi& a) {
    for (void* host : hosts) a.cuMemFreeHost(host);
  });
}

// Frees `host` now, or queues it while the context's cleanup is paused.
void free_host(Context& ctx, void* host) {
  {
    Pauses& p = pauses();
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.by_context.find(&ctx);
    if (it != p.by_context.end() && it->second.depth > 0) {
      it->second.host_frees.push_back(host);
      return;
    }
  }
  free_host_now(ctx, {host});
}

}  // namespace

void pause_cleanup(Context& ctx) {
  Pauses& p = pauses();
  std::lock_guard<std::mutex> lock(p.mutex);
  ++p.by_context[&ctx].depth;
}

void resume_cleanup(Context& ctx) {
  std::vector<void*> waiting;
  {
    Pauses& p = pauses();
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.by_context.find(&ctx);
    if (it == p.by_context.end() || it->second.depth == 0)
      throw DriverError(DriverErrorKind::Argument, "resume_cleanup without a matching pause_cleanup");
    if (--it->second.depth > 0) return;
    waiting.swap(it->second.host_frees);
  }
  if (!waiting.empty()) free_host_now(ctx, waiting);
  if (ctx.pending_frees() > Context::kMaxPending) ctx.flush_deferred();
}

bool cleanup_paused(const Context& ctx) {
  Pauses& p = pauses();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.by_context.find(&ctx);
  return it != p.by_context.end() && it->second.depth > 0;
}

// ---- page-locked host memory ----------------------------------------------------

std::shared_ptr<HostAllocation> HostAllocation::allocate(Context& ctx, std::size_t bytes, bool mapped, bool portable,
                                                         bool write_combined) {
  if (bytes == 0) return std::shared_ptr<HostAllocation>(new HostAllocation(&ctx, nullptr, 0, 0, mapped));
  const detail::DriverApi& a = detail::api();
  auto host_alloc = require(a.cuMemHostAlloc, "cuMemHostAlloc");
  require(a.cuMemFreeHost, "cuMemFreeHost");
  detail::ensure_current(ctx);
  unsigned flags = (mapped ? kHostAllocDeviceMap : 0) | (portable ? kHostAllocPortable : 0) |
                   (write_combined ? kHostAllocWriteCombined : 0);
  void* host = nullptr;
  check_allocation(allocate_retrying(ctx, [&] { return host_alloc(&host, bytes, flags); }), "cuMemHostAlloc", bytes);
  CUdeviceptr device = 0;
  if (mapped) {
    try {
      device = host_device_pointer(ctx, host);
    } catch (...) {
      a.cuMemFreeHost(host);
      throw;
    }
  }
  return std::shared_ptr<HostAllocation>(new HostAllocation(&ctx, host, device, bytes, mapped));
}

void HostAllocation::release() {
  std::call_once(released_, [this] {
    if (host_ != nullptr) free_host(*ctx_, host_);
  });
}

HostAllocation::~HostAllocation() {
  try {
    release();
  } catch (...) {
    // A destructor has no one to report to; the driver reclaims the memory at exit.
  }
}

std::shared_ptr<HostRegistration> HostRegistration::register_memory(Context& ctx, void* ptr, std::size_t bytes,
                                                                    bool mapped, bool portable) {
  if (bytes == 0) return std::shared_ptr<HostRegistration>(new HostRegistration(&ctx, nullptr, 0, 0, mapped));
  if (ptr == nullptr) throw DriverError(DriverErrorKind::Argument, "cannot pin memory at address 0");
  const detail::DriverApi& a = detail::api();
  auto host_register = require(a.cuMemHostRegister, "cuMemHostRegister");
  require(a.cuMemHostUnregister, "cuMemHostUnregister");
  detail::ensure_current(ctx);
  unsigned flags = (mapped ? kHostRegisterDeviceMap : 0) | (portable ? kHostRegisterPortable : 0);
  check_allocation(allocate_retrying(ctx, [&] { return host_register(ptr, bytes, flags); }), "cuMemHostRegister",
                   bytes);
  CUdeviceptr device = 0;
  if (mapped) {
    try {
      device = host_device_pointer(ctx, ptr);
    } catch (...) {
      a.cuMemHostUnregister(ptr);
      throw;
    }
  }
  return std::shared_ptr<HostRegistration>(new HostRegistration(&ctx, ptr, device, bytes, mapped));
}

void HostRegistration::release() {
  std::call_once(released_, [this] {
    if (host_ == nullptr) return;
    // At once, not deferred: pinning the same memory again must work (numba does the same).
    in_context(*ctx_, [this](const detail::DriverApi& a) { a.cuMemHostUnregister(host_); });
  });
}

HostRegistration::~HostRegistration() {
  try {
    release();
  } catch (...) {
  }
}

CUdeviceptr host_device_pointer(Context& ctx, const void* host) {
  const detail::DriverApi& a = detail::api();
  auto get = require(a.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer");
  detail::ensure_current(ctx);
  CUdeviceptr device = 0;
  detail::check(get(&device, const_cast<void*>(host), 0), "cuMemHostGetDevicePointer");
  return device;
}

std::pair<CUdeviceptr, std::size_t> address_range(Context& ctx, CUdeviceptr ptr) {
  const detail::DriverApi& a = detail::api();
  auto range = require(a.cuMemGetAddressRange, "cuMemGetAddressRange");
  detail::ensure_current(ctx);
  CUdeviceptr base = 0;
  std::size_t size = 0;
  detail::check(range(&base, &size, ptr), "cuMemGetAddressRange");
  return {base, size};
}

// ---- managed memory -----------------------------------------------------------

std::shared_ptr<ManagedAllocation> ManagedAllocation::allocate(Context& ctx, std::size_t bytes, bool attach_global) {
  if (bytes == 0) return std::shared_ptr<ManagedAllocation>(new ManagedAllocation(&ctx, 0, 0));
  const detail::DriverApi& a = detail::api();
  auto alloc_managed = require(a.cuMemAllocManaged, "cuMemAllocManaged");
  detail::ensure_current(ctx);
  CUdeviceptr ptr = 0;
  unsigned flags = attach_global ? kAttachGlobal : kAttachHost;
  check_allocation(allocate_retrying(ctx, [&] { return alloc_managed(&ptr, bytes, flags); }), "cuMemAllocManaged",
                   bytes);
  return std::shared_ptr<ManagedAllocation>(new ManagedAllocation(&ctx, ptr, bytes));
}

void ManagedAllocation::release() {
  std::call_once(released_, [this] { ctx_->defer_free(ptr_, size_); });
}

ManagedAllocation::~ManagedAllocation() {
  try {
    release();
  } catch (...) {
  }
}

}  // namespace cujit::driver
