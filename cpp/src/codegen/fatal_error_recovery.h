// Internal to codegen: LLVM's fatal errors (report_fatal_error: instruction
// selection that cannot select, a broken invariant the release build checks)
// turned into a recoverable failure of one compile instead of abort() or exit()
// of the user's process.
#pragma once

#include <optional>
#include <string>

#include <llvm/ADT/STLFunctionalExtras.h>

namespace cujit::codegen {

// Runs `body` on this thread. If LLVM reports a fatal error inside it, control
// returns here (by longjmp from LLVM's fatal error handler) with LLVM's message;
// the frames of `body` are abandoned without their destructors, so whatever LLVM
// state `body` touched must be leaked by the caller, never reused. Returns
// nullopt when `body` finished normally. C++ exceptions thrown by `body` must be
// caught inside it.
std::optional<std::string> run_recovering_fatal_errors(llvm::function_ref<void()> body);

}  // namespace cujit::codegen
