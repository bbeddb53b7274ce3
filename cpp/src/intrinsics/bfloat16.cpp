// cuda.bf16: numba-cuda's bfloat16 functions (arithmetic with the _rn, _sat
// and relu forms, comparisons ordered and unordered, max/min, the math
// functions, conversions to and from floats and integers in every rounding
// mode, bit casts) and the bfloat16(x) constructor. A bfloat16 is held as its
// 16 bits: it widens to float32 exactly, computes there, and rounds once; the
// rounding is integer arithmetic on the float32 bits, so it needs no bf16
// instructions (which sm_80 and sm_90 have only in part).
#include <llvm/IR/Constants.h>

#include "intrinsic_families.h"

namespace cujit::intrinsics {

using llvm::Value;

Value* bfloat16_to_float(Emitter& em, Value* bits) {
  auto& b = em.builder();
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(bits, b.getInt32Ty()), 16), b.getFloatTy());
}

Value* float_to_bfloat16(Emitter& em, Value* f, Rounding mode) {
  auto& b = em.builder();
  Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  Value* upper = b.CreateLShr(bits, 16);
  Value* inexact = b.CreateICmpNE(b.CreateAnd(bits, 0xFFFF), b.getInt32(0));
  Value* negative = b.CreateICmpSLT(bits, b.getInt32(0));
  Value* rounded = upper;
  switch (mode) {
    case Rounding::Nearest:  // ties to even: add 0x7FFF plus the lowest kept bit
      rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(b.getInt32(0x7FFF), b.CreateAnd(upper, 1))), 16);
      break;
    case Rounding::TowardZero:
      break;
    case Rounding::Up:
      rounded = b.CreateAdd(upper, b.CreateZExt(b.CreateAnd(inexact, b.CreateNot(negative)), b.getInt32Ty()));
      break;
    case Rounding::Down:
      rounded = b.CreateAdd(upper, b.CreateZExt(b.CreateAnd(inexact, negative), b.getInt32Ty()));
      break;
  }
  Value* nan = b.CreateFCmpUNO(f, f);
  Value* quiet = b.CreateOr(upper, 0x40);  // a NaN stays a (quiet) NaN
  return b.CreateTrunc(b.CreateSelect(nan, quiet, rounded), b.getInt16Ty());
}

Value* number_to_bfloat16(Emitter& em, Value* v, TypeRef from, Rounding mode) {
  auto& b = em.builder();
  from = from->unliteral();
  if (from->kind() == TypeKind::BFloat16) return v;
  if (from->is_float() && from->bitwidth() <= 32)
    return float_to_bfloat16(em, em.cast(v, from, types::float32()), mode);
  Value* d = em.cast(v, from, types::float64());
  // float64 to float32 rounded to odd (an inexact result gets its last bit set): the float32 keeps 16 more bits
  // than a bfloat16, so rounding it once more in `mode` rounds the float64 correctly.
  Value* f = b.CreateFPTrunc(d, b.getFloatTy());
  Value* back = b.CreateFPExt(f, b.getDoubleTy());
  Value* fbits = b.CreateBitCast(f, b.getInt32Ty());
  Value* away = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  Value* toward_zero = b.CreateSelect(away, b.CreateSub(fbits, b.getInt32(1)), fbits);
  Value* odd = b.CreateSelect(b.CreateFCmpONE(back, d), b.CreateOr(toward_zero, 1), fbits);
  return float_to_bfloat16(em, b.CreateBitCast(odd, b.getFloatTy()), mode);
}

