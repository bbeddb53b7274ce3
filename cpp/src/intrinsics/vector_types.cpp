// CUDA vector types in kernels (numba-cuda's cuda.float32x4 and friends):
// one constructor entry per type, "cuda.<name>", and one attribute entry per
// component, "<name>.x" ... "<name>.w" (Dim3's x, y, z included).
//
// A constructor takes scalars and vectors of its own base type whose
// components add up to its count, as numba-cuda's overloads do:
// float32x4(a, b, c, d), float32x4(f2, f2), float32x4(f3, d), float32x4(f4),
// float32x3(f1, f2)... A scalar converts to the base type; a vector of another
// base type does not.
#include "cujit/vector_types.h"

#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using llvm::Value;

bool is_vector_of(TypeRef arg, TypeRef base) {
  return arg->kind() == TypeKind::Vector && arg != types::dim3() && arg->element(0) == base;
}

// The constructor of `vec`: each argument a vector of its base type (as itself) or a scalar converted to
// the base type; the components together exactly `vec`'s count.
std::optional<OpSignature> construct(TypeRef vec, const std::vector<TypeRef>& args) {
  TypeRef base = vec->element(0);
  std::vector<TypeRef> params;
  size_t components = 0;
  for (TypeRef arg : args) {
    if (is_vector_of(arg, base)) {
      params.push_back(arg);
      components += arg->count();
    } else if (arg->kind() != TypeKind::Vector && can_convert(arg, base) != Conversion::Impossible) {
      params.push_back(base);
      components += 1;
    } else {
      return std::nullopt;
    }
  }
  if (components != vec->count()) return std::nullopt;
  return OpSignature{params, vec};
}

// Why `args` build no `vec` (appended to typing's "No implementation of cuda.float32x4(...)").
std::string explain_construct(TypeRef vec, const std::vector<TypeRef>& args) {
  TypeRef base = vec->element(0);
  size_t components = 0;
  for (TypeRef arg : args) {
    if (arg->kind() == TypeKind::Vector && !is_vector_of(arg, base))
      return arg->name() + " is not a vector of " + base->name() + " (a " + vec->name() +
             " is built from scalars and " + base->name() + " vectors)";
    if (arg->kind() != TypeKind::Vector && can_convert(arg, base) == Conversion::Impossible)
      return "a " + arg->name() + " does not convert to " + base->name();
    components += arg->kind() == TypeKind::Vector ? arg->count() : 1;
  }
  return vec->name() + " has " + std::to_string(vec->count()) + " components; the arguments give " +
         std::to_string(components);
}

// The arguments' components in order (a vector argument gives each of its elements).
Value* lower_construct(Emitter& em, const std::vector<Value*>& args, const CallTypes& types) {
  std::vector<Value*> components;
  for (size_t i = 0; i < args.size(); ++i) {
    if (types.params[i]->kind() != TypeKind::Vector) {
      components.push_back(args[i]);
      continue;
    }
    for (unsigned k = 0; k < types.params[i]->count(); ++k)
      components.push_back(em.builder().CreateExtractValue(args[i], k));
  }
  return em.build_tuple(components, types.result);
}

void add_constructor(Table& t, TypeRef vec) {
  std::string name = "cuda." + vec->name();
  add(
      t, name, [vec](const std::vector<TypeRef>& args) { return construct(vec, args); },
      [](Emitter& em, std::vector<Value*> args, const CallTypes& types) { return lower_construct(em, args, types); });
  t[name].explain = [vec](const std::vector<TypeRef>& args) { return explain_construct(vec, args); };
}

// "<type>.x" ...: the component, read from the value (vector types are immutable, as in numba-cuda).
void add_components(Table& t, TypeRef vec) {
  std::vector<std::string> fields = types::vector_fields(vec);
  for (unsigned k = 0; k < fields.size(); ++k) {
    std::string name = vec->name() + "." + fields[k];
    t[name] = Intrinsic{Intrinsic::Kind::Attribute,
                        name,
                        {},
                        fixed_typer({vec}, vec->element(0)),
                        [k](Emitter& em, std::vector<Value*> args, const CallTypes&) {
                          return em.builder().CreateExtractValue(args[0], k);
                        }};
  }
}

}  // namespace

void add_vector_types(Table& t) {
  for (TypeRef vec : types::vector_types()) {
    add_constructor(t, vec);
    add_components(t, vec);
  }
  add_components(t, types::dim3());
}

}  // namespace cujit::intrinsics
