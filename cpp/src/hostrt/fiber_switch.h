// Internal to hostrt/: switching between fibers. On x86-64 a switch saves the
// callee-saved registers on the running stack and loads the other fiber's (a few nanoseconds, no system call);
// elsewhere it is ucontext's swapcontext, which also saves the signal mask (a system call each way;
// -DCUJIT_FIBER_UCONTEXT picks it on x86-64 too, to test it). A block's threads switch at every barrier, so this is the
// runtime's hottest path.
#pragma once

#include <cstddef>

#if !defined(__x86_64__) || defined(CUJIT_FIBER_UCONTEXT)
#include <ucontext.h>
#endif

namespace cujit::hostrt::detail {

using FiberFunction = void (*)(void* arg);

struct FiberContext {
#if defined(__x86_64__) && !defined(CUJIT_FIBER_UCONTEXT)
  void* sp = nullptr;  // the saved stack pointer (the registers lie above it)
#else
  ucontext_t uc{};
  FiberFunction fn = nullptr;
  void* arg = nullptr;
#endif
};

// Prepares `context` to call fn(arg) on the stack [stack, stack + bytes) when first switched to. fn must never
// return: it ends by switching away for good.
void fiber_prepare(FiberContext& context, char* stack, std::size_t bytes, FiberFunction fn, void* arg);

// Saves the running context in `from` and resumes `to`; returns when something switches back to `from`.
void fiber_switch(FiberContext& from, FiberContext& to);

}  // namespace cujit::hostrt::detail
