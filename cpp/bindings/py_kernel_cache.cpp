// `cujit._core.driver.KernelCache`: a dispatcher's specialisations as Python sees them (the C++ KernelCache is
// their one owner, see cujit/kernel_cache.h). The dispatcher asks specialise(argtypes, tag, compile) and gets
// its face (its _Kernel) back; compile() runs once per key, behind the key's gate, and answers with a
// Specialisation: the face, the entry symbol, how its image is built (its GPU code, linked here without Python;
// a cubin from a cache; or build((major, minor)) -> cubin), hooks() -> (setup, teardown), and the launch facts
// the fast path reads without calling back (py_launch.cpp).
#include <pybind11/stl.h>

#include <cstring>

#include "cujit/codegen.h"
#include "py_interfaces.h"

namespace cujit::bindings {
namespace {

namespace drv = cujit::driver;
using Kernel = drv::KernelCache::Kernel;

// What a compile answers: the cache's Code and the bindings' payload.
struct Specialisation {
  drv::KernelCache::Code code;
  PySpecialisation py;
};

// The Code's calls of Python callables the payload owns (borrowed here: the Code and its payload live and
// die together in the Kernel).
drv::KernelCache::BuildImage python_build(const py::object& build) {
  if (build.is_none()) return {};
  PyObject* fn = build.ptr();
  return [fn](int major, int minor) {
    py::gil_scoped_acquire gil;
    return image_bytes(py::handle(fn)(py::make_tuple(major, minor)));
  };
}

// How a specialisation's image is built: `build` (its GPU code, whose _image_builder(include_dirs) links it in
// C++, or a Python callable), with `image` (the cubin for devices of architecture `image_arch`, from a cache or
// bundle) served as it is.
drv::KernelCache::BuildImage image_build(const py::object& build, py::object image, std::string image_arch,
                                         std::vector<std::string> include_dirs) {
  drv::KernelCache::BuildImage made =
      !build.is_none() && py::hasattr(build, "_image_builder")
          ? build.attr("_image_builder")(std::move(include_dirs)).cast<const ImageBuilder&>().build
          : python_build(build);
  if (image.is_none()) return made;
  return [made = std::move(made), cubin = image_bytes(image), arch = std::move(image_arch)](int major, int minor) {
    if (codegen::device_arch(major, minor) == arch) return cubin;
    if (!made) throw std::runtime_error("no image of this kernel for " + codegen::device_arch(major, minor));
    return made(major, minor);
  };
}

drv::KernelCache::MakeHooks python_hooks(const py::object& hooks) {
  if (hooks.is_none()) return {};
  PyObject* fn = hooks.ptr();
  return [fn] {
    py::gil_scoped_acquire gil;
    py::tuple pair = py::handle(fn)();
    return drv::ModuleHooks{python_hook(pair[0]), python_hook(pair[1])};
  };
}

std::shared_ptr<void> payload(PySpecialisation py) {
  return std::shared_ptr<void>(new PySpecialisation(std::move(py)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<PySpecialisation*>(p);
  });
}

// The function of `kernel` in `ctx`, with the GIL released (building and hooks take it back when they run).
std::shared_ptr<drv::Function> function_in(Kernel& kernel, drv::Context* ctx) {
  drv::Context& c = context_or_current(ctx);
  py::gil_scoped_release release;
  return kernel.function(c);
}

std::shared_ptr<Kernel> find(const drv::KernelCache& cache, const std::vector<TypeRef>& argtypes,
                             const std::string& tag) {
  return cache.find(specialisation_key(argtypes, tag));
}

py::object specialise(drv::KernelCache& cache, const std::vector<TypeRef>& argtypes, const std::string& tag,
                      py::object compile) {
  const std::string key = specialisation_key(argtypes, tag);
  if (std::shared_ptr<Kernel> k = cache.find(key)) return py_specialisation(*k).face;
  std::shared_ptr<Kernel> k;
  try {
    py::gil_scoped_release release;  // waiting at the gate: the compiling thread needs the GIL
    k = cache.specialise(key, [&]() -> drv::KernelCache::Code {
      py::gil_scoped_acquire gil;
      py::object made = compile();
      if (!py::isinstance<Specialisation>(made))
        throw py::type_error("a KernelCache compile must return a Specialisation");
      Specialisation& s = made.cast<Specialisation&>();
      drv::KernelCache::Code code = s.code;
      PySpecialisation py = s.py;
      py.argtypes = argtypes;
      code.payload = payload(std::move(py));
      return code;
    });
  } catch (const drv::KernelCache::Reentered& e) {
    throw py::value_error(std::string("a kernel specialisation was requested again while it compiles, on the "
                                      "same thread (") +
                          e.what() + ")");
  }
  return py_specialisation(*k).face;
}

// The cache's Python objects shown to the collector: a face refers to its cache (it keeps it, and so its
// modules, alive), so a dispatcher, its cache and its faces form a cycle only the collector can free. Clearing
// unloads the modules (teardown first) and releases the specialisations.
int visit_specialisations(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!py::detail::is_holder_constructed(self)) return 0;
  for (const auto& [key, k] : py::cast<drv::KernelCache&>(py::handle(self)).specialisations()) {
    if (!k->code().payload) continue;
    const PySpecialisation& s = py_specialisation(*k);
    for (const py::object* o : {&s.face, &s.if_overlap, &s.build, &s.hooks})
      if (o->ptr() != nullptr) Py_VISIT(o->ptr());
  }
  return 0;
}

int clear_specialisations(PyObject* self) {
  if (!py::detail::is_holder_constructed(self)) return 0;
  try {
    py::cast<drv::KernelCache&>(py::handle(self)).clear();
  } catch (...) {  // the collector has no one to report to; teardown hooks report their own errors
  }
  return 0;
}

void collectable(PyHeapTypeObject* heap_type) {
  PyTypeObject* type = &heap_type->ht_type;
  type->tp_flags |= Py_TPFLAGS_HAVE_GC;
  type->tp_traverse = visit_specialisations;
  type->tp_clear = clear_specialisations;
}

}  // namespace

