// The static shared memory a kernel declares: its cuda.shared.array buffers of
// constant shape and those of every device function it calls. Known after
// typing, so a kernel over the limit of every CUDA device fails at compile time,
// naming the array, instead of at load time in ptxas.
#include <set>

#include "cujit/codegen.h"

namespace cujit::codegen {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;

struct SharedArray {
  const ir::Function* fn;
  std::string variable;  // the name it is assigned to, or empty
  SourceLoc loc;
  TypeRef type;
  std::vector<int64_t> shape;
  int64_t bytes;
};

class SharedArrayCollector {
 public:
  std::vector<SharedArray> arrays;

  void function(const ir::TypedFunction& tf) {
    if (!seen_.insert(&tf).second) return;
    fn_ = tf.fn.get();
    block(fn_->body);
    for (const auto& callee : tf.callees) function(*callee);
  }

 private:
  void block(const std::vector<ir::StmtPtr>& stmts) {
    for (const auto& s : stmts) statement(*s);
  }

  void statement(const Stmt& s) {
    variable_.clear();
    if (s.kind == ir::StmtKind::Assign && s.target && s.target->kind == ExprKind::Var)
      variable_ = fn_->vars[s.target->var].name;
    if (s.value) expression(*s.value);
    variable_.clear();
    if (s.target) expression(*s.target);
    for (const auto& a : s.range_args) expression(*a);
    block(s.body);
    block(s.orelse);
  }

  void expression(const Expr& e) {
    if (e.kind == ExprKind::Call && !e.operands.empty() && e.operands[0]->kind == ExprKind::Global &&
        e.operands[0]->global.kind == ir::GlobalValue::Kind::Builtin &&
        e.operands[0]->global.name == "cuda.shared.array" && e.type != nullptr && e.operands.size() > 1) {
      if (auto shape = ir::literal_shape(*e.operands[1])) {
        int64_t n = 1;
        for (int64_t d : *shape) n = d > 0 && n > INT64_MAX / d / 16 ? INT64_MAX / 16 : n * d;
        if (n > 0) arrays.push_back({fn_, variable_, e.loc, e.type, *shape, n * types::itemsize(e.type->element(0))});
      }
    }
    for (const auto& o : e.operands)
      if (o) expression(*o);
    for (const auto& kw : e.keywords) expression(*kw.second);
  }

  std::set<const ir::TypedFunction*> seen_;
  const ir::Function* fn_ = nullptr;
  std::string variable_;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::optional<LocatedError> check_static_shared_memory(const ir::TypedFunction& kernel) {
  SharedArrayCollector collector;
  collector.function(kernel);
  int64_t total = 0;
  const SharedArray* largest = nullptr;
  for (const SharedArray& a : collector.arrays) {
    total = total > INT64_MAX - a.bytes ? INT64_MAX : total + a.bytes;
    if (largest == nullptr || a.bytes > largest->bytes) largest = &a;
  }
  if (total <= kMaxStaticSharedBytes) return std::nullopt;
  std::string name = largest->variable.empty() ? "a shared array" : "shared array '" + largest->variable + "'";
  if (largest->fn != kernel.fn.get()) name += " (in device function '" + largest->fn->qualname + "')";
  std::string message =
      "kernel '" + kernel.fn->qualname + "' declares " + std::to_string(total) +
      " bytes of static shared memory, more than the " + std::to_string(kMaxStaticSharedBytes) +
      " bytes (48 KiB) a CUDA device allows: " + name + " of " + largest->type->element(0)->name() + ", shape " +
      shape_text(largest->shape) + ", takes " + std::to_string(largest->bytes) +
      " bytes. Larger buffers need dynamic shared memory: cuda.shared.array(0, dtype) with the size given at launch "
      "(kernel[grid, block, stream, sharedmem]).";
  return LocatedError{Error{ErrorKind::TypingError, message, largest->loc}, largest->fn};
}

}  // namespace cujit::codegen
