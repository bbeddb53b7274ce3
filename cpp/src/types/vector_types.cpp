// The CUDA vector types (see cujit/vector_types.h): their names, numba-cuda's
// aliases for them, and CUDA's alignment of each.
#include "cujit/vector_types.h"

#include <algorithm>
#include <unordered_map>

#include "type_interning.h"

namespace cujit::types {
namespace {

// numba-cuda's base types, in the order it defines the vector types.
const std::vector<TypeRef>& base_types() {
  static const std::vector<TypeRef> bases{int8(),   int16(),  int32(),  int64(),   uint8(),
                                          uint16(), uint32(), uint64(), float32(), float64()};
  return bases;
}

// The C type names numba-cuda aliases, each with the base type of its size on a 64-bit Linux host (numpy's
// byte, short, intc, int_, longlong... there), in numba-cuda's order.
const std::vector<std::pair<std::string, TypeRef>>& c_names() {
  static const std::vector<std::pair<std::string, TypeRef>> names{
      {"char", int8()},      {"short", int16()},      {"int", int32()},     {"long", int64()},
      {"longlong", int64()}, {"uchar", uint8()},      {"ushort", uint16()}, {"uint", uint32()},
      {"ulong", uint64()},   {"ulonglong", uint64()}, {"float", float32()}, {"double", float64()}};
  return names;
}

bool is_base_type(TypeRef t) { return std::find(base_types().begin(), base_types().end(), t) != base_types().end(); }

const std::unordered_map<std::string, TypeRef>& names() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, TypeRef>{{"Dim3", dim3()}, {"dim3", dim3()}};
    for (TypeRef v : vector_types()) {
      (*t)[v->name()] = v;
      for (const std::string& alias : vector_aliases(v)) (*t)[alias] = v;
    }
    return t;
  }();
  return *table;
}

}  // namespace

TypeRef vector(TypeRef base, int count) {
  if (count < 1 || count > 4 || !is_base_type(base)) return nullptr;
  return detail::intern_vector(base->name() + "x" + std::to_string(count), base, count);
}

TypeRef dim3() {
  static const TypeRef cached = detail::intern_vector("Dim3", int32(), 3);
  return cached;
}

const std::vector<TypeRef>& vector_types() {
  static const std::vector<TypeRef> all = [] {
    std::vector<TypeRef> out;
    for (TypeRef base : base_types())
      for (int n = 1; n <= 4; ++n) out.push_back(vector(base, n));
    return out;
  }();
  return all;
}

std::vector<std::string> vector_aliases(TypeRef v) {
  std::vector<std::string> out;
  if (v == dim3()) return out;
  for (const auto& [c_name, base] : c_names())
    if (base == v->element(0)) out.push_back(c_name + std::to_string(v->count()));
  return out;
}

TypeRef lookup_vector(const std::string& name) {
  auto found = names().find(name);
  return found == names().end() ? nullptr : found->second;
}

std::vector<std::string> vector_fields(TypeRef v) {
  static const char* const fields[] = {"x", "y", "z", "w"};
  return std::vector<std::string>(fields, fields + v->count());
}

int64_t vector_alignment(TypeRef v) {
  int64_t element = itemsize(v->element(0));
  int64_t n = static_cast<int64_t>(v->count());
  return n == 2 || n == 4 ? std::min<int64_t>(n * element, 16) : element;
}

}  // namespace cujit::types
