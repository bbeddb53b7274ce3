// The cujit type system: interned, immutable Type objects mirroring numba's
// types (scalars, literals, tuples, pointers, arrays), plus signatures.
//
// Types are created once per process and never freed; a TypeRef is a plain
// pointer, so equality is pointer equality. Creation is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cujit {

enum class TypeKind : uint8_t {
  None,            // numba `none` / `void`
  Boolean,
  Integer,
  Float,           // float16, float32, float64
  Complex,         // complex64, complex128
  IntegerLiteral,  // Literal[int](v): behaves as int64 with a known value
  BooleanLiteral,  // Literal[bool](v)
  UniTuple,
  Tuple,
  CPointer,
  VoidPtr,
  Array,
  Range,           // range_state32/64/u64 (internal)
  Record,          // a numpy structured dtype: named fields at byte offsets
  NestedArray,     // an array field of a record: dtype and a fixed shape
  Optional,        // OptionalType(T): a T or None (a device function that returns on some paths only)
  BFloat16,        // numba-cuda's bfloat16 ("__nv_bfloat16"): 16 bits, computed in float32
  FP8,             // numba-cuda's fp8_e4m3 / fp8_e5m2 / fp8_e8m0: 8 bits, converted through float (fp8.cpp)
  FP8Packed,       // numba-cuda's fp8x2_e4m3 ... fp8x4_e8m0: 2 or 4 fp8 values (element()) held as 16 or 32 bits
  Vector,          // a CUDA vector type (float32x4, uchar2's uint8x2...) or Dim3: elements() read as .x .y .z .w
  Datetime,        // numpy's datetime64[unit] (numba's NPDatetime): an int64 count of units since the epoch; NaT is
                   // INT64_MIN (typing/datetime_rules.cpp, lowering/lower_datetime.cpp)
  Timedelta,       // numpy's timedelta64[unit] (numba's NPTimedelta): an int64 count of units; NaT is INT64_MIN
  CharSeq,         // numpy's S<n> (numba's CharSeq, "[char x n]"): n bytes, NUL-padded; a value is their address
  UnicodeCharSeq,  // numpy's U<n> (numba's UnicodeCharSeq, "[unichr x n]"): n UCS-4 code points, NUL-padded
  Opaque,          // anything else named by a string (modules, functions: typing only)
  // Compile-time values (numba's types of values that are types or functions), typing only: a value of one is
  // the one object its type names, so reading it is substituting that object.
  NumberClass,     // a number type used as a value: "class(uint32)"; element() is the type
  Function,        // a builtin or intrinsic function used as a value: "Function(cuda.atomic.add)"
  Dispatcher,      // a @cuda.jit device function used as a value: "Dispatcher(module.qualname)"
};

class Type;
using TypeRef = const Type*;

class Type {
 public:
  TypeKind kind() const { return kind_; }
  // numba's str(type): "int32", "bool", "float32", "none", "UniTuple(int32 x 2)",
  // "Tuple(int32, float64)", "float32*", "void*", "array(float32, 1d, C)", ...
  const std::string& name() const { return name_; }

  bool is_integer() const { return kind_ == TypeKind::Integer || kind_ == TypeKind::IntegerLiteral; }
  bool is_float() const { return kind_ == TypeKind::Float; }
  bool is_complex() const { return kind_ == TypeKind::Complex; }
  bool is_boolean() const { return kind_ == TypeKind::Boolean || kind_ == TypeKind::BooleanLiteral; }
  bool is_number() const { return is_integer() || is_float() || is_complex() || is_boolean(); }
  bool is_literal() const { return kind_ == TypeKind::IntegerLiteral || kind_ == TypeKind::BooleanLiteral; }
  bool is_tuple() const { return kind_ == TypeKind::UniTuple || kind_ == TypeKind::Tuple; }

  // Integer/Float/Complex: width in bits (complex64 -> 64). Boolean -> 1. Literal int -> 64.
  int bitwidth() const { return bits_; }
  bool is_signed() const { return signed_; }
  // IntegerLiteral / BooleanLiteral value.
  int64_t literal_value() const { return literal_; }

  // Tuple elements (UniTuple: `count()` copies of element(0)), CPointer pointee,
  // Array dtype, Range index type.
  TypeRef element(size_t i = 0) const { return elements_.at(kind_ == TypeKind::UniTuple ? 0 : i); }
  size_t count() const { return kind_ == TypeKind::UniTuple ? static_cast<size_t>(count_) : elements_.size(); }
  const std::vector<TypeRef>& elements() const { return elements_; }

