// Lowering of expressions: constants, numba's numeric casts, Python operator
// semantics (floor division and modulo, integer power, division by zero -> 0
// under the numpy error model), short-circuit logic, builtins and math
// functions (LLVM intrinsics or libdevice), tuples and calls.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "cujit/typing.h"
#include "function_lowering.h"

namespace cujit::lowering {

using ir::Expr;
using ir::ExprKind;
using ir::Op;
using llvm::Value;
using K = ir::GlobalValue::Kind;

Value* FunctionLowering::zero_value(TypeRef t) { return llvm::Constant::getNullValue(state_.model.value_type(t)); }

Value* FunctionLowering::constant(const Expr& e) {
  const ir::GlobalValue& g = e.global;
  switch (g.kind) {
    case K::Int:
      return b_.getInt64(static_cast<uint64_t>(g.int_value));
    case K::Bool:
      return b_.getInt1(g.int_value != 0);
    case K::Float:
      return llvm::ConstantFP::get(b_.getDoubleTy(), g.float_value);
    case K::Complex: {
      auto* d = b_.getDoubleTy();
      return llvm::ConstantStruct::getAnon(
          {llvm::ConstantFP::get(d, g.float_value), llvm::ConstantFP::get(d, g.imag_value)});
    }
    case K::Str:
      return charseq_constant(g, e.type);
    default:
      return b_.getInt8(0);
  }
}

Value* FunctionLowering::cast(Value* v, TypeRef from, TypeRef to) {
  if (from == to) return v;
  from = from->unliteral();
  to = to->unliteral();
  if (from == to) return v;
  if (to->kind() == TypeKind::Optional) {  // None: not valid; a value: valid, converted to the inner type
    if (from->kind() == TypeKind::None) return zero_value(to);
    Value* valid = b_.getInt1(true);
    if (from->kind() == TypeKind::Optional) {
      valid = b_.CreateExtractValue(v, 1);
      v = b_.CreateExtractValue(v, 0);
      from = from->element(0);
    }
    Value* out = b_.CreateInsertValue(zero_value(to), cast(v, from, to->element(0)), 0);
    return b_.CreateInsertValue(out, valid, 1);
  }
  if (from->kind() == TypeKind::Optional)  // used as its value (numba checks nothing on the GPU either)
    return cast(b_.CreateExtractValue(v, 0), from->element(0), to);
  if (to->kind() == TypeKind::Record && from->is_tuple()) return record_from_tuple(v, from, to);
  if (same_record_layout(from, to)) return v;  // the same bytes (a record's value is their address)
  if (types::is_time(from) && types::is_time(to)) return time_cast(v, from, to);
  if (types::is_charseq(from) && types::is_charseq(to)) return charseq_resize(v, from, to);
  if (from->kind() == TypeKind::FP8) return intrinsics::fp8_to_number(*this, v, from, to);
  if (to->kind() == TypeKind::FP8) return intrinsics::number_to_fp8(*this, v, from, to);
  if (from->kind() == TypeKind::BFloat16) return cast(intrinsics::bfloat16_to_float(*this, v), types::float32(), to);
  if (to->kind() == TypeKind::BFloat16 && from->kind() == TypeKind::Vector)  // a raw value (uint16x1): its bits
    return b_.CreateExtractValue(v, 0);
  if (to->kind() == TypeKind::BFloat16) return intrinsics::number_to_bfloat16(*this, v, from);
  llvm::Type* dst = state_.model.value_type(to);
  if (to->is_boolean()) return truth(v, from);
  if (from->is_boolean()) {
    if (to->is_integer()) return b_.CreateZExt(v, dst);
    v = b_.CreateZExt(v, b_.getInt32Ty());
    from = types::int32();
  }
  if (from->is_tuple() && to->is_tuple()) {
    std::vector<Value*> elems;
    for (size_t i = 0; i < to->count(); ++i)
      elems.push_back(cast(b_.CreateExtractValue(v, i), from->element(i), to->element(i)));
    return build_tuple(elems, to);
  }
  if (to->is_complex()) {
    llvm::Type* part = dst->getStructElementType(0);
    TypeRef part_t = types::float_(to->bitwidth() / 2);
    Value* re;
    Value* im;
    if (from->is_complex()) {
      TypeRef from_part = types::float_(from->bitwidth() / 2);
      re = cast(b_.CreateExtractValue(v, 0), from_part, part_t);
      im = cast(b_.CreateExtractValue(v, 1), from_part, part_t);
    } else {
      re = cast(v, from, part_t);
      im = llvm::ConstantFP::get(part, 0.0);
    }
    return build_tuple({re, im}, to);
  }
  if (from->is_complex()) return cast(b_.CreateExtractValue(v, 0), types::float_(from->bitwidth() / 2), to);
  if (from->is_integer() && to->is_integer()) return b_.CreateIntCast(v, dst, from->is_signed());
  if (from->is_integer() && to->is_float())
    return from->is_signed() ? b_.CreateSIToFP(v, dst) : b_.CreateUIToFP(v, dst);
  if (from->is_float() && to->is_integer()) return target().float_to_int(b_, v, dst, to->is_signed());
  if (from->is_float() && to->is_float()) return b_.CreateFPCast(v, dst);
  if (from->kind() == TypeKind::None) return zero_value(to);
  fail(ErrorKind::TypingError, "cannot convert " + from->name() + " to " + to->name());
}

Value* FunctionLowering::truth(Value* v, TypeRef t) {
  t = t->unliteral();
  if (t->is_boolean()) return v;
  if (t->kind() == TypeKind::Optional)  // None is false, a value as itself
    return b_.CreateAnd(b_.CreateExtractValue(v, 1), truth(b_.CreateExtractValue(v, 0), t->element(0)));
  if (t->is_integer()) return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (t->is_float()) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  if (t->is_complex()) {
    TypeRef part = types::float_(t->bitwidth() / 2);
    return b_.CreateOr(truth(b_.CreateExtractValue(v, 0), part), truth(b_.CreateExtractValue(v, 1), part));
  }
  if (t->kind() == TypeKind::None) return b_.getFalse();
  if (types::is_charseq(t)) return b_.CreateICmpNE(charseq_length(v, t), b_.getInt64(0));  // not empty
  fail(ErrorKind::TypingError, "cannot use a value of type " + t->name() + " as a condition");
}

Value* FunctionLowering::lower_as(const Expr& e, TypeRef to) { return cast(lower_expr(e), e.type, to); }

Value* FunctionLowering::build_tuple(const std::vector<Value*>& elems, TypeRef t) {
  Value* out = llvm::UndefValue::get(state_.model.value_type(t));
  for (size_t i = 0; i < elems.size(); ++i) out = b_.CreateInsertValue(out, elems[i], i);
  return out;
}

Value* FunctionLowering::lower_expr(const Expr& e) {
  set_location(e.loc);
  if (e.type != nullptr && e.kind != ExprKind::Call &&
      (e.type->kind() == TypeKind::NumberClass || e.type->kind() == TypeKind::Function ||
       e.type->kind() == TypeKind::Dispatcher))
    return b_.getInt8(0);  // a type or function as a value: its type says which (typing/value_types.cpp)
  switch (e.kind) {
    case ExprKind::Const:
      return constant(e);
    case ExprKind::Var:
      if (var_values_[e.var] != nullptr) return var_values_[e.var];
      return b_.CreateLoad(state_.model.value_type(fn_.vars[e.var].type), var_slots_[e.var]);
    case ExprKind::Binary: {
      Value* a = lower_as(*e.operands[0], e.operand_types[0]);
      Value* b = lower_as(*e.operands[1], e.operand_types[1]);
      return binary(e.op, a, b, e.operand_types[0], e.operand_types[1], e.type);
    }
    case ExprKind::Unary:
      return unary(e);
    case ExprKind::Compare: {
      // a < b < c: evaluate each operand once, and stop at the first false.
      Value* lhs = lower_expr(*e.operands[0]);
      if (e.ops.size() == 1)
        return compare_operands(e.ops[0], cast(lhs, e.operands[0]->type, e.operand_types[0]),
                                lower_as(*e.operands[1], e.operand_types[1]), e.operand_types[0], e.operand_types[1]);
      llvm::BasicBlock* end = llvm::BasicBlock::Create(ctx_, "cmp.end", llfn_);
      std::vector<std::pair<Value*, llvm::BasicBlock*>> incoming;
      for (size_t i = 0; i < e.ops.size(); ++i) {
        Value* rhs = lower_expr(*e.operands[i + 1]);
        Value* r = compare_operands(e.ops[i], cast(lhs, e.operands[i]->type, e.operand_types[2 * i]),
                                    cast(rhs, e.operands[i + 1]->type, e.operand_types[2 * i + 1]),
                                    e.operand_types[2 * i], e.operand_types[2 * i + 1]);
        incoming.push_back({r, b_.GetInsertBlock()});
        if (i + 1 == e.ops.size()) {
          b_.CreateBr(end);
        } else {
          llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, "cmp.next", llfn_);
          b_.CreateCondBr(r, next, end);
          b_.SetInsertPoint(next);
        }
        lhs = rhs;
      }
      b_.SetInsertPoint(end);
      llvm::PHINode* phi = b_.CreatePHI(b_.getInt1Ty(), incoming.size());
      for (auto& [v, bb] : incoming) phi->addIncoming(v, bb);
      return phi;
    }
    case ExprKind::BoolOp:
      return short_circuit(e);
    case ExprKind::IfExp:
      return if_exp(e);
    case ExprKind::Call:
      return call(e);
    case ExprKind::Attribute:
      return attribute(e);
    case ExprKind::Subscript:
      return subscript(e);
    case ExprKind::Tuple: {
      std::vector<Value*> elems;
      for (size_t i = 0; i < e.operands.size(); ++i) elems.push_back(lower_as(*e.operands[i], e.type->element(i)));
      return build_tuple(elems, e.type);
    }
    case ExprKind::Global:
      if (e.global.kind == K::NdArray) return constant_array(e.global);
      if (e.global.kind == K::Record) return constant_record(e.global);
      if (e.global.kind == K::DeviceArray) return captured_array(e.global);
      if (e.global.kind == K::Builtin) return intrinsic_value(e.global.name);
      break;
    case ExprKind::Slice:
      break;
  }
  unsupported("this expression", e.loc);
}