namespace {

using Args = std::vector<Value*>;
using FloatFn = std::function<Value*(Emitter&, const std::vector<Value*>&)>;  // float32 in, float32 out

TypeRef bf() { return types::bfloat16(); }

// A function of `arity` bfloat16 arguments, given their float32 values, with a `result` of another type (a
// predicate, an int).
void add_test(Table& t, const std::string& name, int arity, TypeRef result, FloatFn fn) {
  add(t, "cuda.bf16." + name, fixed_typer(std::vector<TypeRef>(arity, bf()), result),
      [fn](Emitter& em, Args a, const CallTypes&) {
        std::vector<Value*> f;
        for (Value* v : a) f.push_back(bfloat16_to_float(em, v));
        return fn(em, f);
      });
}

// The same computed in float32 and rounded to the nearest bfloat16.
void add_computed(Table& t, const std::string& name, int arity, FloatFn fn) {
  add_test(t, name, arity, bf(), [fn](Emitter& em, const Args& f) { return float_to_bfloat16(em, fn(em, f)); });
}

Value* saturate(Emitter& em, Value* x) {  // [0, 1]; NaN -> 0
  auto& b = em.builder();
  Value* zero = llvm::ConstantFP::get(b.getFloatTy(), 0.0);
  Value* clamped = b.CreateMinNum(b.CreateMaxNum(x, zero), llvm::ConstantFP::get(b.getFloatTy(), 1.0));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), zero, clamped);
}

Value* libdevice(Emitter& em, const char* name, Value* x) {
  return em.call_function(name, em.builder().getFloatTy(), {x});
}

void add_arithmetic(Table& t) {
  using Op = Value* (*)(Emitter&, Value*, Value*);
  const std::pair<const char*, Op> ops[] = {
      {"add", [](Emitter& em, Value* x, Value* y) { return em.builder().CreateFAdd(x, y); }},
      {"sub", [](Emitter& em, Value* x, Value* y) { return em.builder().CreateFSub(x, y); }},
      {"mul", [](Emitter& em, Value* x, Value* y) { return em.builder().CreateFMul(x, y); }}};
  for (auto [name, op] : ops) {
    for (const char* suffix : {"", "_rn"})
      add_computed(t, std::string("h") + name + suffix, 2,
                   [op = op](Emitter& em, const Args& f) { return op(em, f[0], f[1]); });
    add_computed(t, std::string("h") + name + "_sat", 2,
                 [op = op](Emitter& em, const Args& f) { return saturate(em, op(em, f[0], f[1])); });
  }
  add_computed(t, "hdiv", 2, [](Emitter& em, const Args& f) { return em.builder().CreateFDiv(f[0], f[1]); });
  auto fma = [](Emitter& em, const Args& f) {
    return em.builder().CreateIntrinsic(llvm::Intrinsic::fma, {em.builder().getFloatTy()}, {f[0], f[1], f[2]});
  };
  add_computed(t, "hfma", 3, fma);
  add_computed(t, "hfma_sat", 3, [fma](Emitter& em, const Args& f) { return saturate(em, fma(em, f)); });
  add_computed(t, "hfma_relu", 3, [fma](Emitter& em, const Args& f) {  // negative -> 0, NaN stays
    auto& b = em.builder();
    Value* r = fma(em, f);
    return b.CreateSelect(b.CreateFCmpOLT(r, llvm::ConstantFP::get(b.getFloatTy(), 0.0)),
                          llvm::ConstantFP::get(b.getFloatTy(), 0.0), r);
  });
  // Sign operations on the bits: exact for every value, NaNs included.
  add(t, "cuda.bf16.hneg", fixed_typer({bf()}, bf()), [](Emitter& em, Args a, const CallTypes&) {
    return em.builder().CreateXor(a[0], em.builder().getInt16(0x8000));
  });
  add(t, "cuda.bf16.habs", fixed_typer({bf()}, bf()), [](Emitter& em, Args a, const CallTypes&) {
    return em.builder().CreateAnd(a[0], em.builder().getInt16(0x7FFF));
  });
}

