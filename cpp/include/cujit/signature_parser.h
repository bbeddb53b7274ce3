// Parses numba signature strings ("int32(int32, float32[::1])", "(i4[::1], i4)",
// "void(UniTuple(int32, 2), CPointer(float32))") without a Python interpreter.
// Errors follow numba's: NameError for unknown names, SyntaxError for bad
// syntax, TypeError for a string that is a single type and not a signature.
#pragma once

#include <string>

#include "cujit/error.h"
#include "cujit/types.h"

namespace cujit {

Expected<Signature> parse_signature(const std::string& text);
// Parses a single type expression ("float32[:, ::1]", "UniTuple(i4, 3)").
Expected<TypeRef> parse_type(const std::string& text);

}  // namespace cujit
