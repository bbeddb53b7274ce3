// numba's literal_unroll: `for x in literal_unroll(t)` over a heterogeneous
// tuple runs its body once per element, each copy typed with that element's
// type. The frontend builds the loop as any for-each loop over t, marked; once
// typing knows t's type this pass rewrites the marked loop into
//
//     for $index in range(1):          # `break` leaves it; `else` runs as Python's does
//         x = t[0]; <body, its variables renamed for copy 0>
//         x = t[1]; <body, renamed for copy 1>   ...
//
// A variable used only inside the body (x itself, temporaries, names the body
// assigns) gets a fresh variable per copy, so each copy types it on its own;
// one also used outside the loop stays shared and unifies as usual. When the
// body uses `continue`, each copy is wrapped in a one-trip loop of its own
// (`continue` ends the copy) and a `break` sets a flag that ends the rest.
// Homogeneous containers (UniTuple, arrays) need no versioning: the loop stays
// an ordinary loop, as numba's does.
#include <map>
#include <set>

#include "typing_internal.h"

namespace cujit::typing {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;

void collect_expr_vars(const Expr* e, std::set<int>& out) {
  if (e == nullptr) return;
  if (e->kind == ExprKind::Var) out.insert(e->var);
  for (const auto& o : e->operands) collect_expr_vars(o.get(), out);
  for (const auto& [name, k] : e->keywords) collect_expr_vars(k.get(), out);
}

void collect_vars(const std::vector<StmtPtr>& block, std::set<int>& out, const Stmt* skip) {
  for (const auto& s : block) {
    if (s.get() == skip) continue;
    collect_expr_vars(s->target.get(), out);
    collect_expr_vars(s->value.get(), out);
    for (const auto& a : s->range_args) collect_expr_vars(a.get(), out);
    collect_vars(s->body, out, skip);
    collect_vars(s->orelse, out, skip);
  }
}

// break / continue statements of this loop (not of loops nested in its body).
void find_jumps(const std::vector<StmtPtr>& block, bool& has_break, bool& has_continue) {
  for (const auto& s : block) {
    if (s->kind == StmtKind::Break) has_break = true;
    if (s->kind == StmtKind::Continue) has_continue = true;
    if (s->kind == StmtKind::If) {
      find_jumps(s->body, has_break, has_continue);
      find_jumps(s->orelse, has_break, has_continue);
    }
    if (s->kind == StmtKind::While || s->kind == StmtKind::ForRange) find_jumps(s->orelse, has_break, has_continue);
  }
}

using ir::assign_stmt;
using ir::int_expr;
using ir::var_expr;

// One copy of the body: variables renamed through `rename`, the loop index read as the constant `element`.
class BodyCopier {
 public:
  BodyCopier(std::map<int, int> rename, int index, int64_t element, int break_flag)
      : rename_(std::move(rename)), index_(index), element_(element), break_flag_(break_flag) {}

  ExprPtr copy(const Expr* e) const {
    return ir::copy_expr(e, [this](const Expr& x) -> ExprPtr {
      if (x.kind != ExprKind::Var) return nullptr;
      if (x.var == index_) return int_expr(element_, x.loc);
      auto it = rename_.find(x.var);
      return it != rename_.end() ? var_expr(it->second, x.loc) : nullptr;
    });
  }

  // `depth`: loops nested inside the body so far (their break/continue are theirs).
  std::vector<StmtPtr> copy_block(const std::vector<StmtPtr>& block, int depth) const {
    std::vector<StmtPtr> out;
    for (const auto& s : block) {
      if (s->kind == StmtKind::Break && depth == 0 && break_flag_ >= 0)
        out.push_back(assign_stmt(break_flag_, int_expr(1, s->loc, ir::GlobalValue::Kind::Bool), s->loc));
      out.push_back(copy_stmt(*s, depth));
    }
    return out;
  }

