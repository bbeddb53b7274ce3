// cuda.atomic.*: add, sub, max, min, nanmax, nanmin, exch, and_, or_, xor, inc,
// dec, cas and compare_and_swap on array elements. Relaxed ordering, returning
// the old value, like numba. Float max/min are LLVM's fmax/fmin (maxnum: a NaN
// operand is ignored), which are numba-cuda's nanmax/nanmin rules: nanmax and
// nanmin lower as max and min.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "cujit/target.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

bool is_atomic_dtype(TypeRef t, bool integers_only, bool unsigned_only) {
  if (t->is_float()) return !integers_only && t->bitwidth() >= 32;
  if (!t->is_integer() || t->bitwidth() < 32) return false;
  return !unsigned_only || !t->is_signed();
}

// cuda.atomic.<op>(ary, idx, val) -> ary.dtype; cas takes (ary, idx, old, val).
Typer atomic_typer(bool integers_only, bool unsigned_only, int values) {
  return [=](const std::vector<TypeRef>& args) -> std::optional<OpSignature> {
    if (args.size() != static_cast<size_t>(2 + values) || args[0]->kind() != TypeKind::Array) return std::nullopt;
    TypeRef ary = args[0];
    TypeRef dtype = ary->element(0);
    if (!is_atomic_dtype(dtype, integers_only, unsigned_only)) return std::nullopt;
    TypeRef idx = args[1];
    bool ok_index =
        ary->ndim() == 1 ? idx->is_integer() : idx->is_tuple() && static_cast<int>(idx->count()) == ary->ndim();
    if (!ok_index) return std::nullopt;
    std::vector<TypeRef> params{ary, idx->is_integer() ? types::int64() : idx};
    for (int i = 0; i < values; ++i) {
      if (!args[2 + i]->is_number() || args[2 + i]->is_complex()) return std::nullopt;
      params.push_back(dtype);
    }
    return OpSignature{params, dtype};
  };
}

// compare_and_swap(ary, old, val): cas on ary[0] of a 1-D array.
std::optional<OpSignature> compare_and_swap_sig(const std::vector<TypeRef>& a) {
  if (a.size() != 3 || a[0]->kind() != TypeKind::Array || a[0]->ndim() != 1) return std::nullopt;
  TypeRef dtype = a[0]->element(0);
  if (!is_atomic_dtype(dtype, true, false)) return std::nullopt;
  return fixed({a[0], dtype, dtype}, dtype, a);
}

// The address of ary[idx] for an integer or tuple index.
llvm::Value* target(Emitter& em, llvm::Value* ary, llvm::Value* index, const CallTypes& types) {
  TypeRef aty = types.params[0];
  std::vector<llvm::Value*> idx;
  if (aty->ndim() == 1) {
    idx.push_back(index);
  } else {
    for (int d = 0; d < aty->ndim(); ++d)
      idx.push_back(em.cast(em.builder().CreateExtractValue(index, d), types.params[1]->element(d), types::int64()));
  }
  return em.element_address(ary, aty, idx);
}

// CUDA's atomics (atomicAdd, atomicCAS...) are device-wide: LLVM 22 writes the
// IR's scope into PTX (atom.relaxed.sys.cas for the default, system scope), so
// cujit's name the device one (atom.relaxed.gpu, what a plain atom means).
llvm::SyncScope::ID device_scope(Emitter& em) { return em.builder().getContext().getOrInsertSyncScopeID("device"); }

Lowerer rmw(const std::string& op) {
  return [op](Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types) -> llvm::Value* {
    auto& b = em.builder();
    TypeRef dtype = types.params[0]->element(0);
    llvm::Value* ptr = target(em, args[0], args[1], types);
    llvm::MaybeAlign align(dtype->bitwidth() / 8);
    auto order = llvm::AtomicOrdering::Monotonic;
    using Bin = llvm::AtomicRMWInst::BinOp;
    bool f = dtype->is_float();
    bool s = dtype->is_signed();
    llvm::Value* v = args[2];
    Bin bin = Bin::Xchg;
    if (op == "add")
      bin = f ? Bin::FAdd : Bin::Add;
    else if (op == "sub") {
      bin = f ? Bin::FAdd : Bin::Sub;
      if (f) v = b.CreateFNeg(v);
    } else if (op == "max")
      bin = f ? Bin::FMax : s ? Bin::Max : Bin::UMax;
    else if (op == "min")
      bin = f ? Bin::FMin : s ? Bin::Min : Bin::UMin;
    else if (op == "and_")
      bin = Bin::And;
    else if (op == "or_")
      bin = Bin::Or;
    else if (op == "xor")
      bin = Bin::Xor;
    else if (op == "inc" || op == "dec")  // PTX atom.inc/dec.u32 for 32 bits, a CAS loop for 64
      bin = op == "inc" ? Bin::UIncWrap : Bin::UDecWrap;
    llvm::Value* old = b.CreateAtomicRMW(bin, ptr, v, align, order, device_scope(em));
    em.target().spin_point(b, em.target_context());  // the host lets other threads run (a spin-wait's loop)
    return old;
  };
}

llvm::Value* compare_exchange(Emitter& em, llvm::Value* ptr, llvm::Value* old, llvm::Value* val, TypeRef dtype) {
  auto order = llvm::AtomicOrdering::Monotonic;
  auto* cx = em.builder().CreateAtomicCmpXchg(ptr, old, val, llvm::MaybeAlign(dtype->bitwidth() / 8), order, order,
                                              device_scope(em));
  em.target().spin_point(em.builder(), em.target_context());
  return em.builder().CreateExtractValue(cx, 0);
}

}  // namespace

void add_atomics(Table& t) {
  const std::vector<std::string> params{"ary", "idx", "val"};
  for (const char* op : {"add", "sub", "max", "min"})
    add(t, std::string("cuda.atomic.") + op, atomic_typer(false, false, 1), rmw(op), params);
  add(t, "cuda.atomic.nanmax", atomic_typer(false, false, 1), rmw("max"), params);
  add(t, "cuda.atomic.nanmin", atomic_typer(false, false, 1), rmw("min"), params);
  for (const char* op : {"and_", "or_", "xor", "exch"})
    add(t, std::string("cuda.atomic.") + op, atomic_typer(true, false, 1), rmw(op), params);
  for (const char* op : {"inc", "dec"})
    add(t, std::string("cuda.atomic.") + op, atomic_typer(true, true, 1), rmw(op), params);
  add(t, "cuda.atomic.cas", atomic_typer(true, false, 2),
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes& types) {
        return compare_exchange(em, target(em, a[0], a[1], types), a[2], a[3], types.result);
      },
      {"ary", "idx", "old", "val"});
  add(t, "cuda.atomic.compare_and_swap", compare_and_swap_sig,
      [](Emitter& em, std::vector<llvm::Value*> a, const CallTypes& types) {
        llvm::Value* ptr = em.element_address(a[0], types.params[0], {em.builder().getInt64(0)});
        return compare_exchange(em, ptr, a[1], a[2], types.result);
      },
      {"ary", "old", "val"});
}

}  // namespace cujit::intrinsics
