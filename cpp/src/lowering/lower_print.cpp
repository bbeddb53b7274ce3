// print(...) in CUDA code, as numba-cuda prints: one vprintf call whose
// format joins the items with spaces and ends with a newline; string
// literals are %s of a constant string, signed integers %lld (widened to
// 64 bits), unsigned ones %llu, floats %f (as double) and booleans
// True/False. Output appears when the host synchronises.
#include <llvm/IR/Constants.h>

#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Value;

Value* FunctionLowering::print(const ir::Expr& e) {
  std::string format;
  std::vector<Value*> values;
  for (size_t i = 1; i < e.operands.size(); ++i) {
    const ir::Expr& item = *e.operands[i];
    if (i > 1) format += " ";
    if (ir::is_string_constant(item)) {
      format += "%s";
      values.push_back(b_.CreateGlobalString(item.global.name, "print.str"));
      continue;
    }
    TypeRef t = item.type->unliteral();
    Value* v = lower_expr(item);
    if (t->is_boolean()) {
      format += "%s";
      values.push_back(b_.CreateSelect(truth(v, t), b_.CreateGlobalString("True", "print.true"),
                                       b_.CreateGlobalString("False", "print.false")));
    } else if (t->is_integer()) {
      format += t->is_signed() ? "%lld" : "%llu";
      values.push_back(b_.CreateIntCast(v, b_.getInt64Ty(), t->is_signed()));
    } else {
      format += "%f";
      values.push_back(b_.CreateFPExt(v, b_.getDoubleTy()));
    }
  }
  format += "\n";
  Value* args = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (!values.empty()) {
    std::vector<llvm::Type*> fields;
    for (Value* v : values) fields.push_back(v->getType());
    llvm::StructType* buffer_ty = llvm::StructType::get(ctx_, fields);
    Value* buffer = entry_alloca(buffer_ty, "print.args");
    for (size_t i = 0; i < values.size(); ++i) b_.CreateStore(values[i], b_.CreateStructGEP(buffer_ty, buffer, i));
    args = buffer;
  }
  call_function("vprintf", b_.getInt32Ty(), {b_.CreateGlobalString(format, "print.format"), args});
  return none_value();
}

}  // namespace cujit::lowering
