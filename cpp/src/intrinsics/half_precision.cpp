// cuda.fp16: numba-cuda's half-precision functions (hadd, hsub, hmul, hdiv,
// hfma, hneg, habs, the math functions, comparisons, hmax, hmin). Arithmetic
// is native f16; the math functions compute in float32 and round once.
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using llvm::Value;
using Args = std::vector<Value*>;

void add_half(Table& t, const std::string& name, int arity, TypeRef result,
              std::function<Value*(llvm::IRBuilder<>&, Emitter&, Args&)> body) {
  std::vector<TypeRef> params(arity, types::float16());
  add(t, "cuda.fp16." + name, fixed_typer(params, result),
      [body](Emitter& em, Args a, const CallTypes&) { return body(em.builder(), em, a); });
}

// A float32 math function applied to a half value.
Value* via_float(llvm::IRBuilder<>& b, Value* h, const std::function<Value*(Value*)>& f) {
  return b.CreateFPTrunc(f(b.CreateFPExt(h, b.getFloatTy())), b.getHalfTy());
}

}  // namespace

void add_half_precision(Table& t) {
  TypeRef h = types::float16();
  add_half(t, "hadd", 2, h, [](auto& b, Emitter&, Args& a) { return b.CreateFAdd(a[0], a[1]); });
  add_half(t, "hsub", 2, h, [](auto& b, Emitter&, Args& a) { return b.CreateFSub(a[0], a[1]); });
  add_half(t, "hmul", 2, h, [](auto& b, Emitter&, Args& a) { return b.CreateFMul(a[0], a[1]); });
  add_half(t, "hdiv", 2, h, [](auto& b, Emitter&, Args& a) {
    Value* q = b.CreateFDiv(b.CreateFPExt(a[0], b.getFloatTy()), b.CreateFPExt(a[1], b.getFloatTy()));
    return b.CreateFPTrunc(q, b.getHalfTy());
  });
  add_half(t, "hfma", 3, h,
           [](auto& b, Emitter&, Args& a) { return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getHalfTy()}, a); });
  add_half(t, "hneg", 1, h, [](auto& b, Emitter&, Args& a) { return b.CreateFNeg(a[0]); });
  add_half(t, "habs", 1, h,
           [](auto& b, Emitter&, Args& a) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]); });
  const std::pair<const char*, llvm::Intrinsic::ID> rounding[] = {
      {"hsqrt", llvm::Intrinsic::sqrt}, {"hceil", llvm::Intrinsic::ceil},   {"hfloor", llvm::Intrinsic::floor},
      {"hrint", llvm::Intrinsic::rint}, {"htrunc", llvm::Intrinsic::trunc}, {"hexp2", llvm::Intrinsic::exp2},
      {"hlog2", llvm::Intrinsic::log2}};
  for (auto [name, id] : rounding)
    add_half(t, name, 1, h, [id = id](auto& b, Emitter&, Args& a) {
      return via_float(b, a[0], [&](Value* x) { return b.CreateUnaryIntrinsic(id, x); });
    });
  const std::pair<const char*, const char*> libdevice[] = {
      {"hexp", "__nv_expf"}, {"hexp10", "__nv_exp10f"}, {"hlog", "__nv_logf"},    {"hlog10", "__nv_log10f"},
      {"hsin", "__nv_sinf"}, {"hcos", "__nv_cosf"},     {"hrsqrt", "__nv_rsqrtf"}};
  for (auto [name, fn] : libdevice)
    add_half(t, name, 1, h, [fn = std::string(fn)](auto& b, Emitter& em, Args& a) {
      return via_float(b, a[0], [&](Value* x) { return em.call_function(fn, b.getFloatTy(), {x}); });
    });
  add_half(t, "hrcp", 1, h, [](auto& b, Emitter&, Args& a) {
    return via_float(b, a[0], [&](Value* x) { return b.CreateFDiv(llvm::ConstantFP::get(b.getFloatTy(), 1.0), x); });
  });
  const std::pair<const char*, llvm::CmpInst::Predicate> comparisons[] = {
      {"heq", llvm::CmpInst::FCMP_OEQ}, {"hne", llvm::CmpInst::FCMP_UNE}, {"hge", llvm::CmpInst::FCMP_OGE},
      {"hgt", llvm::CmpInst::FCMP_OGT}, {"hle", llvm::CmpInst::FCMP_OLE}, {"hlt", llvm::CmpInst::FCMP_OLT}};
  for (auto [name, pred] : comparisons)
    add_half(t, name, 2, types::boolean(),
             [pred = pred](auto& b, Emitter&, Args& a) { return b.CreateFCmp(pred, a[0], a[1]); });
  // hmax/hmin: the other operand when one is NaN (max.f16 / min.f16).
  add_half(t, "hmax", 2, h, [](auto& b, Emitter&, Args& a) { return b.CreateMaxNum(a[0], a[1]); });
  add_half(t, "hmin", 2, h, [](auto& b, Emitter&, Args& a) { return b.CreateMinNum(a[0], a[1]); });
}

}  // namespace cujit::intrinsics
