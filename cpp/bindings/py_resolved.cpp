// `_core.Resolved`: what the Python resolver (cujit._source.Resolver) tells the frontend a name is. In
// cujit._runtime: the resolver's module defines it at import, and a resolver's answers are values of the IR alone.
#include <pybind11/stl.h>

#include "bindings.h"
#include "py_interfaces.h"

namespace cujit::bindings {
namespace {

using K = ir::GlobalValue::Kind;

ir::GlobalValue resolved(K kind, std::string repr) {
  ir::GlobalValue g;
  g.kind = kind;
  g.repr = std::move(repr);
  return g;
}

}  // namespace

void register_resolved(py::module_& m) {
  py::class_<ir::GlobalValue> r(m, "Resolved",
                                "A resolver's answer for a name outside the function (cujit._source.Resolver): "
                                "made by one of the static constructors");
  r.def_static(
      "int",
      [](py::int_ v) {
        ir::GlobalValue g = resolved(K::Int, py::str(v));
        if (v.cast<py::object>() >= py::int_(std::uint64_t{1} << 63)) {  // 2**63 <= v < 2**64: uint64, as numba
          g.int_value = static_cast<int64_t>(v.cast<uint64_t>());
          g.is_unsigned = true;
        } else {
          g.int_value = v.cast<int64_t>();
        }
        return g;
      },
      py::arg("value"), "An integer constant (int64, or uint64 from 2**63 up; larger ones overflow)");
  r.def_static(
      "float",
      [](double v) {
        ir::GlobalValue g = resolved(K::Float, py::str(py::float_(v)));
        g.float_value = v;
        return g;
      },
      py::arg("value"));
  r.def_static(
      "bool",
      [](bool v) {
        ir::GlobalValue g = resolved(K::Bool, v ? "True" : "False");
        g.int_value = v;
        return g;
      },
      py::arg("value"));
  r.def_static(
      "complex",
      [](double re, double im) {
        ir::GlobalValue g = resolved(K::Complex, py::str(py::module_::import("builtins").attr("complex")(re, im)));
        g.float_value = re;
        g.imag_value = im;
        return g;
      },
      py::arg("real"), py::arg("imag"));
  r.def_static("none", [] { return resolved(K::None, "None"); });
  r.def_static(
      "module",
      [](std::string name) {
        ir::GlobalValue g = resolved(K::Module, name);
        g.name = std::move(name);
        return g;
      },
      py::arg("name"), "A module the frontend knows: math, cmath, numpy, cuda");
  r.def_static(
      "builtin",
      [](std::string path) {
        ir::GlobalValue g = resolved(K::Builtin, path);
        g.name = std::move(path);
        return g;
      },
      py::arg("path"), "A function or intrinsic by its path: abs, math.sqrt, cuda.grid");
  r.def_static(
      "type",
      [](TypeRef t, const std::string& repr) {
        ir::GlobalValue g = resolved(K::TypeObject, repr.empty() ? t->name() : repr);
        g.type = t;
        g.name = t->name();
        return g;
      },
      py::arg("type"), py::arg("repr") = "", "A type (repr: how messages name it, a struct class's name)");
  r.def_static(
      "device",
      [](py::object callee, std::string name) {
        if (!py::isinstance<Callee>(callee))
          throw py::type_error("Resolved.device needs a cujit._core.Callee, not " +
                               py::str(py::type::handle_of(callee).attr("__name__")).cast<std::string>());
        ir::GlobalValue g = resolved(K::DeviceFunction, name);
        g.int_value = reinterpret_cast<intptr_t>(callee.ptr());  // its identity (a device function used as a value)
        g.function = hold(std::move(callee));
        g.name = std::move(name);
        return g;
      },
      py::arg("callee"), py::arg("name"), "A function CUDA code calls: typed through its Callee interface");
  r.def_static(
      "exception",
      [](py::object cls, std::string name) {
        ir::GlobalValue g = resolved(K::ExceptionClass, name);
        g.function = hold(std::move(cls));
        g.name = std::move(name);
        return g;
      },
      py::arg("cls"), py::arg("name"));
  r.def_static(
      "ndarray",
      [](TypeRef dtype, std::vector<int64_t> shape, py::bytes data, std::string repr) {
        ir::GlobalValue g = resolved(K::NdArray, std::move(repr));
        g.shape = std::move(shape);
        g.type = types::array(dtype, static_cast<int>(g.shape.size()), 'C', /*readonly=*/true);
        g.data = data;
        return g;
      },
      py::arg("dtype"), py::arg("shape"), py::arg("data"), py::arg("repr"),
      "A global array, frozen into constant memory: its C-order bytes");
  r.def_static(
      "record",
      [](TypeRef type, py::bytes data, std::string repr) {
        if (type->kind() != TypeKind::Record)
          throw py::type_error("Resolved.record needs a record type, not " + type->name());
        ir::GlobalValue g = resolved(K::Record, std::move(repr));
        g.type = type;
        g.data = data;
        if (static_cast<int64_t>(g.data.size()) != types::itemsize(type))
          throw py::value_error("Resolved.record: " + std::to_string(g.data.size()) + " bytes for " + type->name() +
                                ", which has " + std::to_string(types::itemsize(type)));
        return g;
      },
      py::arg("type"), py::arg("data"), py::arg("repr"),
      "A record constant (numpy's np.void, a library type's value through its data model): its bytes");
  r.def_static(
      "device_array",
      [](TypeRef dtype, std::vector<int64_t> shape, std::vector<int64_t> strides, uintptr_t data, bool readonly,
         std::string repr) {
        if (shape.size() != strides.size()) throw py::value_error("Resolved.device_array: one stride per axis");
        ir::GlobalValue g = resolved(K::DeviceArray, std::move(repr));
        const int ndim = static_cast<int>(shape.size());
        char layout = types::array_layout(ndim, shape.data(), strides.data(), types::itemsize(dtype));
        g.type = types::array(dtype, ndim, layout, readonly);
        g.shape = std::move(shape);
        g.strides = std::move(strides);
        g.int_value = static_cast<int64_t>(data);
        return g;
      },
      py::arg("dtype"), py::arg("shape"), py::arg("strides"), py::arg("data"), py::arg("readonly"), py::arg("repr"),
      "A device array the function captures by reference (its pointer, shape and strides frozen into the code)");
  r.def_static(
      "tuple",
      [](std::vector<ir::GlobalValue> items, std::string repr) {
        for (const auto& item : items)
          if (item.kind != K::Int && item.kind != K::Float && item.kind != K::Bool && item.kind != K::None &&
              item.kind != K::Complex && item.kind != K::Tuple && item.kind != K::NdArray &&
              item.kind != K::DeviceArray)
            throw py::type_error("Resolved.tuple holds constants (numbers, None, arrays, tuples of them), not " +
                                 item.repr);
        ir::GlobalValue g = resolved(K::Tuple, std::move(repr));
        g.items = std::move(items);
        return g;
      },
      py::arg("items"), py::arg("repr"),
      "A tuple of constants (numbers, None, global or device arrays, tuples of them), built in the function as the "
      "tuple it is");
  r.def_static(
      "object",
      [](int64_t handle, std::string repr) {
        ir::GlobalValue g = resolved(K::Object, std::move(repr));
        g.int_value = handle;
        return g;
      },
      py::arg("handle"), py::arg("repr"), "Any other object, by the resolver's handle for it");
  r.def_property_readonly("kind", [](const ir::GlobalValue& g) {
    static const char* const names[] = {"int",      "float",     "bool",  "none",   "complex",      "module",
                                        "builtin",  "device",    "type",  "object", "ndarray",      "str",
                                        "ellipsis", "exception", "tuple", "inner",  "device_array", "record"};
    return names[static_cast<int>(g.kind)];
  });
  r.def_property_readonly(
      "value",
      [](const ir::GlobalValue& g) -> py::object {
        switch (g.kind) {
          case K::Int:
          case K::Bool:
          case K::Float:
          case K::Complex:
            return constant_value(g);
          case K::Module:
          case K::Builtin:
            return py::str(g.name);
          case K::TypeObject:
            return py::cast(g.type, py::return_value_policy::reference);
          case K::DeviceFunction:
          case K::ExceptionClass:
            return held(g.function);
          case K::Object:
            return py::int_(g.int_value);
          case K::NdArray:
            return py::make_tuple(py::cast(g.type, py::return_value_policy::reference), py::tuple(py::cast(g.shape)),
                                  py::bytes(g.data));
          case K::Record:
            return py::make_tuple(py::cast(g.type, py::return_value_policy::reference), py::bytes(g.data));
          default:
            return py::none();
        }
      },
      "The constant, path, type, callee or handle it holds; an ndarray's (array type, shape, bytes); a record's "
      "(record type, bytes)");
  r.def("__repr__", [](const ir::GlobalValue& g) {
    return "<Resolved " + py::str(py::cast(g).attr("kind")).cast<std::string>() + " " + g.repr + ">";
  });
}

}  // namespace cujit::bindings
