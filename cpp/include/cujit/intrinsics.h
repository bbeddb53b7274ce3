// The intrinsic table: every function or value CUDA code reaches by a fixed
// path (cuda.grid, cuda.threadIdx.x, cuda.atomic.add, cuda.fp16.hadd,
// cuda.libdevice.sinf, cuda.cg.this_grid, a grid group's sync...) is one entry
// holding its parameter names, its typing rule and its lowering. Typing,
// lowering and the Python stubs (cujit.intrinsics) all read this one table.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cujit/conversions.h"

// Declared, not included: typing reads this table without LLVM's headers.
namespace llvm {
class Module;
class Type;
class Value;
class ConstantFolder;
class IRBuilderDefaultInserter;
template <typename FolderTy, typename InserterTy>
class IRBuilder;
}  // namespace llvm

namespace cujit::target {
class Target;  // cujit/target.h
}  // namespace cujit::target

namespace cujit::intrinsics {

using Builder = llvm::IRBuilder<llvm::ConstantFolder, llvm::IRBuilderDefaultInserter>;

// What a lowering may ask of the function being lowered (implemented by lowering).
class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual Builder& builder() = 0;
  virtual llvm::Module& module() = 0;
  virtual llvm::Type* value_type(TypeRef t) = 0;
  virtual llvm::Value* cast(llvm::Value* v, TypeRef from, TypeRef to) = 0;
  virtual llvm::Value* build_tuple(const std::vector<llvm::Value*>& elems, TypeRef t) = 0;
  // The address of ary[indices...] (i64 indices, wrapped if negative).
  virtual llvm::Value* element_address(llvm::Value* ary, TypeRef aty, const std::vector<llvm::Value*>& indices) = 0;
  // An array of type `aty` viewing `data` with these (i64) extents and byte strides, owning nothing.
  virtual llvm::Value* make_array(TypeRef aty, llvm::Value* data, const std::vector<llvm::Value*>& shape,
                                  const std::vector<llvm::Value*>& strides) = 0;
  // A libdevice function by its full name (__nv_sinf) with the given result type.
  virtual llvm::Value* call_function(const std::string& name, llvm::Type* result, std::vector<llvm::Value*> args) = 0;
  // A stack slot in the function's entry block.
  virtual llvm::Value* stack_slot(llvm::Type* t) = 0;
  // The value of `None` (what statements-as-calls return).
  virtual llvm::Value* none_value() = 0;
  // The target lowered for (special registers, barriers, shared memory) and the function's context for it.
  virtual const cujit::target::Target& target() = 0;
  virtual llvm::Value* target_context() = 0;
  // The source position of the call being lowered ("kernel.py:12"), or "" (for the host target's reports).
  virtual std::string call_site() { return ""; }
};

// The types a call was typed with: parameters (what the arguments were
// converted to) and result.
struct CallTypes {
  const std::vector<TypeRef>& params;
  TypeRef result;
};

using Typer = std::function<std::optional<OpSignature>(const std::vector<TypeRef>& args)>;
using Lowerer = std::function<llvm::Value*(Emitter& em, std::vector<llvm::Value*> args, const CallTypes& types)>;
// Why arguments the typer refused do not fit ("Expected 2 indices, got a scalar"); "" when it cannot say.
using Explainer = std::function<std::string(const std::vector<TypeRef>& args)>;

struct Intrinsic {
  enum class Kind { Function, Value, Method, Attribute };
  Kind kind = Kind::Function;
  // Function: the path ("cuda.atomic.add"). Value: the path read as a value
  // ("cuda.threadIdx.x"; typed with no arguments). Method: "<type name>.<method>"
  // ("grid_group.sync"), called with the object as the first argument. Attribute: "<type name>.<attribute>"
  // ("float32x4.x"), read with the object as the only argument.
  std::string name;
  std::vector<std::string> params;  // names for keyword arguments; empty: positional only
  Typer type;    // empty: typing types it from the argument expressions (cuda.shared.array...)
  Lowerer lower;  // empty: lowering lowers it from the expression (cuda.shared.array...)
  // Kernels reaching it link libcudadevrt and launch cooperatively (cuda.cg).
  bool cooperative = false;
  Explainer explain{};  // optional: appended to the "No implementation of ..." typing error
};

// The entry for `name`, or nullptr.
const Intrinsic* find(const std::string& name);
// Every function and value path, for the Python stubs (methods and attributes excluded).
std::vector<std::string> paths();

// bfloat16 (numba-cuda's __nv_bfloat16) is held as its 16 bits; it computes in float32 and rounds once. These
// conversions serve the cuda.bf16 family and lowering's casts and operators (bfloat16.cpp).
enum class Rounding { Nearest, TowardZero, Down, Up };
llvm::Value* bfloat16_to_float(Emitter& em, llvm::Value* bits);
llvm::Value* float_to_bfloat16(Emitter& em, llvm::Value* f32, Rounding mode = Rounding::Nearest);
// Any number (integers and float64 through a round-to-odd float32, so rounding happens once).
llvm::Value* number_to_bfloat16(Emitter& em, llvm::Value* v, TypeRef from, Rounding mode = Rounding::Nearest);

// fp8 (numba-cuda's fp8_e4m3, fp8_e5m2, fp8_e8m0) is held as its 8 bits; lowering's casts convert through these
// (fp8.cpp): from any number as cuda_fp8.h's constructors round and saturate, and to any number exactly (floats)
// or truncated and saturated (integers).
llvm::Value* number_to_fp8(Emitter& em, llvm::Value* v, TypeRef from, TypeRef to);
llvm::Value* fp8_to_number(Emitter& em, llvm::Value* v, TypeRef from, TypeRef to);

}  // namespace cujit::intrinsics
