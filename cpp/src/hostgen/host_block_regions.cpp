// A block's threads as loops between its barriers (host_block_regions.h). The kernel is cloned; in the clone
// every cuda.syncthreads ends a region, and each region (the code a thread runs from one barrier, or the start, to
// the next barrier, or its return) becomes loops over the block's threads, x innermost unless the kernel's memory
// accesses run along y (host_access_order.cpp), a row of them ended early where the rest has nothing to do
// (host_row_skip.cpp). Values that a thread keeps from one region to a later one live in arrays with one element
// per thread (one slot for the block where every thread keeps the same value); what one region alone uses stays a
// scalar the optimiser keeps in registers. This is only right when every thread reaches the same barriers in the
// same order: the kernel qualifies when no barrier lies in code that a branch whose condition may differ between
// threads decides about (a divergence analysis over the clone, below); any other kernel keeps its fibers.
#include "host_block_regions.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include "cujit/host_context.h"
#include "host_block_parts.h"

namespace cujit::hostgen {
namespace {

using target::HostCollective;
using target::HostThreadContext;

// What a thread may keep across barriers (one copy per thread of the block, on the block function's frame).
constexpr uint64_t kMaxThreadBytes = 4096;

// The HostCollective kind of a collective call, or -1 for any other instruction.
int collective_kind(const llvm::Instruction& inst) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
  llvm::MDNode* md = call != nullptr ? call->getMetadata(target::kHostCollectiveMetadata) : nullptr;
  if (md == nullptr) return -1;
  return static_cast<int>(llvm::mdconst::extract<llvm::ConstantInt>(md->getOperand(0))->getZExtValue());
}

// The kernel's module qualifies: the only calls through pointers are the kernel's own block barriers (no warp
// function, barrier reduction, grid sync, sleep or spin hook anywhere).
bool only_kernel_barriers(const llvm::Function& kernel) {
  for (const llvm::Function& f : *kernel.getParent())
    for (const llvm::BasicBlock& block : f)
      for (const llvm::Instruction& inst : block) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
        if (call == nullptr || call->getCalledFunction() != nullptr) continue;
        if (&f != &kernel || collective_kind(inst) != static_cast<int>(HostCollective::Barrier)) return false;
      }
  return true;
}

// An instruction that only computes (no memory, no control flow, safe to run anywhere): what the set-up block may
// make once, or a region make again.
bool pure_computation(const llvm::Instruction& inst) {
  return !inst.isTerminator() && !llvm::isa<llvm::PHINode>(inst) && !llvm::isa<llvm::AllocaInst>(inst) &&
         !inst.mayReadOrWriteMemory() && llvm::isSafeToSpeculativelyExecute(&inst);
}

// The blocks reachable from `from` without passing through `stop` (which is included when reached) or a block of
// `barriers`.
std::set<llvm::BasicBlock*> reach(llvm::BasicBlock* from, const llvm::BasicBlock* stop,
                                  const std::set<llvm::BasicBlock*>& barriers = {}) {
  std::set<llvm::BasicBlock*> seen;
  std::vector<llvm::BasicBlock*> work{from};
  while (!work.empty()) {
    llvm::BasicBlock* b = work.back();
    work.pop_back();
    if (!seen.insert(b).second || b == stop || barriers.count(b) != 0) continue;
    for (llvm::BasicBlock* s : llvm::successors(b)) work.push_back(s);
  }
  return seen;
}

