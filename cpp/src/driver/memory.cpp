// Device memory: allocations returned to their context's deferred free list,
// synchronous and stream-ordered copies, memset; and streams.
#include <optional>

#include "cujit/context_stack.h"
#include "driver_api.h"

namespace cujit::driver {

std::shared_ptr<DeviceAllocation> DeviceAllocation::allocate(Context& ctx, std::size_t bytes) {
  if (bytes == 0) return std::shared_ptr<DeviceAllocation>(new DeviceAllocation(&ctx, 0, 0));
  const detail::DriverApi& a = detail::api();
  detail::ensure_current(ctx);
  CUdeviceptr ptr = 0;
  CUresult rc = a.cuMemAlloc(&ptr, bytes);
  if (rc == detail::CUDA_ERROR_OUT_OF_MEMORY && ctx.pending_frees() > 0) {
    ctx.flush_deferred();  // memory that is only waiting to be freed counts as free
    rc = a.cuMemAlloc(&ptr, bytes);
  }
  if (rc != detail::CUDA_SUCCESS) {
    try {
      detail::check(rc, "cuMemAlloc");
    } catch (DriverError& e) {
      throw DriverError(e.kind(), std::string(e.what()) + " (allocating " + std::to_string(bytes) + " bytes)", e.code(),
                        e.code_name(), e.call());
    }
  }
  return std::shared_ptr<DeviceAllocation>(new DeviceAllocation(&ctx, ptr, bytes));
}

DeviceAllocation::~DeviceAllocation() {
  try {
    ctx_->defer_free(ptr_, size_);
  } catch (...) {
    // A destructor has no one to report to; the driver reclaims the memory at exit.
  }
}

namespace {

CUstream handle_of(const Stream* stream) { return stream ? stream->handle() : nullptr; }

}  // namespace

void copy_host_to_device(Context& ctx, CUdeviceptr dst, const void* src, std::size_t bytes, const Stream* stream) {
  if (bytes == 0) return;
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(ctx);  // the thread keeps its own context (an array of another device)
  if (stream == nullptr)
    detail::check(a.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  else
    detail::check(a.cuMemcpyHtoDAsync(dst, src, bytes, handle_of(stream)), "cuMemcpyHtoDAsync");
}

void copy_device_to_host(Context& ctx, void* dst, CUdeviceptr src, std::size_t bytes, const Stream* stream) {
  if (bytes == 0) return;
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(ctx);  // the thread keeps its own context (an array of another device)
  if (stream == nullptr)
    detail::check(a.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  else
    detail::check(a.cuMemcpyDtoHAsync(dst, src, bytes, handle_of(stream)), "cuMemcpyDtoHAsync");
}

void copy_device_to_device(Context& ctx, CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, const Stream* stream) {
  if (bytes == 0) return;
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(ctx);  // the thread keeps its own context (an array of another device)
  if (stream == nullptr)
    detail::check(a.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
  else
    detail::check(a.cuMemcpyDtoDAsync(dst, src, bytes, handle_of(stream)), "cuMemcpyDtoDAsync");
}

void memset_d8(Context& ctx, CUdeviceptr dst, unsigned char value, std::size_t bytes, const Stream* stream) {
  if (bytes == 0) return;
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(ctx);  // the thread keeps its own context (an array of another device)
  if (stream == nullptr)
    detail::check(a.cuMemsetD8(dst, value, bytes), "cuMemsetD8");
  else
    detail::check(a.cuMemsetD8Async(dst, value, bytes, handle_of(stream)), "cuMemsetD8Async");
}

// ---- streams --------------------------------------------------------------

std::shared_ptr<Stream> Stream::create(Context& ctx, bool non_blocking) {
  const detail::DriverApi& a = detail::api();
  detail::ensure_current(ctx);
  CUstream handle = nullptr;
  detail::check(a.cuStreamCreate(&handle, non_blocking ? 1u : 0u), "cuStreamCreate");
  return std::shared_ptr<Stream>(new Stream(&ctx, handle, true));
}

std::shared_ptr<Stream> Stream::wrap(Context* ctx, std::uintptr_t handle) {
  return std::shared_ptr<Stream>(new Stream(ctx, reinterpret_cast<CUstream>(handle), false));
}

Stream::~Stream() {
  if (!owned_) return;
  // cuStreamDestroy returns at once; the driver releases the stream when its work is done.
  if (const detail::DriverApi* a = detail::api_if_loaded()) a->cuStreamDestroy(handle_);
}

namespace {
// The stream's context current for `guard`'s life (the thread's own comes back after); a wrapped stream may
// have no known context: any current one will do.
void make_stream_context_current(Context* ctx, std::optional<ScopedCurrent>& guard) {
  if (ctx != nullptr)
    guard.emplace(*ctx);
  else
    current_context();
}
}  // namespace

void Stream::synchronize() const {
  const detail::DriverApi& a = detail::api();
  std::optional<ScopedCurrent> current;
  make_stream_context_current(ctx_, current);
  detail::check(a.cuStreamSynchronize(handle_), "cuStreamSynchronize");
}

void order_after(CUstream consumer, std::uintptr_t producer) {
  const auto to = consumer == nullptr ? Stream::kLegacy : reinterpret_cast<std::uintptr_t>(consumer);
  if (to == producer) return;
  const detail::DriverApi& a = detail::api();
  auto blocking = [&](std::uintptr_t s) {
    if (s == Stream::kLegacy || s == Stream::kPerThread) return true;
    unsigned flags = 0;
    constexpr unsigned kNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
    return a.cuStreamGetFlags != nullptr &&
           a.cuStreamGetFlags(reinterpret_cast<CUstream>(s), &flags) == detail::CUDA_SUCCESS &&
           (flags & kNonBlocking) == 0;
  };
  // The legacy default stream waits for, and is waited on by, every blocking stream of the context.
  if ((to == Stream::kLegacy && blocking(producer)) || (producer == Stream::kLegacy && blocking(to))) return;
  auto from = reinterpret_cast<CUstream>(producer);
  if (a.cuEventCreate == nullptr || a.cuEventRecord == nullptr || a.cuStreamWaitEvent == nullptr ||
      a.cuEventDestroy == nullptr) {
    detail::check(a.cuStreamSynchronize(from), "cuStreamSynchronize");
    return;
  }
  void* event = nullptr;
  constexpr unsigned kDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING
  detail::check(a.cuEventCreate(&event, kDisableTiming), "cuEventCreate");
  CUresult rc = a.cuEventRecord(event, from);
  const char* call = "cuEventRecord";
  if (rc == detail::CUDA_SUCCESS) {
    rc = a.cuStreamWaitEvent(reinterpret_cast<CUstream>(to), event, 0);
    call = "cuStreamWaitEvent";
  }
  a.cuEventDestroy(event);  // the wait keeps what it needs; the event is released once it has fired
  detail::check(rc, call);
}

bool Stream::query() const {
  const detail::DriverApi& a = detail::api();
  std::optional<ScopedCurrent> current;
  make_stream_context_current(ctx_, current);
  CUresult rc = a.cuStreamQuery(handle_);
  if (rc == detail::CUDA_ERROR_NOT_READY) return false;
  detail::check(rc, "cuStreamQuery");
  return true;
}

}  // namespace cujit::driver
