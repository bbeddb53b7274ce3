// Typing of CUDA intrinsics (numba-cuda's cudadecl.py): thread indices,
// barriers and fences, atomics, warp shuffles and votes, bit counts, fma,
// selp. Shared, local and constant arrays are typed in infer_types.cpp,
// which needs their shape expressions.
#include "typing_internal.h"

#include "cujit/conversions.h"

namespace cujit::typing {
namespace {

std::optional<OpSignature> fixed(std::vector<TypeRef> params, TypeRef result, const std::vector<TypeRef>& args) {
  if (args.size() != params.size()) return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i)
    if (can_convert(args[i], params[i]) == Conversion::Impossible) return std::nullopt;
  return OpSignature{std::move(params), result};
}

bool is_atomic_dtype(TypeRef t, bool integers_only, bool unsigned_only) {
  if (t->is_float()) return !integers_only && t->bitwidth() >= 32;
  if (!t->is_integer() || t->bitwidth() < 32) return false;
  return !unsigned_only || !t->is_signed();
}

// cuda.atomic.<op>(ary, idx, val) -> ary.dtype; cas takes (ary, idx, old, val).
CallResolver atomic(bool integers_only, bool unsigned_only, int values) {
  return [=](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
    if (args.size() != static_cast<size_t>(2 + values) || args[0]->kind() != TypeKind::Array) return std::nullopt;
    TypeRef ary = args[0];
    TypeRef dtype = ary->element(0);
    if (!is_atomic_dtype(dtype, integers_only, unsigned_only)) return std::nullopt;
    TypeRef idx = args[1];
    bool ok_index = ary->ndim() == 1 ? idx->is_integer()
                                     : idx->is_tuple() && static_cast<int>(idx->count()) == ary->ndim();
    if (!ok_index) return std::nullopt;
    std::vector<TypeRef> params{ary, idx->is_integer() ? types::int64() : idx};
    for (int i = 0; i < values; ++i) {
      if (!args[2 + i]->is_number() || args[2 + i]->is_complex()) return std::nullopt;
      params.push_back(dtype);
    }
    return OpSignature{params, dtype};
  };
}

std::optional<OpSignature> grid_like(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || args[0]->kind() != TypeKind::IntegerLiteral) return std::nullopt;
  int64_t n = args[0]->literal_value();
  if (n < 1 || n > 3) return std::nullopt;
  TypeRef r = n == 1 ? types::int64() : types::uni_tuple(types::int64(), static_cast<int>(n));
  return OpSignature{{args[0]}, r};
}

std::optional<OpSignature> shuffle(const std::vector<TypeRef>& args) {
  if (args.size() != 3) return std::nullopt;
  TypeRef v = args[1]->unliteral();
  if (!(v->is_integer() || v->is_float() || v->is_boolean()) || (v->is_float() && v->bitwidth() == 16))
    return std::nullopt;
  if (v->is_integer() && v->bitwidth() < 32) v = types::integer(32, v->is_signed());
  return fixed({types::uint32(), v, types::int32()}, v, args);
}

std::optional<OpSignature> same_integer(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || !args[0]->is_integer()) return std::nullopt;
  TypeRef t = args[0]->unliteral();
  return OpSignature{{t}, t};
}

}  // namespace

