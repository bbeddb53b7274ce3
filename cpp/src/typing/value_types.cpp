// Types and functions used as values (numba's NumberClass, Function and Dispatcher types): `f = cuda.atomic.add`,
// a device function receiving `uint32` or another device function as an argument. Their types are compile-time
// constants: each stands for one object, so typing a call of such a value, or a dtype given as one, substitutes
// the object. A device function's type is named by its module and qualified name, made unique per function
// object (a second object of the same name gets "#2"); the registry keeps each object for the process's life, as
// the type that names it lives that long.
#include <map>
#include <mutex>
#include <utility>

#include "cujit/intrinsics.h"
#include "typing_internal.h"

namespace cujit::typing {
namespace {

using K = ir::GlobalValue::Kind;

struct DispatcherRegistry {
  std::mutex mutex;
  std::map<std::string, std::vector<std::pair<int64_t, TypeRef>>> by_name;  // name -> (identity, its type)
  std::map<TypeRef, ir::GlobalValue> globals;
};

DispatcherRegistry& registry() {
  static auto* r = new DispatcherRegistry;  // never destroyed: it holds Python objects past the interpreter
  return *r;
}

// A builtin that is called (an intrinsic function, or a builtin typing knows by its path: abs, math.sqrt...), not
// one read as a value (cuda.threadIdx.x).
bool is_function_path(const std::string& path) {
  const intrinsics::Intrinsic* in = intrinsics::find(path);
  return in == nullptr || in->kind == intrinsics::Intrinsic::Kind::Function;
}

}  // namespace

TypeRef value_type(const ir::GlobalValue& g) {
  switch (g.kind) {
    case K::TypeObject:
      return g.type != nullptr && g.type->is_number() ? types::number_class(g.type) : nullptr;
    case K::Builtin:
      return is_function_path(g.name) ? types::function_value(g.name) : nullptr;
    case K::DeviceFunction: {
      DispatcherRegistry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      auto& same_name = r.by_name[g.name];
      for (const auto& [identity, t] : same_name)
        if (identity == g.int_value) return t;
      std::string name = same_name.empty() ? g.name : g.name + "#" + std::to_string(same_name.size() + 1);
      TypeRef t = types::dispatcher_value(name);
      same_name.emplace_back(g.int_value, t);
      r.globals.emplace(t, g);
      return t;
    }
    default:
      return nullptr;
  }
}

bool is_value_type(TypeRef t) {
  return t != nullptr &&
         (t->kind() == TypeKind::NumberClass || t->kind() == TypeKind::Function || t->kind() == TypeKind::Dispatcher);
}

ir::GlobalValue value_global(TypeRef t) {
  ir::GlobalValue g;
  switch (t->kind()) {
    case TypeKind::NumberClass:
      g.kind = K::TypeObject;
      g.type = t->element(0);
      g.name = g.repr = g.type->name();
      return g;
    case TypeKind::Function:
      g.kind = K::Builtin;
      g.name = g.repr = types::value_name(t);
      return g;
    default: {
      DispatcherRegistry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      return r.globals.at(t);
    }
  }
}

}  // namespace cujit::typing
