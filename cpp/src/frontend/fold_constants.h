// Constant folding as CPython's compiler does it before numba (or cujit's bytecode frontend) sees a function:
// `2 ** 40`, `-1`, `2.5 % -1.25`, `7 / 2`, `2 ** -1`, `not 1`, `+False` are literals in the bytecode, so the
// source frontend folds them the same way and both readers give one IR; and the truth of a constant condition,
// which decides the branches numba prunes.
#pragma once

#include <optional>

#include "cujit/ir.h"

namespace cujit::frontend {

// Python's value of a condition made only of constants (literals, frozen globals, comparisons and `not` of
// them): what numba's dead-branch pruning decides before typing. nullopt when the condition is not constant.
std::optional<bool> constant_truth(const ir::Expr& e);

// `e` read as a condition (an if, while or assert test, a conditional expression's test): only its truth
// counts, so an and/or drops every constant operand that cannot decide it, the last one too (`x and 8` is `x`),
// through `not`, nested and/or and conditional expressions, as CPython's jumps for a condition drop them.
ir::ExprPtr as_condition(ir::ExprPtr e);

// A condition (as_condition's) whose value its last operand decides, whatever the others give (`x or True`):
// that truth, with `e` left as the rest (`x`), to be run for what it does. nullopt for other conditions.
std::optional<bool> decided_condition(ir::ExprPtr& e);

// `e` with its constant operation folded (its operands are folded already), or `e` itself. An int result no
// integer type holds is numba's "Int value is too large" (a CompileError at `e`).
ir::ExprPtr fold_constants(ir::ExprPtr e);

// Python's float result of `a op b`, or nullopt where CPython leaves the operation to run time (it would
// raise ZeroDivisionError or OverflowError, or give a complex number).
std::optional<double> fold_float_binary(ir::Op op, double a, double b);

}  // namespace cujit::frontend
