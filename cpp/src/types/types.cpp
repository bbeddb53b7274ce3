// The type registry: builds every Type exactly once per process and hands out
// stable pointers, so that type identity is pointer identity. Names follow
// numba's str(type) so that error messages and mangled names match numba-cuda.
#include "cujit/types.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cujit/error.h"
#include "cujit/vector_types.h"
#include "type_interning.h"

namespace cujit {

// The only code allowed to fill in a Type's private fields. Each factory
// function describes a prototype; `intern` returns the one registered Type
// equal to it, registering it on first use.
class TypeFactory {
 public:
  static Type prototype(TypeKind kind, std::string name) {
    Type t;
    t.kind_ = kind;
    t.name_ = std::move(name);
    return t;
  }
  static Type scalar(TypeKind kind, std::string name, int bits, bool is_signed) {
    Type t = prototype(kind, std::move(name));
    t.bits_ = bits;
    t.signed_ = is_signed;
    return t;
  }
  static Type literal(TypeKind kind, std::string name, int bits, bool is_signed, int64_t value, TypeRef unliteral) {
    Type t = scalar(kind, std::move(name), bits, is_signed);
    t.literal_ = value;
    t.unliteral_ = unliteral;
    return t;
  }
  static Type composite(TypeKind kind, std::string name, std::vector<TypeRef> elements, int count = 0) {
    Type t = prototype(kind, std::move(name));
    t.elements_ = std::move(elements);
    t.count_ = count;
    return t;
  }
  static Type packed(std::string name, TypeRef element, int count) {
    Type t = composite(TypeKind::FP8Packed, std::move(name), std::vector<TypeRef>(static_cast<size_t>(count), element));
    t.bits_ = 8 * count;
    return t;
  }
  static Type array(std::string name, TypeRef dtype, int ndim, char layout, bool readonly, bool aligned) {
    Type t = composite(TypeKind::Array, std::move(name), {dtype}, ndim);
    t.layout_ = layout;
    t.readonly_ = readonly;
    t.aligned_ = aligned;
    return t;
  }

  static Type record(std::string name, const std::vector<types::RecordField>& fields, int64_t size, bool aligned) {
    Type t = prototype(TypeKind::Record, std::move(name));
    for (const auto& f : fields) {
      t.field_names_.push_back(f.name);
      t.elements_.push_back(f.type);
      t.numbers_.push_back(f.offset);
    }
    t.size_ = size;
    t.aligned_ = aligned;
    return t;
  }
  static Type nested_array(std::string name, TypeRef dtype, const std::vector<int64_t>& shape) {
    Type t = composite(TypeKind::NestedArray, std::move(name), {dtype}, static_cast<int>(shape.size()));
    t.numbers_ = shape;
    t.layout_ = 'C';
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    t.size_ = n * types::itemsize(dtype);
    return t;
  }

  static TypeRef intern(const Type& proto) {
    // Leaked on purpose: types must outlive every static that refers to them.
    static auto* registry = new Registry;
    const std::string key = identity_key(proto);
    std::lock_guard<std::mutex> lock(registry->mutex);
    auto& slot = registry->types[key];
    if (!slot) slot = std::make_unique<Type>(proto);
    return slot.get();
  }

 private:
  struct Registry {
    std::mutex mutex;
    std::unordered_map<std::string, std::unique_ptr<Type>> types;
  };

  // Everything that distinguishes two types. Component types are already
  // interned, so their addresses identify them; the name is included because
  // opaque types are distinguished by name alone.
  static std::string identity_key(const Type& t) {
    std::string key;
    key.reserve(64 + t.name_.size() + 17 * t.elements_.size());
    auto number = [&](int64_t v) {
      char buf[24];
      key.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
      key += '|';
    };
    for (int64_t field : {static_cast<int64_t>(t.kind_), static_cast<int64_t>(t.bits_), static_cast<int64_t>(t.signed_),
                          t.literal_, static_cast<int64_t>(t.count_), static_cast<int64_t>(t.layout_),
                          static_cast<int64_t>(t.readonly_), static_cast<int64_t>(t.aligned_)})
      number(field);
    for (TypeRef element : t.elements_) number(static_cast<int64_t>(reinterpret_cast<uintptr_t>(element)));
    for (int64_t n : t.numbers_) number(n);
    number(t.size_);
    for (const std::string& field : t.field_names_) {
      number(static_cast<int64_t>(field.size()));
      key += field;
    }
    key += t.name_;
    return key;
  }
};

TypeRef Type::unliteral() const { return unliteral_ ? unliteral_ : this; }

int Type::field_index(const std::string& name) const {
  for (size_t i = 0; i < field_names_.size(); ++i)
    if (field_names_[i] == name) return static_cast<int>(i);
  return -1;
}

std::string Signature::str() const {
  std::string text = return_type ? return_type->name() : std::string();
  text += '(';
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) text += ", ";
    text += args[i]->name();
  }
  text += ')';
  return text;
}