void add_comparisons(Table& t) {
  using P = llvm::CmpInst::Predicate;
  const std::pair<const char*, P> predicates[] = {{"heq", P::FCMP_OEQ},  {"hne", P::FCMP_ONE},  {"hge", P::FCMP_OGE},
                                                  {"hgt", P::FCMP_OGT},  {"hle", P::FCMP_OLE},  {"hlt", P::FCMP_OLT},
                                                  {"hequ", P::FCMP_UEQ}, {"hneu", P::FCMP_UNE}, {"hgeu", P::FCMP_UGE},
                                                  {"hgtu", P::FCMP_UGT}, {"hleu", P::FCMP_ULE}, {"hltu", P::FCMP_ULT}};
  for (auto [name, pred] : predicates)
    add_test(t, name, 2, types::boolean(),
             [pred = pred](Emitter& em, const Args& f) { return em.builder().CreateFCmp(pred, f[0], f[1]); });
  add_computed(t, "hmax", 2, [](Emitter& em, const Args& f) { return em.builder().CreateMaxNum(f[0], f[1]); });
  add_computed(t, "hmin", 2, [](Emitter& em, const Args& f) { return em.builder().CreateMinNum(f[0], f[1]); });
  add_computed(t, "hmax_nan", 2, [](Emitter& em, const Args& f) { return em.builder().CreateMaximum(f[0], f[1]); });
  add_computed(t, "hmin_nan", 2, [](Emitter& em, const Args& f) { return em.builder().CreateMinimum(f[0], f[1]); });
  add_test(t, "hisnan", 1, types::boolean(),
           [](Emitter& em, const Args& f) { return em.builder().CreateFCmpUNO(f[0], f[0]); });
  add_test(t, "hisinf", 1, types::int32(), [](Emitter& em, const Args& f) {  // -1, 0 or 1, as CUDA's __hisinf
    auto& b = em.builder();
    Value* inf = llvm::ConstantFP::getInfinity(b.getFloatTy());
    Value* neg_inf = llvm::ConstantFP::getInfinity(b.getFloatTy(), true);
    return b.CreateSelect(b.CreateFCmpOEQ(f[0], inf), b.getInt32(1),
                          b.CreateSelect(b.CreateFCmpOEQ(f[0], neg_inf), b.getInt32(-1), b.getInt32(0)));
  });
}

void add_math(Table& t) {
  const std::pair<const char*, llvm::Intrinsic::ID> exact[] = {{"htrunc", llvm::Intrinsic::trunc},
                                                               {"hceil", llvm::Intrinsic::ceil},
                                                               {"hfloor", llvm::Intrinsic::floor},
                                                               {"hrint", llvm::Intrinsic::rint},
                                                               {"hsqrt", llvm::Intrinsic::sqrt}};
  for (auto [name, id] : exact)
    add_computed(t, name, 1,
                 [id = id](Emitter& em, const Args& f) { return em.builder().CreateUnaryIntrinsic(id, f[0]); });
  const std::pair<const char*, const char*> calls[] = {
      {"hrsqrt", "__nv_rsqrtf"}, {"hlog", "__nv_logf"},   {"hlog2", "__nv_log2f"},       {"hlog10", "__nv_log10f"},
      {"hcos", "__nv_cosf"},     {"hsin", "__nv_sinf"},   {"hexp", "__nv_expf"},         {"hexp2", "__nv_exp2f"},
      {"hexp10", "__nv_exp10f"}, {"htanh", "__nv_tanhf"}, {"htanh_approx", "__nv_tanhf"}};
  for (auto [name, fn] : calls)
    add_computed(t, name, 1, [fn = fn](Emitter& em, const Args& f) { return libdevice(em, fn, f[0]); });
  add_computed(t, "hrcp", 1, [](Emitter& em, const Args& f) {
    return em.builder().CreateFDiv(llvm::ConstantFP::get(em.builder().getFloatTy(), 1.0), f[0]);
  });
}

const std::pair<const char*, Rounding> kModes[] = {
    {"rn", Rounding::Nearest}, {"rz", Rounding::TowardZero}, {"rd", Rounding::Down}, {"ru", Rounding::Up}};

// A conversion of one `from` argument to a bfloat16 in `mode`.
void add_to_bfloat16(Table& t, const std::string& name, TypeRef from, Rounding mode) {
  add(t, "cuda.bf16." + name, fixed_typer({from}, bf()),
      [from, mode](Emitter& em, Args a, const CallTypes&) { return number_to_bfloat16(em, a[0], from, mode); });
}