Value* FunctionLowering::binary(Op op, Value* a, Value* b, TypeRef lhs_t, TypeRef rhs_t, TypeRef result) {
  lhs_t = lhs_t->unliteral();
  if (types::is_time(lhs_t) || types::is_time(rhs_t)) return time_binary(op, a, b, lhs_t, rhs_t->unliteral());
  if (result->kind() == TypeKind::BFloat16) {  // in float32, rounded once
    TypeRef f = types::float32();
    return cast(float_binary(op, cast(a, lhs_t, f), cast(b, rhs_t, f), f), f, result);
  }
  if (op == Op::Pow && lhs_t->is_integer()) return int_power(a, b, lhs_t, result);
  if (op == Op::Pow && lhs_t->is_float() && rhs_t->is_integer()) {
    // numba's dedicated float ** int signature: libdevice powi.
    // float16 bases compute in float32 (numba's signature for them is float32 ** intp).
    Value* e32 = b_.CreateTrunc(b, b_.getInt32Ty());
    bool wide = lhs_t->bitwidth() == 64;
    TypeRef computed = wide ? types::float64() : types::float32();
    a = cast(a, lhs_t, computed);
    llvm::Type* ft = wide ? b_.getDoubleTy() : b_.getFloatTy();
    return cast(call_function(wide ? "__nv_powi" : "__nv_powif", ft, {a, e32}), computed, result);
  }
  if (op == Op::Div && lhs_t->is_integer()) {
    a = cast(a, lhs_t, types::float64());
    b = cast(b, rhs_t, types::float64());
    return b_.CreateFDiv(a, b);
  }
  if (lhs_t->is_boolean()) {  // & | ^ on booleans
    switch (op) {
      case Op::BitAnd:
        return b_.CreateAnd(a, b);
      case Op::BitOr:
        return b_.CreateOr(a, b);
      case Op::BitXor:
        return b_.CreateXor(a, b);
      default:
        break;
    }
  }
  if (lhs_t->is_integer()) {
    if (op == Op::LShift || op == Op::RShift) {
      a = cast(a, lhs_t, result);
      b = b_.CreateIntCast(b, a->getType(), rhs_t->is_signed());
      // An amount outside [0, width) gives what the GPU's shift instructions give (shl/shr clamp it to the
      // width: 0, or the sign for an arithmetic shift), never LLVM's poison, on every target.
      unsigned width = a->getType()->getIntegerBitWidth();
      Value* last = llvm::ConstantInt::get(a->getType(), width - 1);
      // PTX's shift instructions read a 32-bit amount, and NVPTX folds the range check below into them: a 64-bit
      // amount is first brought into [0, 64], so that its high bits (2^32, a negative amount) are not dropped.
      if (width > 32)
        b = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b, llvm::ConstantInt::get(a->getType(), width));
      if (op == Op::RShift && lhs_t->is_signed())
        return b_.CreateAShr(a, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b, last));
      Value* in_range = b_.CreateICmpULE(b, last);
      Value* shifted = op == Op::LShift ? b_.CreateShl(a, b) : b_.CreateLShr(a, b);
      return b_.CreateSelect(in_range, shifted, llvm::Constant::getNullValue(a->getType()));
    }
    return int_binary(op, a, b, lhs_t);
  }
  if (lhs_t->is_float()) return float_binary(op, a, b, lhs_t);
  if (lhs_t->is_complex()) return complex_binary(op, a, b, lhs_t);
  fail(ErrorKind::Internal, "no lowering for operator on " + lhs_t->name());
}

