// The NVPTX target's hooks (cujit/target.h): special registers and barriers as
// NVVM intrinsics, shared memory as globals in address space 3 (the dynamic
// part is _cudapy_dynshared, sized by %dynamic_smem_size). What lowering
// emitted for these before the target interface, instruction for instruction.
#include <vector>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "cujit/target.h"

namespace cujit::target {
namespace {

constexpr unsigned kSharedAddressSpace = 3;

llvm::Intrinsic::ID register_id(SpecialRegister reg, int axis) {
  static const llvm::Intrinsic::ID ids[4][3] = {
      {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z}};
  return ids[static_cast<int>(reg)][axis];
}

class NvptxTarget final : public Target {
 public:
  const char* name() const override { return "nvptx"; }
  bool has_context() const override { return false; }

  // cvt.rzi through NVVM's conversion intrinsics, whose results LLVM knows (it folds a constant as the GPU
  // converts it: saturated, NaN as the hardware gives it), where a plain fptosi of NaN or an out-of-range constant
  // is poison, which LLVM may fold to anything. Narrow integers and other float types keep LLVM's conversion.
  llvm::Value* float_to_int(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Type* to, bool is_signed) const override {
    unsigned bits = to->getIntegerBitWidth();
    llvm::Type* from = v->getType();
    if ((bits != 32 && bits != 64) ||
        !(from->isHalfTy() || from->isBFloatTy() || from->isFloatTy() || from->isDoubleTy()))
      return Target::float_to_int(b, v, to, is_signed);
    if (!from->isFloatTy() && !from->isDoubleTy()) v = b.CreateFPExt(v, b.getFloatTy());
    bool wide = v->getType()->isDoubleTy();
    static const llvm::Intrinsic::ID ids[2][2][2] = {  // [double][64-bit][signed]
                                                     {{llvm::Intrinsic::nvvm_f2ui_rz, llvm::Intrinsic::nvvm_f2i_rz},
                                                      {llvm::Intrinsic::nvvm_f2ull_rz, llvm::Intrinsic::nvvm_f2ll_rz}},
                                                     {{llvm::Intrinsic::nvvm_d2ui_rz, llvm::Intrinsic::nvvm_d2i_rz},
                                                      {llvm::Intrinsic::nvvm_d2ull_rz, llvm::Intrinsic::nvvm_d2ll_rz}}};
    return b.CreateIntrinsic(ids[wide][bits == 64][is_signed], {}, {v});
  }

  llvm::Value* special_register(llvm::IRBuilder<>& b, llvm::Value*, SpecialRegister reg, int axis) const override {
    return b.CreateIntrinsic(register_id(reg, axis), {}, std::vector<llvm::Value*>{});
  }

