// cuda.cg: cooperative groups as numba-cuda offers them: this_grid() gives the
// grid group (a handle from the device runtime) and its sync() waits for every
// thread of the grid. Kernels reaching them link libcudadevrt and launch
// cooperatively (the entries are marked `cooperative`).
#include "intrinsic_families.h"

namespace cujit::intrinsics {

TypeRef grid_group_type() { return types::opaque("GridGroup"); }

void add_cooperative_groups(Table& t) {
  add(t, "cuda.cg.this_grid", fixed_typer({}, grid_group_type()),
      [](Emitter& em, std::vector<llvm::Value*>, const CallTypes&) -> llvm::Value* {
        auto& b = em.builder();
        // cudaCGGetIntrinsicHandle(cudaCGScopeGrid = 1)
        return em.call_function("cudaCGGetIntrinsicHandle", b.getInt64Ty(), {b.getInt32(1)});
      });
  t["cuda.cg.this_grid"].cooperative = true;
  Intrinsic sync{Intrinsic::Kind::Method, "GridGroup.sync", {}, fixed_typer({grid_group_type()}, types::int32()),
                 [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes&) -> llvm::Value* {
                   auto& b = em.builder();
                   return em.call_function("cudaCGSynchronize", b.getInt32Ty(), {a[0], b.getInt32(0)});
                 }};
  sync.cooperative = true;
  t[sync.name] = std::move(sync);
}

}  // namespace cujit::intrinsics
