// cuda.cg: cooperative groups as numba-cuda offers them: this_grid() gives the
// grid group (on NVPTX a handle from the device runtime) and its sync() waits
// for every thread of the grid (the target's grid_group and grid_sync). Kernels
// reaching them launch cooperatively (the entries are marked `cooperative`).
#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {

TypeRef grid_group_type() { return types::opaque("GridGroup"); }

void add_cooperative_groups(Table& t) {
  add(t, "cuda.cg.this_grid", fixed_typer({}, grid_group_type()),
      [](Emitter& em, std::vector<llvm::Value*>, const CallTypes&) -> llvm::Value* {
        return em.target().grid_group(em.builder(), em.target_context());
      });
  t["cuda.cg.this_grid"].cooperative = true;
  Intrinsic sync{Intrinsic::Kind::Method,
                 "GridGroup.sync",
                 {},
                 fixed_typer({grid_group_type()}, types::int32()),
                 [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) -> llvm::Value* {
                   return em.target().grid_sync(em.builder(), em.target_context(), a[0], em.call_site());
                 }};
  sync.cooperative = true;
  t[sync.name] = std::move(sync);
}

}  // namespace cujit::intrinsics
