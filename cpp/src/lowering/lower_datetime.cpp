// datetime64 / timedelta64 (typing/datetime_rules.cpp): int64 counts of a unit, NaT the least int64. A conversion
// to a finer unit multiplies; arithmetic keeps NaT NaT and truncates toward zero (numpy's scaling and division of
// timedeltas, `//` included); comparisons follow numpy (NaT is unequal to everything,
// itself included, and unordered).
#include "function_lowering.h"

namespace cujit::lowering {

using ir::Op;
using llvm::Value;

namespace {
constexpr int64_t kNaT = INT64_MIN;
}  // namespace

Value* FunctionLowering::is_nat(Value* v) { return b_.CreateICmpEQ(v, b_.getInt64(kNaT)); }

Value* FunctionLowering::time_cast(Value* v, TypeRef from, TypeRef to) {
  int64_t factor = types::time_unit_factor(types::time_unit(from), types::time_unit(to));
  if (factor <= 1) return v;
  return b_.CreateSelect(is_nat(v), v, b_.CreateMul(v, b_.getInt64(factor)));
}

Value* FunctionLowering::time_binary(Op op, Value* a, Value* b, TypeRef lhs_t, TypeRef rhs_t) {
  Value* nat = b_.getInt64(kNaT);
  if (types::is_time(lhs_t) && types::is_time(rhs_t)) {
    Value* either = b_.CreateOr(is_nat(a), is_nat(b));
    if (op == Op::Div) {  // timedelta / timedelta: a float, NaN with a NaT
      Value* q = b_.CreateFDiv(b_.CreateSIToFP(a, b_.getDoubleTy()), b_.CreateSIToFP(b, b_.getDoubleTy()));
      return b_.CreateSelect(either, llvm::ConstantFP::getNaN(b_.getDoubleTy()), q);
    }
    Value* r = op == Op::Sub ? b_.CreateSub(a, b) : b_.CreateAdd(a, b);
    return b_.CreateSelect(either, nat, r);
  }
  // A timedelta and a number (int64 or float64, typing converted it).
  const bool td_left = types::is_time(lhs_t);
  Value* td = td_left ? a : b;
  Value* n = td_left ? b : a;
  TypeRef nt = td_left ? rhs_t : lhs_t;
  Value* r;
  Value* invalid = is_nat(td);
  if (nt->is_float()) {
    Value* f = b_.CreateSIToFP(td, b_.getDoubleTy());
    Value* x = op == Op::Mul ? b_.CreateFMul(f, n) : b_.CreateFDiv(f, n);  // (// as /: numpy truncates both)
    invalid = b_.CreateOr(invalid, b_.CreateFCmpUNO(x, x));
    invalid = b_.CreateOr(invalid, b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                                    llvm::ConstantFP::getInfinity(b_.getDoubleTy())));
    r = b_.CreateFPToSI(x, b_.getInt64Ty());
  } else if (op == Op::Mul) {
    r = b_.CreateMul(td, n);
  } else {  // / and // by an integer: numpy truncates toward zero for both; by 0: NaT
    Value* zero = b_.CreateICmpEQ(n, b_.getInt64(0));
    invalid = b_.CreateOr(invalid, zero);
    r = b_.CreateSDiv(td, b_.CreateSelect(zero, b_.getInt64(1), n));
  }
  return b_.CreateSelect(invalid, nat, r);
}

Value* FunctionLowering::time_compare(Op op, Value* a, Value* b) {
  Value* either = b_.CreateOr(is_nat(a), is_nat(b));
  Value* c;
  switch (op) {
    case Op::Eq:
      return b_.CreateAnd(b_.CreateNot(either), b_.CreateICmpEQ(a, b));
    case Op::NotEq:
      return b_.CreateOr(either, b_.CreateICmpNE(a, b));
    case Op::Lt:
      c = b_.CreateICmpSLT(a, b);
      break;
    case Op::LtE:
      c = b_.CreateICmpSLE(a, b);
      break;
    case Op::Gt:
      c = b_.CreateICmpSGT(a, b);
      break;
    default:
      c = b_.CreateICmpSGE(a, b);
      break;
  }
  return b_.CreateAnd(b_.CreateNot(either), c);
}

}  // namespace cujit::lowering
