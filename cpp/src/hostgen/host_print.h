// Internal to codegen: CUDA's device-side vprintf on the CPU target. A kernel's
// print() (lowering/lower_print.cpp) and printf-style calls are one
// vprintf(format, arguments) call whose arguments are packed in a buffer, each
// at its natural alignment, as CUDA's device runtime reads them; the host's
// vprintf formats them with the C library and writes the line to stdout at once.
#pragma once

namespace llvm {
class Error;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace cujit::hostgen {

// The name kernels call: CUDA's vprintf.
inline constexpr const char* kHostPrintFunction = "vprintf";

// Defines vprintf in the JIT's main library (an absolute symbol to the host implementation).
llvm::Error add_host_print(llvm::orc::LLJIT& jit);

}  // namespace cujit::hostgen