// bfloat16 to an integer: rounded in `mode`, saturated to the integer's range, NaN to 0.
void add_to_integer(Table& t, const std::string& name, TypeRef to, Rounding mode) {
  add(t, "cuda.bf16." + name, fixed_typer({bf()}, to), [to, mode](Emitter& em, Args a, const CallTypes&) {
    auto& b = em.builder();
    Value* f = bfloat16_to_float(em, a[0]);
    llvm::Intrinsic::ID round = mode == Rounding::Nearest      ? llvm::Intrinsic::rint
                                : mode == Rounding::TowardZero ? llvm::Intrinsic::trunc
                                : mode == Rounding::Down       ? llvm::Intrinsic::floor
                                                               : llvm::Intrinsic::ceil;
    Value* r = b.CreateUnaryIntrinsic(round, f);
    auto sat = to->is_signed() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b.CreateIntrinsic(sat, {em.value_type(to), b.getFloatTy()}, {r});
  });
}

void add_conversions(Table& t) {
  TypeRef f32 = types::float32(), f64 = types::float64();
  add_to_bfloat16(t, "float32_to_bfloat16", f32, Rounding::Nearest);
  add_to_bfloat16(t, "float2bfloat16", f32, Rounding::Nearest);
  for (auto [mode, rounding] : kModes) {
    add_to_bfloat16(t, std::string("float32_to_bfloat16_") + mode, f32, rounding);
    add_to_bfloat16(t, std::string("float2bfloat16_") + mode, f32, rounding);
  }
  add_to_bfloat16(t, "float64_to_bfloat16", f64, Rounding::Nearest);
  add_to_bfloat16(t, "double2bfloat16", f64, Rounding::Nearest);
  for (const char* name : {"bfloat16_to_float32", "bfloat162float"})
    add(t, std::string("cuda.bf16.") + name, fixed_typer({bf()}, f32),
        [](Emitter& em, Args a, const CallTypes&) { return bfloat16_to_float(em, a[0]); });
  for (TypeRef it : {types::int16(), types::uint16(), types::int32(), types::uint32(), types::int64(), types::uint64()})
    for (auto [mode, rounding] : kModes) {
      add_to_bfloat16(t, it->name() + "_to_bfloat16_" + mode, it, rounding);
      add_to_integer(t, "bfloat16_to_" + it->name() + "_" + mode, it, rounding);
    }
  add_to_integer(t, "bfloat16_to_int8_rz", types::int8(), Rounding::TowardZero);
  add_to_integer(t, "bfloat16_to_uint8_rz", types::uint8(), Rounding::TowardZero);
  // Bit casts: the same 16 bits.
  for (TypeRef it : {types::int16(), types::uint16()}) {
    auto same_bits = [](Emitter&, Args a, const CallTypes&) { return a[0]; };
    add(t, "cuda.bf16.bfloat16_as_" + it->name(), fixed_typer({bf()}, it), same_bits);
    add(t, "cuda.bf16." + it->name() + "_as_bfloat16", fixed_typer({it}, bf()), same_bits);
  }
  // bfloat16(x): from any real number (or a bfloat16), rounded to nearest.
  add(
      t, "cuda.bf16.bfloat16",
      [](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
        if (args.size() != 1) return std::nullopt;
        TypeRef a = args[0]->unliteral();
        if (a->kind() != TypeKind::BFloat16 && !(a->is_number() && !a->is_complex())) return std::nullopt;
        return OpSignature{{a}, bf()};
      },
      [](Emitter& em, Args a, const CallTypes& ct) { return number_to_bfloat16(em, a[0], ct.params[0]); });
}

}  // namespace

void add_bfloat16(Table& t) {
  add_arithmetic(t);
  add_comparisons(t);
  add_math(t);
  add_conversions(t);
}

}  // namespace cujit::intrinsics