// Whether every barrier call of `f` (its context is argument 0) is reached by all of a block's threads alike.
// Divergent values: the thread's ids, loads from memory, call results, the addresses of the thread's locals, and
// what depends on them, including phis where the paths of a divergent branch meet and values a divergent region
// hands out. A barrier inside the region of a divergent branch (the blocks between it and its immediate
// post-dominator) disqualifies the kernel.
bool barriers_are_uniform(llvm::Function& f, const std::vector<llvm::CallInst*>& barriers,
                          std::set<const llvm::Value*>& divergent) {
  std::vector<const llvm::Value*> work;
  auto mark = [&](const llvm::Value* v) {
    if (divergent.insert(v).second) work.push_back(v);
  };
  for (llvm::BasicBlock& block : f)
    for (llvm::Instruction& inst : block) {
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
        if (!reads_block_field(*load)) mark(load);
      } else if ((llvm::isa<llvm::CallBase>(inst) && !inst.getType()->isVoidTy()) ||
                 llvm::isa<llvm::AtomicRMWInst>(inst) || llvm::isa<llvm::AtomicCmpXchgInst>(inst) ||
                 llvm::isa<llvm::AllocaInst>(inst)) {  // (each thread has its own locals: their addresses differ)
        mark(&inst);
      }
    }
  std::set<llvm::BasicBlock*> barrier_blocks;
  for (llvm::CallInst* call : barriers) barrier_blocks.insert(call->getParent());
  llvm::PostDominatorTree post(f);
  std::set<const llvm::Instruction*> seen_branches;
  for (bool changed = true; changed;) {
    while (!work.empty()) {
      const llvm::Value* v = work.back();
      work.pop_back();
      for (const llvm::User* user : v->users())
        if (llvm::isa<llvm::Instruction>(user) && !llvm::isa<llvm::StoreInst>(user)) mark(user);
    }
    changed = false;
    for (llvm::BasicBlock& block : f) {
      llvm::Instruction* term = block.getTerminator();
      const llvm::Value* condition = nullptr;
      if (auto* br = llvm::dyn_cast<llvm::BranchInst>(term); br != nullptr && br->isConditional())
        condition = br->getCondition();
      else if (auto* sw = llvm::dyn_cast<llvm::SwitchInst>(term))
        condition = sw->getCondition();
      if (condition == nullptr || divergent.count(condition) == 0 || !seen_branches.insert(term).second) continue;
      changed = true;
      llvm::DomTreeNode* node = post.getNode(&block);
      const llvm::BasicBlock* join =
          node != nullptr && node->getIDom() != nullptr ? node->getIDom()->getBlock() : nullptr;
      std::map<llvm::BasicBlock*, int> reached;
      std::set<llvm::BasicBlock*> region;
      for (llvm::BasicBlock* s : llvm::successors(&block))
        for (llvm::BasicBlock* b : reach(s, join)) {
          ++reached[b];
          if (b != join) region.insert(b);
        }
      for (llvm::BasicBlock* b : barrier_blocks)
        if (region.count(b) != 0) return false;  // a barrier only some threads may reach
      for (auto [b, count] : reached)
        if (count > 1)
          for (llvm::PHINode& phi : b->phis()) mark(&phi);
      for (llvm::BasicBlock* b : region)
        for (llvm::Instruction& inst : *b)
          for (const llvm::User* user : inst.users())
            if (auto* ui = llvm::dyn_cast<llvm::Instruction>(user);
                ui != nullptr && region.count(const_cast<llvm::BasicBlock*>(ui->getParent())) == 0)
              mark(&inst);
    }
  }
  return true;
}

// Computations the same for every thread and every region (of constants, arguments and the block's fields of the
// context: an array's descriptor for shared memory, the grid's size) move to the set-up block, where they are made
// once; otherwise each would be a value kept per thread across barriers.
void hoist_block_invariants(llvm::Function& f, llvm::Instruction* before) {
  llvm::BasicBlock* setup = before->getParent();
  // (not an alloca's address: what a thread allocates may become one copy per thread, addressed in each region)
  auto invariant_operand = [&](const llvm::Value* v) {
    const auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
    return inst == nullptr ? !llvm::isa<llvm::BasicBlock>(v)
                           : inst->getParent() == setup && !llvm::isa<llvm::AllocaInst>(inst);
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (llvm::BasicBlock& block : f) {
      if (&block == setup) continue;
      for (llvm::Instruction& inst : llvm::make_early_inc_range(block)) {
        const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
        if (!(load != nullptr ? reads_block_field(*load) : pure_computation(inst))) continue;
        if (!std::all_of(inst.op_begin(), inst.op_end(),
                         [&](const llvm::Use& u) { return invariant_operand(u.get()); }))
          continue;
        inst.moveBefore(before->getIterator());
        moved = true;
      }
    }
  }
}

