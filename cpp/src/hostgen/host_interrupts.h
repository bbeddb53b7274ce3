// Internal to codegen: what makes a kernel compiled for the host stop when the
// user interrupts its launch (Ctrl-C), and what its frame needs of a thread's
// stack (host_interrupts.cpp).
#pragma once

#include <cstdint>

namespace llvm {
class Error;
class Module;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace cujit::hostgen {

// Adds to every loop of the optimised module a poll of the runtime's interrupt flag at its header (a relaxed load
// and a branch the optimiser has already seen nothing of: added after the pipeline, so no loop loses its
// vectorisation), calling target::host_interrupted when the flag is set.
void add_interrupt_polls(llvm::Module& module);

// Defines the flag and the function the polls use in the JIT's main library.
llvm::Error add_interrupt_symbols(llvm::orc::LLJIT& jit);

// The bytes of stack the function `name` needs for its fixed-size locals (allocas: cuda.local.array, spilled
// values), with those of the deepest chain of functions it calls in the module (a recursive call counts once):
// what a thread needs beyond the runtime's own frames. 0 if the module has no such function.
uint64_t static_frame_bytes(const llvm::Module& module, const char* name);

}  // namespace cujit::hostgen