// Python integer semantics: floor division and a modulo with the divisor's
// sign; division by zero (and MIN // -1) give 0 under numba's numpy error model.
Value* FunctionLowering::int_binary(Op op, Value* a, Value* b, TypeRef t) {
  switch (op) {
    case Op::Add:
      return b_.CreateAdd(a, b);
    case Op::Sub:
      return b_.CreateSub(a, b);
    case Op::Mul:
      return b_.CreateMul(a, b);
    case Op::BitAnd:
      return b_.CreateAnd(a, b);
    case Op::BitOr:
      return b_.CreateOr(a, b);
    case Op::BitXor:
      return b_.CreateXor(a, b);
    case Op::FloorDiv:
    case Op::Mod:
      break;
    default:
      fail(ErrorKind::Internal, std::string("no integer lowering for ") + ir::op_symbol(op));
  }
  llvm::Type* ty = a->getType();
  Value* zero = llvm::ConstantInt::get(ty, 0);
  Value* one = llvm::ConstantInt::get(ty, 1);
  Value* bad = b_.CreateICmpEQ(b, zero);
  if (!t->is_signed()) {
    Value* safe_b = b_.CreateSelect(bad, one, b);
    Value* r = op == Op::FloorDiv ? b_.CreateUDiv(a, safe_b) : b_.CreateURem(a, safe_b);
    return b_.CreateSelect(bad, zero, r);
  }
  Value* overflow = b_.CreateAnd(
      b_.CreateICmpEQ(a, llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getIntegerBitWidth()))),
      b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(ty, -1)));
  bad = b_.CreateOr(bad, overflow);
  Value* safe_b = b_.CreateSelect(bad, one, b);
  Value* q = b_.CreateSDiv(a, safe_b);
  Value* r = b_.CreateSRem(a, safe_b);
  // Round toward negative infinity: adjust when the remainder's sign differs from b's.
  Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, safe_b), zero));
  Value* result = op == Op::FloorDiv ? b_.CreateSelect(adjust, b_.CreateSub(q, one), q)
                                     : b_.CreateSelect(adjust, b_.CreateAdd(r, safe_b), r);
  return b_.CreateSelect(bad, zero, result);
}

Value* FunctionLowering::float_binary(Op op, Value* a, Value* b, TypeRef t) {
  switch (op) {
    case Op::Add:
      return b_.CreateFAdd(a, b);
    case Op::Sub:
      return b_.CreateFSub(a, b);
    case Op::Mul:
      return b_.CreateFMul(a, b);
    case Op::Div:
      return b_.CreateFDiv(a, b);
    case Op::Pow:
      return math_call("pow", {a, b}, t);
    case Op::FloorDiv:
    case Op::Mod:
      return float_divmod(op, a, b);
    default:
      fail(ErrorKind::Internal, std::string("no float lowering for ") + ir::op_symbol(op));
  }
}

// CPython's float_divmod on libdevice's exact fmod (LLVM's frem becomes
// a - trunc(a / b) * b in NVPTX, where the rounding of a / b leaks into the
// result). Division by zero follows numba's numpy error model: a // 0.0 is
// a / 0.0 (±inf or nan) and a % 0.0 is nan.
Value* FunctionLowering::float_divmod(Op op, Value* a, Value* b) {
  llvm::Type* ft = a->getType();
  TypeRef t = ft->isDoubleTy() ? types::float64() : types::float32();
  Value* zero = llvm::ConstantFP::get(ft, 0.0);
  Value* one = llvm::ConstantFP::get(ft, 1.0);
  Value* mod = libdevice_call("fmod", {a, b}, t);
  Value* div = b_.CreateFDiv(b_.CreateFSub(a, mod), b);
  // A non-zero remainder takes the divisor's sign (and the quotient moves down one); a zero one is a zero
  // of the divisor's sign.
  Value* nonzero_mod = b_.CreateFCmpUNE(mod, zero);
  Value* fix = b_.CreateAnd(nonzero_mod, b_.CreateXor(b_.CreateFCmpOLT(b, zero), b_.CreateFCmpOLT(mod, zero)));
  Value* signed_zero_mod = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, b);
  mod = b_.CreateSelect(nonzero_mod, b_.CreateSelect(fix, b_.CreateFAdd(mod, b), mod), signed_zero_mod);
  if (op == Op::Mod) return mod;
  div = b_.CreateSelect(fix, b_.CreateFSub(div, one), div);
  // Snap the quotient to the nearest integer below; a zero quotient takes the sign of a / b.
  Value* floored = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div);
  floored = b_.CreateSelect(b_.CreateFCmpOGT(b_.CreateFSub(div, floored), llvm::ConstantFP::get(ft, 0.5)),
                            b_.CreateFAdd(floored, one), floored);
  Value* quotient = b_.CreateFDiv(a, b);
  Value* signed_zero_div = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, quotient);
  Value* result = b_.CreateSelect(b_.CreateFCmpUNE(div, zero), floored, signed_zero_div);
  return b_.CreateSelect(b_.CreateFCmpOEQ(b, zero), quotient, result);
}