// Computations of the thread's ids alone (with what the set-up block holds: grid indices, thread positions) are
// made again in each block that uses them, instead of being kept per thread across barriers: the thread's ids are
// in the context in every region.
void rematerialize_thread_values(llvm::Function& f, llvm::BasicBlock* setup) {
  std::set<const llvm::Instruction*> pure;
  auto pure_operand = [&](const llvm::Value* v) {
    const auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
    return inst == nullptr ? !llvm::isa<llvm::BasicBlock>(v) : inst->getParent() == setup || pure.count(inst) != 0;
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (llvm::BasicBlock& block : f) {
      if (&block == setup) continue;
      for (llvm::Instruction& inst : block) {
        if (pure.count(&inst) != 0) continue;
        const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
        const bool ok = load != nullptr ? reads_thread_id(*load) : pure_computation(inst);
        if (ok &&
            std::all_of(inst.op_begin(), inst.op_end(), [&](const llvm::Use& u) { return pure_operand(u.get()); })) {
          pure.insert(&inst);
          grew = true;
        }
      }
    }
  }
  std::map<std::pair<llvm::BasicBlock*, const llvm::Instruction*>, llvm::Instruction*> made;
  std::map<llvm::BasicBlock*, llvm::Instruction*> anchor;
  std::function<llvm::Value*(llvm::Instruction*, llvm::BasicBlock*)> materialize = [&](llvm::Instruction* inst,
                                                                                       llvm::BasicBlock* where) {
    if (inst->getParent() == where || inst->getParent() == setup || pure.count(inst) == 0)
      return static_cast<llvm::Value*>(inst);
    auto found = made.find({where, inst});
    if (found != made.end()) return static_cast<llvm::Value*>(found->second);
    llvm::Instruction* copy = inst->clone();
    for (llvm::Use& op : copy->operands())
      if (auto* oi = llvm::dyn_cast<llvm::Instruction>(op.get())) op.set(materialize(oi, where));
    auto at = anchor.find(where);
    if (at == anchor.end()) at = anchor.emplace(where, &*where->getFirstInsertionPt()).first;
    copy->insertBefore(at->second->getIterator());
    made[{where, inst}] = copy;
    return static_cast<llvm::Value*>(copy);
  };
  std::vector<const llvm::Instruction*> values(pure.begin(), pure.end());
  for (const llvm::Instruction* c : values) {
    auto* inst = const_cast<llvm::Instruction*>(c);
    for (llvm::Use& use : llvm::make_early_inc_range(inst->uses())) {
      auto* user = llvm::cast<llvm::Instruction>(use.getUser());
      llvm::BasicBlock* where = user->getParent();
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user)) where = phi->getIncomingBlock(use);
      if (where != inst->getParent() && where != setup) use.set(materialize(inst, where));
    }
  }
}

