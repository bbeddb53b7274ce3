// fp8 as numba-cuda binds cuda_fp8.h: the scalar types fp8_e4m3, fp8_e5m2 and
// fp8_e8m0 (held as their 8 bits), their constructors from every number
// (floats round to nearest even and saturate to the largest finite value, as
// __nv_fp8_e4m3(float) does; integers go through float32; e8m0 rounds up to a
// power of two), their conversions to every number (exact to floats; to
// integers truncating and saturating, NaN giving 0), and the storage-level
// cuda.fp8.cvt_float_to_fp8 / cvt_double_to_fp8(x, saturation_t, fp8_interpretation_t)
// returning the uint8 bits. Integer arithmetic on the float64 bits, as cuda_fp8.hpp
// does where the hardware has no cvt: the same bits on every architecture.
#include <llvm/IR/Constants.h>

#include "intrinsic_families.h"

namespace cujit::intrinsics {

using llvm::Value;

namespace {

enum class Fp8Format { E4M3, E5M2 };

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

FormatConstants constants(Fp8Format f) {
  if (f == Fp8Format::E4M3)  // 2^-10, 464 (448 plus half an ulp), 2^-6, 448
    return {3, 7, 0x3F50000000000000ULL, 0x407D000000000000ULL, 0x3F90000000000000ULL, 0x7E, 0x7F};
  // 2^-17, just under 61440 (57344 plus half an ulp, which rounds to inf), 2^-14, 57344
  return {2, 15, 0x3EE0000000000000ULL, 0x40EE000000000000ULL - 1, 0x3F10000000000000ULL, 0x7B, 0x7C};
}

// The fp8 bits of the float64 `x`: round to nearest even; an overflow gives the largest finite value when
// `satfinite` (an i1), else inf (e5m2) or NaN (e4m3).
Value* double_to_fp8(Emitter& em, Value* x, Fp8Format format, Value* satfinite) {
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
  Value* dround = b.CreateAnd(b.CreateOr(bits, u64(1ULL << 52)), b.CreateSub(b.CreateShl(u64(2 * half_ulp), shift), u64(1)));
  Value* dhalf = b.CreateShl(u64(half_ulp), shift);
  Value* dup = b.CreateOr(b.CreateICmpUGT(dround, dhalf),
                          b.CreateAnd(b.CreateICmpEQ(dround, dhalf), b.CreateTrunc(denormal, b.getInt1Ty())));
  denormal = b.CreateAdd(denormal, b.CreateZExt(dup, b.getInt64Ty()));

  Value* nan = format == Fp8Format::E4M3 ? u64(0x7F) : b.CreateOr(u64(0x7E), mantissa);
  Value* overflow = b.CreateSelect(satfinite, u64(c.max_norm), u64(c.overflow_nosat));
  Value* r = b.CreateSelect(b.CreateICmpUGE(abs, u64(c.min_norm)), normal, denormal);
  r = b.CreateSelect(b.CreateICmpUGT(abs, u64(c.overflow_threshold)), overflow, r);
  r = b.CreateSelect(b.CreateICmpUGT(abs, u64(0x7FF0000000000000ULL)), nan, r);
  r = b.CreateSelect(b.CreateICmpULE(abs, u64(c.min_denorm_half)), u64(0), r);
  return b.CreateTrunc(b.CreateOr(r, sign), b.getInt8Ty());
}

// e8m0 (an unsigned power of two, 2^(bits - 127); 0xFF is NaN) of a float32, rounded up, saturating.
Value* float_to_e8m0(Emitter& em, Value* f) {
  auto& b = em.builder();
  Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  Value* exp = b.CreateAnd(b.CreateLShr(bits, 23), 0xFF);
  Value* mantissa = b.CreateAnd(bits, 0x7FFFFF);
  Value* nan = b.CreateAnd(b.CreateICmpEQ(exp, b.getInt32(0xFF)), b.CreateICmpNE(mantissa, b.getInt32(0)));
  // A denormal float above 2^-127 rounds up to 2^-126; a normal one with mantissa bits to the next power.
  Value* normal_up = b.CreateAnd(b.CreateICmpNE(exp, b.getInt32(0)), b.CreateICmpNE(mantissa, b.getInt32(0)));
  Value* denormal_up = b.CreateAnd(b.CreateICmpEQ(exp, b.getInt32(0)), b.CreateICmpUGT(mantissa, b.getInt32(0x400000)));
  Value* r = b.CreateAdd(exp, b.CreateZExt(b.CreateOr(normal_up, denormal_up), b.getInt32Ty()));
  r = b.CreateSelect(b.CreateICmpUGE(r, b.getInt32(0xFF)), b.getInt32(0xFE), r);  // inf and overflow saturate
  r = b.CreateSelect(nan, b.getInt32(0xFF), r);
  return b.CreateTrunc(r, b.getInt8Ty());
}

Value* f32(Emitter& em, float v) { return llvm::ConstantFP::get(em.builder().getFloatTy(), v); }

// The exact float32 value of fp8 bits of type `t`.
Value* fp8_to_float(Emitter& em, Value* byte, TypeRef t) {
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

}  // namespace

Value* number_to_fp8(Emitter& em, Value* v, TypeRef from, TypeRef to) {
  auto& b = em.builder();
  from = from->unliteral();
  if (from == to) return v;
  if (from->kind() == TypeKind::FP8) v = fp8_to_float(em, v, from), from = types::float32();
  bool wide = from->is_float() && from->bitwidth() == 64;
  if (to == types::fp8_e8m0()) return float_to_e8m0(em, em.cast(v, from, types::float32()));
  // Floats convert directly (float64 rounds once); integers and the 16-bit floats go through float32, as
  // cuda_fp8.hpp's constructors do.
  Value* d = wide ? v : b.CreateFPExt(em.cast(v, from, types::float32()), b.getDoubleTy());
  return double_to_fp8(em, d, to == types::fp8_e4m3() ? Fp8Format::E4M3 : Fp8Format::E5M2, b.getTrue());
}

Value* fp8_to_number(Emitter& em, Value* v, TypeRef from, TypeRef to) {
  auto& b = em.builder();
  if (to->kind() == TypeKind::FP8) return number_to_fp8(em, v, from, to);
  Value* f = fp8_to_float(em, v, from);
  if (to->is_integer()) {  // truncate and saturate; NaN gives 0 (LLVM's saturating conversions do exactly that)
    auto id = to->is_signed() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b.CreateIntrinsic(id, {em.value_type(to), b.getFloatTy()}, {f});
  }
  return em.cast(f, types::float32(), to);
}

namespace {

// cuda.fp8.cvt_float_to_fp8(x, saturate, interpretation) and the double form: the uint8 bits. saturate is
// saturation_t (0 NOSAT, 1 SATFINITE), interpretation fp8_interpretation_t (0 E4M3, 1 E5M2); either may be a
// run-time value.
Lowerer storage_conversion() {
  return [](Emitter& em, std::vector<Value*> a, const CallTypes& types) -> Value* {
    auto& b = em.builder();
    Value* d = em.cast(a[0], types.params[0], types::float64());
    Value* sat = b.CreateICmpNE(a[1], llvm::ConstantInt::get(a[1]->getType(), 0));
    Value* e5m2 = b.CreateICmpNE(a[2], llvm::ConstantInt::get(a[2]->getType(), 0));
    return b.CreateSelect(e5m2, double_to_fp8(em, d, Fp8Format::E5M2, sat), double_to_fp8(em, d, Fp8Format::E4M3, sat));
  };
}

std::string storage_problem(const std::vector<TypeRef>& a) {
  if (a.size() != 3) return "takes 3 arguments (x, saturate, fp8_interpretation), got " + std::to_string(a.size());
  if (!a[1]->is_integer() || !a[2]->is_integer())
    return "saturate and fp8_interpretation are saturation_t and fp8_interpretation_t members (integers)";
  return "";
}

void add_storage_conversion(Table& t, const std::string& name, TypeRef x) {
  add(t, name, [x](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.size() != 3 || !a[1]->is_integer() || !a[2]->is_integer()) return std::nullopt;
        return fixed({x, types::int32(), types::int32()}, types::uint8(), a);
      },
      storage_conversion(), {"x", "saturate", "fp8_interpretation"});
  t[name].explain = storage_problem;
}

}  // namespace

// (float32_to_fp8 and float64_to_fp8 are the same Python objects as these, as in numba-cuda: cujit/cuda/fp8.py.)
void add_fp8(Table& t) {
  add_storage_conversion(t, "cuda.fp8.cvt_float_to_fp8", types::float32());
  add_storage_conversion(t, "cuda.fp8.cvt_double_to_fp8", types::float64());
}

}  // namespace cujit::intrinsics