Value* FunctionLowering::complex_binary(Op op, Value* a, Value* b, TypeRef t) {
  Value* ar = b_.CreateExtractValue(a, 0);
  Value* ai = b_.CreateExtractValue(a, 1);
  Value* br = b_.CreateExtractValue(b, 0);
  Value* bi = b_.CreateExtractValue(b, 1);
  Value* re;
  Value* im;
  switch (op) {
    case Op::Add:
      re = b_.CreateFAdd(ar, br);
      im = b_.CreateFAdd(ai, bi);
      break;
    case Op::Sub:
      re = b_.CreateFSub(ar, br);
      im = b_.CreateFSub(ai, bi);
      break;
    case Op::Mul:
      re = b_.CreateFSub(b_.CreateFMul(ar, br), b_.CreateFMul(ai, bi));
      im = b_.CreateFAdd(b_.CreateFMul(ar, bi), b_.CreateFMul(ai, br));
      break;
    case Op::Div: {
      Value* denom = b_.CreateFAdd(b_.CreateFMul(br, br), b_.CreateFMul(bi, bi));
      re = b_.CreateFDiv(b_.CreateFAdd(b_.CreateFMul(ar, br), b_.CreateFMul(ai, bi)), denom);
      im = b_.CreateFDiv(b_.CreateFSub(b_.CreateFMul(ai, br), b_.CreateFMul(ar, bi)), denom);
      break;
    }
    case Op::Pow: {  // the cmath family's complex power (intrinsics/complex_math.cpp)
      const std::vector<TypeRef> params{t, t};
      return intrinsics::find("cmath.__pow__")->lower(*this, {a, b}, intrinsics::CallTypes{params, t});
    }
    default:
      fail(ErrorKind::Unsupported, std::string("Unsupported: operator ") + ir::op_symbol(op) + " on complex numbers");
  }
  return build_tuple({re, im}, t);
}

// numba's int_power: repeated squaring; a negative exponent gives 1 / r
// truncated (so 0 unless the base is ±1), and 0 ** -n gives the type's minimum.
Value* FunctionLowering::int_power(Value* base, Value* exp, TypeRef base_t, TypeRef result) {
  llvm::Type* ty = base->getType();
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "ipow.loop", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "ipow.done", llfn_);
  Value* zero = llvm::ConstantInt::get(ty, 0);
  Value* one = llvm::ConstantInt::get(ty, 1);
  Value* negative = base_t->is_signed() ? b_.CreateICmpSLT(exp, zero) : b_.getFalse();
  Value* e0 = b_.CreateSelect(negative, b_.CreateNeg(exp), exp);
  b_.CreateCondBr(b_.CreateICmpEQ(e0, zero), done, loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* r = b_.CreatePHI(ty, 2);
  llvm::PHINode* a = b_.CreatePHI(ty, 2);
  llvm::PHINode* e = b_.CreatePHI(ty, 2);
  r->addIncoming(one, pre);
  a->addIncoming(base, pre);
  e->addIncoming(e0, pre);
  Value* r2 = b_.CreateSelect(b_.CreateICmpNE(b_.CreateAnd(e, one), zero), b_.CreateMul(r, a), r);
  Value* e2 = b_.CreateLShr(e, one);
  Value* a2 = b_.CreateMul(a, a);
  r->addIncoming(r2, loop);
  a->addIncoming(a2, loop);
  e->addIncoming(e2, loop);
  b_.CreateCondBr(b_.CreateICmpEQ(e2, zero), done, loop);
  b_.SetInsertPoint(done);
  llvm::PHINode* res = b_.CreatePHI(ty, 2);
  res->addIncoming(one, pre);
  res->addIncoming(r2, loop);
  Value* out = res;
  if (base_t->is_signed()) {
    Value* is_one = b_.CreateICmpEQ(base, one);
    Value* is_minus_one = b_.CreateICmpEQ(base, llvm::ConstantInt::getSigned(ty, -1));
    Value* odd = b_.CreateICmpNE(b_.CreateAnd(exp, one), zero);
    Value* inv = b_.CreateSelect(
        is_one, one,
        b_.CreateSelect(
            is_minus_one, b_.CreateSelect(odd, llvm::ConstantInt::getSigned(ty, -1), one),
            b_.CreateSelect(b_.CreateICmpEQ(base, zero),
                            llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getIntegerBitWidth())),
                            zero)));
    out = b_.CreateSelect(negative, inv, res);
  }
  return cast(out, base_t, result);
}