void build_loops(Region& r, llvm::Function& f, llvm::Value* context, llvm::Value* const (&extent)[3],
                 const int (&order)[3]) {
  llvm::LLVMContext& c = f.getContext();
  r.pre = llvm::BasicBlock::Create(c, "region.pre", &f);
  llvm::IRBuilder<> b(r.pre);
  llvm::PHINode* index[3];
  llvm::BasicBlock* body[3];
  llvm::BasicBlock* from = r.pre;
  for (int level = 2; level >= 0; --level) {
    const int axis = order[level];
    body[axis] = llvm::BasicBlock::Create(c, std::string("region.") + "xyz"[axis], &f);
    b.CreateBr(body[axis]);
    b.SetInsertPoint(body[axis]);
    index[axis] = b.CreatePHI(b.getInt32Ty(), 2);
    index[axis]->addIncoming(b.getInt32(0), from);
    b.CreateAlignedStore(index[axis], b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), context, kTidOffset + 4 * axis),
                         llvm::Align(4));
    from = body[axis];
  }
  r.head = body[order[0]];
  auto wide = [&](int axis) { return b.CreateZExt(index[axis], b.getInt64Ty()); };
  auto dim = [&](int axis) { return b.CreateZExt(extent[axis], b.getInt64Ty()); };
  r.linear =
      b.CreateAdd(wide(order[0]),
                  b.CreateMul(dim(order[0]), b.CreateAdd(wide(order[1]), b.CreateMul(dim(order[1]), wide(order[2])))),
                  "thread.linear", true, true);
  b.CreateBr(r.blocks.front());
  r.latch = llvm::BasicBlock::Create(c, "region.latch", &f);
  b.SetInsertPoint(r.latch);
  for (int axis : order) {
    llvm::Value* next = b.CreateAdd(index[axis], b.getInt32(1), "", true, true);
    llvm::BasicBlock* at = b.GetInsertBlock();
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(c, std::string("region.after.") + "xyz"[axis], &f);
    b.CreateCondBr(b.CreateICmpULT(next, extent[axis]), body[axis], exit);
    index[axis]->addIncoming(next, at);
    b.SetInsertPoint(exit);
    if (r.after_inner == nullptr) r.after_inner = exit;
  }
  r.dispatch = b.GetInsertBlock();
}

// The regions that use the memory `a` allocates: through the pointer itself or any pointer made from it,
// including one a region stores (in a slot reg2mem made) and another loads.
std::set<std::size_t> regions_using(llvm::AllocaInst* a,
                                    const std::map<const llvm::BasicBlock*, std::size_t>& region_of_block) {
  std::set<std::size_t> regions;
  std::set<const llvm::Value*> seen{a};
  std::vector<const llvm::Value*> work{a};
  auto add = [&](const llvm::Value* v) {
    if (seen.insert(v).second) work.push_back(v);
  };
  while (!work.empty()) {
    const llvm::Value* v = work.back();
    work.pop_back();
    for (const llvm::User* user : v->users()) {
      const auto* inst = llvm::cast<llvm::Instruction>(user);
      auto found = region_of_block.find(inst->getParent());
      if (found != region_of_block.end()) regions.insert(found->second);
      if (llvm::isa<llvm::GetElementPtrInst>(inst) || llvm::isa<llvm::CastInst>(inst) ||
          llvm::isa<llvm::SelectInst>(inst) || llvm::isa<llvm::PHINode>(inst) ||
          llvm::isa<llvm::InsertValueInst>(inst) || llvm::isa<llvm::ExtractValueInst>(inst)) {
        add(inst);  // (an array's pointer goes into its struct, and out again)
      } else if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(inst);
                 store != nullptr && store->getValueOperand() == v) {
        add(llvm::getUnderlyingObject(store->getPointerOperand()));  // kept in memory: whoever loads it has it
      } else if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(inst);
                 load != nullptr && load->getPointerOperand() == v &&
                 (load->getType()->isPointerTy() || load->getType()->isAggregateType())) {
        add(load);
      }
    }
  }
  return regions;
}

