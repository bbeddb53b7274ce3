// The Python objects the core calls, as C++ interfaces. Python classes implement them by subclassing
// (pybind11 trampolines); a subclass that lacks one of an interface's methods is a TypeError when the class
// is defined, so a rename on either side fails at import, not at the first call.
//
//   Resolver    what the frontend asks about the names a function reads from outside it (cujit._source)
//   Callee      what typing asks of a function called from CUDA code (a device dispatcher, a declaration)
//   Dispatcher  what the launch fast path asks of a kernel's dispatcher (a Callee too: one object is both)
//   KernelStore where the compile driver finds and keeps kernels between processes (compiler::KernelStore;
//               its trampoline is in py_interfaces.cpp)
//
// And the payload the bindings keep in each KernelCache specialisation (its Python face and the launch facts),
// shared by the cache's Python face (py_kernel_cache.cpp) and the launch fast path (py_launch.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "cujit/codegen.h"
#include "cujit/ir.h"
#include "cujit/kernel_cache.h"

namespace cujit::bindings {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // The _core.Resolved for a global or closure name, or None when the function's scope does not define it.
  virtual py::object resolve(const std::string& name) = 0;
  // The Resolved for `attr` of a module or class (is_object false: `key` is its dotted name) or of an object the
  // resolver keeps (is_object true: `key` is its index), or None.
  virtual py::object resolve_attribute(bool is_object, py::object key, const std::string& attr) = 0;
};

class Callee {
 public:
  virtual ~Callee() = default;
  // The typed function a call with these argument types makes, for a caller compiled with `caller`'s options.
  virtual std::shared_ptr<ir::TypedFunction> type_for_caller(const std::vector<TypeRef>& argtypes,
                                                             const codegen::CompileOptions& caller) = 0;
  // (parameter names, [Resolved or None: each parameter's default]) for keyword and omitted arguments; None
  // when the callee takes positional arguments only.
  virtual py::object call_parameters() = 0;
};

class Dispatcher : public Callee {
 public:
  // The specialisation launched for arguments of these types: compiled for them, the best explicit
  // signature, or a new compile (the fast path asks on a miss, once per type key).
  virtual std::shared_ptr<driver::KernelCache::Kernel> kernel_for_types(const std::vector<TypeRef>& argtypes) = 0;
  // The Python launch path (arguments the fast path does not pack; debug kernels, which report exceptions).
  virtual void launch_slow(py::object configured, py::tuple args) = 0;
};

// What the bindings keep in a specialisation's payload. Released under the GIL.
// Every Python object of a specialisation is held here, once: the cache's Python face shows them to the
// collector (a face may refer back to its cache).
struct PySpecialisation {
  py::object face;                // the dispatcher's object for it (cujit.dispatcher._Kernel; a TypedFunction)
  std::vector<TypeRef> argtypes;
  bool raises = false;            // a debug kernel with raise sites: launched by the Python path
  py::object if_overlap;          // None, or () -> the Function of the variant for overlapping arrays
  py::object build, hooks;        // what the Code's build and hooks call (they hold them borrowed)
};
const PySpecialisation& py_specialisation(const driver::KernelCache::Kernel& kernel);

// How a specialisation's image is built without Python: what a GPU kernel's code (cujit._compiler's GpuKernelCode)
// answers to _image_builder(include_dirs), for the cache (cujit._runtime) to call.
struct ImageBuilder {
  driver::KernelCache::BuildImage build;
};

// The KernelCache key of argument types and a tag (the options' key and the variant).
std::string specialisation_key(const std::vector<TypeRef>& argtypes, const std::string& tag);

void register_interfaces(py::module_& m);
void register_kernel_cache(py::module_& drv);

}  // namespace cujit::bindings
