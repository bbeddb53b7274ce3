// The order of a block's threads and of the blocks (host_block_parts.h): the byte stride with which each of the
// kernel's addresses moves along the thread's and the block's ids, and the axes along which they are contiguous.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <set>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GetElementPtrTypeIterator.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include "host_block_parts.h"

namespace cujit::hostgen {
namespace {

// A block's side in threads, at most (a block id's stride in elements, at most, when its blocks are contiguous).
constexpr int64_t kMaxThreadsPerBlockSide = 1024;

// How an address moves with the thread's (or the block's) ids: for each axis, the smallest byte stride with which
// it does (kRuntimeStride when only through a multiplication by a value not known at compile time: an array's row).
// Through adds, casts, the elements of aggregates, phis, selects and GEPs; a multiplication by a constant scales
// the stride, by anything else makes it a runtime stride, except the block's extent for the block's ids (a block
// id times the block's size is the block's first thread: one block on).
class IdStrides {
 public:
  static constexpr int64_t kRuntimeStride = INT64_MAX;

  // The ids of the context's registers at `ids` (kTidOffset: the thread's, kBlockIdOffset: the block's).
  IdStrides(const llvm::DataLayout& dl, int64_t ids) : dl_(dl), ids_(ids) {}

  std::array<int64_t, 3> of(const llvm::Value* address) {
    strides_ = {kRuntimeStride, kRuntimeStride, kRuntimeStride};
    seen_.clear();
    walk(address, 1);
    return strides_;
  }

 private:
  int64_t scaled(int64_t factor, const llvm::Value* by) const {
    if (factor == kRuntimeStride) return factor;
    while (const auto* cast = llvm::dyn_cast<llvm::CastInst>(by)) by = cast->getOperand(0);
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(by); load != nullptr && ids_ == kBlockIdOffset) {
      std::optional<int64_t> offset = context_offset(*load);
      if (offset && *offset >= kBlockDimOffset && *offset < kBlockDimOffset + 12) return factor;
    }
    const auto* c = llvm::dyn_cast<llvm::ConstantInt>(by);
    if (c == nullptr || c->getBitWidth() > 64) return kRuntimeStride;
    const int64_t k = c->getSExtValue();
    return k == 0 || std::abs(k) > (1 << 20) ? kRuntimeStride : factor * std::abs(k);
  }

  void walk(const llvm::Value* v, int64_t factor) {
    if (!seen_.insert(v).second) return;
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(v)) {
      std::optional<int64_t> offset = context_offset(*load);
      if (offset && *offset >= ids_ && *offset < ids_ + 12) {
        int64_t& s = strides_[static_cast<std::size_t>((*offset - ids_) / 4)];
        s = std::min(s, factor);
      }
    } else if (const auto* cast = llvm::dyn_cast<llvm::CastInst>(v)) {
      walk(cast->getOperand(0), factor);
    } else if (const auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(v)) {
      const llvm::Value* a = bin->getOperand(0);
      const llvm::Value* b = bin->getOperand(1);
      const auto op = bin->getOpcode();
      if (op == llvm::Instruction::Add || op == llvm::Instruction::Sub || op == llvm::Instruction::Or) {
        walk(a, factor);
        walk(b, factor);
      } else if (op == llvm::Instruction::Mul) {
        walk(a, scaled(factor, b));
        walk(b, scaled(factor, a));
      } else {  // (shifts, divisions, remainders: no stride to tell)
        walk(a, kRuntimeStride);
        walk(b, kRuntimeStride);
      }
    } else if (const auto* extract = llvm::dyn_cast<llvm::ExtractValueInst>(v)) {
      if (llvm::Value* inserted =
              llvm::FindInsertedValue(const_cast<llvm::Value*>(extract->getAggregateOperand()), extract->getIndices()))
        walk(inserted, factor);
    } else if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(v)) {
      for (const llvm::Value* in : phi->incoming_values()) walk(in, factor);
    } else if (const auto* select = llvm::dyn_cast<llvm::SelectInst>(v)) {
      walk(select->getTrueValue(), factor);
      walk(select->getFalseValue(), factor);
    } else if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(v)) {
      walk(gep->getPointerOperand(), factor);
      for (auto it = llvm::gep_type_begin(gep); it != llvm::gep_type_end(gep); ++it)
        if (!it.isStruct()) {
          const auto size = static_cast<int64_t>(it.getSequentialElementStride(dl_).getFixedValue());
          walk(it.getOperand(), factor == kRuntimeStride ? factor : factor * size);
        }
    }
  }

  const llvm::DataLayout& dl_;
  const int64_t ids_;
  std::array<int64_t, 3> strides_{};
  std::set<const llvm::Value*> seen_;
};

}  // namespace

// The axes the loops over a block's threads, and the runtime's walk over the blocks, should run along: those along
// which the kernel's memory accesses are contiguous, so that consecutive threads, and consecutive blocks, read and
// write consecutive addresses (the loops vectorise, the prefetcher follows the rows). x, numba's `cuda.grid`'s
// fastest, unless more accesses run along y than along x: a stencil whose `i, j = cuda.grid(2)` indexes `a[i, j]`
// of a C-order array has its rows along x. (A thread's accesses count (an element apart at most), a block's move by
// at most a block's size of elements.)
std::pair<int, int> contiguous_axes(const llvm::Function& f) {
  const llvm::DataLayout& dl = f.getParent()->getDataLayout();
  IdStrides threads(dl, kTidOffset), blocks(dl, kBlockIdOffset);
  int thread_along[3] = {0, 0, 0}, block_along[3] = {0, 0, 0};
  for (const llvm::BasicBlock& block : f)
    for (const llvm::Instruction& inst : block) {
      const llvm::Value* address = llvm::getLoadStorePointerOperand(&inst);
      if (address == nullptr || llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(address))) continue;
      if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst); load != nullptr && context_offset(*load)) continue;
      const auto size = static_cast<int64_t>(dl.getTypeStoreSize(llvm::getLoadStoreType(&inst)).getFixedValue());
      std::array<int64_t, 3> t = threads.of(address), b = blocks.of(address);
      for (std::size_t axis = 0; axis < 3; ++axis) {
        thread_along[axis] += t[axis] <= size;
        block_along[axis] += b[axis] <= size * kMaxThreadsPerBlockSide;
      }
    }
  return {thread_along[1] > thread_along[0] ? 1 : 0, block_along[1] > block_along[0] ? 1 : 0};
}

}  // namespace cujit::hostgen
