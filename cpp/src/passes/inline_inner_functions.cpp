// Inner functions inlined where they are called (passes.h: inline_inner_functions), as numba inlines closures.
//
// A call `f(args)` of an inner function, in a statement, becomes, before the statement:
//
//     p1 = arg1; p2 = arg2 ...             # its parameters: new variables, as are its other locals
//     $done = False                        # (only when it returns from inside one of its loops)
//     for $once in range(1):
//         <its body: `return v` is `$ret = v` (`$done = True`) `break`; a loop holding such a return is
//          followed by `if $done: break`>
//
// and the call is `$ret` (None for a function that returns no value). A variable it captured is the enclosing
// function's variable itself, so it reads the value the variable has at the call and its `nonlocal` stores are the
// enclosing function's. An inner function's own inner functions are inlined into it first. A call in a `while`
// test, or in an operand Python may not evaluate (after the first of `and`/`or`, a branch of `x if c else y`),
// is refused: the code it stands for would run where the call may not.
#include <map>
#include <memory>
#include <set>

#include "cujit/passes.h"

namespace cujit::passes {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;
using K = ir::GlobalValue::Kind;

std::shared_ptr<ir::Function> inner_of(const Expr& callee) {
  if (callee.kind != ExprKind::Global || callee.global.kind != K::InnerFunction) return nullptr;
  return std::static_pointer_cast<ir::Function>(callee.global.function);
}

using ir::assign_stmt;
using ir::int_expr;
using ir::var_expr;

bool has_value_return(const std::vector<StmtPtr>& block) {
  for (const auto& s : block)
    if ((s->kind == StmtKind::Return && s->value) || has_value_return(s->body) || has_value_return(s->orelse))
      return true;
  return false;
}

// A return inside a loop of the block (at any depth).
bool returns_in_loop(const std::vector<StmtPtr>& block, bool in_loop) {
  for (const auto& s : block) {
    bool loop = in_loop || s->kind == StmtKind::While || s->kind == StmtKind::ForRange;
    if ((s->kind == StmtKind::Return && in_loop) || returns_in_loop(s->body, loop) ||
        returns_in_loop(s->orelse, in_loop))
      return true;
  }
  return false;
}

bool has_return(const std::vector<StmtPtr>& block) {
  for (const auto& s : block)
    if (s->kind == StmtKind::Return || has_return(s->body) || has_return(s->orelse)) return true;
  return false;
}

// A copy of an inner function's body for one call: its variables renamed, its returns rewritten.
class BodyCopy {
 public:
  BodyCopy(std::map<int, int> rename, int ret, int done) : rename_(std::move(rename)), ret_(ret), done_(done) {}

  ExprPtr expr(const Expr* e) const {
    return ir::copy_expr(
        e, [this](const Expr& x) { return x.kind == ExprKind::Var ? var_expr(rename_.at(x.var), x.loc) : nullptr; });
  }

  std::vector<StmtPtr> block(const std::vector<StmtPtr>& stmts, int loops) const {
    std::vector<StmtPtr> out;
    for (const auto& s : stmts) {
      if (s->kind == StmtKind::Return) {
        if (s->value && ret_ >= 0) out.push_back(assign_stmt(ret_, expr(s->value.get()), s->loc));
        if (loops > 0) out.push_back(assign_stmt(done_, int_expr(1, s->loc, K::Bool), s->loc));
        out.push_back(std::make_unique<Stmt>(StmtKind::Break, s->loc));
        break;  // (what follows a return never runs)
      }
      bool loop = s->kind == StmtKind::While || s->kind == StmtKind::ForRange;
      auto c = std::make_unique<Stmt>(s->kind, s->loc);
      c->target = expr(s->target.get());
      c->value = expr(s->value.get());
      for (const auto& a : s->range_args) c->range_args.push_back(expr(a.get()));
      c->body = block(s->body, loops + (loop ? 1 : 0));
      c->orelse = block(s->orelse, loops);
      c->literal_unroll = s->literal_unroll;
      out.push_back(std::move(c));
      if (loop && has_return(s->body)) {  // a return inside it ends the enclosing loop too
        auto check = std::make_unique<Stmt>(StmtKind::If, s->loc);
        check->value = var_expr(done_, s->loc);
        check->body.push_back(std::make_unique<Stmt>(StmtKind::Break, s->loc));
        out.push_back(std::move(check));
      }
    }
    return out;
  }

 private:
  std::map<int, int> rename_;
  int ret_, done_;
};

// The inner functions being inlined (a call back into one is recursion) and those whose own inner functions are
// inlined already: shared by the inliners of a function and of its inner functions.
struct InlineState {
  std::set<const ir::Function*> active;
  std::set<const ir::Function*> prepared;
};

class Inliner {
 public:
  Inliner(ir::Function& fn, InlineState& state) : fn_(fn), state_(state) {}

  void run() { block(fn_.body); }

 private:
  [[noreturn]] void refuse(const std::string& what, const SourceLoc& loc) {
    fail(ErrorKind::Unsupported, "Unsupported: " + what + " cannot be compiled for CUDA", loc);
  }

  int new_var(const std::string& name) {
    fn_.vars.push_back(ir::Variable{name, nullptr, false});
    return static_cast<int>(fn_.vars.size()) - 1;
  }

