// numba's operator templates (typing/builtins.py): which signatures each
// operator offers, and the rating that picks one for given operand types.
#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "cujit/conversions.h"
#include "cujit/typing.h"
#include "typing_internal.h"

namespace cujit::typing {
namespace {

using ir::Op;

std::vector<TypeRef> machine_ints() { return {types::int64(), types::uint64()}; }
std::vector<TypeRef> reals() { return {types::float16(), types::float32(), types::float64()}; }
// numba's real_domain: the operators numba-cuda has no float16 template for
// (// % **) take float16 operands as float32.
std::vector<TypeRef> wide_reals() { return {types::float32(), types::float64()}; }
std::vector<TypeRef> complexes() { return {types::complex64(), types::complex128()}; }
std::vector<TypeRef> all_ints() {
  return {types::int8(),  types::int16(),  types::int32(),  types::int64(),
          types::uint8(), types::uint16(), types::uint32(), types::uint64()};
}

// Result of integer arithmetic: at least 64 bits, signed if either is.
TypeRef choose_result_int(TypeRef a, TypeRef b) {
  int bits = std::max({64, a->bitwidth(), b->bitwidth()});
  return types::integer(bits, a->is_signed() || b->is_signed());
}

void add_same(std::vector<OpSignature>& out, const std::vector<TypeRef>& domain, int arity, TypeRef result = nullptr) {
  for (TypeRef t : domain) out.push_back({std::vector<TypeRef>(arity, t), result ? result : t});
}

void add_integer_binops(std::vector<OpSignature>& out) {
  for (TypeRef a : machine_ints())
    for (TypeRef b : machine_ints()) out.push_back({{a, b}, choose_result_int(a, b)});
}

std::vector<OpSignature> binary_candidates(Op op) {
  std::vector<OpSignature> c;
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
      add_integer_binops(c);
      add_same(c, reals(), 2);
      add_same(c, complexes(), 2);
      break;
    case Op::Div:
      for (TypeRef t : machine_ints()) c.push_back({{t, t}, types::float64()});
      add_same(c, reals(), 2);
      add_same(c, complexes(), 2);
      break;
    case Op::FloorDiv:
    case Op::Mod:
      add_integer_binops(c);
      add_same(c, wide_reals(), 2);
      break;
    case Op::Pow:
      add_integer_binops(c);
      for (TypeRef t : wide_reals()) c.push_back({{t, types::int64()}, t});
      add_same(c, wide_reals(), 2);
      add_same(c, complexes(), 2);
      break;
    case Op::BitAnd:
    case Op::BitOr:
    case Op::BitXor:
      c.push_back({{types::boolean(), types::boolean()}, types::boolean()});
      add_integer_binops(c);
      break;
    case Op::LShift:
    case Op::RShift:
      for (TypeRef lhs : all_ints())
        for (TypeRef rhs : {types::int64(), types::uint64()})
          c.push_back({{lhs, rhs}, types::integer(64, lhs->is_signed())});
      break;
    default:
      break;
  }
  return c;
}

}  // namespace

bool is_bitwise(Op op) {
  return op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor || op == Op::LShift || op == Op::RShift;
}

bool is_integral(TypeRef t) { return t->is_integer() || t->is_boolean(); }

namespace {

// numba-cuda's bfloat16 operators take two bfloat16 operands: + - * / give a bfloat16, comparisons a bool.
std::optional<OpSignature> bfloat16_signature(Op op, TypeRef lhs, TypeRef rhs) {
  TypeRef bf = types::bfloat16();
  if (lhs != bf || rhs != bf) return std::nullopt;
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
      return OpSignature{{bf, bf}, bf};
    case Op::Eq:
    case Op::NotEq:
    case Op::Lt:
    case Op::LtE:
    case Op::Gt:
    case Op::GtE:
      return OpSignature{{bf, bf}, types::boolean()};
    default:
      return std::nullopt;
  }
}

std::optional<OpSignature> binary_signature(Op op, TypeRef lhs, TypeRef rhs) {
  if (lhs->kind() == TypeKind::BFloat16 || rhs->kind() == TypeKind::BFloat16) return bfloat16_signature(op, lhs, rhs);
  if (types::is_time(lhs) || types::is_time(rhs)) return datetime_signature(op, lhs, rhs);
  if (!lhs->is_number() || !rhs->is_number()) return std::nullopt;
  if (is_bitwise(op) && (!is_integral(lhs) || !is_integral(rhs))) return std::nullopt;
  return choose_overload(binary_candidates(op), {lhs, rhs});
}

