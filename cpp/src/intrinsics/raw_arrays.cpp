// cuda.carray(ptr, shape, dtype=None) and cuda.farray: an array viewing raw memory, as numba-cuda has them: a
// typed pointer (or a void* with a dtype), a shape of integers known at run time (one, or a tuple of them), C or
// Fortran order. The view owns nothing (lowering's make_array: its meminfo and parent are null).
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

// The (dtype, ndim) of carray(ptr, shape[, dtype]), or nothing when the arguments do not fit.
std::optional<std::pair<TypeRef, int>> view_of(const std::vector<TypeRef>& args, std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<std::pair<TypeRef, int>> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (args.size() < 2 || args.size() > 3) return refuse("it takes a pointer, a shape and an optional dtype");
  TypeRef ptr = args[0], shape = args[1]->unliteral();
  TypeRef dtype = nullptr;
  if (args.size() == 3) {
    if (args[2]->kind() != TypeKind::NumberClass) return refuse("the dtype must be a type (float32, np.int32...)");
    dtype = args[2]->element(0);
  }
  if (ptr->kind() == TypeKind::CPointer) {
    if (dtype != nullptr && dtype != ptr->element(0))
      return refuse("the dtype " + dtype->name() + " is not the pointer's type " + ptr->element(0)->name());
    dtype = ptr->element(0);
  } else if (ptr->kind() != TypeKind::VoidPtr) {
    return refuse("the first argument must be a pointer, not " + ptr->name());
  } else if (dtype == nullptr) {
    return refuse("a void* needs a dtype");
  }
  if (shape->is_integer()) return std::make_pair(dtype, 1);
  if (!shape->is_tuple() || shape->count() == 0) return refuse("the shape must be an integer or a tuple of integers");
  for (TypeRef d : shape->elements())
    if (!d->is_integer()) return refuse("the shape must be an integer or a tuple of integers");
  return std::make_pair(dtype, static_cast<int>(shape->count()));
}

Typer view_typer(char layout) {
  return [layout](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
    auto view = view_of(args, nullptr);
    if (!view) return std::nullopt;
    std::vector<TypeRef> params = args;
    params[1] = args[1]->unliteral();
    return OpSignature{params, types::array(view->first, view->second, layout)};
  };
}

Lowerer view_lowerer(char layout) {
  return [layout](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
    Builder& b = em.builder();
    TypeRef aty = types.result;
    TypeRef shape_t = types.params[1];
    const int ndim = aty->ndim();
    std::vector<llvm::Value*> shape;
    for (int d = 0; d < ndim; ++d) {
      llvm::Value* extent = shape_t->is_integer() ? args[1] : b.CreateExtractValue(args[1], static_cast<unsigned>(d));
      TypeRef et = shape_t->is_integer() ? shape_t : shape_t->element(static_cast<size_t>(d));
      shape.push_back(em.cast(extent, et, types::int64()));
    }
    std::vector<llvm::Value*> strides(ndim);
    llvm::Value* stride = b.getInt64(types::itemsize(aty->element(0)));
    for (int k = 0; k < ndim; ++k) {  // C: the last axis is contiguous; F: the first
      int d = layout == 'C' ? ndim - 1 - k : k;
      strides[d] = stride;
      stride = b.CreateMul(stride, shape[d]);
    }
    return em.make_array(aty, args[0], shape, strides);
  };
}

std::string explain(const std::vector<TypeRef>& args) {
  std::string why;
  view_of(args, &why);
  return why;
}

}  // namespace

void add_raw_arrays(Table& t) {
  add(t, "cuda.carray", view_typer('C'), view_lowerer('C'), {"ptr", "shape", "dtype"});
  add(t, "cuda.farray", view_typer('F'), view_lowerer('F'), {"ptr", "shape", "dtype"});
  t["cuda.carray"].explain = explain;
  t["cuda.farray"].explain = explain;
}

}  // namespace cujit::intrinsics
