// fp8 as numba-cuda binds cuda_fp8.h: the scalar types fp8_e4m3, fp8_e5m2 and
// fp8_e8m0 (held as their 8 bits), their constructors from every number
// (floats round to nearest even and saturate to the largest finite value, as
// __nv_fp8_e4m3(float) does; integers go through float32; e8m0 rounds up to a
// power of two, as __nv_fp8_e8m0's constructors do), their conversions to every
// number (exact to floats; to integers truncating and saturating, NaN giving 0,
// or 0x8000000000000000 for 64-bit integers),
// and the storage-level cuda.fp8.cvt_float_to_fp8 / cvt_double_to_fp8(x,
// saturation_t, fp8_interpretation_t) and cvt_float_to_e8m0 / cvt_double_to_e8m0(x,
// saturation_t, cudaRoundMode) returning the uint8 bits. Integer arithmetic on the
// bits, as cuda_fp8.hpp does where the hardware has no cvt: the same bits on every
// architecture (fp8_conversions.h).
#include <llvm/IR/Constants.h>

#include "fp8_conversions.h"

namespace cujit::intrinsics {

using llvm::Value;

namespace fp8 {
namespace {

// What cuda_fp8.hpp's double-to-fp8 conversion needs to know of a format.
struct FormatConstants {
  unsigned mantissa_bits;
  unsigned exponent_bias;
  uint64_t min_denorm_half;     // |x| at or below it rounds to zero (half the smallest denormal)
  uint64_t overflow_threshold;  // |x| above it overflows
  uint64_t min_norm;            // the smallest normal
  unsigned max_norm;            // the largest finite value's bits
  unsigned overflow_nosat;      // the bits of an overflow without saturation (NaN for e4m3, inf for e5m2)
};

FormatConstants constants(Format f) {
  if (f == Format::E4M3)  // 2^-10, 464 (448 plus half an ulp), 2^-6, 448
    return {3, 7, 0x3F50000000000000ULL, 0x407D000000000000ULL, 0x3F90000000000000ULL, 0x7E, 0x7F};
  // 2^-17, just under 61440 (57344 plus half an ulp, which rounds to inf), 2^-14, 57344
  return {2, 15, 0x3EE0000000000000ULL, 0x40EE000000000000ULL - 1, 0x3F10000000000000ULL, 0x7B, 0x7C};
}

Value* f32(Emitter& em, float v) { return llvm::ConstantFP::get(em.builder().getFloatTy(), v); }

}  // namespace

Value* from_double(Emitter& em, Value* x, Format format, Value* satfinite) {
  auto& b = em.builder();
  FormatConstants c = constants(format);
  auto u64 = [&](uint64_t v) { return b.getInt64(v); };
  Value* bits = b.CreateBitCast(x, b.getInt64Ty());
  Value* sign = b.CreateShl(b.CreateLShr(bits, 63), 7);
  Value* abs = b.CreateAnd(bits, u64(0x7FFFFFFFFFFFFFFFULL));
  Value* exp = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 52), u64(0x7FF)), u64(1023 - c.exponent_bias));
  Value* mantissa = b.CreateAnd(b.CreateLShr(bits, 52 - c.mantissa_bits), u64((1u << c.mantissa_bits) - 1));
  const uint64_t half_ulp = 1ULL << (52 - c.mantissa_bits - 1);

  // Normal range: exponent and mantissa, then the round-off bits decide.
  Value* normal = b.CreateOr(b.CreateShl(exp, c.mantissa_bits), mantissa);
  Value* round = b.CreateAnd(bits, u64(2 * half_ulp - 1));
  Value* up = b.CreateOr(b.CreateICmpUGT(round, u64(half_ulp)),
                         b.CreateAnd(b.CreateICmpEQ(round, u64(half_ulp)), b.CreateTrunc(mantissa, b.getInt1Ty())));
  normal = b.CreateAdd(normal, b.CreateZExt(up, b.getInt64Ty()));

  // Denormal range: the implicit bit joins the mantissa, shifted right by 1 - exp.
  Value* shift = b.CreateSub(u64(1), exp);
  shift = b.CreateSelect(b.CreateICmpUGT(shift, u64(c.mantissa_bits + 1)), u64(c.mantissa_bits + 1), shift);
  Value* full = b.CreateOr(mantissa, u64(1ULL << c.mantissa_bits));
  Value* denormal = b.CreateLShr(full, shift);
  Value* dround =
      b.CreateAnd(b.CreateOr(bits, u64(1ULL << 52)), b.CreateSub(b.CreateShl(u64(2 * half_ulp), shift), u64(1)));
  Value* dhalf = b.CreateShl(u64(half_ulp), shift);
  Value* dup = b.CreateOr(b.CreateICmpUGT(dround, dhalf),
                          b.CreateAnd(b.CreateICmpEQ(dround, dhalf), b.CreateTrunc(denormal, b.getInt1Ty())));
  denormal = b.CreateAdd(denormal, b.CreateZExt(dup, b.getInt64Ty()));

  Value* nan = format == Format::E4M3 ? u64(0x7F) : b.CreateOr(u64(0x7E), mantissa);
  Value* overflow = b.CreateSelect(satfinite, u64(c.max_norm), u64(c.overflow_nosat));
  Value* r = b.CreateSelect(b.CreateICmpUGE(abs, u64(c.min_norm)), normal, denormal);
  r = b.CreateSelect(b.CreateICmpUGT(abs, u64(c.overflow_threshold)), overflow, r);
  r = b.CreateSelect(b.CreateICmpUGT(abs, u64(0x7FF0000000000000ULL)), nan, r);
  r = b.CreateSelect(b.CreateICmpULE(abs, u64(c.min_denorm_half)), u64(0), r);
  return b.CreateTrunc(b.CreateOr(r, sign), b.getInt8Ty());
}

