// Optional values narrowed by a test of None (passes.h: narrow_optionals): in the branch where `x is not None`
// (or `x != None`, or an `and` of such tests) holds, x is re-bound to its value, `x = $optional_value(x)`, so that
// version_variables gives that branch a variable of its own, typed as the Optional's value type (a device
// function that returns an index or None, used as an index once tested).
#include "cujit/passes.h"

namespace cujit::passes {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Op;
using ir::StmtKind;
using ir::StmtPtr;
using K = ir::GlobalValue::Kind;

bool is_none(const Expr& e) { return e.kind == ExprKind::Const && e.global.kind == K::None; }

// The variables a condition proves are not None when it holds (`holds`) or when it fails.
void not_none(const Expr& test, bool holds, std::vector<int>& out) {
  if (test.kind == ExprKind::Unary && test.op == Op::Not) return not_none(*test.operands[0], !holds, out);
  if (test.kind == ExprKind::BoolOp && test.op == (holds ? Op::And : Op::Or)) {
    for (const auto& o : test.operands) not_none(*o, holds, out);
    return;
  }
  if (test.kind != ExprKind::Compare || test.ops.size() != 1) return;
  Op op = test.ops[0];
  bool proves = holds ? (op == Op::IsNot || op == Op::NotEq) : (op == Op::Is || op == Op::Eq);
  if (!proves) return;
  const Expr& a = *test.operands[0];
  const Expr& b = *test.operands[1];
  if (a.kind == ExprKind::Var && is_none(b)) out.push_back(a.var);
  if (b.kind == ExprKind::Var && is_none(a)) out.push_back(b.var);
}

StmtPtr unwrap(int var, SourceLoc loc) {
  auto call = std::make_unique<Expr>(ExprKind::Call, loc);
  auto fn = std::make_unique<Expr>(ExprKind::Global, loc);
  fn->global.kind = K::Builtin;
  fn->global.name = fn->global.repr = "$optional_value";
  call->operands.push_back(std::move(fn));
  call->operands.push_back(ir::var_expr(var, loc));
  return ir::assign_stmt(var, std::move(call), loc);
}

void narrow(std::vector<StmtPtr>& block) {
  for (auto& s : block) {
    narrow(s->body);
    narrow(s->orelse);
    if (s->kind != StmtKind::If) continue;
    for (auto [branch, holds] : {std::pair{&s->body, true}, std::pair{&s->orelse, false}}) {
      std::vector<int> vars;
      not_none(*s->value, holds, vars);
      for (int v : vars) branch->insert(branch->begin(), unwrap(v, s->value->loc));
    }
  }
}

}  // namespace

void narrow_optionals(ir::Function& fn) { narrow(fn.body); }

}  // namespace cujit::passes
