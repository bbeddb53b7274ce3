// Which integer expressions are known to be non-negative (thread indices,
// cuda.grid, range loop variables counting up from a non-negative start,
// sizes, and sums and products of those). Array indices that are need no
// Python-style wrap-around: less IR for LLVM to clean up, the same code.
#include "non_negative_indices.h"

namespace cujit::lowering {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Op;
using ir::Stmt;
using ir::StmtKind;
using K = ir::GlobalValue::Kind;

bool is_builtin(const Expr& e, const std::string& prefix) {
  return e.kind == ExprKind::Global && e.global.kind == K::Builtin && e.global.name.rfind(prefix, 0) == 0;
}

bool is_grid_call(const Expr& e) {
  return e.kind == ExprKind::Call &&
         (is_builtin(*e.operands[0], "cuda.grid") || is_builtin(*e.operands[0], "cuda.gridsize"));
}

}  // namespace

bool NonNegative::expr(const Expr& e) const {
  if (e.type != nullptr && e.type->is_integer() && !e.type->is_signed() && e.type->kind() == TypeKind::Integer)
    return true;
  switch (e.kind) {
    case ExprKind::Const:
      return (e.global.kind == K::Int && (e.global.int_value >= 0 || e.global.is_unsigned)) || e.global.kind == K::Bool;
    case ExprKind::Var:
      return vars_[e.var];
    case ExprKind::Global:
      return is_builtin(e, "cuda.threadIdx.") || is_builtin(e, "cuda.blockIdx.") || is_builtin(e, "cuda.blockDim.") ||
             is_builtin(e, "cuda.gridDim.") || is_builtin(e, "cuda.laneid") || is_builtin(e, "cuda.warpsize");
    case ExprKind::Call:
      return is_grid_call(e) || is_builtin(*e.operands[0], "len");
    case ExprKind::Attribute:
      return e.attr == "size" || e.attr == "itemsize" || e.attr == "nbytes" || e.attr == "ndim";
    case ExprKind::Subscript:  // a.shape[k]
      return e.operands[0]->kind == ExprKind::Attribute && e.operands[0]->attr == "shape";
    case ExprKind::Binary: {
      bool a = expr(*e.operands[0]), b = expr(*e.operands[1]);
      switch (e.op) {
        case Op::Add:
        case Op::Mul:
        case Op::FloorDiv:
        case Op::Mod:
        case Op::RShift:
        case Op::BitOr:
          return a && b;
        case Op::BitAnd:
          return a || b;
        default:
          return false;
      }
    }
    case ExprKind::IfExp:
      return expr(*e.operands[1]) && expr(*e.operands[2]);
    case ExprKind::Unary:
      return e.op == Op::UAdd && expr(*e.operands[0]);
    default:
      return false;
  }
}

NonNegative::NonNegative(const ir::Function& fn) : fn_(fn), vars_(fn.vars.size(), true) {
  // Parameters of signed types may be negative; everything else starts optimistic
  // and loses the property at the first assignment that may be negative.
  for (int p : fn.params) vars_[p] = false;
  bool changed = true;
  while (changed) {
    changed = false;
    visit(fn.body, changed);
  }
}

void NonNegative::clear(int var, bool& changed) {
  if (vars_[var]) {
    vars_[var] = false;
    changed = true;
  }
}

void NonNegative::assign(const Expr& target, const Expr* value, bool known, bool& changed) {
  if (target.kind == ExprKind::Var) {
    if (!known && !(value != nullptr && expr(*value))) clear(target.var, changed);
    return;
  }
  if (target.kind == ExprKind::Tuple) {
    bool grid = value != nullptr && is_grid_call(*value);
    for (size_t i = 0; i < target.operands.size(); ++i) {
      const Expr* item = value != nullptr && value->kind == ExprKind::Tuple ? value->operands[i].get() : nullptr;
      assign(*target.operands[i], item, grid, changed);
    }
  }
}

void NonNegative::visit(const std::vector<ir::StmtPtr>& block, bool& changed) {
  for (const auto& s : block) {
    switch (s->kind) {
      case StmtKind::Assign:
        assign(*s->target, s->value.get(), false, changed);
        break;
      case StmtKind::ForRange: {
        const auto& a = s->range_args;
        bool start_ok = a.size() == 1 || expr(*a[0]);
        bool step_up = a.size() < 3 ||
                       (a[2]->kind == ExprKind::Const && a[2]->global.kind == K::Int && a[2]->global.int_value > 0);
        if (!(start_ok && step_up)) clear(s->target->var, changed);
        visit(s->body, changed);
        break;
      }
      case StmtKind::If:
      case StmtKind::While:
        visit(s->body, changed);
        visit(s->orelse, changed);
        break;
      default:
        break;
    }
  }
}

}  // namespace cujit::lowering
