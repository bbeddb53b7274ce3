// numba's dead-branch pruning by argument types (passes.h: prune_branches).
//
// Conditions on constants alone are decided by the frontend (frontend/fold_constants.cpp). What the frontend
// cannot know is the argument types: numba rewrites `a.ndim` and `len(t)` of arguments to constants and decides
// `x is None` by whether x's type is None, then prunes. Here a condition is decided when every operand it compares
// is a constant or such a fact of a parameter that the function never assigns; an `if` (or a conditional
// expression) so decided keeps the branch taken in its place.
#include <optional>
#include <string>

#include "assigned_names.h"
#include "cujit/passes.h"

namespace cujit::passes {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Op;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;
using K = ir::GlobalValue::Kind;

// What is known of an operand before typing: an integer, a string, None, or "not None" (a value of a type that
// cannot be None: an argument of any other type than none and Optional).
struct Known {
  enum class Kind { Int, Str, None, NotNone } kind;
  int64_t value = 0;
  std::string text;
};

// Control leaves the statement at its end only by a jump (return, raise, break, continue), in every path.
bool jumps(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Return:
    case StmtKind::Raise:
    case StmtKind::Break:
    case StmtKind::Continue:
      return true;
    case StmtKind::If:
      return !s.body.empty() && !s.orelse.empty() && jumps(*s.body.back()) && jumps(*s.orelse.back());
    default:
      return false;
  }
}

class Pruner {
 public:
  Pruner(ir::Function& fn, const std::vector<TypeRef>& argtypes) : fn_(fn), types_(fn.vars.size(), nullptr) {
    std::vector<int> names;
    assigned_names(fn.body, names);
    std::vector<bool> assigned(fn.vars.size(), false);
    for (int v : names) assigned[v] = true;
    for (size_t i = 0; i < fn.params.size() && i < argtypes.size(); ++i)
      if (!assigned[fn.params[i]]) types_[fn.params[i]] = argtypes[i];
  }

  void run() { block(fn_.body); }

 private:
  // The type of an argument read unchanged, or nullptr.
  TypeRef argument(const Expr& e) const {
    if (e.kind != ExprKind::Var || e.var < 0 || static_cast<size_t>(e.var) >= types_.size()) return nullptr;
    return types_[e.var];
  }

  std::optional<Known> known(const Expr& e) const {
    if (e.kind == ExprKind::Const || e.kind == ExprKind::Global) {
      switch (e.global.kind) {
        case K::Int:
          if (e.global.is_unsigned) return std::nullopt;
          return Known{Known::Kind::Int, e.global.int_value, {}};
        case K::Bool:
          return Known{Known::Kind::Int, e.global.int_value != 0, {}};
        case K::None:
          return Known{Known::Kind::None, 0, {}};
        case K::Str:
          if (e.global.is_bytes) return std::nullopt;
          return Known{Known::Kind::Str, 0, e.global.name};
        default:
          return std::nullopt;
      }
    }
    if (TypeRef t = argument(e)) {
      if (t->kind() == TypeKind::None) return Known{Known::Kind::None, 0, {}};
      if (t->kind() == TypeKind::Optional) return std::nullopt;
      return Known{Known::Kind::NotNone, 0, {}};
    }
    if (e.kind == ExprKind::Attribute) {
      TypeRef t = argument(*e.operands[0]);
      if (t != nullptr && t->kind() == TypeKind::Array) {
        if (e.attr == "ndim") return Known{Known::Kind::Int, t->ndim(), {}};
        if (e.attr == "layout") return Known{Known::Kind::Str, 0, std::string(1, t->layout())};
      }
    }
    if (e.kind == ExprKind::Call && e.operands.size() == 2 && e.keywords.empty() &&
        e.operands[0]->kind == ExprKind::Global && e.operands[0]->global.kind == K::Builtin &&
        e.operands[0]->global.name == "len") {
      TypeRef t = argument(*e.operands[1]);
      if (t != nullptr && t->is_tuple()) return Known{Known::Kind::Int, static_cast<int64_t>(t->count()), {}};
    }
    return std::nullopt;
  }

