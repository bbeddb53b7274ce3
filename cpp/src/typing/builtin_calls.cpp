// Typing of calls to builtins (abs, min, max, int, float, bool, round,
// complex), math functions (cudamath's templates), numpy's scalar ufuncs and
// casts by calling a type (int32(x), np.float32(x)).
#include <functional>
#include <unordered_map>

#include "cujit/conversions.h"
#include "cujit/typing.h"
#include "typing_internal.h"

namespace cujit::typing {
namespace {

using Resolver = std::function<std::optional<OpSignature>(const std::vector<TypeRef>&)>;

bool all_numbers(const std::vector<TypeRef>& args) {
  for (TypeRef a : args)
    if (!a->is_number()) return false;
  return true;
}

// cudamath's unary template: float32 -> float32, float64 and integers -> float64.
std::optional<OpSignature> float_unary(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || !all_numbers(args) || args[0]->is_complex()) return std::nullopt;
  return choose_overload({{{types::int64()}, types::float64()},
                          {{types::uint64()}, types::float64()},
                          {{types::float32()}, types::float32()},
                          {{types::float64()}, types::float64()}},
                         args);
}

std::optional<OpSignature> float_binary(const std::vector<TypeRef>& args) {
  if (args.size() != 2 || !all_numbers(args) || args[0]->is_complex() || args[1]->is_complex()) return std::nullopt;
  return choose_overload({{{types::float32(), types::float32()}, types::float32()},
                          {{types::float64(), types::float64()}, types::float64()}},
                         args);
}

// math.pow also has (float, int32) signatures (cudamath's Math_pow).
std::optional<OpSignature> pow_sig(const std::vector<TypeRef>& args) {
  if (args.size() != 2 || !all_numbers(args) || args[0]->is_complex() || args[1]->is_complex()) return std::nullopt;
  return choose_overload({{{types::float32(), types::float32()}, types::float32()},
                          {{types::float64(), types::float64()}, types::float64()},
                          {{types::float32(), types::int32()}, types::float32()},
                          {{types::float64(), types::int32()}, types::float64()}},
                         args);
}

std::optional<OpSignature> float_predicate(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || !all_numbers(args) || args[0]->is_complex()) return std::nullopt;
  return OpSignature{{args[0]->unliteral()}, types::boolean()};
}

std::optional<OpSignature> cast_to(TypeRef target, const std::vector<TypeRef>& args) {
  if (args.empty() && target->kind() == TypeKind::FP8) return OpSignature{{}, target};  // numba-cuda's fp8_e4m3()
  if (args.size() != 1) return std::nullopt;
  // bfloat16(raw): numba-cuda's __nv_bfloat16 from an __nv_bfloat16_raw (cujit's uint16x1, cuda.fp8's raw values).
  if (target->kind() == TypeKind::BFloat16 && args[0]->kind() == TypeKind::Vector && args[0]->name() == "uint16x1")
    return OpSignature{{args[0]}, target};
  // fp8 values convert to and from numbers only by such explicit casts (float32(f8), fp8_e4m3(x)), as in
  // numba-cuda; a bfloat16 casts to any real number the same way (float32(b), int32(b)).
  TypeKind from = args[0]->kind();
  bool narrow = from == TypeKind::FP8 || from == TypeKind::BFloat16 || target->kind() == TypeKind::FP8;
  if (narrow && (args[0]->is_number() || from == TypeKind::FP8 || from == TypeKind::BFloat16) &&
      !args[0]->is_complex() && !target->is_complex())
    return OpSignature{{args[0]->unliteral()}, target};
  if (!args[0]->is_number()) return std::nullopt;
  if (args[0]->is_complex() && !target->is_complex()) return std::nullopt;
  return OpSignature{{args[0]->unliteral()}, target};
}

std::optional<OpSignature> abs_sig(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || !args[0]->is_number()) return std::nullopt;
  TypeRef t = args[0]->unliteral();
  if (t->is_boolean()) return OpSignature{{types::int8()}, types::int8()};
  if (t->is_complex()) return OpSignature{{t}, types::float_(t->bitwidth() / 2)};
  return OpSignature{{t}, t};
}

std::optional<OpSignature> min_max_sig(const std::vector<TypeRef>& args) {
  std::vector<TypeRef> items = args;
  if (args.size() == 1 && args[0]->is_tuple()) {
    items.clear();
    for (size_t i = 0; i < args[0]->count(); ++i) items.push_back(args[0]->element(i));
  }
  if (items.size() < 2 || !all_numbers(items)) return std::nullopt;
  TypeRef u = items[0]->unliteral();
  for (TypeRef t : items) {
    if (t->is_complex()) return std::nullopt;
    u = unify(u, t->unliteral());
  }
  return OpSignature{std::vector<TypeRef>(args.size() == 1 ? 1 : items.size(), args.size() == 1 ? args[0] : u), u};
}

