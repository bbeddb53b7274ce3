// Threads that sit a region out (host_block_parts.h): the values a region uses that are the same for every thread,
// and the tests on the thread's id past which a thread, and every later one of its row, has nothing left to do.
#include <optional>
#include <set>
#include <vector>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "host_block_parts.h"

namespace cujit::hostgen {

bool RegionUniformity::uniform(const llvm::Value* v, int depth) {
  if (llvm::isa<llvm::Constant>(v) || llvm::isa<llvm::Argument>(v)) return true;
  const auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
  if (inst == nullptr || depth > 64) return false;
  auto known = known_.find(inst);
  if (known != known_.end()) return known->second;
  bool result = true;
  if (region_of_block_.count(inst->getParent()) == 0) {
    result = &inst->getFunction()->getEntryBlock() == inst->getParent();  // the set-up block's
  } else if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(inst)) {
    result = slot(load->getPointerOperand()) || reads_block_field(*load);
  } else {
    auto found = original_of_.find(inst);
    result = found != original_of_.end() && divergent_.count(found->second) == 0 && !inst->mayReadOrWriteMemory() &&
             !llvm::isa<llvm::PHINode>(inst);
    for (const llvm::Value* operand : inst->operands())
      if (result) result = uniform(operand, depth + 1);
  }
  known_[inst] = result;
  return result;
}

namespace {

// `v` is the thread's id along `axis`: its load from the context, widened or not.
bool is_thread_id(const llvm::Value* v, int axis) {
  while (const auto* cast = llvm::dyn_cast<llvm::CastInst>(v)) {
    if (cast->getOpcode() != llvm::Instruction::ZExt && cast->getOpcode() != llvm::Instruction::SExt) return false;
    v = cast->getOperand(0);
  }
  const auto* load = llvm::dyn_cast<llvm::LoadInst>(v);
  std::optional<int64_t> offset = load != nullptr ? context_offset(*load) : std::nullopt;
  return offset && *offset == kTidOffset + 4 * axis;
}

// The constant exit code of the region's end that `from` leads to through blocks that do nothing else (no side
// effect, no phi, unconditional branches), or nothing.
std::optional<int64_t> quiet_exit(llvm::BasicBlock* from, const Region& r, const llvm::AllocaInst* exit_slot) {
  for (int steps = 0; steps < 8; ++steps) {
    auto* next = llvm::dyn_cast<llvm::BranchInst>(from->getTerminator());
    if (next == nullptr || next->isConditional() || !from->phis().empty()) return std::nullopt;
    std::optional<int64_t> code;
    for (llvm::Instruction& inst : *from) {
      if (&inst == next) break;
      const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
      const auto* value = store != nullptr ? llvm::dyn_cast<llvm::ConstantInt>(store->getValueOperand()) : nullptr;
      if (value != nullptr && store->getPointerOperand() == exit_slot)
        code = value->getSExtValue();
      else if (inst.mayHaveSideEffects())
        return std::nullopt;
    }
    if (next->getSuccessor(0) == r.latch) return code;
    if (code) return std::nullopt;
    from = next->getSuccessor(0);
  }
  return std::nullopt;
}

}  // namespace

// (host_block_parts.h)
void skip_rows_past_guards(Region& r, int axis, llvm::AllocaInst* exit_slot, RegionUniformity& uniform) {
  const std::set<llvm::BasicBlock*> in_region(r.blocks.begin(), r.blocks.end());
  // What a skipped thread may leave undone before the guard: computing, storing what every thread stores alike in a
  // uniform slot, counting the barriers it passed (the block's context is this block function's own).
  auto harmless = [&](const llvm::Instruction& inst) {
    if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
      if (uniform.slot(store->getPointerOperand())) return uniform(store->getValueOperand());
      int64_t offset = 0;
      const llvm::Value* base =
          llvm::GetPointerBaseWithConstantOffset(store->getPointerOperand(), offset, inst.getModule()->getDataLayout());
      return base == inst.getFunction()->getArg(0) &&
             (offset == offsetof(target::HostThreadContext, barriers_passed) ||
              offset == offsetof(target::HostThreadContext, warp_syncs_passed));
    }
    return !inst.mayHaveSideEffects();
  };
  for (llvm::BasicBlock* guard : r.blocks) {
    auto* branch = llvm::dyn_cast<llvm::BranchInst>(guard->getTerminator());
    auto* cmp =
        branch != nullptr && branch->isConditional() ? llvm::dyn_cast<llvm::ICmpInst>(branch->getCondition()) : nullptr;
    if (cmp == nullptr) continue;
    llvm::ICmpInst::Predicate pred = cmp->getPredicate();  // as `tid pred bound`
    const llvm::Value* bound = cmp->getOperand(1);
    if (is_thread_id(cmp->getOperand(1), axis)) {
      pred = llvm::ICmpInst::getSwappedPredicate(pred);
      bound = cmp->getOperand(0);
    } else if (!is_thread_id(cmp->getOperand(0), axis)) {
      continue;
    }
    if ((pred != llvm::ICmpInst::ICMP_ULT && pred != llvm::ICmpInst::ICMP_SLT) || !uniform(bound)) continue;
    std::optional<int64_t> code = quiet_exit(branch->getSuccessor(1), r, exit_slot);
    if (!code) continue;
    // The blocks on the way to the guard: from the region's entry, through uniform branches, doing nothing that
    // a skipped thread would have to do; and none of them after the guard (it is reached once).
    std::set<llvm::BasicBlock*> reaching{guard};
    std::vector<llvm::BasicBlock*> work{guard};
    while (!work.empty()) {
      llvm::BasicBlock* b = work.back();
      work.pop_back();
      for (llvm::BasicBlock* p : llvm::predecessors(b))
        if (in_region.count(p) != 0 && reaching.insert(p).second) work.push_back(p);
    }
    bool alike = reaching.count(r.blocks.front()) != 0;
    for (llvm::BasicBlock* b : reaching) {
      const auto* br = llvm::dyn_cast<llvm::BranchInst>(b->getTerminator());
      if (b != guard && (br == nullptr || (br->isConditional() && !uniform(br->getCondition())))) alike = false;
      for (const llvm::Instruction& inst : *b)
        if (&inst != b->getTerminator() && !harmless(inst)) alike = false;
    }
    std::set<llvm::BasicBlock*> after;
    work.assign(llvm::succ_begin(guard), llvm::succ_end(guard));
    while (!work.empty() && alike) {
      llvm::BasicBlock* b = work.back();
      work.pop_back();
      if (in_region.count(b) == 0 || !after.insert(b).second) continue;
      if (reaching.count(b) != 0) alike = false;
      for (llvm::BasicBlock* s : llvm::successors(b)) work.push_back(s);
    }
    if (!alike) continue;
    llvm::BasicBlock* skip = llvm::BasicBlock::Create(guard->getContext(), "skip.row", guard->getParent());
    llvm::IRBuilder<> b(skip);
    b.CreateStore(b.getInt32(static_cast<uint32_t>(*code)), exit_slot);
    b.CreateBr(r.after_inner);
    branch->getSuccessor(1)->removePredecessor(guard);
    branch->setSuccessor(1, skip);
  }
}

}  // namespace cujit::hostgen
