// What both extension modules (cujit._runtime and cujit._compiler, see runtime_module.cpp) compile in: core Errors,
// and the driver's and the CUDA tools' errors, raised as the Python exceptions cujit.errors has for them; Python
// objects the core holds.
#include "bindings.h"
#include "cujit/driver.h"
#include "cujit/ir.h"
#include "cujit/link.h"
#include "cujit/nvrtc.h"
#include "cujit/nvvm.h"
#include "py_interfaces.h"

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

void raise_as(const char* cls_name, PyObject* fallback, const std::string& message,
              const std::vector<std::pair<const char*, py::object>>& attrs = {}) {
  py::object cls = fallback ? py::reinterpret_borrow<py::object>(fallback) : py::object();
  if (cls_name != nullptr) cls = py::module_::import("cujit.errors").attr(cls_name);
  py::object exc = cls(message);
  for (const auto& [name, value] : attrs) exc.attr(name) = value;
  PyErr_SetObject(cls.ptr(), exc.ptr());
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

void set_runtime_error(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const driver::DriverError& e) {
    std::vector<std::pair<const char*, py::object>> attrs{
        {"code", py::int_(e.code())}, {"code_name", py::str(e.code_name())}, {"call", py::str(e.call())}};
    switch (e.kind()) {
      case driver::DriverErrorKind::Support:
        raise_as("CudaSupportError", nullptr, e.what());
        break;
      case driver::DriverErrorKind::Driver:
        raise_as("CudaDriverError", nullptr, e.what(), attrs);
        break;
      case driver::DriverErrorKind::LaunchConfig:
        raise_as("LaunchConfigError", nullptr, e.what(), attrs);
        break;
      case driver::DriverErrorKind::Argument:
        raise_as(nullptr, PyExc_ValueError, e.what());
        break;
    }
  } catch (const link::LinkError& e) {
    if (e.kind() == link::LinkError::Kind::BadInput)
      raise_as(nullptr, PyExc_ValueError, e.what());
    else
      raise_as("LinkerError", nullptr, e.what(), {{"code", py::int_(e.code())}});
  } catch (const link::NvrtcError& e) {
    raise_as("NvrtcError", nullptr, e.what());
  } catch (const link::NvvmError& e) {
    raise_as("NvvmError", nullptr, e.what());
  }
}

std::shared_ptr<void> hold(py::object obj) {
  return std::shared_ptr<void>(new py::object(std::move(obj)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

py::object held(const std::shared_ptr<void>& p) { return *static_cast<py::object*>(p.get()); }

py::object constant_value(const ir::GlobalValue& g) {
  switch (g.kind) {
    case ir::GlobalValue::Kind::Int:
      return g.is_unsigned ? py::int_(static_cast<uint64_t>(g.int_value)) : py::int_(g.int_value);
    case ir::GlobalValue::Kind::Bool:
      return py::bool_(g.int_value != 0);
    case ir::GlobalValue::Kind::Float:
      return py::float_(g.float_value);
    case ir::GlobalValue::Kind::Complex:
      return py::module_::import("builtins").attr("complex")(g.float_value, g.imag_value);
    case ir::GlobalValue::Kind::Str:
      if (g.is_bytes) return py::bytes(g.name);
      return py::str(g.name);
    default:
      return py::none();
  }
}

}  // namespace cujit::bindings