Value* FunctionLowering::compare(Op op, Value* a, Value* b, TypeRef t) {
  t = t->unliteral();
  if (t->kind() == TypeKind::BFloat16)  // exactly as the float32 values they are
    return compare(op, cast(a, t, types::float32()), cast(b, t, types::float32()), types::float32());
  if (types::is_time(t)) return time_compare(op, a, b);
  if (t->is_complex()) {
    TypeRef part = types::float_(t->bitwidth() / 2);
    Value* eq = b_.CreateAnd(compare(Op::Eq, b_.CreateExtractValue(a, 0), b_.CreateExtractValue(b, 0), part),
                             compare(Op::Eq, b_.CreateExtractValue(a, 1), b_.CreateExtractValue(b, 1), part));
    return op == Op::Eq ? eq : b_.CreateNot(eq);
  }
  if (!t->is_number()) return b_.getInt1(op == Op::NotEq);  // None == None etc.
  if (t->is_boolean()) {
    // Booleans compare as the integers 0 and 1 (numba's int_*_impl): NVPTX cannot
    // select ordered comparisons of i1 values when nothing folds them away.
    a = b_.CreateZExt(a, b_.getInt8Ty());
    b = b_.CreateZExt(b, b_.getInt8Ty());
    t = types::uint8();
  }
  if (t->is_float()) {
    switch (op) {
      case Op::Eq:
        return b_.CreateFCmpOEQ(a, b);
      case Op::NotEq:
        return b_.CreateFCmpUNE(a, b);
      case Op::Lt:
        return b_.CreateFCmpOLT(a, b);
      case Op::LtE:
        return b_.CreateFCmpOLE(a, b);
      case Op::Gt:
        return b_.CreateFCmpOGT(a, b);
      case Op::GtE:
        return b_.CreateFCmpOGE(a, b);
      default:
        break;
    }
  } else {
    bool s = t->is_signed();
    switch (op) {
      case Op::Eq:
        return b_.CreateICmpEQ(a, b);
      case Op::NotEq:
        return b_.CreateICmpNE(a, b);
      case Op::Lt:
        return s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
      case Op::LtE:
        return s ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
      case Op::Gt:
        return s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
      case Op::GtE:
        return s ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
      default:
        break;
    }
  }
  fail(ErrorKind::Internal, "bad comparison operator");
}

Value* FunctionLowering::compare_operands(Op op, Value* a, Value* b, TypeRef ta, TypeRef tb) {
  if (op == Op::Is || op == Op::IsNot) {  // one side is None (typing): is the other one None too?
    Value* other = ta->kind() == TypeKind::None ? b : a;
    TypeRef other_t = ta->kind() == TypeKind::None ? tb : ta;
    Value* is_none = other_t->kind() == TypeKind::None       ? b_.getInt1(true)
                     : other_t->kind() == TypeKind::Optional ? b_.CreateNot(b_.CreateExtractValue(other, 1))
                                                             : b_.getInt1(false);
    return op == Op::Is ? is_none : b_.CreateNot(is_none);
  }
  if (op == Op::In) return contains(a, b, ta, tb);
  if (op == Op::NotIn) return b_.CreateNot(contains(a, b, ta, tb));
  if (ta->is_tuple() && tb->is_tuple()) return compare_tuples(op, a, b, ta, tb);
  if (types::is_charseq(ta)) return charseq_compare(op, a, b, ta, tb);
  return compare(op, a, b, ta);
}

Value* FunctionLowering::compare_converted(Op op, Value* a, Value* b, TypeRef ta, TypeRef tb) {
  auto sig = typing::resolve_compare(op, ta, tb);
  return compare_operands(op, cast(a, ta, sig->params[0]), cast(b, tb, sig->params[1]), sig->params[0], sig->params[1]);
}

// Python's tuple comparison: == when the lengths and every pair are equal; an ordering is decided by the
// first unequal pair, or by the lengths when one tuple is a prefix of the other.
Value* FunctionLowering::compare_tuples(Op op, Value* a, Value* b, TypeRef ta, TypeRef tb) {
  auto element = [&](Op o, size_t i) {
    return compare_converted(o, b_.CreateExtractValue(a, i), b_.CreateExtractValue(b, i), ta->element(i),
                             tb->element(i));
  };
  size_t na = ta->count(), nb = tb->count();
  if (op == Op::Eq || op == Op::NotEq) {
    Value* eq = b_.getInt1(na == nb);
    if (na == nb)
      for (size_t i = 0; i < na; ++i) eq = b_.CreateAnd(eq, element(Op::Eq, i));
    return op == Op::Eq ? eq : b_.CreateNot(eq);
  }
  bool by_length = op == Op::Lt ? na < nb : op == Op::LtE ? na <= nb : op == Op::Gt ? na > nb : na >= nb;
  Op decisive = op == Op::Lt || op == Op::LtE ? Op::Lt : Op::Gt;
  Value* result = b_.getInt1(by_length);
  for (size_t i = std::min(na, nb); i-- > 0;)
    result = b_.CreateSelect(element(Op::Eq, i), result, element(decisive, i));
  return result;
}

// `item in container`: any tuple element equal to it, or a value the range yields.
Value* FunctionLowering::contains(Value* item, Value* container, TypeRef ti, TypeRef tc) {
  if (types::is_charseq(tc)) return charseq_contains(item, container, ti, tc);
  if (tc->is_tuple()) {
    Value* found = b_.getFalse();
    for (size_t i = 0; i < tc->count(); ++i)
      found =
          b_.CreateOr(found, compare_converted(Op::Eq, item, b_.CreateExtractValue(container, i), ti, tc->element(i)));
    return found;
  }
  TypeRef it = tc->element(0);
  bool s = it->is_signed();
  Value* x = cast(item, ti, it);
  Value* start = b_.CreateExtractValue(container, 0);
  Value* stop = b_.CreateExtractValue(container, 1);
  Value* step = b_.CreateExtractValue(container, 2);
  Value* zero = llvm::ConstantInt::get(x->getType(), 0);
  auto lt = [&](Value* p, Value* q) { return s ? b_.CreateICmpSLT(p, q) : b_.CreateICmpULT(p, q); };
  auto le = [&](Value* p, Value* q) { return s ? b_.CreateICmpSLE(p, q) : b_.CreateICmpULE(p, q); };
  Value* up = b_.CreateAnd(le(start, x), lt(x, stop));
  Value* down = b_.CreateAnd(lt(stop, x), le(x, start));
  Value* within = s ? b_.CreateSelect(b_.CreateICmpSGT(step, zero), up, down) : up;
  Value* safe_step = b_.CreateSelect(b_.CreateICmpEQ(step, zero), llvm::ConstantInt::get(x->getType(), 1), step);
  Value* offset = b_.CreateSub(x, start);
  Value* on_step = b_.CreateICmpEQ(s ? b_.CreateSRem(offset, safe_step) : b_.CreateURem(offset, safe_step), zero);
  return b_.CreateAnd(within, on_step);
}

