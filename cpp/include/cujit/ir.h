// cujit IR: a small tree IR of statements and expressions with source
// locations, in the spirit of Halide's IR. The frontend builds it from the
// Python AST with every non-local name already resolved; typing fills in the
// `type` fields; lowering walks it to emit LLVM IR.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cujit/error.h"
#include "cujit/link_input.h"
#include "cujit/types.h"

namespace cujit::ir {

enum class Op {
  // binary
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  LShift,
  RShift,
  BitOr,
  BitXor,
  BitAnd,
  // unary
  UAdd,
  USub,
  Invert,
  Not,
  // comparison
  Eq,
  NotEq,
  Lt,
  LtE,
  Gt,
  GtE,
  // membership (Compare only): `x in container`, `x not in container`
  In,
  NotIn,
  // identity (Compare only): `x is None`, `x is not None`
  Is,
  IsNot,
  // boolean
  And,
  Or,
};
const char* op_symbol(Op op);
// The function of Python's operator module an operator calls ("add" for +, "lt" for <, "neg" for unary -), or
// nullptr (and, or, is): what a library overloads to give its types an operator (cujit.extending).
const char* operator_function(Op op);

// A function's text for a location where it has no source lines (one read from bytecode): the line to show
// and a caret line under `loc`, or "" for none.
using ExcerptText = std::function<std::string(const SourceLoc&)>;

// "File "f.py", line 3 (f.py:3):" then the source line and a caret under `loc` (from `excerpt` where `lines`
// do not hold the line).
std::string format_source_excerpt(const std::string& filename, const std::vector<std::string>& lines, int first_line,
                                  const SourceLoc& loc, const ExcerptText& excerpt = {});

struct TypedFunction;  // a callee compiled for concrete argument types

// A name from outside the function (global, closure cell, builtin), frozen
// at compile time.
struct GlobalValue {
  enum class Kind {
    Int,
    Float,
    Bool,
    None,
    Complex,
    Module,
    Builtin,
    DeviceFunction,
    TypeObject,
    Object,
    NdArray,
    Str,
    Ellipsis,
    ExceptionClass,
    Tuple,  // a tuple of constants (numbers, None, arrays, tuples of them): the frontend builds it as a tuple
            // expression
    InnerFunction,  // a function defined in the function (def or lambda): `function` holds its ir::Function, whose
                    // calls passes::inline_inner_functions inlines before typing
    DeviceArray,  // a device array the function captures (a global or closure variable), by reference: its data
                  // pointer in `int_value`, `shape` and `strides`, its array type in `type` (numba-cuda's capture)
    Record  // a record constant (numpy's np.void, a library type's value): its bytes in `data`, its type in `type`
  };
  Kind kind = Kind::None;
  std::string name;  // module / builtin path ("math", "math.sqrt", "abs", "numpy.float32", "cuda.grid"); Str: the text
  int64_t int_value = 0;  // Int, Bool; Object: an opaque handle of the resolver; DeviceFunction: its identity
  bool is_unsigned = false;  // Int: int_value holds the bits of a uint64 value >= 2**63 (typed uint64, as numba)
  bool is_bytes = false;  // Str: a bytes constant (`name` holds its bytes), not a str (UTF-8 text)
  double float_value = 0;  // Float; Complex real part
  double imag_value = 0;  // Complex imaginary part
  TypeRef type = nullptr;  // TypeObject: the numba type it names; NdArray: its (readonly, C) array type
  std::vector<int64_t> shape;  // NdArray, DeviceArray: its shape
  std::vector<int64_t> strides;  // DeviceArray: its strides in bytes
  std::string data;  // NdArray: its bytes (C order), frozen at compile time; Record: its bytes
  std::shared_ptr<void> function;  // DeviceFunction, ExceptionClass: resolver-owned handle of the Python object;
                                   // InnerFunction: its ir::Function
  std::string repr;  // how to name it in messages
  std::vector<GlobalValue> items;  // Tuple: its items
};

enum class ExprKind {
  Const,  // literal: value in `global` (Int/Float/Bool/None/Complex)
  Var,  // local variable `var`
  Global,  // resolved outside name: `global`
  Binary,  // operands[0] op operands[1]
  Unary,  // op operands[0]
  Compare,  // operands[0] ops[0] operands[1] ops[1] operands[2] ...
  BoolOp,  // operands joined by op (And/Or), short-circuit
  IfExp,  // operands: test, body, orelse
  Call,  // operands[0] is the callee expression; the rest are arguments
  Attribute,  // operands[0].attr
  Subscript,  // operands[0][operands[1]]
  Tuple,  // (operands...)
  Slice,  // lower:upper:step; operands are null where omitted (always 3 operands)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  Op op = Op::Add;
  std::vector<Op> ops;
  std::vector<ExprPtr> operands;
  int var = -1;
  GlobalValue global;
  std::string attr;
  std::vector<std::pair<std::string, ExprPtr>> keywords;  // Call keyword arguments

