// Barriers, fences and sleeps: cuda.syncthreads (and its _count/_and/_or
// reductions), syncwarp, threadfence(_block/_system), nanosleep.
#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {

void add_synchronization(Table& t) {
  // bar.sync 0 and its reductions on the NVPTX target (the target's barrier_at and barrier_reduce).
  add(t, "cuda.syncthreads", fixed_typer({}, types::none()),
      [](Emitter& em, std::vector<llvm::Value*>, const CallTypes&) {
        em.target().barrier_at(em.builder(), em.target_context(), em.call_site());
        return em.none_value();
      });
  const std::pair<const char*, target::BarrierReduction> reductions[] = {
      {"cuda.syncthreads_count", target::BarrierReduction::Count},
      {"cuda.syncthreads_and", target::BarrierReduction::And},
      {"cuda.syncthreads_or", target::BarrierReduction::Or}};
  for (auto [name, op] : reductions)
    add(t, name, fixed_typer({types::int32()}, types::int32()),
        [op = op](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
          auto& b = em.builder();
          return em.target().barrier_reduce(b, em.target_context(), op, b.CreateICmpNE(a[0], b.getInt32(0)),
                                            em.call_site());
        },
        {"predicate"});
  add(
      t, "cuda.syncwarp",
      [](const std::vector<TypeRef>& a) {
        return a.empty() ? fixed({}, types::none(), a) : fixed({types::uint32()}, types::none(), a);
      },
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
        llvm::Value* mask = a.empty() ? em.builder().getInt32(0xffffffffu) : a[0];
        em.target().warp_sync(em.builder(), em.target_context(), mask, em.call_site());
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
  add(t, "cuda.nanosleep", fixed_typer({types::uint32()}, types::none()),
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) {
        em.target().sleep(em.builder(), em.target_context(), a[0], em.call_site());
        return em.none_value();
      },
      {"ns"});
}

}  // namespace cujit::intrinsics
