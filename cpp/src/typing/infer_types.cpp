// Type inference: iterates over the function until every variable's type is
// stable. A variable's type is the unification of everything assigned to it
// (numba unifies at control-flow joins); literals keep their value until a
// second, different value is assigned.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "cujit/conversions.h"
#include "cujit/intrinsics.h"
#include "cujit/typing.h"
#include "cujit/vector_types.h"
#include "typing_internal.h"

namespace cujit::typing {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Op;
using ir::Stmt;
using ir::StmtKind;
using K = ir::GlobalValue::Kind;

std::string type_list(const std::vector<TypeRef>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i]->name();
  return s;
}

bool always_returns(const std::vector<ir::StmtPtr>& block) {
  for (auto& s : block) {
    if (s->kind == StmtKind::Return || s->kind == StmtKind::Raise) return true;
    if (s->kind == StmtKind::If && !s->orelse.empty() && always_returns(s->body) && always_returns(s->orelse))
      return true;
  }
  return false;
}

class Inferer {
 public:
  Inferer(ir::Function& fn, CalleeProvider& callees, std::vector<std::shared_ptr<ir::TypedFunction>>& called)
      : fn_(fn), callees_(callees), called_(called) {}

  TypeRef run(const TypingRequest& req) {
    if (req.args.size() != fn_.params.size())
      fail(ErrorKind::TypeError, fn_.name + "() takes " + std::to_string(fn_.params.size()) +
                                     " positional arguments but the signature has " + std::to_string(req.args.size()));
    for (size_t i = 0; i < req.args.size(); ++i) fn_.vars[fn_.params[i]].type = req.args[i];
    declared_return_ = req.declared_return;
    recursive_callee_ = req.recursive_callee;
    const bool falls_off_end = !always_returns(fn_.body);
    for (int iteration = 0;; ++iteration) {
      changed_ = false;
      returns_ = nullptr;
      returns_none_ = false;
      type_block(fn_.body);
      // Self-recursion without a declared return type: its calls have the type the returns gave last round
      // (none at first: numba types them from the returns that do not depend on them), until it is stable.
      if (self_ != nullptr && declared_return_ == nullptr) {
        const bool none_too = returns_none_ || falls_off_end;
        TypeRef now = returns_ && none_too ? types::optional(returns_) : returns_;
        if (now == nullptr && none_too) now = types::none();
        if (now != recursive_return_) {
          recursive_return_ = now;
          changed_ = true;
        }
      }
      if (!changed_) break;
      if (iteration > 64 && self_ != nullptr && declared_return_ == nullptr)
        typing_error("Return type of recursive function does not converge: " + fn_.name +
                         " (its recursive calls make its return type grow)",
                     self_call_loc_);
      if (iteration > 64) fail(ErrorKind::TypingError, "type inference did not converge in " + fn_.name);
    }
    final_ = true;
    type_block(fn_.body);
    if (!always_returns(fn_.body)) returns_none_ = true;
    // A function returning one literal reports the literal type, as numba does (`lambda: 1`); one that also
    // returns None (or falls off the end) somewhere returns Optional(T).
    TypeRef inferred = returns_ ? returns_ : types::none();
    if (returns_ && returns_none_) inferred = types::optional(returns_);
    if (req.kernel && returns_ && !req.declared_return)
      fail(ErrorKind::TypeError,
           "CUDA kernel must have void return type (this kernel returns " + returns_->name() + ")", value_return_loc_);
    if (req.declared_return) {
      if (returns_ && can_convert(inferred, req.declared_return) == Conversion::Impossible &&
          !storable(inferred, req.declared_return))
        fail(ErrorKind::TypingError,
             "cannot convert the return value of type " + inferred->name() + " to the declared return type " +
                 req.declared_return->name(),
             value_return_loc_);
      return req.declared_return;
    }
    return inferred;
  }

 private:
  [[noreturn]] void typing_error(const std::string& msg, const SourceLoc& loc) {
    fail(ErrorKind::TypingError, msg, loc);
  }

  void set_var(int v, TypeRef t, const SourceLoc& loc) {
    TypeRef& cur = fn_.vars[v].type;
    if (cur == t) return;
    if (cur == nullptr) {
      cur = t;
      changed_ = true;
      return;
    }
    TypeRef u = unify(cur, t);
    if (u == nullptr)
      typing_error("Cannot unify " + cur->name() + " and " + t->name() + " for '" + fn_.vars[v].name + "'", loc);
    if (u != cur) {
      cur = u;
      changed_ = true;
    }
  }

  void type_block(std::vector<ir::StmtPtr>& block) {
    for (auto& s : block) type_stmt(*s);
  }

  void require_condition(TypeRef t, const Expr& e) {
    if (t && !types::optional_value(t)->is_number() && t->kind() != TypeKind::None && !types::is_charseq(t))
      typing_error("cannot use a value of type " + t->name() + " as a condition", e.loc);
  }

