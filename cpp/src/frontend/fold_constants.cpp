// Constant folding with CPython's rules: int arithmetic up to 128 bits, float arithmetic with Python's
// semantics (floatobject.c: floor division and modulo round towards negative infinity and take the divisor's
// sign; power raises on overflow and on a negative base with a fractional exponent, so neither is folded),
// bools as the ints they are, `not` of a constant; and the truth of constant conditions.
#include "fold_constants.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace cujit::frontend {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Op;

namespace {

// Python's divmod for floats: (floor quotient, remainder with the divisor's sign).
std::pair<double, double> float_divmod(double vx, double wx) {
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  double floordiv;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
  return {floordiv, mod};
}

}  // namespace

std::optional<double> fold_float_binary(ir::Op op, double a, double b) {
  switch (op) {
    case ir::Op::Add:
      return a + b;
    case ir::Op::Sub:
      return a - b;
    case ir::Op::Mul:
      return a * b;
    case ir::Op::Div:
      if (b == 0.0) return std::nullopt;
      return a / b;
    case ir::Op::FloorDiv:
      if (b == 0.0) return std::nullopt;
      return float_divmod(a, b).first;
    case ir::Op::Mod:
      if (b == 0.0) return std::nullopt;
      return float_divmod(a, b).second;
    case ir::Op::Pow: {
      if (a == 0.0 && b < 0.0) return std::nullopt;              // ZeroDivisionError
      if (a < 0.0 && b != std::floor(b)) return std::nullopt;    // a complex result
      double r = std::pow(a, b);
      if (std::isinf(r) && std::isfinite(a) && std::isfinite(b)) return std::nullopt;  // OverflowError
      return r;
    }
    default:
      return std::nullopt;
  }
}

// Python's value of a condition made only of constants (literals, frozen
// globals, comparisons and `not` of them): what numba's dead-branch pruning
// decides before typing. nullopt when the condition is not constant.
std::optional<bool> constant_truth(const Expr& e) {
  using K = ir::GlobalValue::Kind;
  struct Number {
    bool is_float;
    long double value;  // exact for every int64 and uint64, and every double
  };
  auto number = [](const Expr& x) -> std::optional<Number> {
    if (x.kind != ExprKind::Const) return std::nullopt;
    const ir::GlobalValue& g = x.global;
    switch (g.kind) {
      case K::Int:
        return Number{false, g.is_unsigned ? static_cast<long double>(static_cast<uint64_t>(g.int_value))
                                           : static_cast<long double>(g.int_value)};
      case K::Bool:
        return Number{false, static_cast<long double>(g.int_value != 0)};
      case K::Float:
        return Number{true, g.float_value};
      default:
        return std::nullopt;
    }
  };
  if (e.kind == ExprKind::Const) {
    const ir::GlobalValue& g = e.global;
    if (g.kind == K::None) return false;
    if (g.kind == K::Complex) return g.float_value != 0 || g.imag_value != 0;
    if (auto x = number(e)) return x->value != 0;
    return std::nullopt;
  }
  if (e.kind == ExprKind::Unary && e.op == Op::Not) {
    std::optional<bool> inner = constant_truth(*e.operands[0]);
    if (inner) return !*inner;
    return std::nullopt;
  }
  if (e.kind != ExprKind::Compare) return std::nullopt;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    auto a = number(*e.operands[i]), b = number(*e.operands[i + 1]);
    if (!a || !b) return std::nullopt;
    bool holds;
    switch (e.ops[i]) {
      case Op::Eq:
        holds = a->value == b->value;
        break;
      case Op::NotEq:
        holds = a->value != b->value;
        break;
      case Op::Lt:
        holds = a->value < b->value;
        break;
      case Op::LtE:
        holds = a->value <= b->value;
        break;
      case Op::Gt:
        holds = a->value > b->value;
        break;
      case Op::GtE:
        holds = a->value >= b->value;
        break;
      default:
        return std::nullopt;
    }
    if (!holds) return false;
  }
  return true;
}

