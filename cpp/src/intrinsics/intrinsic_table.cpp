// The intrinsic table, assembled once from its families, and the helpers the
// family files share.
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

const Table& table() {
  static const Table t = [] {
    Table t;
    add_thread_indexing(t);
    add_synchronization(t);
    add_atomics(t);
    add_warp_functions(t);
    add_bit_functions(t);
    add_memory_arrays(t);
    add_raw_arrays(t);
    add_half_precision(t);
    add_bfloat16(t);
    add_libdevice(t);
    add_cooperative_groups(t);
    add_complex_math(t);
    add_cache_hints(t);
    add_warp_match(t);
    add_literal_unroll(t);
    add_fp8(t);
    add_vector_types(t);
    add_fp8_packed(t);
    return t;
  }();
  return t;
}

}  // namespace

const Intrinsic* find(const std::string& name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> paths() {
  std::vector<std::string> out;
  for (const auto& [name, entry] : table())
    if (entry.kind != Intrinsic::Kind::Method && entry.kind != Intrinsic::Kind::Attribute) out.push_back(name);
  return out;
}

void add(Table& t, const std::string& name, Typer type, Lowerer lower, std::vector<std::string> params) {
  t[name] = Intrinsic{Intrinsic::Kind::Function, name, std::move(params), std::move(type), std::move(lower)};
}

std::optional<OpSignature> fixed(std::vector<TypeRef> params, TypeRef result, const std::vector<TypeRef>& args) {
  if (args.size() != params.size()) return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i)
    if (can_convert(args[i], params[i]) == Conversion::Impossible) return std::nullopt;
  return OpSignature{std::move(params), result};
}

Typer fixed_typer(std::vector<TypeRef> params, TypeRef result) {
  return [params, result](const std::vector<TypeRef>& args) { return fixed(params, result, args); };
}

llvm::Value* call_intrinsic(Emitter& em, llvm::Intrinsic::ID id, std::vector<llvm::Value*> args) {
  return em.builder().CreateIntrinsic(id, {}, args);
}

Lowerer statement(llvm::Intrinsic::ID id) {
  return [id](Emitter& em, std::vector<llvm::Value*> args, const CallTypes&) {
    call_intrinsic(em, id, std::move(args));
    return em.none_value();
  };
}

}  // namespace cujit::intrinsics
