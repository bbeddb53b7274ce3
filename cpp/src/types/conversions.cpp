// The casting graph between numeric types, built once from numba's direct
// rules and closed transitively (a path is as bad as its worst step; the best
// path wins), and NumPy-style promotion for unification.
#include "cujit/conversions.h"

#include <array>

namespace cujit {
namespace {

// Numeric types in a fixed order for the conversion table.
enum Slot { B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128, kSlots };

int slot_of(TypeRef t) {
  t = t->unliteral();
  switch (t->kind()) {
    case TypeKind::Boolean:
      return B;
    case TypeKind::Integer: {
      int i = t->bitwidth() == 8 ? 0 : t->bitwidth() == 16 ? 1 : t->bitwidth() == 32 ? 2 : 3;
      return (t->is_signed() ? I8 : U8) + i;
    }
    case TypeKind::Float:
      return t->bitwidth() == 16 ? F16 : t->bitwidth() == 32 ? F32 : F64;
    case TypeKind::Complex:
      return t->bitwidth() == 64 ? C64 : C128;
    default:
      return -1;
  }
}

using Table = std::array<std::array<Conversion, kSlots>, kSlots>;

Table build_table() {
  Table t;
  for (auto& row : t) row.fill(Conversion::Impossible);
  for (int i = 0; i < kSlots; ++i) t[i][i] = Conversion::Exact;
  // A rule a->b of kind k also allows b->a unsafely, unless it is one-way.
  auto rule = [&](int a, int b, Conversion k, bool one_way = false) {
    t[a][b] = k;
    if (!one_way && t[b][a] == Conversion::Impossible) t[b][a] = Conversion::Unsafe;
  };
  rule(B, I8, Conversion::Safe);
  rule(B, U8, Conversion::Safe);
  rule(I8, I16, Conversion::Promote);
  rule(I16, I32, Conversion::Promote);
  rule(I32, I64, Conversion::Promote);
  rule(U8, U16, Conversion::Promote);
  rule(U16, U32, Conversion::Promote);
  rule(U32, U64, Conversion::Promote);
  rule(U8, I16, Conversion::Safe);
  rule(U16, I32, Conversion::Safe);
  rule(U32, I64, Conversion::Safe);
  rule(I8, F16, Conversion::Safe);
  rule(I16, F32, Conversion::Safe);
  rule(I32, F64, Conversion::Safe);
  rule(I16, F16, Conversion::Unsafe);
  rule(I32, F32, Conversion::Unsafe);
  rule(I64, F64, Conversion::Safe);
  rule(U64, F64, Conversion::Safe);
  rule(F16, F32, Conversion::Promote);
  rule(F32, F64, Conversion::Promote);
  // Reals widen to complex, but complex never narrows to real implicitly (numba's tcr.safe).
  rule(F32, C64, Conversion::Safe, true);
  rule(F64, C128, Conversion::Safe, true);
  rule(C64, C128, Conversion::Promote);
  // Transitive closure (Floyd-Warshall over "worst step, best path").
  for (int k = 0; k < kSlots; ++k)
    for (int i = 0; i < kSlots; ++i)
      for (int j = 0; j < kSlots; ++j) {
        Conversion via = std::max(t[i][k], t[k][j]);
        if (via < t[i][j]) t[i][j] = via;
      }
  return t;
}

const Table& table() {
  static const Table t = build_table();
  return t;
}

// NumPy's promote_types for two numeric types.
TypeRef promote_numbers(TypeRef a, TypeRef b) {
  a = a->unliteral();
  b = b->unliteral();
  if (a == b) return a;
  if (a->is_boolean()) return b;
  if (b->is_boolean()) return a;
  auto float_bits_for_int = [](TypeRef i) { return i->bitwidth() <= 8 ? 16 : i->bitwidth() <= 16 ? 32 : 64; };
  if (a->is_integer() && b->is_integer()) {
    if (a->is_signed() == b->is_signed()) return a->bitwidth() >= b->bitwidth() ? a : b;
    TypeRef s = a->is_signed() ? a : b;
    TypeRef u = a->is_signed() ? b : a;
    if (s->bitwidth() > u->bitwidth()) return s;
    if (u->bitwidth() == 64) return types::float64();
    return types::integer(u->bitwidth() * 2, true);
  }
  // Float/complex with anything numeric: widths combine.
  auto real_bits = [&](TypeRef t) {
    if (t->is_integer()) return float_bits_for_int(t);
    if (t->is_float()) return t->bitwidth();
    return t->bitwidth() / 2;  // complex
  };
  int bits = std::max(real_bits(a), real_bits(b));
  if (a->is_complex() || b->is_complex()) return types::complex_(std::max(bits, 32) * 2);
  return types::float_(bits);
}

}  // namespace

Conversion can_convert(TypeRef from, TypeRef to) {
  if (from == to) return Conversion::Exact;
  if (from->is_literal() && from->unliteral() == to) return Conversion::Promote;
  int a = slot_of(from), b = slot_of(to);
  if (a >= 0 && b >= 0) {
    Conversion c = table()[a][b];
    // A literal converts like its underlying type, but never exactly.
    if (from->is_literal() && c == Conversion::Exact) c = Conversion::Promote;
    return c;
  }
  if (from->kind() == TypeKind::Array && to->kind() == TypeKind::Array) {
    // numba's Array.can_convert_to: same dtype and ndim, to layout A (or the same), and
    // never from readonly to mutable or from unaligned to aligned.
    bool ok = from->element(0) == to->element(0) && from->ndim() == to->ndim() &&
              (to->layout() == 'A' || to->layout() == from->layout()) && (!from->readonly() || to->readonly()) &&
              (from->aligned() || !to->aligned());
    return ok ? Conversion::Safe : Conversion::Impossible;
  }
  // bfloat16 widens to float32/float64 exactly and converts to other numbers unsafely; only explicit
  // constructors and cuda.bf16 functions make one.
  if (from->kind() == TypeKind::BFloat16) {
    if (to->is_float()) return to->bitwidth() >= 32 ? Conversion::Safe : Conversion::Unsafe;
    return to->is_number() && !to->is_literal() ? Conversion::Unsafe : Conversion::Impossible;
  }
  // numba's Optional: None and T convert to Optional(T); Optional(T) converts (safely at best) to what T does.
  if (to->kind() == TypeKind::Optional) {
    if (from->kind() == TypeKind::None) return Conversion::Promote;
    return can_convert(types::optional_value(from), to->element(0));
  }
  if (from->kind() == TypeKind::Optional) {
    Conversion c = can_convert(from->element(0), to);
    return c == Conversion::Impossible ? c : std::max(c, Conversion::Safe);
  }
  if (from->is_tuple() && to->is_tuple() && from->count() == to->count()) {
    Conversion worst = Conversion::Exact;
    for (size_t i = 0; i < from->count(); ++i) worst = std::max(worst, can_convert(from->element(i), to->element(i)));
    return worst;
  }
  return Conversion::Impossible;
}

bool same_record_layout(TypeRef a, TypeRef b) {
  return a->kind() == TypeKind::Record && b->kind() == TypeKind::Record && a->field_names() == b->field_names() &&
         a->field_offsets() == b->field_offsets() && a->elements() == b->elements() &&
         types::itemsize(a) == types::itemsize(b) && a->aligned() == b->aligned();
}

TypeRef unify(TypeRef a, TypeRef b) {
  if (a == b) return a;
  // None with T, or Optional(T) with either: Optional of what the values unify to (numba's Optional rules).
  if (a->kind() == TypeKind::None) return types::optional(b);
  if (b->kind() == TypeKind::None) return types::optional(a);
  if (a->kind() == TypeKind::Optional || b->kind() == TypeKind::Optional) {
    TypeRef u = unify(types::optional_value(a), types::optional_value(b));
    return u ? types::optional(u) : nullptr;
  }
  if (a->is_number() && b->is_number()) return promote_numbers(a, b);
  if (types::is_charseq(a) && a->kind() == b->kind())  // strings of one kind: the wider (the other padded)
    return types::char_count(a) >= types::char_count(b) ? a : b;
  if (same_record_layout(a, b)) {
    // numpy's record of a library type's layout (an array of its values) and the library's type (cujit.extending,
    // named): the same bytes; the library's, which keeps its methods and attributes
    const bool a_named = a->name().rfind("Record(", 0) != 0, b_named = b->name().rfind("Record(", 0) != 0;
    if (a_named != b_named) return a_named ? a : b;
  }
  if (a->is_tuple() && b->is_tuple() && a->count() == b->count()) {
    std::vector<TypeRef> elems;
    for (size_t i = 0; i < a->count(); ++i) {
      TypeRef u = unify(a->element(i), b->element(i));
      if (!u) return nullptr;
      elems.push_back(u);
    }
    return types::tuple(elems);
  }
  return nullptr;
}

namespace {

struct Rating {
  int unsafe = 0, safe = 0, promote = 0;
  bool operator<(const Rating& o) const {
    if (unsafe != o.unsafe) return unsafe < o.unsafe;
    if (safe != o.safe) return safe < o.safe;
    return promote < o.promote;
  }
};

}  // namespace

std::vector<size_t> best_overloads(const std::vector<std::vector<TypeRef>>& candidates,
                                   const std::vector<TypeRef>& literal_args) {
  // numba's templates try non-literal argument types first (prefer_literal is off).
  std::vector<TypeRef> args;
  for (TypeRef a : literal_args) args.push_back(a->unliteral());
  std::vector<size_t> best;
  Rating best_rating;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const std::vector<TypeRef>& params = candidates[c];
    if (params.size() != args.size()) continue;
    Rating r;
    bool ok = true;
    for (size_t i = 0; i < args.size() && ok; ++i) {
      switch (can_convert(args[i], params[i])) {
        case Conversion::Exact:
          break;
        case Conversion::Promote:
          ++r.promote;
          break;
        case Conversion::Safe:
          ++r.safe;
          break;
        case Conversion::Unsafe:
          ++r.unsafe;
          break;
        case Conversion::Impossible:
          ok = false;
          break;
      }
    }
    if (!ok) continue;
    if (best.empty() || r < best_rating) {
      best = {c};
      best_rating = r;
    } else if (!(best_rating < r)) {
      best.push_back(c);
    }
  }
  return best;
}

std::optional<OpSignature> choose_overload(const std::vector<OpSignature>& candidates,
                                           const std::vector<TypeRef>& args) {
  std::vector<std::vector<TypeRef>> params;
  for (const OpSignature& cand : candidates) params.push_back(cand.params);
  std::vector<size_t> best = best_overloads(params, args);
  if (best.empty()) return std::nullopt;
  return candidates[best.front()];
}

}  // namespace cujit
