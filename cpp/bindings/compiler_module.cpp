// The extension module `cujit._compiler`: the frontend, typing, lowering and code generation, with LLVM linked in.
// `cujit._core` loads it at the first compile, after `cujit._runtime`, whose types, options and interfaces its
// functions take (pybind11 shares classes between the two).
#include "bindings.h"

PYBIND11_MODULE(_compiler, m) {
  namespace cb = cujit::bindings;
  pybind11::module_::import("cujit._runtime");  // the classes its functions take and answer
  m.doc() = "cujit's C++ compiler: frontend, typing, lowering and code generation";
  // (pybind11 keeps this translator per module: cujit._runtime registers its own)
  pybind11::register_local_exception_translator(&cb::set_runtime_error);
  cb::register_compile(m);
  cb::register_bytecode(m);
  cb::register_host_compiler(m);
}
