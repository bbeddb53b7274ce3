// Type inference over cujit IR with numba's rules: operator templates rated
// by conversion cost, NumPy-style unification of variables, literal ints,
// range index types, builtins, math functions and device-function calls.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cujit/conversions.h"
#include "cujit/error.h"
#include "cujit/ir.h"

namespace cujit::typing {

// Compiles (types) a called device function for concrete argument types.
class CalleeProvider {
 public:
  virtual ~CalleeProvider() = default;
  virtual Expected<std::shared_ptr<ir::TypedFunction>> type_callee(const ir::GlobalValue& fn,
                                                                   const std::vector<TypeRef>& argtypes) = 0;
  // A Python function's parameter names and default values (constants; nullopt where there is no default),
  // for keyword arguments and omitted arguments. nullopt: the callee takes positional arguments only.
  struct Parameters {
    std::vector<std::string> names;
    std::vector<std::optional<ir::GlobalValue>> defaults;
  };
  virtual std::optional<Parameters> parameters(const ir::GlobalValue& /*fn*/) { return std::nullopt; }
  // The extension API (cujit.extending): the device function that implements `self.name(...)` or `self.name` for
  // a value of type `self` (called with the value first), from overload_method / overload_attribute; or
  // (Operator) the overloads of Python's `operator.name` (an operator no builtin rule takes for `self`, the first
  // operand, called with the operands); nullopt when none is registered.
  enum class Member { Method, Attribute, Operator };
  virtual std::optional<ir::GlobalValue> member(Member /*kind*/, TypeRef /*self*/, const std::string& /*name*/) {
    return std::nullopt;
  }
};

std::optional<OpSignature> resolve_binary(ir::Op op, TypeRef lhs, TypeRef rhs);
std::optional<OpSignature> resolve_unary(ir::Op op, TypeRef operand);
std::optional<OpSignature> resolve_compare(ir::Op op, TypeRef lhs, TypeRef rhs);
// NumPy's arithmetic ufuncs that are an operator on scalars ("numpy.add" -> +), by path.
const std::unordered_map<std::string, ir::Op>& numpy_operators();
// range(...) with 1-3 arguments: the index type, or nullptr.
TypeRef resolve_range(const std::vector<TypeRef>& args);

// Builtins, math functions, numpy scalar constructors, and casts by calling a
// type. `name` is the resolved path ("abs", "math.sqrt"); nullopt if the
// builtin does not accept these arguments. Throws CompileError for unknown names.
std::optional<OpSignature> resolve_builtin_call(const std::string& name, const std::vector<TypeRef>& args,
                                                const SourceLoc& loc);
// A cast by calling a type object (int32(x), np.float32(x)).
std::optional<OpSignature> resolve_type_call(TypeRef target, const std::vector<TypeRef>& args);

struct TypingRequest {
  std::vector<TypeRef> args;
  TypeRef declared_return = nullptr;  // nullptr: infer
  bool kernel = false;                // a kernel returns nothing: a `return <value>` is an error at its line
  // The callee its calls to itself get (the callee provider answers nullptr for them): a placeholder the caller
  // makes the function's own name and signature once it is typed and named. nullptr: typing makes one.
  std::shared_ptr<ir::TypedFunction> recursive_callee;
};

// Types `fn` in place for `request`. Returns the concrete return type.
Expected<TypeRef> infer_types(ir::Function& fn, const TypingRequest& request, CalleeProvider& callees,
                              std::vector<std::shared_ptr<ir::TypedFunction>>& called);

}  // namespace cujit::typing
