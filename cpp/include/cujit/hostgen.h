// Compiling a kernel for the host CPU: the same lowering with the host target
// (cujit/target.h), optimised for this machine and compiled in process by
// LLVM's ORC JIT (LLJIT). The result is an entry the host runtime
// (cujit/hostrt.h) calls once per thread of the grid.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cujit/codegen.h"
#include "cujit/host_context.h"
#include "cujit/kernel_target.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace cujit::hostgen {

using codegen::CompileOptions;

struct HostSharedChecks;  // host_shared_checks.cpp

// A kernel's parameters come as cuLaunchKernel's kernelParams: one pointer per flattened parameter.
using HostKernelEntry = void (*)(target::HostThreadContext* context, void** params);

// One kernel compiled for the host; owns its JIT (the code lives as long as this object).
class HostKernel final : public codegen::KernelCode {
 public:
  HostKernel();
  ~HostKernel();
  HostKernel(const HostKernel&) = delete;
  HostKernel& operator=(const HostKernel&) = delete;

  HostKernelEntry entry = nullptr;
  // Every thread of a block in one call, its code between barriers loops over the threads (kernels whose only
  // collectives are barriers all threads reach alike, and no spin point), else null.
  HostKernelEntry block_entry = nullptr;
  uint64_t block_thread_bytes = 0;  // what the block entry keeps per thread across barriers (on its frame)
  int blocks_axis = 0;  // the block ids' axis its blocks continue each other's accesses along (0: x, 1: y)
  uint64_t static_shared_bytes = 0;  // per block
  bool uses_barrier = true;  // its code reaches a collective (a barrier, a warp function...): its threads are fibers
  uint64_t frame_bytes = 0;  // the stack its fixed-size locals need per thread (cuda.local.array...), callees' too
  std::string symbol;    // the kernel's mangled name
  std::string object;    // its code: a relocatable object of this machine, which `jit` loaded (the disk cache's)
  std::unique_ptr<llvm::orc::LLJIT> jit;
  // Bounds checks: the module's record of the first out-of-bounds access (null when compiled without checks).
  target::HostIndexError* index_error = nullptr;
  std::string qualname;  // the kernel's Python name, for reports
  // Debug checks of shared memory (compiled with debug=True): their state, or null.
  std::shared_ptr<HostSharedChecks> shared_checks;
};

// After a launch: the first out-of-bounds access it made, as IndexError's message (naming the kernel, the array,
// the index, the shape and the thread's block and thread ids), and the record cleared for the next launch; or
// nothing. (hostgen/host_checks.cpp)
std::optional<std::string> take_index_error(const HostKernel& kernel);
// After a launch of a kernel compiled with debug=True: the first read of uninitialised shared memory or data race
// on shared memory it made (naming the kernel, the array, the byte and the threads), or nothing; the checks'
// records are cleared for the next launch. (hostgen/host_shared_checks.cpp)
std::optional<std::string> take_shared_report(const HostKernel& kernel);

// The address of a global the kernel's module defines and keeps (a debug kernel's exception records,
// <symbol>__errcode__ and the thread's ids, which the host reads after a launch as it does on the GPU), or 0.
uint64_t host_global_address(const HostKernel& kernel, const std::string& name);

// The libdevice functions (and compiler runtime helpers) the CPU target implements (hostgen/host_math.cpp).
std::vector<std::string> host_math_names();

// Tests only: the next CPU-target compiles move every transcendental libdevice function's result (sin, exp, pow,
// ...) by `ulps` units in the last place, away from zero (toward it for a negative count); 0 stops.
void set_host_math_nudge(int ulps);

// The kernel `fn` (typed as a kernel) compiled for this machine's CPU. Errors: what lowering reports, and
// NotImplemented for what the host target does not have (a call of GPU-only code, naming the functions).
// `bounds_check`: every array access checks its indices (take_index_error reports the first bad one).
Expected<std::shared_ptr<HostKernel>> compile_for_host(const ir::TypedFunction& fn, const CompileOptions& options,
                                                       bool bounds_check = false);

// The kernel compiled earlier into `object` (a HostKernel's, of this build on a machine of host_machine_id()),
// loaded with no compile: what a process reading the disk cache runs. Its llvm_ir is empty. Errors: the JIT's,
// naming what failed (an object it cannot link).
Expected<std::shared_ptr<HostKernel>> load_host_kernel(std::string object, const std::string& symbol,
                                                       const std::string& qualname);

// What a host kernel's object code depends on: the target triple, this CPU's name and its features ("" when LLVM
// cannot tell).
std::string host_machine_id();

// The CPU target of the compile driver (cujit/kernel_target.h): kernels without noalias arrays (a launch does not
// check overlaps here), refusing linked GPU code, compiled by compile_for_host with bounds checks unless
// options.boundscheck is false. Its code is a HostKernel.
const codegen::KernelTarget& host_target();

// The name of the function compiled modules expose to the host runtime.
inline constexpr const char* kHostEntrySymbol = "__cujit_host_entry";
inline constexpr const char* kHostBlockEntrySymbol = "__cujit_host_block";

}  // namespace cujit::hostgen
