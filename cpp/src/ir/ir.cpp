// Helpers of the IR: operator spellings and source excerpts for messages.
#include "cujit/ir.h"

#include <algorithm>
#include <map>

namespace cujit::ir {

const char* op_symbol(Op op) {
  switch (op) {
    case Op::Add:
      return "+";
    case Op::Sub:
      return "-";
    case Op::Mul:
      return "*";
    case Op::Div:
      return "/";
    case Op::FloorDiv:
      return "//";
    case Op::Mod:
      return "%";
    case Op::Pow:
      return "**";
    case Op::LShift:
      return "<<";
    case Op::RShift:
      return ">>";
    case Op::BitOr:
      return "|";
    case Op::BitXor:
      return "^";
    case Op::BitAnd:
      return "&";
    case Op::UAdd:
      return "+";
    case Op::USub:
      return "-";
    case Op::Invert:
      return "~";
    case Op::Not:
      return "not";
    case Op::Eq:
      return "==";
    case Op::NotEq:
      return "!=";
    case Op::Lt:
      return "<";
    case Op::LtE:
      return "<=";
    case Op::Gt:
      return ">";
    case Op::GtE:
      return ">=";
    case Op::In:
      return "in";
    case Op::NotIn:
      return "not in";
    case Op::Is:
      return "is";
    case Op::IsNot:
      return "is not";
    case Op::And:
      return "and";
    case Op::Or:
      return "or";
  }
  return "?";
}

const char* operator_function(Op op) {
  static const std::map<Op, const char*> names = {
      {Op::Add, "add"},
      {Op::Sub, "sub"},
      {Op::Mul, "mul"},
      {Op::Div, "truediv"},
      {Op::FloorDiv, "floordiv"},
      {Op::Mod, "mod"},
      {Op::Pow, "pow"},
      {Op::LShift, "lshift"},
      {Op::RShift, "rshift"},
      {Op::BitOr, "or_"},
      {Op::BitXor, "xor"},
      {Op::BitAnd, "and_"},
      {Op::UAdd, "pos"},
      {Op::USub, "neg"},
      {Op::Invert, "invert"},
      {Op::Not, "not_"},
      {Op::Eq, "eq"},
      {Op::NotEq, "ne"},
      {Op::Lt, "lt"},
      {Op::LtE, "le"},
      {Op::Gt, "gt"},
      {Op::GtE, "ge"},
  };
  auto it = names.find(op);
  return it == names.end() ? nullptr : it->second;
}

std::string format_source_excerpt(const std::string& filename, const std::vector<std::string>& lines, int first_line,
                                  const SourceLoc& loc, const ExcerptText& excerpt) {
  if (!loc.known()) return "File \"" + filename + "\"";
  std::string out = "File \"" + filename + "\", line " + std::to_string(loc.line) + " (" + filename + ":" +
                    std::to_string(loc.line) + "):\n";
  int index = loc.line - first_line;
  if (index < 0 || index >= static_cast<int>(lines.size())) {
    std::string text = excerpt ? excerpt(loc) : std::string();
    return text.empty() ? out : out + text;
  }
  const std::string& text = lines[index];
  out += text + "\n";
  int start = std::min<int>(loc.col, static_cast<int>(text.size()));
  int end = (loc.end_line == loc.line && loc.end_col > start) ? std::min<int>(loc.end_col, text.size()) : start + 1;
  out += std::string(start, ' ') + std::string(std::max(1, end - start), '^');
  return out;
}

bool is_string_constant(const Expr& e) { return e.kind == ExprKind::Const && e.global.kind == GlobalValue::Kind::Str; }

std::vector<uint32_t> string_constant_chars(const GlobalValue& g) {
  std::vector<uint32_t> out;
  const auto* p = reinterpret_cast<const unsigned char*>(g.name.data());
  const auto* end = p + g.name.size();
  while (p < end) {
    uint32_t c = *p++;
    if (!g.is_bytes && c >= 0x80) {  // Python gives valid UTF-8: a lead byte and its continuation bytes
      int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
      c &= 0x3F >> more;
      for (; more > 0 && p < end; --more) c = (c << 6) | (*p++ & 0x3F);
    }
    out.push_back(c);
  }
  return out;
}

ExprPtr var_expr(int v, SourceLoc loc) {
  auto e = std::make_unique<Expr>(ExprKind::Var, loc);
  e->var = v;
  return e;
}

ExprPtr int_expr(int64_t value, SourceLoc loc, GlobalValue::Kind kind) {
  auto e = std::make_unique<Expr>(ExprKind::Const, loc);
  e->global.kind = kind;
  e->global.int_value = value;
  return e;
}

StmtPtr assign_stmt(int var, ExprPtr value, SourceLoc loc) {
  auto s = std::make_unique<Stmt>(StmtKind::Assign, loc);
  s->target = var_expr(var, loc);
  s->value = std::move(value);
  return s;
}

ExprPtr copy_expr(const Expr* e, const std::function<ExprPtr(const Expr&)>& substitute) {
  if (e == nullptr) return nullptr;
  if (substitute)
    if (ExprPtr replaced = substitute(*e)) return replaced;
  auto c = std::make_unique<Expr>(e->kind, e->loc);
  c->op = e->op;
  c->ops = e->ops;
  c->var = e->var;
  c->global = e->global;
  c->attr = e->attr;
  c->field = e->field;
  for (const auto& o : e->operands) c->operands.push_back(copy_expr(o.get(), substitute));
  for (const auto& [name, k] : e->keywords) c->keywords.emplace_back(name, copy_expr(k.get(), substitute));
  return c;
}

std::optional<std::vector<int64_t>> literal_shape(const Expr& shape) {
  auto literal = [](const Expr& e) -> std::optional<int64_t> {
    if (e.type != nullptr && e.type->kind() == TypeKind::IntegerLiteral) return e.type->literal_value();
    if (e.kind == ExprKind::Const && e.global.kind == GlobalValue::Kind::Int) return e.global.int_value;
    return std::nullopt;
  };
  std::vector<int64_t> dims;
  if (shape.kind != ExprKind::Tuple && shape.type != nullptr && shape.type->is_tuple()) {
    for (size_t i = 0; i < shape.type->count(); ++i) {  // a tuple of literals held in a variable (an argument)
      TypeRef item = shape.type->element(i);
      if (item->kind() != TypeKind::IntegerLiteral || item->literal_value() < 0) return std::nullopt;
      dims.push_back(item->literal_value());
    }
    if (dims.empty()) return std::nullopt;
    return dims;
  }
  if (shape.kind == ExprKind::Tuple) {
    for (auto& item : shape.operands) {
      auto v = literal(*item);
      if (!v || *v < 0) return std::nullopt;
      dims.push_back(*v);
    }
    if (dims.empty()) return std::nullopt;
    return dims;
  }
  auto v = literal(shape);
  if (!v || *v < 0) return std::nullopt;
  return std::vector<int64_t>{*v};
}

std::string Function::format_location(const SourceLoc& loc) const {
  return format_source_excerpt(filename, source_lines, first_line, loc, excerpt);
}

namespace {

void collect_raises(const std::vector<StmtPtr>& block, const Function* fn, std::vector<ExceptionSite>& out) {
  for (const StmtPtr& s : block) {
    if (s->kind == StmtKind::Raise) out.push_back({fn, s.get()});
    collect_raises(s->body, fn, out);
    collect_raises(s->orelse, fn, out);
  }
}

}  // namespace

std::vector<ExceptionSite> exception_sites(const TypedFunction& top) {
  std::vector<ExceptionSite> out;
  std::vector<const Function*> seen;
  std::vector<const TypedFunction*> todo{&top};
  for (size_t next = 0; next < todo.size(); ++next) {
    const TypedFunction* tf = todo[next];
    if (tf->external || !tf->fn || std::find(seen.begin(), seen.end(), tf->fn.get()) != seen.end()) continue;
    seen.push_back(tf->fn.get());
    collect_raises(tf->fn->body, tf->fn.get(), out);
    for (const auto& callee : tf->callees) todo.push_back(callee.get());
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> reached_externs(const TypedFunction& top) {
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<const TypedFunction*> todo{&top};
  std::vector<const TypedFunction*> seen;
  while (!todo.empty()) {
    const TypedFunction* t = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
    seen.push_back(t);
    if (t->external) out.emplace_back(t->symbol, t->declared_at);
    for (const auto& c : t->callees) todo.push_back(c.get());
  }
  return out;
}

}  // namespace cujit::ir
