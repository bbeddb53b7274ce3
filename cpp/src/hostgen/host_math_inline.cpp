// libdevice functions the CPU target gives small IR bodies (part of the host's
// libdevice, host_math.h): those that are one LLVM instruction or intrinsic with
// the GPU's exact semantics (sqrt, fma, floor, popc, clz, min, bit casts...).
// A module's declaration of one becomes an internal always-inline definition,
// so the optimiser sees through it (and vectorises loops calling it) instead of
// calling the out-of-line implementation in host_math.cpp's table.
#include <cstring>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "host_math.h"

namespace cujit::hostgen {
namespace {

using llvm::Value;
using B = llvm::IRBuilder<>;
using Body = Value* (*)(B&, llvm::Function&);

Value* arg(llvm::Function& f, unsigned i) { return f.getArg(i); }

template <llvm::Intrinsic::ID ID>
Value* unary(B& b, llvm::Function& f) {
  return b.CreateUnaryIntrinsic(ID, arg(f, 0));
}
template <llvm::Intrinsic::ID ID>
Value* binary(B& b, llvm::Function& f) {
  return b.CreateBinaryIntrinsic(ID, arg(f, 0), arg(f, 1));
}
// An integer intrinsic of the argument's width whose result is the function's (narrower) i32.
template <llvm::Intrinsic::ID ID>
Value* count(B& b, llvm::Function& f) {
  Value* x = arg(f, 0);
  Value* r =
      ID == llvm::Intrinsic::ctpop ? b.CreateUnaryIntrinsic(ID, x) : b.CreateBinaryIntrinsic(ID, x, b.getFalse());
  return b.CreateZExtOrTrunc(r, f.getReturnType());
}
Value* ffs(B& b, llvm::Function& f) {
  Value* x = arg(f, 0);
  Value* tz = b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, x, b.getTrue());
  Value* one_based = b.CreateZExtOrTrunc(b.CreateAdd(tz, llvm::ConstantInt::get(x->getType(), 1)), b.getInt32Ty());
  return b.CreateSelect(b.CreateIsNull(x), b.getInt32(0), one_based);
}
Value* fused(B& b, llvm::Function& f) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {f.getReturnType()}, {arg(f, 0), arg(f, 1), arg(f, 2)});
}
Value* absolute(B& b, llvm::Function& f) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, arg(f, 0), b.getFalse());  // abs(INT_MIN) = INT_MIN
}
// The high half of the double-width product (mulhi, umulhi, mul64hi, umul64hi).
template <bool Signed>
Value* high_product(B& b, llvm::Function& f) {
  llvm::Type* t = f.getReturnType();
  llvm::Type* wide = b.getIntNTy(t->getIntegerBitWidth() * 2);
  auto extend = [&](Value* v) { return Signed ? b.CreateSExt(v, wide) : b.CreateZExt(v, wide); };
  Value* product = b.CreateMul(extend(arg(f, 0)), extend(arg(f, 1)));
  return b.CreateTrunc(b.CreateLShr(product, t->getIntegerBitWidth()), t);
}
Value* bit_cast(B& b, llvm::Function& f) { return b.CreateBitCast(arg(f, 0), f.getReturnType()); }
Value* double_high(B& b, llvm::Function& f) {
  return b.CreateTrunc(b.CreateLShr(b.CreateBitCast(arg(f, 0), b.getInt64Ty()), 32), b.getInt32Ty());
}
Value* double_low(B& b, llvm::Function& f) {
  return b.CreateTrunc(b.CreateBitCast(arg(f, 0), b.getInt64Ty()), b.getInt32Ty());
}
Value* hilo_double(B& b, llvm::Function& f) {
  Value* hi = b.CreateShl(b.CreateZExt(arg(f, 0), b.getInt64Ty()), 32);
  return b.CreateBitCast(b.CreateOr(hi, b.CreateZExt(arg(f, 1), b.getInt64Ty())), b.getDoubleTy());
}
Value* is_nan(B& b, llvm::Function& f) { return b.CreateZExt(b.CreateFCmpUNO(arg(f, 0), arg(f, 0)), b.getInt32Ty()); }