// range[k]: start + k * step, a negative k counting from the end.
Value* FunctionLowering::range_item(Value* range, Value* index, TypeRef rt) {
  TypeRef it = rt->element(0);
  Value* start = b_.CreateExtractValue(range, 0);
  Value* step = b_.CreateExtractValue(range, 2);
  Value* k = b_.CreateIntCast(index, start->getType(), true);
  if (it->is_signed()) {
    Value* n = range_value_length(range, rt, {});
    k = b_.CreateSelect(b_.CreateICmpSLT(k, llvm::ConstantInt::get(k->getType(), 0)), b_.CreateAdd(k, n), k);
  }
  return b_.CreateAdd(start, b_.CreateMul(k, step));
}

Value* FunctionLowering::range_value_length(Value* range, TypeRef rt, const SourceLoc& loc) {
  return range_length(b_.CreateExtractValue(range, 0), b_.CreateExtractValue(range, 1), b_.CreateExtractValue(range, 2),
                      rt->element(0), loc);
}

Value* FunctionLowering::unary(const Expr& e) {
  const Expr& x = *e.operands[0];
  if (e.op == Op::Not) return b_.CreateNot(truth(lower_expr(x), x.type));
  TypeRef t = e.operand_types[0];
  Value* v = lower_as(x, t);
  switch (e.op) {
    case Op::UAdd:
      return cast(v, t, e.type);
    case Op::USub:
      if (t->is_integer() || t->kind() == TypeKind::Timedelta)
        return cast(b_.CreateNeg(v), t, e.type);  // (-NaT is NaT)
      if (t->is_float()) return b_.CreateFNeg(v);
      if (t->kind() == TypeKind::BFloat16) return b_.CreateXor(v, b_.getInt16(0x8000));  // the sign bit
      return build_tuple({b_.CreateFNeg(b_.CreateExtractValue(v, 0)), b_.CreateFNeg(b_.CreateExtractValue(v, 1))}, t);
    case Op::Invert:
      if (t->is_boolean()) return b_.CreateNot(v);
      return cast(b_.CreateNot(v), t, e.type);
    default:
      break;
  }
  fail(ErrorKind::Internal, "bad unary operator");
}

// `a and b` / `a or b`: Python's value semantics with short-circuit evaluation.
Value* FunctionLowering::short_circuit(const Expr& e) {
  llvm::BasicBlock* end = llvm::BasicBlock::Create(ctx_, "boolop.end", llfn_);
  std::vector<std::pair<Value*, llvm::BasicBlock*>> incoming;
  for (size_t i = 0; i < e.operands.size(); ++i) {
    const Expr& x = *e.operands[i];
    Value* v = lower_expr(x);
    Value* as_result = cast(v, x.type, e.type);
    if (i + 1 == e.operands.size()) {
      incoming.push_back({as_result, b_.GetInsertBlock()});
      b_.CreateBr(end);
      break;
    }
    Value* t = truth(v, x.type);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, "boolop.next", llfn_);
    incoming.push_back({as_result, b_.GetInsertBlock()});
    if (e.op == Op::And)
      b_.CreateCondBr(t, next, end);
    else
      b_.CreateCondBr(t, end, next);
    b_.SetInsertPoint(next);
  }
  b_.SetInsertPoint(end);
  llvm::PHINode* phi = b_.CreatePHI(state_.model.value_type(e.type), incoming.size());
  for (auto& [v, bb] : incoming) phi->addIncoming(v, bb);
  return phi;
}

Value* FunctionLowering::if_exp(const Expr& e) {
  Value* c = truth(lower_expr(*e.operands[0]), e.operands[0]->type);
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "ifexp.then", llfn_);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx_, "ifexp.else", llfn_);
  llvm::BasicBlock* end = llvm::BasicBlock::Create(ctx_, "ifexp.end", llfn_);
  b_.CreateCondBr(c, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  Value* tv = lower_as(*e.operands[1], e.type);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(end);
  b_.SetInsertPoint(else_bb);
  Value* ev = lower_as(*e.operands[2], e.type);
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(end);
  b_.SetInsertPoint(end);
  llvm::PHINode* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(ev, else_end);
  return phi;
}

Value* FunctionLowering::call(const Expr& e) {
  if (e.operands[0]->kind == ExprKind::Attribute) {  // x.conjugate() or a method from the intrinsic table
    if (e.operands[0]->attr != "conjugate") return method_call(e);
    TypeRef t = e.operand_types[0];
    Value* v = lower_as(*e.operands[0]->operands[0], t);
    if (!t->is_complex()) return v;
    return b_.CreateInsertValue(v, b_.CreateFNeg(b_.CreateExtractValue(v, 1)), 1);
  }
  const ir::GlobalValue& g = e.operands[0]->global;
  if (g.kind == K::Builtin && (g.name == "cuda.shared.array" || g.name == "cuda.local.array"))
    return memory_array(e, g.name);
  if (g.kind == K::Builtin && g.name == "cuda.const.array_like") return constant_array(e.operands[1]->global);
  if (g.kind == K::Builtin && g.name == "print") return print(e);
  std::vector<Value*> args;
  for (size_t i = 1; i < e.operands.size(); ++i) args.push_back(lower_as(*e.operands[i], e.operand_types[i - 1]));
  if (g.kind == K::DeviceFunction) return emit_device_call(e, std::move(args));
  if (g.kind == K::TypeObject && e.type->kind() == TypeKind::Record) return record_from_values(args, e.type);
  if (g.kind == K::TypeObject && args.empty())  // fp8_e4m3(): cuda_fp8.h leaves it undefined; cujit gives zero
    return zero_value(e.type);
  if (g.kind == K::TypeObject) return cast(args[0], e.operand_types[0], e.type);
  if (const intrinsics::Intrinsic* in = intrinsics::find(g.name); in && in->lower)
    return intrinsic_call(*in, std::move(args), e);
  return builtin_call(g.name, std::move(args), e);
}