  void type_stmt(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Assign: {
        TypeRef t = type_expr(*s.value);
        if (t) assign(*s.target, t, s.loc);
        if (s.target->kind == ExprKind::Var && is_call_to(*s.value, "cuda.local.array"))
          fn_.vars[s.target->var].holds_local_array = true;
        break;
      }
      case StmtKind::ExprStmt:
        type_expr(*s.value);
        break;
      case StmtKind::If:
      case StmtKind::While:
        require_condition(type_expr(*s.value), *s.value);
        type_block(s.body);
        type_block(s.orelse);
        break;
      case StmtKind::ForRange: {
        if (s.literal_unroll && !expand_literal_unroll(s, fn_, final_)) return;
        std::vector<TypeRef> args;
        for (auto& a : s.range_args) args.push_back(type_expr(*a));
        for (TypeRef a : args)
          if (a == nullptr) return;
        TypeRef index = resolve_range(args);
        if (index == nullptr) typing_error("No implementation of range(" + type_list(args) + ")", s.loc);
        s.range_type = index;
        set_var(s.target->var, index, s.loc);
        s.target->type = fn_.vars[s.target->var].type;
        type_block(s.body);
        type_block(s.orelse);
        break;
      }
      case StmtKind::Raise:
        check_raise(*s.value);
        break;
      case StmtKind::Return: {
        TypeRef t = s.value ? type_expr(*s.value) : types::none();
        if (t == nullptr) break;
        if (t->kind() == TypeKind::Array && !(s.value->kind == ExprKind::Var && fn_.vars[s.value->var].is_param))
          typing_error("Only accept returning of array passed into the function as argument", s.value->loc);
        if (t->kind() == TypeKind::None) {
          returns_none_ = true;
          break;
        }
        if (returns_ == nullptr) {
          returns_ = t;
          value_return_loc_ = s.loc;
        } else {
          TypeRef u = unify(returns_, t);
          if (u == nullptr) typing_error("Cannot unify return types " + returns_->name() + " and " + t->name(), s.loc);
          returns_ = u;
        }
        break;
      }
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Pass:
        break;
    }
  }

  // `raise E` or `raise E(args)`: E an exception class, the arguments constants (the host builds the
  // exception from them, as numba does). Nothing is typed: the raise becomes a status code.
  void check_raise(Expr& exc) {
    const Expr& cls = exc.kind == ExprKind::Call ? *exc.operands[0] : exc;
    if (cls.kind != ExprKind::Global || cls.global.kind != K::ExceptionClass)
      typing_error(
          "raise needs an exception class or an instance of one made in the raise statement "
          "(raise ValueError(\"...\")), not this expression",
          exc.loc);
    if (exc.kind != ExprKind::Call) return;
    if (!exc.keywords.empty())
      typing_error("an exception raised in CUDA code takes positional arguments only", exc.keywords[0].second->loc);
    for (size_t i = 1; i < exc.operands.size(); ++i) {
      const Expr& a = *exc.operands[i];
      bool constant = a.kind == ExprKind::Const && a.global.kind != K::Ellipsis;
      if (!constant)
        typing_error(
            "the arguments of an exception raised in CUDA code must be constants (a string, a number), "
            "known when the kernel is compiled",
            a.loc);
    }
  }

  // A value of type t can be stored as an item of type `item` (an Optional number stores its value; a bfloat16
  // widens to the item's type; a record, vector or pointer of the same type is copied).
  static bool storable(TypeRef t, TypeRef item) {
    if (t == item && (item->kind() == TypeKind::Record || item->kind() == TypeKind::Vector ||
                      item->kind() == TypeKind::CPointer || item->kind() == TypeKind::VoidPtr))
      return true;
    if (same_record_layout(t, item)) return true;  // a library type's value into numpy's record of its layout
    if (types::is_charseq(item)) return t->kind() == item->kind();  // a string of another width: cut or padded
    if (types::is_time(item))  // a datetime into datetimes (a timedelta into timedeltas) of a unit as fine
      return t->kind() == item->kind() && types::time_unit_factor(types::time_unit(t), types::time_unit(item)) != 0;
    if (item->kind() == TypeKind::Record) return storable_as_record(t, item);
    TypeRef value = types::optional_value(t);
    return (value->is_number() || value->kind() == TypeKind::BFloat16) &&
           can_convert(t, item) != Conversion::Impossible;
  }

  // A tuple stored into (or returned as) a record: field by field, each item storable into its field.
  static bool storable_as_record(TypeRef t, TypeRef record) {
    if (!t->is_tuple() || t->count() != record->count()) return false;
    for (size_t i = 0; i < t->count(); ++i) {
      TypeRef field = record->element(i);
      if (field->kind() == TypeKind::NestedArray || !storable(t->element(i), field)) return false;
    }
    return true;
  }

  // A store into an array view (numba's setitem with slices): a scalar is broadcast to every element, an array
  // of at most the view's dimensions by numpy's rules (lowering/lower_array_assign.cpp).
  void assign_to_view(TypeRef view, TypeRef t, const SourceLoc& loc) {
    TypeRef dtype = view->element(0);
    if (dtype->kind() == TypeKind::Record || dtype->kind() == TypeKind::NestedArray)
      fail(ErrorKind::Unsupported,
           "Unsupported: assignment to a slice of an array of " + dtype->name() + " (assign its items one by one)",
           loc);
    if (t->kind() == TypeKind::Array) {
      if (t->ndim() > view->ndim())
        typing_error("cannot assign a " + std::to_string(t->ndim()) + "-d array to a " + std::to_string(view->ndim()) +
                         "-d array slice (numpy cannot broadcast it)",
                     loc);
      if (!storable(t->element(0), dtype))
        typing_error("cannot store the items of an array of " + t->element(0)->name() + " into an array slice of " +
                         dtype->name(),
                     loc);
      return;
    }
    if (!storable(t, dtype))
      typing_error("cannot store a value of type " + t->name() + " into an array slice of " + dtype->name(), loc);
  }

  void assign(Expr& target, TypeRef t, const SourceLoc& loc) {
    if (target.kind == ExprKind::Var) {
      set_var(target.var, t, loc);
      target.type = fn_.vars[target.var].type;
      return;
    }
    if (target.kind == ExprKind::Tuple) {
      if (!t->is_tuple() || t->count() != target.operands.size())
        typing_error("cannot unpack a value of type " + t->name() + " into " + std::to_string(target.operands.size()) +
                         " targets",
                     target.loc);
      target.type = t;
      for (size_t i = 0; i < target.operands.size(); ++i) assign(*target.operands[i], t->element(i), loc);
      return;
    }
    if (target.kind == ExprKind::Attribute || target.kind == ExprKind::Subscript) {
      if (TypeRef field = record_field_target(target)) {
        if (field->kind() == TypeKind::NestedArray) {  // rec.arr = a: numpy's store into the field's view
          TypeRef view = record_field_value_type(target.operands[0]->type, target.field);
          assign_to_view(view, t, loc);
          target.type = view;
          return;
        }
        if (!storable(t, field))
          typing_error("cannot store a value of type " + t->name() + " into a record field of type " + field->name(),
                       loc);
        target.type = field;
        return;
      }
    }
    if (target.kind == ExprKind::Subscript) {
      std::vector<TypeRef> ts;
      if (!type_operands(target, 0, ts)) return;
      TypeRef ary = ts[0];
      if (ary->kind() == TypeKind::CPointer) {  // p[i] = v
        TypeRef item = pointer_item_type(ary, ts[1], target.operands[1]->loc);
        if (!storable(t, item))
          typing_error("cannot store a value of type " + t->name() + " through a pointer to " + item->name(), loc);
        target.type = item;
        return;
      }
      if (ary->kind() != TypeKind::Array)
        typing_error("cannot assign to an item of a value of type " + ary->name(), target.loc);
      if (ary->readonly()) typing_error("Cannot modify readonly array of type: " + ary->name(), target.loc);
      std::string error;
      TypeRef item = array_getitem_type(ary, ts[1], error);
      if (item == nullptr) typing_error(error, target.operands[1]->loc);
      if (item->kind() == TypeKind::Array) {  // a[1:3] = v, a[:] = b, r[()] = x: numpy's broadcasting store
        assign_to_view(item, t, loc);
        target.type = item;
        return;
      }
      if (!storable(t, item))
        typing_error("cannot store a value of type " + t->name() + " into an array of " + item->name(), loc);
      target.type = item;
      return;
    }
    if (target.kind == ExprKind::Attribute) {
      TypeRef base = type_expr(*target.operands[0]);
      if (base && attribute_entry(base, target.attr))
        typing_error("cannot assign to '" + target.attr + "' of a " + base->name() +
                         ": the components of a vector type are read-only (construct a new value instead)",
                     target.loc);
    }
    fail(ErrorKind::Unsupported, "Unsupported: assignment to this target", target.loc);
  }

  // rec.name, rec['name'] or rec[i] as an assignment target: the field's type; nullptr if the target is not a
  // record field (or its record's type is not known yet).
  TypeRef record_field_target(Expr& target) {
    TypeRef base = type_expr(*target.operands[0]);
    if (base == nullptr || base->kind() != TypeKind::Record) return nullptr;
    return base->element(static_cast<size_t>(field_of(target, base)));
  }

  // The field of `base` that rec.name / rec[key] names (a located TypingError if none), kept in e.field for
  // lowering.
  int field_of(Expr& e, TypeRef record) {
    if (e.kind == ExprKind::Attribute) {
      e.field = record->field_index(e.attr);
      if (e.field < 0) typing_error("Unknown attribute '" + e.attr + "' of type " + record->name(), e.loc);
      return e.field;
    }
    Expr& key = *e.operands[1];
    if (!ir::is_string_constant(key)) type_expr(key);
    std::string error;
    e.field = record_field_index(record, key, error);
    if (e.field < 0) typing_error(error, key.loc);
    return e.field;
  }

  TypeRef type_expr(Expr& e) {
    TypeRef t = compute(e);
    if (t) e.type = t;
    return t;
  }

  // Types all operands; nullptr if any is not known yet.
  bool type_operands(Expr& e, size_t first, std::vector<TypeRef>& out) {
    bool ok = true;
    for (size_t i = first; i < e.operands.size(); ++i) {
      TypeRef t = type_expr(*e.operands[i]);
      out.push_back(t);
      if (t == nullptr) ok = false;
    }
    return ok;
  }

  TypeRef compute(Expr& e) {
    switch (e.kind) {
      case ExprKind::Const:
        switch (e.global.kind) {
          case K::Int:
            if (e.global.is_unsigned) return types::unsigned_integer_literal(static_cast<uint64_t>(e.global.int_value));
            return types::integer_literal(e.global.int_value);
          case K::Float:
            return types::float64();
          case K::Bool:
            return types::boolean_literal(e.global.int_value != 0);
          case K::Complex:
            return types::complex128();
          case K::Str: {  // a value: a fixed-width string of its characters (one NUL for an empty one)
            auto n = std::max<int64_t>(static_cast<int64_t>(ir::string_constant_chars(e.global).size()), 1);
            return e.global.is_bytes ? types::charseq(n) : types::unicode_charseq(n);
          }
          case K::Ellipsis:
            return ellipsis_type();
          default:
            return types::none();
        }
      case ExprKind::Var: {
        TypeRef t = fn_.vars[e.var].type;
        if (t == nullptr && final_)
          typing_error("local variable '" + fn_.vars[e.var].name + "' is used before it is assigned", e.loc);
        return t;
      }
      case ExprKind::Global: {
        if (e.global.kind == K::Builtin) {
          const intrinsics::Intrinsic* in = intrinsics::find(e.global.name);
          if (in && in->kind == intrinsics::Intrinsic::Kind::Value) return in->type({})->result;
        }
        if (e.global.kind == K::NdArray || e.global.kind == K::DeviceArray || e.global.kind == K::Record)
          return e.global.type;
        if (TypeRef value = value_type(e.global)) return value;
        typing_error("cannot use " + e.global.repr + " as a value in CUDA code", e.loc);
      }
      case ExprKind::Slice: {
        for (auto& part : e.operands) {
          if (!part) continue;
          TypeRef t = type_expr(*part);
          if (t == nullptr) return nullptr;
          if (!t->is_integer() && t->kind() != TypeKind::None)
            typing_error("slice indices must be integers, got " + t->name(), part->loc);
        }
        return slice_type(e.operands[2] != nullptr);
      }
      case ExprKind::Binary:
        return type_binary(e);
      case ExprKind::Unary: {
        std::vector<TypeRef> ts;
        if (!type_operands(e, 0, ts)) return nullptr;
        auto sig = resolve_unary(e.op, types::optional_value(ts[0]));
        if (!sig && operator_call(e, ts[0])) return type_call(e);
        if (!sig)
          typing_error(std::string("No implementation of unary operator '") + ir::op_symbol(e.op) + "' for type " +
                           ts[0]->name(),
                       e.loc);
        e.operand_types = sig->params;
        return sig->result;
      }
      case ExprKind::Compare:
        return type_compare(e);
      case ExprKind::BoolOp: {
        std::vector<TypeRef> ts;
        if (!type_operands(e, 0, ts)) return nullptr;
        TypeRef u = ts[0]->unliteral();
        for (size_t i = 0; i < ts.size(); ++i) {
          require_condition(ts[i], *e.operands[i]);
          u = unify(u, ts[i]->unliteral());
          if (u == nullptr)
            typing_error(std::string("Cannot unify the operands of '") + ir::op_symbol(e.op) + "': " + type_list(ts),
                         e.loc);
        }
        return u;
      }
      case ExprKind::IfExp: {
        std::vector<TypeRef> ts;
        if (!type_operands(e, 0, ts)) return nullptr;
        require_condition(ts[0], *e.operands[0]);
        TypeRef u = unify(ts[1]->unliteral(), ts[2]->unliteral());
        if (u == nullptr)
          typing_error(
              "Cannot unify the branches of a conditional expression: " + ts[1]->name() + " and " + ts[2]->name(),
              e.loc);
        return u;
      }
      case ExprKind::Call:
        return type_call(e);
      case ExprKind::Attribute:
        return type_attribute(e);
      case ExprKind::Subscript:
        return type_subscript(e);
      case ExprKind::Tuple: {
        std::vector<TypeRef> ts;
        if (!type_operands(e, 0, ts)) return nullptr;
        for (TypeRef& t : ts) t = t->unliteral();
        return types::tuple(ts);
      }
    }
    return nullptr;
  }

  TypeRef type_binary(Expr& e) {
    std::vector<TypeRef> ts;
    if (!type_operands(e, 0, ts)) return nullptr;
    // An Optional operand is used as its value (numba converts Optional(T) to T); so in unary and comparisons.
    auto sig = resolve_binary(e.op, types::optional_value(ts[0]), types::optional_value(ts[1]));
    if (!sig && operator_call(e, ts[0])) return type_call(e);
    if (!sig)
      typing_error(std::string("No implementation of operator '") + ir::op_symbol(e.op) + "' for operands (" +
                       type_list(ts) + ")",
                   e.loc);
    e.operand_types = sig->params;
    return sig->result;
  }

  TypeRef type_compare(Expr& e) {
    std::vector<TypeRef> ts;
    if (!type_operands(e, 0, ts)) return nullptr;
    // A library's record types compare as its overload of operator.eq, .lt... says (cujit.extending).
    if (e.ops.size() == 1 && (ts[0]->kind() == TypeKind::Record || ts[1]->kind() == TypeKind::Record) &&
        operator_call(e, ts[0]))
      return type_call(e);
    e.operand_types.clear();
    for (size_t i = 0; i < e.ops.size(); ++i) {
      if (e.ops[i] == Op::Is || e.ops[i] == Op::IsNot) {
        // Identity is known for None and Optional values: `x is None`, `x is not None`.
        if (ts[i]->kind() != TypeKind::None && ts[i + 1]->kind() != TypeKind::None)
          typing_error(std::string("Unsupported: '") + ir::op_symbol(e.ops[i]) + "' between " + ts[i]->name() +
                           " and " + ts[i + 1]->name() + " (only comparisons with None are supported)",
                       e.loc);
        e.operand_types.push_back(ts[i]);
        e.operand_types.push_back(ts[i + 1]);
        continue;
      }
      if (e.ops[i] == Op::In || e.ops[i] == Op::NotIn) {
        check_membership(e.ops[i], ts[i], ts[i + 1], e.loc);
        e.operand_types.push_back(ts[i]);
        e.operand_types.push_back(ts[i + 1]);
        continue;
      }
      auto sig = resolve_compare(e.ops[i], types::optional_value(ts[i]), types::optional_value(ts[i + 1]));
      if (!sig)
        typing_error(std::string("No implementation of comparison '") + ir::op_symbol(e.ops[i]) + "' for (" +
                         ts[i]->name() + ", " + ts[i + 1]->name() + ")",
                     e.loc);
      e.operand_types.push_back(sig->params[0]);
      e.operand_types.push_back(sig->params[1]);
    }
    return types::boolean();
  }

  // `item in container` for a tuple (any element equal), a range (an integer it yields) or a fixed-width string (a
  // substring).
  void check_membership(Op op, TypeRef item, TypeRef container, const SourceLoc& loc) {
    bool ok = false;
    if (container->is_tuple()) {
      ok = true;
      for (TypeRef element : container->elements()) ok = ok && resolve_compare(Op::Eq, item, element).has_value();
    } else if (container->kind() == TypeKind::Range) {
      ok = item->is_integer() || item->is_boolean();
    } else if (types::is_charseq(container)) {  // a substring: bytes in bytes, str in str
      ok = item->kind() == container->kind();
    }
    if (!ok)
      typing_error(std::string("No implementation of '") + ir::op_symbol(op) + "' for (" + item->name() + ", " +
                       container->name() + ")",
                   loc);
  }

  static bool is_call_to(const Expr& e, const char* name) {
    return e.kind == ExprKind::Call && e.operands[0]->kind == ExprKind::Global &&
           e.operands[0]->global.kind == K::Builtin && e.operands[0]->global.name == name;
  }

  // Keyword arguments and omitted arguments become positional (once, in the first pass), with Python's
  // errors. `defaults` (a device function's) fill omitted parameters; without them (intrinsics) trailing
  // parameters may be left out.
  void bind_arguments(Expr& e, const std::string& name, const std::vector<std::string>& params,
                      const std::vector<std::optional<ir::GlobalValue>>* defaults) {
    size_t given = e.operands.size() - 1;
    if (e.keywords.empty() && (defaults == nullptr || given >= params.size())) return;
    if (e.keywords.empty() &&
        !std::all_of(defaults->begin() + given, defaults->end(), [](const auto& d) { return d.has_value(); }))
      return;  // too few positional arguments and no defaults for them: the callee's count error
    if (given > params.size())
      typing_error(name + "() takes " + std::to_string(params.size()) + " positional arguments but " +
                       std::to_string(given) + " were given",
                   e.loc);
    std::vector<ir::ExprPtr> positional(params.size());
    for (size_t i = 0; i < given; ++i) positional[i] = std::move(e.operands[1 + i]);
    for (auto& [key, value] : e.keywords) {
      auto it = std::find(params.begin(), params.end(), key);
      if (it == params.end()) typing_error(name + "() got an unexpected keyword argument '" + key + "'", value->loc);
      size_t index = static_cast<size_t>(it - params.begin());
      if (positional[index]) typing_error(name + "() got multiple values for argument '" + key + "'", value->loc);
      positional[index] = std::move(value);
    }
    e.keywords.clear();
    e.operands.resize(1);
    size_t last = positional.size();
    if (defaults == nullptr)
      while (last > 0 && !positional[last - 1]) --last;
    for (size_t i = 0; i < last; ++i) {
      if (!positional[i] && defaults && (*defaults)[i]) {
        positional[i] = std::make_unique<Expr>(ExprKind::Const, e.loc);
        positional[i]->global = *(*defaults)[i];
      }
      if (!positional[i]) typing_error(name + "() missing required argument '" + params[i] + "'", e.loc);
      e.operands.push_back(std::move(positional[i]));
    }
  }

  void bind_intrinsic_arguments(Expr& e, const std::string& name) {
    if (e.keywords.empty()) return;
    const intrinsics::Intrinsic* in = intrinsics::find(name);
    if (in == nullptr || in->params.empty())
      typing_error("keyword arguments are not supported in calls from CUDA code", e.loc);
    bind_arguments(e, name, in->params, nullptr);
  }

  void bind_device_arguments(Expr& e, const ir::GlobalValue& g) {
    // Asked once per callee: typing passes over the function until its types settle.
    auto cached = parameters_.find(g.function.get());
    if (cached == parameters_.end()) cached = parameters_.emplace(g.function.get(), callees_.parameters(g)).first;
    const std::optional<CalleeProvider::Parameters>& params = cached->second;
    if (!params) {
      if (!e.keywords.empty())
        typing_error(g.repr + "() takes positional arguments only (keyword arguments are not supported)", e.loc);
      return;
    }
    for (const auto& d : params->defaults)
      if (d && d->kind != K::Int && d->kind != K::Float && d->kind != K::Bool && d->kind != K::Complex &&
          d->kind != K::None)
        typing_error(g.repr + "(): only numbers, booleans and None are supported as default parameter values", e.loc);
    bind_arguments(e, g.name, params->names, &params->defaults);
  }

  // cuda.shared.array / cuda.local.array: the shape must be a constant int or tuple of ints.
  TypeRef type_memory_array(Expr& e, const std::string& name) {
    if (e.operands.size() < 3 || e.operands.size() > 4) typing_error(name + "() takes a shape and a dtype", e.loc);
    if (type_expr(*e.operands[1]) == nullptr) return nullptr;
    const Expr& shape = *e.operands[1];
    if (!ir::literal_shape(shape))
      typing_error(name + "(): the shape must be a constant integer or a tuple of constant integers", shape.loc);
    TypeRef dtype = dtype_argument(*e.operands[2]);
    if (dtype == nullptr) return nullptr;
    int ndim = static_cast<int>(ir::literal_shape(shape)->size());
    return types::array(dtype, ndim, 'C');
  }

  // A dtype argument: a numba/numpy scalar type, its name as a string, or `array.dtype`.
  TypeRef dtype_argument(Expr& dtype) {
    TypeRef t = nullptr;
    if (dtype.kind == ExprKind::Global && dtype.global.kind == K::TypeObject) {
      t = dtype.global.type;
    } else if (ir::is_string_constant(dtype)) {
      t = types::lookup_scalar(dtype.global.name);
      if (t == nullptr) typing_error("Invalid NumPy dtype specified: '" + dtype.global.name + "'", dtype.loc);
    } else if (dtype.kind == ExprKind::Attribute && dtype.attr == "dtype") {
      TypeRef base = type_expr(*dtype.operands[0]);
      if (base == nullptr) return nullptr;
      if (base->kind() == TypeKind::Array) t = base->element(0);
    } else if (dtype.kind != ExprKind::Global) {  // a number type as a value: a variable, arr.dtype.type...
      TypeRef held = type_expr(dtype);
      if (held == nullptr) return nullptr;
      if (held->kind() == TypeKind::NumberClass) t = held->element(0);
    }
    if (dtype.kind == ExprKind::Global && dtype.global.kind == K::Builtin)  // cuda.float32x2: a vector type
      if (TypeRef vector = types::lookup_vector(dtype.global.name.substr(dtype.global.name.rfind('.') + 1))) t = vector;
    if (t != nullptr && (t->kind() == TypeKind::Record || t->kind() == TypeKind::Vector)) return t;
    if (t == nullptr || !t->is_number() || t->is_literal())
      typing_error("dtype must be a numba or numpy scalar type (or its name), a record type or a vector type",
                   dtype.loc);
    return t;
  }

  TypeRef type_call(Expr& e) {
    std::vector<TypeRef> args;
    Expr& callee = *e.operands[0];
    if (callee.kind == ExprKind::Attribute && callee.attr == "conjugate" && e.operands.size() == 1) {
      TypeRef t = type_expr(*callee.operands[0]);
      if (t == nullptr) return nullptr;
      if (!t->is_number()) typing_error("Unknown attribute 'conjugate' of type " + t->name(), callee.loc);
      e.operand_types = {t->unliteral()};
      return t->unliteral();
    }
    if (callee.kind == ExprKind::Attribute) return type_method_call(e);
    if (callee.kind != ExprKind::Global) {
      TypeRef t = type_expr(callee);
      if (t == nullptr) return nullptr;
      if (!is_value_type(t))
        typing_error("cannot call a value of type " + t->name() + " (only functions, builtins and types are callable)",
                     callee.loc);
      // A type or function held in a variable: calling it is calling the one object its type stands for.
      auto global = std::make_unique<Expr>(ExprKind::Global, callee.loc);
      global->global = value_global(t);
      e.operands[0] = std::move(global);
      return type_call(e);
    }
    const ir::GlobalValue& g = callee.global;
    if (g.kind == K::Builtin && g.name == "tuple" && e.operands.size() == 2 && e.keywords.empty()) {
      TypeRef t = type_expr(*e.operands[1]);  // tuple(t) of a tuple is t
      if (t == nullptr) return nullptr;
      if (!t->is_tuple()) typing_error("tuple() in CUDA code takes a tuple, not " + t->name(), e.loc);
      ir::ExprPtr inner = std::move(e.operands[1]);
      e = std::move(*inner);
      return t;
    }
    if (g.kind == K::Builtin) {
      bind_intrinsic_arguments(e, g.name);
      if (g.name == "cuda.shared.array" || g.name == "cuda.local.array") return type_memory_array(e, g.name);
      if (g.name == "print") return type_print(e);
      if (g.name == "cuda.const.array_like") {
        if (e.operands.size() != 2 || e.operands[1]->kind != ExprKind::Global ||
            e.operands[1]->global.kind != K::NdArray)
          typing_error("cuda.const.array_like() takes a global numpy array", e.loc);
        return e.operands[1]->global.type;
      }
    }
    if (g.kind == K::DeviceFunction) bind_device_arguments(e, g);
    if (g.kind == K::TypeObject && g.type->kind() == TypeKind::Record) return type_record_constructor(e, g);
    if (!e.keywords.empty()) typing_error("keyword arguments are not supported in calls from CUDA code", e.loc);
    if (!type_operands(e, 1, args)) return nullptr;
    std::optional<OpSignature> sig;
    std::string what = g.repr.empty() ? g.name : g.repr;
    if (g.kind == K::Builtin) {
      if (g.name.rfind("cuda.atomic.", 0) == 0) check_atomic_target(*e.operands[1]);
      // math.sqrt(b) and friends of a bfloat16 are numba-cuda's overloads: the cuda.bf16 function of that name.
      if (g.name.rfind("math.", 0) == 0 && args.size() == 1 && args[0]->kind() == TypeKind::BFloat16 &&
          intrinsics::find("cuda.bf16.h" + g.name.substr(5)))
        callee.global.name = "cuda.bf16.h" + g.name.substr(5);
      const intrinsics::Intrinsic* in = intrinsics::find(g.name);
      if (in && in->kind == intrinsics::Intrinsic::Kind::Function && in->type) {
        sig = in->type(args);
        if (sig) fn_.cooperative = fn_.cooperative || in->cooperative;
        std::string why = !sig && in->explain ? in->explain(args) : "";
        if (!why.empty()) typing_error("No implementation of " + what + "(" + type_list(args) + "): " + why, e.loc);
      } else if (g.name.rfind("numpy.", 0) == 0 && args.size() >= 2 &&
                 std::any_of(args.begin(), args.end(), [](TypeRef a) { return a->kind() == TypeKind::Array; })) {
        return type_ufunc(e, g.name, args);
      } else {
        sig = resolve_builtin_call(g.name, args, e.loc);
      }
    } else if (g.kind == K::TypeObject) {
      sig = resolve_type_call(g.type, args);
    } else if (g.kind == K::DeviceFunction) {
      return type_device_call(e, args);
    } else {
      typing_error("Untyped global name '" + what +
                       "': cannot call it from CUDA code (CUDA code calls @cuda.jit(device=True) functions, "
                       "cuda.declare_device declarations, and the builtins, math, numpy and cuda functions cujit "
                       "supports)",
                   callee.loc);
    }
    if (!sig) typing_error("No implementation of " + what + "(" + type_list(args) + ")", e.loc);
    e.operand_types = sig->params;
    return sig->result;
  }

  // Pixel(r, g, b) of a struct class registered with its record type (cujit.register_struct), or a record type
  // called: a new record, its fields given in order or by name, each converted to its field's type.
  TypeRef type_record_constructor(Expr& e, const ir::GlobalValue& g) {
    TypeRef record = g.type;
    const std::string what = g.repr.empty() ? record->name() : g.repr;
    std::vector<std::string> fields;
    for (size_t i = 0; i < record->count(); ++i) fields.push_back(record->field_names()[i]);
    bind_arguments(e, what, fields, nullptr);
    std::vector<TypeRef> args;
    if (!type_operands(e, 1, args)) return nullptr;
    if (args.size() != record->count())
      typing_error(what + "() takes " + std::to_string(record->count()) + " fields (" + join(fields) + "), " +
                       std::to_string(args.size()) + " given",
                   e.loc);
    for (size_t i = 0; i < args.size(); ++i) {
      TypeRef field = record->element(i);
      if (field->kind() == TypeKind::NestedArray || !storable(args[i], field))
        typing_error("cannot store a value of type " + args[i]->name() + " into field '" + fields[i] + "' of type " +
                         field->name(),
                     e.operands[i + 1]->loc);
    }
    e.operand_types = record->elements();
    return record;
  }

  static std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  // np.sin(x, out), np.add(a, b, out): a NumPy ufunc on arrays (or scalars) broadcast into the output array, the
  // last argument (lowering/lower_ufuncs.cpp); its value is the output.
  TypeRef type_ufunc(Expr& e, const std::string& name, const std::vector<TypeRef>& args) {
    TypeRef out = args.back();
    const std::string what = name.substr(name.find('.') + 1);
    if (out->kind() != TypeKind::Array || out->readonly())
      typing_error("np." + what + "() on arrays in CUDA code writes into an output array, its last argument (np." +
                       what + "(x, out)), not a value of type " + out->name(),
                   e.operands.back()->loc);
    std::vector<TypeRef> scalars;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      TypeRef a = args[i];
      if (a->kind() == TypeKind::Array && a->ndim() > out->ndim())
        typing_error("np." + what + "(): a " + std::to_string(a->ndim()) + "-d input does not broadcast to the " +
                         std::to_string(out->ndim()) + "-d output",
                     e.operands[i + 1]->loc);
      scalars.push_back(a->kind() == TypeKind::Array ? a->element(0) : a);
    }
    auto sig = resolve_builtin_call(name, scalars, e.loc);
    if (!sig || !storable(sig->result, out->element(0)))
      typing_error("No implementation of " + name + "(" + type_list(args) + ")", e.loc);
    e.operand_types = args;
    return out;
  }

  // obj.method(args): the intrinsic "<type of obj>.<method>" with obj as its first argument.
  TypeRef type_method_call(Expr& e) {
    Expr& callee = *e.operands[0];
    TypeRef self = type_expr(*callee.operands[0]);
    static const std::set<std::string> reductions{"sum", "prod", "max", "min", "mean"};
    if (self != nullptr && self->kind() == TypeKind::Array && reductions.count(callee.attr) && e.operands.size() == 1 &&
        e.keywords.empty()) {
      return call_with_object_first(e, builtin_value("numpy." + callee.attr));  // a.sum() is np.sum(a)
    }
    if (self != nullptr && types::is_charseq(self) && callee.attr == "isascii" && e.operands.size() == 1)
      return call_with_object_first(e, builtin_value("str.isascii"));  // s.isascii(): str.isascii(s)
    if (self != nullptr && self->kind() == TypeKind::NumberClass && callee.attr == "type") {
      auto global = std::make_unique<Expr>(ExprKind::Global, callee.loc);  // arr.dtype.type(x): a cast
      global->global = value_global(self);
      e.operands[0] = std::move(global);
      return type_call(e);
    }
    std::vector<TypeRef> args;
    if (!type_operands(e, 1, args) || self == nullptr) return nullptr;
    const intrinsics::Intrinsic* in = intrinsics::find(self->name() + "." + callee.attr);
    if (in == nullptr || in->kind != intrinsics::Intrinsic::Kind::Method) {
      if (auto method = extension_member(CalleeProvider::Member::Method, self, callee.attr))
        return call_with_object_first(e, std::move(*method));  // the overload_method's device function
      typing_error("Unknown attribute '" + callee.attr + "' of type " + self->name(), callee.loc);
    }
    if (!e.keywords.empty()) typing_error("keyword arguments are not supported in calls from CUDA code", e.loc);
    args.insert(args.begin(), self);
    auto sig = in->type(args);
    if (!sig)
      typing_error("No implementation of " + self->name() + "." + callee.attr + "(" + type_list(args) + ")", e.loc);
    fn_.cooperative = fn_.cooperative || in->cooperative;
    e.operand_types = sig->params;
    return sig->result;
  }

  // print(items...): string literals, integers, floats and booleans (numba-cuda's printable items).
  TypeRef type_print(Expr& e) {
    if (!e.keywords.empty())
      typing_error("print() takes no keyword arguments in CUDA code (sep, end and file are not supported)", e.loc);
    bool known = true;
    for (size_t i = 1; i < e.operands.size(); ++i) {
      Expr& item = *e.operands[i];
      if (ir::is_string_constant(item)) continue;
      TypeRef t = type_expr(item);
      if (t == nullptr) {
        known = false;
        continue;
      }
      if (!t->is_number() || t->is_complex())
        typing_error("print() in CUDA code prints string literals, integers, floats and booleans, not " + t->name(),
                     item.loc);
    }
    return known ? types::none() : nullptr;
  }

  void check_atomic_target(const Expr& ary) {
    if (ary.kind == ExprKind::Var && fn_.vars[ary.var].holds_local_array)
      typing_error(
          "atomic operations on local arrays are not supported (local memory is private to a thread; "
          "use a plain read-modify-write)",
          ary.loc);
  }

  // obj.name(args...) as the call of `function` with obj first (a.sum() is np.sum(a), an overload_method's
  // implementation takes the value first), typed as that call.
  TypeRef call_with_object_first(Expr& e, ir::GlobalValue function) {
    std::vector<ir::ExprPtr> args;
    args.push_back(std::move(e.operands[0]->operands[0]));  // the object, then the call's arguments
    for (size_t i = 1; i < e.operands.size(); ++i) args.push_back(std::move(e.operands[i]));
    SourceLoc at = e.operands[0]->loc;
    become_call(e, std::move(function), std::move(args), at);
    return type_call(e);
  }

  // `e` becomes the call of `function` with `args` (an operator, an attribute or a method that an intrinsic or a
  // library implements as a function); the callee expression is located at `at`.
  static void become_call(Expr& e, ir::GlobalValue function, std::vector<ir::ExprPtr> args, const SourceLoc& at) {
    auto global = std::make_unique<Expr>(ExprKind::Global, at);
    global->global = std::move(function);
    e.kind = ExprKind::Call;
    e.attr.clear();
    e.ops.clear();
    e.operand_types.clear();
    e.operands.clear();
    e.operands.push_back(std::move(global));
    for (auto& a : args) e.operands.push_back(std::move(a));
  }

  static ir::GlobalValue builtin_value(const std::string& path) {
    ir::GlobalValue g;
    g.kind = K::Builtin;
    g.name = g.repr = path;
    return g;
  }

  // An extension's method or attribute of a value of type `self` (cujit.extending), asked once per (kind, type,
  // name) in this typing.
  std::optional<ir::GlobalValue> extension_member(CalleeProvider::Member kind, TypeRef self, const std::string& name) {
    auto key = std::make_tuple(static_cast<int>(kind), self, name);
    auto it = members_.find(key);
    if (it == members_.end()) it = members_.emplace(key, callees_.member(kind, self->unliteral(), name)).first;
    return it->second;
  }

  // numba compiles the callee for the arguments' types as typed here, literals included: f(3) makes a
  // specialisation for Literal[int](3), which its mangled name shows.
  TypeRef type_device_call(Expr& e, std::vector<TypeRef> args) {
    const ir::GlobalValue& g = e.operands[0]->global;
    // A tuple of constants written as an argument is passed as a tuple of literals, as numba types a constant
    // tuple (the callee can use it as a shape).
    for (size_t i = 0; i < args.size(); ++i) {
      const Expr& a = *e.operands[i + 1];
      if (a.kind != ExprKind::Tuple || a.operands.empty()) continue;
      std::vector<TypeRef> items;
      for (const auto& item : a.operands)
        if (item->type != nullptr && item->type->kind() == TypeKind::IntegerLiteral) items.push_back(item->type);
      if (items.size() == a.operands.size()) args[i] = types::tuple(items);
    }
    auto key = std::make_pair(g.function.get(), args);
    auto it = callee_cache_.find(key);
    if (it == callee_cache_.end()) {
      auto typed = callees_.type_callee(g, args);
      if (!typed) {
        Error err = typed.error();
        if (!err.loc.known()) err.loc = e.loc;
        throw CompileError(err.kind, err.message, err.loc);
      }
      if (*typed == nullptr) {  // a call into this function, with its own argument types: recursion
        if (self_ == nullptr) self_ = recursive_callee_ ? recursive_callee_ : std::make_shared<ir::TypedFunction>();
        it = callee_cache_.emplace(key, self_).first;
      } else {
        it = callee_cache_.emplace(key, *typed).first;
        called_.push_back(*typed);
      }
    }
    e.callee = it->second;
    if (it->second == self_) {
      if (!self_call_loc_.known()) self_call_loc_ = e.loc;
      e.operand_types = args;
      if (declared_return_ != nullptr) return declared_return_;
      if (recursive_return_ == nullptr && final_)
        typing_error(
            "cannot type infer runaway recursion: every return of '" + fn_.name + "' depends on its call to itself",
            e.loc);
      return recursive_return_;
    }
    e.operand_types = it->second->sig.args;
    return it->second->sig.return_type;
  }

  TypeRef type_attribute(Expr& e) {
    std::vector<TypeRef> ts;
    if (!type_operands(e, 0, ts)) return nullptr;
    TypeRef t = ts[0]->unliteral();
    if (t->kind() == TypeKind::Record && t->field_index(e.attr) < 0 && extension_attribute_call(e, t))
      return type_call(e);  // not a field: a library type's attribute
    if (t->kind() == TypeKind::Record) return record_field_value_type(t, field_of(e, t));
    if (t->kind() == TypeKind::Array) {
      if (TypeRef r = array_attribute_type(t, e.attr)) return r;
    }
    if (t->kind() == TypeKind::NumberClass && e.attr == "type") return t;  // arr.dtype.type: the scalar type
    if (t->kind() == TypeKind::Range && (e.attr == "start" || e.attr == "stop" || e.attr == "step")) {
      e.operand_types = {t};
      return t->element(0);
    }
    if (t->is_number() && (e.attr == "real" || e.attr == "imag")) {
      e.operand_types = {t};
      return t->is_complex() ? types::float_(t->bitwidth() / 2) : t;
    }
    if (const intrinsics::Intrinsic* in = attribute_entry(t, e.attr)) {  // float32x4.x, Dim3.y: table rows
      auto sig = in->type({t});
      if (sig) {
        e.operand_types = sig->params;
        return sig->result;
      }
    }
    if (extension_attribute_call(e, t)) return type_call(e);
    typing_error("Unknown attribute '" + e.attr + "' of type " + t->name(), e.loc);
  }

  // An operator no builtin rule takes, overloaded by a library (cujit.extending.overload(operator.add)): the
  // expression becomes the call of operator.add's overloads with its operands (typed as a call from then on). False
  // when none is registered.
  bool operator_call(Expr& e, TypeRef first) {
    const char* name = ir::operator_function(e.kind == ExprKind::Compare ? e.ops[0] : e.op);
    if (name == nullptr) return false;
    auto overloads = extension_member(CalleeProvider::Member::Operator, first, name);
    if (!overloads) return false;
    become_call(e, std::move(*overloads), std::move(e.operands), e.loc);
    return true;
  }

  // self.name of an overload_attribute (cujit.extending): the expression becomes the call of its device function
  // with self (typed as a call from then on). False when the library registers none for the type.
  bool extension_attribute_call(Expr& e, TypeRef t) {
    auto getter = extension_member(CalleeProvider::Member::Attribute, t, e.attr);
    if (!getter) return false;
    std::vector<ir::ExprPtr> object;
    object.push_back(std::move(e.operands[0]));
    become_call(e, std::move(*getter), std::move(object), e.loc);
    return true;
  }

  // The intrinsic table's attribute "<type>.<attr>" of a value of type t, or nullptr.
  static const intrinsics::Intrinsic* attribute_entry(TypeRef t, const std::string& attr) {
    const intrinsics::Intrinsic* in = intrinsics::find(types::optional_value(t)->name() + "." + attr);
    return in && in->kind == intrinsics::Intrinsic::Kind::Attribute ? in : nullptr;
  }

  // p[i] through a CPointer(T) is a T; the index is an integer.
  TypeRef pointer_item_type(TypeRef pointer, TypeRef index, const SourceLoc& loc) {
    if (!index->is_integer())
      typing_error("a pointer (" + pointer->name() + ") is indexed by an integer, not by " + index->name(), loc);
    return pointer->element(0);
  }

  TypeRef type_subscript(Expr& e) {
    // The container is typed once: typing it again for the index would double the work per level of
    // `t[0][0]...`.
    TypeRef base = type_expr(*e.operands[0]);
    if (base && base->kind() == TypeKind::Record) return record_field_value_type(base, field_of(e, base));
    std::vector<TypeRef> ts{base};
    if (!type_operands(e, 1, ts) || base == nullptr) return nullptr;
    if (base->kind() == TypeKind::CPointer) return pointer_item_type(base, ts[1], e.operands[1]->loc);
    if (base->kind() == TypeKind::Array) {
      std::string error;
      TypeRef r = array_getitem_type(base, ts[1], error);
      if (r == nullptr) typing_error(error, e.operands[1]->loc);
      return r;
    }
    if (base->kind() == TypeKind::Range) {
      if (!ts[1]->is_integer())
        typing_error("range indices must be integers, not " + ts[1]->name(), e.operands[1]->loc);
      return base->element(0);
    }
    if (base->is_tuple()) {
      const Expr& index = *e.operands[1];
      if (ts[1]->kind() == TypeKind::IntegerLiteral) {
        int64_t i = ts[1]->literal_value();
        int64_t n = static_cast<int64_t>(base->count());
        if (i < 0) i += n;
        if (i < 0 || i >= n) typing_error("tuple index out of range", index.loc);
        return base->element(static_cast<size_t>(i));
      }
      if (base->kind() == TypeKind::UniTuple && ts[1]->is_integer()) return base->element(0);
      if (base->count() == 0) typing_error("tuple index out of range", index.loc);
      typing_error("cannot index " + base->name() + " with a value of type " + ts[1]->name(), index.loc);
    }
    typing_error("cannot index a value of type " + base->name(), e.loc);
  }

  ir::Function& fn_;
  CalleeProvider& callees_;
  std::vector<std::shared_ptr<ir::TypedFunction>>& called_;
  std::map<std::pair<void*, std::vector<TypeRef>>, std::shared_ptr<ir::TypedFunction>> callee_cache_;
  std::map<void*, std::optional<CalleeProvider::Parameters>> parameters_;  // per callee, see bind_device_arguments
  std::map<std::tuple<int, TypeRef, std::string>, std::optional<ir::GlobalValue>> members_;  // extension_member
  bool final_ = false;
  bool changed_ = false;
  // The callee of its calls to itself (a placeholder named as the function once it is typed) and the return type
  // they have: the declared one, or the one its returns gave in the last round of inference.
  std::shared_ptr<ir::TypedFunction> self_, recursive_callee_;
  TypeRef declared_return_ = nullptr;
  TypeRef recursive_return_ = nullptr;
  SourceLoc self_call_loc_;  // the first call to itself
  TypeRef returns_ = nullptr;
  SourceLoc value_return_loc_;  // the first `return <value>` (not None): where a kernel's return is reported
  bool returns_none_ = false;
};

}  // namespace

Expected<TypeRef> infer_types(ir::Function& fn, const TypingRequest& request, CalleeProvider& callees,
                              std::vector<std::shared_ptr<ir::TypedFunction>>& called) {
  try {
    return Inferer(fn, callees, called).run(request);
  } catch (CompileError& e) {
    return e.error();
  }
}

}  // namespace cujit::typing
