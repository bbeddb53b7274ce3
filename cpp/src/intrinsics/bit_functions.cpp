// Integer bit functions and fused arithmetic: cuda.popc, clz, brev, fma, selp.
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

std::optional<OpSignature> same_integer(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || !args[0]->is_integer()) return std::nullopt;
  TypeRef t = args[0]->unliteral();
  return OpSignature{{t}, t};
}

}  // namespace

void add_bit_functions(Table& t) {
  // Python's int.bit_count() on every integer type: the number of one bits of the value's magnitude (numba's
  // overload: the population count of |x|), an int64.
  for (TypeRef type : {types::int8(), types::int16(), types::int32(), types::int64(), types::uint8(), types::uint16(),
                       types::uint32(), types::uint64()}) {
    Intrinsic method{Intrinsic::Kind::Method,
                     type->name() + ".bit_count",
                     {},
                     fixed_typer({type}, types::int64()),
                     [type](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) -> llvm::Value* {
                       auto& b = em.builder();
                       llvm::Value* v = a[0];
                       if (type->is_signed()) v = b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v, b.getFalse());
                       llvm::Value* count = b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, v);
                       return b.CreateZExtOrTrunc(count, b.getInt64Ty());
                     }};
    t[method.name] = std::move(method);
  }
  add(t, "cuda.popc", same_integer, [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
    return em.builder().CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, a[0]);
  });
  add(t, "cuda.brev", same_integer, [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
    return em.builder().CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, a[0]);
  });
  add(t, "cuda.clz", same_integer, [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
    return em.builder().CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, a[0], em.builder().getFalse());
  });
  add(
      t, "cuda.fma",
      [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.size() != 3) return std::nullopt;
        return choose_overload({{{types::float32(), types::float32(), types::float32()}, types::float32()},
                                {{types::float64(), types::float64(), types::float64()}, types::float64()}},
                               a);
      },
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
        return em.builder().CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, a);
      });
  add(
      t, "cuda.selp",
      [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.size() != 3 || !a[1]->is_number() || !a[2]->is_number()) return std::nullopt;
        TypeRef u = unify(a[1]->unliteral(), a[2]->unliteral());
        if (u == nullptr) return std::nullopt;
        return OpSignature{{types::boolean(), u, u}, u};
      },
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
        return em.builder().CreateSelect(a[0], a[1], a[2]);
      });
}

}  // namespace cujit::intrinsics
