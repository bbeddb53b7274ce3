// numba's datetime64 / timedelta64 operators (numba's npdatetime typing): the signature an operator takes on them,
// both operands converted to the finer of their units. datetime - datetime is a timedelta; datetime +- timedelta a
// datetime; timedeltas add, subtract, compare, scale by numbers, divide by numbers and by each other (a float).
// Lowered by lowering/lower_datetime.cpp.
#include "typing_internal.h"

namespace cujit::typing {
namespace {

using ir::Op;
using types::time_unit;
using types::time_unit_factor;

// The finer of two units both convert to, or nullopt.
std::optional<std::string> common_unit(TypeRef a, TypeRef b) {
  std::string ua = time_unit(a), ub = time_unit(b);
  if (time_unit_factor(ua, ub) != 0) return ub.empty() ? ua : ub;
  if (time_unit_factor(ub, ua) != 0) return ua;
  return std::nullopt;
}

bool is_dt(TypeRef t) { return t->kind() == TypeKind::Datetime; }
bool is_td(TypeRef t) { return t->kind() == TypeKind::Timedelta; }

}  // namespace

std::optional<OpSignature> datetime_signature(Op op, TypeRef lhs, TypeRef rhs) {
  lhs = lhs->unliteral();
  rhs = rhs->unliteral();
  const bool compare =
      op == Op::Eq || op == Op::NotEq || op == Op::Lt || op == Op::LtE || op == Op::Gt || op == Op::GtE;
  if (types::is_time(lhs) && types::is_time(rhs)) {
    auto unit = common_unit(lhs, rhs);
    if (!unit) return std::nullopt;
    TypeRef dt = types::datetime64(*unit), td = types::timedelta64(*unit);
    if (compare && lhs->kind() == rhs->kind())
      return OpSignature{{is_dt(lhs) ? dt : td, is_dt(rhs) ? dt : td}, types::boolean()};
    if (op == Op::Sub && is_dt(lhs) && is_dt(rhs)) return OpSignature{{dt, dt}, td};
    if ((op == Op::Add || op == Op::Sub) && is_dt(lhs) && is_td(rhs)) return OpSignature{{dt, td}, dt};
    if (op == Op::Add && is_td(lhs) && is_dt(rhs)) return OpSignature{{td, dt}, dt};
    if ((op == Op::Add || op == Op::Sub) && is_td(lhs) && is_td(rhs)) return OpSignature{{td, td}, td};
    if (op == Op::Div && is_td(lhs) && is_td(rhs)) return OpSignature{{td, td}, types::float64()};
    return std::nullopt;
  }
  // A timedelta and a number: scaled (* by an integer or a float), divided (/ and // by one).
  TypeRef td = is_td(lhs) ? lhs : is_td(rhs) ? rhs : nullptr;
  TypeRef number = td == lhs ? rhs : lhs;
  if (td == nullptr || !(number->is_integer() || number->is_float())) return std::nullopt;
  TypeRef scale = number->is_integer() ? types::int64() : types::float64();
  if (op == Op::Mul) return td == lhs ? OpSignature{{td, scale}, td} : OpSignature{{scale, td}, td};
  if ((op == Op::Div || op == Op::FloorDiv) && td == lhs) return OpSignature{{td, scale}, td};
  return std::nullopt;
}

}  // namespace cujit::typing