namespace types {

// A cached accessor: the registry lookup runs once per process.
#define CUJIT_CACHED_TYPE(fn_name, expr) \
  TypeRef fn_name() {                    \
    static const TypeRef cached = expr;  \
    return cached;                       \
  }

namespace {

std::string join_names(const std::vector<TypeRef>& elements) {
  std::string text;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i) text += ", ";
    text += elements[i]->name();
  }
  return text;
}

}  // namespace

TypeRef none() {
  static const TypeRef cached = TypeFactory::intern(TypeFactory::prototype(TypeKind::None, "none"));
  return cached;
}

TypeRef boolean() {
  // numba's Boolean is named "bool" (and is one bit wide for our purposes).
  static const TypeRef cached = TypeFactory::intern(TypeFactory::scalar(TypeKind::Boolean, "bool", 1, false));
  return cached;
}

TypeRef integer(int bits, bool is_signed) {
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    fail(ErrorKind::Internal, "no integer type of " + std::to_string(bits) + " bits");
  // Typing asks for these constantly: each is looked up once per process.
  static const auto table = [] {
    std::array<TypeRef, 8> t{};
    for (int i = 0; i < 8; ++i) {
      int b = 8 << (i / 2);
      bool sign = i % 2 == 0;
      std::string name = (sign ? "int" : "uint") + std::to_string(b);
      t[i] = TypeFactory::intern(TypeFactory::scalar(TypeKind::Integer, std::move(name), b, sign));
    }
    return t;
  }();
  int log = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
  return table[log * 2 + (is_signed ? 0 : 1)];
}

CUJIT_CACHED_TYPE(int8, integer(8, true))
CUJIT_CACHED_TYPE(int16, integer(16, true))
CUJIT_CACHED_TYPE(int32, integer(32, true))
CUJIT_CACHED_TYPE(int64, integer(64, true))
CUJIT_CACHED_TYPE(uint8, integer(8, false))
CUJIT_CACHED_TYPE(uint16, integer(16, false))
CUJIT_CACHED_TYPE(uint32, integer(32, false))
CUJIT_CACHED_TYPE(uint64, integer(64, false))

TypeRef float_(int bits) {
  if (bits != 16 && bits != 32 && bits != 64)
    fail(ErrorKind::Internal, "no float type of " + std::to_string(bits) + " bits");
  return TypeFactory::intern(TypeFactory::scalar(TypeKind::Float, "float" + std::to_string(bits), bits, true));
}

TypeRef complex_(int bits) {
  if (bits != 64 && bits != 128) fail(ErrorKind::Internal, "no complex type of " + std::to_string(bits) + " bits");
  return TypeFactory::intern(TypeFactory::scalar(TypeKind::Complex, "complex" + std::to_string(bits), bits, true));
}

CUJIT_CACHED_TYPE(float16, float_(16))
CUJIT_CACHED_TYPE(float32, float_(32))
CUJIT_CACHED_TYPE(float64, float_(64))
CUJIT_CACHED_TYPE(complex64, complex_(64))
CUJIT_CACHED_TYPE(complex128, complex_(128))

#undef CUJIT_CACHED_TYPE

TypeRef bfloat16() {
  static const TypeRef cached = TypeFactory::intern(TypeFactory::scalar(TypeKind::BFloat16, "__nv_bfloat16", 16, true));
  return cached;
}

TypeRef fp8_e4m3() {
  static const TypeRef cached = TypeFactory::intern(TypeFactory::scalar(TypeKind::FP8, "fp8_e4m3", 8, true));
  return cached;
}

