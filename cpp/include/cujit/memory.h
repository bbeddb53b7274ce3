// Memory beyond plain device allocations (driver.h has those): page-locked host memory (allocated, or user
// memory registered), mapped into the device's address space when asked; managed memory; CUDA IPC (a device
// allocation exported to, or opened from, another process); and numba's defer_cleanup, a per-context pause of
// deferred frees. The Python memory managers (python/cujit/cudadrv/memory_managers.py) are built on these.
//
// Objects here free their memory when released or destroyed, whichever comes first; host frees and managed
// frees wait while the context's cleanup is paused, as device frees do. Registrations are lifted at once
// (pinning the same memory again must work right after, as numba's cuda.pinned does).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>

#include "cujit/driver.h"

namespace cujit::driver {

// cuMemHostAlloc'd page-locked memory. `device_ptr` is its address on the device when mapped, else 0.
class HostAllocation {
 public:
  static std::shared_ptr<HostAllocation> allocate(Context& ctx, std::size_t bytes, bool mapped, bool portable,
                                                  bool write_combined);
  ~HostAllocation();
  HostAllocation(const HostAllocation&) = delete;
  HostAllocation& operator=(const HostAllocation&) = delete;

  void* host_ptr() const { return host_; }
  CUdeviceptr device_ptr() const { return device_; }
  std::size_t size() const { return size_; }
  bool mapped() const { return mapped_; }
  Context& context() const { return *ctx_; }
  void release();  // frees now (or when the context's cleanup pause ends); idempotent

 private:
  HostAllocation(Context* ctx, void* host, CUdeviceptr device, std::size_t size, bool mapped)
      : ctx_(ctx), host_(host), device_(device), size_(size), mapped_(mapped) {}
  Context* ctx_;
  void* host_;
  CUdeviceptr device_;
  std::size_t size_;
  bool mapped_;
  std::once_flag released_;
};

// Existing host memory page-locked with cuMemHostRegister (the caller keeps it alive); lifted on release.
class HostRegistration {
 public:
  static std::shared_ptr<HostRegistration> register_memory(Context& ctx, void* ptr, std::size_t bytes, bool mapped,
                                                           bool portable);
  ~HostRegistration();
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  void* host_ptr() const { return host_; }
  CUdeviceptr device_ptr() const { return device_; }
  std::size_t size() const { return size_; }
  bool mapped() const { return mapped_; }
  Context& context() const { return *ctx_; }
  void release();  // cuMemHostUnregister now; idempotent

 private:
  HostRegistration(Context* ctx, void* host, CUdeviceptr device, std::size_t size, bool mapped)
      : ctx_(ctx), host_(host), device_(device), size_(size), mapped_(mapped) {}
  Context* ctx_;
  void* host_;
  CUdeviceptr device_;
  std::size_t size_;
  bool mapped_;
  std::once_flag released_;
};

// cuMemAllocManaged memory: one address for host and device. Freed through the context's deferred list.
class ManagedAllocation {
 public:
  // attach_global: reachable from any stream (CU_MEM_ATTACH_GLOBAL), else attached to the host.
  static std::shared_ptr<ManagedAllocation> allocate(Context& ctx, std::size_t bytes, bool attach_global);
  ~ManagedAllocation();
  ManagedAllocation(const ManagedAllocation&) = delete;
  ManagedAllocation& operator=(const ManagedAllocation&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return size_; }
  Context& context() const { return *ctx_; }
  void release();

 private:
  ManagedAllocation(Context* ctx, CUdeviceptr ptr, std::size_t size) : ctx_(ctx), ptr_(ptr), size_(size) {}
  Context* ctx_;
  CUdeviceptr ptr_;
  std::size_t size_;
  std::once_flag released_;
};

// The device address of mapped page-locked host memory (cuMemHostGetDevicePointer).
CUdeviceptr host_device_pointer(Context& ctx, const void* host);
// (base, size) of the device allocation that contains `ptr` (cuMemGetAddressRange).
std::pair<CUdeviceptr, std::size_t> address_range(Context& ctx, CUdeviceptr ptr);

// ---- IPC ------------------------------------------------------------------

using IpcHandleBytes = std::array<unsigned char, 64>;  // a CUipcMemHandle

// The handle another process opens to reach the allocation that starts at `base`.
IpcHandleBytes ipc_handle(Context& ctx, CUdeviceptr base);

// An allocation of another process, opened in `ctx` (cuIpcOpenMemHandle with lazy peer access); closed by
// close() or on destruction.
class IpcMapping {
 public:
  static std::shared_ptr<IpcMapping> open(Context& ctx, const IpcHandleBytes& handle);
  ~IpcMapping();
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  Context& context() const { return *ctx_; }
  bool is_open() const;
  void close();  // DriverError{Argument} when already closed

 private:
  IpcMapping(Context* ctx, CUdeviceptr ptr) : ctx_(ctx), ptr_(ptr) {}
  Context* ctx_;
  CUdeviceptr ptr_;
  mutable std::mutex mutex_;
  bool open_ = true;
};

// ---- numba's defer_cleanup ------------------------------------------------

// While a context's cleanup is paused (pauses nest), its deferred device frees, managed frees and host frees
// wait; the last resume frees what waited beyond the usual batch limits.
void pause_cleanup(Context& ctx);
void resume_cleanup(Context& ctx);
bool cleanup_paused(const Context& ctx);

}  // namespace cujit::driver
