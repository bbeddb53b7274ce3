// cuda.literal_unroll(t): the marker of numba's versioned loops. The frontend
// recognises `for x in literal_unroll(t)` and typing versions that loop
// (typing/literal_unroll.cpp); used anywhere else it is the identity, as in numba.
#include "intrinsic_families.h"

namespace cujit::intrinsics {

void add_literal_unroll(Table& t) {
  add(
      t, "cuda.literal_unroll",
      [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.size() != 1) return std::nullopt;
        return OpSignature{{a[0]}, a[0]};
      },
      [](Emitter&, std::vector<llvm::Value*> a, const CallTypes&) { return a[0]; }, {"container"});
}

}  // namespace cujit::intrinsics
