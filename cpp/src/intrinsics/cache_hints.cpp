// Cache-hinted loads and stores, numba-cuda's cache_hints: cuda.ldca, ldcg,
// ldcs, ldlu, ldcv(array, i) and cuda.stcg, stcs, stwb, stwt(array, i, value)
// are one `ld.global.<op>` / `st.global.<op>` each (inline PTX: LLVM has no
// intrinsic for these cache operators). They take arrays (an integer index for
// 1-D, a tuple of ndim integers otherwise; negative indices wrap) or pointers
// (an integer index), of integers and floats of 8, 16, 32 or 64 bits. On the
// CPU target (no PTX, one level of cache that needs no hints) they are plain
// loads and stores.
#include <llvm/IR/InlineAsm.h>

#include <string_view>

#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using llvm::Value;

bool is_container(TypeRef t) { return t->kind() == TypeKind::Array || t->kind() == TypeKind::CPointer; }

TypeRef dtype_of(TypeRef container) { return container->element(0); }

bool hintable_dtype(TypeRef t) {
  if (!t->is_integer() && !t->is_float()) return false;
  int bits = t->bitwidth();
  return bits == 8 || bits == 16 || bits == 32 || bits == 64;
}

// Why `args` (container, index[, value]) do not fit; "" if they do.
std::string argument_problem(const std::string& fn, const std::vector<TypeRef>& args, size_t arity) {
  if (args.size() != arity)
    return fn + " takes " + std::to_string(arity) + " arguments (" + (arity == 2 ? "array, i" : "array, i, value") +
           "), got " + std::to_string(args.size());
  TypeRef c = args[0];
  if (!is_container(c)) return fn + " operates on arrays or pointers, got " + c->name();
  TypeRef d = dtype_of(c);
  if (!d->is_integer() && !d->is_float()) return fn + " requires an array of integer or float type, got " + d->name();
  if (!hintable_dtype(d))
    return fn + " requires an array dtype of bitwidth 8, 16, 32 or 64, got bitwidth " + std::to_string(d->bitwidth());
  TypeRef idx = args[1];
  bool pointer = c->kind() == TypeKind::CPointer;
  if (idx->is_integer()) {
    if (!pointer && c->ndim() != 1) return "Expected " + std::to_string(c->ndim()) + " indices, got a scalar";
  } else if (idx->is_tuple()) {
    if (pointer) return "Pointers only support scalar indexing, got a tuple of " + std::to_string(idx->count());
    if (static_cast<int>(idx->count()) != c->ndim())
      return "Expected " + std::to_string(c->ndim()) + " indices, got " + std::to_string(idx->count());
    for (TypeRef e : idx->elements())
      if (!e->is_integer()) return idx->name() + " is not a valid index";
  } else {
    return idx->name() + " is not a valid index";
  }
  if (arity == 3 && !(args[2]->is_number() && !args[2]->is_complex()) && args[2]->kind() != TypeKind::BFloat16)
    return "cannot store a value of type " + args[2]->name() + " into an array of " + d->name();
  if (arity == 3 && c->kind() == TypeKind::Array && c->readonly()) return fn + " cannot store into a read-only array";
  return "";
}

// (container, index[, value]) -> the parameter types: the index as int64 or its tuple, the value as the dtype.
std::optional<OpSignature> hinted_signature(const std::vector<TypeRef>& args, size_t arity, TypeRef result) {
  if (!argument_problem("", args, arity).empty()) return std::nullopt;
  std::vector<TypeRef> params{args[0], args[1]->is_integer() ? types::int64() : args[1]};
  if (arity == 3) params.push_back(dtype_of(args[0]));
  return OpSignature{params, result ? result : dtype_of(args[0])};
}

