// Warp masks, matches and the remaining bit and math functions of numba-cuda's
// cuda namespace: activemask() and lanemask_lt() (uint32), match_any_sync(mask,
// value) (the lanes holding the same value) and match_all_sync(mask, value)
// (a (mask, pred) tuple) on 32- and 64-bit ints and floats (PTX match.sync,
// sm_70+), ffs(x) (1 + the index of the lowest set bit, 0 for 0) and cbrt(x).
#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using llvm::Value;

// activemask() / lanemask_lt(), as the target reads them.
Lowerer warp_mask(target::WarpMask which) {
  return [which](Emitter& em, std::vector<Value*>, const CallTypes&) -> Value* {
    return em.target().warp_mask(em.builder(), em.target_context(), which, em.call_site());
  };
}

// numba-cuda's match signatures: an int32 mask and an int32, int64, float32 or float64 value.
std::optional<OpSignature> match_signature(const std::vector<TypeRef>& args, TypeRef result) {
  if (args.size() != 2 || !args[1]->is_number() || args[1]->is_complex()) return std::nullopt;
  std::vector<OpSignature> cases;
  for (TypeRef v : {types::int32(), types::int64(), types::float32(), types::float64()})
    cases.push_back(OpSignature{{types::uint32(), v}, result});
  return choose_overload(cases, args);
}

std::string match_problem(const std::vector<TypeRef>& args) {
  if (args.size() != 2) return "takes 2 arguments (mask, value), got " + std::to_string(args.size());
  return "the value must be a 32- or 64-bit integer or float, got " + args[1]->name();
}

TypeRef match_all_result() { return types::tuple({types::int32(), types::boolean()}); }

Lowerer match(bool all) {
  return [all](Emitter& em, std::vector<Value*> a, const CallTypes& types) -> Value* {
    auto& b = em.builder();
    Value* v = a[1];
    unsigned bits = types.params[1]->bitwidth();
    if (!v->getType()->isIntegerTy()) v = b.CreateBitCast(v, b.getIntNTy(bits));
    const target::Target& target = em.target();
    if (!all) return target.warp_match(b, em.target_context(), false, a[0], v, em.call_site());
    Value* pair = target.warp_match(b, em.target_context(), true, a[0], v, em.call_site());
    Value* pred = b.CreateExtractValue(pair, 1);
    llvm::Type* bool_ty = em.value_type(types::boolean());
    if (bool_ty != pred->getType()) pred = b.CreateZExt(pred, bool_ty);
    return em.build_tuple({b.CreateExtractValue(pair, 0), pred}, types.result);
  };
}

std::optional<OpSignature> ffs_signature(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || !args[0]->is_integer()) return std::nullopt;
  TypeRef t = args[0]->unliteral();
  return OpSignature{{t}, types::uint32()};
}

Value* ffs(Emitter& em, std::vector<Value*> a, const CallTypes&) {
  auto& b = em.builder();
  Value* x = a[0];
  unsigned bits = x->getType()->getIntegerBitWidth();
  if (bits < 32) x = b.CreateZExt(x, b.getInt32Ty());  // zero-extension keeps the lowest set bit
  return em.call_function(bits == 64 ? "__nv_ffsll" : "__nv_ffs", b.getInt32Ty(), {x});
}

Value* cbrt(Emitter& em, std::vector<Value*> a, const CallTypes& types) {
  bool f32 = types.result->bitwidth() == 32;
  return em.call_function(f32 ? "__nv_cbrtf" : "__nv_cbrt", a[0]->getType(), {a[0]});
}

}  // namespace

void add_warp_match(Table& t) {
  add(t, "cuda.activemask", fixed_typer({}, types::uint32()), warp_mask(target::WarpMask::Active));
  add(t, "cuda.lanemask_lt", fixed_typer({}, types::uint32()), warp_mask(target::WarpMask::LessThan));
  add(t, "cuda.match_any_sync", [](const std::vector<TypeRef>& a) { return match_signature(a, types::int32()); },
      match(false), {"mask", "value"});
  t["cuda.match_any_sync"].explain = match_problem;
  add(t, "cuda.match_all_sync", [](const std::vector<TypeRef>& a) { return match_signature(a, match_all_result()); },
      match(true), {"mask", "value"});
  t["cuda.match_all_sync"].explain = match_problem;
  add(t, "cuda.ffs", ffs_signature, ffs, {"x"});
  add(t, "cuda.cbrt",
      [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.size() != 1) return std::nullopt;
        return choose_overload({{{types::float32()}, types::float32()}, {{types::float64()}, types::float64()}}, a);
      },
      cbrt, {"x"});
}

}  // namespace cujit::intrinsics
