// Float constant folding with Python's semantics (floatobject.c): floor division and modulo round towards
// negative infinity and take the divisor's sign; power raises on overflow and on a negative base with a
// fractional exponent (a complex result), so neither is folded.
#include "fold_constants.h"

#include <cmath>

namespace cujit::frontend {
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
    case ir::Op::Add: return a + b;
    case ir::Op::Sub: return a - b;
    case ir::Op::Mul: return a * b;
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
    default: return std::nullopt;
  }
}

}  // namespace cujit::frontend
