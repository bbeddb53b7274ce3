// Passes over a function's IR between the frontend and typing (both frontends build the same IR, so both get
// them): each is linear in the function's size and rewrites the IR in place.
#pragma once

#include <vector>

#include "cujit/ir.h"

namespace cujit::passes {

// numba's closure inlining: each call of an inner function (a def in the function, or a lambda bound to a name;
// the frontend builds each as an ir::Function reached through a GlobalValue::Kind::InnerFunction) is replaced by
// its body, with its parameters and locals as new variables and the variables it captured as the enclosing
// function's own. First of the passes: the others then see one function.
void inline_inner_functions(ir::Function& fn);

// In the branch of an `if` whose test proves a variable is not None (`x is not None`, `x != None`, `and`s of them;
// the else branch of `x is None`), the variable is re-bound to its value (`x = $optional_value(x)`): with
// version_variables, an Optional narrowed there is its value type there. Runs before version_variables.
void narrow_optionals(ir::Function& fn);

// numba's SSA form on the tree IR: each assignment of a local variable defines a version of it, and a read sees
// the versions that reach it. Versions that meet where control flow joins (after an if/else, at a loop's head
// and exit, after a `break`) are one variable, typed by unification as numba's phi nodes are; the others are
// variables of their own, each typed by its own assignments (a loop index re-bound to a float after the loop
// stays an integer in the loop). The first version of a name keeps its variable, later ones are new variables
// of the same name (messages name them alike).
void version_variables(ir::Function& fn);

// numba's dead-branch pruning, before typing: an `if` whose condition the argument types decide (`a.ndim == 2`,
// `a.layout == "C"`, `x is None` / `x is not None` on an argument that is None or omitted, comparisons of
// constants, `not`/`and`/`or` of those) keeps only the branch taken, so the other is never typed; a conditional
// expression likewise. Only arguments the function never assigns are read, as numba's pass requires. Runs before
// version_variables (the versions of the branch left out never meet those of the one kept).
void prune_branches(ir::Function& fn, const std::vector<TypeRef>& argtypes);

}  // namespace cujit::passes
