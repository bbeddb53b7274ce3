// Shared declarations of the pybind11 module: conversions between Python and
// the core, and raising core Errors as the matching Python exceptions.
#pragma once

#include <optional>

#include <pybind11/pybind11.h>

#include "cujit/argument_slots.h"
#include "cujit/driver.h"
#include "cujit/error.h"
#include "cujit/frontend.h"
#include "cujit/ir.h"
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

// Sets the Python exception for a runtime or CUDA-tool error (DriverError, LinkError, NvrtcError, NvvmError)
// as cujit.errors has them; rethrows anything else. pybind11 calls it as a translator; code outside pybind11's
// dispatch (the launch fast path) calls it itself.
void set_runtime_error(std::exception_ptr p);

// The bits of a kernel scalar parameter for a Python value, as ctypes converts (integers wrap to the width,
// floats round to the slot's precision, float16 as binary16); TypeError naming `index` for a wrong kind.
std::uint64_t scalar_bits(const driver::ArgSlot& slot, PyObject* value, std::size_t index);

using driver::slot_for;  // the one rule of argument slots (cujit/argument_slots.h)
// A slot as Python names it: ("array", ndim) or (kind, size), kind "b", "i", "u" or "f" (KernelLauncher's).
py::tuple slot_spec(const driver::ArgSlot& slot);

// A Python object held by the core (a callee, a link input's origin), released under the GIL; and the object.
std::shared_ptr<void> hold(py::object obj);
py::object held(const std::shared_ptr<void>& p);
// A constant's Python value (the arguments of a raised exception); None for other kinds.
py::object constant_value(const ir::GlobalValue& g);

// A Python callable kept by the core, released under the GIL; a Python module hook (none when `fn` is None).
std::shared_ptr<py::object> keep(py::object fn);
std::function<void(driver::LoadedModule&)> python_hook(py::object fn);
// The given context, or the current one.
driver::Context& context_or_current(driver::Context* ctx);

// cujit._runtime (runtime_module.cpp): everything a launch needs, without LLVM.
void register_types(py::module_& m);
void register_options(py::module_& m);  // CompileOptions, the architectures, the intrinsics' names (py_options.cpp)
void register_resolved(py::module_& m);  // what a resolver answers about a name (py_resolved.cpp)
void register_toolkit(py::module_& m);  // where CUDA's libraries are (at import: the wheels' roots are set then)
void register_link(py::module_& m);
void register_driver(py::module_& m);
void register_events(py::module_& m);  // after register_driver: adds to its submodule
void register_memory(py::module_& m);  // host, managed and IPC memory (py_memory.cpp)
void register_launch(py::module_& m);
void register_cache(py::module_& m);
void register_host_runtime(py::module_& m);  // the CPU target's runtime and driver (py_host.cpp)
// cujit._compiler (compiler_module.cpp): the frontend, typing and code generation, LLVM linked in.
void register_compile(py::module_& m);
void register_bytecode(py::module_& m);  // the bytecode frontend's decoder (py_bytecode.cpp)
void register_host_compiler(py::module_& m);  // the CPU target's code (py_host.cpp)

}  // namespace cujit::bindings
