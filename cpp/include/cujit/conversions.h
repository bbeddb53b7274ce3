// numba's numeric casting graph (typeconv rules, closed transitively) and the
// unification of two types (NumPy's promote_types for numbers), used by
// overload resolution and by variables whose type changes.
#pragma once

#include "cujit/types.h"

namespace cujit {

// Ordered from best to worst, as numba rates conversions.
enum class Conversion { Exact = 0, Promote = 1, Safe = 2, Unsafe = 3, Impossible = 4 };

Conversion can_convert(TypeRef from, TypeRef to);

// The type both can be stored as (phi nodes, ternaries, min/max); nullptr if none.
TypeRef unify(TypeRef a, TypeRef b);

}  // namespace cujit
