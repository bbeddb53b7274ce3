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
};

}  // namespace

const Target& nvptx() {
  static const NvptxTarget target;
  return target;
}

}  // namespace cujit::target
