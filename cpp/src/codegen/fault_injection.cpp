// Planted defects for the tests of fatal-error recovery (see inject_fault in
// codegen.h): real LLVM failures, not simulated ones, so the tests prove the
// path a cujit bug would take.
#include "fault_injection.h"

#include <atomic>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsX86.h>

namespace cujit::codegen {
namespace {
std::atomic<InjectedFault> g_fault{InjectedFault::kNone};

llvm::IRBuilder<> planted_function(llvm::Module& module, const char* name, llvm::Type* ret,
                                   std::vector<llvm::Type*> params) {
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(ret, params, false), llvm::GlobalValue::ExternalLinkage,
                                    name, module);
  return llvm::IRBuilder<>(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
}
}  // namespace

void inject_fault(InjectedFault fault) { g_fault = fault; }

void plant_after_lowering(llvm::Module& module) {
  if (g_fault != InjectedFault::kInvalidIr) return;
  // A block without a terminator.
  auto* i32 = llvm::Type::getInt32Ty(module.getContext());
  planted_function(module, "cujit_planted_invalid_ir", i32, {i32})
      .CreateAdd(llvm::ConstantInt::get(i32, 1), llvm::ConstantInt::get(i32, 2));
}

void plant_before_codegen(llvm::Module& module) {
  if (g_fault != InjectedFault::kUnselectable) return;
  // A call of another target's intrinsic is valid IR that NVPTX instruction
  // selection cannot select: LLVM reports a fatal error in the middle of its run.
  auto* i32 = llvm::Type::getInt32Ty(module.getContext());
  auto b = planted_function(module, "cujit_planted_unselectable", i32, {i32, i32});
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Function* foreign = llvm::Intrinsic::getOrInsertDeclaration(&module, llvm::Intrinsic::x86_sse42_crc32_32_32);
  b.CreateRet(b.CreateCall(foreign, {fn->getArg(0), fn->getArg(1)}));
}

}  // namespace cujit::codegen
