// numba's Itanium-extended name mangling (docs/numba_abi.md: Mangled names): identifiers, type codes,
// ABI tags, and the flags tag (raw DEFLATE with numba's preset dictionary).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cujit/types.h"

namespace cujit::mangle {

// "<lambda>" -> "_3clambda_3e"; every byte outside [A-Za-z0-9_] becomes _xx.
std::string escape_string(const std::string& text);
// Length-prefixed escaped identifier; a leading digit gets a "_" prefix.
std::string mangle_identifier(const std::string& text);
// Integer template parameter: 123 -> "Li123E".
std::string mangle_value(int64_t value);
// Any other template value is mangled from Python's str(value); for a float
// that is repr(): 12.3 -> "12.3" -> "7_12_2e3".
std::string mangle_float_value(double value);
// One ABI tag: "v7" -> "B2v7"; the text is escaped and length-prefixed.
std::string mangle_abi_tag(const std::string& tag);
// One argument type: builtin code ("i", "f", "Dh", ...) or templated/plain form.
std::string mangle_type(TypeRef type);
// "_Z" + name (nested "N...E" when the dotted name has ≥ 2 components) + args.
// abi_tags are emitted after the uid tag "v<uid>" (uid < 0: no uid tag).
std::string mangle(const std::string& dotted_name, const std::vector<TypeRef>& args,
                   const std::vector<std::string>& abi_tags = {}, int64_t uid = -1);

// The flags tag text (before escaping) for a CUDAFlags summary string such as
// "CUDAFlags(compute_capability=(7, 5), error_model=numpy, ...)".
std::string encode_flags(const std::string& summary);
// Inverse of encode_flags (accepts the escaped or unescaped tag text, with or
// without its "B<len>" prefix). Throws CompileError(ValueError) when the text
// is not a flags tag.
std::string decode_flags(const std::string& tag);

}  // namespace cujit::mangle
