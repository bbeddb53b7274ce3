// NumPy's ufuncs on arrays in device code, with an output array as numba-cuda takes them: `np.sin(x, out)`,
// `np.add(a, b, out)` (typed in typing/infer_types.cpp: type_ufunc). One loop over the output's elements in C
// order; each input is an array broadcast by NumPy's rules (its axes align with the output's last ones, each of
// the output's extent or 1) or a scalar; each element is the scalar function of the inputs' elements, converted
// to the output's dtype. The call's value is the output array.
#include "cujit/typing.h"
#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Value;

Value* FunctionLowering::ufunc_loop(const std::string& name, const std::vector<Value*>& args, const ir::Expr& e) {
  const std::vector<TypeRef>& pt = e.operand_types;
  const size_t inputs = args.size() - 1;
  Value* out = args.back();
  TypeRef oty = pt.back();
  const int n = oty->ndim();
  std::vector<TypeRef> scalars;
  for (size_t i = 0; i < inputs; ++i) scalars.push_back(pt[i]->kind() == TypeKind::Array ? pt[i]->element(0) : pt[i]);
  auto sig = typing::resolve_builtin_call(name, scalars, e.loc);
  if (!sig) fail(ErrorKind::Internal, "no scalar signature for the ufunc " + name, e.loc);
  ir::Expr element(ir::ExprKind::Call, e.loc);  // what builtin_call reads of a scalar call: its types
  element.operand_types = sig->params;
  element.type = sig->result;

  std::vector<Value*> shape;
  Value* total = element_count(out, n, shape);
  llvm::BasicBlock* entry = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "ufunc.loop", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "ufunc.done", llfn_);
  b_.CreateCondBr(b_.CreateICmpSGT(total, b_.getInt64(0)), loop, done);
  b_.SetInsertPoint(loop);
  llvm::PHINode* k = b_.CreatePHI(b_.getInt64Ty(), 2, "k");
  k->addIncoming(b_.getInt64(0), entry);
  std::vector<Value*> index = c_order_index(k, shape);
  std::vector<Value*> items;
  for (size_t i = 0; i < inputs; ++i) {
    Value* item = args[i];
    if (pt[i]->kind() == TypeKind::Array) {
      const int m = pt[i]->ndim();
      std::vector<Value*> at(static_cast<size_t>(m));
      for (int j = 0; j < m; ++j) {
        Value* extent = array_field(args[i], kShape, j);
        at[j] = b_.CreateSelect(b_.CreateICmpEQ(extent, b_.getInt64(1)), b_.getInt64(0), index[n - m + j]);
      }
      Value* ptr = element_pointer(args[i], pt[i], at, std::vector<bool>(static_cast<size_t>(m), true));
      item = load_element(ptr, scalars[i], pt[i]->aligned() ? 0 : 1);
    }
    items.push_back(cast(item, scalars[i], sig->params[i]));
  }
  Value* value = cast(builtin_call(name, std::move(items), element), sig->result, oty->element(0));
  store_element(element_pointer(out, oty, index, std::vector<bool>(static_cast<size_t>(n), true)), value,
                oty->element(0), oty->aligned() ? 0 : 1);
  Value* next = b_.CreateAdd(k, b_.getInt64(1), "", true, true);
  k->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(next, total), loop, done);
  b_.SetInsertPoint(done);
  return out;
}

}  // namespace cujit::lowering
