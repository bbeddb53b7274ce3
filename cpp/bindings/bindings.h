// Shared declarations of the pybind11 module: conversions between Python and
// the core, and raising core Errors as the matching Python exceptions.
#pragma once

#include <optional>

#include <pybind11/pybind11.h>

#include "cujit/error.h"
#include "cujit/frontend.h"
#include "cujit/types.h"

namespace cujit::bindings {

namespace py = pybind11;

// A Python exception raised while typing (by cujit's Python side or the user's
// objects) as an Error without a location, for the caller to locate at the
// name or call that led to it. nullopt for exceptions that already carry a
// location, and for exception types that are not compile errors.
std::optional<Error> unlocated_compile_error(const py::error_already_set& e);

// Raises (or, for exception translators, sets) the Python exception for
// `error`; `source` (may be null) supplies the file, line and caret for located errors.
void set_python_error(const Error& error, const frontend::FunctionSource* source = nullptr);
[[noreturn]] void raise_error(const Error& error, const frontend::FunctionSource* source = nullptr);

template <typename T>
T unwrap(Expected<T>&& value, const frontend::FunctionSource* source = nullptr) {
  if (!value) raise_error(value.error(), source);
  return std::move(*value);
}

// A Python ast.FunctionDef (from dedented source) -> SyntaxNode tree.
frontend::SyntaxNodePtr convert_ast(py::handle node, int line_offset);

// The bytes of a buffer (bytes, bytearray, numpy array, memoryview).
std::string image_bytes(py::handle image);

void register_types(py::module_& m);
void register_link(py::module_& m);
void register_compile(py::module_& m);
void register_driver(py::module_& m);

}  // namespace cujit::bindings
