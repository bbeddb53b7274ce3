// Internal to lowering: the state of lowering one typed function (its LLVM
// function, variables, loop targets, debug scope) and the data model helpers
// shared by the statement, expression and calling-convention files.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "cujit/intrinsics.h"
#include "cujit/lowering.h"
#include "cujit/target.h"
#include "non_negative_indices.h"

namespace cujit::lowering {

// The fields of numba's array struct, in order: also the order an array argument flattens into.
enum ArrayField { kMeminfo = 0, kParent = 1, kNitems = 2, kItemsize = 3, kData = 4, kShape = 5, kStrides = 6 };

// numba's data model (docs/numba_abi.md: Data model): how a type is held in registers, in memory
// and return slots, and as flattened parameters.
class DataModel {
 public:
  explicit DataModel(llvm::LLVMContext& ctx) : ctx_(ctx) {}
  llvm::Type* value_type(TypeRef t) const;
  llvm::Type* data_type(TypeRef t) const;  // memory / return-slot representation
  // How an array element of dtype `t` is laid out: data_type, but a record or an array field is its bytes.
  llvm::Type* storage_type(TypeRef t) const;
  // `records_by_value`: the C ABI's records, passed as their struct (record_abi.h); the numba ABI's are addresses.
  void flatten_arg_types(TypeRef t, std::vector<llvm::Type*>& out, bool records_by_value = false) const;
  llvm::Value* value_to_data(llvm::IRBuilder<>& b, llvm::Value* v, TypeRef t) const;
  llvm::Value* data_to_value(llvm::IRBuilder<>& b, llvm::Value* v, TypeRef t) const;
  void flatten_arg_values(llvm::IRBuilder<>& b, llvm::Value* v, TypeRef t, std::vector<llvm::Value*>& out,
                          bool records_by_value = false) const;
  // Rebuilds a value from flattened parameters starting at `*next` (a record passed by value: into a stack slot of
  // the block `b` is in, the function's entry).
  llvm::Value* unflatten_args(llvm::IRBuilder<>& b, TypeRef t, llvm::Function::arg_iterator& next,
                              bool records_by_value = false) const;

 private:
  llvm::LLVMContext& ctx_;
};

// Shared by all functions lowered into one module.
struct ModuleState {
  llvm::Module& module;
  LoweringOptions options;
  DataModel model;
  std::unique_ptr<llvm::DIBuilder> dib;
  llvm::DICompileUnit* cu = nullptr;
  std::map<std::string, llvm::Function*> lowered;  // symbol -> function
  // Raise statements -> their status code (ir::exception_sites of the top function).
  std::map<const ir::Stmt*, int> exception_codes;
  // Debug kernels: the globals the first error's code and thread are recorded in (docs/numba_abi.md: Exceptions);
  // null otherwise. Order: errcode, tidx, ctaidx, tidy, ctaidy, tidz, ctaidz.
  std::vector<llvm::GlobalVariable*> exception_globals;
  ModuleState(llvm::Module& m, const LoweringOptions& o) : module(m), options(o), model(m.getContext()) {}
};

std::vector<bool> single_assignment_variables(const ir::Function& fn);

// The globals of a debug kernel's exception channel (lower_exceptions.cpp), in ModuleState::exception_globals.
void declare_exception_globals(ModuleState& state, const std::string& kernel);

class FunctionLowering : public intrinsics::Emitter {
 public:
  FunctionLowering(ModuleState& state, const ir::TypedFunction& fn, bool is_top);
  llvm::Function* lower();

  // intrinsics::Emitter: what the intrinsic table's lowerings use (lower_intrinsics.cpp).
  llvm::IRBuilder<>& builder() override { return b_; }
  llvm::Module& module() override { return state_.module; }
  llvm::Type* value_type(TypeRef t) override { return state_.model.value_type(t); }
  llvm::Value* cast(llvm::Value* v, TypeRef from, TypeRef to) override;
  llvm::Value* build_tuple(const std::vector<llvm::Value*>& elems, TypeRef t) override;
  llvm::Value* element_address(llvm::Value* ary, TypeRef aty, const std::vector<llvm::Value*>& indices) override {
    return element_pointer(ary, aty, indices);
  }
  llvm::Value* call_function(const std::string& name, llvm::Type* result, std::vector<llvm::Value*> args) override;
  llvm::Value* make_array(TypeRef aty, llvm::Value* data, const std::vector<llvm::Value*>& shape,
                          const std::vector<llvm::Value*>& strides) override;  // lower_arrays.cpp
  llvm::Value* stack_slot(llvm::Type* t) override { return entry_alloca(t); }
  llvm::Value* none_value() override { return b_.getInt8(0); }
  const cujit::target::Target& target() override { return *state_.options.target; }
  llvm::Value* target_context() override { return context_; }
  std::string call_site() override;

