// The target interface: what lowering emits differently per target (special
// registers, barriers, shared memory; atomics and math to follow). Lowering and
// the intrinsic table stay one and call these hooks; the implementations live in
// codegen/ (nvptx_target.cpp: NVVM intrinsics and address space 3, as before;
// host_target.cpp: a per-thread context the host runtime passes to each function).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "cujit/host_context.h"

namespace cujit::target {

enum class SpecialRegister { ThreadIdx = 0, BlockIdx = 1, BlockDim = 2, GridDim = 3 };
// The scope of a memory fence: cuda.threadfence_block, threadfence, threadfence_system.
enum class FenceScope { Block, Device, System };

class Target {
 public:
  virtual ~Target() = default;
  virtual const char* name() const = 0;  // "nvptx", "host"

  // Every lowered function of a target with a context takes it as its first parameter (a pointer), and passes
  // it on to the functions it calls. `context` below is that parameter (null on a target without one).
  virtual bool has_context() const = 0;

  // threadIdx.x ... gridDim.z: an i32.
  virtual llvm::Value* special_register(llvm::IRBuilder<>& b, llvm::Value* context, SpecialRegister reg,
                                        int axis) const = 0;
  // cuda.laneid: the thread's lane in its warp of 32 (an i32).
  virtual llvm::Value* lane_id(llvm::IRBuilder<>& b, llvm::Value* context) const = 0;
  // cuda.threadfence_block / threadfence / threadfence_system.
  virtual void fence(llvm::IRBuilder<>& b, llvm::Value* context, FenceScope scope) const = 0;
  // cuda.syncthreads(): every thread of the block waits for the others.
  virtual void barrier(llvm::IRBuilder<>& b, llvm::Value* context) const = 0;
  // A cuda.shared.array buffer of static size: its generic address (one buffer per call site and block).
  virtual llvm::Value* static_shared(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Module& module,
                                     llvm::ArrayType* buffer) const = 0;
  // The dynamic shared memory given at launch: its generic address and its size in bytes (an i64).
  virtual std::pair<llvm::Value*, llvm::Value*> dynamic_shared(llvm::IRBuilder<>& b, llvm::Value* context,
                                                               llvm::Module& module) const = 0;

  // ---- Checks: the CPU target's (lowering emits them only where LoweringOptions asks; no-ops elsewhere).
  // An array access whose `indices` (i64s, as written) fall outside the array's `shape` (i64s): the target
  // records the first such access of a launch, with `site` ("array 'x' at kernel.py:12"), the array's `data`
  // pointer and the thread's ids, for the launch to report.
  virtual void index_error(llvm::IRBuilder<>&, llvm::Value* /*context*/, const std::string& /*site*/,
                           llvm::Value* /*data*/, const std::vector<llvm::Value*>& /*indices*/,
                           const std::vector<llvm::Value*>& /*shape*/) const {}
};

// The two targets (stateless singletons; implemented in codegen/).
const Target& nvptx();
const Target& host();

}  // namespace cujit::target
