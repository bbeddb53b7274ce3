// The interfaces Python implements for the core (see py_interfaces.h): Callee and Dispatcher as pybind11
// classes with trampolines, each checking its subclasses when they are defined (Resolver too).
#include "py_interfaces.h"

#include <pybind11/stl.h>

#include "cujit/compiler.h"

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

class PyKernelStore : public compiler::KernelStore {
 public:
  compiler::KeptKernel find() override {
    py::object found = call("find");
    return found.is_none() ? nullptr : std::shared_ptr<void>(bindings::keep(std::move(found)));
  }
  bool keeps() override { return call("keeps").cast<bool>(); }
  std::shared_ptr<void> lock() override {
    auto* held = new py::object(call("lock"));
    return std::shared_ptr<void>(held, [](void* p) {
      py::gil_scoped_acquire gil;
      auto* lock = static_cast<py::object*>(p);
      try {
        if (!lock->is_none()) lock->attr("release")();
      } catch (py::error_already_set& e) {  // a release that fails cannot be reported from here: shown, not raised
        e.discard_as_unraisable("releasing a kernel store's lock");
      }
      delete lock;
    });
  }
  std::vector<std::shared_ptr<link::LinkInput>> link_inputs(const compiler::CompiledKernel& kernel) override {
    return call("link_inputs", kernel).cast<std::vector<std::shared_ptr<link::LinkInput>>>();
  }
  void keep(const compiler::CompiledKernel& kernel, const std::string& image) override {
    call("keep", kernel, py::bytes(image));
  }

 private:
  template <typename... Args>
  py::object call(const char* name, const Args&... args) {
    py::gil_scoped_acquire gil;
    py::function method = py::get_override(static_cast<const compiler::KernelStore*>(this), name);
    if (!method) throw py::type_error(std::string("a KernelStore without its method ") + name);
    return method(args...);
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
  py::class_<Callee, PyCallee> callee(
      m, "Callee",
      "What typing asks of a function called from CUDA code: _type_for_caller("
      "argtypes, caller_options) -> TypedFunction (None: a call into the function being typed, "
      "recursion); _call_parameters() -> (names, "
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
  py::class_<compiler::KernelStore, PyKernelStore> store(
      m, "KernelStore",
      "Where kernels are kept between processes, for one compile (cujit/compiler.h): find() -> the kept kernel or "
      "None; keeps() -> whether a kernel compiled now is kept; lock() -> an object whose release() ends the "
      "entry's lock; link_inputs(compiled) -> [LinkInput]; keep(compiled, image)");
  store.def(py::init<>());
  require_methods(store, {"find", "keeps", "lock", "link_inputs", "keep"});
}

}  // namespace cujit::bindings