Value* from_double(Emitter& em, Value* x, Value* e5m2, Value* satfinite) {
  return em.builder().CreateSelect(e5m2, from_double(em, x, Format::E5M2, satfinite),
                                   from_double(em, x, Format::E4M3, satfinite));
}

Value* e8m0_from_bfloat16(Emitter& em, Value* bits, Value* satfinite, Value* rounding) {
  auto& b = em.builder();
  auto u16 = [&](unsigned v) { return b.getInt16(static_cast<uint16_t>(v)); };
  Value* magnitude = b.CreateAnd(bits, u16(0x7FFF));
  Value* res = b.CreateAnd(b.CreateLShr(bits, 7), u16(0xFF));  // the exponent: toward zero, unsaturated
  // Up when the mode is cudaRoundPosInf, the mantissa is not 0 and the value is above 2^-127 and finite.
  Value* up = b.CreateICmpEQ(rounding, llvm::ConstantInt::get(rounding->getType(), kRoundPosInf));
  up = b.CreateAnd(up, b.CreateICmpNE(b.CreateAnd(bits, u16(0x7F)), u16(0)));
  up = b.CreateAnd(up, b.CreateICmpUGT(magnitude, u16(0x40)));
  up = b.CreateAnd(up, b.CreateICmpULT(magnitude, u16(0x7F80)));
  res = b.CreateAdd(res, b.CreateZExt(up, b.getInt16Ty()));
  // Saturation: a non-NaN (inf included) that gives 0xFF (NaN) gives 0xFE.
  Value* sat = b.CreateAnd(satfinite, b.CreateICmpULE(magnitude, u16(0x7F80)));
  sat = b.CreateAnd(sat, b.CreateICmpEQ(res, u16(0xFF)));
  res = b.CreateSelect(sat, u16(0xFE), res);
  return b.CreateTrunc(res, b.getInt8Ty());
}