Value* FunctionLowering::min_max(bool is_min, std::vector<Value*> args, TypeRef t) {
  Value* acc = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    // Python: min(a, b) is b if b < a else a (so NaN handling follows the order).
    Value* better = compare(is_min ? Op::Lt : Op::Gt, args[i], acc, t);
    acc = b_.CreateSelect(better, args[i], acc);
  }
  return acc;
}

Value* FunctionLowering::builtin_call(const std::string& name, std::vector<Value*> args, const Expr& e) {
  const std::vector<TypeRef>& pt = e.operand_types;
  TypeRef rt = e.type;
  if (name == "ffi.from_buffer") return array_field(args[0], kData);  // cffi: the array's data pointer
  if (name.rfind("numpy.", 0) == 0 && rt->kind() == TypeKind::Array)
    return ufunc_loop(name, args, e);  // np.sin(x, out)
  if (auto op = typing::numpy_operators().find(name); op != typing::numpy_operators().end())
    return binary(op->second, args[0], args[1], pt[0], pt[1], rt);  // np.add(a, b) of scalars: a + b
  if (name == "numpy.minimum" || name == "numpy.maximum") return min_max(name == "numpy.minimum", args, rt);
  if (name == "min" || name == "max") {
    if (args.size() == 1) {  // min(tuple)
      TypeRef tt = pt[0];
      std::vector<Value*> elems;
      for (size_t i = 0; i < tt->count(); ++i)
        elems.push_back(cast(b_.CreateExtractValue(args[0], i), tt->element(i), rt));
      return min_max(name == "min", elems, rt);
    }
    return min_max(name == "min", args, rt);
  }
  if (name == "abs" || name == "numpy.abs" || name == "numpy.absolute") {
    TypeRef t = pt[0];
    if (t->is_integer()) {
      if (!t->is_signed()) return args[0];
      return b_.CreateSelect(b_.CreateICmpSLT(args[0], llvm::ConstantInt::get(args[0]->getType(), 0)),
                             b_.CreateNeg(args[0]), args[0]);
    }
    if (t->is_float()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, args[0]);
    return libdevice_call("hypot", {b_.CreateExtractValue(args[0], 0), b_.CreateExtractValue(args[0], 1)}, rt);
  }
  if (name == "int" || name == "float" || name == "bool") return cast(args[0], pt[0], rt);
  if (name == "range") {
    llvm::Type* ity = args[0]->getType();
    Value* one = llvm::ConstantInt::get(ity, 1);
    if (args.size() == 1) return build_tuple({llvm::ConstantInt::get(ity, 0), args[0], one}, rt);
    return build_tuple({args[0], args[1], args.size() == 3 ? args[2] : one}, rt);
  }
  if (name == "len") {
    if (pt[0]->is_tuple()) return b_.getInt64(pt[0]->count());
    if (pt[0]->kind() == TypeKind::Range) return cast(range_value_length(args[0], pt[0], e.loc), pt[0]->element(0), rt);
    if (types::is_charseq(pt[0])) return charseq_length(args[0], pt[0]);
    return array_field(args[0], 5, 0);
  }
  if (name == "str.isascii") return charseq_isascii(args[0], pt[0]);
  if (name.rfind("numpy.", 0) == 0 && !pt.empty() && pt[0]->kind() == TypeKind::Array) {  // np.sum(a)...
    std::string what = name.substr(6);
    if (what == "amax") what = "max";
    if (what == "amin") what = "min";
    return array_reduction(what, args[0], pt[0], rt);
  }
  if (name == "$optional_value")  // passes/narrow_optionals.cpp: the value of an Optional tested not None
    return pt[0]->kind() == TypeKind::Optional ? b_.CreateExtractValue(args[0], 0) : args[0];
  if (name == "divmod") {  // (a // b, a % b), each as its operator
    TypeRef item = rt->element(0);
    return build_tuple({binary(Op::FloorDiv, args[0], args[1], pt[0], pt[1], item),
                        binary(Op::Mod, args[0], args[1], pt[0], pt[1], item)},
                       rt);
  }
  if (name == "complex") {
    if (args.size() == 1) return cast(args[0], pt[0], rt);
    return build_tuple({args[0], args[1]}, rt);
  }
  if (name == "round") {
    TypeRef t = pt[0];
    if (args.size() == 1) {
      if (t->is_integer()) return cast(args[0], t, rt);
      return cast(b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, args[0]), t, rt);
    }
    // round(x, n): scale by 10**n, round half to even, scale back.
    Value* ten = llvm::ConstantFP::get(args[0]->getType(), 10.0);
    Value* n = cast(args[1], types::int64(), t);
    Value* scale = math_call("pow", {ten, n}, t);
    Value* scaled = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_.CreateFMul(args[0], scale));
    return b_.CreateFDiv(scaled, scale);
  }
  std::string fn = name.substr(name.find('.') + 1);
  static const std::unordered_map<std::string, std::string> numpy_names = {
      {"arcsin", "asin"},   {"arccos", "acos"},   {"arctan", "atan"},   {"arctan2", "atan2"},
      {"arcsinh", "asinh"}, {"arccosh", "acosh"}, {"arctanh", "atanh"}, {"power", "pow"}};
  if (name.rfind("numpy.", 0) == 0) {
    auto it = numpy_names.find(fn);
    if (it != numpy_names.end()) fn = it->second;
  }
  if (fn == "isnan" || fn == "isinf" || fn == "isfinite") {
    TypeRef t = pt[0];
    if (!t->is_float()) return b_.getInt1(fn == "isfinite");
    Value* x = args[0];
    if (fn == "isnan") return b_.CreateFCmpUNO(x, x);
    Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    Value* inf = llvm::ConstantFP::getInfinity(x->getType());
    return fn == "isinf" ? b_.CreateFCmpOEQ(ax, inf) : b_.CreateFCmpOLT(ax, inf);
  }
  // Math on integers computes in the float result type.
  TypeRef ft = rt->is_float() ? rt : pt[0];
  for (size_t i = 0; i < args.size(); ++i)
    if (!(fn == "pow" && i == 1 && pt[i]->is_integer())) args[i] = cast(args[i], pt[i], ft);
  if (fn == "pow" && pt[1]->is_integer()) return binary(Op::Pow, args[0], args[1], ft, pt[1], ft);
  return math_call(fn, std::move(args), ft);
}