  void block(std::vector<StmtPtr>& stmts) {
    std::vector<StmtPtr> out;
    for (auto& s : stmts) {
      std::vector<StmtPtr> before;
      if (s->kind == StmtKind::While) {
        if (s->value) refuse_in(*s->value, "a call of an inner function in a while loop's test");
      } else {
        hoist(s->value, before);
      }
      hoist(s->target, before);
      for (auto& a : s->range_args) hoist(a, before);
      block(s->body);
      block(s->orelse);
      for (auto& b : before) out.push_back(std::move(b));
      out.push_back(std::move(s));
    }
    stmts = std::move(out);
  }

  void refuse_in(const Expr& e, const std::string& what) {
    if (e.kind == ExprKind::Call && inner_of(*e.operands[0]) && inner_of(*e.operands[0])->enclosing == &fn_)
      refuse(what, e.loc);
    for (const auto& o : e.operands)
      if (o) refuse_in(*o, what);
    for (const auto& [name, k] : e.keywords) refuse_in(*k, what);
  }

  // Inlines the calls of inner functions in `e` (arguments first), the code they stand for appended to `before`.
  void hoist(ExprPtr& e, std::vector<StmtPtr>& before) {
    if (!e) return;
    for (size_t i = 0; i < e->operands.size(); ++i) {
      bool conditional = (e->kind == ExprKind::BoolOp && i > 0) || (e->kind == ExprKind::IfExp && i > 0);
      if (conditional && e->operands[i])
        refuse_in(*e->operands[i],
                  "a call of an inner function that Python may not evaluate (after and/or, in "
                  "a branch of a conditional expression)");
      else
        hoist(e->operands[i], before);
    }
    for (auto& [name, k] : e->keywords) hoist(k, before);
    if (e->kind != ExprKind::Call) return;
    // Only a function defined in this one: its captured variables are this one's (a call of one defined further
    // out is inlined once the code holding it is in the function that defines it).
    if (auto inner = inner_of(*e->operands[0]); inner && inner->enclosing == &fn_) e = inline_call(*e, *inner, before);
  }

  // The call's arguments by parameter: positional, keyword, then the defaults.
  std::vector<ExprPtr> bind(Expr& call, const ir::Function& inner) {
    size_t count = inner.params.size();
    std::vector<ExprPtr> args(count);
    if (call.operands.size() - 1 > count)
      fail(ErrorKind::TypingError,
           inner.name + "() takes " + std::to_string(count) + " positional arguments but " +
               std::to_string(call.operands.size() - 1) + " were given",
           call.loc);
    for (size_t i = 1; i < call.operands.size(); ++i) args[i - 1] = std::move(call.operands[i]);
    for (auto& [key, value] : call.keywords) {
      size_t i = 0;
      while (i < count && inner.vars[inner.params[i]].name != key) ++i;
      if (i == count)
        fail(ErrorKind::TypingError, inner.name + "() got an unexpected keyword argument '" + key + "'", value->loc);
      if (args[i])
        fail(ErrorKind::TypingError, inner.name + "() got multiple values for argument '" + key + "'", value->loc);
      args[i] = std::move(value);
    }
    for (size_t i = 0; i < count; ++i) {  // (a default is an expression of this function: copied as it is)
      if (args[i]) continue;
      const Expr* d = i < inner.param_defaults.size() ? inner.param_defaults[i].get() : nullptr;
      if (d == nullptr)
        fail(ErrorKind::TypingError,
             inner.name + "() missing required argument '" + inner.vars[inner.params[i]].name + "'", call.loc);
      args[i] = ir::copy_expr(d);
    }
    return args;
  }

  ExprPtr inline_call(Expr& call, ir::Function& inner, std::vector<StmtPtr>& before) {
    if (state_.active.count(&inner)) refuse("a recursive inner function ('" + inner.name + "' calls itself)", call.loc);
    state_.active.insert(&inner);
    if (!state_.prepared.count(&inner)) {  // its own inner functions first, once
      state_.prepared.insert(&inner);
      Inliner(inner, state_).run();
    }
    std::vector<ExprPtr> args = bind(call, inner);
    std::map<int, int> rename;
    for (size_t v = 0; v < inner.vars.size(); ++v)
      rename[static_cast<int>(v)] = inner.vars[v].captured >= 0 ? inner.vars[v].captured : new_var(inner.vars[v].name);
    SourceLoc loc = call.loc;
    for (size_t i = 0; i < args.size(); ++i)
      before.push_back(assign_stmt(rename.at(inner.params[i]), std::move(args[i]), loc));
    int ret = has_value_return(inner.body) ? new_var("$" + inner.name + "_result") : -1;
    int done = -1;
    if (returns_in_loop(inner.body, false)) {
      done = new_var("$" + inner.name + "_returned");
      before.push_back(assign_stmt(done, int_expr(0, loc, K::Bool), loc));
    }
    auto once = std::make_unique<Stmt>(StmtKind::ForRange, loc);
    once->target = var_expr(new_var("$" + inner.name + "_once"), loc);
    once->range_args.push_back(int_expr(1, loc));
    once->body = BodyCopy(std::move(rename), ret, done).block(inner.body, 0);
    std::vector<StmtPtr> inlined;
    inlined.push_back(std::move(once));
    block(inlined);  // calls of the enclosing function's other inner functions in it
    state_.active.erase(&inner);
    for (auto& s : inlined) before.push_back(std::move(s));
    if (ret >= 0) return var_expr(ret, loc);
    auto none = std::make_unique<Expr>(ExprKind::Const, loc);
    none->global.kind = K::None;
    return none;
  }

  ir::Function& fn_;
  InlineState& state_;
};

}  // namespace

void inline_inner_functions(ir::Function& fn) {
  InlineState state;
  Inliner(fn, state).run();
}

}  // namespace cujit::passes
