// cuda.shared.array, cuda.local.array and cuda.const.array_like: typed from
// their argument expressions (constant shapes, dtypes, global arrays) and
// lowered by lowering's array code, so their entries hold only the names.
#include "intrinsic_families.h"

namespace cujit::intrinsics {

void add_memory_arrays(Table& t) {
  add(t, "cuda.shared.array", nullptr, nullptr, {"shape", "dtype", "alignment"});
  add(t, "cuda.local.array", nullptr, nullptr, {"shape", "dtype", "alignment"});
  add(t, "cuda.const.array_like", nullptr, nullptr, {"ndarray"});
}

}  // namespace cujit::intrinsics