// A slot of a value the same in every thread, kept across barriers: one for the block, every thread storing the
// same value in it. Every thread starts region `r` with the value the slot held at the region's start, read once
// before the loops over the threads: the region's reads that no store of the thread precedes read that copy, so
// the optimiser sees a loop bound such as `t < step` as invariant (and can split and vectorise the loop); a read
// after a store of the thread reads the slot, which each thread sets back to that copy when it starts the region
// (a read after a store on some path, a loop's header, must not see an earlier thread's store).
void share_uniform_slot(Region& r, llvm::AllocaInst* slot) {
  llvm::Type* type = slot->getAllocatedType();
  std::set<const llvm::BasicBlock*> in_region(r.blocks.begin(), r.blocks.end());
  auto stores_here = [&](const llvm::BasicBlock& b) {
    for (const llvm::Instruction& inst : b)
      if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
          store != nullptr && store->getPointerOperand() == slot)
        return true;
    return false;
  };
  // The blocks a store of the thread may have run before (forward, through the region's own edges).
  std::set<const llvm::BasicBlock*> after_store;
  std::vector<const llvm::BasicBlock*> work;
  for (const llvm::BasicBlock* b : r.blocks)
    if (stores_here(*b))
      for (const llvm::BasicBlock* s : llvm::successors(b)) work.push_back(s);
  while (!work.empty()) {
    const llvm::BasicBlock* b = work.back();
    work.pop_back();
    if (in_region.count(b) == 0 || !after_store.insert(b).second) continue;
    for (const llvm::BasicBlock* s : llvm::successors(b)) work.push_back(s);
  }
  llvm::LoadInst* at_entry = llvm::IRBuilder<>(r.pre->getTerminator()).CreateLoad(type, slot, "uniform.at.entry");
  llvm::IRBuilder<>(r.head->getTerminator()).CreateStore(at_entry, slot);
  for (llvm::BasicBlock* b : r.blocks) {
    if (after_store.count(b) != 0) continue;
    for (llvm::Instruction& inst : llvm::make_early_inc_range(*b)) {
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst); store != nullptr && store->getPointerOperand() == slot)
        break;  // the rest of the block reads the thread's own
      auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
      if (load == nullptr || load->getPointerOperand() != slot || load->getType() != type) continue;
      load->replaceAllUsesWith(at_entry);
      load->eraseFromParent();
    }
  }
}

}  // namespace

// The offset of the field of the context (argument 0) that a (non-volatile) `load` reads, if it reads one.
std::optional<int64_t> context_offset(const llvm::LoadInst& load) {
  const llvm::Function& f = *load.getFunction();
  int64_t offset = 0;
  const llvm::Value* base =
      llvm::GetPointerBaseWithConstantOffset(load.getPointerOperand(), offset, f.getParent()->getDataLayout());
  if (load.isVolatile() || base != f.getArg(0)) return std::nullopt;
  return offset;
}

// Whether `load` reads one of the thread's ids from the context.
bool reads_thread_id(const llvm::LoadInst& load) {
  std::optional<int64_t> offset = context_offset(load);
  return offset && *offset >= kTidOffset && *offset < kTidOffset + 3 * 4;
}

// Whether `load` reads a field of the context that is the same for every thread of the block and never written:
// the block's and grid's ids and dimensions, shared memory, the hooks.
bool reads_block_field(const llvm::LoadInst& load) {
  std::optional<int64_t> offset = context_offset(load);
  return offset && *offset >= kTidOffset + 3 * 4 && *offset < kCountersOffset;
}

