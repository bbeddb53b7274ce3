// numba's SSA form on cujit's tree IR (passes.h: version_variables).
//
// One walk in program order keeps, for each name, the version that reaches the current point (its environment).
// An assignment defines a new version; a read is rewritten to the version reaching it. Where paths that reach with
// different versions join, a phi version stands for them: after an if/else, at a loop's head (the version on
// entry, at the end of the body and at each `continue`), at a loop's exit (its head and each `break`). A path that
// cannot reach the join (it returned, raised, broke out or continued) adds nothing. A phi that is read (directly,
// or through another phi that is) makes its versions one variable (a union-find over variables), typed by
// unification as numba's phi nodes are; a phi no read reaches joins nothing, so a name re-bound to another type
// in a later loop, or after the loop, is a variable of its own there. A name read where no version reaches it
// keeps its first variable: typing reports it used before assignment.
#include <algorithm>

#include "assigned_names.h"
#include "cujit/passes.h"

namespace cujit::passes {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;

// name (a variable of the frontend's) -> the version reaching a point, -1 where none does.
using Env = std::vector<int>;

class Versioner {
 public:
  explicit Versioner(ir::Function& fn) : fn_(fn), names_(fn.vars.size()) {
    parent_.resize(names_);
    for (size_t v = 0; v < names_; ++v) parent_[v] = static_cast<int>(v);
    phi_operands_.resize(names_);
    defined_.assign(names_, false);
    live_.assign(names_, false);
  }

  void run() {
    Env env(names_, -1);
    for (int p : fn_.params) {
      env[p] = p;
      defined_[p] = true;
    }
    block(fn_.body, env);
    join_live_phis();
    resolve_block(fn_.body);
  }

 private:
  struct Loop {
    std::vector<std::pair<int, int>> heads;  // (name, the phi at the loop's head), for the names it assigns
    std::vector<Env> breaks;
  };

  int new_variable(int name) {
    ir::Variable v;
    v.name = fn_.vars[name].name;
    fn_.vars.push_back(std::move(v));
    parent_.push_back(static_cast<int>(parent_.size()));
    phi_operands_.emplace_back();
    live_.push_back(false);
    return static_cast<int>(parent_.size()) - 1;
  }

  // A new version of `name` by assignment: its own variable the first time, a new variable of the same name after.
  int new_version(int name) {
    if (!defined_[name]) {
      defined_[name] = true;
      return name;
    }
    return new_variable(name);
  }

  int new_phi(int name, std::vector<int> operands) {
    int v = new_variable(name);
    phi_operands_[v] = std::move(operands);
    return v;
  }

  int find(int v) {
    while (parent_[v] != v) {
      parent_[v] = parent_[parent_[v]];
      v = parent_[v];
    }
    return v;
  }

  // One variable for two versions that meet: a parameter's stays (its value on entry lives there), else the
  // first made.
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    bool a_first = fn_.vars[a].is_param || (!fn_.vars[b].is_param && a < b);
    if (a_first)
      parent_[b] = a;
    else
      parent_[a] = b;
  }

  // The phis a read reaches join their versions, transitively; the others join nothing.
  void join_live_phis() {
    std::vector<int> work;
    for (size_t v = 0; v < live_.size(); ++v)
      if (live_[v]) work.push_back(static_cast<int>(v));
    while (!work.empty()) {
      int v = work.back();
      work.pop_back();
      for (int operand : phi_operands_[v]) {
        unite(v, operand);
        if (!live_[operand]) {
          live_[operand] = true;
          work.push_back(operand);
        }
      }
    }
  }

  // The environment where `other` joins `into`: a phi for each name that reaches with two versions.
  void join(Env& into, const Env& other) {
    for (size_t n = 0; n < names_; ++n) {
      if (other[n] < 0 || into[n] == other[n]) continue;
      if (into[n] < 0)
        into[n] = other[n];
      else
        into[n] = new_phi(static_cast<int>(n), {into[n], other[n]});
    }
  }

  void read(Expr* e, const Env& env) {
    if (e == nullptr) return;
    if (e->kind == ExprKind::Var && e->var >= 0 && static_cast<size_t>(e->var) < names_) {
      if (env[e->var] >= 0) e->var = env[e->var];
      live_[e->var] = true;
    }
    for (auto& o : e->operands) read(o.get(), env);
    for (auto& [name, k] : e->keywords) read(k.get(), env);
  }
  void assign(Expr& target, Env& env) {
    if (target.kind == ExprKind::Var) {
      int v = new_version(target.var);
      env[target.var] = v;
      target.var = v;
    } else if (target.kind == ExprKind::Tuple) {
      for (auto& t : target.operands) assign(*t, env);
    } else {
      read(&target, env);  // a subscript or attribute target reads its base and index
    }
  }

