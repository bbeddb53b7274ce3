// LLVM 22 intrinsics -> the names libNVVM's two NVVM IR dialects read (see the header).
#include "nvvm_intrinsic_spelling.h"

#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace cujit::codegen {
namespace {

namespace Intrinsic = llvm::Intrinsic;

// A declaration of an older NVVM intrinsic, convergent where it is a barrier.
llvm::FunctionCallee older_intrinsic(llvm::Module& module, const std::string& name, llvm::FunctionType* type,
                                     bool barrier) {
  llvm::FunctionCallee callee = module.getOrInsertFunction(name, type);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    if (barrier) f->addFnAttr(llvm::Attribute::Convergent);
  }
  return callee;
}

// barrier.cta.{sync,red.*}.aligned.all(0, ...) -> barrier0(.popc/.and/.or), the
// reductions taking and giving an i32 where LLVM 22's and/or give an i1.
// Returns false for a call it does not rewrite.
bool rewrite_barrier(llvm::IntrinsicInst& call) {
  const char* name = nullptr;
  bool predicate_result = false;
  switch (call.getIntrinsicID()) {
    case Intrinsic::nvvm_barrier_cta_sync_aligned_all:
      name = "llvm.nvvm.barrier0";
      break;
    case Intrinsic::nvvm_barrier_cta_red_popc_aligned_all:
      name = "llvm.nvvm.barrier0.popc";
      break;
    case Intrinsic::nvvm_barrier_cta_red_and_aligned_all:
      name = "llvm.nvvm.barrier0.and", predicate_result = true;
      break;
    case Intrinsic::nvvm_barrier_cta_red_or_aligned_all:
      name = "llvm.nvvm.barrier0.or", predicate_result = true;
      break;
    default:
      return false;
  }
  auto* id = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(0));
  if (id == nullptr || !id->isZero()) return false;
  llvm::IRBuilder<> b(&call);
  llvm::Module& module = *call.getModule();
  llvm::Value* replacement;
  if (call.arg_size() == 1) {
    auto* type = llvm::FunctionType::get(b.getVoidTy(), false);
    replacement = b.CreateCall(older_intrinsic(module, name, type, true));
  } else {
    auto* type = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty()}, false);
    llvm::Value* r =
        b.CreateCall(older_intrinsic(module, name, type, true), {b.CreateZExt(call.getArgOperand(1), b.getInt32Ty())});
    replacement = predicate_result ? b.CreateICmpNE(r, b.getInt32(0)) : r;
  }
  call.replaceAllUsesWith(replacement);
  call.eraseFromParent();
  return true;
}

// LLVM 22's overloaded llvm.nvvm.fabs(.ftz) and llvm.nvvm.ex2.approx(.ftz) (libdevice's
// llvm.nvvm.fabs.f, .d... are upgraded to them on loading: .f32, .f64) -> LLVM 7's
// names, typed by a suffix .f or .d. Returns false for a call it does not rewrite.
bool rewrite_overloaded_float(llvm::IntrinsicInst& call) {
  switch (call.getIntrinsicID()) {
    case Intrinsic::nvvm_fabs:
    case Intrinsic::nvvm_fabs_ftz:
    case Intrinsic::nvvm_ex2_approx:
    case Intrinsic::nvvm_ex2_approx_ftz:
      break;
    default:
      return false;
  }
  llvm::Type* type = call.getType();
  if (!type->isFloatTy() && !type->isDoubleTy()) return false;
  std::string name = Intrinsic::getBaseName(call.getIntrinsicID()).str() + (type->isFloatTy() ? ".f" : ".d");
  llvm::IRBuilder<> b(&call);
  auto* fty = llvm::FunctionType::get(type, {type}, false);
  llvm::Value* r = b.CreateCall(older_intrinsic(*call.getModule(), name, fty, false), {call.getArgOperand(0)});
  call.replaceAllUsesWith(r);
  call.eraseFromParent();
  return true;
}

// A relaxed 32-bit atomicrmw uinc_wrap/udec_wrap -> LLVM 7's atom.inc/dec intrinsic.
void rewrite_wrapping_atomic(llvm::AtomicRMWInst& rmw) {
  using Op = llvm::AtomicRMWInst::BinOp;
  bool inc = rmw.getOperation() == Op::UIncWrap;
  if ((!inc && rmw.getOperation() != Op::UDecWrap) || !rmw.getType()->isIntegerTy(32) || rmw.isVolatile() ||
      rmw.getOrdering() != llvm::AtomicOrdering::Monotonic || rmw.getSyncScopeID() != llvm::SyncScope::System)
    return;
  llvm::IRBuilder<> b(&rmw);
  llvm::Value* ptr = rmw.getPointerOperand();
  std::string name = std::string("llvm.nvvm.atomic.load.") + (inc ? "inc" : "dec") + ".32.p" +
                     std::to_string(ptr->getType()->getPointerAddressSpace());
  auto* type = llvm::FunctionType::get(b.getInt32Ty(), {ptr->getType(), b.getInt32Ty()}, false);
  llvm::Value* r = b.CreateCall(older_intrinsic(*rmw.getModule(), name, type, false), {ptr, rmw.getValOperand()});
  rmw.replaceAllUsesWith(r);
  rmw.eraseFromParent();
}

}  // namespace

void spell_intrinsics_for_nvvm(llvm::Module& module, bool legacy) {
  std::vector<llvm::Instruction*> work;
  for (llvm::Function& f : module)
    for (llvm::Instruction& inst : llvm::instructions(f))
      if (llvm::isa<llvm::IntrinsicInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(inst)) work.push_back(&inst);
  const llvm::SyncScope::ID device = module.getContext().getOrInsertSyncScopeID("device");
  for (llvm::Instruction* inst : work) {
    // libNVVM's atomics are device-wide in the default scope (a plain atom), as numba-cuda's are.
    if (llvm::getAtomicSyncScopeID(inst) == device) llvm::setAtomicSyncScopeID(inst, llvm::SyncScope::System);
    if (llvm::isa<llvm::AtomicCmpXchgInst>(inst)) continue;
    if (llvm::isa<llvm::AtomicRMWInst>(inst) && !legacy) continue;
    if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(inst)) {
      if (!rewrite_barrier(*call) && legacy) rewrite_overloaded_float(*call);
    } else
      rewrite_wrapping_atomic(*llvm::cast<llvm::AtomicRMWInst>(inst));
  }
  for (llvm::Function& f : llvm::make_early_inc_range(module))
    if (f.isDeclaration() && f.use_empty() && f.isIntrinsic()) f.eraseFromParent();
}

}  // namespace cujit::codegen
