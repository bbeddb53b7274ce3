// LLVM calls the installed fatal error handler and aborts (or exits) if the
// handler returns. Our handler does not return while a compile on its thread
// is inside run_recovering_fatal_errors: it jumps back there. Outside such a
// region (LLVM used by something other than a compile) it prints LLVM's usual
// message and returns, so LLVM ends the process as it would without us.
#include "fatal_error_recovery.h"

#include <csetjmp>
#include <cstdio>
#include <mutex>

#include <llvm/Support/ErrorHandling.h>

namespace cujit::codegen {
namespace {

struct RecoveryPoint {
  std::jmp_buf buffer;
  std::string message;
};

thread_local RecoveryPoint* t_recovery = nullptr;

void on_fatal_error(void*, const char* reason, bool) {
  if (RecoveryPoint* point = t_recovery) {
    point->message = reason;
    std::longjmp(point->buffer, 1);
  }
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason);
}

}  // namespace

std::optional<std::string> run_recovering_fatal_errors(llvm::function_ref<void()> body) {
  static std::once_flag installed;
  std::call_once(installed, [] { llvm::install_fatal_error_handler(on_fatal_error, nullptr); });
  RecoveryPoint point;
  RecoveryPoint* const outer = t_recovery;
  if (setjmp(point.buffer) != 0) {
    t_recovery = outer;
    return std::move(point.message);
  }
  t_recovery = &point;
  body();
  t_recovery = outer;
  return std::nullopt;
}

}  // namespace cujit::codegen
