// Fiber switches (fiber_switch.h). x86-64 (System V): cujit_fiber_switch pushes
// rbp, rbx, r12-r15, stores rsp in *from, loads `to`'s rsp and pops the same.
// The floating-point control words (MXCSR, x87) are not switched: a block's
// fibers share one OS thread and its modes, and none switches while it has
// changed them (a switch happens only in a collective call; ldmxcsr and fldcw
// would cost a quarter of a switch). A new fiber's stack is laid
// out as if it had switched away: its "return address" is a trampoline that
// calls fn(arg) (kept in r13 and r12) on a 16-byte aligned stack. Other
// machines use ucontext.
#include "fiber_switch.h"

#include <cstdint>

namespace cujit::hostrt::detail {

#if defined(__x86_64__) && !defined(CUJIT_FIBER_UCONTEXT)

extern "C" void cujit_fiber_switch(void** from_sp, void* to_sp);
extern "C" void cujit_fiber_trampoline();

asm(R"(
  .text
  .globl cujit_fiber_switch
  .hidden cujit_fiber_switch
  .type cujit_fiber_switch, @function
cujit_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cujit_fiber_switch, .-cujit_fiber_switch

  .globl cujit_fiber_trampoline
  .hidden cujit_fiber_trampoline
  .type cujit_fiber_trampoline, @function
cujit_fiber_trampoline:
  movq %r12, %rdi
  andq $-16, %rsp
  callq *%r13
  ud2
  .size cujit_fiber_trampoline, .-cujit_fiber_trampoline
)");

void fiber_prepare(FiberContext& context, char* stack, std::size_t bytes, FiberFunction fn, void* arg) {
  auto** sp = reinterpret_cast<void**>((reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t{15});
  *--sp = nullptr;                                           // padding
  *--sp = reinterpret_cast<void*>(&cujit_fiber_trampoline);  // where the first switch "returns"
  *--sp = nullptr;                                           // rbp
  *--sp = nullptr;                                           // rbx
  *--sp = arg;                                               // r12
  *--sp = reinterpret_cast<void*>(fn);                       // r13
  *--sp = nullptr;                                           // r14
  *--sp = nullptr;                                           // r15
  context.sp = sp;
}

void fiber_switch(FiberContext& from, FiberContext& to) { cujit_fiber_switch(&from.sp, to.sp); }

#else

namespace {

thread_local FiberContext* starting = nullptr;  // the context a first switch enters (read by its trampoline)

void trampoline() { starting->fn(starting->arg); }

}  // namespace

void fiber_prepare(FiberContext& context, char* stack, std::size_t bytes, FiberFunction fn, void* arg) {
  getcontext(&context.uc);
  context.uc.uc_stack.ss_sp = stack;
  context.uc.uc_stack.ss_size = bytes;
  context.uc.uc_link = nullptr;
  context.fn = fn;
  context.arg = arg;
  makecontext(&context.uc, trampoline, 0);
}

void fiber_switch(FiberContext& from, FiberContext& to) {
  starting = &to;
  swapcontext(&from.uc, &to.uc);
}

#endif

}  // namespace cujit::hostrt::detail
