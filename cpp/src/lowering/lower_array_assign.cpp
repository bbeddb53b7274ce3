// Stores into array views (numba's setitem with slices: `a[:] = 7.0`,
// `b[1:3] = a[1:3]`, `r[()] = x`): one loop over the view's elements in C
// order. A scalar is converted once and stored everywhere; an array source is
// broadcast by numpy's rules (its axes align with the view's last ones, each of
// the view's extent or 1). Where a source's shape cannot broadcast (numba raises
// ValueError) nothing is stored. Source and view may overlap (`a[1:] = a[:-1]`):
// the loop runs backwards when the source lies below the view, as memmove does,
// which is exact for views of one array with the same strides.
#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Value;

void FunctionLowering::assign_to_view(Value* view, TypeRef vty, Value* value, TypeRef type) {
  const int n = vty->ndim();
  TypeRef dtype = vty->element(0);
  const int64_t align = vty->aligned() ? 0 : 1;
  const bool from_array = type->kind() == TypeKind::Array;
  const int m = from_array ? type->ndim() : 0;
  Value* one = b_.getInt64(1);

  std::vector<Value*> shape;
  Value* total = element_count(view, n, shape);
  Value* go = b_.CreateICmpSGT(total, b_.getInt64(0));
  Value* scalar = nullptr;
  Value* backward = b_.getFalse();
  std::vector<Value*> broadcast(m);  // the source's axis j has extent 1 (always index 0)
  if (from_array) {
    for (int j = 0; j < m; ++j) {
      Value* extent = array_field(value, kShape, j);
      broadcast[j] = b_.CreateICmpEQ(extent, one);
      go = b_.CreateAnd(go, b_.CreateOr(broadcast[j], b_.CreateICmpEQ(extent, shape[n - m + j])));
    }
    backward = b_.CreateICmpULT(array_field(value, kData), array_field(view, kData));
  } else {
    scalar = cast(value, type, dtype);
  }

  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "slice.store", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "slice.done", llfn_);
  llvm::BasicBlock* entry = b_.GetInsertBlock();
  b_.CreateCondBr(go, loop, done);
  b_.SetInsertPoint(loop);
  llvm::PHINode* k = b_.CreatePHI(b_.getInt64Ty(), 2, "k");
  k->addIncoming(b_.getInt64(0), entry);
  Value* linear = b_.CreateSelect(backward, b_.CreateSub(b_.CreateSub(total, one), k), k);
  std::vector<Value*> index = c_order_index(linear, shape);
  const std::vector<bool> non_negative(static_cast<size_t>(n), true);
  Value* item = scalar;
  if (from_array) {
    std::vector<Value*> source_index(m);
    for (int j = 0; j < m; ++j) source_index[j] = b_.CreateSelect(broadcast[j], b_.getInt64(0), index[n - m + j]);
    TypeRef source_dtype = type->element(0);
    Value* at = element_pointer(value, type, source_index, std::vector<bool>(static_cast<size_t>(m), true));
    item = cast(load_element(at, source_dtype, type->aligned() ? 0 : 1), source_dtype, dtype);
  }
  store_element(element_pointer(view, vty, index, non_negative), item, dtype, align);
  Value* next = b_.CreateAdd(k, one, "", true, true);
  k->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(next, total), loop, done);
  b_.SetInsertPoint(done);
}

}  // namespace cujit::lowering
