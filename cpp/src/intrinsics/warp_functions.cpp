// Warp-level functions: shuffles (shfl_sync, shfl_up/down/xor_sync; 64-bit
// values as two 32-bit shuffles) and votes (all/any/eq_sync, ballot_sync).
#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using target::ShuffleMode;
using target::VoteMode;

std::optional<OpSignature> shuffle_sig(const std::vector<TypeRef>& args) {
  if (args.size() != 3) return std::nullopt;
  TypeRef v = args[1]->unliteral();
  if (!(v->is_integer() || v->is_float() || v->is_boolean()) || (v->is_float() && v->bitwidth() == 16))
    return std::nullopt;
  if (v->is_integer() && v->bitwidth() < 32) v = types::integer(32, v->is_signed());
  return fixed({types::uint32(), v, types::int32()}, v, args);
}

Lowerer shuffle(ShuffleMode mode) {
  return [mode](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
    auto& b = em.builder();
    std::string where = em.call_site();
    auto shfl32 = [&](llvm::Value* v32) {
      return em.target().warp_shuffle(b, em.target_context(), mode, args[0], v32, args[2], where);
    };
    llvm::Value* v = args[1];
    llvm::Type* ty = v->getType();
    if (types.params[1]->is_boolean()) return b.CreateTrunc(shfl32(b.CreateZExt(v, b.getInt32Ty())), ty);
    unsigned bits = ty->getPrimitiveSizeInBits();
    llvm::Value* as_int = ty->isIntegerTy() ? v : b.CreateBitCast(v, b.getIntNTy(bits));
    llvm::Value* result;
    if (bits == 32) {
      result = shfl32(as_int);
    } else {
      llvm::Value* lo = shfl32(b.CreateTrunc(as_int, b.getInt32Ty()));
      llvm::Value* hi = shfl32(b.CreateTrunc(b.CreateLShr(as_int, 32), b.getInt32Ty()));
      result = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
    }
    return ty->isIntegerTy() ? result : b.CreateBitCast(result, ty);
  };
}

Lowerer vote(VoteMode mode) {
  return [mode](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
    return em.target().warp_vote(em.builder(), em.target_context(), mode, a[0], a[1], em.call_site());
  };
}

}  // namespace

void add_warp_functions(Table& t) {
  add(t, "cuda.shfl_sync", shuffle_sig, shuffle(ShuffleMode::Index), {"mask", "value", "src_lane"});
  add(t, "cuda.shfl_up_sync", shuffle_sig, shuffle(ShuffleMode::Up), {"mask", "value", "delta"});
  add(t, "cuda.shfl_down_sync", shuffle_sig, shuffle(ShuffleMode::Down), {"mask", "value", "delta"});
  add(t, "cuda.shfl_xor_sync", shuffle_sig, shuffle(ShuffleMode::Xor), {"mask", "value", "lane_mask"});
  const std::pair<const char*, VoteMode> votes[] = {
      {"cuda.all_sync", VoteMode::All}, {"cuda.any_sync", VoteMode::Any}, {"cuda.eq_sync", VoteMode::Eq}};
  for (auto [name, mode] : votes)
    add(t, name, fixed_typer({types::uint32(), types::boolean()}, types::boolean()), vote(mode), {"mask", "predicate"});
  add(t, "cuda.ballot_sync", fixed_typer({types::uint32(), types::boolean()}, types::int32()), vote(VoteMode::Ballot),
      {"mask", "predicate"});
}

}  // namespace cujit::intrinsics