Value* e8m0_from_float(Emitter& em, Value* f, Value* satfinite, Value* rounding) {
  auto& b = em.builder();
  auto u32 = [&](uint32_t v) { return b.getInt32(v); };
  Value* ux = b.CreateBitCast(f, b.getInt32Ty());
  Value* is_nan = b.CreateICmpUGT(b.CreateAnd(ux, u32(0x7FFFFFFF)), u32(0x7F800000));
  Value* truncated = b.CreateLShr(ux, 16);
  // Toward zero: the upper half. Up (of the magnitude): the upper half, plus one if finite and inexact.
  Value* ua = b.CreateAnd(ux, u32(0x7FFFFFFF));
  Value* inexact =
      b.CreateAnd(b.CreateICmpULT(ua, u32(0x7F800000)), b.CreateICmpNE(b.CreateAnd(ua, u32(0xFFFF)), u32(0)));
  Value* rounded_up = b.CreateAdd(b.CreateLShr(ua, 16), b.CreateZExt(inexact, b.getInt32Ty()));
  Value* rz = b.CreateICmpEQ(rounding, llvm::ConstantInt::get(rounding->getType(), kRoundZero));
  Value* bf16 = b.CreateSelect(rz, truncated, rounded_up);
  bf16 = b.CreateSelect(is_nan, u32(0x7FFF), bf16);
  return e8m0_from_bfloat16(em, b.CreateTrunc(bf16, b.getInt16Ty()), satfinite, rounding);
}

Value* float_with_sticky(Emitter& em, Value* d) {
  auto& b = em.builder();
  Value* f = b.CreateFPTrunc(d, b.getFloatTy());
  Value* back = b.CreateFPExt(f, b.getDoubleTy());
  Value* u = b.CreateBitCast(f, b.getInt32Ty());
  Value* zero = llvm::ConstantFP::get(b.getDoubleTy(), 0.0);
  Value* not_nan = b.CreateICmpULE(b.CreateShl(u, 1), b.getInt32(0xFF000000u));
  // The float32 rounded away from zero: step back toward zero.
  Value* away = b.CreateOr(b.CreateAnd(b.CreateFCmpOGT(d, zero), b.CreateFCmpOGT(back, d)),
                           b.CreateAnd(b.CreateFCmpOLT(d, zero), b.CreateFCmpOLT(back, d)));
  u = b.CreateSub(u, b.CreateZExt(away, b.getInt32Ty()));
  Value* sticky = b.CreateAnd(b.CreateFCmpUNE(back, d), not_nan);
  u = b.CreateOr(u, b.CreateZExt(sticky, b.getInt32Ty()));
  return b.CreateBitCast(u, b.getFloatTy());
}

Value* e8m0_to_bfloat16(Emitter& em, Value* byte) {
  auto& b = em.builder();
  Value* v = b.CreateZExt(byte, b.getInt16Ty());
  Value* r = b.CreateShl(v, 7);
  r = b.CreateSelect(b.CreateICmpEQ(v, b.getInt16(0)), b.getInt16(0x40), r);
  return b.CreateSelect(b.CreateICmpEQ(v, b.getInt16(0xFF)), b.getInt16(0x7FFF), r);
}

Value* to_float(Emitter& em, Value* byte, TypeRef t) {
  auto& b = em.builder();
  Value* v = b.CreateZExt(byte, b.getInt32Ty());
  Value* nan = llvm::ConstantFP::getNaN(b.getFloatTy());
  if (t == types::fp8_e8m0()) {  // the float32 exponent field itself; 0 is 2^-127, a float32 denormal
    Value* bits = b.CreateSelect(b.CreateICmpEQ(v, b.getInt32(0)), b.getInt32(0x400000), b.CreateShl(v, 23));
    return b.CreateSelect(b.CreateICmpEQ(v, b.getInt32(0xFF)), nan, b.CreateBitCast(bits, b.getFloatTy()));
  }
  if (t == types::fp8_e5m2()) {  // the upper byte of a float16
    Value* half = b.CreateBitCast(b.CreateTrunc(b.CreateShl(v, 8), b.getInt16Ty()), b.getHalfTy());
    return b.CreateFPExt(half, b.getFloatTy());
  }
  Value* sign = b.CreateShl(b.CreateLShr(v, 7), 31);
  Value* exp = b.CreateAnd(b.CreateLShr(v, 3), 0xF);
  Value* mantissa = b.CreateAnd(v, 7);
  Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(exp, b.getInt32(127 - 7)), 23), b.CreateShl(mantissa, 20));
  Value* denormal = b.CreateBitCast(b.CreateFMul(b.CreateUIToFP(mantissa, b.getFloatTy()), f32(em, 1.0f / 512)),
                                    b.getInt32Ty());  // mantissa * 2^-9
  Value* magnitude = b.CreateSelect(b.CreateICmpEQ(exp, b.getInt32(0)), denormal, normal);
  Value* value = b.CreateBitCast(b.CreateOr(magnitude, sign), b.getFloatTy());
  return b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(v, 0x7F), b.getInt32(0x7F)), nan, value);
}

