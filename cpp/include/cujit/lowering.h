// Lowering: typed cujit IR -> LLVM IR in a given module, with numba's data
// model and calling conventions (numba device ABI, C ABI, kernel ABI).
#pragma once

#include <string>

#include "cujit/error.h"
#include "cujit/ir.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace cujit::target {
class Target;  // cujit/target.h
}  // namespace cujit::target

namespace cujit::lowering {

enum class DebugLevel { None, LineTables, Full };

struct LoweringOptions {
  bool fastmath = false;
  DebugLevel debug = DebugLevel::None;
  int max_threads = 0, min_blocks = 0, max_cluster = 0;  // kernel launch bounds; 0 = unset
  bool noalias_arrays = false;  // kernels: array data pointers are noalias (see codegen::CompileOptions)
  // Kernels compiled with debug=True: a raise records its code and thread in <kernel>__errcode__ and the
  // six <kernel>__tid{x,y,z}__ / __ctaid{x,y,z}__ globals for the host to read after the launch.
  bool exception_channel = false;
  // What the target's special registers, barriers and shared memory lower to (codegen sets it; null: NVPTX is
  // not assumed, lowering fails).
  const target::Target* target = nullptr;
  // The CPU target's checks: every array element access checks its indices (an index out of bounds is
  // reported through Target::index_error and the access goes to a scratch slot instead).
  bool bounds_check = false;
  // Debug checks of shared memory (the CPU target with debug=True): every array element load and store goes
  // through Target::memory_access.
  bool shared_checks = false;
};

// Lowers `fn` and, transitively, the device functions it calls (as internal
// functions) into `module`. The top function keeps external linkage.
Expected<llvm::Function*> lower_module(const ir::TypedFunction& fn, llvm::Module& module,
                                       const LoweringOptions& options);

}  // namespace cujit::lowering
