// Constant folding of float arithmetic as CPython's compiler does it before numba (or cujit's bytecode
// frontend) sees a function: `2.5 % -1.25`, `7 / 2`, `2 ** -1` are literals in the bytecode, so the source
// frontend folds them the same way and both give one IR.
#pragma once

#include <optional>

#include "cujit/ir.h"

namespace cujit::frontend {

// Python's float result of `a op b`, or nullopt where CPython leaves the operation to run time (it would
// raise ZeroDivisionError or OverflowError, or give a complex number).
std::optional<double> fold_float_binary(ir::Op op, double a, double b);

}  // namespace cujit::frontend