  // Returns the LLVM function for a typed function, lowering it on first use.
  static llvm::Function* get_or_lower(ModuleState& state, const ir::TypedFunction& fn, bool is_top);

 private:
  // calling_conventions.cpp
  llvm::Function* declare();
  void annotate_launch_bounds(llvm::Function* f);
  void bind_parameters();
  void emit_return(llvm::Value* value, TypeRef type);  // value null: return None
  llvm::Value* emit_device_call(const ir::Expr& call, std::vector<llvm::Value*> args);

  // lower_function.cpp
  void lower_block(const std::vector<ir::StmtPtr>& block);
  void lower_stmt(const ir::Stmt& s);
  void lower_for_range(const ir::Stmt& s);
  // How many values range(start, stop, step) yields (a zero step known here is a ValueError at `step_loc`).
  llvm::Value* range_length(llvm::Value* start, llvm::Value* stop, llvm::Value* step, TypeRef index,
                            const SourceLoc& step_loc);
  // A loop's else block (when it has one) between its exit and `end`; returns where the loop exits to.
  llvm::BasicBlock* loop_exit(const ir::Stmt& s, llvm::BasicBlock* end);
  void lower_loop_else(const ir::Stmt& s, llvm::BasicBlock* else_bb, llvm::BasicBlock* end);
  void store_target(const ir::Expr& target, llvm::Value* value, TypeRef type);
  void set_location(const SourceLoc& loc);
  void ensure_insertion_point();
  llvm::AllocaInst* entry_alloca(llvm::Type* t, const llvm::Twine& name = "");
  [[noreturn]] void unsupported(const std::string& what, const SourceLoc& loc);

  // lower_conditionals.cpp
  void lower_if(const ir::Stmt& s, llvm::BasicBlock* end_bb);
  void lower_else(const ir::Stmt& s, llvm::BasicBlock* end_bb);
  void lower_switch(const std::vector<const ir::Stmt*>& chain, llvm::BasicBlock* end_bb);

