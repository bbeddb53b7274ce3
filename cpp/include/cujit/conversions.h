// numba's numeric casting graph (typeconv rules, closed transitively) and the
// unification of two types (NumPy's promote_types for numbers), used by
// overload resolution and by variables whose type changes.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "cujit/types.h"

namespace cujit {

// Ordered from best to worst, as numba rates conversions.
enum class Conversion { Exact = 0, Promote = 1, Safe = 2, Unsafe = 3, Impossible = 4 };

Conversion can_convert(TypeRef from, TypeRef to);

// The type both can be stored as (phi nodes, ternaries, min/max); nullptr if none.
TypeRef unify(TypeRef a, TypeRef b);

// Two records of the same fields at the same offsets (numpy's record of a library type's layout and the library's
// named type, cujit.extending): the same bytes.
bool same_record_layout(TypeRef a, TypeRef b);

// One candidate signature of an operator, builtin or intrinsic.
struct OpSignature {
  std::vector<TypeRef> params;
  TypeRef result = nullptr;
};

// numba's overload rating: the candidates (parameter types) whose conversions of `args`
// rate best (fewest unsafe, then safe, then promote), in candidate order; empty when
// none accepts them. More than one is a tie.
std::vector<size_t> best_overloads(const std::vector<std::vector<TypeRef>>& candidates,
                                   const std::vector<TypeRef>& args);

// Typing's choice among an operation's candidates: the first of the best rated.
std::optional<OpSignature> choose_overload(const std::vector<OpSignature>& candidates,
                                           const std::vector<TypeRef>& args);

}  // namespace cujit
