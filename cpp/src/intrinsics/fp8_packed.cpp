// numba-cuda's packed fp8 types and pair conversions (cuda_fp8.h's __nv_fp8x2_e4m3 ... __nv_fp8x4_e8m0):
// cuda.fp8.fp8x2_e4m3() (zero), fp8x2_e4m3(float32x2 or float64x2), fp8x4_e4m3(float32x4 or float64x4) and
// the same for e5m2 and e8m0, each element converted as the scalar constructor does (saturating; e8m0
// rounding up) into its byte, the first lowest; their bits read as `.__x` (uint16 / uint32); float32x2(p) and
// float32x4(p) giving the values back exactly. Functions: cvt_float2_to_fp8x2 / cvt_double2_to_fp8x2 and
// cvt_float2_to_e8m0x2 / cvt_double2_to_e8m0x2 (uint16: x in the low byte, y in the high one), and the
// bfloat16 "raw" conversions cvt_bfloat16raw_to_fp8, cvt_bfloat16raw_to_e8m0, cvt_e8m0_to_bf16raw, whose raw
// value (numba-cuda's __nv_bfloat16_raw, a struct of one uint16 `x`) is cujit's uint16x1; a bfloat16 is
// accepted where a raw value is.
#include "cujit/vector_types.h"
#include "fp8_conversions.h"