ExprPtr as_condition(ExprPtr e) {
  if (e->kind == ExprKind::Unary && e->op == Op::Not) {
    e->operands[0] = as_condition(std::move(e->operands[0]));
  } else if (e->kind == ExprKind::IfExp) {  // its test is a condition already; its arms are parts of this one
    e->operands[1] = as_condition(std::move(e->operands[1]));
    e->operands[2] = as_condition(std::move(e->operands[2]));
    // A constant arm is a jump straight out: `x if c else 4` is `not c or x`, `x if c else 0` is `c and x`,
    // `4 if c else x` is `c or x`, `0 if c else x` is `not c and x` (CPython's jumps are the same).
    for (int arm : {1, 2}) {
      std::optional<bool> truth =
          e->operands[arm]->kind == ExprKind::Const ? constant_truth(*e->operands[arm]) : std::nullopt;
      if (!truth) continue;
      ExprPtr test = std::move(e->operands[0]);
      if ((arm == 2) == *truth) {  // the test is negated: `not c or x`, `not c and x`
        auto negated = std::make_unique<Expr>(ExprKind::Unary, test->loc);
        negated->op = Op::Not;
        negated->operands.push_back(std::move(test));
        test = std::move(negated);
      }
      auto out = std::make_unique<Expr>(ExprKind::BoolOp, e->loc);
      out->op = *truth ? Op::Or : Op::And;
      out->operands.push_back(std::move(test));
      out->operands.push_back(std::move(e->operands[3 - arm]));
      return as_condition(std::move(out));
    }
  } else if (e->kind == ExprKind::BoolOp) {
    std::vector<ExprPtr> kept;
    for (ExprPtr& v : e->operands) {
      std::optional<bool> truth = v->kind == ExprKind::Const ? constant_truth(*v) : std::nullopt;
      if (truth && *truth != (e->op == Op::Or)) continue;  // `x and 8`, `x or 0`: x
      if (truth && !kept.empty()) {  // `x or 2`: x, then true whatever x is (as `x or True`; what follows is dead)
        auto decided = std::make_unique<Expr>(ExprKind::Const, v->loc);
        decided->global.kind = ir::GlobalValue::Kind::Bool;
        decided->global.repr = *truth ? "True" : "False";
        decided->global.int_value = *truth;
        kept.push_back(std::move(decided));
        break;
      }
      ExprPtr part = as_condition(std::move(v));
      if (part->kind == ExprKind::BoolOp && part->op == e->op) {  // (a and b) or 0 inside an and: a and b
        for (ExprPtr& inner : part->operands) kept.push_back(std::move(inner));
      } else {
        kept.push_back(std::move(part));
      }
    }
    if (kept.empty()) return e;  // made only of constants: folded before it gets here
    if (kept.size() == 1) return std::move(kept[0]);
    e->operands = std::move(kept);
  }
  return e;
}

std::optional<bool> decided_condition(ExprPtr& e) {
  if (e->kind != ExprKind::BoolOp || e->operands.size() < 2) return std::nullopt;
  const Expr& last = *e->operands.back();
  if (last.kind != ExprKind::Const || last.global.kind != ir::GlobalValue::Kind::Bool) return std::nullopt;
  bool truth = last.global.int_value != 0;
  if (truth != (e->op == Op::Or)) return std::nullopt;
  e->operands.pop_back();
  if (e->operands.size() == 1) e = std::move(e->operands[0]);
  return truth;
}