namespace {

// e8m0 of an integer or boolean, as __nv_fp8_e8m0's integer constructors give it: the smallest power of two
// not below |v| (2^-127, code 0, for 0). Exact for every width (the 64-bit constructors correct their
// bfloat16 rounding to this).
Value* e8m0_from_integer(Emitter& em, Value* v, TypeRef from) {
  auto& b = em.builder();
  Value* x = from->is_signed() ? b.CreateSExt(v, b.getInt64Ty()) : b.CreateZExt(v, b.getInt64Ty());
  if (from->is_signed())
    x = b.CreateSelect(b.CreateICmpSLT(x, b.getInt64(0)), b.CreateNeg(x), x);  // |INT64_MIN| = 2^63
  Value* bits = b.CreateSub(b.getInt64(64), b.CreateIntrinsic(llvm::Intrinsic::ctlz, {b.getInt64Ty()},
                                                              {b.CreateSub(x, b.getInt64(1)), b.getFalse()}));
  Value* exponent = b.CreateSelect(b.CreateICmpULE(x, b.getInt64(1)), b.getInt64(0), bits);
  Value* code = b.CreateSelect(b.CreateICmpEQ(x, b.getInt64(0)), b.getInt64(0), b.CreateAdd(exponent, b.getInt64(127)));
  return b.CreateTrunc(code, b.getInt8Ty());
}

// __nv_fp8_e8m0's constructors: saturating, rounding up; float64 through its sticky float32.
Value* number_to_e8m0(Emitter& em, Value* v, TypeRef from) {
  auto& b = em.builder();
  Value* rp = b.getInt32(kRoundPosInf);
  if (from->is_integer() || from->is_boolean()) {
    if (from->is_boolean()) v = b.CreateZExt(v, b.getInt8Ty()), from = types::uint8();
    return e8m0_from_integer(em, v, from);
  }
  Value* f = from->is_float() && from->bitwidth() == 64 ? float_with_sticky(em, v) : em.cast(v, from, types::float32());
  return e8m0_from_float(em, f, b.getTrue(), rp);
}

}  // namespace
}  // namespace fp8

Value* number_to_fp8(Emitter& em, Value* v, TypeRef from, TypeRef to) {
  auto& b = em.builder();
  from = from->unliteral();
  if (from == to) return v;
  if (from->kind() == TypeKind::FP8) v = fp8::to_float(em, v, from), from = types::float32();
  if (to == types::fp8_e8m0()) return fp8::number_to_e8m0(em, v, from);
  bool wide = from->is_float() && from->bitwidth() == 64;
  // Floats convert directly (float64 rounds once); integers and the 16-bit floats go through float32, as
  // cuda_fp8.hpp's constructors do.
  Value* d = wide ? v : b.CreateFPExt(em.cast(v, from, types::float32()), b.getDoubleTy());
  return fp8::from_double(em, d, to == types::fp8_e4m3() ? fp8::Format::E4M3 : fp8::Format::E5M2, b.getTrue());
}