  // lower_expressions.cpp
  llvm::Value* lower_expr(const ir::Expr& e);
  llvm::Value* lower_as(const ir::Expr& e, TypeRef to);  // lower then cast
  llvm::Value* float_divmod(ir::Op op, llvm::Value* a, llvm::Value* b);
  llvm::Value* truth(llvm::Value* v, TypeRef t);
  llvm::Value* zero_value(TypeRef t);
  llvm::Value* constant(const ir::Expr& e);
  llvm::Value* binary(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef lhs_t, TypeRef rhs_t, TypeRef result);
  llvm::Value* int_binary(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef t);
  // lower_charseq.cpp: numpy's fixed-width strings (the address of their NUL-padded characters).
  llvm::Value* char_at(llvm::Value* s, TypeRef t, int64_t i);
  llvm::Value* charseq_length(llvm::Value* s, TypeRef t);
  llvm::Value* charseq_isascii(llvm::Value* s, TypeRef t);
  llvm::Value* charseq_compare(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef ta, TypeRef tb);
  llvm::Value* charseq_resize(llvm::Value* s, TypeRef from, TypeRef to);
  llvm::Value* charseq_constant(const ir::GlobalValue& g, TypeRef t);
  llvm::Value* charseq_contains(llvm::Value* needle, llvm::Value* haystack, TypeRef tn, TypeRef th);
  // lower_datetime.cpp: datetime64 / timedelta64 values (int64 counts, NaT the least int64).
  llvm::Value* is_nat(llvm::Value* v);
  llvm::Value* time_cast(llvm::Value* v, TypeRef from, TypeRef to);
  llvm::Value* time_binary(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef lhs_t, TypeRef rhs_t);
  llvm::Value* time_compare(ir::Op op, llvm::Value* a, llvm::Value* b);
  llvm::Value* float_binary(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef t);
  llvm::Value* complex_binary(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef t);
  llvm::Value* int_power(llvm::Value* base, llvm::Value* exp, TypeRef base_t, TypeRef result);
  llvm::Value* compare(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef t);
  // compare() for operands of possibly different types: tuples (lexicographic) and `in` / `not in`.
  llvm::Value* compare_operands(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef ta, TypeRef tb);
  llvm::Value* compare_tuples(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef ta, TypeRef tb);
  // Two values of possibly different types compared as typing rates the pair (both converted first).
  llvm::Value* compare_converted(ir::Op op, llvm::Value* a, llvm::Value* b, TypeRef ta, TypeRef tb);
  llvm::Value* contains(llvm::Value* item, llvm::Value* container, TypeRef ti, TypeRef tc);
  llvm::Value* record_from_tuple(llvm::Value* tuple, TypeRef from, TypeRef record);
  llvm::Value* record_from_values(const std::vector<llvm::Value*>& fields, TypeRef record);
  llvm::Value* range_item(llvm::Value* range, llvm::Value* index, TypeRef rt);
  // How many values a range value {start, stop, step} yields, in its index type.
  llvm::Value* range_value_length(llvm::Value* range, TypeRef rt, const SourceLoc& loc);
  llvm::Value* unary(const ir::Expr& e);
  llvm::Value* short_circuit(const ir::Expr& e);
  llvm::Value* if_exp(const ir::Expr& e);
  llvm::Value* call(const ir::Expr& e);
  llvm::Value* builtin_call(const std::string& name, std::vector<llvm::Value*> args, const ir::Expr& e);
  llvm::Value* math_call(const std::string& fn, std::vector<llvm::Value*> args, TypeRef t);
  llvm::Value* libdevice_call(const std::string& base, std::vector<llvm::Value*> args, TypeRef t);
  llvm::Value* subscript(const ir::Expr& e);
  llvm::Value* attribute(const ir::Expr& e);
  llvm::Value* min_max(bool is_min, std::vector<llvm::Value*> args, TypeRef t);

  // lower_arrays.cpp
  struct IndexItem {
    bool is_slice = false;
    llvm::Value* index = nullptr;  // integer index (i64), or the slice parts (null when omitted)
    llvm::Value* start = nullptr;
    llvm::Value* stop = nullptr;
    llvm::Value* step = nullptr;
    bool non_negative = false;     // the integer index cannot be negative: no wrap-around
  };
  std::vector<IndexItem> lower_index(const ir::Expr& index, int ndim);
  llvm::Value* array_field(llvm::Value* ary, int field, int dim = -1);
  llvm::Value* element_pointer(llvm::Value* ary, TypeRef aty, const std::vector<llvm::Value*>& indices,
                               const std::vector<bool>& non_negative = {});
  llvm::Value* item_pointer(llvm::Value* ary, TypeRef aty, const std::vector<IndexItem>& items);
  llvm::Value* make_c_array(TypeRef aty, llvm::Value* data, const std::vector<int64_t>& dims);
  llvm::Value* wrap_index(llvm::Value* index, llvm::Value* extent);
  // Bounds checks (LoweringOptions::bounds_check): `ptr` if every wrapped index is inside its axis, else the
  // target is told (index_error, with the indices as written) and a scratch slot is the access's address.
  llvm::Value* bounds_checked(llvm::Value* ptr, llvm::Value* ary, TypeRef aty, const std::vector<llvm::Value*>& indices,
                              const std::vector<llvm::Value*>& wrapped);
  // Reports an out-of-bounds access (Target::index_error) where `inside` (an i1) is false, and continues where
  // both paths meet: there, `inside_value` if it was inside, else `outside_value` (each pair one phi: code that
  // removes the check, IRCE's main loop, has the inside values with no test left).
  void report_outside(llvm::Value* inside, llvm::Value* data, const std::vector<llvm::Value*>& indices,
                      const std::vector<llvm::Value*>& shape, std::vector<llvm::Value*>& inside_value,
                      const std::vector<llvm::Value*>& outside_value);
  // The array being indexed, for a bounds check's report: "array 'x' at kernel.py:12".
  std::string index_site(const ir::Expr& array) const;
  llvm::Value* array_getitem(const ir::Expr& e);
  llvm::Value* pointer_item(const ir::Expr& e);  // the address of p[i] for a CPointer p
  void array_setitem(const ir::Expr& target, llvm::Value* value, TypeRef type);
  // The shape of `ary` (`ndim` axes, into `shape`) and its element count; the per-axis indices of the element at
  // position `linear` of a C-order walk over `shape` (loops over every element: stores into views, reductions,
  // ufuncs).
  llvm::Value* element_count(llvm::Value* ary, int ndim, std::vector<llvm::Value*>& shape);
  std::vector<llvm::Value*> c_order_index(llvm::Value* linear, const std::vector<llvm::Value*>& shape);
  // lower_array_assign.cpp: `value` (a scalar, or an array broadcast by numpy's rules) stored into every element
  // of the array view `view`.
  void assign_to_view(llvm::Value* view, TypeRef vty, llvm::Value* value, TypeRef type);
  // lower_array_reductions.cpp: sum, prod, min, max or mean of every element of `ary`, as `result`.
  llvm::Value* array_reduction(const std::string& name, llvm::Value* ary, TypeRef aty, TypeRef result);
  // lower_ufuncs.cpp: a NumPy ufunc of array (or scalar) inputs into the output array, the last argument.
  llvm::Value* ufunc_loop(const std::string& name, const std::vector<llvm::Value*>& args, const ir::Expr& e);
  llvm::Value* array_view(llvm::Value* ary, TypeRef aty, const std::vector<IndexItem>& items, TypeRef result);
  llvm::Value* array_attribute(llvm::Value* ary, TypeRef aty, const std::string& attr);
  llvm::Value* memory_array(const ir::Expr& e, const std::string& name);
  llvm::Value* constant_array(const ir::GlobalValue& g);
  llvm::Value* constant_record(const ir::GlobalValue& g);
  llvm::Value* constant_memory(llvm::Constant* init, const char* name, int64_t align, bool mergeable = false);
  // A captured device array: its pointer, shape and strides as constants (lower_arrays.cpp).
  llvm::Value* captured_array(const ir::GlobalValue& g);
  // An element of dtype `dtype` at `ptr`, assuming `align` bytes of alignment (0: the dtype's own). A record
  // element reads as its address and is written by copying its bytes.
  llvm::Value* load_element(llvm::Value* ptr, TypeRef dtype, int64_t align = 0);
  void store_element(llvm::Value* ptr, llvm::Value* value, TypeRef dtype, int64_t align = 0);

