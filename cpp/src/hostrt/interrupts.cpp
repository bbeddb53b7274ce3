// Ctrl-C during CPU-target launches (cujit/hostrt.h InterruptScope): a SIGINT
// handler, installed for the length of a launch in front of the process's own
// (Python's), raises the flag that compiled code polls at its loops and the
// runtime at barriers and between blocks, then calls the handler it replaced.
#include <signal.h>

#include "cujit/host_context.h"
#include "cujit/hostrt.h"
#include "fiber_scheduler.h"

namespace cujit::target {

std::atomic<uint32_t> host_interrupt_requested{0};
thread_local HostInterruptHandler host_interrupt_handler{};

void host_interrupted() {
  const HostInterruptHandler h = host_interrupt_handler;
  if (h.abandon != nullptr) h.abandon(h.runtime);
  __builtin_trap();  // compiled host code runs only under a handler
}

}  // namespace cujit::target

namespace cujit::hostrt {
namespace {

struct sigaction replaced{};  // one scope at a time: launches interrupted are made on the main thread

void on_sigint(int signal, siginfo_t* info, void* context) {
  target::host_interrupt_requested.store(1, std::memory_order_relaxed);
  if ((replaced.sa_flags & SA_SIGINFO) != 0) {
    if (replaced.sa_sigaction != nullptr) replaced.sa_sigaction(signal, info, context);
  } else if (replaced.sa_handler != SIG_DFL && replaced.sa_handler != SIG_IGN) {
    replaced.sa_handler(signal);
  }
}

}  // namespace

InterruptScope::InterruptScope() {
  struct sigaction current{};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  // With the default action Ctrl-C ends the process anyway; ignored, it asks nothing of a launch.
  if ((current.sa_flags & SA_SIGINFO) == 0 && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)) return;
  target::host_interrupt_requested.store(0, std::memory_order_relaxed);
  replaced = current;
  struct sigaction mine{};
  mine.sa_sigaction = on_sigint;
  mine.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&mine.sa_mask);
  installed_ = sigaction(SIGINT, &mine, nullptr) == 0;
}

InterruptScope::~InterruptScope() {
  if (!installed_) return;
  sigaction(SIGINT, &replaced, nullptr);
  target::host_interrupt_requested.store(0, std::memory_order_relaxed);
}

Error interrupted_error(const std::string& kernel_name) {
  return Error{ErrorKind::Interrupted,
               detail::kernel_label(kernel_name) +
                   " was interrupted: its threads stopped where they were (the CPU target is ready for the next "
                   "launch)",
               {}};
}

}  // namespace cujit::hostrt
