// The host target's hooks (cujit/target.h): kernels compiled for the CPU read
// their thread's ids, dimensions and block's shared memory from the per-thread
// context the host runtime passes (target::HostThreadContext), and wait at a
// barrier by calling the runtime's hook, which switches to the block's next
// fiber. A module's static shared buffers are laid out one after another in the
// block's shared memory; their total is the module's __cujit_static_shared_bytes.
#include <cstddef>

#include <llvm/IR/MDBuilder.h>
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
  // The GPU's conversion (NVPTX's cvt.rzi, as an H100 gives it and LLVM folds it): out-of-range values saturate;
  // NaN gives 0 from a float32 (or narrower) to a 32-bit integer, and the integer with only its top bit set
  // otherwise (INT_MIN, 2^31 or 2^63).
  llvm::Value* float_to_int(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Type* to, bool is_signed) const override {
    llvm::Value* saturated = b.CreateIntrinsic(is_signed ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                               {to, v->getType()}, {v});
    unsigned bits = to->getIntegerBitWidth();
    bool zero_for_nan = v->getType()->getScalarSizeInBits() <= 32 && bits == 32;  // float, half, bfloat16
    llvm::APInt top = zero_for_nan ? llvm::APInt(bits, 0) : llvm::APInt::getSignedMinValue(bits);
    return b.CreateSelect(b.CreateFCmpUNO(v, v), llvm::ConstantInt::get(to, top), saturated);
  }
  const char* name() const override { return "host"; }
  bool has_context() const override { return true; }

  llvm::Value* special_register(llvm::IRBuilder<>& b, llvm::Value* context, SpecialRegister reg,
                                int axis) const override {
    size_t offset = offsetof(HostThreadContext, registers) + (static_cast<size_t>(reg) * 3 + axis) * 4;
    auto* load = b.CreateAlignedLoad(b.getInt32Ty(), field_address(b, context, offset), llvm::Align(4));
    // A thread's ids change in a block's loops over its threads (host_block_regions.cpp): the others are invariant.
    if (reg != SpecialRegister::ThreadIdx)
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
  // A fence is a spin point too (`while flag[0] == 0: cuda.threadfence()`).
  void fence(llvm::IRBuilder<>& b, llvm::Value* context, FenceScope) const override {
    b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    spin_point(b, context);
  }

  void barrier(llvm::IRBuilder<>& b, llvm::Value* context) const override {
    b.GetInsertBlock()->getModule()->getOrInsertNamedMetadata(kHostBarrierMetadata);
    llvm::Value* hook = load_pointer(b, context, offsetof(HostThreadContext, barrier));
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false);
    b.CreateCall(fty, hook, {context});  // not nounwind-free of effects: memory is ordered around it
    count_barrier(b, context);
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
    auto* bytes = b.CreateAlignedLoad(
        b.getInt64Ty(), field_address(b, context, offsetof(HostThreadContext, dynamic_shared_bytes)), llvm::Align(8));
    return {base, bytes};
  }

  // Collectives: a call of the context's collective hook (the runtime switches fibers there); the module is
  // marked as reaching a barrier, so its threads run as fibers.
  void barrier_at(llvm::IRBuilder<>& b, llvm::Value* context, const std::string& where) const override {
    collective(b, context, HostCollective::Barrier, b.getInt32(0), b.getInt64(0), b.getInt32(0), where);
  }

  llvm::Value* barrier_reduce(llvm::IRBuilder<>& b, llvm::Value* context, BarrierReduction op, llvm::Value* predicate,
                              const std::string& where) const override {
    HostCollective kind = op == BarrierReduction::Count ? HostCollective::BarrierCount
                          : op == BarrierReduction::And ? HostCollective::BarrierAnd
                                                        : HostCollective::BarrierOr;
    llvm::Value* r =
        collective(b, context, kind, b.getInt32(0), b.CreateZExt(predicate, b.getInt64Ty()), b.getInt32(0), where);
    return b.CreateTrunc(r, b.getInt32Ty());
  }

  llvm::Value* warp_shuffle(llvm::IRBuilder<>& b, llvm::Value* context, ShuffleMode mode, llvm::Value* mask,
                            llvm::Value* value, llvm::Value* lane, const std::string& where) const override {
    HostCollective kind = mode == ShuffleMode::Index  ? HostCollective::ShuffleIdx
                          : mode == ShuffleMode::Up   ? HostCollective::ShuffleUp
                          : mode == ShuffleMode::Down ? HostCollective::ShuffleDown
                                                      : HostCollective::ShuffleXor;
    llvm::Value* r = collective(b, context, kind, mask, b.CreateZExt(value, b.getInt64Ty()), lane, where);
    return b.CreateTrunc(r, b.getInt32Ty());
  }

  llvm::Value* warp_vote(llvm::IRBuilder<>& b, llvm::Value* context, VoteMode mode, llvm::Value* mask,
                         llvm::Value* predicate, const std::string& where) const override {
    HostCollective kind = mode == VoteMode::All   ? HostCollective::VoteAll
                          : mode == VoteMode::Any ? HostCollective::VoteAny
                          : mode == VoteMode::Eq  ? HostCollective::VoteEq
                                                  : HostCollective::VoteBallot;
    llvm::Value* r = collective(b, context, kind, mask, b.CreateZExt(predicate, b.getInt64Ty()), b.getInt32(0), where);
    return mode == VoteMode::Ballot ? b.CreateTrunc(r, b.getInt32Ty()) : b.CreateICmpNE(r, b.getInt64(0));
  }

  llvm::Value* warp_match(llvm::IRBuilder<>& b, llvm::Value* context, bool all, llvm::Value* mask, llvm::Value* value,
                          const std::string& where) const override {
    llvm::Value* r = collective(b, context, all ? HostCollective::MatchAll : HostCollective::MatchAny, mask,
                                b.CreateZExt(value, b.getInt64Ty()), b.getInt32(0), where);
    llvm::Value* lanes = b.CreateTrunc(r, b.getInt32Ty());
    if (!all) return lanes;
    auto* pair = llvm::StructType::get(b.getContext(), {b.getInt32Ty(), b.getInt1Ty()});
    llvm::Value* pred = b.CreateTrunc(b.CreateLShr(r, 32), b.getInt1Ty());
    return b.CreateInsertValue(b.CreateInsertValue(llvm::PoisonValue::get(pair), lanes, 0), pred, 1);
  }

  void warp_sync(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value* mask,
                 const std::string& where) const override {
    collective(b, context, HostCollective::SyncWarp, mask, b.getInt64(0), b.getInt32(0), where);
  }

  llvm::Value* warp_mask(llvm::IRBuilder<>& b, llvm::Value* context, WarpMask which,
                         const std::string& where) const override {
    if (which == WarpMask::LessThan) return b.CreateSub(b.CreateShl(b.getInt32(1), lane_id(b, context)), b.getInt32(1));
    llvm::Value* r =
        collective(b, context, HostCollective::ActiveMask, b.getInt32(0), b.getInt64(0), b.getInt32(0), where);
    return b.CreateTrunc(r, b.getInt32Ty());
  }

  llvm::Value* grid_group(llvm::IRBuilder<>& b, llvm::Value*) const override { return b.getInt64(0); }

  llvm::Value* grid_sync(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value*,
                         const std::string& where) const override {
    collective(b, context, HostCollective::GridSync, b.getInt32(0), b.getInt64(0), b.getInt32(0), where);
    return b.getInt32(0);
  }

  // Bounds checks: a call of the host's recorder (hostgen/host_checks.cpp) with the module's record, the site's
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
    llvm::AllocaInst* index_array = scratch(entry.CreateAlloca(dims));
    llvm::AllocaInst* shape_array = scratch(entry.CreateAlloca(dims));
    for (size_t d = 0; d < indices.size(); ++d) {
      b.CreateStore(indices[d], b.CreateConstInBoundsGEP2_64(dims, index_array, 0, d));
      b.CreateStore(shape[d], b.CreateConstInBoundsGEP2_64(dims, shape_array, 0, d));
    }
    auto* ptr = b.getPtrTy();
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, ptr, b.getInt32Ty(), ptr, ptr}, false);
    llvm::FunctionCallee recorder = module.getOrInsertFunction(kHostIndexErrorFunction, fty);
    b.CreateCall(recorder, {reported_context(b, entry, context), record, b.CreateGlobalString(site, "index.site"), data,
                            b.getInt32(static_cast<uint32_t>(indices.size())), index_array, shape_array});
  }

  // Debug checks: every access calls the host's recorder (hostgen/host_shared_checks.cpp), which keeps those
  // that touch the block's shared memory; the module's state pointer is set once it is compiled.
  void memory_access(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value* address, uint64_t bytes, bool write,
                     const std::string& site) const override {
    llvm::Module& module = *b.GetInsertBlock()->getModule();
    auto* ptr = b.getPtrTy();
    llvm::GlobalVariable* state = module.getNamedGlobal(kHostSharedChecksSymbol);
    if (state == nullptr)
      state = new llvm::GlobalVariable(module, ptr, false, llvm::GlobalValue::ExternalLinkage,
                                       llvm::ConstantPointerNull::get(ptr), kHostSharedChecksSymbol);
    auto* i32 = b.getInt32Ty();
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i32, i32, ptr}, false);
    llvm::FunctionCallee recorder = module.getOrInsertFunction(kHostSharedAccessFunction, fty);
    llvm::Value* site_text = site.empty() ? llvm::ConstantPointerNull::get(ptr)
                                          : static_cast<llvm::Value*>(b.CreateGlobalString(site, "access.site"));
    b.CreateCall(recorder,
                 {context, b.CreateAlignedLoad(ptr, state, llvm::Align(8)), b.CreateAddrSpaceCast(address, ptr),
                  b.getInt32(static_cast<uint32_t>(bytes)), b.getInt32(write ? 1 : 0), site_text});
  }

  // A call of the module's spin-point function (defined once, always inlined): it counts the thread's spin points
  // and calls the runtime's spin hook at every kHostSpinInterval-th. Not a collective: a kernel whose only
  // synchronisation is atomics keeps running its threads one after another until one spins (hostrt/).
  void spin_point(llvm::IRBuilder<>& b, llvm::Value* context) const override {
    b.CreateCall(spin_function(*b.GetInsertBlock()->getModule()), {context});
  }

  // A yield: the block's other fibers run before this one goes on.
  void sleep(llvm::IRBuilder<>& b, llvm::Value* context, llvm::Value*, const std::string& where) const override {
    collective(b, context, HostCollective::Yield, b.getInt32(0), b.getInt64(0), b.getInt32(0), where);
  }

 private:
  static llvm::AllocaInst* scratch(llvm::AllocaInst* slot) {
    slot->setMetadata(kHostScratchMetadata, llvm::MDNode::get(slot->getContext(), {}));
    return slot;
  }

  // A copy of what the recorder of index errors reads from the context (the thread's and block's ids, the block's
  // shared memory), on the function's frame: the context itself never escapes a kernel that reaches no collective
  // and no spin point, so a block's threads run as loops can keep it in registers (host_block_regions.cpp).
  static llvm::Value* reported_context(llvm::IRBuilder<>& b, llvm::IRBuilder<>& entry, llvm::Value* context) {
    auto* copy_ty = llvm::ArrayType::get(b.getInt8Ty(), sizeof(HostThreadContext));
    llvm::AllocaInst* copy = scratch(entry.CreateAlloca(copy_ty));
    copy->setAlignment(llvm::Align(alignof(HostThreadContext)));
    auto copy_field = [&](size_t offset, size_t bytes) {
      b.CreateMemCpy(field_address(b, copy, offset), llvm::Align(4), field_address(b, context, offset), llvm::Align(4),
                     bytes);
    };
    copy_field(offsetof(HostThreadContext, registers), sizeof(HostThreadContext::registers));
    copy_field(offsetof(HostThreadContext, shared), offsetof(HostThreadContext, dynamic_shared_bytes) +
                                                        sizeof(uint64_t) - offsetof(HostThreadContext, shared));
    return copy;
  }

  // context->collective(context, kind, mask, value, operand, where): an i64.
  static llvm::Value* collective(llvm::IRBuilder<>& b, llvm::Value* context, HostCollective kind, llvm::Value* mask,
                                 llvm::Value* value, llvm::Value* operand, const std::string& where) {
    llvm::Module& module = *b.GetInsertBlock()->getModule();
    module.getOrInsertNamedMetadata(kHostBarrierMetadata);
    llvm::Value* hook = load_pointer(b, context, offsetof(HostThreadContext, collective));
    auto* i32 = b.getInt32Ty();
    auto* fty =
        llvm::FunctionType::get(b.getInt64Ty(), {b.getPtrTy(), i32, i32, b.getInt64Ty(), i32, b.getPtrTy()}, false);
    llvm::CallInst* result = b.CreateCall(
        fty, hook,
        {context, b.getInt32(static_cast<uint32_t>(kind)), mask, value, operand, site_string(module, where)});
    // (what the call is, for hostgen's block regions: a block's threads as loops between its barriers)
    result->setMetadata(kHostCollectiveMetadata,
                        llvm::MDNode::get(module.getContext(),
                                          {llvm::ConstantAsMetadata::get(b.getInt32(static_cast<uint32_t>(kind)))}));
    if (kind <= HostCollective::BarrierOr || kind == HostCollective::GridSync) count_barrier(b, context);
    if (kind == HostCollective::SyncWarp) count_barrier(b, context, offsetof(HostThreadContext, warp_syncs_passed));
    return result;
  }

  // void cujit.spin_point(ptr context): if (++context->spins % kHostSpinInterval == 0 && context->spin)
  // context->spin(context). The hook's call is an opaque call: memory is read again after it.
  static llvm::Function* spin_function(llvm::Module& module) {
    constexpr const char* kName = kHostSpinPointFunction;
    if (llvm::Function* f = module.getFunction(kName)) return f;
    llvm::LLVMContext& ctx = module.getContext();
    auto* ptr = llvm::PointerType::get(ctx, 0);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
    auto* f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, kName, module);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
    auto* check = llvm::BasicBlock::Create(ctx, "due", f);
    auto* call = llvm::BasicBlock::Create(ctx, "spin", f);
    auto* done = llvm::BasicBlock::Create(ctx, "done", f);
    llvm::IRBuilder<> b(entry);
    llvm::Value* context = f->getArg(0);
    llvm::Value* field = field_address(b, context, offsetof(HostThreadContext, spins));
    llvm::Value* count = b.CreateAdd(b.CreateAlignedLoad(b.getInt32Ty(), field, llvm::Align(4)), b.getInt32(1));
    b.CreateAlignedStore(count, field, llvm::Align(4));
    llvm::Value* due = b.CreateICmpEQ(b.CreateAnd(count, b.getInt32(kHostSpinInterval - 1)), b.getInt32(0));
    llvm::MDBuilder weights(ctx);
    b.CreateCondBr(due, check, done, weights.createBranchWeights(1, kHostSpinInterval - 1));
    b.SetInsertPoint(check);
    llvm::Value* hook =
        b.CreateAlignedLoad(ptr, field_address(b, context, offsetof(HostThreadContext, spin)), llvm::Align(8));
    b.CreateCondBr(b.CreateICmpNE(hook, llvm::ConstantPointerNull::get(ptr)), call, done);
    b.SetInsertPoint(call);
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {ptr}, false), hook, {context});
    b.CreateBr(done);
    b.SetInsertPoint(done);
    b.CreateRetVoid();
    return f;
  }

  // ++context->barriers_passed, or the counter at `offset` (debug checks of shared memory tell the intervals
  // between barriers apart by them).
  static void count_barrier(llvm::IRBuilder<>& b, llvm::Value* context,
                            size_t offset = offsetof(HostThreadContext, barriers_passed)) {
    llvm::Value* field = field_address(b, context, offset);
    llvm::Value* passed = b.CreateAlignedLoad(b.getInt32Ty(), field, llvm::Align(4));
    b.CreateAlignedStore(b.CreateAdd(passed, b.getInt32(1)), field, llvm::Align(4));
  }

  // The call's position as a C string of its own (not merged with an equal one: activemask() tells calls apart
  // by address), or null.
  static llvm::Value* site_string(llvm::Module& module, const std::string& where) {
    auto* ptr = llvm::PointerType::get(module.getContext(), 0);
    if (where.empty()) return llvm::ConstantPointerNull::get(ptr);
    llvm::Constant* text = llvm::ConstantDataArray::getString(module.getContext(), where);
    return new llvm::GlobalVariable(module, text->getType(), true, llvm::GlobalValue::PrivateLinkage, text,
                                    "cujit.site");
  }
};

}  // namespace

const Target& host() {
  static const HostTarget target;
  return target;
}

}  // namespace cujit::target
