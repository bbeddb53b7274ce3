// Interrupt polls and frame sizes for kernels compiled for the host
// (host_interrupts.h). A kernel spinning forever on the CPU target must still
// answer Ctrl-C: the runtime raises a flag, and every loop of compiled code
// looks at it once per iteration. A kernel whose locals cannot fit a thread's
// stack is refused at launch from the frame size measured here, instead of
// overrunning the stack.
#include "host_interrupts.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "cujit/host_context.h"

namespace cujit::hostgen {

void add_interrupt_polls(llvm::Module& module) {
  auto& ctx = module.getContext();
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  auto* flag = llvm::cast<llvm::GlobalVariable>(module.getOrInsertGlobal(target::kHostInterruptFlagSymbol, i32));
  llvm::FunctionCallee stop = module.getOrInsertFunction(target::kHostInterruptedFunction, llvm::Type::getVoidTy(ctx));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(stop.getCallee())) {
    fn->setDoesNotReturn();
    fn->setDoesNotThrow();
    fn->addFnAttr(llvm::Attribute::Cold);
  }
  llvm::MDNode* unlikely = llvm::MDBuilder(ctx).createUnlikelyBranchWeights();
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    std::vector<llvm::BasicBlock*> headers;
    {
      llvm::DominatorTree dt(f);
      llvm::LoopInfo loops(dt);
      for (llvm::Loop* loop : loops.getLoopsInPreorder()) headers.push_back(loop->getHeader());
    }
    for (llvm::BasicBlock* header : headers) {
      llvm::BasicBlock::iterator at = header->getFirstInsertionPt();
      llvm::IRBuilder<> b(header, at);
      llvm::LoadInst* raised = b.CreateAlignedLoad(i32, flag, llvm::Align(4), "interrupt");
      raised->setAtomic(llvm::AtomicOrdering::Monotonic);
      llvm::Instruction* then =
          llvm::SplitBlockAndInsertIfThen(b.CreateICmpNE(raised, b.getInt32(0)), at, /*Unreachable=*/true, unlikely);
      llvm::IRBuilder<>(then).CreateCall(stop);
    }
  }
}

llvm::Error add_interrupt_symbols(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  symbols[jit.mangleAndIntern(target::kHostInterruptFlagSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&target::host_interrupt_requested), llvm::JITSymbolFlags::Exported};
  symbols[jit.mangleAndIntern(target::kHostInterruptedFunction)] = {
      llvm::orc::ExecutorAddr::fromPtr(&target::host_interrupted),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

namespace {

uint64_t frame_bytes(const llvm::Function& f, const llvm::DataLayout& layout,
                     std::map<const llvm::Function*, uint64_t>& known, std::set<const llvm::Function*>& open) {
  if (auto it = known.find(&f); it != known.end()) return it->second;
  if (!open.insert(&f).second) return 0;  // recursion: its frames are counted once
  uint64_t own = 0, deepest_call = 0;
  for (const llvm::BasicBlock& block : f)
    for (const llvm::Instruction& inst : block) {
      if (const auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
        if (auto size = alloca->getAllocationSize(layout); size && !size->isScalable())
          own += alloca->getAlign().value() + size->getFixedValue();
      } else if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
        const llvm::Function* callee = call->getCalledFunction();
        if (callee != nullptr && !callee->isDeclaration())
          deepest_call = std::max(deepest_call, frame_bytes(*callee, layout, known, open));
      }
    }
  open.erase(&f);
  return known[&f] = own + deepest_call;
}

}  // namespace

uint64_t static_frame_bytes(const llvm::Module& module, const char* name) {
  const llvm::Function* f = module.getFunction(name);
  if (f == nullptr || f->isDeclaration()) return 0;
  std::map<const llvm::Function*, uint64_t> known;
  std::set<const llvm::Function*> open;
  return frame_bytes(*f, module.getDataLayout(), known, open);
}

}  // namespace cujit::hostgen