  // lower_records.cpp
  llvm::Value* record_field_address(llvm::Value* rec, TypeRef record, int field);
  llvm::Value* load_field(const ir::Expr& access);
  void store_field(const ir::Expr& target, llvm::Value* value, TypeRef type);

  // lower_exceptions.cpp
  void lower_raise(const ir::Stmt& s);
  // Leaves the function with a non-zero status: a numba-ABI function returns it, a kernel records it (debug)
  // and returns, a C-ABI function returns its zero value (it has no status).
  void return_status(llvm::Value* code);

  // lower_print.cpp
  llvm::Value* print(const ir::Expr& e);

  // lower_intrinsics.cpp
  llvm::Value* intrinsic_value(const std::string& name);
  llvm::Value* intrinsic_call(const intrinsics::Intrinsic& in, std::vector<llvm::Value*> args, const ir::Expr& e);
  llvm::Value* method_call(const ir::Expr& e);

  ModuleState& state_;
  const ir::TypedFunction& tf_;
  const ir::Function& fn_;
  SourceLoc call_loc_;  // the intrinsic call being lowered (call_site())
  std::string index_site_;  // the array subscript being lowered (bounds checks; "" in an intrinsic's access)
  bool is_top_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* llfn_ = nullptr;
  llvm::Value* ret_slot_ = nullptr;  // numba ABI: the .ret pointer
  llvm::Value* context_ = nullptr;   // a target with a context: the function's first parameter
  std::vector<llvm::AllocaInst*> var_slots_;
  // Variables bound once and for all (see single_assignment_variables) are SSA
  // values, not stack slots: less for SROA and InstCombine to take apart.
  std::vector<llvm::Value*> var_values_;
  void write_variable(int var, llvm::Value* value, TypeRef type);
  llvm::DISubprogram* subprogram_ = nullptr;
  struct LoopTargets {
    llvm::BasicBlock* continue_to;
    llvm::BasicBlock* break_to;
  };
  std::vector<LoopTargets> loops_;
  NonNegative non_negative_;
};

}  // namespace cujit::lowering