const std::unordered_map<std::string, CallResolver>& cuda_call_registry() {
  static const std::unordered_map<std::string, CallResolver> table = [] {
    std::unordered_map<std::string, CallResolver> t;
    t["cuda.grid"] = grid_like;
    t["cuda.gridsize"] = grid_like;
    t["cuda.syncthreads"] = [](auto& a) { return fixed({}, types::none(), a); };
    for (const char* n : {"cuda.syncthreads_count", "cuda.syncthreads_and", "cuda.syncthreads_or"})
      t[n] = [](auto& a) { return fixed({types::int32()}, types::int32(), a); };
    t["cuda.syncwarp"] = [](auto& a) {
      return a.empty() ? fixed({}, types::none(), a) : fixed({types::uint32()}, types::none(), a);
    };
    for (const char* n : {"cuda.threadfence", "cuda.threadfence_block", "cuda.threadfence_system"})
      t[n] = [](auto& a) { return fixed({}, types::none(), a); };
    t["cuda.nanosleep"] = [](auto& a) { return fixed({types::uint32()}, types::none(), a); };
    for (const char* op : {"add", "sub", "max", "min"}) t[std::string("cuda.atomic.") + op] = atomic(false, false, 1);
    for (const char* op : {"and_", "or_", "xor", "exch"}) t[std::string("cuda.atomic.") + op] = atomic(true, false, 1);
    for (const char* op : {"inc", "dec"}) t[std::string("cuda.atomic.") + op] = atomic(true, true, 1);
    t["cuda.atomic.cas"] = atomic(true, false, 2);
    // compare_and_swap(ary, old, val): cas on ary[0] of a 1-D array.
    t["cuda.atomic.compare_and_swap"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() != 3 || a[0]->kind() != TypeKind::Array || a[0]->ndim() != 1) return std::nullopt;
      TypeRef dtype = a[0]->element(0);
      if (!is_atomic_dtype(dtype, true, false)) return std::nullopt;
      return fixed({a[0], dtype, dtype}, dtype, a);
    };
    for (const char* n : {"cuda.shfl_sync", "cuda.shfl_up_sync", "cuda.shfl_down_sync", "cuda.shfl_xor_sync"})
      t[n] = shuffle;
    for (const char* n : {"cuda.all_sync", "cuda.any_sync", "cuda.eq_sync"})
      t[n] = [](auto& a) { return fixed({types::uint32(), types::boolean()}, types::boolean(), a); };
    t["cuda.ballot_sync"] = [](auto& a) { return fixed({types::uint32(), types::boolean()}, types::int32(), a); };
    t["cuda.popc"] = same_integer;
    t["cuda.clz"] = same_integer;
    t["cuda.brev"] = same_integer;
    t["cuda.fma"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() != 3) return std::nullopt;
      return choose_overload({{{types::float32(), types::float32(), types::float32()}, types::float32()},
                              {{types::float64(), types::float64(), types::float64()}, types::float64()}},
                             a);
    };
    t["cuda.selp"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() != 3 || !a[1]->is_number() || !a[2]->is_number()) return std::nullopt;
      TypeRef u = unify(a[1]->unliteral(), a[2]->unliteral());
      if (u == nullptr) return std::nullopt;
      return OpSignature{{types::boolean(), u, u}, u};
    };
    return t;
  }();
  return table;
}

TypeRef cuda_value_type(const std::string& path) {
  static const std::unordered_map<std::string, TypeRef> values = [] {
    std::unordered_map<std::string, TypeRef> v;
    for (const char* base : {"threadIdx", "blockIdx", "blockDim", "gridDim"})
      for (const char* axis : {"x", "y", "z"}) v[std::string("cuda.") + base + "." + axis] = types::int32();
    v["cuda.laneid"] = types::int32();
    v["cuda.warpsize"] = types::int32();
    return v;
  }();
  auto it = values.find(path);
  return it == values.end() ? nullptr : it->second;
}

const std::vector<std::string>* intrinsic_parameter_names(const std::string& path) {
  static const std::unordered_map<std::string, std::vector<std::string>> names = {
      {"cuda.shared.array", {"shape", "dtype", "alignment"}},
      {"cuda.local.array", {"shape", "dtype", "alignment"}},
      {"cuda.const.array_like", {"ndarray"}},
      {"cuda.syncwarp", {"mask"}},
      {"cuda.atomic.cas", {"ary", "idx", "old", "val"}},
      {"cuda.atomic.compare_and_swap", {"ary", "old", "val"}},
  };
  auto it = names.find(path);
  return it == names.end() ? nullptr : &it->second;
}

}  // namespace cujit::typing
