// CUDA intrinsics -> NVVM intrinsics: special registers, cuda.grid,
// barriers, fences, atomics (atomicrmw/cmpxchg, relaxed like numba), warp
// shuffles (64-bit values as two 32-bit shuffles) and votes, bit counts.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Intrinsic::ID;
using llvm::Value;

namespace {
ID sreg_id(const std::string& reg, int axis) {
  static const ID table[][3] = {
      {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z}};
  int row = reg == "threadIdx" ? 0 : reg == "blockIdx" ? 1 : reg == "blockDim" ? 2 : 3;
  return table[row][axis];
}
}  // namespace

Value* FunctionLowering::special_register(const char* reg, int axis) {
  return b_.CreateIntrinsic(sreg_id(reg, axis), {}, {});
}

Value* FunctionLowering::cuda_value(const std::string& name) {
  if (name == "cuda.laneid") return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {});
  if (name == "cuda.warpsize") return b_.getInt32(32);
  // cuda.<reg>.<axis>
  size_t dot = name.rfind('.');
  std::string reg = name.substr(5, dot - 5);
  int axis = name[dot + 1] - 'x';
  return special_register(reg.c_str(), axis);
}

Value* FunctionLowering::cuda_call(const std::string& name, std::vector<Value*> args, const ir::Expr& e) {
  const std::vector<TypeRef>& pt = e.operand_types;
  auto call = [&](ID id, std::vector<Value*> a = {}) { return b_.CreateIntrinsic(id, {}, a); };
  if (name == "cuda.grid" || name == "cuda.gridsize") {
    int n = static_cast<int>(pt[0]->literal_value());
    std::vector<Value*> dims;
    for (int axis = 0; axis < n; ++axis) {
      // 64-bit arithmetic on zero-extended registers: mul.wide.u32, no overflow.
      auto reg = [&](const char* r) { return b_.CreateZExt(special_register(r, axis), b_.getInt64Ty()); };
      Value* v = name == "cuda.grid"
                     ? b_.CreateAdd(b_.CreateMul(reg("blockIdx"), reg("blockDim"), "", true, true), reg("threadIdx"),
                                    "", true, true)
                     : b_.CreateMul(reg("blockDim"), reg("gridDim"), "", true, true);
      dims.push_back(v);
    }
    return n == 1 ? dims[0] : build_tuple(dims, e.type);
  }
  if (name == "cuda.syncthreads") return call(llvm::Intrinsic::nvvm_barrier0), b_.getInt8(0);
  if (name == "cuda.syncthreads_count" || name == "cuda.syncthreads_and" || name == "cuda.syncthreads_or") {
    ID id = name == "cuda.syncthreads_count" ? llvm::Intrinsic::nvvm_barrier0_popc
            : name == "cuda.syncthreads_and" ? llvm::Intrinsic::nvvm_barrier0_and
                                             : llvm::Intrinsic::nvvm_barrier0_or;
    return call(id, {args[0]});
  }
  if (name == "cuda.syncwarp") {
    call(llvm::Intrinsic::nvvm_bar_warp_sync, {args.empty() ? b_.getInt32(0xffffffffu) : args[0]});
    return b_.getInt8(0);
  }
  if (name == "cuda.threadfence") return call(llvm::Intrinsic::nvvm_membar_gl), b_.getInt8(0);
  if (name == "cuda.threadfence_block") return call(llvm::Intrinsic::nvvm_membar_cta), b_.getInt8(0);
  if (name == "cuda.threadfence_system") return call(llvm::Intrinsic::nvvm_membar_sys), b_.getInt8(0);
  if (name == "cuda.nanosleep") return call(llvm::Intrinsic::nvvm_nanosleep, {args[0]}), b_.getInt8(0);
  if (name.rfind("cuda.atomic.", 0) == 0) return atomic(name.substr(12), std::move(args), e);
  if (name.rfind("cuda.shfl", 0) == 0) return shuffle(name, std::move(args), pt[1]);
  if (name == "cuda.all_sync" || name == "cuda.any_sync" || name == "cuda.eq_sync") {
    ID id = name == "cuda.all_sync" ? llvm::Intrinsic::nvvm_vote_all_sync
            : name == "cuda.any_sync" ? llvm::Intrinsic::nvvm_vote_any_sync
                                      : llvm::Intrinsic::nvvm_vote_uni_sync;
    return call(id, {args[0], args[1]});
  }
  if (name == "cuda.ballot_sync") return call(llvm::Intrinsic::nvvm_vote_ballot_sync, {args[0], args[1]});
  if (name == "cuda.popc") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, args[0]);
  if (name == "cuda.brev") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, args[0]);
  if (name == "cuda.clz") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, args[0], b_.getFalse());
  if (name == "cuda.fma")
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {args[0]->getType()}, {args[0], args[1], args[2]});
  if (name == "cuda.selp") return b_.CreateSelect(args[0], args[1], args[2]);
  fail(ErrorKind::Internal, "no lowering for " + name);
}