TypeRef fp8_e5m2() {
  static const TypeRef cached = TypeFactory::intern(TypeFactory::scalar(TypeKind::FP8, "fp8_e5m2", 8, true));
  return cached;
}

TypeRef fp8_e8m0() {
  static const TypeRef cached = TypeFactory::intern(TypeFactory::scalar(TypeKind::FP8, "fp8_e8m0", 8, false));
  return cached;
}

TypeRef fp8_packed(TypeRef fp8, int count) {
  if ((count != 2 && count != 4) || fp8 == nullptr || fp8->kind() != TypeKind::FP8) return nullptr;
  std::string name = "fp8x" + std::to_string(count) + fp8->name().substr(3);  // fp8_e4m3 -> fp8x2_e4m3
  return TypeFactory::intern(TypeFactory::packed(name, fp8, count));
}

TypeRef integer_literal(int64_t value) {
  // typeof(value) for any int64 value is int64, so the literal is 64-bit signed.
  return TypeFactory::intern(TypeFactory::literal(
      TypeKind::IntegerLiteral, "Literal[int](" + std::to_string(value) + ")", 64, true, value, int64()));
}

int64_t itemsize(TypeRef dtype) {
  switch (dtype->kind()) {
    case TypeKind::Record:
    case TypeKind::NestedArray:
      return dtype->byte_size();
    case TypeKind::Vector:
      return static_cast<int64_t>(dtype->count()) * itemsize(dtype->element(0));
    case TypeKind::CPointer:
    case TypeKind::VoidPtr:
      return 8;  // a pointer of the 64-bit targets (a pointer's type has no bit width)
    default:
      return dtype->is_boolean() ? 1 : dtype->bitwidth() / 8;
  }
}

int64_t alignment(TypeRef dtype) {
  switch (dtype->kind()) {
    case TypeKind::CharSeq:
    case TypeKind::UnicodeCharSeq:
      return char_width(dtype);
    case TypeKind::Complex:
      return itemsize(dtype) / 2;
    case TypeKind::NestedArray:
      return alignment(dtype->element(0));
    case TypeKind::Vector:
      return vector_alignment(dtype);
    case TypeKind::Record: {
      if (!dtype->aligned()) return 1;
      int64_t a = 1;
      for (TypeRef field : dtype->elements()) a = std::max(a, alignment(field));
      return a;
    }
    default:
      return itemsize(dtype);
  }
}

TypeRef unsigned_integer_literal(uint64_t value) {
  return TypeFactory::intern(TypeFactory::literal(TypeKind::IntegerLiteral,
                                                  "Literal[int](" + std::to_string(value) + ")", 64, false,
                                                  static_cast<int64_t>(value), uint64()));
}

TypeRef boolean_literal(bool value) {
  return TypeFactory::intern(TypeFactory::literal(TypeKind::BooleanLiteral,
                                                  value ? "Literal[bool](True)" : "Literal[bool](False)", 1, false,
                                                  value ? 1 : 0, boolean()));
}

TypeRef uni_tuple(TypeRef element, int count) {
  if (count < 0) fail(ErrorKind::ValueError, "UniTuple: count must not be negative, got " + std::to_string(count));
  std::string name = "UniTuple(" + element->name() + " x " + std::to_string(count) + ")";
  return TypeFactory::intern(TypeFactory::composite(TypeKind::UniTuple, std::move(name), {element}, count));
}

TypeRef tuple(const std::vector<TypeRef>& elements) {
  bool homogeneous = !elements.empty();
  for (TypeRef element : elements) homogeneous = homogeneous && element == elements.front();
  if (homogeneous) return uni_tuple(elements.front(), static_cast<int>(elements.size()));
  return TypeFactory::intern(TypeFactory::composite(TypeKind::Tuple, "Tuple(" + join_names(elements) + ")", elements,
                                                    static_cast<int>(elements.size())));
}

TypeRef cpointer(TypeRef pointee) {
  return TypeFactory::intern(TypeFactory::composite(TypeKind::CPointer, pointee->name() + "*", {pointee}));
}

TypeRef voidptr() {
  static const TypeRef cached = TypeFactory::intern(TypeFactory::prototype(TypeKind::VoidPtr, "void*"));
  return cached;
}