 private:
  StmtPtr copy_stmt(const Stmt& s, int depth) const {
    auto c = std::make_unique<Stmt>(s.kind, s.loc);
    c->target = copy(s.target.get());
    c->value = copy(s.value.get());
    for (const auto& a : s.range_args) c->range_args.push_back(copy(a.get()));
    int inner = depth + (s.kind == StmtKind::While || s.kind == StmtKind::ForRange ? 1 : 0);
    c->body = copy_block(s.body, inner);
    c->orelse = copy_block(s.orelse, depth);  // a loop's else is outside that loop
    c->literal_unroll = s.literal_unroll;
    return c;
  }

  std::map<int, int> rename_;
  int index_;
  int64_t element_;
  int break_flag_;
};

int new_var(ir::Function& fn, const std::string& name) {
  ir::Variable v;
  v.name = name;
  fn.vars.push_back(v);
  return static_cast<int>(fn.vars.size()) - 1;
}

// A one-trip loop `for $v in range(1): body`.
StmtPtr one_trip_loop(ir::Function& fn, std::vector<StmtPtr> body, SourceLoc loc) {
  auto loop = std::make_unique<Stmt>(StmtKind::ForRange, loc);
  loop->target = var_expr(new_var(fn, "$unroll" + std::to_string(fn.vars.size())), loc);
  loop->range_args.push_back(int_expr(1, loc));
  loop->body = std::move(body);
  return loop;
}

// The loop's container variable: its body starts `x = $seq[$index]` (frontend, build_for_each).
int container_var(const Stmt& loop) {
  if (loop.body.empty() || loop.body[0]->kind != StmtKind::Assign) return -1;
  const Expr& item = *loop.body[0]->value;
  if (item.kind != ExprKind::Subscript || item.operands[0]->kind != ExprKind::Var) return -1;
  return item.operands[0]->var;
}

void version_body(Stmt& loop, ir::Function& fn, size_t count) {
  const int index = loop.target->var;
  std::set<int> inside, outside;
  collect_vars(loop.body, inside, nullptr);
  collect_vars(fn.body, outside, &loop);
  collect_vars(loop.orelse, outside, nullptr);
  bool has_break = false, has_continue = false;
  find_jumps(loop.body, has_break, has_continue);
  int break_flag = has_break && has_continue ? new_var(fn, "$unroll_break" + std::to_string(fn.vars.size())) : -1;

  std::vector<StmtPtr> body;
  if (break_flag >= 0)
    body.push_back(assign_stmt(break_flag, int_expr(0, loop.loc, ir::GlobalValue::Kind::Bool), loop.loc));
  for (size_t k = 0; k < count; ++k) {
    std::map<int, int> rename;
    for (int v : inside)
      if (v != index && !outside.count(v) && !fn.vars[v].is_param) rename[v] = new_var(fn, fn.vars[v].name);
    BodyCopier copier(std::move(rename), index, static_cast<int64_t>(k), break_flag);
    std::vector<StmtPtr> copy = copier.copy_block(loop.body, 0);
    if (!has_continue) {
      for (auto& s : copy) body.push_back(std::move(s));
      continue;
    }
    body.push_back(one_trip_loop(fn, std::move(copy), loop.loc));
    if (break_flag >= 0) {  // if $break: break
      auto check = std::make_unique<Stmt>(StmtKind::If, loop.loc);
      check->value = var_expr(break_flag, loop.loc);
      check->body.push_back(std::make_unique<Stmt>(StmtKind::Break, loop.loc));
      body.push_back(std::move(check));
    }
  }
  loop.body = std::move(body);
  loop.range_args.clear();
  loop.range_args.push_back(int_expr(1, loop.loc));
}

}  // namespace

bool expand_literal_unroll(ir::Stmt& loop, ir::Function& fn, bool final_pass) {
  int seq = container_var(loop);
  if (seq < 0) fail(ErrorKind::Internal, "literal_unroll loop without its item assignment", loop.loc);
  TypeRef t = fn.vars[seq].type;
  if (t == nullptr) {
    if (final_pass) fail(ErrorKind::TypingError, "cannot determine the type of literal_unroll()'s argument", loop.loc);
    return false;
  }
  loop.literal_unroll = false;
  if (t->kind() != TypeKind::Tuple) return true;  // homogeneous: an ordinary loop, as in numba
  version_body(loop, fn, t->count());
  return true;
}

}  // namespace cujit::typing