// A math function on float16/32/64 operands: an LLVM intrinsic where NVPTX has
// an instruction, libdevice otherwise.
Value* FunctionLowering::math_call(const std::string& fn, std::vector<Value*> args, TypeRef t) {
  static const std::unordered_map<std::string, llvm::Intrinsic::ID> intrinsics = {
      {"sqrt", llvm::Intrinsic::sqrt}, {"fabs", llvm::Intrinsic::fabs},   {"floor", llvm::Intrinsic::floor},
      {"ceil", llvm::Intrinsic::ceil}, {"trunc", llvm::Intrinsic::trunc}, {"copysign", llvm::Intrinsic::copysign}};
  if (t->bitwidth() == 16) {  // compute half-precision math in float32
    for (Value*& a : args) a = b_.CreateFPExt(a, b_.getFloatTy());
    return b_.CreateFPTrunc(math_call(fn, std::move(args), types::float32()), b_.getHalfTy());
  }
  auto it = intrinsics.find(fn);
  if (it != intrinsics.end()) {
    if (args.size() == 1) return b_.CreateUnaryIntrinsic(it->second, args[0]);
    return b_.CreateBinaryIntrinsic(it->second, args[0], args[1]);
  }
  if (fn == "degrees" || fn == "radians") {
    double k = fn == "degrees" ? 180.0 / M_PI : M_PI / 180.0;
    return b_.CreateFMul(args[0], llvm::ConstantFP::get(args[0]->getType(), k));
  }
  if (fn == "gamma") return libdevice_call("tgamma", std::move(args), t);
  return libdevice_call(fn, std::move(args), t);
}

Value* FunctionLowering::libdevice_call(const std::string& base, std::vector<Value*> args, TypeRef t) {
  bool single = t->bitwidth() == 32;
  static const std::vector<std::string> fast_variants = {"sin", "cos",  "tan",   "exp", "exp10",
                                                         "log", "log2", "log10", "pow"};
  std::string name = "__nv_" + base + (single ? "f" : "");
  if (single && state_.options.fastmath &&
      std::find(fast_variants.begin(), fast_variants.end(), base) != fast_variants.end())
    name = "__nv_fast_" + base + "f";
  llvm::Type* ft = args[0]->getType();
  return call_function(name, ft, std::move(args));
}

Value* FunctionLowering::attribute(const Expr& e) {
  if (e.operands[0]->type->kind() == TypeKind::Record) return load_field(e);
  if (e.operands[0]->type->kind() == TypeKind::Array)
    return array_attribute(lower_expr(*e.operands[0]), e.operands[0]->type, e.attr);
  TypeRef t = e.operand_types[0];
  Value* v = lower_as(*e.operands[0], t);
  if (t->kind() == TypeKind::Range)  // {start, stop, step}
    return b_.CreateExtractValue(v, e.attr == "start" ? 0 : e.attr == "stop" ? 1 : 2);
  const intrinsics::Intrinsic* in = intrinsics::find(t->name() + "." + e.attr);  // float32x4.x: a table row
  if (in && in->kind == intrinsics::Intrinsic::Kind::Attribute) return intrinsic_call(*in, {v}, e);
  if (t->is_complex()) return b_.CreateExtractValue(v, e.attr == "real" ? 0 : 1);
  return e.attr == "real" ? v : zero_value(t);
}

Value* FunctionLowering::subscript(const Expr& e) {
  if (e.operands[0]->type->kind() == TypeKind::Record) return load_field(e);
  if (e.operands[0]->type->kind() == TypeKind::Array) return array_getitem(e);
  if (e.operands[0]->type->kind() == TypeKind::CPointer) return load_element(pointer_item(e), e.type);
  TypeRef base_t = e.operands[0]->type;
  Value* base = lower_expr(*e.operands[0]);
  TypeRef index_t = e.operands[1]->type;
  if (base_t->kind() == TypeKind::Range) return range_item(base, lower_expr(*e.operands[1]), base_t);
  if (index_t->kind() == TypeKind::IntegerLiteral) {
    int64_t i = index_t->literal_value();
    if (i < 0) i += static_cast<int64_t>(base_t->count());
    return b_.CreateExtractValue(base, static_cast<unsigned>(i));
  }
  // A UniTuple indexed at run time: spill to memory and load the element.
  Value* index = lower_as(*e.operands[1], types::int64());
  Value* n = b_.getInt64(base_t->count());
  index = b_.CreateSelect(b_.CreateICmpSLT(index, b_.getInt64(0)), b_.CreateAdd(index, n), index);
  llvm::Type* tuple_ty = state_.model.value_type(base_t);
  llvm::AllocaInst* slot = entry_alloca(tuple_ty, "tuple.spill");
  b_.CreateStore(base, slot);
  Value* ptr = b_.CreateInBoundsGEP(tuple_ty, slot, {b_.getInt64(0), index});
  return b_.CreateLoad(state_.model.value_type(e.type), ptr);
}

}  // namespace cujit::lowering