struct InlineMath {
  const char* name;
  Body body;
};

constexpr auto S = llvm::Intrinsic::sqrt, FA = llvm::Intrinsic::fabs, FL = llvm::Intrinsic::floor,
               CE = llvm::Intrinsic::ceil, TR = llvm::Intrinsic::trunc, RI = llvm::Intrinsic::rint,
               NI = llvm::Intrinsic::nearbyint, RO = llvm::Intrinsic::round, CS = llvm::Intrinsic::copysign,
               SMIN = llvm::Intrinsic::smin, SMAX = llvm::Intrinsic::smax, UMIN = llvm::Intrinsic::umin,
               UMAX = llvm::Intrinsic::umax;

const InlineMath kInline[] = {
    {"__nv_sqrt", unary<S>},
    {"__nv_sqrtf", unary<S>},
    {"__nv_fabs", unary<FA>},
    {"__nv_fabsf", unary<FA>},
    {"__nv_floor", unary<FL>},
    {"__nv_floorf", unary<FL>},
    {"__nv_ceil", unary<CE>},
    {"__nv_ceilf", unary<CE>},
    {"__nv_trunc", unary<TR>},
    {"__nv_truncf", unary<TR>},
    {"__nv_rint", unary<RI>},
    {"__nv_rintf", unary<RI>},
    {"__nv_nearbyint", unary<NI>},
    {"__nv_nearbyintf", unary<NI>},
    {"__nv_round", unary<RO>},
    {"__nv_roundf", unary<RO>},
    {"__nv_copysign", binary<CS>},
    {"__nv_copysignf", binary<CS>},
    {"__nv_fma", fused},
    {"__nv_fmaf", fused},
    {"__nv_fmaf_rn", fused},
    {"__nv_fma_rn", fused},
    {"__nv_popc", count<llvm::Intrinsic::ctpop>},
    {"__nv_popcll", count<llvm::Intrinsic::ctpop>},
    {"__nv_clz", count<llvm::Intrinsic::ctlz>},
    {"__nv_clzll", count<llvm::Intrinsic::ctlz>},
    {"__nv_brev", unary<llvm::Intrinsic::bitreverse>},
    {"__nv_brevll", unary<llvm::Intrinsic::bitreverse>},
    {"__nv_ffs", ffs},
    {"__nv_ffsll", ffs},
    {"__nv_abs", absolute},
    {"__nv_llabs", absolute},
    {"__nv_min", binary<SMIN>},
    {"__nv_max", binary<SMAX>},
    {"__nv_umin", binary<UMIN>},
    {"__nv_umax", binary<UMAX>},
    {"__nv_llmin", binary<SMIN>},
    {"__nv_llmax", binary<SMAX>},
    {"__nv_ullmin", binary<UMIN>},
    {"__nv_ullmax", binary<UMAX>},
    {"__nv_mulhi", high_product<true>},
    {"__nv_umulhi", high_product<false>},
    {"__nv_mul64hi", high_product<true>},
    {"__nv_umul64hi", high_product<false>},
    {"__nv_float_as_int", bit_cast},
    {"__nv_int_as_float", bit_cast},
    {"__nv_double_as_longlong", bit_cast},
    {"__nv_longlong_as_double", bit_cast},
    {"__nv_double2hiint", double_high},
    {"__nv_double2loint", double_low},
    {"__nv_hiloint2double", hilo_double},
    {"__nv_isnand", is_nan},
    {"__nv_isnanf", is_nan},
};

}  // namespace

void define_inline_math(llvm::Module& module) {
  for (const InlineMath& m : kInline) {
    llvm::Function* f = module.getFunction(m.name);
    if (f == nullptr || !f->isDeclaration()) continue;
    B b(llvm::BasicBlock::Create(module.getContext(), "entry", f));
    b.CreateRet(m.body(b, *f));
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

}  // namespace cujit::hostgen
