// Internal to hostgen/: the parts of a kernel's block function (host_block_regions.cpp) that its other analyses
// share: how a load reads the thread's context, one region's loops, which axes the loops and the blocks run along
// (host_access_order.cpp), and the threads that may end a row of a region's loop early (host_row_skip.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include "cujit/host_context.h"

namespace cujit::hostgen {

// Where the context's registers lie (HostThreadContext::registers: the thread's ids, the block's, its dimensions).
inline constexpr int64_t kTidOffset = offsetof(target::HostThreadContext, registers);
inline constexpr int64_t kBlockIdOffset = kTidOffset + 3 * sizeof(uint32_t);       // registers[BlockId]
inline constexpr int64_t kBlockDimOffset = kTidOffset + 2 * 3 * sizeof(uint32_t);  // registers[BlockDim]
inline constexpr int64_t kCountersOffset = offsetof(target::HostThreadContext, barriers_passed);

// The offset of the field of the context (argument 0) that a (non-volatile) `load` reads, if it reads one.
std::optional<int64_t> context_offset(const llvm::LoadInst& load);
// Whether `load` reads one of the thread's ids from the context.
bool reads_thread_id(const llvm::LoadInst& load);
// Whether `load` reads a field of the context that is the same for every thread of the block and never written:
// the block's and grid's ids and dimensions, shared memory, the hooks.
bool reads_block_field(const llvm::LoadInst& load);

// One region's loops over the threads, `order[0]`'s axis innermost.
struct Region {
  std::vector<llvm::BasicBlock*> blocks;  // its clones, the entry's first
  llvm::BasicBlock* pre = nullptr;  // where a dispatch enters it
  llvm::BasicBlock* head = nullptr;  // the innermost loop's header (dominates the clones)
  llvm::BasicBlock* latch = nullptr;  // where a thread's run of the region ends
  llvm::Value* linear = nullptr;  // the thread's index in the loops' order (i64: per-thread copies)
  llvm::BasicBlock* dispatch = nullptr;  // after the loops: on to the next region or the return
  llvm::BasicBlock* after_inner = nullptr;  // after the innermost loop: on to the next row of threads
};

// The axes (0: x, 1: y) the loops over a block's threads run innermost along, and the runtime takes blocks along:
// those along which the kernel's memory accesses are contiguous (host_access_order.cpp).
std::pair<int, int> contiguous_axes(const llvm::Function& f);

// Which values a region uses are the same for every thread of the block: constants, arguments, set-up values,
// uniform slots' values, and what the divergence analysis found uniform made of such values (instructions reg2mem
// made after the analysis count by their operands). `original_of` maps the region's clones to their originals.
class RegionUniformity {
 public:
  RegionUniformity(const std::map<const llvm::Value*, const llvm::Value*>& original_of,
                   const std::map<const llvm::BasicBlock*, std::size_t>& region_of_block,
                   const std::set<const llvm::Value*>& divergent,
                   const std::set<const llvm::AllocaInst*>& uniform_slots)
      : original_of_(original_of),
        region_of_block_(region_of_block),
        divergent_(divergent),
        uniform_slots_(uniform_slots) {}

  bool operator()(const llvm::Value* v) { return uniform(v, 0); }
  bool slot(const llvm::Value* pointer) const {
    const auto* a = llvm::dyn_cast<llvm::AllocaInst>(pointer);
    return a != nullptr && uniform_slots_.count(a) != 0;
  }

 private:
  bool uniform(const llvm::Value* v, int depth);

  const std::map<const llvm::Value*, const llvm::Value*>& original_of_;
  const std::map<const llvm::BasicBlock*, std::size_t>& region_of_block_;
  const std::set<const llvm::Value*>& divergent_;
  const std::set<const llvm::AllocaInst*>& uniform_slots_;
  std::map<const llvm::Instruction*, bool> known_;
};

// Threads that sit a region out. Where every thread reaches a branch on `tid < U` alike and once (U the same for
// every thread; before it only uniform branches and stores of uniform values to uniform slots), and the branch's
// other side leads to the region's end doing nothing, a thread that takes that side is followed by every later
// thread of its row (their ids along the innermost loop's axis only grow): it ends the row instead of the loop
// walking the rest through. The block-tree sum's `if t < step` levels no longer pass over the threads that sit
// each level out.
void skip_rows_past_guards(Region& r, int axis, llvm::AllocaInst* exit_slot, RegionUniformity& uniform);

}  // namespace cujit::hostgen