  void block(std::vector<StmtPtr>& stmts, Env& env) {
    for (auto& s : stmts) stmt(*s, env);
  }

  void stmt(Stmt& s, Env& env) {
    switch (s.kind) {
      case StmtKind::Assign:
        read(s.value.get(), env);
        assign(*s.target, env);
        break;
      case StmtKind::ExprStmt:
        read(s.value.get(), env);
        break;
      case StmtKind::Return:
      case StmtKind::Raise:
        read(s.value.get(), env);
        reachable_ = false;
        break;
      case StmtKind::If: {
        read(s.value.get(), env);
        bool before = reachable_;
        Env taken = env;
        block(s.body, taken);
        bool body_reaches = reachable_;
        reachable_ = before;
        block(s.orelse, env);
        bool orelse_reaches = reachable_;
        if (body_reaches && !orelse_reaches)
          env = std::move(taken);
        else if (body_reaches || !orelse_reaches)
          join(env, taken);
        reachable_ = body_reaches || orelse_reaches;
        break;
      }
      case StmtKind::While:
      case StmtKind::ForRange:
        loop(s, env);
        break;
      case StmtKind::Break:
        if (!loops_.empty()) loops_.back()->breaks.push_back(env);
        reachable_ = false;
        break;
      case StmtKind::Continue:
        if (!loops_.empty()) to_head(*loops_.back(), env);
        reachable_ = false;
        break;
      case StmtKind::Pass:
        break;
    }
  }

  void to_head(const Loop& loop, const Env& env) {
    for (auto [name, head] : loop.heads)
      if (env[name] >= 0 && env[name] != head) phi_operands_[head].push_back(env[name]);
  }

  void loop(Stmt& s, Env& env) {
    for (auto& a : s.range_args) read(a.get(), env);  // a for loop's range is evaluated once, before it
    Loop here;
    std::vector<int> assigned;
    if (s.kind == StmtKind::ForRange) target_names(*s.target, assigned);
    assigned_names(s.body, assigned);
    std::sort(assigned.begin(), assigned.end());
    assigned.erase(std::unique(assigned.begin(), assigned.end()), assigned.end());
    for (int name : assigned) {
      std::vector<int> entry;
      if (env[name] >= 0) entry.push_back(env[name]);
      env[name] = new_phi(name, std::move(entry));
      here.heads.emplace_back(name, env[name]);
    }
    bool before = reachable_;
    if (s.kind == StmtKind::While) read(s.value.get(), env);  // the test runs at the head
    Env body = env;
    if (s.kind == StmtKind::ForRange) assign(*s.target, body);
    loops_.push_back(&here);
    block(s.body, body);
    loops_.pop_back();
    if (reachable_) to_head(here, body);
    reachable_ = before;
    block(s.orelse, env);  // `else` runs when the loop ends at its head
    for (const Env& b : here.breaks) join(env, b);
    reachable_ = before;
  }

  void resolve(Expr* e) {
    if (e == nullptr) return;
    if (e->kind == ExprKind::Var && e->var >= 0) e->var = find(e->var);
    for (auto& o : e->operands) resolve(o.get());
    for (auto& [name, k] : e->keywords) resolve(k.get());
  }

  void resolve_block(std::vector<StmtPtr>& stmts) {
    for (auto& s : stmts) {
      resolve(s->target.get());
      resolve(s->value.get());
      for (auto& a : s->range_args) resolve(a.get());
      resolve_block(s->body);
      resolve_block(s->orelse);
    }
  }

  ir::Function& fn_;
  const size_t names_;  // the frontend's variables: one per name
  std::vector<int> parent_;  // union-find over variables (names and the versions made here)
  std::vector<std::vector<int>> phi_operands_;  // per variable: a phi's versions (empty for any other)
  std::vector<bool> defined_;  // per name: its first variable holds a version
  std::vector<bool> live_;  // per variable: read, or a version of a phi that is
  std::vector<Loop*> loops_;
  bool reachable_ = true;
};

}  // namespace

void version_variables(ir::Function& fn) { Versioner(fn).run(); }

}  // namespace cujit::passes
