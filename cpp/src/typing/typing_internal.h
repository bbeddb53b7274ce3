// Internal to typing: the array indexing rules and slice types, shared by
// infer_types.cpp and the rule files. (CUDA intrinsics are in cujit/intrinsics.h.)
#pragma once

#include <string>

#include "cujit/typing.h"

namespace cujit::typing {

TypeRef slice_type(bool has_step);
TypeRef ellipsis_type();
bool is_slice(TypeRef t);

// The type of ary[index] (an element or a view), following numba's layout
// rules; nullptr with `error` set if the index is invalid.
TypeRef array_getitem_type(TypeRef ary, TypeRef index, std::string& error);
// shape, strides, size, ndim, itemsize; nullptr if unknown.
TypeRef array_attribute_type(TypeRef ary, const std::string& attr);

// Records: the type a field reads as (array fields become C array views), and
// the field a key names (a string constant or an integer literal, already
// typed); -1 with `error` set if none.
TypeRef record_field_value_type(TypeRef record, int field);

// datetime_rules.cpp: the signature of an operator on datetime64 / timedelta64 operands (and numbers), or nullopt.
std::optional<OpSignature> datetime_signature(ir::Op op, TypeRef lhs, TypeRef rhs);
int record_field_index(TypeRef record, const ir::Expr& key, std::string& error);

// for x in literal_unroll(t) (a ForRange marked by the frontend): once t's type is known, versions the body per
// element of a heterogeneous tuple and clears the mark (literal_unroll.cpp). False while t's type is unknown.
bool expand_literal_unroll(ir::Stmt& loop, ir::Function& fn, bool final_pass);

// Types and functions used as values (value_types.cpp): the type of a global that is a number type, a builtin
// or intrinsic function, or a device function, read as a value (numba's NumberClass, Function, Dispatcher);
// nullptr for any other global. `value_global` is the global such a type stands for (calling a value of it, or
// passing it as a dtype, is calling or passing that global).
TypeRef value_type(const ir::GlobalValue& g);
bool is_value_type(TypeRef t);
ir::GlobalValue value_global(TypeRef t);

}  // namespace cujit::typing
