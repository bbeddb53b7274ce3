// How kernel arguments are passed and how array layouts are named (see
// cujit/types.h): shared by the lowering of kernels and the launch path.
#include "cujit/types.h"

namespace cujit::types {
namespace {

void add_leaves(TypeRef t, std::vector<unsigned>& path, std::vector<ArgumentLeaf>& out) {
  auto child = [&](unsigned index, auto&& visit) {
    path.push_back(index);
    visit();
    path.pop_back();
  };
  switch (t->kind()) {
    case TypeKind::None:
      return;
    case TypeKind::Complex: {
      TypeRef part = float_(t->bitwidth() / 2);
      child(0, [&] { out.push_back({part, path, ArgumentLeaf::Role::ComplexReal}); });
      child(1, [&] { out.push_back({part, path, ArgumentLeaf::Role::ComplexImag}); });
      return;
    }
    case TypeKind::UniTuple:
    case TypeKind::Tuple:
      for (size_t i = 0; i < t->count(); ++i)
        child(static_cast<unsigned>(i), [&] { add_leaves(t->element(i), path, out); });
      return;
    case TypeKind::Optional:
      child(0, [&] { add_leaves(t->element(0), path, out); });
      child(1, [&] { out.push_back({boolean(), path, ArgumentLeaf::Role::OptionalFlag}); });
      return;
    default:
      out.push_back({t, path, ArgumentLeaf::Role::Value});
  }
}

}  // namespace

bool is_contiguous(int ndim, const int64_t* shape, const int64_t* strides, int64_t itemsize, bool c_order) {
  for (int d = 0; d < ndim; ++d)
    if (shape[d] == 0) return true;
  int64_t expected = itemsize;
  for (int i = 0; i < ndim; ++i) {
    int d = c_order ? ndim - 1 - i : i;
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

std::vector<ArgumentLeaf> argument_leaves(TypeRef t) {
  std::vector<ArgumentLeaf> out;
  std::vector<unsigned> path;
  add_leaves(t, path, out);
  return out;
}

char array_layout(int ndim, const int64_t* shape, const int64_t* strides, int64_t itemsize) {
  if (strides == nullptr || is_contiguous(ndim, shape, strides, itemsize, true)) return 'C';
  return is_contiguous(ndim, shape, strides, itemsize, false) ? 'F' : 'A';
}

int noalias_arrays(const std::vector<TypeRef>& argtypes) {
  int arrays = 0;
  for (TypeRef t : argtypes) {
    if (t->kind() == TypeKind::Array)
      ++arrays;
    else if (!t->is_integer() && !t->is_boolean() && t->kind() != TypeKind::Float && t->kind() != TypeKind::Complex)
      return 0;
  }
  return arrays;
}

}  // namespace cujit::types