namespace cujit::intrinsics {
namespace {

using llvm::Value;

const TypeRef kScalars[] = {types::fp8_e4m3(), types::fp8_e5m2(), types::fp8_e8m0()};

TypeRef raw_type() { return types::vector(types::uint16(), 1); }

// One element (float32 or float64) as the scalar constructor of `fp8` converts it: the i8 code.
Value* element_to_fp8(Emitter& em, Value* v, bool wide, TypeRef fp8) {
  auto& b = em.builder();
  if (fp8 == types::fp8_e8m0())
    return fp8::e8m0_from_float(em, wide ? fp8::float_with_sticky(em, v) : v, b.getTrue(),
                                b.getInt32(fp8::kRoundPosInf));
  Value* d = wide ? v : b.CreateFPExt(v, b.getDoubleTy());
  return fp8::from_double(em, d, fp8 == types::fp8_e4m3() ? fp8::Format::E4M3 : fp8::Format::E5M2, b.getTrue());
}

// i8 codes packed into an integer of `codes.size()` bytes, the first lowest.
Value* pack(Emitter& em, const std::vector<Value*>& codes) {
  auto& b = em.builder();
  llvm::Type* ty = b.getIntNTy(static_cast<unsigned>(8 * codes.size()));
  Value* r = llvm::ConstantInt::get(ty, 0);
  for (size_t k = 0; k < codes.size(); ++k) r = b.CreateOr(r, b.CreateShl(b.CreateZExt(codes[k], ty), 8 * k));
  return r;
}

// The elements of a vector value converted by `convert` (i8 codes) and packed.
template <typename Convert>
Value* pack_vector(Emitter& em, Value* vec, TypeRef vec_type, Convert convert) {
  std::vector<Value*> codes;
  for (unsigned k = 0; k < vec_type->count(); ++k) codes.push_back(convert(em.builder().CreateExtractValue(vec, k)));
  return pack(em, codes);
}

// fp8x<n>_<fmt>(), fp8x<n>_<fmt>(float32x<n>), fp8x<n>_<fmt>(float64x<n>).
void add_constructor(Table& t, TypeRef packed) {
  TypeRef fp8 = packed->element(0);
  int n = static_cast<int>(packed->count());
  TypeRef f32 = types::vector(types::float32(), n), f64 = types::vector(types::float64(), n);
  std::string name = "cuda.fp8." + packed->name();
  add(
      t, name,
      [=](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.empty()) return OpSignature{{}, packed};
        if (a.size() == 1 && (a[0] == f32 || a[0] == f64)) return OpSignature{{a[0]}, packed};
        return std::nullopt;
      },
      [=](Emitter& em, std::vector<Value*> a, const CallTypes& ct) -> Value* {
        if (a.empty()) return llvm::ConstantInt::get(em.value_type(packed), 0);  // C++ leaves it undefined
        bool wide = ct.params[0] == f64;
        return pack_vector(em, a[0], ct.params[0], [&](Value* v) { return element_to_fp8(em, v, wide, fp8); });
      });
  t[name].explain = [=](const std::vector<TypeRef>&) {
    return packed->name() + " is built from nothing, a " + f32->name() + " or a " + f64->name();
  };
  // p.__x: the bits (uint16 or uint32), as numba-cuda's struct member.
  std::string attr = packed->name() + ".__x";
  t[attr] = Intrinsic{Intrinsic::Kind::Attribute,
                      attr,
                      {},
                      fixed_typer({packed}, types::integer(8 * n, false)),
                      [](Emitter&, std::vector<Value*> a, const CallTypes&) { return a[0]; }};
}

// float32x<n>(p): the exact values of a packed fp8 value (the conversion operators to float2 / float4).
void accept_packed(Table& t, int n) {
  TypeRef vec = types::vector(types::float32(), n);
  Intrinsic& in = t.at("cuda." + vec->name());
  Typer base_type = in.type;
  Lowerer base_lower = in.lower;
  Explainer base_explain = in.explain;
  in.explain = [=](const std::vector<TypeRef>& a) {
    for (TypeRef arg : a)
      if (arg->kind() == TypeKind::FP8Packed)
        return "a " + vec->name() + " is made from an fp8x" + std::to_string(n) + " value alone; " + arg->name() +
               " unpacks into a float32x" + std::to_string(arg->count());
    return base_explain ? base_explain(a) : std::string();
  };
  in.type = [=](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
    if (a.size() == 1 && a[0]->kind() == TypeKind::FP8Packed && static_cast<int>(a[0]->count()) == n)
      return OpSignature{{a[0]}, vec};
    return base_type(a);
  };
  in.lower = [=](Emitter& em, std::vector<Value*> a, const CallTypes& ct) -> Value* {
    if (ct.params.size() != 1 || ct.params[0]->kind() != TypeKind::FP8Packed) return base_lower(em, a, ct);
    auto& b = em.builder();
    std::vector<Value*> values;
    for (int k = 0; k < n; ++k)
      values.push_back(
          fp8::to_float(em, b.CreateTrunc(b.CreateLShr(a[0], 8 * k), b.getInt8Ty()), ct.params[0]->element(0)));
    return em.build_tuple(values, vec);
  };
}

Value* is_nonzero(Emitter& em, Value* v) {
  return em.builder().CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

// cvt_float2_to_fp8x2(x, saturate, interpretation) and the double2 form: uint16.
Value* pair_to_fp8(Emitter& em, std::vector<Value*> a, const CallTypes& ct) {
  auto& b = em.builder();
  bool wide = ct.params[0]->element(0) == types::float64();
  return pack_vector(em, a[0], ct.params[0], [&](Value* v) {
    return fp8::from_double(em, wide ? v : b.CreateFPExt(v, b.getDoubleTy()), is_nonzero(em, a[2]),
                            is_nonzero(em, a[1]));
  });
}

// cvt_float2_to_e8m0x2(x, saturate, rounding) and the double2 form: uint16.
Value* pair_to_e8m0(Emitter& em, std::vector<Value*> a, const CallTypes& ct) {
  bool wide = ct.params[0]->element(0) == types::float64();
  return pack_vector(em, a[0], ct.params[0], [&](Value* v) {
    return fp8::e8m0_from_float(em, wide ? fp8::float_with_sticky(em, v) : v, is_nonzero(em, a[1]), a[2]);
  });
}

// The i16 bits of a raw value (uint16x1) or of a bfloat16.
Value* raw_bits(Emitter& em, Value* v, TypeRef t) {
  return t == types::bfloat16() ? v : em.builder().CreateExtractValue(v, 0);
}

// cvt_bfloat16raw_to_fp8 / cvt_bfloat16raw_to_e8m0(raw or bfloat16, saturate, mode) -> uint8.
void add_raw_function(Table& t, const std::string& name, const std::string& mode, Lowerer lower) {
  add(t, name,
      [mode](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (!fp8_mode_problem(a, 3, mode).empty()) return std::nullopt;
        TypeRef x = a[0] == types::bfloat16() ? types::bfloat16() : raw_type();
        return fixed({x, types::int32(), types::int32()}, types::uint8(), a);
      },
      std::move(lower), {"x", "saturate", mode});
  t[name].explain = [mode](const std::vector<TypeRef>& a) {
    std::string problem = fp8_mode_problem(a, 3, mode);
    if (!problem.empty()) return problem;
    return "x must be a bfloat16 raw value (uint16x1: cuda.ushort1(bits), or what cvt_e8m0_to_bf16raw gives) or a "
           "bfloat16, got " +
           a[0]->name();
  };
}

void add_raw_functions(Table& t) {
  add_raw_function(t, "cuda.fp8.cvt_bfloat16raw_to_fp8", "fp8_interpretation",
                   [](Emitter& em, std::vector<Value*> a, const CallTypes& ct) -> Value* {
                     auto& b = em.builder();
                     Value* f = bfloat16_to_float(em, raw_bits(em, a[0], ct.params[0]));
                     return fp8::from_double(em, b.CreateFPExt(f, b.getDoubleTy()), is_nonzero(em, a[2]),
                                             is_nonzero(em, a[1]));
                   });
  add_raw_function(t, "cuda.fp8.cvt_bfloat16raw_to_e8m0", "rounding",
                   [](Emitter& em, std::vector<Value*> a, const CallTypes& ct) -> Value* {
                     return fp8::e8m0_from_bfloat16(em, raw_bits(em, a[0], ct.params[0]), is_nonzero(em, a[1]), a[2]);
                   });
  add(t, "cuda.fp8.cvt_e8m0_to_bf16raw", fixed_typer({types::uint8()}, raw_type()),
      [](Emitter& em, std::vector<Value*> a, const CallTypes&) -> Value* {
        return em.build_tuple({fp8::e8m0_to_bfloat16(em, a[0])}, raw_type());
      },
      {"x"});
}

}  // namespace

void add_fp8_packed(Table& t) {
  for (TypeRef fp8 : kScalars)
    for (int n : {2, 4}) add_constructor(t, types::fp8_packed(fp8, n));
  accept_packed(t, 2);
  accept_packed(t, 4);
  for (TypeRef base : {types::float32(), types::float64()}) {
    TypeRef pair = types::vector(base, 2);
    std::string name = base == types::float32() ? "float2" : "double2";
    add_fp8_function(t, "cuda.fp8.cvt_" + name + "_to_fp8x2", pair, types::uint16(), "fp8_interpretation", pair_to_fp8);
    add_fp8_function(t, "cuda.fp8.cvt_" + name + "_to_e8m0x2", pair, types::uint16(), "rounding", pair_to_e8m0);
  }
  add_raw_functions(t);
}

}  // namespace cujit::intrinsics