// The global address of the element (a generic address converted to the global window).
Value* element_pointer(Emitter& em, Value* container, Value* index, const CallTypes& types) {
  auto& b = em.builder();
  TypeRef c = types.params[0];
  Value* ptr;
  if (c->kind() == TypeKind::CPointer) {
    ptr = b.CreateGEP(em.value_type(dtype_of(c)), container, index);
  } else {
    std::vector<Value*> idx;
    if (!types.params[1]->is_tuple()) {
      idx.push_back(index);
    } else {
      for (int d = 0; d < c->ndim(); ++d)
        idx.push_back(em.cast(b.CreateExtractValue(index, d), types.params[1]->element(d), types::int64()));
    }
    ptr = em.element_address(container, c, idx);
  }
  return b.CreateAddrSpaceCast(ptr, llvm::PointerType::get(b.getContext(), 1));
}

// The integer the asm operand carries for a dtype of `bits` (8-bit values travel in a 32-bit register).
llvm::Type* operand_type(Builder& b, int bits) { return b.getIntNTy(bits == 8 ? 32 : bits); }

const char* constraint(int bits) { return bits == 16 ? "h" : bits == 64 ? "l" : "r"; }

// The CPU target has no PTX to hint with: the element's plain address (address space 0).
Value* host_address(Emitter& em, Value* ptr) {
  if (std::string_view(em.target().name()) == "nvptx") return nullptr;
  return em.builder().CreateAddrSpaceCast(ptr, llvm::PointerType::get(em.builder().getContext(), 0));
}

Lowerer load(const std::string& op) {
  return [op](Emitter& em, std::vector<Value*> args, const CallTypes& types) -> Value* {
    auto& b = em.builder();
    Value* ptr = element_pointer(em, args[0], args[1], types);
    if (Value* plain = host_address(em, ptr)) return b.CreateLoad(em.value_type(types.result), plain);
    int bits = types.result->bitwidth();
    llvm::Type* reg = operand_type(b, bits);
    auto* fty = llvm::FunctionType::get(reg, {ptr->getType()}, false);
    std::string text = "ld.global." + op + ".b" + std::to_string(bits) + " $0, [$1];";
    auto* asm_ = llvm::InlineAsm::get(fty, text, std::string("=") + constraint(bits) + ",l,~{memory}", true);
    Value* raw = b.CreateCall(fty, asm_, {ptr});
    if (bits == 8) raw = b.CreateTrunc(raw, b.getInt8Ty());
    llvm::Type* out = em.value_type(types.result);
    return out == raw->getType() ? raw : b.CreateBitCast(raw, out);
  };
}

Lowerer store(const std::string& op) {
  return [op](Emitter& em, std::vector<Value*> args, const CallTypes& types) -> Value* {
    auto& b = em.builder();
    Value* ptr = element_pointer(em, args[0], args[1], types);
    if (Value* plain = host_address(em, ptr)) {
      b.CreateStore(args[2], plain);
      return em.none_value();
    }
    int bits = types.params[2]->bitwidth();
    Value* v = args[2];
    if (!v->getType()->isIntegerTy()) v = b.CreateBitCast(v, b.getIntNTy(bits));
    if (bits == 8) v = b.CreateZExt(v, b.getInt32Ty());
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr->getType(), v->getType()}, false);
    std::string text = "st.global." + op + ".b" + std::to_string(bits) + " [$0], $1;";
    auto* asm_ = llvm::InlineAsm::get(fty, text, std::string("l,") + constraint(bits) + ",~{memory}", true);
    b.CreateCall(fty, asm_, {ptr, v});
    return em.none_value();
  };
}

void add_hinted(Table& t, const std::string& name, size_t arity, Lowerer lower) {
  std::string path = "cuda." + name;
  std::vector<std::string> params{"array", "i"};
  if (arity == 3) params.push_back("value");
  add(
      t, path,
      [arity](const std::vector<TypeRef>& a) {
        return hinted_signature(a, arity, arity == 3 ? types::none() : nullptr);
      },
      std::move(lower), params);
  t[path].explain = [name, arity](const std::vector<TypeRef>& a) { return argument_problem(name, a, arity); };
}

}  // namespace

void add_cache_hints(Table& t) {
  for (const char* op : {"ca", "cg", "cs", "lu", "cv"}) add_hinted(t, std::string("ld") + op, 2, load(op));
  for (const char* op : {"cg", "cs", "wb", "wt"}) add_hinted(t, std::string("st") + op, 3, store(op));
}

}  // namespace cujit::intrinsics
