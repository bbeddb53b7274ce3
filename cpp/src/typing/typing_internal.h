// Internal to typing: the registries of builtins and CUDA intrinsics, and the
// array indexing rules, shared by infer_types.cpp and the rule files.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cujit/typing.h"

namespace cujit::typing {

using CallResolver = std::function<std::optional<OpSignature>(const std::vector<TypeRef>&)>;

// cuda.* functions whose typing needs only argument types (atomics, warp
// functions, barriers, fences, grid, popc, fma...).
const std::unordered_map<std::string, CallResolver>& cuda_call_registry();
// cuda.* names used as values: threadIdx.x, laneid, warpsize...
TypeRef cuda_value_type(const std::string& path);
// Positional parameter names of intrinsics that are often called with keywords.
const std::vector<std::string>* intrinsic_parameter_names(const std::string& path);

TypeRef slice_type(bool has_step);
TypeRef ellipsis_type();
bool is_slice(TypeRef t);

// The type of ary[index] (an element or a view), following numba's layout
// rules; nullptr with `error` set if the index is invalid.
TypeRef array_getitem_type(TypeRef ary, TypeRef index, std::string& error);
// shape, strides, size, ndim, itemsize; nullptr if unknown.
TypeRef array_attribute_type(TypeRef ary, const std::string& attr);

}  // namespace cujit::typing
