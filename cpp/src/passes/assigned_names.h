// Internal to the passes: the variables assignments name (prune_branches.cpp, version_variables.cpp).
#pragma once

#include <vector>

#include "cujit/ir.h"

namespace cujit::passes {

// The variables an assignment target names (a variable, or a tuple of targets; subscripts and attributes none).
inline void target_names(const ir::Expr& target, std::vector<int>& out) {
  if (target.kind == ir::ExprKind::Var && target.var >= 0) out.push_back(target.var);
  if (target.kind == ir::ExprKind::Tuple)
    for (const auto& t : target.operands) target_names(*t, out);
}

// The variables a block assigns, at any depth (its loops' indices too), in order, with repeats.
inline void assigned_names(const std::vector<ir::StmtPtr>& block, std::vector<int>& out) {
  for (const auto& s : block) {
    if ((s->kind == ir::StmtKind::Assign || s->kind == ir::StmtKind::ForRange) && s->target)
      target_names(*s->target, out);
    assigned_names(s->body, out);
    assigned_names(s->orelse, out);
  }
}

}  // namespace cujit::passes
