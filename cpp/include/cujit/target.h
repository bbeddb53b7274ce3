// The target interface: what lowering emits differently per target (special
// registers, barriers, shared memory; atomics and math to follow). Lowering and
// the intrinsic table stay one and call these hooks; the implementations live in
// codegen/nvptx_target.cpp (NVVM intrinsics and address space 3) and
// hostgen/host_target.cpp (a per-thread context the host runtime passes to each function).
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
// cuda.syncthreads_count / _and / _or.
enum class BarrierReduction { Count, And, Or };
// cuda.shfl_sync / shfl_up_sync / shfl_down_sync / shfl_xor_sync.
enum class ShuffleMode { Index, Up, Down, Xor };
// cuda.all_sync / any_sync / eq_sync / ballot_sync.
enum class VoteMode { All, Any, Eq, Ballot };
// cuda.activemask() / cuda.lanemask_lt().
enum class WarpMask { Active, LessThan };

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

  // ---- Collectives: barriers that reduce, warp functions, cooperative groups. `where` is the call's source
  // position ("kernel.py:12", or ""), which a target may keep for its reports (the host's deadlock reports).
  // cuda.syncthreads() at `where` (the NVPTX target: barrier()).
  virtual void barrier_at(llvm::IRBuilder<>& b, llvm::Value* context, const std::string& where) const = 0;
  // cuda.syncthreads_count/_and/_or of an i1 predicate: an i32 (the count, or 0/1).
  virtual llvm::Value* barrier_reduce(llvm::IRBuilder<>& b, llvm::Value* context, BarrierReduction op,
                                      llvm::Value* predicate, const std::string& where) const = 0;
  // A shuffle of a 32-bit value (an i32) among the warp's lanes in `mask` (an i32); `lane` is the source lane,
  // the delta or the lane mask (an i32). Returns the i32 read.
  virtual llvm::Value* warp_shuffle(llvm::IRBuilder<>& b, llvm::Value* context, ShuffleMode mode, llvm::Value* mask,
                                    llvm::Value* value, llvm::Value* lane, const std::string& where) const = 0;
  // A vote of an i1 predicate among the lanes in `mask`: an i1 (all, any, eq) or the ballot's i32.
  virtual llvm::Value* warp_vote(llvm::IRBuilder<>& b, llvm::Value* context, VoteMode mode, llvm::Value* mask,
                                 llvm::Value* predicate, const std::string& where) const = 0;
  // match_any_sync (an i32: the lanes holding `value`, an i32 or i64) or match_all_sync (an {i32, i1} pair).
  virtual llvm::Value* warp_match(llvm::IRBuilder<>& b, llvm::Value* context, bool all, llvm::Value* mask,
                                  llvm::Value* value, const std::string& where) const = 0;
  // cuda.syncwarp(mask): the lanes in `mask` wait for each other.
  virtual void warp_sync(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value* mask,
                         const std::string& where) const = 0;
  // cuda.activemask() / lanemask_lt(): an i32.
  virtual llvm::Value* warp_mask(llvm::IRBuilder<>& b, llvm::Value* context, WarpMask which,
                                 const std::string& where) const = 0;
  // cuda.cg.this_grid(): the grid group's handle (an i64); its sync(): waits for every thread of the grid (an
  // i32 status). Kernels reaching them launch cooperatively.
  virtual llvm::Value* grid_group(llvm::IRBuilder<>& b, llvm::Value* context) const = 0;
  virtual llvm::Value* grid_sync(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value* group,
                                 const std::string& where) const = 0;

  // ---- Checks: the CPU target's (lowering emits them only where LoweringOptions asks; no-ops elsewhere).
  // An array access whose `indices` (i64s, as written) fall outside the array's `shape` (i64s): the target
  // records the first such access of a launch, with `site` ("array 'x' at kernel.py:12"), the array's `data`
  // pointer and the thread's ids, for the launch to report.
  virtual void index_error(llvm::IRBuilder<>&, llvm::Value* /*context*/, const std::string& /*site*/,
                           llvm::Value* /*data*/, const std::vector<llvm::Value*>& /*indices*/,
                           const std::vector<llvm::Value*>& /*shape*/) const {}
  // A load (write false) or store of `bytes` bytes at `address` (debug checks of shared memory: the target
  // records accesses to shared memory, reporting reads of bytes no thread has written and races between two
  // barriers). `site` names the access ("array 'buf' at kernel.py:12").
  virtual void memory_access(llvm::IRBuilder<>&, llvm::Value* /*context*/, llvm::Value* /*address*/, uint64_t /*bytes*/,
                             bool /*write*/, const std::string& /*site*/) const {}

  // cuda.nanosleep(ns) (an i32): the thread sleeps for about `ns` nanoseconds (on the host: the block's other
  // threads run, so a thread spinning on another's write with nanosleep in its loop sees it).
  virtual void sleep(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value* ns, const std::string& where) const = 0;

  // A float converted to an integer type (int(x), casts), with the GPU's results for NaN and out-of-range values
  // on every target (LLVM's plain conversion makes them poison: folded to anything, or a loop that never ends).
  virtual llvm::Value* float_to_int(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Type* to, bool is_signed) const {
    return is_signed ? b.CreateFPToSI(v, to) : b.CreateFPToUI(v, to);
  }

  // A spin point, after an atomic (and, on the host, a memory fence): a thread spinning on another's write
  // passes one each time around its loop. GPU threads run independently (nothing to emit); the host target
  // lets other threads run there every kHostSpinInterval-th time (hostrt/: a plain yield, not a barrier).
  virtual void spin_point(llvm::IRBuilder<>&, llvm::Value* /*context*/) const {}
};

// The two targets (stateless singletons; implemented in codegen/).
const Target& nvptx();
const Target& host();

}  // namespace cujit::target