std::optional<OpSignature> round_sig(const std::vector<TypeRef>& args) {
  if (args.empty() || args.size() > 2 || !args[0]->is_number() || args[0]->is_complex()) return std::nullopt;
  TypeRef t = args[0]->unliteral();
  if (args.size() == 1) return OpSignature{{t->is_float() ? t : types::int64()}, types::int64()};
  if (!args[1]->is_integer()) return std::nullopt;
  return choose_overload(
      {{{types::float32(), types::int64()}, types::float32()}, {{types::float64(), types::int64()}, types::float64()}},
      args);
}

// np.sum(a), a.sum() and the other whole-array reductions, as numba types them: a sum or product of integers
// (or booleans) is an int64 (uint64 for unsigned ones), of floats or complex numbers their own type; a min or max
// the array's dtype; a mean of integers a float64.
std::optional<OpSignature> reduction_sig(const std::string& name, const std::vector<TypeRef>& args) {
  if (args.size() != 1 || args[0]->kind() != TypeKind::Array) return std::nullopt;
  TypeRef dtype = args[0]->element(0);
  if (!dtype->is_number()) return std::nullopt;
  bool integral = dtype->is_integer() || dtype->is_boolean();
  TypeRef result = dtype;
  if (name == "sum" || name == "prod")
    result = integral ? (dtype->is_integer() && !dtype->is_signed() ? types::uint64() : types::int64()) : dtype;
  else if (name == "mean")
    result = integral ? types::float64() : dtype;
  else if (dtype->is_complex())
    return std::nullopt;  // (min and max of complex numbers: not numba's)
  return OpSignature{{args[0]}, result};
}

}  // namespace

// NumPy's arithmetic ufuncs on scalars are their operators (np.add(a, b) is a + b): by name, the operator.
const std::unordered_map<std::string, ir::Op>& numpy_operators() {
  static const std::unordered_map<std::string, ir::Op> table = {{"numpy.add", ir::Op::Add},
                                                                {"numpy.subtract", ir::Op::Sub},
                                                                {"numpy.multiply", ir::Op::Mul},
                                                                {"numpy.divide", ir::Op::Div},
                                                                {"numpy.true_divide", ir::Op::Div},
                                                                {"numpy.floor_divide", ir::Op::FloorDiv},
                                                                {"numpy.remainder", ir::Op::Mod},
                                                                {"numpy.mod", ir::Op::Mod},
                                                                {"numpy.bitwise_and", ir::Op::BitAnd},
                                                                {"numpy.bitwise_or", ir::Op::BitOr},
                                                                {"numpy.bitwise_xor", ir::Op::BitXor},
                                                                {"numpy.left_shift", ir::Op::LShift},
                                                                {"numpy.right_shift", ir::Op::RShift}};
  return table;
}

