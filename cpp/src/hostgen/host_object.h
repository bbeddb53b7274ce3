// Internal to hostgen: a host kernel's code as a relocatable object of this
// machine (host_object.cpp). A compile emits one from its optimised module and
// loads it; the disk cache keeps it, and a later process loads it the same way,
// with no typing, lowering or optimisation: everything a launch needs besides
// the code is in the object's own globals.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>

#include "cujit/error.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace cujit::hostgen {

class HostKernel;

// The CPU target's error for a failure of LLVM's JIT or backend while doing `what`.
Error jit_error(const std::string& what, llvm::Error e);

// The global of an object's facts: [4 x i64] {frame_bytes, block_thread_bytes, uses_barrier, blocks_axis}.
inline constexpr const char* kHostFactsSymbol = "__cujit_host_facts";

// What the runtime needs of a kernel besides its entries, kept in its module as the global kHostFactsSymbol.
struct HostFacts {
  uint64_t frame_bytes = 0;
  uint64_t block_thread_bytes = 0;
  bool uses_barrier = true;
  int blocks_axis = 0;
};

// The builder of the target machines both the compile and the JIT use: this machine's CPU and features, the
// relocation and code models of ORC's JITLink (so that an object made here links there), `opt`'s code generation.
Expected<llvm::orc::JITTargetMachineBuilder> host_machine_builder(bool opt);

// Adds `facts` to the optimised module (a constant the object exports) and emits the module as an object for `tm`.
Expected<std::string> emit_object(llvm::Module& module, llvm::TargetMachine& tm, const HostFacts& facts);

// The kernel whose object `object` is (emit_object's): loaded into a JIT of its own with the host runtime's
// symbols (libdevice, vprintf, the checks' recorders, the interrupt flag), its entries, facts and records looked
// up. `symbol` and `qualname` name it. Errors: the JIT's (an object of another machine or build).
Expected<std::shared_ptr<HostKernel>> load_object(std::string object, const std::string& symbol,
                                                  const std::string& qualname);

}  // namespace cujit::hostgen