llvm::Function* make_block_regions(llvm::Function& kernel, uint64_t& thread_bytes, int& blocks_axis) {
  thread_bytes = 0;
  blocks_axis = 0;
  if (!only_kernel_barriers(kernel)) return nullptr;
  llvm::ValueToValueMapTy cloned;
  llvm::Function* f = llvm::CloneFunction(&kernel, cloned);
  f->setName(kernel.getName() + ".block");
  f->setLinkage(llvm::GlobalValue::InternalLinkage);
  // It writes the threads' ids into its context.
  f->removeFnAttr(llvm::Attribute::Memory);
  for (auto kind : {llvm::Attribute::NoAlias, llvm::Attribute::ReadOnly, llvm::Attribute::ReadNone})
    f->removeParamAttr(0, kind);
  auto give_up = [f]() -> llvm::Function* {
    f->eraseFromParent();
    return nullptr;
  };
  {  // Variables into registers first: what stays in memory would look divergent.
    llvm::PassBuilder pb;
    llvm::FunctionAnalysisManager fam;
    pb.registerFunctionAnalyses(fam);
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.run(*f, fam);
  }
  llvm::removeUnreachableBlocks(*f);  // (a region is what its entry reaches: no phi may name a block outside)
  std::vector<llvm::CallInst*> barriers;
  for (llvm::BasicBlock& block : *f)
    for (llvm::Instruction& inst : block) {
      if (collective_kind(inst) == static_cast<int>(HostCollective::Barrier))
        barriers.push_back(llvm::cast<llvm::CallInst>(&inst));
      if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&inst); a != nullptr && !a->isStaticAlloca()) return give_up();
    }
  std::set<const llvm::Value*> divergent;
  if (!barriers.empty() && !barriers_are_uniform(*f, barriers, divergent)) return give_up();
  const auto [inner, block_axis] = contiguous_axes(*f);
  const int order[3] = {inner, inner == 0 ? 1 : 0, 2};
  blocks_axis = block_axis;

  llvm::LLVMContext& c = f->getContext();
  const llvm::DataLayout& dl = f->getParent()->getDataLayout();
  llvm::Value* context = f->getArg(0);
  llvm::BasicBlock* old_entry = &f->getEntryBlock();
  // The set-up block: the block's extent, the allocas, where the threads left the last region.
  llvm::BasicBlock* setup = llvm::BasicBlock::Create(c, "block.setup", f, old_entry);
  llvm::IRBuilder<> sb(setup);
  llvm::Value* extent[3];
  for (int axis = 0; axis < 3; ++axis)
    extent[axis] = sb.CreateAlignedLoad(
        sb.getInt32Ty(), sb.CreateConstInBoundsGEP1_64(sb.getInt8Ty(), context, kBlockDimOffset + 4 * axis),
        llvm::Align(4), "block.dim");
  llvm::Value* threads =
      sb.CreateMul(sb.CreateZExt(extent[0], sb.getInt64Ty()),
                   sb.CreateMul(sb.CreateZExt(extent[1], sb.getInt64Ty()), sb.CreateZExt(extent[2], sb.getInt64Ty())));
  llvm::AllocaInst* exit_slot = sb.CreateAlloca(sb.getInt32Ty(), nullptr, "region.exit");
  llvm::BranchInst* setup_br = sb.CreateBr(old_entry);
  for (llvm::Instruction& inst : llvm::make_early_inc_range(*old_entry))
    if (llvm::isa<llvm::AllocaInst>(inst)) inst.moveBefore(setup_br->getIterator());

  // Each barrier becomes an empty block of its own between the code before and after it.
  std::vector<llvm::BasicBlock*> barrier_blocks, after_blocks;
  for (llvm::CallInst* call : barriers) {
    llvm::BasicBlock* before = call->getParent();
    llvm::BasicBlock* after = before->splitBasicBlock(call->getNextNode(), "after.barrier");
    llvm::BasicBlock* mark = llvm::BasicBlock::Create(c, "barrier", f, after);
    llvm::BranchInst::Create(after, mark);
    before->getTerminator()->setSuccessor(0, mark);
    llvm::Value* hook = call->getCalledOperand();
    if (!call->use_empty()) call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), 0));
    call->eraseFromParent();
    if (auto* h = llvm::dyn_cast<llvm::Instruction>(hook); h != nullptr && h->use_empty()) h->eraseFromParent();
    barrier_blocks.push_back(mark);
    after_blocks.push_back(after);
  }
  std::vector<llvm::BasicBlock*> originals;
  for (llvm::BasicBlock& block : *f)
    if (&block != setup) originals.push_back(&block);
  std::set<const llvm::AllocaInst*> uniform_slots;  // reg2mem's slots of values the same in every thread
  if (!barriers.empty()) {
    hoist_block_invariants(*f, setup_br);
    rematerialize_thread_values(*f, setup);
    // No SSA value crosses a block (reg2mem): the regions' blocks can then be cloned one by one. (Without
    // barriers the one region is the whole function, cloned as it is.)
    std::vector<llvm::PHINode*> phis;
    for (llvm::BasicBlock* block : originals)
      for (llvm::PHINode& phi : block->phis()) phis.push_back(&phi);
    for (llvm::PHINode* phi : phis) {
      const bool uniform = divergent.count(phi) == 0;
      llvm::AllocaInst* slot = llvm::DemotePHIToStack(phi, setup_br->getIterator());
      if (slot == nullptr) continue;
      if (uniform)
        uniform_slots.insert(slot);
      else  // the load that took the phi's place is as divergent as the phi (it may be demoted next)
        for (const llvm::User* user : slot->users())
          if (llvm::isa<llvm::LoadInst>(user)) divergent.insert(user);
    }
    std::vector<llvm::Instruction*> escaping;
    for (llvm::BasicBlock* block : originals)
      for (llvm::Instruction& inst : *block) {
        if (llvm::isa<llvm::AllocaInst>(inst)) continue;
        for (const llvm::User* user : inst.users())
          if (llvm::cast<llvm::Instruction>(user)->getParent() != block) {
            escaping.push_back(&inst);
            break;
          }
      }
    for (llvm::Instruction* inst : escaping) {
      const bool uniform = divergent.count(inst) == 0;
      llvm::AllocaInst* slot = llvm::DemoteRegToStack(*inst, false, setup_br->getIterator());
      if (uniform && slot != nullptr) uniform_slots.insert(slot);
    }
  }

  // The regions: from the start and from each barrier to the next barriers and returns.
  const std::set<llvm::BasicBlock*> barrier_set(barrier_blocks.begin(), barrier_blocks.end());
  std::vector<llvm::BasicBlock*> entries{old_entry};
  entries.insert(entries.end(), after_blocks.begin(), after_blocks.end());
  std::vector<Region> regions(entries.size());
  std::vector<std::map<const llvm::Value*, const llvm::Value*>> original_of(entries.size());  // a clone's original
  std::map<const llvm::BasicBlock*, std::size_t> region_of_block;
  llvm::BasicBlock* returning = llvm::BasicBlock::Create(c, "block.return", f);
  llvm::ReturnInst::Create(c, returning);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Region& r = regions[i];
    llvm::ValueToValueMapTy map;
    std::vector<llvm::BasicBlock*> originals_here;
    for (llvm::BasicBlock* b : reach(entries[i], nullptr, barrier_set))
      if (barrier_set.count(b) == 0) originals_here.push_back(b);
    // (the entry first: the loops enter the region there)
    std::stable_partition(originals_here.begin(), originals_here.end(),
                          [&](llvm::BasicBlock* b) { return b == entries[i]; });
    for (llvm::BasicBlock* b : originals_here) {
      llvm::BasicBlock* copy = llvm::CloneBasicBlock(b, map, ".r" + std::to_string(i), f);
      map[b] = copy;
      r.blocks.push_back(copy);
      region_of_block[copy] = i;
    }
    llvm::remapInstructionsInBlocks(r.blocks, map);
    for (const auto& [original, copy] : map) original_of[i][copy] = original;
    build_loops(r, *f, context, extent, order);
    // A thread leaves the region at a barrier (its index) or a return (-1): the latch, then the next thread.
    for (llvm::BasicBlock* copy : r.blocks) {
      llvm::Instruction* term = copy->getTerminator();
      if (llvm::isa<llvm::ReturnInst>(term)) {
        llvm::IRBuilder<> b(term);
        b.CreateStore(b.getInt32(-1), exit_slot);
        b.CreateBr(r.latch);
        term->eraseFromParent();
        continue;
      }
      for (unsigned s = 0; s < term->getNumSuccessors(); ++s) {
        auto found = std::find(barrier_blocks.begin(), barrier_blocks.end(), term->getSuccessor(s));
        if (found == barrier_blocks.end()) continue;
        llvm::BasicBlock* stub = llvm::BasicBlock::Create(c, "to.barrier", f);
        llvm::IRBuilder<> b(stub);
        b.CreateStore(b.getInt32(static_cast<int32_t>(found - barrier_blocks.begin())), exit_slot);
        b.CreateBr(r.latch);
        term->setSuccessor(s, stub);
      }
    }
  }
  if (!barriers.empty())
    for (std::size_t i = 0; i < regions.size(); ++i) {
      RegionUniformity uniform(original_of[i], region_of_block, divergent, uniform_slots);
      skip_rows_past_guards(regions[i], order[0], exit_slot, uniform);
    }
  // After a region's loops: every thread left it the same way (the kernel qualified); on to the next region.
  for (Region& r : regions) {
    llvm::IRBuilder<> b(r.dispatch);
    llvm::SwitchInst* next = b.CreateSwitch(b.CreateLoad(b.getInt32Ty(), exit_slot), returning, after_blocks.size());
    for (std::size_t k = 0; k < after_blocks.size(); ++k)
      next->addCase(b.getInt32(static_cast<uint32_t>(k)), regions[k + 1].pre);
  }
  setup_br->setSuccessor(0, regions[0].pre);
  // Nothing outside the originals may still name one of them (a value the regions did not take along): such a
  // function would be broken, and the kernel keeps its fibers instead.
  const std::set<const llvm::BasicBlock*> original_set(originals.begin(), originals.end());
  for (llvm::BasicBlock* block : originals) {
    for (const llvm::User* user : block->users()) {
      const auto* inst = llvm::dyn_cast<llvm::Instruction>(user);  // (a blockaddress is not one)
      if (inst == nullptr || original_set.count(inst->getParent()) == 0) return give_up();
    }
    for (const llvm::Instruction& inst : *block)
      for (const llvm::User* user : inst.users())
        if (original_set.count(llvm::cast<llvm::Instruction>(user)->getParent()) == 0) return give_up();
  }
  for (llvm::BasicBlock* block : originals) block->dropAllReferences();
  for (llvm::BasicBlock* block : originals) block->eraseFromParent();

  // Memory a thread uses in more than one region: one element per thread, indexed by its linear id; a slot of a
  // value the same in every thread stays one for the block (share_uniform_slot).
  std::vector<llvm::AllocaInst*> allocas;
  for (llvm::Instruction& inst : *setup)
    if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&inst); a != nullptr && a != exit_slot) allocas.push_back(a);
  for (llvm::AllocaInst* a : allocas) {
    if (a->getMetadata(target::kHostScratchMetadata) != nullptr) continue;  // written and read at one call
    std::set<std::size_t> used_in = regions_using(a, region_of_block);
    if (used_in.size() < 2) continue;
    if (uniform_slots.count(a) != 0) {
      for (std::size_t i : used_in) share_uniform_slot(regions[i], a);
      continue;
    }
    llvm::Type* type = a->getAllocatedType();
    if (auto* count = llvm::dyn_cast<llvm::ConstantInt>(a->getArraySize()); count != nullptr && !count->isOne())
      type = llvm::ArrayType::get(type, count->getZExtValue());
    const uint64_t bytes = dl.getTypeAllocSize(type);
    thread_bytes += (bytes + 15) / 16 * 16;
    if (thread_bytes > kMaxThreadBytes) return give_up();
    auto* per_thread = new llvm::AllocaInst(type, a->getAddressSpace(), threads, a->getAlign(),
                                            a->getName() + ".threads", setup_br->getIterator());
    std::map<std::size_t, llvm::Value*> element;
    for (std::size_t i : used_in) {
      llvm::IRBuilder<> b(regions[i].head->getTerminator());
      element[i] = b.CreateInBoundsGEP(type, per_thread, {regions[i].linear});
    }
    for (llvm::Use& use : llvm::make_early_inc_range(a->uses())) {
      auto* user = llvm::cast<llvm::Instruction>(use.getUser());
      if (user->isLifetimeStartOrEnd()) {
        user->eraseFromParent();
        continue;
      }
      auto found = region_of_block.find(user->getParent());
      if (found != region_of_block.end()) use.set(element[found->second]);
    }
    if (a->use_empty()) a->eraseFromParent();
  }
  if (llvm::verifyFunction(*f)) return give_up();
  return f;
}

}  // namespace cujit::hostgen
