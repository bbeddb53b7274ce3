// The extension module `cujit._core`: error translation and registration.
#include "bindings.h"

#include "cujit/ir.h"

namespace cujit::bindings {

[[noreturn]] void raise_error(const Error& error, const frontend::FunctionSource* source) {
  std::string message = error.message;
  if (source != nullptr && error.loc.known())
    message += "\n\n" + ir::format_source_excerpt(source->filename, source->source_lines, source->first_line, error.loc);
  py::module_ errors = py::module_::import("cujit.errors");
  const char* cls = nullptr;
  switch (error.kind) {
    case ErrorKind::TypingError: cls = "TypingError"; break;
    case ErrorKind::Unsupported: cls = "UnsupportedError"; break;
    case ErrorKind::CCSupport: cls = "CCSupportError"; break;
    case ErrorKind::Internal: cls = "InternalError"; break;
    default: break;
  }
  PyObject* type = nullptr;
  py::object holder;
  if (cls != nullptr) {
    holder = errors.attr(cls);
    type = holder.ptr();
  } else {
    switch (error.kind) {
      case ErrorKind::TypeError: type = PyExc_TypeError; break;
      case ErrorKind::ValueError: type = PyExc_ValueError; break;
      case ErrorKind::NameError: type = PyExc_NameError; break;
      case ErrorKind::SyntaxError: type = PyExc_SyntaxError; break;
      case ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
      default: type = PyExc_RuntimeError; break;
    }
  }
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

}  // namespace cujit::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "cujit's C++ core: types, frontend, typing, lowering and PTX generation";
  cujit::bindings::register_types(m);
  cujit::bindings::register_compile(m);
  cujit::bindings::register_driver(m);
}