  // Record: field names, byte offsets and types (elements()).
  const std::vector<std::string>& field_names() const { return field_names_; }
  const std::vector<int64_t>& field_offsets() const { return numbers_; }
  // Record, NestedArray: the size in bytes (types::itemsize gives it for every dtype).
  int64_t byte_size() const { return size_; }
  // The index of a field by name; -1 if the record has none of that name.
  int field_index(const std::string& name) const;
  // NestedArray: the fixed shape (its dtype is element(0), its ndim shape().size()).
  const std::vector<int64_t>& shape() const { return numbers_; }

  // Array properties.
  int ndim() const { return count_; }
  char layout() const { return layout_; }  // 'C', 'F' or 'A'
  bool readonly() const { return readonly_; }
  bool aligned() const { return aligned_; }

  // The non-literal type a literal stands for (int64 / boolean); identity otherwise.
  TypeRef unliteral() const;

 private:
  friend class TypeFactory;
  Type() = default;
  TypeKind kind_ = TypeKind::None;
  std::string name_;
  int bits_ = 0;
  bool signed_ = false;
  int64_t literal_ = 0;
  std::vector<TypeRef> elements_;
  int count_ = 0;
  std::vector<std::string> field_names_;
  std::vector<int64_t> numbers_;  // Record: field offsets; NestedArray: shape
  int64_t size_ = 0;
  char layout_ = 'A';
  bool readonly_ = false;
  bool aligned_ = true;
  TypeRef unliteral_ = nullptr;
};