// cuda.atomic.<op>(ary, idx, val): returns the old value, relaxed ordering.
Value* FunctionLowering::atomic(std::string op, std::vector<Value*> args, const ir::Expr& e) {
  TypeRef aty = e.operand_types[0];
  TypeRef dtype = aty->element(0);
  if (op == "compare_and_swap") {  // cas on element 0
    args.insert(args.begin() + 1, b_.getInt64(0));
    op = "cas";
  }
  std::vector<Value*> idx;
  if (aty->ndim() == 1) {
    idx.push_back(args[1]);
  } else {
    for (int d = 0; d < aty->ndim(); ++d)
      idx.push_back(cast(b_.CreateExtractValue(args[1], d), e.operand_types[1]->element(d), types::int64()));
  }
  Value* ptr = element_pointer(args[0], aty, idx);
  auto order = llvm::AtomicOrdering::Monotonic;
  llvm::MaybeAlign align(dtype->bitwidth() / 8);
  if (op == "cas") {
    auto* cx = b_.CreateAtomicCmpXchg(ptr, args[2], args[3], align, order, order);
    return b_.CreateExtractValue(cx, 0);
  }
  using Bin = llvm::AtomicRMWInst::BinOp;
  bool f = dtype->is_float();
  bool s = dtype->is_signed();
  Value* v = args[2];
  Bin bin;
  if (op == "add") bin = f ? Bin::FAdd : Bin::Add;
  else if (op == "sub") {
    if (f) {
      bin = Bin::FAdd;
      v = b_.CreateFNeg(v);
    } else {
      bin = Bin::Sub;
    }
  } else if (op == "max") bin = f ? Bin::FMax : s ? Bin::Max : Bin::UMax;
  else if (op == "min") bin = f ? Bin::FMin : s ? Bin::Min : Bin::UMin;
  else if (op == "exch") bin = Bin::Xchg;
  else if (op == "and_") bin = Bin::And;
  else if (op == "or_") bin = Bin::Or;
  else if (op == "xor") bin = Bin::Xor;
  else if (op == "inc" || op == "dec") {
    if (dtype->bitwidth() == 32) {  // PTX atom.inc/dec.u32 (LLVM would expand uinc_wrap to a CAS loop)
      ID id = op == "inc" ? llvm::Intrinsic::nvvm_atomic_load_inc_32 : llvm::Intrinsic::nvvm_atomic_load_dec_32;
      return b_.CreateIntrinsic(id, {ptr->getType()}, {ptr, v});
    }
    bin = op == "inc" ? Bin::UIncWrap : Bin::UDecWrap;
  }
  else fail(ErrorKind::Internal, "unknown atomic " + op);
  return b_.CreateAtomicRMW(bin, ptr, v, align, order);
}

// shfl_*_sync(mask, value, lane/delta): 32-bit values in one shuffle,
// 64-bit values as two.
Value* FunctionLowering::shuffle(const std::string& name, std::vector<Value*> args, TypeRef t) {
  bool up = name == "cuda.shfl_up_sync";
  ID i32 = name == "cuda.shfl_sync" ? llvm::Intrinsic::nvvm_shfl_sync_idx_i32
           : up                     ? llvm::Intrinsic::nvvm_shfl_sync_up_i32
           : name == "cuda.shfl_down_sync" ? llvm::Intrinsic::nvvm_shfl_sync_down_i32
                                           : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
  Value* clamp = b_.getInt32(up ? 0 : 0x1f);
  auto shfl32 = [&](Value* v32) { return b_.CreateIntrinsic(i32, {}, {args[0], v32, args[2], clamp}); };
  Value* v = args[1];
  llvm::Type* ty = v->getType();
  if (t->is_boolean()) return b_.CreateTrunc(shfl32(b_.CreateZExt(v, b_.getInt32Ty())), ty);
  unsigned bits = ty->getPrimitiveSizeInBits();
  Value* as_int = ty->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
  Value* result;
  if (bits == 32) {
    result = shfl32(as_int);
  } else {
    Value* lo = shfl32(b_.CreateTrunc(as_int, b_.getInt32Ty()));
    Value* hi = shfl32(b_.CreateTrunc(b_.CreateLShr(as_int, 32), b_.getInt32Ty()));
    result = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
  }
  return ty->isIntegerTy() ? result : b_.CreateBitCast(result, ty);
}

}  // namespace cujit::lowering
