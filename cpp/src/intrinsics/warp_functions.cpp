// Warp-level functions: shuffles (shfl_sync, shfl_up/down/xor_sync; 64-bit
// values as two 32-bit shuffles) and votes (all/any/eq_sync, ballot_sync).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using llvm::Intrinsic::ID;

std::optional<OpSignature> shuffle_sig(const std::vector<TypeRef>& args) {
  if (args.size() != 3) return std::nullopt;
  TypeRef v = args[1]->unliteral();
  if (!(v->is_integer() || v->is_float() || v->is_boolean()) || (v->is_float() && v->bitwidth() == 16))
    return std::nullopt;
  if (v->is_integer() && v->bitwidth() < 32) v = types::integer(32, v->is_signed());
  return fixed({types::uint32(), v, types::int32()}, v, args);
}

Lowerer shuffle(ID id, bool up) {
  return [id, up](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
    auto& b = em.builder();
    llvm::Value* clamp = b.getInt32(up ? 0 : 0x1f);
    auto shfl32 = [&](llvm::Value* v32) { return call_intrinsic(em, id, {args[0], v32, args[2], clamp}); };
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

Lowerer vote(ID id) {
  return [id](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) { return call_intrinsic(em, id, a); };
}

}  // namespace

void add_warp_functions(Table& t) {
  using namespace llvm::Intrinsic;
  add(t, "cuda.shfl_sync", shuffle_sig, shuffle(nvvm_shfl_sync_idx_i32, false), {"mask", "value", "src_lane"});
  add(t, "cuda.shfl_up_sync", shuffle_sig, shuffle(nvvm_shfl_sync_up_i32, true), {"mask", "value", "delta"});
  add(t, "cuda.shfl_down_sync", shuffle_sig, shuffle(nvvm_shfl_sync_down_i32, false), {"mask", "value", "delta"});
  add(t, "cuda.shfl_xor_sync", shuffle_sig, shuffle(nvvm_shfl_sync_bfly_i32, false), {"mask", "value", "lane_mask"});
  const std::pair<const char*, ID> votes[] = {
      {"cuda.all_sync", nvvm_vote_all_sync}, {"cuda.any_sync", nvvm_vote_any_sync}, {"cuda.eq_sync", nvvm_vote_uni_sync}};
  for (auto [name, id] : votes)
    add(t, name, fixed_typer({types::uint32(), types::boolean()}, types::boolean()), vote(id), {"mask", "predicate"});
  add(t, "cuda.ballot_sync", fixed_typer({types::uint32(), types::boolean()}, types::int32()),
      vote(nvvm_vote_ballot_sync), {"mask", "predicate"});
}

}  // namespace cujit::intrinsics