TypeRef array(TypeRef dtype, int ndim, char layout, bool readonly, bool aligned) {
  if (dtype->kind() == TypeKind::Array)
    fail(ErrorKind::TypeError,
         "The dtype of a Buffer type cannot itself be a Buffer type, this is unsupported "
         "behaviour.\nThe dtype requested for the unsupported Buffer was: " +
             dtype->name() + ".");
  if (layout != 'C' && layout != 'F' && layout != 'A')
    fail(ErrorKind::ValueError, std::string("Array: layout must be 'C', 'F' or 'A', got '") + layout + "'");
  if (ndim < 0) fail(ErrorKind::ValueError, "Array: ndim must not be negative, got " + std::to_string(ndim));
  // numba stores arrays of the literal's underlying type.
  dtype = dtype->unliteral();
  // numba prefixes "readonly " first, then "unaligned " in front of that.
  std::string kind_name = "array";
  if (readonly) kind_name = "readonly " + kind_name;
  if (!aligned) kind_name = "unaligned " + kind_name;
  std::string name = kind_name + "(" + dtype->name() + ", " + std::to_string(ndim) + "d, " + layout + ")";
  return TypeFactory::intern(TypeFactory::array(std::move(name), dtype, ndim, layout, readonly, aligned));
}

TypeRef range(TypeRef index_type) {
  return TypeFactory::intern(
      TypeFactory::composite(TypeKind::Range, "range_state_" + index_type->name(), {index_type}));
}

TypeRef record(const std::vector<RecordField>& unsorted, int64_t size, bool aligned, const std::string& named) {
  std::vector<RecordField> fields = unsorted;
  std::stable_sort(fields.begin(), fields.end(), [](const RecordField& a, const RecordField& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.name < b.name;
  });
  std::string name = "Record(";
  for (size_t i = 0; i < fields.size(); ++i) {
    const RecordField& f = fields[i];
    if (f.offset < 0 || f.offset + itemsize(f.type) > size)
      fail(ErrorKind::ValueError, "Record: field '" + f.name + "' does not fit in " + std::to_string(size) + " bytes");
    if (i) name += ',';
    name += f.name + "[type=" + f.type->name() + ";offset=" + std::to_string(f.offset) +
            (f.title.empty() ? "" : ";title=" + f.title) + "]";
  }
  name += ";" + std::to_string(size) + ";" + (aligned ? "True" : "False") + ")";
  if (!named.empty()) name = named;
  return TypeFactory::intern(TypeFactory::record(std::move(name), fields, size, aligned));
}

TypeRef nested_array(TypeRef dtype, const std::vector<int64_t>& shape) {
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) fail(ErrorKind::ValueError, "nestedarray: negative extent");
    dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    if (i + 1 < shape.size()) dims += ' ';
  }
  dims += ")";
  return TypeFactory::intern(
      TypeFactory::nested_array("nestedarray(" + dtype->name() + ", " + dims + ")", dtype, shape));
}

TypeRef optional(TypeRef type) {
  if (type->kind() == TypeKind::Optional || type->kind() == TypeKind::None) return type;
  type = type->unliteral();
  return TypeFactory::intern(TypeFactory::composite(TypeKind::Optional, "OptionalType(" + type->name() + ")", {type}));
}

TypeRef optional_value(TypeRef type) { return type->kind() == TypeKind::Optional ? type->element(0) : type; }

TypeRef opaque(const std::string& name) { return TypeFactory::intern(TypeFactory::prototype(TypeKind::Opaque, name)); }

namespace {

bool is_time_unit(const std::string& unit) {
  static const char* const units[] = {"", "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"};
  for (const char* u : units)
    if (unit == u) return true;
  return false;
}

TypeRef time_type(TypeKind kind, const char* base, const std::string& unit) {
  if (!is_time_unit(unit)) return nullptr;
  std::string name = std::string(base) + "[" + unit + "]";  // numba names the generic unit "timedelta64[]"
  return TypeFactory::intern(TypeFactory::scalar(kind, std::move(name), 64, true));
}

}  // namespace

TypeRef datetime64(const std::string& unit) { return time_type(TypeKind::Datetime, "datetime64", unit); }
TypeRef timedelta64(const std::string& unit) { return time_type(TypeKind::Timedelta, "timedelta64", unit); }