  // Filled in by typing.
  TypeRef type = nullptr;
  TypeRef operand_type = nullptr;  // the type operands are converted to (Binary, Unary, Compare pairs)
  std::vector<TypeRef> operand_types;  // Compare: one per pair; Call: the callee's parameter types
  std::shared_ptr<TypedFunction> callee;  // Call to a device function
  int field = -1;  // Attribute / Subscript of a record (and such an assignment target): the field's index

  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
};

// Raise: `value` is the exception class (a Global of kind ExceptionClass) or a Call of it with constant
// arguments; `assert c, msg` is built as `if not c: raise AssertionError(msg)`.
enum class StmtKind { Assign, ExprStmt, If, While, ForRange, Break, Continue, Return, Pass, Raise };

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  ExprPtr target;  // Assign/ForRange: a Var, a Tuple of targets, or a Subscript
  ExprPtr value;  // Assign value, ExprStmt, If/While test, Return value (may be null)
  std::vector<ExprPtr> range_args;  // ForRange: start, stop, step as written (1-3)
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
  // ForRange from `for x in literal_unroll(t)`: its body starts `x = $t[$index]`; typing versions the body per
  // element of a heterogeneous tuple t (typing/literal_unroll.cpp) and clears the mark.
  bool literal_unroll = false;

  // Filled in by typing.
  TypeRef range_type = nullptr;  // ForRange: the index type
  Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};

// A string literal (print items, dtype names, record field names; as a value, a fixed-width string: typing).
bool is_string_constant(const Expr& e);
// The characters of a string constant as its fixed-width string holds them: a str's code points (its UTF-8
// decoded), a bytes constant's bytes.
std::vector<uint32_t> string_constant_chars(const GlobalValue& g);

// Nodes the passes that rewrite the IR build: a read of variable `v`; an integer (or, with `kind`, a boolean)
// constant; `var = value`.
ExprPtr var_expr(int v, SourceLoc loc);
ExprPtr int_expr(int64_t value, SourceLoc loc, GlobalValue::Kind kind = GlobalValue::Kind::Int);
StmtPtr assign_stmt(int var, ExprPtr value, SourceLoc loc);
// A deep copy of `e` (null for null) as typing has not seen it (its `field` kept), each node first offered to
// `substitute`: what it returns (not null) stands in that node's place.
ExprPtr copy_expr(const Expr* e, const std::function<ExprPtr(const Expr&)>& substitute = {});

// The constant shape of cuda.shared.array / cuda.local.array: an integer
// literal or a tuple of them (after typing); nullopt otherwise.
std::optional<std::vector<int64_t>> literal_shape(const Expr& shape);

struct Variable {
  std::string name;
  TypeRef type = nullptr;
  bool is_param = false;
  bool holds_local_array = false;  // assigned from cuda.local.array (atomics on it are rejected)
  // An inner function's variable that is the enclosing function's variable `captured` (a name it reads from,
  // or declares nonlocal in, the function it is defined in); -1 for its own.
  int captured = -1;
};

struct Function {
  std::string name;  // __name__
  std::string qualname;  // __qualname__
  std::string module;  // __module__
  std::string filename;
  std::vector<std::string> source_lines;  // the function's source, for messages
  int first_line = 1;  // line of source_lines[0] in `filename`
  ExcerptText excerpt;  // without source lines: the line and caret of a location (read from bytecode)
  std::vector<Variable> vars;
  std::vector<int> params;  // indices into vars
  // An inner function's default parameter values, one per parameter (null where none), expressions of the
  // function it is defined in.
  std::vector<ExprPtr> param_defaults;
  const Function* enclosing = nullptr;  // an inner function's: the function it is defined in
  std::vector<StmtPtr> body;
  // Filled in by typing: it calls an intrinsic that needs a cooperative launch (cuda.cg).
  bool cooperative = false;

  // "file:line: message" with the source line and a caret under `loc`.
  std::string format_location(const SourceLoc& loc) const;
};

// A function typed for concrete argument types, ready to lower.
struct TypedFunction {
  std::shared_ptr<Function> fn;
  Signature sig;  // concrete: return type always set
  std::string symbol;  // mangled (numba ABI) or C name
  std::string env_symbol;  // numba ABI: _ZN08NumbaEnv...; empty for the C ABI
  bool c_abi = false;
  bool kernel = false;
  bool always_inline = false;  // a device function its callers inline (jit's forceinline / inline="always")
  std::vector<std::shared_ptr<TypedFunction>> callees;  // device functions it calls
  // Declared by cuda.declare_device: no body here; linked code defines `symbol`.
  bool external = false;
  std::string declared_at;  // external: "cuda.declare_device('f', ...) at file.py:3", for link errors
  // What linking this function needs: its own items (jit/declare_device link=)
  // then its callees', each once, in first-reached order.
  std::vector<std::shared_ptr<link::LinkInput>> link_inputs;
  // Needs a cooperative launch (declare_device(use_cooperative=True) reached through any depth of calls).
  bool cooperative = false;
};

// The raise statements a kernel can reach (its own, then its callees' in call order, each function once):
// status code i + 1 of a kernel's numba-ABI calls stands for site i, and the host maps a code back to the
// exception to raise (docs/numba_abi.md: Exceptions).
struct ExceptionSite {
  const Function* fn;
  const Stmt* stmt;
};
std::vector<ExceptionSite> exception_sites(const TypedFunction& top);

// The declared (external) functions a function reaches through any depth of calls: (symbol, where declared), for
// the link's error naming an undefined one.
std::vector<std::pair<std::string, std::string>> reached_externs(const TypedFunction& top);

}  // namespace cujit::ir
