// Calls into the intrinsic table (cujit/intrinsics.h): values such as
// cuda.threadIdx.x, functions such as cuda.atomic.add, and methods such as a
// grid group's sync(), each lowered by its entry's lowering with this function
// as the Emitter.
#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Value;

Value* FunctionLowering::intrinsic_value(const std::string& name) {
  const intrinsics::Intrinsic* in = intrinsics::find(name);
  if (in == nullptr || in->kind != intrinsics::Intrinsic::Kind::Value)
    fail(ErrorKind::Internal, "no lowering for " + name);
  static const std::vector<TypeRef> none;
  return in->lower(*this, {}, intrinsics::CallTypes{none, in->type({})->result});
}

Value* FunctionLowering::intrinsic_call(const intrinsics::Intrinsic& in, std::vector<Value*> args, const ir::Expr& e) {
  call_loc_ = e.loc;
  // Checks (the CPU target's): an intrinsic's access of its array argument (an atomic's) names the array.
  const bool checks = state_.options.bounds_check || state_.options.shared_checks;
  if (checks && e.kind == ir::ExprKind::Call && e.operands.size() > 1 && e.operands[1]->type->kind() == TypeKind::Array)
    index_site_ = index_site(*e.operands[1]);
  Value* result = in.lower(*this, std::move(args), intrinsics::CallTypes{e.operand_types, e.type});
  index_site_.clear();
  return result;
}

std::string FunctionLowering::call_site() {
  if (!call_loc_.known()) return "";
  return fn_.filename + ":" + std::to_string(call_loc_.line);
}

// obj.method(args): typing found the entry "<type>.<method>"; obj is its first argument.
Value* FunctionLowering::method_call(const ir::Expr& e) {
  const ir::Expr& self = *e.operands[0]->operands[0];
  const intrinsics::Intrinsic* in = intrinsics::find(self.type->name() + "." + e.operands[0]->attr);
  if (in == nullptr) fail(ErrorKind::Internal, "no lowering for method " + e.operands[0]->attr);
  std::vector<Value*> args{lower_as(self, e.operand_types[0])};
  for (size_t i = 1; i < e.operands.size(); ++i) args.push_back(lower_as(*e.operands[i], e.operand_types[i]));
  return intrinsic_call(*in, std::move(args), e);
}

// A call to a function defined outside the module (libdevice, the device runtime).
Value* FunctionLowering::call_function(const std::string& name, llvm::Type* result, std::vector<Value*> args) {
  std::vector<llvm::Type*> params;
  for (Value* a : args) params.push_back(a->getType());
  auto callee = state_.module.getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
  return b_.CreateCall(callee, args);
}

}  // namespace cujit::lowering
