// Barriers, fences and sleeps: cuda.syncthreads (and its _count/_and/_or
// reductions), syncwarp, threadfence(_block/_system), nanosleep.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {

void add_synchronization(Table& t) {
  using namespace llvm::Intrinsic;
  // bar.sync 0 (the target's barrier) and its reductions (LLVM 22's barrier.cta family; the LTO-IR writers
  // spell them as each NVVM dialect's barrier0 intrinsics).
  add(t, "cuda.syncthreads", fixed_typer({}, types::none()),
      [](Emitter& em, std::vector<llvm::Value*>, const CallTypes&) {
        em.target().barrier(em.builder(), em.target_context());
        return em.none_value();
      });
  const std::pair<const char*, ID> reductions[] = {
      {"cuda.syncthreads_count", nvvm_barrier_cta_red_popc_aligned_all},
      {"cuda.syncthreads_and", nvvm_barrier_cta_red_and_aligned_all},
      {"cuda.syncthreads_or", nvvm_barrier_cta_red_or_aligned_all}};
  for (auto [name, id] : reductions)
    add(t, name, fixed_typer({types::int32()}, types::int32()),
        [id = id](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
          auto& b = em.builder();
          llvm::Value* r = call_intrinsic(em, id, {b.getInt32(0), b.CreateICmpNE(a[0], b.getInt32(0))});
          return b.CreateZExt(r, b.getInt32Ty());  // and/or give an i1, popc an i32 already
        },
        {"predicate"});
  add(t, "cuda.syncwarp",
      [](const std::vector<TypeRef>& a) {
        return a.empty() ? fixed({}, types::none(), a) : fixed({types::uint32()}, types::none(), a);
      },
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
        call_intrinsic(em, nvvm_bar_warp_sync, {a.empty() ? em.builder().getInt32(0xffffffffu) : a[0]});
        return em.none_value();
      },
      {"mask"});
  auto fence = [](target::FenceScope scope) {
    return [scope](Emitter& em, std::vector<llvm::Value*>, const CallTypes&) {
      em.target().fence(em.builder(), em.target_context(), scope);
      return em.none_value();
    };
  };
  add(t, "cuda.threadfence", fixed_typer({}, types::none()), fence(target::FenceScope::Device));
  add(t, "cuda.threadfence_block", fixed_typer({}, types::none()), fence(target::FenceScope::Block));
  add(t, "cuda.threadfence_system", fixed_typer({}, types::none()), fence(target::FenceScope::System));
  add(t, "cuda.nanosleep", fixed_typer({types::uint32()}, types::none()), statement(nvvm_nanosleep), {"ns"});
}

}  // namespace cujit::intrinsics
