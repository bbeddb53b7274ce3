// The interfaces Python implements for the core (see py_interfaces.h): Callee and Dispatcher as pybind11
// classes with trampolines, each checking its subclasses when they are defined (Resolver too).
#include "py_interfaces.h"

#include <pybind11/stl.h>

namespace cujit::bindings {
namespace {

class PyResolver : public Resolver {
 public:
  py::object resolve(const std::string& name) override {
    PYBIND11_OVERRIDE_PURE_NAME(py::object, Resolver, "resolve", resolve, name);
  }
  py::object resolve_attribute(bool is_object, py::object key, const std::string& attr) override {
    PYBIND11_OVERRIDE_PURE_NAME(py::object, Resolver, "resolve_attribute", resolve_attribute, is_object, key, attr);
  }
};

class PyCallee : public Callee {
 public:
  std::shared_ptr<ir::TypedFunction> type_for_caller(const std::vector<TypeRef>& argtypes,
                                                     const codegen::CompileOptions& caller) override {
    PYBIND11_OVERRIDE_PURE_NAME(std::shared_ptr<ir::TypedFunction>, Callee, "_type_for_caller", type_for_caller,
                                argtypes, caller);
  }
  py::object call_parameters() override {
    PYBIND11_OVERRIDE_PURE_NAME(py::object, Callee, "_call_parameters", call_parameters);
  }
};

class PyDispatcher : public Dispatcher {
 public:
  std::shared_ptr<ir::TypedFunction> type_for_caller(const std::vector<TypeRef>& argtypes,
                                                     const codegen::CompileOptions& caller) override {
    PYBIND11_OVERRIDE_PURE_NAME(std::shared_ptr<ir::TypedFunction>, Dispatcher, "_type_for_caller", type_for_caller,
                                argtypes, caller);
  }
  py::object call_parameters() override {
    PYBIND11_OVERRIDE_PURE_NAME(py::object, Dispatcher, "_call_parameters", call_parameters);
  }
  std::shared_ptr<driver::KernelCache::Kernel> kernel_for_types(const std::vector<TypeRef>& argtypes) override {
    PYBIND11_OVERRIDE_PURE_NAME(std::shared_ptr<driver::KernelCache::Kernel>, Dispatcher, "_select_kernel",
                                kernel_for_types, argtypes);
  }
  void launch_slow(py::object configured, py::tuple args) override {
    PYBIND11_OVERRIDE_PURE_NAME(void, Dispatcher, "_launch_slow", launch_slow, configured, args);
  }
};

// Makes `cls.__init_subclass__` check that each subclass has the interface's `methods`.
void require_methods(py::object cls, std::vector<std::string> methods) {
  py::cpp_function check(
      [cls, methods](py::object subclass, py::kwargs) {
        for (const std::string& name : methods) {
          py::object found = py::getattr(subclass, name.c_str(), py::none());
          if (found.is_none())
            throw py::type_error(py::str(subclass.attr("__qualname__")).cast<std::string>() + " implements " +
                                 py::str(cls.attr("__name__")).cast<std::string>() + " without its method " + name +
                                 " (the core calls it)");
        }
      },
      py::arg("subclass"));
  cls.attr("__init_subclass__") = py::module_::import("builtins").attr("classmethod")(check);
  cls.attr("_cujit_methods") = py::tuple(py::cast(methods));
}

}  // namespace

void register_interfaces(py::module_& m) {
  py::class_<Resolver, PyResolver> resolver(m, "Resolver",
                                            "What the frontend asks about names a function reads from outside it: "
                                            "resolve(name) -> Resolved or None; resolve_attribute(is_object, key, "
                                            "attr) -> Resolved or None");
  resolver.def(py::init<>());
  require_methods(resolver, {"resolve", "resolve_attribute"});
  py::class_<Callee, PyCallee> callee(m, "Callee",
                                      "What typing asks of a function called from CUDA code: _type_for_caller("
                                      "argtypes, caller_options) -> TypedFunction; _call_parameters() -> (names, "
                                      "defaults) or None");
  callee.def(py::init<>());
  require_methods(callee, {"_type_for_caller", "_call_parameters"});
  py::class_<Dispatcher, Callee, PyDispatcher> dispatcher(
      m, "Dispatcher",
      "A Callee whose kernels the launch fast path launches: _select_kernel(argtypes) -> CachedKernel; "
      "_launch_slow(configured, args); and _configure(config) -> ConfiguredLaunch, memoised in its _configs dict "
      "(the fast path's __getitem__ reads it)");
  dispatcher.def(py::init<>());
  require_methods(dispatcher, {"_type_for_caller", "_call_parameters", "_select_kernel", "_launch_slow", "_configure"});
}

}  // namespace cujit::bindings
