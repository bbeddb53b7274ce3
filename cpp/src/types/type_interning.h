// Internal to the type system: interning for the type families defined
// outside types.cpp (vector_types.cpp), which alone may build a Type.
#pragma once

#include <string>

#include "cujit/types.h"

namespace cujit::types::detail {

// The one TypeKind::Vector type named `name` with `count` elements of `base`.
TypeRef intern_vector(const std::string& name, TypeRef base, int count);

}  // namespace cujit::types::detail