int64_t time_unit_factor(const std::string& from, const std::string& to) {
  if (from == to || from.empty() || to.empty()) return 1;
  if (from == "Y" && to == "M") return 12;
  if (from == "Y" || from == "M" || to == "Y" || to == "M") return 0;
  // Each linear unit in how many of the next: W 7 D 24 h 60 m 60 s 1000 ms 1000 us ... as.
  static const std::pair<const char*, int64_t> linear[] = {{"W", 7},     {"D", 24},    {"h", 60},    {"m", 60},
                                                           {"s", 1000},  {"ms", 1000}, {"us", 1000}, {"ns", 1000},
                                                           {"ps", 1000}, {"fs", 1000}, {"as", 1}};
  int64_t factor = 0;
  for (const auto& [unit, next] : linear) {
    if (factor == 0 && from == unit) factor = 1;
    if (factor != 0 && to == unit) return factor;
    if (factor != 0) factor *= next;
  }
  return 0;
}

bool is_time(TypeRef t) { return t->kind() == TypeKind::Datetime || t->kind() == TypeKind::Timedelta; }

namespace {

TypeRef char_sequence(TypeKind kind, const char* element, int width, int64_t n) {
  if (n <= 0 || n > (int64_t{1} << 24)) return nullptr;
  return TypeFactory::intern(TypeFactory::scalar(kind, "[" + std::string(element) + " x " + std::to_string(n) + "]",
                                                 static_cast<int>(8 * width * n), false));
}

}  // namespace

TypeRef charseq(int64_t n) { return char_sequence(TypeKind::CharSeq, "char", 1, n); }
TypeRef unicode_charseq(int64_t n) { return char_sequence(TypeKind::UnicodeCharSeq, "unichr", 4, n); }
bool is_charseq(TypeRef t) { return t->kind() == TypeKind::CharSeq || t->kind() == TypeKind::UnicodeCharSeq; }
int char_width(TypeRef t) { return t->kind() == TypeKind::UnicodeCharSeq ? 4 : 1; }
int64_t char_count(TypeRef t) { return t->bitwidth() / 8 / char_width(t); }

std::string time_unit(TypeRef t) {
  const std::string& name = t->name();
  auto open = name.find('[');
  return open == std::string::npos ? "" : name.substr(open + 1, name.size() - open - 2);
}

TypeRef number_class(TypeRef instance) {
  instance = instance->unliteral();
  return TypeFactory::intern(
      TypeFactory::composite(TypeKind::NumberClass, "class(" + instance->name() + ")", {instance}));
}

TypeRef function_value(const std::string& path) {
  return TypeFactory::intern(TypeFactory::prototype(TypeKind::Function, "Function(" + path + ")"));
}

TypeRef dispatcher_value(const std::string& name) {
  return TypeFactory::intern(TypeFactory::prototype(TypeKind::Dispatcher, "Dispatcher(" + name + ")"));
}

std::string value_name(TypeRef t) {
  const std::string& n = t->name();
  size_t open = n.find('(');
  return open == std::string::npos || n.empty() ? n : n.substr(open + 1, n.size() - open - 2);
}

TypeRef detail::intern_vector(const std::string& name, TypeRef base, int count) {
  return TypeFactory::intern(
      TypeFactory::composite(TypeKind::Vector, name, std::vector<TypeRef>(static_cast<size_t>(count), base)));
}

