// CUDA IPC: the handle that exports a device allocation to another process, and the mapping that opens one
// (see cujit/memory.h).
#include <cstring>

#include "cujit/memory.h"
#include "driver_api.h"

namespace cujit::driver {
namespace {

constexpr unsigned kLazyEnablePeerAccess = 1;  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS

template <typename Fn>
Fn require(Fn fn, const char* name) {
  if (fn == nullptr)
    throw DriverError(DriverErrorKind::Support,
                      std::string("the CUDA driver library lacks ") + name + " (CUDA IPC needs it)");
  return fn;
}

}  // namespace

IpcHandleBytes ipc_handle(Context& ctx, CUdeviceptr base) {
  const detail::DriverApi& a = detail::api();
  auto get = require(a.cuIpcGetMemHandle, "cuIpcGetMemHandle");
  detail::ensure_current(ctx);
  detail::CUipcMemHandle handle{};
  detail::check(get(&handle, base), "cuIpcGetMemHandle");
  IpcHandleBytes out{};
  std::memcpy(out.data(), handle.reserved, out.size());
  return out;
}

std::shared_ptr<IpcMapping> IpcMapping::open(Context& ctx, const IpcHandleBytes& handle) {
  const detail::DriverApi& a = detail::api();
  auto open_handle = require(a.cuIpcOpenMemHandle, "cuIpcOpenMemHandle");
  require(a.cuIpcCloseMemHandle, "cuIpcCloseMemHandle");
  detail::ensure_current(ctx);
  detail::CUipcMemHandle raw{};
  std::memcpy(raw.reserved, handle.data(), handle.size());
  CUdeviceptr ptr = 0;
  detail::check(open_handle(&ptr, raw, kLazyEnablePeerAccess), "cuIpcOpenMemHandle");
  return std::shared_ptr<IpcMapping>(new IpcMapping(&ctx, ptr));
}

bool IpcMapping::is_open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

void IpcMapping::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw DriverError(DriverErrorKind::Argument, "the IPC memory handle is already closed");
    open_ = false;
  }
  const detail::DriverApi& a = detail::api();
  detail::ensure_current(*ctx_);
  detail::check(a.cuIpcCloseMemHandle(ptr_), "cuIpcCloseMemHandle");
}

IpcMapping::~IpcMapping() {
  if (!open_) return;
  const detail::DriverApi* a = detail::api_if_loaded();
  if (a == nullptr) return;
  CUcontext previous = nullptr;
  if (a->cuCtxGetCurrent(&previous) != detail::CUDA_SUCCESS) return;  // driver shut down: the process is exiting
  if (previous != ctx_->handle() && a->cuCtxSetCurrent(ctx_->handle()) != detail::CUDA_SUCCESS) return;
  a->cuIpcCloseMemHandle(ptr_);
  if (previous != ctx_->handle()) a->cuCtxSetCurrent(previous);
}

}  // namespace cujit::driver
