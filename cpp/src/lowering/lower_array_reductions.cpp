// numba's whole-array reductions in device code: `a.sum()`, `a.prod()`, `a.min()`, `a.max()`, `a.mean()` and
// NumPy's functions of the same names (`np.sum(a)`, `np.amax(a)`...), typed in typing/builtin_calls.cpp. One loop
// over the array's elements in C order; min and max propagate NaN as NumPy's do; the mean is the sum over the
// size. (An empty array's min or max is the reduction's start value: numba raises ValueError there.)
#include <limits>

#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Value;

Value* FunctionLowering::array_reduction(const std::string& name, Value* ary, TypeRef aty, TypeRef result) {
  const int n = aty->ndim();
  TypeRef dtype = aty->element(0);
  const bool mean = name == "mean";
  TypeRef acc_t = result;  // the accumulator: the result's type
  const bool is_min = name == "min", is_max = name == "max", product = name == "prod";
  llvm::Type* lt = state_.model.value_type(acc_t);

  Value* start;
  if (is_min || is_max) {
    if (acc_t->is_float()) {
      double inf = std::numeric_limits<double>::infinity();
      start = llvm::ConstantFP::get(lt, is_min ? inf : -inf);
    } else if (acc_t->is_boolean()) {
      start = b_.getInt1(is_min);
    } else {
      unsigned bits = static_cast<unsigned>(acc_t->bitwidth());
      llvm::APInt limit =
          is_min ? (acc_t->is_signed() ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits))
                 : (acc_t->is_signed() ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getMinValue(bits));
      start = llvm::ConstantInt::get(lt, limit);
    }
  } else if (acc_t->is_complex()) {
    TypeRef part = types::float_(acc_t->bitwidth() / 2);
    llvm::Type* pt = state_.model.value_type(part);
    start = build_tuple({llvm::ConstantFP::get(pt, product ? 1.0 : 0.0), llvm::ConstantFP::get(pt, 0.0)}, acc_t);
  } else {
    start = cast(b_.getInt64(product ? 1 : 0), types::int64(), acc_t);
  }

  std::vector<Value*> shape;
  Value* total = element_count(ary, n, shape);
  llvm::BasicBlock* entry = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "reduce.loop", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "reduce.done", llfn_);
  b_.CreateCondBr(b_.CreateICmpSGT(total, b_.getInt64(0)), loop, done);
  b_.SetInsertPoint(loop);
  llvm::PHINode* k = b_.CreatePHI(b_.getInt64Ty(), 2, "k");
  llvm::PHINode* acc = b_.CreatePHI(lt, 2, "acc");
  k->addIncoming(b_.getInt64(0), entry);
  acc->addIncoming(start, entry);
  std::vector<Value*> index = c_order_index(k, shape);
  Value* at = element_pointer(ary, aty, index, std::vector<bool>(static_cast<size_t>(n), true));
  Value* item = cast(load_element(at, dtype, aty->aligned() ? 0 : 1), dtype, acc_t);
  Value* next;
  if (is_min || is_max) {
    Value* better = compare(is_min ? ir::Op::Lt : ir::Op::Gt, item, acc, acc_t);
    if (acc_t->is_float()) better = b_.CreateOr(better, b_.CreateFCmpUNO(item, item));  // NaN wins, and stays
    if (acc_t->is_float()) better = b_.CreateAnd(better, b_.CreateFCmpORD(acc, acc));
    next = b_.CreateSelect(better, item, acc);
  } else {
    next = binary(product ? ir::Op::Mul : ir::Op::Add, acc, item, acc_t, acc_t, acc_t);
  }
  Value* k_next = b_.CreateAdd(k, b_.getInt64(1), "", true, true);
  llvm::BasicBlock* latch = b_.GetInsertBlock();  // (a bounds check may have split the loop's block)
  k->addIncoming(k_next, latch);
  acc->addIncoming(next, latch);
  b_.CreateCondBr(b_.CreateICmpSLT(k_next, total), loop, done);
  b_.SetInsertPoint(done);
  llvm::PHINode* out = b_.CreatePHI(lt, 2, "reduced");
  out->addIncoming(start, entry);
  out->addIncoming(next, latch);
  if (!mean) return cast(out, acc_t, result);
  Value* size = cast(total, types::int64(), acc_t->is_complex() ? types::float_(acc_t->bitwidth() / 2) : acc_t);
  if (acc_t->is_complex()) {
    Value* re = b_.CreateFDiv(b_.CreateExtractValue(out, 0), size);
    Value* im = b_.CreateFDiv(b_.CreateExtractValue(out, 1), size);
    return cast(build_tuple({re, im}, acc_t), acc_t, result);
  }
  return cast(b_.CreateFDiv(out, size), acc_t, result);
}

}  // namespace cujit::lowering
