// The host target's hooks (cujit/target.h): kernels compiled for the CPU read
// their thread's ids, dimensions and block's shared memory from the per-thread
// context the host runtime passes (target::HostThreadContext), and wait at a
// barrier by calling the runtime's hook, which switches to the block's next
// fiber. A module's static shared buffers are laid out one after another in the
// block's shared memory; their total is the module's __cujit_static_shared_bytes.
#include <cstddef>

#include <llvm/IR/Module.h>

#include "cujit/target.h"

namespace cujit::target {
namespace {

llvm::Value* field_address(llvm::IRBuilder<>& b, llvm::Value* context, size_t offset) {
  return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), context, offset);
}

llvm::Value* load_pointer(llvm::IRBuilder<>& b, llvm::Value* context, size_t offset) {
  auto* load = b.CreateAlignedLoad(b.getPtrTy(), field_address(b, context, offset), llvm::Align(8));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return load;
}

// Reserves `bytes` (16-byte aligned) of the block's static shared memory; returns the offset.
uint64_t reserve_shared(llvm::Module& module, uint64_t bytes) {
  auto* i64 = llvm::Type::getInt64Ty(module.getContext());
  llvm::GlobalVariable* total = module.getNamedGlobal(kHostSharedBytesSymbol);
  if (total == nullptr)
    total = new llvm::GlobalVariable(module, i64, true, llvm::GlobalValue::ExternalLinkage,
                                     llvm::ConstantInt::get(i64, 0), kHostSharedBytesSymbol);
  uint64_t offset = llvm::cast<llvm::ConstantInt>(total->getInitializer())->getZExtValue();
  offset = (offset + 15) / 16 * 16;
  total->setInitializer(llvm::ConstantInt::get(i64, offset + bytes));
  return offset;
}

class HostTarget final : public Target {
 public:
  const char* name() const override { return "host"; }
  bool has_context() const override { return true; }

  llvm::Value* special_register(llvm::IRBuilder<>& b, llvm::Value* context, SpecialRegister reg,
                                int axis) const override {
    size_t offset = offsetof(HostThreadContext, registers) + (static_cast<size_t>(reg) * 3 + axis) * 4;
    auto* load = b.CreateAlignedLoad(b.getInt32Ty(), field_address(b, context, offset), llvm::Align(4));
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
    return load;
  }

  // The thread's linear index in its block, modulo 32 (warps are 32 consecutive threads, x fastest).
  llvm::Value* lane_id(llvm::IRBuilder<>& b, llvm::Value* context) const override {
    auto reg = [&](SpecialRegister r, int axis) { return special_register(b, context, r, axis); };
    llvm::Value* linear = b.CreateAdd(
        reg(SpecialRegister::ThreadIdx, 0),
        b.CreateMul(reg(SpecialRegister::BlockDim, 0),
                    b.CreateAdd(reg(SpecialRegister::ThreadIdx, 1),
                                b.CreateMul(reg(SpecialRegister::BlockDim, 1), reg(SpecialRegister::ThreadIdx, 2)))));
    return b.CreateAnd(linear, b.getInt32(31));
  }

  // Every scope is a sequentially consistent fence: the threads of a block share one OS thread, and blocks
  // run on threads of one process.
  void fence(llvm::IRBuilder<>& b, llvm::Value*, FenceScope) const override {
    b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
  }

  void barrier(llvm::IRBuilder<>& b, llvm::Value* context) const override {
    b.GetInsertBlock()->getModule()->getOrInsertNamedMetadata(kHostBarrierMetadata);
    llvm::Value* hook = load_pointer(b, context, offsetof(HostThreadContext, barrier));
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false);
    b.CreateCall(fty, hook, {context});  // not nounwind-free of effects: memory is ordered around it
  }

  llvm::Value* static_shared(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Module& module,
                             llvm::ArrayType* buffer) const override {
    uint64_t bytes = module.getDataLayout().getTypeAllocSize(buffer);
    uint64_t offset = reserve_shared(module, bytes);
    llvm::Value* base = load_pointer(b, context, offsetof(HostThreadContext, shared));
    return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset);
  }

  std::pair<llvm::Value*, llvm::Value*> dynamic_shared(llvm::IRBuilder<>& b, llvm::Value* context,
                                                       llvm::Module&) const override {
    llvm::Value* base = load_pointer(b, context, offsetof(HostThreadContext, dynamic_shared));
    auto* bytes = b.CreateAlignedLoad(b.getInt64Ty(),
                                      field_address(b, context, offsetof(HostThreadContext, dynamic_shared_bytes)),
                                      llvm::Align(8));
    return {base, bytes};
  }

  // Bounds checks: a call of the host's recorder (codegen/host_checks.cpp) with the module's record, the site's
  // name and the index and shape in two stack arrays of the function's entry block.
  void index_error(llvm::IRBuilder<>& b, llvm::Value* context, const std::string& site, llvm::Value* data,
                   const std::vector<llvm::Value*>& indices, const std::vector<llvm::Value*>& shape) const override {
    llvm::Module& module = *b.GetInsertBlock()->getModule();
    auto* record_ty = llvm::ArrayType::get(b.getInt8Ty(), sizeof(HostIndexError));
    llvm::GlobalVariable* record = module.getNamedGlobal(kHostIndexErrorSymbol);
    if (record == nullptr) {
      record = new llvm::GlobalVariable(module, record_ty, false, llvm::GlobalValue::ExternalLinkage,
                                        llvm::ConstantAggregateZero::get(record_ty), kHostIndexErrorSymbol);
      record->setAlignment(llvm::Align(8));
    }
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
    auto* dims = llvm::ArrayType::get(b.getInt64Ty(), indices.size());
    llvm::Value* index_array = entry.CreateAlloca(dims);
    llvm::Value* shape_array = entry.CreateAlloca(dims);
    for (size_t d = 0; d < indices.size(); ++d) {
      b.CreateStore(indices[d], b.CreateConstInBoundsGEP2_64(dims, index_array, 0, d));
      b.CreateStore(shape[d], b.CreateConstInBoundsGEP2_64(dims, shape_array, 0, d));
    }
    auto* ptr = b.getPtrTy();
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, ptr, b.getInt32Ty(), ptr, ptr}, false);
    llvm::FunctionCallee recorder = module.getOrInsertFunction(kHostIndexErrorFunction, fty);
    b.CreateCall(recorder, {context, record, b.CreateGlobalString(site, "index.site"), data,
                            b.getInt32(static_cast<uint32_t>(indices.size())), index_array, shape_array});
  }
};

}  // namespace

const Target& host() {
  static const HostTarget target;
  return target;
}

}  // namespace cujit::target
