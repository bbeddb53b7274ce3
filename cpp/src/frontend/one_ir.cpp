// One IR for the statement spellings CPython compiles to the same bytecode (one_ir.h): numba-cuda reads the
// bytecode, and cujit's two readers must give the same PTX for the same function.
#include "one_ir.h"

#include <optional>

#include "fold_constants.h"

namespace cujit::frontend {

using ir::StmtKind;
using ir::StmtPtr;

bool ends_control(const ir::Stmt& s) {
  return s.kind == StmtKind::Return || s.kind == StmtKind::Raise || s.kind == StmtKind::Break ||
         s.kind == StmtKind::Continue;
}

namespace {

bool leaves(const std::vector<StmtPtr>& body, StmtKind kind) {
  for (const StmtPtr& s : body) {
    if (s->kind == kind) return true;
    if (s->kind == StmtKind::If && (leaves(s->body, kind) || leaves(s->orelse, kind))) return true;
    // a nested loop's breaks and continues are its own; its else clause runs in this loop
    if ((s->kind == StmtKind::While || s->kind == StmtKind::ForRange) && leaves(s->orelse, kind)) return true;
  }
  return false;
}

}  // namespace

bool breaks(const std::vector<StmtPtr>& body) { return leaves(body, StmtKind::Break); }
bool continues(const std::vector<StmtPtr>& body) { return leaves(body, StmtKind::Continue); }

void push_if(StmtPtr s, std::vector<StmtPtr>& out) {
  std::vector<StmtPtr> rest;
  if (!s->body.empty() && ends_control(*s->body.back())) {
    rest = std::move(s->orelse);
    s->orelse.clear();
  }
  out.push_back(std::move(s));
  for (StmtPtr& r : rest) out.push_back(std::move(r));
}

void push_loop(StmtPtr loop, std::vector<StmtPtr>& out) {
  if (loop->kind == StmtKind::While && !loop->body.empty() && loop->body.back()->kind == StmtKind::Break) {
    StmtPtr last = std::move(loop->body.back());
    loop->body.pop_back();
    if (!breaks(loop->body) && !continues(loop->body)) {  // `while c: ...; break` has no loop in its bytecode
      if (constant_truth(*loop->value) == true) {
        for (StmtPtr& s : loop->body) out.push_back(std::move(s));
        return;
      }
      loop->kind = StmtKind::If;
      push_if(std::move(loop), out);
      return;
    }
    loop->body.push_back(std::move(last));
  }
  std::vector<StmtPtr> rest;
  if (!breaks(loop->body)) {
    rest = std::move(loop->orelse);
    loop->orelse.clear();
  }
  out.push_back(std::move(loop));
  for (StmtPtr& r : rest) out.push_back(std::move(r));
}

namespace {

bool reads_only(const ir::Expr& e) {
  using ir::ExprKind;
  if (e.kind == ExprKind::Const || e.kind == ExprKind::Var || e.kind == ExprKind::Global) return true;
  if (e.kind != ExprKind::BoolOp && !(e.kind == ExprKind::Unary && e.op == ir::Op::Not)) return false;
  for (const ir::ExprPtr& o : e.operands) {
    if (!reads_only(*o)) return false;
  }
  return true;
}

}  // namespace

bool pure_decided(const ir::Expr& cond) {
  if (cond.kind != ir::ExprKind::BoolOp || cond.operands.size() < 2) return false;
  const ir::Expr& last = *cond.operands.back();
  if (last.kind != ir::ExprKind::Const || last.global.kind != ir::GlobalValue::Kind::Bool) return false;
  if ((last.global.int_value != 0) != (cond.op == ir::Op::Or)) return false;
  return reads_only(cond);
}

}  // namespace cujit::frontend
