// Python ast -> frontend::SyntaxNode. Field names come from each node class's
// _fields, so the conversion follows whatever the running CPython produces.
#include <unordered_map>

#include "bindings.h"

namespace cujit::bindings {
namespace {

struct NodeClass {
  std::string name;
  std::vector<std::string> fields;
  bool has_location;
};

const NodeClass& node_class(py::handle node) {
  static std::unordered_map<PyTypeObject*, NodeClass> cache;
  PyTypeObject* type = Py_TYPE(node.ptr());
  auto it = cache.find(type);
  if (it != cache.end()) return it->second;
  py::handle cls(reinterpret_cast<PyObject*>(type));
  NodeClass info;
  info.name = py::str(cls.attr("__name__"));
  for (py::handle f : cls.attr("_fields")) info.fields.push_back(py::str(f));
  info.has_location = py::hasattr(node, "lineno");
  return cache.emplace(type, std::move(info)).first->second;
}

int int_attr(py::handle node, const char* name) {
  py::object v = node.attr(name);
  return v.is_none() ? 0 : v.cast<int>();
}

frontend::SyntaxField convert_field(py::handle value, int line_offset) {
  if (value.is_none()) return std::monostate{};
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
  if (PyLong_Check(value.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow == 0) return static_cast<int64_t>(v);
    frontend::SyntaxBigInt big;
    big.text = py::str(value);
    unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();  // beyond uint64 (or negative beyond int64): typing reports it at its location
    } else {
      big.value = u;
      big.fits = true;
    }
    return big;
  }
  if (PyFloat_Check(value.ptr())) return PyFloat_AsDouble(value.ptr());
  if (PyComplex_Check(value.ptr())) return frontend::SyntaxImag{PyComplex_ImagAsDouble(value.ptr())};
  if (PyUnicode_Check(value.ptr())) return std::string(py::str(value));
  if (PyList_Check(value.ptr())) {
    std::vector<frontend::SyntaxNodePtr> items;
    for (py::handle item : value) {
      if (PyUnicode_Check(item.ptr())) {  // the names of a global or nonlocal statement: "str" nodes
        auto name = std::make_shared<frontend::SyntaxNode>();
        name->type = "str";
        name->fields.emplace("value", std::string(py::str(item)));
        items.push_back(std::move(name));
        continue;
      }
      items.push_back(convert_ast(item, line_offset));
    }
    return items;
  }
  if (PyBytes_Check(value.ptr())) return frontend::SyntaxBytes{std::string(py::reinterpret_borrow<py::bytes>(value))};
  if (value.ptr() == Py_Ellipsis) return frontend::SyntaxEllipsis{};
  return convert_ast(value, line_offset);
}

}  // namespace

frontend::SyntaxNodePtr convert_ast(py::handle node, int line_offset) {
  const NodeClass& cls = node_class(node);
  auto out = std::make_shared<frontend::SyntaxNode>();
  out->type = cls.name;
  if (cls.has_location) {
    out->loc.line = int_attr(node, "lineno") + line_offset;
    out->loc.col = int_attr(node, "col_offset");
    out->loc.end_line = int_attr(node, "end_lineno") + line_offset;
    out->loc.end_col = int_attr(node, "end_col_offset");
  }
  for (const std::string& f : cls.fields) {
    // Nodes built by hand (a lambda turned into a FunctionDef) may lack newer fields.
    py::object value = py::getattr(node, f.c_str(), py::none());
    out->fields.emplace(f, convert_field(value, line_offset));
  }
  return out;
}

}  // namespace cujit::bindings
