// The extension module `cujit._core`: error translation and registration.
#include "bindings.h"
#include "py_interfaces.h"

#include "cujit/ir.h"

namespace cujit::bindings {

namespace {

// The Python exception class for an error kind.
py::object exception_class(ErrorKind kind) {
  const char* cls = nullptr;
  switch (kind) {
    case ErrorKind::TypingError:
      cls = "TypingError";
      break;
    case ErrorKind::Unsupported:
      cls = "UnsupportedError";
      break;
    case ErrorKind::CCSupport:
      cls = "CCSupportError";
      break;
    case ErrorKind::Internal:
      cls = "InternalError";
      break;
    case ErrorKind::NotDefined:
      cls = "NotDefinedError";
      break;
    case ErrorKind::Lowering:
      cls = "LoweringError";
      break;
    default:
      break;
  }
  if (cls != nullptr) return py::module_::import("cujit.errors").attr(cls);
  PyObject* type = nullptr;
  switch (kind) {
    case ErrorKind::TypeError:
      type = PyExc_TypeError;
      break;
    case ErrorKind::ValueError:
      type = PyExc_ValueError;
      break;
    case ErrorKind::NameError:
      type = PyExc_NameError;
      break;
    case ErrorKind::SyntaxError:
      type = PyExc_SyntaxError;
      break;
    case ErrorKind::NotImplemented:
      type = PyExc_NotImplementedError;
      break;
    case ErrorKind::Interrupted:
      type = PyExc_KeyboardInterrupt;
      break;
    default:
      type = PyExc_RuntimeError;
      break;
  }
  return py::reinterpret_borrow<py::object>(type);
}

// The Python exception behind an error that crossed C++ typing as a message (a link hook's error, say): the
// next error raised in this thread chains it as its __cause__. A strong reference; the GIL is held whenever
// it is set or taken.
thread_local PyObject* t_pending_cause = nullptr;

void remember_cause(py::handle cause) {
  Py_XINCREF(cause.ptr());
  Py_XDECREF(t_pending_cause);
  t_pending_cause = cause.ptr();
}

}  // namespace

std::optional<Error> unlocated_compile_error(const py::error_already_set& e) {
  if (py::hasattr(e.value(), "cujit_location")) return std::nullopt;
  py::object cause = e.value().attr("__cause__");
  if (!cause.is_none()) remember_cause(cause);
  std::string message = py::str(e.value());
  if (e.matches(PyExc_RecursionError))
    return Error{ErrorKind::TypingError,
                 "device functions call each other too deeply to be typed (" + message +
                     "): each call in a chain of device functions nests a typing in Python, so chains are bounded "
                     "by sys.getrecursionlimit(); recursive device functions are not supported",
                 {}};
  py::module_ errors = py::module_::import("cujit.errors");
  // Subclasses before their bases.
  const std::pair<py::object, ErrorKind> kinds[] = {
      {errors.attr("UnsupportedError"), ErrorKind::Unsupported},
      {errors.attr("NotDefinedError"), ErrorKind::NotDefined},
      {errors.attr("TypingError"), ErrorKind::TypingError},
      {py::reinterpret_borrow<py::object>(PyExc_TypeError), ErrorKind::TypeError},
      {py::reinterpret_borrow<py::object>(PyExc_ValueError), ErrorKind::ValueError},
  };
  for (const auto& [cls, kind] : kinds)
    if (e.matches(cls)) return Error{kind, message, {}};
  return std::nullopt;
}

void set_python_error(const Error& error, const frontend::FunctionSource* source) {
  std::string message = error.message;
  bool located = source != nullptr && error.loc.known();
  if (located)
    message += "\n\n" + ir::format_source_excerpt(source->filename, source->source_lines, source->first_line, error.loc,
                                                  source->excerpt);
  py::object cls = exception_class(error.kind);
  py::object exc = cls(message);
  // Where in the user's code the error is (callers use it to decide whether to add the call site's).
  if (located) exc.attr("cujit_location") = py::make_tuple(source->filename, error.loc.line);
  if (t_pending_cause != nullptr) {
    PyException_SetCause(exc.ptr(), t_pending_cause);  // steals the reference
    t_pending_cause = nullptr;
  }
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

[[noreturn]] void raise_error(const Error& error, const frontend::FunctionSource* source) {
  set_python_error(error, source);
  throw py::error_already_set();
}

}  // namespace cujit::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "cujit's C++ core: types, frontend, typing, lowering and PTX generation";
  // A CompileError that reaches Python without passing through unwrap() (type
  // constructors, conversions) still becomes the exception its kind names.
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cujit::CompileError& e) {
      cujit::bindings::set_python_error(e.error(), nullptr);
    }
  });
  cujit::bindings::register_types(m);
  cujit::bindings::register_compile(m);
  cujit::bindings::register_bytecode(m);
  cujit::bindings::register_interfaces(m);
  cujit::bindings::register_driver(m);
  cujit::bindings::register_events(m);
  cujit::bindings::register_memory(m);
  cujit::bindings::register_launch(m);
  cujit::bindings::register_link(m);
  cujit::bindings::register_cache(m);
  cujit::bindings::register_host(m);
}
