// The calling thread's context stack (cujit/context_stack.h): push and pop for
// `with cuda.gpus[n]:`, pop-all for cuda.close(), and the ScopedCurrent guard.
#include "cujit/context_stack.h"

#include "driver_api.h"

namespace cujit::driver {
namespace {

const detail::DriverApi& stack_api() {
  const detail::DriverApi& a = detail::api();
  if (a.cuCtxPushCurrent == nullptr || a.cuCtxPopCurrent == nullptr)
    throw DriverError(DriverErrorKind::Support,
                      "the CUDA driver lacks cuCtxPushCurrent_v2/cuCtxPopCurrent_v2: it is too old for cujit");
  return a;
}

}  // namespace

void push_context(const Context& ctx) { detail::check(stack_api().cuCtxPushCurrent(ctx.handle()), "cuCtxPushCurrent"); }

CUcontext pop_context() {
  const detail::DriverApi& a = stack_api();
  if (current_context_handle() == nullptr) return nullptr;
  CUcontext popped = nullptr;
  detail::check(a.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  return popped;
}

int pop_all_contexts() {
  // Bounded: a driver that kept answering with a context would otherwise spin here forever.
  constexpr int kMaxDepth = 1 << 16;
  int popped = 0;
  while (popped < kMaxDepth && pop_context() != nullptr) ++popped;
  return popped;
}

ScopedCurrent::ScopedCurrent(const Context& ctx) {
  const detail::DriverApi& a = detail::api();
  detail::check(a.cuCtxGetCurrent(&previous_), "cuCtxGetCurrent");
  if (previous_ == ctx.handle()) return;
  detail::check(a.cuCtxSetCurrent(ctx.handle()), "cuCtxSetCurrent");
  switched_ = true;
}

ScopedCurrent::~ScopedCurrent() {
  // Setting null pops the context this guard pushed onto an empty stack. Errors here have no one to go to.
  if (switched_)
    if (const detail::DriverApi* a = detail::api_if_loaded()) a->cuCtxSetCurrent(previous_);
}

}  // namespace cujit::driver