namespace types {
TypeRef none();
TypeRef boolean();
TypeRef integer(int bits, bool is_signed);
TypeRef int8();
TypeRef int16();
TypeRef int32();
TypeRef int64();
TypeRef uint8();
TypeRef uint16();
TypeRef uint32();
TypeRef uint64();
TypeRef float16();
TypeRef float32();
TypeRef float64();
TypeRef complex64();
TypeRef complex128();
TypeRef bfloat16();
// numba-cuda's fp8 scalars (cuda_fp8.h's __nv_fp8_e4m3, __nv_fp8_e5m2, __nv_fp8_e8m0).
TypeRef fp8_e4m3();
TypeRef fp8_e5m2();
TypeRef fp8_e8m0();
// numba-cuda's packed fp8 types (__nv_fp8x2_e4m3...): `count` (2 or 4) values of the fp8 scalar type `fp8`, the
// first in the lowest byte; nullptr for another count or a non-fp8 `fp8`.
TypeRef fp8_packed(TypeRef fp8, int count);
TypeRef float_(int bits);
TypeRef complex_(int bits);
TypeRef integer_literal(int64_t value);
// Literal[int](v) of an int in [2**63, 2**64): typeof gives uint64 for it.
TypeRef unsigned_integer_literal(uint64_t value);
TypeRef boolean_literal(bool value);
TypeRef uni_tuple(TypeRef element, int count);
// A homogeneous list collapses to a UniTuple, as numba's Tuple(...) constructor does.
TypeRef tuple(const std::vector<TypeRef>& elements);
TypeRef cpointer(TypeRef pointee);
TypeRef voidptr();
TypeRef array(TypeRef dtype, int ndim, char layout, bool readonly = false, bool aligned = true);
TypeRef range(TypeRef index_type);
// numba's Optional: "OptionalType(int64)"; optional(optional(T)) is optional(T) and optional(none) is none.
TypeRef optional(TypeRef type);
// The T of Optional(T); any other type as it is.
TypeRef optional_value(TypeRef type);
TypeRef opaque(const std::string& name);
// datetime64[unit] / timedelta64[unit] ("" for numpy's generic unit; "Y", "M", "W", "D", "h", "m", "s", "ms", "us",
// "ns", "ps", "fs", "as"); nullptr for another unit.
TypeRef datetime64(const std::string& unit);
TypeRef timedelta64(const std::string& unit);
// The unit of a datetime64 or timedelta64 type.
std::string time_unit(TypeRef t);
// How many `to` units one `from` unit is (numpy's conversion to a finer unit: "D" to "h" is 24), 1 from or to the
// generic unit; 0 when `to` is coarser or the units do not convert exactly (years and months against the rest).
int64_t time_unit_factor(const std::string& from, const std::string& to);
bool is_time(TypeRef t);  // a datetime64 or timedelta64
// numpy's fixed-width strings: S<n> (bytes) and U<n> (UCS-4); their characters and each one's width in bytes.
TypeRef charseq(int64_t n);
TypeRef unicode_charseq(int64_t n);
bool is_charseq(TypeRef t);
int64_t char_count(TypeRef t);
int char_width(TypeRef t);
// numba's NumberClass of a number type (the type of `uint32` used as a value): "class(uint32)".
TypeRef number_class(TypeRef instance);
// The type of a function used as a value, named by its path ("cuda.atomic.add") or, for a device function, by
// a name the caller makes unique per function object (typing/value_types.cpp).
TypeRef function_value(const std::string& path);
TypeRef dispatcher_value(const std::string& name);
// The path or name a function_value / dispatcher_value was made with.
std::string value_name(TypeRef t);
struct RecordField {
  std::string name;
  TypeRef type;
  int64_t offset;
  std::string title;  // numpy's field title ("" if none); a titled field is also listed under its title
};
// numba's Record: "Record(x[type=float32;offset=0],y[type=int32;offset=4];8;True)", fields in (offset, name)
// order as numba sorts them. `aligned` is numpy's isalignedstruct; field loads of a record that is not aligned
// assume no alignment.
// `name`: an extension type's (cujit.extending: a struct model's type laid out as a record), instead of numba's
// record name of the fields.
TypeRef record(const std::vector<RecordField>& fields, int64_t size, bool aligned, const std::string& name = "");
// numba's NestedArray of an array field: "nestedarray(float32, (3,))".
TypeRef nested_array(TypeRef dtype, const std::vector<int64_t>& shape);

// Looks up a scalar type by one of numba's names or aliases ("int32", "i4",
// "float64", "f8", "bool", "b1", "boolean", "void", "none", "intp", "uintp",
// "byte", "uchar", "float_", "double", ...). Returns nullptr if unknown.
TypeRef lookup_scalar(const std::string& name);
// Every name lookup_scalar knows, sorted (for suggestions when a name is misspelt).
std::vector<std::string> scalar_names();

// numba's itemsize of a dtype in bytes (booleans take one byte; records and nested arrays their size).
int64_t itemsize(TypeRef dtype);
// The alignment loads and stores of a dtype may assume, in bytes.
int64_t alignment(TypeRef dtype);

// How a kernel argument of type `t` is passed (numba's flattened kernel ABI, docs/numba_abi.md: Kernel arguments): the
// one definition the lowering (parameters of kernels and calls) and the launcher (argument plans) both follow. A
// complex is its real and imaginary parts, a tuple its elements in order, an Optional its value then a boolean flag,
// none nothing; an array is one leaf (numba's array struct: meminfo, parent, nitems, itemsize, data, shape...,
// strides...); any other type is one scalar leaf.
struct ArgumentLeaf {
  enum class Role : uint8_t { Value, ComplexReal, ComplexImag, OptionalFlag };
  TypeRef type;                 // the leaf's type: an array, or a scalar of the width it is passed as
  std::vector<unsigned> path;   // aggregate indices from the argument's value to the leaf (empty: itself)
  Role role = Role::Value;
};
std::vector<ArgumentLeaf> argument_leaves(TypeRef t);
// How many array arguments a kernel of these argument types may compile with `noalias` data (the dispatcher then
// keeps a variant without it for launches whose arrays overlap): all of them when the rest are scalars, none when a
// pointer, tuple or other aggregate could reach the same memory unchecked.
int noalias_arrays(const std::vector<TypeRef>& argtypes);

// numba's layout of an array of `ndim` dimensions with these shape and strides (bytes): 'C' or 'F' when
// contiguous in that order (numpy's rule: dimensions of length 1 do not count, an empty array is 'C'),
// else 'A'. Null strides mean C-contiguous.
char array_layout(int ndim, const int64_t* shape, const int64_t* strides, int64_t itemsize);
// numpy's contiguity in C (or Fortran) order: dimensions of length 1 do not count, an empty array is
// contiguous in both.
bool is_contiguous(int ndim, const int64_t* shape, const int64_t* strides, int64_t itemsize, bool c_order);
}  // namespace types

struct Signature {
  TypeRef return_type = nullptr;  // nullptr: to be inferred
  std::vector<TypeRef> args;
  // numba's str(Signature): "int32 (int32, int32)" -> we render "int32(int32, int32)";
  // without a return type "(int32, int32)".
  std::string str() const;
};

}  // namespace cujit