// CPython folds constant arithmetic (2 ** 40, -1) before numba sees the
// bytecode, so those are literals for numba: fold them the same way. Like
// CPython, results beyond 128 bits are left to run time; a folded result no
// integer type holds is numba's "Int value is too large".
ExprPtr fold_constants(ExprPtr e) {
  using K = ir::GlobalValue::Kind;
  auto is_int = [](const ExprPtr& x) { return x->kind == ExprKind::Const && x->global.kind == K::Int; };
  auto is_float = [](const ExprPtr& x) { return x->kind == ExprKind::Const && x->global.kind == K::Float; };
  // CPython folds bools in arithmetic as the ints they are (True + 1 is 2).
  auto is_intlike = [](const ExprPtr& x) {
    return x->kind == ExprKind::Const && (x->global.kind == K::Int || x->global.kind == K::Bool);
  };
  auto is_number = [&](const ExprPtr& x) { return is_intlike(x) || is_float(x); };
  auto value_of = [](const ExprPtr& x) -> __int128 {
    if (x->global.is_unsigned) return static_cast<__int128>(static_cast<uint64_t>(x->global.int_value));
    return x->global.int_value;
  };
  constexpr __int128 kLimit = static_cast<__int128>(1) << 120;  // well inside __int128: no overflow below
  auto make_int = [&](__int128 v) -> ExprPtr {
    if (v <= -kLimit || v >= kLimit) return nullptr;
    if (v < INT64_MIN || v > static_cast<__int128>(UINT64_MAX)) {
      bool negative = v < 0;
      unsigned __int128 m = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
      std::string digits;
      for (; m != 0; m /= 10) digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
      fail(ErrorKind::TypingError, "Int value is too large: " + std::string(negative ? "-" : "") + digits, e->loc);
    }
    auto c = std::make_unique<Expr>(ExprKind::Const, e->loc);
    c->global.kind = K::Int;
    c->global.is_unsigned = v > INT64_MAX;
    c->global.int_value = static_cast<int64_t>(static_cast<uint64_t>(v));
    return c;
  };
  auto make_float = [&](double v) {
    auto c = std::make_unique<Expr>(ExprKind::Const, e->loc);
    c->global.kind = K::Float;
    c->global.float_value = v;
    return c;
  };
  ExprPtr folded;
  if (e->kind == ExprKind::Unary && (e->op == Op::USub || e->op == Op::UAdd || e->op == Op::Invert)) {
    const ExprPtr& x = e->operands[0];
    if (is_intlike(x)) {  // bools too: CPython folds +False to 0 and ~True to -2
      __int128 v = value_of(x);
      folded = make_int(e->op == Op::USub ? -v : e->op == Op::UAdd ? v : ~v);
    } else if (is_float(x) && e->op != Op::Invert) {
      folded = make_float(e->op == Op::USub ? -x->global.float_value : x->global.float_value);
    }
  } else if (e->kind == ExprKind::Unary && e->op == Op::Not && e->operands[0]->kind == ExprKind::Const &&
             (is_int(e->operands[0]) || is_float(e->operands[0]) || e->operands[0]->global.kind == K::Bool ||
              e->operands[0]->global.kind == K::None)) {
    auto c = std::make_unique<Expr>(ExprKind::Const, e->loc);  // CPython folds `not 1` to False
    c->global.kind = K::Bool;
    c->global.int_value = !constant_truth(*e->operands[0]).value_or(true);
    folded = std::move(c);
  } else if (e->kind == ExprKind::Binary && is_number(e->operands[0]) && is_number(e->operands[1]) &&
             (is_float(e->operands[0]) || is_float(e->operands[1]) || e->op == Op::Div ||
              (e->op == Op::Pow && value_of(e->operands[1]) < 0))) {
    auto as_double = [&](const ExprPtr& x) {
      return is_float(x) ? x->global.float_value : static_cast<double>(value_of(x));
    };
    auto exact = [&](const ExprPtr& x) {  // an int that converts to double exactly, as CPython's division needs
      return is_float(x) ||
             (value_of(x) > -(static_cast<__int128>(1) << 53) && value_of(x) < (static_cast<__int128>(1) << 53));
    };
    if (exact(e->operands[0]) && exact(e->operands[1]))
      if (auto r = fold_float_binary(e->op, as_double(e->operands[0]), as_double(e->operands[1])))
        folded = make_float(*r);
  } else if (e->kind == ExprKind::Binary && is_intlike(e->operands[0]) && is_intlike(e->operands[1])) {
    __int128 a = value_of(e->operands[0]), b = value_of(e->operands[1]);
    __int128 r = 0;
    switch (e->op) {
      case Op::Add:
        if (!__builtin_add_overflow(a, b, &r)) folded = make_int(r);
        break;
      case Op::Sub:
        if (!__builtin_sub_overflow(a, b, &r)) folded = make_int(r);
        break;
      case Op::Mul:
        if (!__builtin_mul_overflow(a, b, &r)) folded = make_int(r);
        break;
      case Op::BitAnd:
        folded = make_int(a & b);
        break;
      case Op::BitOr:
        folded = make_int(a | b);
        break;
      case Op::BitXor:
        folded = make_int(a ^ b);
        break;
      case Op::FloorDiv:
      case Op::Mod:
        if (b != 0) {
          __int128 q = a / b, m = a % b;
          if (m != 0 && ((m < 0) != (b < 0))) {
            q -= 1;
            m += b;
          }
          folded = make_int(e->op == Op::FloorDiv ? q : m);
        }
        break;
      case Op::Pow:
        if (b >= 0 && b < 128) {
          r = 1;
          bool overflow = false;
          for (__int128 i = 0; i < b && !overflow; ++i)
            overflow = __builtin_mul_overflow(r, a, &r) || r >= kLimit || r <= -kLimit;
          if (!overflow) folded = make_int(r);
        }
        break;
      case Op::LShift:
        if (b >= 0 && b < 120 && !__builtin_mul_overflow(a, static_cast<__int128>(1) << b, &r)) folded = make_int(r);
        break;
      case Op::RShift:
        if (b >= 0 && b < 64) folded = make_int(a >> b);
        break;
      default:
        break;
    }
  }
  return folded ? std::move(folded) : std::move(e);
}

}  // namespace cujit::frontend
