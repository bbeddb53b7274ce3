// Internal to codegen: the CPU target's run-time checks (host_checks.cpp).
#pragma once

namespace llvm {
class Error;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace cujit::codegen {

// Defines the checks' recorder (target::kHostIndexErrorFunction) in the JIT's main library.
llvm::Error add_host_checks(llvm::orc::LLJIT& jit);

}  // namespace cujit::codegen