  static std::optional<bool> compare(Op op, const Known& a, const Known& b) {
    using Kd = Known::Kind;
    bool a_none = a.kind == Kd::None, b_none = b.kind == Kd::None;
    if (op == Op::Is || op == Op::IsNot) {
      if (!a_none && !b_none) return std::nullopt;  // identity of values: only None's is known
      bool same = a_none && b_none;
      return op == Op::Is ? same : !same;
    }
    if (a.kind == Kd::NotNone || b.kind == Kd::NotNone) {
      if (!(a_none || b_none) || (op != Op::Eq && op != Op::NotEq)) return std::nullopt;
      return op == Op::NotEq;  // a value that is not None compared with None
    }
    if (a.kind != b.kind) {
      if (op == Op::Eq || op == Op::NotEq) return op == Op::NotEq;  // an int, a string and None differ
      return std::nullopt;
    }
    if (a.kind == Kd::None) {
      if (op == Op::Eq || op == Op::NotEq) return op == Op::Eq;
      return std::nullopt;
    }
    if (a.kind == Kd::Str) {
      if (op == Op::Eq) return a.text == b.text;
      if (op == Op::NotEq) return a.text != b.text;
      return std::nullopt;
    }
    switch (op) {
      case Op::Eq:
        return a.value == b.value;
      case Op::NotEq:
        return a.value != b.value;
      case Op::Lt:
        return a.value < b.value;
      case Op::LtE:
        return a.value <= b.value;
      case Op::Gt:
        return a.value > b.value;
      case Op::GtE:
        return a.value >= b.value;
      default:
        return std::nullopt;
    }
  }

  // The truth of a condition the arguments' types decide, or nullopt.
  std::optional<bool> decided(const Expr& e) const {
    if (e.kind == ExprKind::Unary && e.op == Op::Not) {
      auto inner = decided(*e.operands[0]);
      return inner ? std::optional<bool>(!*inner) : std::nullopt;
    }
    if (e.kind == ExprKind::BoolOp) {
      bool is_and = e.op == Op::And;
      bool all_known = true;
      for (const auto& o : e.operands) {
        auto v = decided(*o);
        if (v && *v != is_and) return !is_and;  // a false operand of `and`, a true one of `or`
        all_known = all_known && v.has_value();
      }
      return all_known ? std::optional<bool>(is_and) : std::nullopt;
    }
    if (e.kind == ExprKind::Compare) {
      bool holds = true;
      for (size_t i = 0; i < e.ops.size(); ++i) {
        auto a = known(*e.operands[i]), b = known(*e.operands[i + 1]);
        if (!a || !b) return std::nullopt;
        auto r = compare(e.ops[i], *a, *b);
        if (!r) return std::nullopt;
        holds = holds && *r;
      }
      return holds;
    }
    if (TypeRef t = argument(e); t != nullptr && t->kind() == TypeKind::None) return false;  // `if x:`, x None
    return std::nullopt;
  }

  void expr(ExprPtr& e) {
    if (!e) return;
    if (e->kind == ExprKind::IfExp) {
      if (auto taken = decided(*e->operands[0])) {
        ExprPtr kept = std::move(e->operands[*taken ? 1 : 2]);
        e = std::move(kept);
        expr(e);
        return;
      }
    }
    for (auto& o : e->operands) expr(o);
    for (auto& [name, k] : e->keywords) expr(k);
  }

  // A block with its decided ifs replaced by the branch taken; what follows a statement that always jumps away
  // is left out (numba drops unreachable blocks: the code after `if a.ndim == 1: return ...` is not typed for
  // 1-d arrays).
  void block(std::vector<StmtPtr>& stmts) {
    std::vector<StmtPtr> out;
    out.reserve(stmts.size());
    for (auto& s : stmts) {
      if (!out.empty() && jumps(*out.back())) break;
      if (s->kind == StmtKind::If) {
        if (auto taken = decided(*s->value)) {
          std::vector<StmtPtr>& kept = *taken ? s->body : s->orelse;
          block(kept);
          for (auto& k : kept) out.push_back(std::move(k));
          continue;
        }
      }
      expr(s->target);
      expr(s->value);
      for (auto& a : s->range_args) expr(a);
      block(s->body);
      block(s->orelse);
      out.push_back(std::move(s));
    }
    stmts = std::move(out);
  }

  ir::Function& fn_;
  std::vector<TypeRef> types_;  // per variable: the argument's type where it is a parameter never assigned
};

}  // namespace

void prune_branches(ir::Function& fn, const std::vector<TypeRef>& argtypes) { Pruner(fn, argtypes).run(); }

}  // namespace cujit::passes