  llvm::Value* lane_id(llvm::IRBuilder<>& b, llvm::Value*) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}, std::vector<llvm::Value*>{});
  }

  void fence(llvm::IRBuilder<>& b, llvm::Value*, FenceScope scope) const override {
    llvm::Intrinsic::ID id = scope == FenceScope::Block    ? llvm::Intrinsic::nvvm_membar_cta
                             : scope == FenceScope::Device ? llvm::Intrinsic::nvvm_membar_gl
                                                           : llvm::Intrinsic::nvvm_membar_sys;
    b.CreateIntrinsic(id, {}, std::vector<llvm::Value*>{});
  }

  void barrier(llvm::IRBuilder<>& b, llvm::Value*) const override {
    // bar.sync 0 (LLVM 22's barrier.cta family; the LTO-IR writers spell it as each dialect's barrier0).
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {}, {b.getInt32(0)});
  }

  llvm::Value* static_shared(llvm::IRBuilder<>& b, llvm::Value*, llvm::Module& module,
                             llvm::ArrayType* buffer) const override {
    auto* g = new llvm::GlobalVariable(module, buffer, false, llvm::GlobalValue::InternalLinkage,
                                       llvm::UndefValue::get(buffer), "_cudapy_smem", nullptr,
                                       llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
    g->setAlignment(llvm::Align(16));
    return b.CreateAddrSpaceCast(g, llvm::PointerType::get(module.getContext(), 0));
  }

  std::pair<llvm::Value*, llvm::Value*> dynamic_shared(llvm::IRBuilder<>& b, llvm::Value*,
                                                       llvm::Module& module) const override {
    llvm::GlobalVariable* dyn = module.getNamedGlobal("_cudapy_dynshared");
    if (dyn == nullptr) {
      dyn = new llvm::GlobalVariable(module, llvm::ArrayType::get(b.getInt8Ty(), 0), false,
                                     llvm::GlobalValue::ExternalLinkage, nullptr, "_cudapy_dynshared", nullptr,
                                     llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
      dyn->setAlignment(llvm::Align(16));
    }
    auto* asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(b.getInt32Ty(), false),
                                        "mov.u32 $0, %dynamic_smem_size;", "=r", false);
    llvm::Value* bytes = b.CreateZExt(b.CreateCall(asm_fn), b.getInt64Ty());
    return {b.CreateAddrSpaceCast(dyn, llvm::PointerType::get(module.getContext(), 0)), bytes};
  }

  // Collectives: barrier.cta reductions, shfl.sync, vote.sync, match.sync, bar.warp.sync, activemask and
  // %lanemask_lt, the device runtime's cudaCG* calls. `where` is for targets that report deadlocks.
  void barrier_at(llvm::IRBuilder<>& b, llvm::Value* context, const std::string&) const override {
    barrier(b, context);
  }

  llvm::Value* barrier_reduce(llvm::IRBuilder<>& b, llvm::Value*, BarrierReduction op, llvm::Value* predicate,
                              const std::string&) const override {
    using namespace llvm::Intrinsic;
    ID id = op == BarrierReduction::Count ? nvvm_barrier_cta_red_popc_aligned_all
            : op == BarrierReduction::And ? nvvm_barrier_cta_red_and_aligned_all
                                          : nvvm_barrier_cta_red_or_aligned_all;
    llvm::Value* r = b.CreateIntrinsic(id, {}, {b.getInt32(0), predicate});
    return b.CreateZExt(r, b.getInt32Ty());  // and/or give an i1, popc an i32 already
  }

  llvm::Value* warp_shuffle(llvm::IRBuilder<>& b, llvm::Value*, ShuffleMode mode, llvm::Value* mask, llvm::Value* value,
                            llvm::Value* lane, const std::string&) const override {
    using namespace llvm::Intrinsic;
    ID id = mode == ShuffleMode::Index  ? nvvm_shfl_sync_idx_i32
            : mode == ShuffleMode::Up   ? nvvm_shfl_sync_up_i32
            : mode == ShuffleMode::Down ? nvvm_shfl_sync_down_i32
                                        : nvvm_shfl_sync_bfly_i32;
    llvm::Value* clamp = b.getInt32(mode == ShuffleMode::Up ? 0 : 0x1f);
    return b.CreateIntrinsic(id, {}, {mask, value, lane, clamp});
  }

  llvm::Value* warp_vote(llvm::IRBuilder<>& b, llvm::Value*, VoteMode mode, llvm::Value* mask, llvm::Value* predicate,
                         const std::string&) const override {
    using namespace llvm::Intrinsic;
    ID id = mode == VoteMode::All   ? nvvm_vote_all_sync
            : mode == VoteMode::Any ? nvvm_vote_any_sync
            : mode == VoteMode::Eq  ? nvvm_vote_uni_sync
                                    : nvvm_vote_ballot_sync;
    return b.CreateIntrinsic(id, {}, {mask, predicate});
  }

  llvm::Value* warp_match(llvm::IRBuilder<>& b, llvm::Value*, bool all, llvm::Value* mask, llvm::Value* value,
                          const std::string&) const override {
    using namespace llvm::Intrinsic;
    bool wide = value->getType()->getIntegerBitWidth() == 64;
    ID id = all ? (wide ? nvvm_match_all_sync_i64p : nvvm_match_all_sync_i32p)
                : (wide ? nvvm_match_any_sync_i64 : nvvm_match_any_sync_i32);
    return b.CreateIntrinsic(id, {}, {mask, value});
  }

  void warp_sync(llvm::IRBuilder<>& b, llvm::Value*, llvm::Value* mask, const std::string&) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {mask});
  }

  // A uint32 read by one PTX instruction with no operands (a convergent, side-effecting read of warp state).
  llvm::Value* warp_mask(llvm::IRBuilder<>& b, llvm::Value*, WarpMask which, const std::string&) const override {
    const char* text = which == WarpMask::Active ? "activemask.b32 $0;" : "mov.u32 $0, %lanemask_lt;";
    auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {}, false);
    return b.CreateCall(fty, llvm::InlineAsm::get(fty, text, "=r", true), {});
  }

  llvm::Value* grid_group(llvm::IRBuilder<>& b, llvm::Value*) const override {
    // cudaCGGetIntrinsicHandle(cudaCGScopeGrid = 1), from the device runtime (libcudadevrt).
    auto callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(
        "cudaCGGetIntrinsicHandle", llvm::FunctionType::get(b.getInt64Ty(), {b.getInt32Ty()}, false));
    return b.CreateCall(callee, {b.getInt32(1)});
  }

  void sleep(llvm::IRBuilder<>& b, llvm::Value*, llvm::Value* ns, const std::string&) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_nanosleep, {}, {ns});
  }

  llvm::Value* grid_sync(llvm::IRBuilder<>& b, llvm::Value*, llvm::Value* group, const std::string&) const override {
    auto callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(
        "cudaCGSynchronize", llvm::FunctionType::get(b.getInt32Ty(), {b.getInt64Ty(), b.getInt32Ty()}, false));
    return b.CreateCall(callee, {group, b.getInt32(0)});
  }
};

}  // namespace

const Target& nvptx() {
  static const NvptxTarget target;
  return target;
}

}  // namespace cujit::target
