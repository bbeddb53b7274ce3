// numba's array typing (typing/arraydecl.py): integer and slice indexing,
// the layout a view keeps, and the array attributes.
#include "typing_internal.h"

namespace cujit::typing {

TypeRef slice_type(bool has_step) { return types::opaque(has_step ? "slice<a:b:c>" : "slice<a:b>"); }

bool is_slice(TypeRef t) { return t == slice_type(false) || t == slice_type(true); }

TypeRef ellipsis_type() { return types::opaque("ellipsis"); }

namespace {

// An index keeps the view contiguous if it is an integer, or the innermost
// index and a slice without a step.
bool keeps_contiguity(TypeRef index, bool innermost) {
  if (index->is_integer() || index->is_boolean()) return true;
  return innermost && index == slice_type(false);
}

bool check_contiguity(const std::vector<TypeRef>& indices) {
  for (size_t i = 0; i + 1 < indices.size(); ++i)
    if (!keeps_contiguity(indices[i], false)) return false;
  return indices.empty() || keeps_contiguity(indices.back(), true);
}

}  // namespace

TypeRef array_getitem_type(TypeRef ary, TypeRef index, std::string& error) {
  std::vector<TypeRef> indices;
  if (index->is_tuple()) {
    for (size_t i = 0; i < index->count(); ++i) indices.push_back(index->element(i));
  } else {
    indices.push_back(index);
  }
  // Indices left and right of an ellipsis (all are "left" without one), as numba splits them.
  std::vector<TypeRef> left, right;
  bool seen_ellipsis = false;
  int ints = 0;
  for (TypeRef t : indices) {
    if (t == ellipsis_type()) {
      if (seen_ellipsis) {
        error = "an index can only have a single ellipsis ('...')";
        return nullptr;
      }
      seen_ellipsis = true;
      continue;
    }
    if (t->is_integer())
      ++ints;
    else if (!is_slice(t)) {
      error = "array indices must be integers or slices, got " + t->name();
      return nullptr;
    }
    (seen_ellipsis ? right : left).push_back(t);
  }
  int given = static_cast<int>(left.size() + right.size());
  if (given > ary->ndim()) {
    error = "too many indices for array: array is " + std::to_string(ary->ndim()) + "-dimensional, but " +
            std::to_string(given) + " were indexed";
    return nullptr;
  }
  if (ints == ary->ndim()) return ary->element(0);
  char layout = ary->layout();
  if (layout == 'C') {
    // Integers on the left keep a C array contiguous.
    if (given == ary->ndim()) {
      left.insert(left.end(), right.begin(), right.end());
      right.clear();
    }
    if (!right.empty() || !check_contiguity(left)) layout = 'A';
  } else if (layout == 'F') {
    // Mirror image: integers on the right keep an F array contiguous.
    if (given == ary->ndim()) {
      right.insert(right.begin(), left.begin(), left.end());
      left.clear();
    }
    std::vector<TypeRef> reversed(right.rbegin(), right.rend());
    if (!left.empty() || !check_contiguity(reversed)) layout = 'A';
  }
  return types::array(ary->element(0), ary->ndim() - ints, layout, ary->readonly(), ary->aligned());
}

TypeRef array_attribute_type(TypeRef ary, const std::string& attr) {
  if (attr == "shape" || attr == "strides") return types::uni_tuple(types::int64(), ary->ndim());
  if (attr == "size" || attr == "itemsize" || attr == "nbytes") return types::int64();
  if (attr == "ndim") return types::integer_literal(ary->ndim());
  // numba's DType: a compile-time value, called or given as a dtype as the scalar type (arr.dtype.type(0)).
  if (attr == "dtype" && ary->element(0)->is_number()) return types::number_class(ary->element(0));
  return nullptr;
}

}  // namespace cujit::typing