Value* fp8_to_number(Emitter& em, Value* v, TypeRef from, TypeRef to) {
  auto& b = em.builder();
  if (to->kind() == TypeKind::FP8) return number_to_fp8(em, v, from, to);
  Value* f = fp8::to_float(em, v, from);
  if (to->is_integer()) {  // truncate and saturate; NaN gives 0 (LLVM's saturating conversions do exactly that)
    auto id = to->is_signed() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    Value* i = b.CreateIntrinsic(id, {em.value_type(to), b.getFloatTy()}, {f});
    if (to->bitwidth() != 64) return i;
    // cuda_fp8.hpp's 64-bit conversions (__half2ll_rz, __bfloat162ull_rz...) give NaN 0x8000000000000000.
    return b.CreateSelect(b.CreateFCmpUNO(f, f), b.getInt64(0x8000000000000000ULL), i);
  }
  return em.cast(f, types::float32(), to);
}

namespace {

Value* is_nonzero(Emitter& em, Value* v) {
  return em.builder().CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

// cuda.fp8.cvt_float_to_fp8(x, saturate, interpretation) and the double form: the uint8 bits. saturate is
// saturation_t (0 NOSAT, 1 SATFINITE), interpretation fp8_interpretation_t (0 E4M3, 1 E5M2); either may be a
// run-time value.
Value* storage_conversion(Emitter& em, std::vector<Value*> a, const CallTypes& types) {
  Value* d = em.cast(a[0], types.params[0], types::float64());
  return fp8::from_double(em, d, is_nonzero(em, a[2]), is_nonzero(em, a[1]));
}

// cuda.fp8.cvt_float_to_e8m0(x, saturate, rounding) and the double form: the uint8 e8m0 code.
Value* e8m0_conversion(Emitter& em, std::vector<Value*> a, const CallTypes& types) {
  Value* f = types.params[0] == types::float64() ? fp8::float_with_sticky(em, a[0]) : a[0];
  return fp8::e8m0_from_float(em, f, is_nonzero(em, a[1]), a[2]);
}

}  // namespace

std::string fp8_mode_problem(const std::vector<TypeRef>& a, size_t count, const std::string& what) {
  if (a.size() != count)
    return "takes " + std::to_string(count) + " arguments (x, saturate, " + what + "), got " + std::to_string(a.size());
  if (!a[count - 2]->is_integer() || !a[count - 1]->is_integer())
    return "saturate and " + what + " are saturation_t and " +
           (what == "rounding" ? "cudaRoundMode" : "fp8_interpretation_t") + " members (integers)";
  if (what == "rounding" && a[count - 1]->kind() == TypeKind::IntegerLiteral &&
      a[count - 1]->literal_value() != fp8::kRoundZero && a[count - 1]->literal_value() != fp8::kRoundPosInf)
    return "rounding must be cudaRoundMode.cudaRoundZero or cudaRoundMode.cudaRoundPosInf (cuda_fp8.h's e8m0 "
           "conversions support no other), got " +
           std::to_string(a[count - 1]->literal_value());
  return "";
}

void add_fp8_function(Table& t, const std::string& name, TypeRef x, TypeRef result, const std::string& mode,
                      Lowerer lower) {
  add(t, name,
      [x, result, mode](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (!fp8_mode_problem(a, 3, mode).empty()) return std::nullopt;
        return fixed({x, types::int32(), types::int32()}, result, a);
      },
      std::move(lower), {"x", "saturate", mode == "rounding" ? "rounding" : "fp8_interpretation"});
  t[name].explain = [mode](const std::vector<TypeRef>& a) { return fp8_mode_problem(a, 3, mode); };
}

// (float32_to_fp8 and float64_to_fp8 are the same Python objects as these, as in numba-cuda: cujit/cuda/fp8.py.)
void add_fp8(Table& t) {
  for (TypeRef x : {types::float32(), types::float64()}) {
    std::string name = x == types::float32() ? "float" : "double";
    add_fp8_function(t, "cuda.fp8.cvt_" + name + "_to_fp8", x, types::uint8(), "fp8_interpretation",
                     storage_conversion);
    add_fp8_function(t, "cuda.fp8.cvt_" + name + "_to_e8m0", x, types::uint8(), "rounding", e8m0_conversion);
  }
}

}  // namespace cujit::intrinsics