const PySpecialisation& py_specialisation(const Kernel& kernel) {
  return *static_cast<const PySpecialisation*>(kernel.code().payload.get());
}

std::string specialisation_key(const std::vector<TypeRef>& argtypes, const std::string& tag) {
  std::string key(argtypes.size() * sizeof(TypeRef), '\0');  // types are interned: their addresses name them
  if (!argtypes.empty()) std::memcpy(key.data(), argtypes.data(), key.size());
  return key + '|' + tag;
}

void register_kernel_cache(py::module_& d) {
  py::class_<ImageBuilder>(d, "ImageBuilder",
                           "how a kernel's image is built for a device (major, minor) in C++: a GPU code's "
                           "_image_builder(include_dirs) answers one");
  py::class_<Specialisation>(d, "Specialisation",
                             "What a KernelCache compile answers: the specialisation's face (the dispatcher's "
                             "object for it), its entry symbol, build (a GpuKernelCode, linked in C++ with "
                             "include_dirs for NVRTC, or a callable (major, minor) -> cubin), image (a cubin "
                             "for image_arch, served as it is), hooks() -> (setup, teardown) for each module "
                             "loaded, and the launch facts")
      .def(py::init([](py::object face, std::string entry, py::object build, py::object hooks,
                       std::optional<int> carveout, bool cooperative, bool raises, py::object if_overlap, bool listed,
                       py::object image, std::string image_arch, std::vector<std::string> include_dirs) {
             Specialisation s;
             s.code.entry = std::move(entry);
             s.code.build = image_build(build, std::move(image), std::move(image_arch), std::move(include_dirs));
             s.code.hooks = python_hooks(hooks);
             s.py.build = std::move(build);
             s.py.hooks = std::move(hooks);
             s.code.carveout = carveout;
             s.code.cooperative = cooperative;
             s.code.listed = listed;
             s.py.face = std::move(face);
             s.py.raises = raises;
             s.py.if_overlap = std::move(if_overlap);
             return s;
           }),
           py::arg("face"), py::kw_only(), py::arg("entry") = "", py::arg("build") = py::none(),
           py::arg("hooks") = py::none(), py::arg("carveout") = py::none(), py::arg("cooperative") = false,
           py::arg("raises") = false, py::arg("if_overlap") = py::none(), py::arg("listed") = true,
           py::arg("image") = py::none(), py::arg("image_arch") = "",
           py::arg("include_dirs") = std::vector<std::string>{});

  py::class_<Kernel, std::shared_ptr<Kernel>>(
      d, "CachedKernel", "One specialisation of a KernelCache: its image per architecture, function per context")
      .def_property_readonly("face", [](const Kernel& k) { return py_specialisation(k).face; })
      .def("function", &function_in, py::arg("context") = nullptr,
           "The function in `context` (None: the current one), built and loaded on first use there (setup runs "
           "then)")
      .def(
          "loaded_function",
          [](const Kernel& kernel, drv::Context* ctx) {
            return kernel.loaded_in(ctx != nullptr ? ctx->handle() : drv::current_context_handle());
          },
          py::arg("context") = nullptr,
          "The function already loaded in `context` (None: the current one), or None: nothing is built or "
          "loaded.");

  py::class_<drv::KernelCache>(d, "KernelCache",
                               "One dispatcher's specialisations, the one owner of each from its type key to its "
                               "function in each context (see cujit/kernel_cache.h)",
                               py::custom_type_setup(collectable))
      .def(py::init<>())
      .def("specialise", &specialise, py::arg("argtypes"), py::arg("tag"), py::arg("compile"),
           "The face of the specialisation for (argtypes, tag); compile() -> Specialisation makes it on the first "
           "request, once: others asking for the same key wait for it, other keys compile meanwhile")
      .def(
          "find",
          [](const drv::KernelCache& cache, const std::vector<TypeRef>& argtypes, const std::string& tag) {
            std::shared_ptr<Kernel> k = find(cache, argtypes, tag);
            return k ? py_specialisation(*k).face : py::object(py::none());
          },
          py::arg("argtypes"), py::arg("tag"), "The face of a compiled specialisation, or None (never compiles)")
      .def("kernel", &find, py::arg("argtypes"), py::arg("tag"), py::keep_alive<0, 1>(),
           "The compiled specialisation (a CachedKernel, which keeps this cache alive), or None")
      .def(
          "specialisations",
          [](const drv::KernelCache& cache, bool listed_only) {
            py::list out;
            for (const auto& [key, k] : cache.specialisations()) {
              if (listed_only && !k->code().listed) continue;
              const PySpecialisation& s = py_specialisation(*k);
              out.append(py::make_tuple(py::tuple(py::cast(s.argtypes, py::return_value_policy::reference)), s.face));
            }
            return out;
          },
          py::arg("listed_only") = true,
          "[(argtypes, face)] of the specialisations (the listed ones, by default), in the order they were "
          "compiled")
      .def_property_readonly("compiling_here", &drv::KernelCache::compiling_on_this_thread,
                             "Whether this thread is compiling one of its specialisations now")
      .def("unload", &drv::KernelCache::unload, py::call_guard<py::gil_scoped_release>(),
           "Teardown, then unload, of every module of this cache; returns how many")
      .def_property_readonly("module_count", &drv::KernelCache::module_count)
      .def_property_readonly("images_built", [](const drv::KernelCache& cache) {
        py::gil_scoped_release release;  // waits for a build in progress, which may need the GIL
        return cache.images_built();
      });
}

}  // namespace cujit::bindings
