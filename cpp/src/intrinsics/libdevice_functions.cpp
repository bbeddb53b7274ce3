// cuda.libdevice.<name>: every libdevice function by numba-cuda's name and
// signature (libdevice_functions.inc). Out-parameters are passed stack slots
// and returned in a tuple after the return value, as numba does.
#include <sstream>

#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

struct LibdeviceSignature {
  const char* name;
  const char* result;
  const char* params;
};

const LibdeviceSignature kFunctions[] = {
#define CUJIT_LIBDEVICE(name, result, params) {#name, #result, params},
#include "libdevice_functions.inc"
#undef CUJIT_LIBDEVICE
};

void add_function(Table& t, const LibdeviceSignature& f) {
  TypeRef ret = types::lookup_scalar(f.result);
  std::vector<TypeRef> ins;
  std::vector<TypeRef> outs;
  std::istringstream words(f.params);
  for (std::string w; words >> w;) {
    if (w[0] == '*')
      outs.push_back(types::lookup_scalar(w.substr(1)));
    else
      ins.push_back(types::lookup_scalar(w));
  }
  std::vector<TypeRef> results;
  if (ret->kind() != TypeKind::None) results.push_back(ret);
  for (TypeRef out : outs) results.push_back(out);  // (insert() of a maybe-empty range: a GCC 12 false -Warray-bounds)
  TypeRef result = outs.empty() ? ret : types::tuple(results);
  // The call's parameters in the bitcode's order: inputs then out-pointers (numba's tables list them so).
  std::string symbol = std::string("__nv_") + f.name;
  add(t, std::string("cuda.libdevice.") + f.name, fixed_typer(ins, result),
      [symbol, ret, outs](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
        llvm::Type* rty = ret->kind() == TypeKind::None ? em.builder().getVoidTy() : em.value_type(ret);
        if (outs.empty()) return em.call_function(symbol, rty, std::move(args));
        std::vector<llvm::Value*> slots;
        for (TypeRef o : outs) {
          slots.push_back(em.stack_slot(em.value_type(o)));
          args.push_back(slots.back());
        }
        llvm::Value* r = em.call_function(symbol, rty, std::move(args));
        std::vector<llvm::Value*> values;
        if (ret->kind() != TypeKind::None) values.push_back(r);
        for (size_t i = 0; i < outs.size(); ++i)
          values.push_back(em.builder().CreateLoad(em.value_type(outs[i]), slots[i]));
        return em.build_tuple(values, types.result);
      });
}

// math.frexp, math.modf and math.ldexp on float32 and float64, as numba types them (the exponent is a C int): the
// libdevice functions of the argument's width, an out-parameter returned in the tuple.
std::optional<OpSignature> float_argument(const std::vector<TypeRef>& args, size_t count) {
  if (args.size() != count || !args[0]->is_float() || args[0]->bitwidth() < 32) return std::nullopt;
  return OpSignature{{args[0]}, args[0]};
}

void add_math_out_parameters(Table& t) {
  auto suffix = [](TypeRef f) { return std::string(f->bitwidth() == 32 ? "f" : ""); };
  add(
      t, "math.frexp",
      [](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
        auto sig = float_argument(args, 1);
        if (sig) sig->result = types::tuple({args[0], types::int32()});
        return sig;
      },
      [suffix](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
        TypeRef f = types.params[0];
        llvm::Value* exponent = em.stack_slot(em.builder().getInt32Ty());
        llvm::Value* mantissa = em.call_function("__nv_frexp" + suffix(f), em.value_type(f), {args[0], exponent});
        return em.build_tuple({mantissa, em.builder().CreateLoad(em.builder().getInt32Ty(), exponent)}, types.result);
      });
  add(
      t, "math.modf",
      [](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
        auto sig = float_argument(args, 1);
        if (sig) sig->result = types::uni_tuple(args[0], 2);
        return sig;
      },
      [suffix](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
        TypeRef f = types.params[0];
        llvm::Value* whole = em.stack_slot(em.value_type(f));
        llvm::Value* fraction = em.call_function("__nv_modf" + suffix(f), em.value_type(f), {args[0], whole});
        return em.build_tuple({fraction, em.builder().CreateLoad(em.value_type(f), whole)}, types.result);
      });
  add(
      t, "math.ldexp",
      [](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
        if (args.size() != 2 || !args[0]->is_float() || args[0]->bitwidth() < 32 || !args[1]->is_integer())
          return std::nullopt;
        return OpSignature{{args[0], types::int32()}, args[0]};
      },
      [suffix](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
        TypeRef f = types.params[0];
        return em.call_function("__nv_ldexp" + suffix(f), em.value_type(f), {args[0], args[1]});
      });
}

}  // namespace

void add_libdevice(Table& t) {
  for (const auto& f : kFunctions) add_function(t, f);
  add_math_out_parameters(t);
}

}  // namespace cujit::intrinsics