namespace {

std::optional<OpSignature> complex_sig(const std::vector<TypeRef>& args) {
  if (args.empty() || args.size() > 2 || !all_numbers(args)) return std::nullopt;
  if (args.size() == 1) return cast_to(types::complex128(), args);
  return OpSignature{{types::float64(), types::float64()}, types::complex128()};
}

const std::unordered_map<std::string, Resolver>& registry() {
  static const std::unordered_map<std::string, Resolver> table = [] {
    std::unordered_map<std::string, Resolver> t;
    for (const char* f : {"sqrt",  "sin",   "cos",   "tan",   "asin",   "acos", "atan",    "sinh",   "cosh", "tanh",
                          "asinh", "acosh", "atanh", "exp",   "expm1",  "exp2", "log",     "log1p",  "log2", "log10",
                          "fabs",  "erf",   "erfc",  "gamma", "lgamma", "cbrt", "degrees", "radians"})
      t[std::string("math.") + f] = float_unary;
    for (const char* f : {"atan2", "pow", "hypot", "copysign", "fmod"}) t[std::string("math.") + f] = float_binary;
    for (const char* f : {"floor", "ceil", "trunc"}) t[std::string("math.") + f] = float_unary;
    t["math.pow"] = pow_sig;
    for (const char* f : {"isnan", "isinf", "isfinite"}) t[std::string("math.") + f] = float_predicate;
    // numpy's ufuncs on scalars keep float results (np.floor returns a float).
    for (const char* f : {"sqrt", "sin",     "cos",     "tan",     "arcsin", "arccos", "arctan", "sinh",    "cosh",
                          "tanh", "arcsinh", "arccosh", "arctanh", "exp",    "expm1",  "exp2",   "log",     "log1p",
                          "log2", "log10",   "fabs",    "cbrt",    "floor",  "ceil",   "trunc",  "degrees", "radians"})
      t[std::string("numpy.") + f] = float_unary;
    for (const char* f : {"arctan2", "hypot", "copysign", "fmod", "power"}) t[std::string("numpy.") + f] = float_binary;
    for (const char* f : {"isnan", "isinf", "isfinite"}) t[std::string("numpy.") + f] = float_predicate;
    t["numpy.abs"] = abs_sig;
    t["numpy.absolute"] = abs_sig;
    t["abs"] = abs_sig;
    t["len"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() != 1) return std::nullopt;
      if (a[0]->kind() == TypeKind::Array && a[0]->ndim() >= 1) return OpSignature{{a[0]}, types::int64()};
      if (a[0]->is_tuple()) return OpSignature{{a[0]}, types::integer_literal(static_cast<int64_t>(a[0]->count()))};
      if (a[0]->kind() == TypeKind::Range || types::is_charseq(a[0])) return OpSignature{{a[0]}, types::int64()};
      return std::nullopt;
    };
    t["str.isascii"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {  // a fixed-width string's
      if (a.size() != 1 || !types::is_charseq(a[0])) return std::nullopt;
      return OpSignature{{a[0]}, types::boolean()};
    };
    // range(...) as a value (len, indexing, `in`, zip and enumerate walk it): {start, stop, step}.
    t["range"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.empty() || a.size() > 3) return std::nullopt;
      TypeRef index = resolve_range(a);
      if (index == nullptr) return std::nullopt;
      return OpSignature{std::vector<TypeRef>(a.size(), index), types::range(index)};
    };
    // divmod(a, b): (a // b, a % b), by the operators' rules.
    t["divmod"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() != 2) return std::nullopt;
      auto quotient = resolve_binary(ir::Op::FloorDiv, a[0], a[1]);
      auto remainder = resolve_binary(ir::Op::Mod, a[0], a[1]);
      if (!quotient || !remainder || quotient->result != remainder->result) return std::nullopt;
      return OpSignature{quotient->params, types::uni_tuple(quotient->result, 2)};
    };
    // passes/narrow_optionals.cpp: an Optional's value where a test proved it is not None.
    t["$optional_value"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() != 1) return std::nullopt;
      return OpSignature{{a[0]}, types::optional_value(a[0])};
    };
    for (const char* f : {"sum", "prod", "max", "amax", "min", "amin", "mean"})
      t[std::string("numpy.") + f] = [f](const std::vector<TypeRef>& a) { return reduction_sig(f, a); };
    for (const auto& [path, op] : numpy_operators())
      t[path] = [op = op](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
        if (a.size() != 2) return std::nullopt;
        return resolve_binary(op, types::optional_value(a[0]), types::optional_value(a[1]));
      };
    t["numpy.minimum"] = min_max_sig;
    t["numpy.maximum"] = min_max_sig;
    t["min"] = min_max_sig;
    t["max"] = min_max_sig;
    t["round"] = round_sig;
    t["complex"] = complex_sig;
    // int(x) keeps integer types and gives int64 otherwise; float(x) keeps float types.
    t["int"] = [](const std::vector<TypeRef>& a) {
      if (a.size() == 1 && a[0]->is_integer()) return cast_to(a[0]->unliteral(), a);
      return cast_to(types::int64(), a);
    };
    t["float"] = [](const std::vector<TypeRef>& a) -> std::optional<OpSignature> {
      if (a.size() == 1 && a[0]->is_boolean()) return std::nullopt;
      if (a.size() == 1 && a[0]->is_float()) return cast_to(a[0], a);
      return cast_to(types::float64(), a);
    };
    t["bool"] = [](const std::vector<TypeRef>& a) { return cast_to(types::boolean(), a); };
    return t;
  }();
  return table;
}

}  // namespace

// cffi's ffi.from_buffer(array) in a kernel: a CPointer to the array's
// contiguous data (docs/numba_abi.md: Kernel arguments), with numba's messages for what it refuses.
OpSignature from_buffer_sig(const std::vector<TypeRef>& args, const SourceLoc& loc) {
  if (args.size() != 1) fail(ErrorKind::TypingError, "from_buffer() takes exactly one argument (an array)", loc);
  TypeRef a = args[0];
  if (a->kind() != TypeKind::Array)
    fail(ErrorKind::TypingError, "from_buffer() expected a buffer object, got " + a->name(), loc);
  if (a->layout() != 'C' && a->layout() != 'F')
    fail(ErrorKind::TypingError, "from_buffer() unsupported on non-contiguous buffers (got " + a->name() + ")", loc);
  if (a->layout() == 'F' && a->ndim() > 1)
    fail(ErrorKind::TypingError,
         "from_buffer() only supports multidimensional arrays with C layout (got " + a->name() + ")", loc);
  return OpSignature{{a}, types::cpointer(a->element(0))};
}

std::optional<OpSignature> resolve_builtin_call(const std::string& name, const std::vector<TypeRef>& args,
                                                const SourceLoc& loc) {
  if (name == "ffi.from_buffer") return from_buffer_sig(args, loc);
  auto it = registry().find(name);
  if (it == registry().end()) {
    fail(ErrorKind::TypingError, "Untyped global name '" + name + "': cannot call it from CUDA code", loc);
  }
  return it->second(args);
}

// Casts by calling a type object: int32(x), np.float32(x), types.float64(x).
std::optional<OpSignature> resolve_type_call(TypeRef target, const std::vector<TypeRef>& args) {
  return cast_to(target, args);
}

}  // namespace cujit::typing
