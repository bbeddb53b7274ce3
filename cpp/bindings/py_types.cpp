// Python view of the type system: Type objects that behave like numba's
// (call one to make a Signature, subscript one to make an array type),
// Signature, the signature parser, and the mangler (for tests and tools).
#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/conversions.h"
#include "cujit/mangle.h"
#include "cujit/signature_parser.h"

namespace cujit::bindings {
namespace {

const char* kind_name(TypeKind k) {
  switch (k) {
    case TypeKind::None:
      return "none";
    case TypeKind::Boolean:
      return "boolean";
    case TypeKind::Integer:
      return "integer";
    case TypeKind::Float:
      return "float";
    case TypeKind::Complex:
      return "complex";
    case TypeKind::IntegerLiteral:
      return "integer_literal";
    case TypeKind::BooleanLiteral:
      return "boolean_literal";
    case TypeKind::UniTuple:
      return "unituple";
    case TypeKind::Tuple:
      return "tuple";
    case TypeKind::CPointer:
      return "cpointer";
    case TypeKind::VoidPtr:
      return "voidptr";
    case TypeKind::Array:
      return "array";
    case TypeKind::Range:
      return "range";
    case TypeKind::Record:
      return "record";
    case TypeKind::NestedArray:
      return "nestedarray";
    case TypeKind::Optional:
      return "optional";
    case TypeKind::BFloat16:
      return "bfloat16";
    case TypeKind::FP8:
      return "fp8";
    case TypeKind::FP8Packed:
      return "fp8packed";
    case TypeKind::Vector:
      return "vector";
    case TypeKind::Opaque:
      return "opaque";
    case TypeKind::CharSeq:
      return "charseq";
    case TypeKind::UnicodeCharSeq:
      return "unicode_charseq";
    case TypeKind::Datetime:
      return "datetime";
    case TypeKind::Timedelta:
      return "timedelta";
    case TypeKind::NumberClass:
      return "number_class";
    case TypeKind::Function:
      return "function";
    case TypeKind::Dispatcher:
      return "dispatcher";
  }
  return "?";
}

// One subscript item of `dtype[...]`: ':' or '::1'.
bool is_contiguous_slice(py::handle item) {
  if (!PySlice_Check(item.ptr())) throw py::type_error("array types are spelled with slices, e.g. float32[:, ::1]");
  py::object start = item.attr("start"), stop = item.attr("stop"), step = item.attr("step");
  if (!start.is_none() || !stop.is_none()) throw py::type_error("array type slices take no start or stop");
  if (step.is_none()) return false;
  if (step.cast<int>() != 1) throw py::type_error("array type slices take only the step 1 (::1)");
  return true;
}

TypeRef array_from_subscript(TypeRef dtype, py::object key) {
  std::vector<py::handle> items;
  if (py::isinstance<py::tuple>(key)) {
    for (py::handle h : key) items.push_back(h);
  } else {
    items.push_back(key);
  }
  int ndim = static_cast<int>(items.size());
  std::vector<bool> contiguous;
  for (py::handle h : items) contiguous.push_back(is_contiguous_slice(h));
  char layout = 'A';
  if (contiguous.back())
    layout = 'C';
  else if (ndim > 1 && contiguous.front())
    layout = 'F';
  return types::array(dtype, ndim, layout);
}

}  // namespace

void register_types(py::module_& m) {
  py::class_<Type, std::unique_ptr<Type, py::nodelete>> type(m, "Type");
  type.def_property_readonly("name", &Type::name)
      .def_property_readonly("kind", [](const Type& t) { return kind_name(t.kind()); })
      .def_property_readonly("bitwidth", &Type::bitwidth)
      .def_property_readonly("signed", &Type::is_signed)
      .def_property_readonly("literal_value", &Type::literal_value)
      .def_property_readonly("ndim", &Type::ndim)
      .def_property_readonly("layout", [](const Type& t) { return std::string(1, t.layout()); })
      .def_property_readonly("dtype",
                             [](const Type& t) -> py::object {
                               // numba's: an array's, a nested array's, a UniTuple's and a pointer's element
                               // type, a range's index type; a record's numpy dtype; no attribute of other types
                               switch (t.kind()) {
                                 case TypeKind::Range:
                                 case TypeKind::Array:
                                 case TypeKind::NestedArray:
                                 case TypeKind::UniTuple:
                                 case TypeKind::CPointer:
                                   return py::cast(t.element(0), py::return_value_policy::reference);
                                 case TypeKind::Record:
                                   return py::module_::import("cujit._typeof")
                                       .attr("record_dtype")(py::cast(&t, py::return_value_policy::reference));
                                 default:
                                   throw py::attribute_error("type " + t.name() + " has no attribute 'dtype'");
                               }
                             })
      .def_property_readonly("mutable", [](const Type& t) { return !t.readonly(); })
      .def_property_readonly("key", [](const Type& t) { return t.name(); })
      .def_property_readonly(
          "instance_type",
          [](const Type& t) -> TypeRef {
            if (t.kind() != TypeKind::NumberClass)
              throw py::attribute_error("type " + t.name() + " has no attribute 'instance_type'");
            return t.element(0);
          },
          py::return_value_policy::reference)
      .def_property_readonly("underlying_float",
                             [](const Type& t) -> py::object {
                               if (t.kind() != TypeKind::Complex)
                                 throw py::attribute_error("type " + t.name() + " has no attribute 'underlying_float'");
                               return py::cast(types::float_(t.bitwidth() / 2), py::return_value_policy::reference);
                             })
      .def(
          "copy",
          [](const Type& t, py::object dtype, py::object ndim, py::object layout, py::object readonly) {
            if (t.kind() != TypeKind::Array) throw py::type_error("copy() makes array types; " + t.name() + " is not");
            TypeRef d = dtype.is_none() ? t.element(0) : dtype.cast<TypeRef>();
            int n = ndim.is_none() ? t.ndim() : ndim.cast<int>();
            std::string l = layout.is_none() ? std::string(1, t.layout()) : layout.cast<std::string>();
            if (l != "C" && l != "F" && l != "A") throw py::value_error("layout must be 'C', 'F' or 'A'");
            bool ro = readonly.is_none() ? t.readonly() : readonly.cast<bool>();
            return types::array(d, n, l[0], ro, t.aligned());
          },
          py::arg("dtype") = py::none(), py::arg("ndim") = py::none(), py::arg("layout") = py::none(),
          py::arg("readonly") = py::none(), py::return_value_policy::reference,
          "numba's Array.copy: the same array type with the given parts changed")
      .def_property_readonly("count", &Type::count)
      .def_property_readonly("size", [](const Type& t) { return types::itemsize(&t); })
      .def_property_readonly("aligned", &Type::aligned)
      .def_property_readonly("shape", [](const Type& t) { return t.shape(); })
      .def_property_readonly("fields",
                             [](const Type& t) {
                               // numba's Record.fields: {name: (type, offset)}, in the record's order
                               py::dict out;
                               for (size_t i = 0; i < t.field_names().size(); ++i)
                                 out[py::str(t.field_names()[i])] = py::make_tuple(
                                     py::cast(t.element(i), py::return_value_policy::reference), t.field_offsets()[i]);
                               return out;
                             })
      .def(
          "typeof",
          [](const Type& t, const std::string& field) {
            int i = t.field_index(field);
            if (i < 0) throw py::key_error(field);
            return t.element(static_cast<size_t>(i));
          },
          py::arg("field"), py::return_value_policy::reference, "a record field's type (numba's Record.typeof)")
      .def_property_readonly(
          "types",
          [](const Type& t) {
            std::vector<TypeRef> out;
            for (size_t i = 0; i < t.count(); ++i) out.push_back(t.element(i));
            return out;
          },
          py::return_value_policy::reference)
      .def("__str__", &Type::name)
      .def("__repr__", &Type::name)
      .def("__hash__", [](const Type& t) { return std::hash<const Type*>()(&t); })
      .def("__eq__", [](const Type& a, py::object b) { return py::isinstance<Type>(b) && &a == b.cast<const Type*>(); })
      .def("__ne__",
           [](const Type& a, py::object b) { return !(py::isinstance<Type>(b) && &a == b.cast<const Type*>()); })
      .def("__call__",
           [](const Type& ret, py::args args) {
             Signature sig;
             sig.return_type = &ret;
             for (py::handle a : args) {
               if (py::isinstance<Type>(a)) {
                 sig.args.push_back(a.cast<const Type*>());
                 continue;
               }
               // numba's own type objects and a library's types (their data model's record), converted by
               // cujit.types.signature_type; anything else is refused there
               sig.args.push_back(py::module_::import("cujit.types").attr("signature_type")(a).cast<const Type*>());
             }
             return sig;
           })
      .def(
          "__getitem__",
          [](const Type& t, py::object key) {
            if ((!t.is_number() && t.kind() != TypeKind::Record && !types::is_time(&t) && !types::is_charseq(&t)) ||
                t.is_literal())
              throw py::type_error("cannot make an array of " + t.name());
            return array_from_subscript(&t, key);
          },
          py::return_value_policy::reference);

  py::class_<Signature>(m, "Signature")
      .def(py::init([](py::object ret, std::vector<TypeRef> args) {
             Signature s;
             s.return_type = ret.is_none() ? nullptr : ret.cast<TypeRef>();
             s.args = std::move(args);
             return s;
           }),
           py::arg("return_type"), py::arg("args"))
      .def_property_readonly(
          "return_type", [](const Signature& s) { return s.return_type; }, py::return_value_policy::reference)
      .def_property_readonly("args",
                             [](const Signature& s) {
                               py::tuple out(s.args.size());
                               for (size_t i = 0; i < s.args.size(); ++i)
                                 out[i] = py::cast(s.args[i], py::return_value_policy::reference);
                               return out;
                             })
      .def("__str__", &Signature::str)
      .def("__repr__", &Signature::str)
      .def("__eq__",
           [](const Signature& a, py::object b) {
             if (!py::isinstance<Signature>(b)) return false;
             const Signature& o = b.cast<const Signature&>();
             return a.return_type == o.return_type && a.args == o.args;
           })
      .def("__hash__", [](const Signature& s) { return std::hash<std::string>()(s.str()); });

  py::module_ t = m.def_submodule("types", "interned type objects");
  t.def("lookup", [](const std::string& name) -> py::object {
    TypeRef r = types::lookup_scalar(name);
    if (r == nullptr) return py::none();
    return py::cast(r, py::return_value_policy::reference);
  });
  t.def("integer_literal", &types::integer_literal, py::return_value_policy::reference);
  t.def("charseq", &types::charseq, py::arg("n"), py::return_value_policy::reference,
        "numpy's S<n>: numba's CharSeq(n), '[char x n]'");
  t.def("unicode_charseq", &types::unicode_charseq, py::arg("n"), py::return_value_policy::reference,
        "numpy's U<n>: numba's UnicodeCharSeq(n), '[unichr x n]'");
  t.def("datetime64", &types::datetime64, py::arg("unit"), py::return_value_policy::reference,
        "numpy's datetime64 of a unit (None for an unknown unit)");
  t.def("timedelta64", &types::timedelta64, py::arg("unit"), py::return_value_policy::reference,
        "numpy's timedelta64 of a unit (None for an unknown unit)");
  t.def("opaque", &types::opaque, py::arg("name"), py::return_value_policy::reference,
        "the interned opaque type of this name (numba's Opaque: GridGroup, ffi...)");
  t.def(
      "number_class",
      [](TypeRef instance) {
        if (!instance->is_number()) throw py::type_error("NumberClass needs a number type, got " + instance->name());
        return types::number_class(instance);
      },
      py::arg("instance"), py::return_value_policy::reference,
      "numba's NumberClass: the type of a number type used as a value (class(int32))");
  t.def("function_value", &types::function_value, py::arg("path"), py::return_value_policy::reference,
        "the type of a builtin or intrinsic function used as a value (Function(cuda.atomic.add))");
  t.def("uni_tuple", &types::uni_tuple, py::return_value_policy::reference);
  t.def("tuple", &types::tuple, py::return_value_policy::reference);
  t.def("cpointer", &types::cpointer, py::return_value_policy::reference);
  t.def(
      "record",
      [](const std::vector<std::tuple<std::string, TypeRef, int64_t, std::string>>& fields, int64_t size, bool aligned,
         const std::string& name) {
        std::vector<types::RecordField> fs;
        for (const auto& [field, type, offset, title] : fields) fs.push_back({field, type, offset, title});
        return types::record(fs, size, aligned, name);
      },
      py::arg("fields"), py::arg("size"), py::arg("aligned"), py::arg("name") = "", py::return_value_policy::reference);
  t.def("nested_array", &types::nested_array, py::arg("dtype"), py::arg("shape"), py::return_value_policy::reference);
  t.def("array", &types::array, py::arg("dtype"), py::arg("ndim"), py::arg("layout"), py::arg("readonly") = false,
        py::arg("aligned") = true, py::return_value_policy::reference);
  t.def(
      "array_layout",
      [](const std::vector<int64_t>& shape, std::optional<std::vector<int64_t>> strides, int64_t itemsize) {
        if (strides && strides->size() != shape.size()) throw py::value_error("strides and shape differ in length");
        return std::string(1, types::array_layout(static_cast<int>(shape.size()), shape.data(),
                                                  strides ? strides->data() : nullptr, itemsize));
      },
      py::arg("shape"), py::arg("strides"), py::arg("itemsize"),
      "numba's layout ('C', 'F' or 'A') of an array with these shape and strides in bytes (None: C order)");
  t.def(
      "is_contiguous",
      [](const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t itemsize, char order) {
        if (strides.size() != shape.size()) throw py::value_error("strides and shape differ in length");
        if (order != 'C' && order != 'F') throw py::value_error("order must be 'C' or 'F'");
        return types::is_contiguous(static_cast<int>(shape.size()), shape.data(), strides.data(), itemsize,
                                    order == 'C');
      },
      py::arg("shape"), py::arg("strides"), py::arg("itemsize"), py::arg("order"),
      "numpy's contiguity of an array with these shape and strides (bytes) in order 'C' or 'F'");

  m.def("best_overloads", &best_overloads, py::arg("candidates"), py::arg("args"),
        "The indices of the candidates (lists of parameter types) whose conversions of args rate best, as "
        "numba rates them; more than one is a tie, none means no candidate accepts args.");
  // numba's conversion kinds: 0 exact, 1 promote, 2 safe, 3 unsafe; None when impossible.
  m.def("can_convert", [](TypeRef from, TypeRef to) -> py::object {
    Conversion c = can_convert(from, to);
    if (c == Conversion::Impossible) return py::none();
    return py::int_(static_cast<int>(c));
  });
  m.def("parse_signature", [](const std::string& text) { return unwrap(parse_signature(text)); });
  m.def(
      "parse_type", [](const std::string& text) { return unwrap(parse_type(text)); },
      py::return_value_policy::reference);

  py::module_ mg = m.def_submodule("mangle", "numba's Itanium-extended name mangling");
  mg.def("escape_string", &mangle::escape_string);
  mg.def("mangle_identifier", &mangle::mangle_identifier);
  mg.def("mangle_value", &mangle::mangle_value);
  mg.def("mangle_type", &mangle::mangle_type);
  mg.def("mangle", &mangle::mangle, py::arg("name"), py::arg("args"), py::arg("abi_tags") = std::vector<std::string>{},
         py::arg("uid") = -1);
  mg.def("encode_flags", &mangle::encode_flags);
  mg.def("decode_flags", &mangle::decode_flags);
}

}  // namespace cujit::bindings
