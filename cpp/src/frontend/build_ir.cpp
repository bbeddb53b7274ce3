// Python AST (as SyntaxNode trees) -> cujit IR. Scoping follows Python: a name
// assigned anywhere in the function is local; every other name is resolved
// once, here, through the NameResolver and frozen into the IR.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <variant>

#include "cujit/frontend.h"
#include "fold_constants.h"
#include "one_ir.h"

namespace cujit::frontend {

const SyntaxField* SyntaxNode::field(const std::string& name) const {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

SyntaxNodePtr SyntaxNode::node(const std::string& name) const {
  const SyntaxField* f = field(name);
  if (f == nullptr) return nullptr;
  if (auto* n = std::get_if<SyntaxNodePtr>(f)) return *n;
  return nullptr;
}

const std::vector<SyntaxNodePtr>& SyntaxNode::list(const std::string& name) const {
  static const std::vector<SyntaxNodePtr> empty;
  const SyntaxField* f = field(name);
  if (f == nullptr) return empty;
  if (auto* l = std::get_if<std::vector<SyntaxNodePtr>>(f)) return *l;
  return empty;
}

std::string SyntaxNode::str(const std::string& name) const {
  const SyntaxField* f = field(name);
  if (f == nullptr) return "";
  if (auto* s = std::get_if<std::string>(f)) return *s;
  return "";
}

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Op;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;
using ir::var_expr;

const std::unordered_map<std::string, Op>& operator_table() {
  static const std::unordered_map<std::string, Op> table = {
      {"Add", Op::Add},
      {"Sub", Op::Sub},
      {"Mult", Op::Mul},
      {"Div", Op::Div},
      {"FloorDiv", Op::FloorDiv},
      {"Mod", Op::Mod},
      {"Pow", Op::Pow},
      {"LShift", Op::LShift},
      {"RShift", Op::RShift},
      {"BitOr", Op::BitOr},
      {"BitXor", Op::BitXor},
      {"BitAnd", Op::BitAnd},
      {"UAdd", Op::UAdd},
      {"USub", Op::USub},
      {"Invert", Op::Invert},
      {"Not", Op::Not},
      {"Eq", Op::Eq},
      {"NotEq", Op::NotEq},
      {"Lt", Op::Lt},
      {"LtE", Op::LtE},
      {"Gt", Op::Gt},
      {"GtE", Op::GtE},
      {"And", Op::And},
      {"Or", Op::Or},
      {"In", Op::In},
      {"NotIn", Op::NotIn},
      {"Is", Op::Is},
      {"IsNot", Op::IsNot},
  };
  return table;
}

// What users see for constructs we do not compile.
std::string describe_unsupported(const std::string& type) {
  static const std::unordered_map<std::string, std::string> names = {
      {"Try", "try statements"},
      {"TryStar", "try statements"},
      {"With", "with statements"},
      {"AsyncWith", "async with statements"},
      {"Raise", "re-raising (a bare raise)"},
      {"AsyncFunctionDef", "nested async function definitions"},
      {"ClassDef", "class definitions"},
      {"Lambda", "lambda expressions used other than bound to a name"},
      {"Import", "import statements"},
      {"ImportFrom", "import statements"},
      {"Global", "global statements"},
      {"Nonlocal", "nonlocal statements outside an inner function"},
      {"Delete", "del statements"},
      {"Yield", "generators (yield)"},
      {"YieldFrom", "generators (yield from)"},
      {"Await", "await expressions"},
      {"List", "lists"},
      {"Dict", "dicts"},
      {"Set", "sets"},
      {"ListComp", "list comprehensions"},
      {"SetComp", "set comprehensions"},
      {"DictComp", "dict comprehensions"},
      {"GeneratorExp", "generator expressions"},
      {"JoinedStr", "f-strings"},
      {"FormattedValue", "f-strings"},
      {"NamedExpr", "assignment expressions (:=)"},
      {"Starred", "starred expressions"},
      {"Match", "match statements"},
      {"AsyncFor", "async for loops"},
  };
  auto it = names.find(type);
  return it != names.end() ? it->second : "the Python construct '" + type + "'";
}

class IrBuilder {
 public:
  // `parent`: the builder of the function an inner function is defined in (names it does not bind are looked up
  // there first: passes::inline_inner_functions inlines its calls).
  IrBuilder(const FunctionSource& src, NameResolver& resolver, IrBuilder* parent = nullptr)
      : src_(src), resolver_(resolver), parent_(parent) {}

  std::shared_ptr<ir::Function> build() {
    fn_ = std::make_shared<ir::Function>();
    fn_->name = src_.name;
    fn_->qualname = src_.qualname;
    fn_->module = src_.module;
    fn_->filename = src_.filename;
    fn_->source_lines = src_.source_lines;
    fn_->first_line = src_.first_line;
    fn_->excerpt = src_.excerpt;
    const SyntaxNode& def = *src_.def;
    if (def.type != "FunctionDef") unsupported(def, describe_unsupported(def.type) + " as a kernel or device function");
    build_params(def);
    for (auto& s : def.list("body")) collect_locals(*s);
    fn_->body = build_block(def.list("body"));
    return fn_;
  }

  // An inner function (a def in the function, or a lambda bound to a name): its own IR, whose variables for
  // names of the enclosing functions are captured (ir::Variable::captured), and its defaults built in the
  // enclosing function.
  void build_inner(const SyntaxNode& def, const std::string& name, std::shared_ptr<ir::Function> fn) {
    fn_ = std::move(fn);
    fn_->enclosing = parent_->fn_.get();
    fn_->name = name;
    fn_->qualname = parent_->fn_->qualname + ".<locals>." + name;
    fn_->module = src_.module;
    fn_->filename = src_.filename;
    fn_->source_lines = src_.source_lines;
    fn_->first_line = src_.first_line;
    fn_->excerpt = src_.excerpt;
    build_params(def);
    if (SyntaxNodePtr args = def.node("args")) {
      const auto& defaults = args->list("defaults");
      fn_->param_defaults.resize(fn_->params.size());
      size_t first = fn_->params.size() - std::min(defaults.size(), fn_->params.size());
      for (size_t i = 0; i < defaults.size() && first + i < fn_->params.size(); ++i)
        fn_->param_defaults[first + i] = parent_->build_expr(*defaults[i]);
    }
    if (def.type == "Lambda") {
      auto ret = stmt(StmtKind::Return, def);
      ret->value = build_expr(*def.node("body"));
      fn_->body.push_back(std::move(ret));
      return;
    }
    for (auto& s : def.list("body")) collect_nonlocals(*s);
    for (auto& s : def.list("body")) collect_locals(*s);
    fn_->body = build_block(def.list("body"));
  }

 private:
  [[noreturn]] void unsupported(const SyntaxNode& n, const std::string& what) {
    fail(ErrorKind::Unsupported, "Unsupported: " + what + " cannot be compiled for CUDA", n.loc);
  }

  void build_params(const SyntaxNode& def) {
    SyntaxNodePtr args = def.node("args");
    if (!args) return;
    if (args->node("vararg")) unsupported(*args->node("vararg"), "*args parameters");
    if (args->node("kwarg")) unsupported(*args->node("kwarg"), "**kwargs parameters");
    if (!args->list("kwonlyargs").empty()) unsupported(*args->list("kwonlyargs")[0], "keyword-only parameters");
    std::vector<SyntaxNodePtr> all = args->list("posonlyargs");
    for (auto& a : args->list("args")) all.push_back(a);
    for (auto& a : all) {
      std::string name = a->str("arg");
      if (var_index_.count(name)) fail(ErrorKind::SyntaxError, "duplicate argument '" + name + "'", a->loc);
      int v = add_var(name);
      assigned_.insert(v);
      fn_->vars[v].is_param = true;
      fn_->params.push_back(v);
    }
  }

  int add_var(const std::string& name) {
    auto it = var_index_.find(name);
    if (it != var_index_.end()) return it->second;
    int v = static_cast<int>(fn_->vars.size());
    fn_->vars.push_back(ir::Variable{name, nullptr, false});
    var_index_[name] = v;
    return v;
  }

  void collect_target_names(const SyntaxNode& t) {
    if (t.type == "Name") {
      if (!nonlocal_.count(t.str("id"))) add_var(t.str("id"));
    } else if (t.type == "Tuple" || t.type == "List") {
      for (auto& e : t.list("elts")) collect_target_names(*e);
    }
  }

  // An inner function's `nonlocal` names: the enclosing function's variables, not its own.
  void collect_nonlocals(const SyntaxNode& s) {
    if (s.type == "Nonlocal")
      for (auto& n : s.list("names")) nonlocal_.insert(n->str("value"));
    if (s.type == "FunctionDef" || s.type == "AsyncFunctionDef") return;
    for (const char* block : {"body", "orelse"})
      for (auto& c : s.list(block)) collect_nonlocals(*c);
  }

  // A name not bound in this function, looked up for an inner function it encloses: one of its variables (made a
  // captured variable here first when it is an enclosing function's), or an inner function it defines.
  std::optional<std::variant<int, std::shared_ptr<ir::Function>>> capture(const std::string& name) {
    if (auto it = inner_names_.find(name); it != inner_names_.end()) return it->second;
    if (auto it = var_index_.find(name); it != var_index_.end()) return it->second;
    if (parent_ == nullptr) return std::nullopt;
    auto outer = parent_->capture(name);
    if (outer && std::holds_alternative<int>(*outer)) return captured_var(name, std::get<int>(*outer));
    return outer;
  }

  int captured_var(const std::string& name, int outer) {
    int v = add_var(name);
    fn_->vars[v].captured = outer;
    assigned_.insert(v);
    return v;
  }

  ExprPtr inner_function_expr(const std::shared_ptr<ir::Function>& inner, SourceLoc loc) {
    auto e = std::make_unique<Expr>(ExprKind::Global, loc);
    e->global.kind = ir::GlobalValue::Kind::InnerFunction;
    e->global.name = inner->name;
    e->global.repr = "inner function '" + inner->name + "'";
    e->global.function = inner;
    return e;
  }

  // `def name(...)` in the function, or `name = lambda ...` (the bytecode reader gives a def as an assignment of
  // its FunctionDef node): an inner function, bound to the name.
  void define_inner(const SyntaxNode& def, const std::string& name) {
    if (!def.list("decorator_list").empty())
      unsupported(*def.list("decorator_list")[0], "decorated inner functions (define them at module level)");
    IrBuilder inner(src_, resolver_, this);
    inner.temp_counter_ = temp_counter_;
    auto fn = std::make_shared<ir::Function>();
    inner_names_[name] = fn;  // bound before its body is built: a call of itself there is found (and refused)
    inner.build_inner(def, name, std::move(fn));
  }

  // Python scoping: any name bound in the body is local to the whole function (an inner function's body is its
  // own scope).
  void collect_locals(const SyntaxNode& s) {
    if (s.type == "FunctionDef" || s.type == "AsyncFunctionDef" || s.type == "ClassDef") return;
    if (s.type == "Assign") {
      for (auto& t : s.list("targets")) collect_target_names(*t);
    } else if (s.type == "AugAssign" || s.type == "AnnAssign" || s.type == "For") {
      if (auto t = s.node("target")) collect_target_names(*t);
    }
    for (const char* block : {"body", "orelse"})
      for (auto& c : s.list(block)) collect_locals(*c);
  }

  std::vector<StmtPtr> build_block(const std::vector<SyntaxNodePtr>& nodes) {
    std::vector<StmtPtr> out;
    for (auto& n : nodes) {
      build_stmt(*n, out);
      if (!out.empty() && ends_control(*out.back())) break;  // code after it never runs: CPython drops it
    }
    return out;
  }

  // `return a if c else b` is `if c: return a` then `return b`: CPython 3.12 copies the return into each arm,
  // so its bytecode cannot tell the two apart.
  void push_return(ExprPtr value, const SyntaxNode& n, std::vector<StmtPtr>& out) {
    if (value->kind == ExprKind::IfExp) {
      auto branch = stmt(StmtKind::If, n);
      branch->value = std::move(value->operands[0]);
      push_return(std::move(value->operands[1]), n, branch->body);
      out.push_back(std::move(branch));
      push_return(std::move(value->operands[2]), n, out);
      return;
    }
    auto s = stmt(StmtKind::Return, n);
    s->value = std::move(value);
    out.push_back(std::move(s));
  }

  // `v = a if x or 2 else b` tests x, then assigns a: its bytecode is that of `if x or 2: v = a` (the else is
  // dead), so both readers give this IR: the test as an if of its own, then the value that it always takes.
  ExprPtr decided_value(ExprPtr value, const SyntaxNode& n, std::vector<StmtPtr>& out) {
    if (value->kind != ExprKind::IfExp) return value;
    std::optional<bool> taken = decided_condition(value->operands[0]);
    if (!taken) return value;
    auto test = stmt(StmtKind::If, n);
    test->value = std::move(value->operands[0]);
    out.push_back(std::move(test));
    return std::move(value->operands[*taken ? 1 : 2]);
  }

  StmtPtr stmt(StmtKind k, const SyntaxNode& n) { return std::make_unique<Stmt>(k, n.loc); }

  void build_stmt(const SyntaxNode& n, std::vector<StmtPtr>& out) {
    const std::string& t = n.type;
    if (t == "FunctionDef") {
      define_inner(n, n.str("name"));
      return;
    }
    if (t == "Nonlocal" && parent_ != nullptr) return;  // (collect_nonlocals read it)
    if (t == "Assign" && n.list("targets").size() == 1 && n.list("targets")[0]->type == "Name" &&
        (n.node("value")->type == "Lambda" || n.node("value")->type == "FunctionDef")) {
      define_inner(*n.node("value"), n.list("targets")[0]->str("id"));
      return;
    }
    if (t == "Assign") {
      const auto& targets = n.list("targets");
      ExprPtr value = decided_value(build_expr(*n.node("value")), n, out);
      if (targets.size() == 1) {
        auto s = stmt(StmtKind::Assign, n);
        s->target = build_target(*targets[0]);
        s->value = std::move(value);
        out.push_back(std::move(s));
        return;
      }
      // a = b = value: evaluate once into a hidden temporary.
      int tmp = add_var("$chain" + std::to_string(temp_counter_++));
      auto first = stmt(StmtKind::Assign, n);
      first->target = var_expr(tmp, n.loc);
      first->value = std::move(value);
      out.push_back(std::move(first));
      for (auto& target : targets) {
        auto s = stmt(StmtKind::Assign, n);
        s->target = build_target(*target);
        s->value = var_expr(tmp, n.loc);
        out.push_back(std::move(s));
      }
    } else if (t == "AnnAssign") {
      if (!n.node("value")) return;  // a bare annotation declares nothing we need
      auto s = stmt(StmtKind::Assign, n);
      s->value = build_expr(*n.node("value"));
      s->target = build_target(*n.node("target"));
      out.push_back(std::move(s));
    } else if (t == "AugAssign") {
      // x op= v  is lowered as  x = x op v  (the target read and written once each).
      const SyntaxNode& target = *n.node("target");
      auto s = stmt(StmtKind::Assign, n);
      auto value = std::make_unique<Expr>(ExprKind::Binary, n.loc);
      value->op = to_op(*n.node("op"), n);
      value->operands.push_back(build_expr(target));
      value->operands.push_back(build_expr(*n.node("value")));
      s->value = std::move(value);
      s->target = build_target(target);
      out.push_back(std::move(s));
    } else if (t == "Expr") {
      SyntaxNodePtr v = n.node("value");
      // Docstrings and other bare constants are no-ops.
      if (v->type == "Constant") return;
      auto s = stmt(StmtKind::ExprStmt, n);
      s->value = decided_value(build_expr(*v), n, out);
      out.push_back(std::move(s));
    } else if (t == "If") {
      auto s = stmt(StmtKind::If, n);
      s->value = as_condition(build_expr(*n.node("test")));
      // numba prunes branches on constant conditions before typing them; CPython leaves the other branch out
      // of the bytecode, so nothing in it is built (its assignments do not count as earlier ones).
      if (std::optional<bool> taken = constant_truth(*s->value)) {
        for (StmtPtr& kept : build_block(n.list(*taken ? "body" : "orelse"))) out.push_back(std::move(kept));
        return;
      }
      bool pure = pure_decided(*s->value);  // one_ir.h: nothing to test
      if (std::optional<bool> taken = decided_condition(s->value)) {  // `if x or 2:` tests x, then the body runs
        if (!pure) out.push_back(std::move(s));
        for (StmtPtr& kept : build_block(n.list(*taken ? "body" : "orelse"))) out.push_back(std::move(kept));
        return;
      }
      s->body = build_block(n.list("body"));
      s->orelse = build_block(n.list("orelse"));
      push_if(std::move(s), out);  // one_ir.h: an else after a return is the code after the if
    } else if (t == "While") {
      auto s = stmt(StmtKind::While, n);
      s->value = as_condition(build_expr(*n.node("test")));
      if (constant_truth(*s->value) == false) {  // a loop that never runs (CPython drops it too): only its else
        for (StmtPtr& kept : build_block(n.list("orelse"))) out.push_back(std::move(kept));
        return;
      }
      s->body = build_block(n.list("body"));
      s->orelse = build_block(n.list("orelse"));  // runs when the test turns false (not after a break)
      push_loop(std::move(s), out);
    } else if (t == "For") {
      build_for(n, out);
    } else if (t == "Break") {
      out.push_back(stmt(StmtKind::Break, n));
    } else if (t == "Continue") {
      out.push_back(stmt(StmtKind::Continue, n));
    } else if (t == "Return") {
      if (auto v = n.node("value")) {
        push_return(decided_value(build_expr(*v), n, out), n, out);
      } else {
        out.push_back(stmt(StmtKind::Return, n));
      }
    } else if (t == "Pass") {
      out.push_back(stmt(StmtKind::Pass, n));
    } else if (t == "Raise") {
      SyntaxNodePtr exc = n.node("exc");
      if (!exc) unsupported(n, describe_unsupported(t));
      auto s = stmt(StmtKind::Raise, n);
      s->value = build_expr(*exc);
      out.push_back(std::move(s));
    } else if (t == "Assert") {
      out.push_back(build_assert(n));
    } else {
      unsupported(n, describe_unsupported(t));
    }
  }

  // assert test, msg  ->  if not test: raise AssertionError(msg)
  StmtPtr build_assert(const SyntaxNode& n) {
    auto check = stmt(StmtKind::If, n);
    auto negated = std::make_unique<Expr>(ExprKind::Unary, n.loc);
    negated->op = ir::Op::Not;
    negated->operands.push_back(as_condition(build_expr(*n.node("test"))));
    check->value = std::move(negated);
    auto raise = stmt(StmtKind::Raise, n);
    auto call = std::make_unique<Expr>(ExprKind::Call, n.loc);
    auto cls = std::make_unique<Expr>(ExprKind::Global, n.loc);
    if (!located(n.loc, [&] { return resolver_.resolve_name("AssertionError", cls->global); }))
      fail(ErrorKind::Internal, "AssertionError is not a builtin", n.loc);
    call->operands.push_back(std::move(cls));
    if (auto msg = n.node("msg")) call->operands.push_back(build_expr(*msg));
    raise->value = std::move(call);
    check->body.push_back(std::move(raise));
    return check;
  }

  void build_for(const SyntaxNode& n, std::vector<StmtPtr>& out) {
    const SyntaxNode& iter = *n.node("iter");
    ExprPtr callee;
    if (iter.type == "Call") callee = build_expr(*iter.node("func"));
    bool is_range = callee && callee->kind == ExprKind::Global &&
                    callee->global.kind == ir::GlobalValue::Kind::Builtin && callee->global.name == "range";
    if (callee && is_builtin(*callee, "cuda.literal_unroll")) {
      build_literal_unroll(n, iter, out);
      return;
    }
    if (!is_range) {
      build_for_each(n, out);
      return;
    }
    const auto& args = iter.list("args");
    if (args.empty() || args.size() > 3 || !iter.list("keywords").empty())
      fail(ErrorKind::TypingError, "range() takes 1 to 3 positional arguments, got " + std::to_string(args.size()),
           iter.loc);
    auto s = stmt(StmtKind::ForRange, n);
    for (auto& a : args) s->range_args.push_back(build_expr(*a));
    s->target = build_target(*n.node("target"));
    if (s->target->kind != ExprKind::Var) unsupported(*n.node("target"), "a range loop target that is not a name");
    s->body = build_block(n.list("body"));
    s->orelse = build_block(n.list("orelse"));  // runs when the loop ends without a break
    push_loop(std::move(s), out);
  }

  ExprPtr builtin(const char* name, SourceLoc loc) {
    auto e = std::make_unique<Expr>(ExprKind::Global, loc);
    e->global.kind = ir::GlobalValue::Kind::Builtin;
    e->global.name = name;
    e->global.repr = name;
    return e;
  }

  ExprPtr call_expr(ExprPtr callee, std::vector<ExprPtr> args, SourceLoc loc) {
    auto e = std::make_unique<Expr>(ExprKind::Call, loc);
    e->operands.push_back(std::move(callee));
    for (auto& a : args) e->operands.push_back(std::move(a));
    return e;
  }

  static bool is_builtin(const Expr& e, const char* name) {
    return e.kind == ExprKind::Global && e.global.kind == ir::GlobalValue::Kind::Builtin && e.global.name == name;
  }

  // for x in <iterable>:  ->  $seq = <iterable>; for $k in range(len($seq)): x = $seq[$k]; ...
  // enumerate(it[, start]) and zip(a, b, ...), nested in any way, walk their iterables by the same index:
  // the loop runs min(len(...)) times and the target takes (start + $k, item) or (item_a, item_b, ...).
  void build_for_each(const SyntaxNode& n, std::vector<StmtPtr>& out, const SyntaxNode* iterable = nullptr) {
    const SyntaxNode& iter = iterable ? *iterable : *n.node("iter");
    int index = add_var("$index" + std::to_string(temp_counter_++));
    std::vector<ExprPtr> lengths;
    ExprPtr item = iteration_item(iter, index, out, lengths);
    auto loop = stmt(StmtKind::ForRange, n);
    loop->target = var_expr(index, iter.loc);
    if (lengths.size() == 1) {
      loop->range_args.push_back(std::move(lengths[0]));
    } else if (lengths.empty()) {  // zip() with no iterables: nothing to walk
      auto zero = std::make_unique<Expr>(ExprKind::Const, iter.loc);
      zero->global.kind = ir::GlobalValue::Kind::Int;
      loop->range_args.push_back(std::move(zero));
    } else {
      loop->range_args.push_back(call_expr(builtin("min", iter.loc), std::move(lengths), iter.loc));
    }
    auto assign = stmt(StmtKind::Assign, n);
    assign->target = build_target(*n.node("target"));
    assign->value = std::move(item);
    loop->body.push_back(std::move(assign));
    for (auto& s : build_block(n.list("body"))) loop->body.push_back(std::move(s));
    loop->orelse = build_block(n.list("orelse"));
    if (iterable != nullptr)
      out.push_back(std::move(loop));  // literal_unroll marks it: keep it last
    else
      push_loop(std::move(loop), out);
  }

  // for x in literal_unroll(t): the loop over t, marked for typing to version its body per element of a
  // heterogeneous tuple (typing/literal_unroll.cpp); a constant list is taken as the tuple of its items.
  void build_literal_unroll(const SyntaxNode& n, const SyntaxNode& call, std::vector<StmtPtr>& out) {
    const auto& args = call.list("args");
    if (args.size() != 1 || !call.list("keywords").empty())
      fail(ErrorKind::TypingError, "literal_unroll() takes exactly one argument (a tuple or a constant list)",
           call.loc);
    SyntaxNode container = *args[0];
    if (container.type == "List") container.type = "Tuple";
    build_for_each(n, out, &container);
    out.back()->literal_unroll = true;
  }

  // The item at $index of `iter`; sequences are evaluated once, before the loop, into temporaries.
  ExprPtr iteration_item(const SyntaxNode& iter, int index, std::vector<StmtPtr>& out, std::vector<ExprPtr>& lengths) {
    ExprPtr callee = iter.type == "Call" ? build_expr(*iter.node("func")) : nullptr;
    const auto& args = iter.list("args");
    if (callee && is_builtin(*callee, "enumerate")) {
      ExprPtr start;
      if (args.size() == 2) start = build_expr(*args[1]);
      for (auto& k : iter.list("keywords")) {
        if (k->str("arg") != "start" || start)
          fail(ErrorKind::TypingError, "enumerate() takes an iterable and a start", k->loc);
        start = build_expr(*k->node("value"));
      }
      if (args.empty() || args.size() > 2)
        fail(ErrorKind::TypingError, "enumerate() takes an iterable and an optional start", iter.loc);
      auto pair = std::make_unique<Expr>(ExprKind::Tuple, iter.loc);
      ExprPtr count = var_expr(index, iter.loc);
      if (start) {
        int first = add_var("$start" + std::to_string(temp_counter_++));
        auto bind = stmt(StmtKind::Assign, iter);
        bind->target = var_expr(first, iter.loc);
        bind->value = std::move(start);
        out.push_back(std::move(bind));
        auto sum = std::make_unique<Expr>(ExprKind::Binary, iter.loc);
        sum->op = Op::Add;
        sum->operands.push_back(var_expr(first, iter.loc));
        sum->operands.push_back(std::move(count));
        count = std::move(sum);
      }
      pair->operands.push_back(std::move(count));
      pair->operands.push_back(iteration_item(*args[0], index, out, lengths));
      return pair;
    }
    if (callee && is_builtin(*callee, "zip")) {
      if (!iter.list("keywords").empty()) unsupported(iter, "keyword arguments of zip()");
      auto items = std::make_unique<Expr>(ExprKind::Tuple, iter.loc);
      for (auto& a : args) items->operands.push_back(iteration_item(*a, index, out, lengths));
      return items;
    }
    int seq = add_var("$iter" + std::to_string(temp_counter_++));
    auto init = stmt(StmtKind::Assign, iter);
    init->target = var_expr(seq, iter.loc);
    init->value = build_expr(iter);
    out.push_back(std::move(init));
    std::vector<ExprPtr> len_args;
    len_args.push_back(var_expr(seq, iter.loc));
    lengths.push_back(call_expr(builtin("len", iter.loc), std::move(len_args), iter.loc));
    auto get = std::make_unique<Expr>(ExprKind::Subscript, iter.loc);
    get->operands.push_back(var_expr(seq, iter.loc));
    get->operands.push_back(var_expr(index, iter.loc));
    return get;
  }

  // Operator nodes carry no location: errors point at `where`, the expression using them.
  Op to_op(const SyntaxNode& n, const SyntaxNode& where) {
    auto it = operator_table().find(n.type);
    if (it == operator_table().end()) unsupported(where, "the operator " + n.type);
    return it->second;
  }

  ExprPtr build_target(const SyntaxNode& n) {
    if (n.type == "Name" && nonlocal_.count(n.str("id"))) {  // assigns the enclosing function's variable
      auto found = capture(n.str("id"));
      if (!found || !std::holds_alternative<int>(*found))
        fail(ErrorKind::SyntaxError, "no binding for nonlocal '" + n.str("id") + "' found", n.loc);
      return var_expr(std::get<int>(*found), n.loc);
    }
    if (n.type == "Name") {
      int v = add_var(n.str("id"));
      assigned_.insert(v);
      return var_expr(v, n.loc);
    }
    if (n.type == "Tuple" || n.type == "List") {
      auto e = std::make_unique<Expr>(ExprKind::Tuple, n.loc);
      for (auto& elt : n.list("elts")) e->operands.push_back(build_target(*elt));
      return e;
    }
    if (n.type == "Subscript") {
      auto e = std::make_unique<Expr>(ExprKind::Subscript, n.loc);
      e->operands.push_back(build_expr(*n.node("value")));
      e->operands.push_back(build_expr(*n.node("slice")));
      return e;
    }
    if (n.type == "Attribute") {  // rec.field = v
      auto e = std::make_unique<Expr>(ExprKind::Attribute, n.loc);
      e->operands.push_back(build_expr(*n.node("value")));
      e->attr = n.str("attr");
      return e;
    }
    unsupported(n, "assignment to " + describe_unsupported(n.type));
  }

  ExprPtr constant(const SyntaxNode& n) {
    auto e = std::make_unique<Expr>(ExprKind::Const, n.loc);
    const SyntaxField* v = n.field("value");
    using K = ir::GlobalValue::Kind;
    if (v == nullptr || std::holds_alternative<std::monostate>(*v)) {
      e->global.kind = K::None;
    } else if (auto* b = std::get_if<bool>(v)) {
      e->global.kind = K::Bool;
      e->global.int_value = *b;
    } else if (auto* i = std::get_if<int64_t>(v)) {
      e->global.kind = K::Int;
      e->global.int_value = *i;
    } else if (auto* big = std::get_if<SyntaxBigInt>(v)) {
      // numba types ints in [2**63, 2**64) as uint64 and rejects larger ones.
      if (!big->fits) fail(ErrorKind::TypingError, "Int value is too large: " + big->text, n.loc);
      e->global.kind = K::Int;
      e->global.int_value = static_cast<int64_t>(big->value);
      e->global.is_unsigned = true;
    } else if (auto* d = std::get_if<double>(v)) {
      e->global.kind = K::Float;
      e->global.float_value = *d;
    } else if (std::holds_alternative<SyntaxEllipsis>(*v)) {
      e->global.kind = K::Ellipsis;  // only meaningful as an array index
    } else if (auto* c = std::get_if<SyntaxImag>(v)) {
      e->global.kind = K::Complex;
      e->global.imag_value = c->value;
    } else if (auto* text = std::get_if<std::string>(v)) {
      // A dtype name, a message, a field name... or, as a value, a UnicodeCharSeq constant (typing).
      e->global.kind = K::Str;
      e->global.name = *text;
    } else if (auto* bytes = std::get_if<SyntaxBytes>(v)) {
      e->global.kind = K::Str;  // as a value, a CharSeq constant
      e->global.name = bytes->value;
      e->global.is_bytes = true;
    } else {
      unsupported(n, "this constant");
    }
    return e;
  }

  ExprPtr name(const SyntaxNode& n) {
    std::string id = n.str("id");
    if (auto inner = inner_names_.find(id); inner != inner_names_.end())
      return inner_function_expr(inner->second, n.loc);
    if (parent_ != nullptr && !var_index_.count(id)) {  // a name of an enclosing function
      auto found = parent_->capture(id);
      if (found && std::holds_alternative<int>(*found)) return var_expr(captured_var(id, std::get<int>(*found)), n.loc);
      if (found) return inner_function_expr(std::get<std::shared_ptr<ir::Function>>(*found), n.loc);
    }
    auto it = var_index_.find(id);
    if (it != var_index_.end()) {
      // numba reads the bytecode in order and rejects a variable read before any
      // assignment to it appears (even one a loop's back edge would bring).
      if (!assigned_.count(it->second))
        fail(ErrorKind::NotDefined, "Variable '" + id + "' is not defined: it is read before any assignment to it",
             n.loc);
      return var_expr(it->second, n.loc);
    }
    auto e = std::make_unique<Expr>(ExprKind::Global, n.loc);
    if (!located(n.loc, [&] { return resolver_.resolve_name(id, e->global); }))
      fail(ErrorKind::TypingError, "NameError: name '" + id + "' is not defined", n.loc);
    return fold_global(std::move(e));
  }

  // Resolving a name can fail in the resolver (a global no type holds): the
  // error points at the name.
  template <typename Resolve>
  static bool located(const SourceLoc& loc, Resolve resolve) {
    try {
      return resolve();
    } catch (CompileError& e) {
      if (!e.error().loc.known()) e.error().loc = loc;
      throw;
    }
  }

  // Plain constants from globals become literals, like constants in the source.
  ExprPtr fold_global(ExprPtr e) {
    using K = ir::GlobalValue::Kind;
    K k = e->global.kind;
    if (k == K::Int || k == K::Float || k == K::Bool || k == K::None || k == K::Complex) e->kind = ExprKind::Const;
    if (k == K::Tuple) {  // a global tuple of constants: the tuple expression that writes it
      auto tuple = std::make_unique<Expr>(ExprKind::Tuple, e->loc);
      for (const auto& item : e->global.items) {
        auto part = std::make_unique<Expr>(ExprKind::Global, e->loc);
        part->global = item;
        tuple->operands.push_back(fold_global(std::move(part)));
      }
      return tuple;
    }
    return e;
  }

  ExprPtr build_expr(const SyntaxNode& n) { return fold_constants(build_expr_unfolded(n)); }

  ExprPtr build_expr_unfolded(const SyntaxNode& n) {
    const std::string& t = n.type;
    if (t == "Constant") return constant(n);
    if (t == "Name") return name(n);
    if (t == "BinOp") {
      auto e = std::make_unique<Expr>(ExprKind::Binary, n.loc);
      e->op = to_op(*n.node("op"), n);
      e->operands.push_back(build_expr(*n.node("left")));
      e->operands.push_back(build_expr(*n.node("right")));
      return e;
    }
    if (t == "UnaryOp") {
      auto e = std::make_unique<Expr>(ExprKind::Unary, n.loc);
      e->op = to_op(*n.node("op"), n);
      e->operands.push_back(build_expr(*n.node("operand")));
      return e;
    }
    if (t == "BoolOp") {
      auto e = std::make_unique<Expr>(ExprKind::BoolOp, n.loc);
      e->op = to_op(*n.node("op"), n);
      // CPython drops constant operands that cannot decide the result and stops at one that does
      // (`0 and x` is 0, `1 and x` is x): numba sees what is left, and so does the IR.
      std::vector<ExprPtr> values;  // (a and b) and c, a and (b and c): a and b and c, as in the bytecode
      for (const auto& value : n.list("values")) {
        ExprPtr v = build_expr(*value);
        if (v->kind == ExprKind::BoolOp && v->op == e->op)
          for (ExprPtr& inner : v->operands) values.push_back(std::move(inner));
        else
          values.push_back(std::move(v));
      }
      for (size_t i = 0; i < values.size(); ++i) {
        ExprPtr& v = values[i];
        std::optional<bool> truth = v->kind == ExprKind::Const ? constant_truth(*v) : std::nullopt;
        bool last = i + 1 == values.size();
        if (truth && !last && *truth != (e->op == Op::Or)) continue;  // `1 and x`, `0 or x`: x
        bool decides = truth && *truth == (e->op == Op::Or);             // `0 and x`, `1 or x`: the constant
        e->operands.push_back(std::move(v));
        if (decides) break;
      }
      if (e->operands.size() == 1) return std::move(e->operands[0]);
      return e;
    }
    if (t == "Compare") {
      auto e = std::make_unique<Expr>(ExprKind::Compare, n.loc);
      e->operands.push_back(build_expr(*n.node("left")));
      for (auto& op : n.list("ops")) {
        e->ops.push_back(to_op(*op, n));
      }
      for (auto& c : n.list("comparators")) e->operands.push_back(build_expr(*c));
      return e;
    }
    if (t == "IfExp") {
      auto e = std::make_unique<Expr>(ExprKind::IfExp, n.loc);
      e->operands.push_back(as_condition(build_expr(*n.node("test"))));
      if (std::optional<bool> taken = constant_truth(*e->operands[0]))
        return build_expr(*n.node(*taken ? "body" : "orelse"));
      if (pure_decided(*e->operands[0])) {  // one_ir.h: `a if x or 2 else b` is a
        return build_expr(*n.node(decided_condition(e->operands[0]).value() ? "body" : "orelse"));
      }
      e->operands.push_back(build_expr(*n.node("body")));
      e->operands.push_back(build_expr(*n.node("orelse")));
      return e;
    }
    if (t == "Call") {
      auto e = std::make_unique<Expr>(ExprKind::Call, n.loc);
      e->operands.push_back(build_expr(*n.node("func")));
      for (auto& a : n.list("args")) {
        if (a->type == "Starred") unsupported(*a, "starred arguments");
        e->operands.push_back(build_expr(*a));
      }
      for (auto& k : n.list("keywords")) {
        std::string arg = k->str("arg");
        if (arg.empty()) unsupported(*k, "**kwargs in calls");
        e->keywords.emplace_back(arg, build_expr(*k->node("value")));
      }
      const Expr& callee = *e->operands[0];
      if (callee.kind == ExprKind::Global && callee.global.kind == ir::GlobalValue::Kind::Builtin &&
          callee.global.name.rfind("operator.", 0) == 0)
        return operator_call(std::move(e));
      return e;
    }
    if (t == "Attribute") return attribute(n);
    if (t == "Subscript") {
      auto e = std::make_unique<Expr>(ExprKind::Subscript, n.loc);
      e->operands.push_back(build_expr(*n.node("value")));
      e->operands.push_back(build_expr(*n.node("slice")));
      return e;
    }
    if (t == "Tuple") {
      auto e = std::make_unique<Expr>(ExprKind::Tuple, n.loc);
      for (auto& elt : n.list("elts")) e->operands.push_back(build_expr(*elt));
      return e;
    }
    if (t == "Slice") {
      auto e = std::make_unique<Expr>(ExprKind::Slice, n.loc);
      for (const char* part : {"lower", "upper", "step"}) {
        SyntaxNodePtr p = n.node(part);
        e->operands.push_back(p ? build_expr(*p) : nullptr);
      }
      return e;
    }
    unsupported(n, describe_unsupported(t));
  }

  // operator.add(a, b) and friends are the operators themselves: a + b, a < b, -a, b in a, a[b]...
  ExprPtr operator_call(ExprPtr call) {
    static const std::unordered_map<std::string, Op> binary = {
        {"add", Op::Add},           {"sub", Op::Sub},     {"mul", Op::Mul},   {"truediv", Op::Div},
        {"floordiv", Op::FloorDiv}, {"mod", Op::Mod},     {"pow", Op::Pow},   {"lshift", Op::LShift},
        {"rshift", Op::RShift},     {"and_", Op::BitAnd}, {"or_", Op::BitOr}, {"xor", Op::BitXor}};
    static const std::unordered_map<std::string, Op> compare = {{"eq", Op::Eq},  {"ne", Op::NotEq}, {"lt", Op::Lt},
                                                                {"le", Op::LtE}, {"gt", Op::Gt},    {"ge", Op::GtE}};
    static const std::unordered_map<std::string, Op> unary = {
        {"neg", Op::USub}, {"pos", Op::UAdd}, {"invert", Op::Invert}, {"inv", Op::Invert}, {"not_", Op::Not}};
    std::string name = call->operands[0]->global.name.substr(9);
    const SourceLoc loc = call->loc;
    size_t given = call->operands.size() - 1;
    auto expect = [&](size_t n) {
      if (!call->keywords.empty() || given != n)
        fail(ErrorKind::TypingError,
             "operator." + name + "() takes " + std::to_string(n) + " positional argument" + (n == 1 ? "" : "s") +
                 " but " + std::to_string(given) + " were given",
             loc);
    };
    // In-place forms (iadd...) give the same value for the immutable values CUDA code has.
    std::string base = name.size() > 1 && name[0] == 'i' && binary.count(name.substr(1)) ? name.substr(1) : name;
    ExprPtr e;
    if (auto it = binary.find(base); it != binary.end()) {
      expect(2);
      e = std::make_unique<Expr>(ExprKind::Binary, loc);
      e->op = it->second;
      e->operands.push_back(std::move(call->operands[1]));
      e->operands.push_back(std::move(call->operands[2]));
    } else if (auto it = compare.find(name); it != compare.end()) {
      expect(2);
      e = std::make_unique<Expr>(ExprKind::Compare, loc);
      e->ops = {it->second};
      e->operands.push_back(std::move(call->operands[1]));
      e->operands.push_back(std::move(call->operands[2]));
    } else if (name == "contains") {  // contains(a, b) is `b in a`
      expect(2);
      e = std::make_unique<Expr>(ExprKind::Compare, loc);
      e->ops = {Op::In};
      e->operands.push_back(std::move(call->operands[2]));
      e->operands.push_back(std::move(call->operands[1]));
    } else if (auto it = unary.find(name); it != unary.end()) {
      expect(1);
      e = std::make_unique<Expr>(ExprKind::Unary, loc);
      e->op = it->second;
      e->operands.push_back(std::move(call->operands[1]));
    } else if (name == "getitem") {
      expect(2);
      e = std::make_unique<Expr>(ExprKind::Subscript, loc);
      e->operands.push_back(std::move(call->operands[1]));
      e->operands.push_back(std::move(call->operands[2]));
    } else if (name == "truth" || name == "abs" || name == "index") {
      expect(1);
      const char* fn = name == "truth" ? "bool" : name == "abs" ? "abs" : "int";
      std::vector<ExprPtr> args;
      args.push_back(std::move(call->operands[1]));
      return call_expr(builtin(fn, loc), std::move(args), loc);
    } else {
      fail(ErrorKind::Unsupported, "Unsupported: operator." + name + " cannot be compiled for CUDA", loc);
    }
    return fold_constants(std::move(e));
  }

  ExprPtr attribute(const SyntaxNode& n) {
    ExprPtr base = build_expr(*n.node("value"));
    std::string attr = n.str("attr");
    using K = ir::GlobalValue::Kind;
    if (base->kind == ExprKind::Global &&
        (base->global.kind == K::Module || base->global.kind == K::Object || base->global.kind == K::Builtin)) {
      auto e = std::make_unique<Expr>(ExprKind::Global, n.loc);
      if (!located(n.loc, [&] { return resolver_.resolve_attribute(base->global, attr, e->global); }))
        fail(ErrorKind::TypingError, "Unknown attribute '" + attr + "' of " + base->global.repr, n.loc);
      return fold_global(std::move(e));
    }
    auto e = std::make_unique<Expr>(ExprKind::Attribute, n.loc);
    e->attr = attr;
    e->operands.push_back(std::move(base));
    return e;
  }

  const FunctionSource& src_;
  NameResolver& resolver_;
  IrBuilder* parent_ = nullptr;  // an inner function's: the builder of the function it is defined in
  std::shared_ptr<ir::Function> fn_;
  std::unordered_map<std::string, std::shared_ptr<ir::Function>> inner_names_;  // its inner functions by name
  std::set<std::string> nonlocal_;  // an inner function's nonlocal names
  std::unordered_map<std::string, int> var_index_;
  std::set<int> assigned_;  // variables with an assignment earlier in the source than the current point
  int temp_counter_ = 0;
};

}  // namespace

Expected<std::shared_ptr<ir::Function>> build_ir(const FunctionSource& source, NameResolver& resolver) {
  try {
    return IrBuilder(source, resolver).build();
  } catch (CompileError& e) {
    return e.error();
  }
}

}  // namespace cujit::frontend