// Tuples compare lexicographically (==/!= element by element, lengths first), so each
// pair of elements must compare for equality and, for an ordering, with <.
std::optional<OpSignature> tuple_compare_signature(Op op, TypeRef lhs, TypeRef rhs) {
  bool ordering = op != Op::Eq && op != Op::NotEq;
  for (size_t i = 0; i < std::min(lhs->count(), rhs->count()); ++i) {
    if (!resolve_compare(Op::Eq, lhs->element(i), rhs->element(i))) return std::nullopt;
    if (ordering && !resolve_compare(Op::Lt, lhs->element(i), rhs->element(i))) return std::nullopt;
  }
  return OpSignature{{lhs, rhs}, types::boolean()};
}

std::optional<OpSignature> compare_signature(Op op, TypeRef lhs, TypeRef rhs) {
  if (lhs->is_tuple() && rhs->is_tuple()) return tuple_compare_signature(op, lhs, rhs);
  if (lhs->kind() == TypeKind::BFloat16 || rhs->kind() == TypeKind::BFloat16) return bfloat16_signature(op, lhs, rhs);
  if (types::is_time(lhs) && types::is_time(rhs)) return datetime_signature(op, lhs, rhs);
  if (types::is_charseq(lhs) || types::is_charseq(rhs)) {  // numpy's comparison of fixed-width strings of one kind
    if (lhs->kind() != rhs->kind()) return std::nullopt;
    return OpSignature{{lhs, rhs}, types::boolean()};
  }
  if (!lhs->is_number() || !rhs->is_number()) {
    // Comparing with None (or other non-numbers) is a constant.
    if (op == Op::Eq || op == Op::NotEq) return OpSignature{{lhs, rhs}, types::boolean()};
    return std::nullopt;
  }
  std::vector<OpSignature> c;
  c.push_back({{types::boolean(), types::boolean()}, types::boolean()});
  add_same(c, all_ints(), 2, types::boolean());
  add_same(c, reals(), 2, types::boolean());
  if (op == Op::Eq || op == Op::NotEq) add_same(c, complexes(), 2, types::boolean());
  return choose_overload(c, {lhs, rhs});
}

// Resolution depends only on the operator and the (interned) operand types, and
// inference asks the same questions on each of its passes: answers are kept per thread.
template <std::optional<OpSignature> (*Resolve)(Op, TypeRef, TypeRef)>
std::optional<OpSignature> remembered(Op op, TypeRef lhs, TypeRef rhs) {
  thread_local std::map<std::tuple<Op, TypeRef, TypeRef>, std::optional<OpSignature>> answers;
  auto key = std::make_tuple(op, lhs, rhs);
  auto it = answers.find(key);
  if (it == answers.end()) it = answers.emplace(key, Resolve(op, lhs, rhs)).first;
  return it->second;
}

}  // namespace

std::optional<OpSignature> resolve_binary(Op op, TypeRef lhs, TypeRef rhs) {
  return remembered<binary_signature>(op, lhs, rhs);
}

std::optional<OpSignature> resolve_compare(Op op, TypeRef lhs, TypeRef rhs) {
  return remembered<compare_signature>(op, lhs, rhs);
}

std::optional<OpSignature> resolve_unary(Op op, TypeRef operand) {
  if (op == Op::Not) return OpSignature{{operand}, types::boolean()};
  if ((operand->kind() == TypeKind::BFloat16 || operand->kind() == TypeKind::Timedelta) &&
      (op == Op::USub || op == Op::UAdd))
    return OpSignature{{operand}, operand};
  if (!operand->is_number()) return std::nullopt;
  std::vector<OpSignature> c;
  if (op == Op::Invert) {
    if (!is_integral(operand)) return std::nullopt;
    c.push_back({{types::boolean()}, types::boolean()});
    for (TypeRef t : all_ints()) c.push_back({{t}, choose_result_int(t, t)});
  } else {
    add_same(c, machine_ints(), 1);
    add_same(c, reals(), 1);
    add_same(c, complexes(), 1);
  }
  return choose_overload(c, {operand});
}

TypeRef resolve_range(const std::vector<TypeRef>& args) {
  std::vector<OpSignature> c;
  for (TypeRef t : {types::int32(), types::int64(), types::uint64()})
    c.push_back({std::vector<TypeRef>(args.size(), t), t});
  for (TypeRef a : args)
    if (!a->is_integer() && !a->is_boolean()) return nullptr;
  auto best = choose_overload(c, args);
  return best ? best->result : nullptr;
}

}  // namespace cujit::typing
