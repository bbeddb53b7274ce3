// Internal to codegen: the CPU target's run-time checks (host_checks.cpp: bounds; host_shared_checks.cpp: debug
// checks of shared memory).
#pragma once

#include <memory>

namespace llvm {
class Error;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace cujit::hostgen {

// Defines the checks' recorder (target::kHostIndexErrorFunction) in the JIT's main library.
llvm::Error add_host_checks(llvm::orc::LLJIT& jit);

struct HostSharedChecks;
// A kernel's state of the debug checks of shared memory (its module's kHostSharedChecksSymbol points at it).
std::shared_ptr<HostSharedChecks> make_shared_checks();
// Defines the debug checks' recorder (target::kHostSharedAccessFunction) in the JIT's main library.
llvm::Error add_shared_checks(llvm::orc::LLJIT& jit);

}  // namespace cujit::hostgen