namespace {

const std::unordered_map<std::string, TypeRef>& scalar_table() {
  // Every scalar name that numba.cuda.types defines on a 64-bit Linux host
  // (intp, intc, long_, ... resolved the way numba resolves them there).
  // `float_` is only defined by numba under NumPy 1.x and `bool` only under
  // NumPy 2.x; we accept both.
  static const auto* table = new std::unordered_map<std::string, TypeRef>{
      {"none", none()},
      {"void", none()},
      {"voidptr", voidptr()},

      {"boolean", boolean()},
      {"bool_", boolean()},
      {"bool", boolean()},
      {"b1", boolean()},
      {"c_bool", boolean()},
      {"py_bool", boolean()},
      {"np_bool_", boolean()},

      {"int8", int8()},
      {"i1", int8()},
      {"char", int8()},
      {"np_char", int8()},
      {"c_int8", int8()},
      {"np_int8", int8()},
      {"int16", int16()},
      {"i2", int16()},
      {"short", int16()},
      {"np_short", int16()},
      {"c_int16", int16()},
      {"np_int16", int16()},
      {"int32", int32()},
      {"i4", int32()},
      {"intc", int32()},
      {"np_intc", int32()},
      {"c_int32", int32()},
      {"np_int32", int32()},
      {"int64", int64()},
      {"i8", int64()},
      {"intp", int64()},
      {"ssize_t", int64()},
      {"int_", int64()},
      {"np_int_", int64()},
      {"long_", int64()},
      {"np_long", int64()},
      {"longlong", int64()},
      {"np_longlong", int64()},
      {"c_int64", int64()},
      {"np_int64", int64()},
      {"c_intp", int64()},
      {"py_int", int64()},
      {"np_intp", int64()},

      {"uint8", uint8()},
      {"u1", uint8()},
      {"byte", uint8()},
      {"uchar", uint8()},
      {"np_uchar", uint8()},
      {"c_uint8", uint8()},
      {"np_uint8", uint8()},
      {"uint16", uint16()},
      {"u2", uint16()},
      {"ushort", uint16()},
      {"np_ushort", uint16()},
      {"c_uint16", uint16()},
      {"np_uint16", uint16()},
      {"uint32", uint32()},
      {"u4", uint32()},
      {"uintc", uint32()},
      {"np_uintc", uint32()},
      {"c_uint32", uint32()},
      {"np_uint32", uint32()},
      {"uint64", uint64()},
      {"u8", uint64()},
      {"uintp", uint64()},
      {"size_t", uint64()},
      {"uint", uint64()},
      {"np_uint", uint64()},
      {"ulong", uint64()},
      {"np_ulong", uint64()},
      {"ulonglong", uint64()},
      {"np_ulonglong", uint64()},
      {"c_uint64", uint64()},
      {"np_uint64", uint64()},
      {"c_uintp", uint64()},
      {"np_uintp", uint64()},

      {"float16", float16()},
      {"f2", float16()},
      {"c_float16", float16()},
      {"np_float16", float16()},
      {"float32", float32()},
      {"f4", float32()},
      {"float_", float32()},
      {"np_float_", float32()},
      {"c_float32", float32()},
      {"np_float32", float32()},
      {"float64", float64()},
      {"f8", float64()},
      {"double", float64()},
      {"np_double", float64()},
      {"c_float64", float64()},
      {"py_float", float64()},
      {"np_float64", float64()},

      {"bfloat16", bfloat16()},
      {"__nv_bfloat16", bfloat16()},
      {"fp8_e4m3", fp8_e4m3()},
      {"fp8_e5m2", fp8_e5m2()},
      {"fp8_e8m0", fp8_e8m0()},
      {"fp8x2_e4m3", fp8_packed(fp8_e4m3(), 2)},
      {"fp8x4_e4m3", fp8_packed(fp8_e4m3(), 4)},
      {"fp8x2_e5m2", fp8_packed(fp8_e5m2(), 2)},
      {"fp8x4_e5m2", fp8_packed(fp8_e5m2(), 4)},
      {"fp8x2_e8m0", fp8_packed(fp8_e8m0(), 2)},
      {"fp8x4_e8m0", fp8_packed(fp8_e8m0(), 4)},
      {"complex64", complex64()},
      {"c8", complex64()},
      {"np_complex64", complex64()},
      {"complex128", complex128()},
      {"c16", complex128()},
      {"py_complex", complex128()},
      {"np_complex128", complex128()},
  };
  return *table;
}

}  // namespace

TypeRef lookup_scalar(const std::string& name) {
  auto found = scalar_table().find(name);
  if (found != scalar_table().end()) return found->second;
  auto unit_of = [&](size_t base) -> std::string {  // "datetime64[D]" -> "D"; "datetime64" -> ""
    if (name.size() == base) return "";
    if (name[base] != '[' || name.back() != ']') return "?";
    return name.substr(base + 1, name.size() - base - 2);
  };
  if (name.rfind("datetime64", 0) == 0) return datetime64(unit_of(10));
  if (name.rfind("timedelta64", 0) == 0) return timedelta64(unit_of(11));
  return nullptr;
}

std::vector<std::string> scalar_names() {
  std::vector<std::string> names;
  for (const auto& entry : scalar_table()) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace types
}  // namespace cujit
