// Python view of the runtime (`cujit._core.driver`): devices and contexts,
// memory and streams, the module loader with Python setup/teardown hooks,
// kernel launches from argument plans; and the translation of the runtime's
// and the CUDA tools' errors (driver, nvJitLink, NVRTC, libNVVM).
// Driver calls that can block run with the GIL released.
#include <pybind11/stl.h>

#include <thread>

#include <cstring>
#include <optional>

#include "bindings.h"
#include "cujit/driver.h"
#include "cujit/link.h"
#include "cujit/nvrtc.h"
#include "cujit/nvvm.h"
#include "py_interfaces.h"

namespace cujit::bindings {
namespace {

namespace drv = cujit::driver;
namespace lnk = cujit::link;

// ---- conversions ----------------------------------------------------------

// A contiguous view of a host buffer (numpy array, bytes, bytearray, ...).
class HostBuffer {
 public:
  HostBuffer(py::handle obj, bool writable) {
    int flags = PyBUF_ANY_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string("expected a contiguous") + (writable ? ", writable" : "") +
                           " host buffer (numpy array, bytes, bytearray), got " +
                           py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>());
    }
  }
  ~HostBuffer() { PyBuffer_Release(&view_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* data() const { return view_.buf; }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

std::size_t copy_size(std::size_t available, const std::optional<std::size_t>& nbytes) {
  if (!nbytes) return available;
  if (*nbytes > available)
    throw py::value_error("cannot copy " + std::to_string(*nbytes) + " bytes: the host buffer has " +
                          std::to_string(available));
  return *nbytes;
}

drv::Dim3 to_dim3(py::handle value, const char* what) {
  std::vector<std::int64_t> v;
  if (PyLong_Check(value.ptr()) || PyIndex_Check(value.ptr())) {
    v.push_back(py::int_(py::reinterpret_borrow<py::object>(value)).cast<std::int64_t>());
  } else if (py::isinstance<py::sequence>(value)) {
    for (py::handle h : value) v.push_back(py::int_(py::reinterpret_borrow<py::object>(h)).cast<std::int64_t>());
  } else {
    throw py::type_error(std::string(what) + " must be an int or a sequence of 1 to 3 ints");
  }
  if (v.empty() || v.size() > 3)
    throw py::value_error(std::string(what) + " must be a sequence of 1, 2 or 3 integers, got " +
                          std::to_string(v.size()));
  v.resize(3, 1);
  return drv::Dim3{v[0], v[1], v[2]};
}

drv::CUstream to_stream(py::handle stream) {
  if (stream.is_none()) return nullptr;
  if (py::isinstance<drv::Stream>(stream)) return stream.cast<drv::Stream&>().handle();
  return reinterpret_cast<drv::CUstream>(py::int_(py::reinterpret_borrow<py::object>(stream)).cast<std::uintptr_t>());
}

// values[i] for an array slot: (data, nitems, itemsize, shape, strides).
void put_array(drv::ArgumentBuffer& buf, const drv::ArgSlot& slot, PyObject* value, std::size_t index) {
  py::handle h(value);
  if (!py::isinstance<py::tuple>(h) || py::len(h) != 5)
    throw py::type_error("kernel argument slot " + std::to_string(index) +
                         " is an array: expected (data, nitems, itemsize, shape, strides)");
  py::tuple t = py::reinterpret_borrow<py::tuple>(h);
  std::vector<std::int64_t> shape = t[3].cast<std::vector<std::int64_t>>();
  std::vector<std::int64_t> strides = t[4].cast<std::vector<std::int64_t>>();
  if (shape.size() != static_cast<std::size_t>(slot.ndim) || strides.size() != shape.size())
    throw py::type_error("kernel argument slot " + std::to_string(index) + " is a " + std::to_string(slot.ndim) +
                         "-d array; got shape " + py::str(t[3]).cast<std::string>() + " and strides " +
                         py::str(t[4]).cast<std::string>());
  drv::ArrayArg a;
  a.data = t[0].cast<std::uint64_t>();
  a.nitems = t[1].cast<std::int64_t>();
  a.itemsize = t[2].cast<std::int64_t>();
  a.shape = shape.data();
  a.strides = strides.data();
  buf.set_array(index, a);
}

void fill_buffer(drv::ArgumentBuffer& buf, const drv::ArgumentPlan& plan, py::handle values) {
  py::object seq = py::reinterpret_steal<py::object>(
      PySequence_Fast(values.ptr(), "kernel argument values must be a list or tuple"));
  if (!seq) throw py::error_already_set();
  std::size_t n = static_cast<std::size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
  if (n != plan.slots().size())
    throw py::type_error("the argument plan has " + std::to_string(plan.slots().size()) + " slots, got " +
                         std::to_string(n) + " values");
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  for (std::size_t i = 0; i < n; ++i) {
    const drv::ArgSlot& slot = plan.slots()[i];
    if (slot.kind == drv::ArgSlot::Kind::Array)
      put_array(buf, slot, items[i], i);
    else
      buf.set_scalar(i, scalar_bits(slot, items[i], i));
  }
}

// Slot specs from Python: ("array", ndim) or (kind, size) with kind one of
// "b" (bool), "i" (signed), "u" (unsigned), "f" (float).
drv::ArgSlot to_slot(py::handle spec) {
  py::tuple t = py::reinterpret_borrow<py::object>(spec).cast<py::tuple>();
  if (t.size() != 2) throw py::value_error("an argument slot is (kind, size) or ('array', ndim)");
  std::string kind = t[0].cast<std::string>();
  int n = t[1].cast<int>();
  if (kind == "array") return drv::ArgSlot::make_array(n);
  if (kind == "b") return drv::ArgSlot::make_scalar(drv::ScalarKind::Bool, n);
  if (kind == "i") return drv::ArgSlot::make_scalar(drv::ScalarKind::Signed, n);
  if (kind == "u") return drv::ArgSlot::make_scalar(drv::ScalarKind::Unsigned, n);
  if (kind == "f") return drv::ArgSlot::make_scalar(drv::ScalarKind::Float, n);
  throw py::value_error("unknown argument slot kind '" + kind + "' (expected 'array', 'b', 'i', 'u' or 'f')");
}

}  // namespace

// Shared with the other bindings (bindings.h).
drv::Context& context_or_current(drv::Context* ctx) { return ctx ? *ctx : drv::current_context(); }

// A Python callable kept by the core; released under the GIL.
std::shared_ptr<py::object> keep(py::object fn) {
  return std::shared_ptr<py::object>(new py::object(std::move(fn)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

std::function<void(drv::LoadedModule&)> python_hook(py::object fn) {
  if (fn.is_none()) return {};
  if (!PyCallable_Check(fn.ptr())) throw py::type_error("module hooks must be callable");
  auto held = keep(std::move(fn));
  return [held](drv::LoadedModule& module) {
    py::gil_scoped_acquire gil;
    (*held)(module.shared_from_this());
  };
}

py::tuple slot_spec(const drv::ArgSlot& s) {
  if (s.kind == drv::ArgSlot::Kind::Array) return py::make_tuple("array", s.ndim);
  const char* k = s.scalar == drv::ScalarKind::Bool       ? "b"
                  : s.scalar == drv::ScalarKind::Signed   ? "i"
                  : s.scalar == drv::ScalarKind::Unsigned ? "u"
                                                          : "f";
  return py::make_tuple(k, s.size);
}

namespace {

// The driver's answers as typed, read-only classes (attributes, not dictionary keys).
void register_driver_answers(py::module_& d) {
  py::class_<drv::DriverStatus>(d, "DriverStatus", "whether libcuda loaded, from where, and why not")
      .def_readonly("available", &drv::DriverStatus::available)
      .def_readonly("reason", &drv::DriverStatus::reason)
      .def_readonly("library", &drv::DriverStatus::library)
      .def_readonly("version", &drv::DriverStatus::version)
      .def_readonly("device_count", &drv::DriverStatus::device_count);
  py::class_<drv::DeviceInfo>(d, "DeviceInfo", "a device's properties, read once")
      .def_readonly("id", &drv::DeviceInfo::id)
      .def_readonly("name", &drv::DeviceInfo::name)
      .def_readonly("uuid", &drv::DeviceInfo::uuid)
      .def_property_readonly("compute_capability",
                             [](const drv::DeviceInfo& i) { return py::make_tuple(i.cc_major, i.cc_minor); })
      .def_readonly("total_memory", &drv::DeviceInfo::total_memory)
      .def_readonly("pci_domain_id", &drv::DeviceInfo::pci_domain_id)
      .def_readonly("pci_bus_id", &drv::DeviceInfo::pci_bus_id)
      .def_readonly("pci_device_id", &drv::DeviceInfo::pci_device_id)
      .def_readonly("multiprocessor_count", &drv::DeviceInfo::multiprocessor_count)
      .def_readonly("warp_size", &drv::DeviceInfo::warp_size)
      .def_readonly("max_threads_per_block", &drv::DeviceInfo::max_threads_per_block)
      .def_property_readonly("max_block_dim",
                             [](const drv::DeviceInfo& i) { return py::tuple(py::cast(i.max_block_dim)); })
      .def_property_readonly("max_grid_dim",
                             [](const drv::DeviceInfo& i) { return py::tuple(py::cast(i.max_grid_dim)); })
      .def_readonly("max_shared_memory_per_block", &drv::DeviceInfo::max_shared_memory_per_block)
      .def_readonly("max_shared_memory_per_block_optin", &drv::DeviceInfo::max_shared_memory_per_block_optin)
      .def_readonly("cooperative_launch", &drv::DeviceInfo::cooperative_launch);
  py::class_<drv::FunctionAttributes>(d, "FunctionAttributes", "a loaded kernel's attributes (cuFuncGetAttribute)")
      .def_readonly("max_threads_per_block", &drv::FunctionAttributes::max_threads_per_block)
      .def_readonly("shared_size_bytes", &drv::FunctionAttributes::shared_size_bytes)
      .def_readonly("const_size_bytes", &drv::FunctionAttributes::const_size_bytes)
      .def_readonly("local_size_bytes", &drv::FunctionAttributes::local_size_bytes)
      .def_readonly("num_regs", &drv::FunctionAttributes::num_regs)
      .def_readonly("ptx_version", &drv::FunctionAttributes::ptx_version)
      .def_readonly("binary_version", &drv::FunctionAttributes::binary_version)
      .def_readonly("max_dynamic_shared_size_bytes", &drv::FunctionAttributes::max_dynamic_shared_size_bytes);
}

}  // namespace

std::uint64_t scalar_bits(const drv::ArgSlot& slot, PyObject* value, std::size_t index) {
  auto wrong = [&](const char* expected) {
    throw py::type_error("kernel argument slot " + std::to_string(index) + " expects " + expected + ", got " +
                         std::string(Py_TYPE(value)->tp_name));
  };
  switch (slot.scalar) {
    case drv::ScalarKind::Bool: {
      int truth = PyObject_IsTrue(value);
      if (truth < 0) throw py::error_already_set();
      return static_cast<std::uint64_t>(truth);
    }
    case drv::ScalarKind::Signed:
    case drv::ScalarKind::Unsigned: {
      // ctypes' rule: any integer (Python, numpy, bool), wrapped to the width.
      PyObject* index_obj = PyLong_CheckExact(value) ? Py_NewRef(value) : PyNumber_Index(value);
      if (index_obj == nullptr) {
        PyErr_Clear();
        wrong("an integer");
      }
      unsigned long long bits = PyLong_AsUnsignedLongLongMask(index_obj);
      Py_DECREF(index_obj);
      if (bits == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
      return bits;
    }
    case drv::ScalarKind::Float: {
      double d = PyFloat_AsDouble(value);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        wrong("a real number");
      }
      if (slot.size == 2) return drv::half_bits(d);
      if (slot.size == 4) {
        float f = static_cast<float>(d);
        std::uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
      }
      std::uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
  }
  return 0;
}

std::string image_bytes(py::handle image) {
  HostBuffer buf(image, false);
  return std::string(static_cast<const char*>(buf.data()), buf.size());
}

void register_driver(py::module_& m) {
  py::module_ d = m.def_submodule("driver", "the CUDA Driver API runtime (libcuda loaded on first use)");

  register_driver_answers(d);
  d.def("status", [] { return drv::driver_status(); }, py::return_value_policy::copy);
  d.def("error_name", &drv::error_name);
  d.def("device_count", &drv::device_count);
  d.def("device_info", [](int ordinal) { return drv::device_info(ordinal); }, py::return_value_policy::copy);
  d.def("device_attribute", &drv::device_attribute, py::arg("ordinal"), py::arg("attribute"));
  d.def("half_bits", &drv::half_bits, "binary16 bits of a float, rounded to nearest even");

  // Contexts live for the process: Python refers to them without owning.
  py::class_<drv::Context, std::unique_ptr<drv::Context, py::nodelete>>(d, "Context")
      .def_property_readonly("handle",
                             [](const drv::Context& c) { return reinterpret_cast<std::uintptr_t>(c.handle()); })
      .def_property_readonly("device_id", &drv::Context::device_id)
      .def_property_readonly("is_primary", &drv::Context::is_primary)
      .def("make_current", &drv::Context::make_current)
      .def("synchronize", &drv::Context::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("memory_info", &drv::Context::memory_info)
      .def("reset", &drv::Context::reset, py::call_guard<py::gil_scoped_release>())
      .def("flush_deferred", &drv::Context::flush_deferred, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("pending_frees", &drv::Context::pending_frees)
      .def("__eq__",
           [](const drv::Context& a, py::object b) {
             return py::isinstance<drv::Context>(b) && a.handle() == b.cast<const drv::Context&>().handle();
           })
      .def("__hash__", [](const drv::Context& c) { return std::hash<const void*>()(c.handle()); });
  auto ref = py::return_value_policy::reference;
  d.def("primary_context", &drv::primary_context, ref);
  d.def("current_context", &drv::current_context, ref);
  d.def("current_context_or_none", &drv::current_context_or_null, ref);
  d.def("select_device", &drv::select_device, ref);

  py::class_<drv::DeviceAllocation, std::shared_ptr<drv::DeviceAllocation>>(d, "Allocation")
      .def_property_readonly("ptr", &drv::DeviceAllocation::ptr)
      .def_property_readonly("size", &drv::DeviceAllocation::size)
      .def_property_readonly("context", &drv::DeviceAllocation::context, ref);
  d.def(
      "allocate",
      [](std::size_t nbytes, drv::Context* ctx) {
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        return drv::DeviceAllocation::allocate(c, nbytes);
      },
      py::arg("nbytes"), py::arg("context") = nullptr);

  py::class_<drv::Stream, std::shared_ptr<drv::Stream>>(d, "Stream")
      .def_property_readonly("handle",
                             [](const drv::Stream& s) { return reinterpret_cast<std::uintptr_t>(s.handle()); })
      .def_property_readonly("context", &drv::Stream::context, ref)
      .def_property_readonly("owned", &drv::Stream::owned)
      .def("synchronize", &drv::Stream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &drv::Stream::query);
  d.def(
      "create_stream",
      [](bool non_blocking, drv::Context* ctx) { return drv::Stream::create(context_or_current(ctx), non_blocking); },
      py::arg("non_blocking") = false, py::arg("context") = nullptr);
  d.def(
      "wrap_stream", [](std::uintptr_t handle, drv::Context* ctx) { return drv::Stream::wrap(ctx, handle); },
      py::arg("handle"), py::arg("context") = nullptr, "A stream cujit does not own (default or external).");

  // Copies: `stream` None is synchronous; host sides go through the buffer protocol.
  d.def(
      "copy_htod",
      [](std::uint64_t dst, py::handle src, std::optional<std::size_t> nbytes, drv::Stream* stream, drv::Context* ctx) {
        HostBuffer buf(src, false);
        std::size_t n = copy_size(buf.size(), nbytes);
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        drv::copy_host_to_device(c, dst, buf.data(), n, stream);
      },
      py::arg("dst"), py::arg("src"), py::arg("nbytes") = py::none(), py::arg("stream") = nullptr,
      py::arg("context") = nullptr);
  d.def(
      "copy_dtoh",
      [](py::handle dst, std::uint64_t src, std::optional<std::size_t> nbytes, drv::Stream* stream, drv::Context* ctx) {
        HostBuffer buf(dst, true);
        std::size_t n = copy_size(buf.size(), nbytes);
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        drv::copy_device_to_host(c, buf.data(), src, n, stream);
      },
      py::arg("dst"), py::arg("src"), py::arg("nbytes") = py::none(), py::arg("stream") = nullptr,
      py::arg("context") = nullptr);
  d.def(
      "copy_dtod",
      [](std::uint64_t dst, std::uint64_t src, std::size_t nbytes, drv::Stream* stream, drv::Context* ctx) {
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        drv::copy_device_to_device(c, dst, src, nbytes, stream);
      },
      py::arg("dst"), py::arg("src"), py::arg("nbytes"), py::arg("stream") = nullptr, py::arg("context") = nullptr);
  d.def(
      "memset",
      [](std::uint64_t dst, unsigned char value, std::size_t nbytes, drv::Stream* stream, drv::Context* ctx) {
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        drv::memset_d8(c, dst, value, nbytes, stream);
      },
      py::arg("dst"), py::arg("value"), py::arg("nbytes"), py::arg("stream") = nullptr, py::arg("context") = nullptr);

  // ---- modules ----
  py::class_<drv::Function, std::shared_ptr<drv::Function>>(d, "Function")
      .def_property_readonly("handle",
                             [](const drv::Function& f) { return reinterpret_cast<std::uintptr_t>(f.handle()); })
      .def_property_readonly("name", &drv::Function::name)
      .def_property_readonly("attributes", [](const drv::Function& f) { return f.attributes(); })
      .def("max_active_blocks_per_multiprocessor", &drv::Function::max_active_blocks_per_multiprocessor,
           py::arg("block_size"), py::arg("shared_mem") = 0)
      .def_property("preferred_shared_memory_carveout", &drv::Function::preferred_shared_memory_carveout,
                    &drv::Function::set_preferred_shared_memory_carveout,
                    "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: a percentage, or -1 for the default")
      .def_property_readonly("module", [](const drv::Function& f) { return f.module().shared_from_this(); })
      .def_property_readonly(
          "loaded", [](const drv::Function& f) { return f.module().loaded(); },
          "False once its module was unloaded (a context reset, an unload)")
      .def("__repr__", [](const drv::Function& f) { return "<cujit CUDA function " + f.name() + ">"; });

  py::class_<drv::LoadedModule, std::shared_ptr<drv::LoadedModule>>(d, "LoadedModule")
      .def_property_readonly("key", &drv::LoadedModule::key)
      .def_property_readonly("handle", &drv::LoadedModule::handle, "the CUlibrary (or CUmodule) as an int")
      .def_property_readonly("kind",
                             [](const drv::LoadedModule& m) {
                               return m.kind() == drv::LoadedModule::Kind::Library ? "library" : "module";
                             })
      .def_property_readonly("loaded", &drv::LoadedModule::loaded)
      .def_property_readonly("context", &drv::LoadedModule::context, ref)
      .def_property_readonly(
          "device",
          [](const drv::LoadedModule& m) {
            return py::module_::import("cujit.cudadrv.devices").attr("get_device")(m.context().device_id());
          },
          "the Device of the module's context")
      .def("get_function", &drv::LoadedModule::function, py::arg("name"))
      .def("get_global", &drv::LoadedModule::global, py::arg("name"), "(device pointer, size in bytes)")
      .def("__int__", &drv::LoadedModule::handle)
      .def("__repr__", [](const drv::LoadedModule& m) {
        return "<cujit CUDA " + std::string(m.kind() == drv::LoadedModule::Kind::Library ? "library" : "module") +
               " '" + m.key() + "'" + (m.loaded() ? "" : " (unloaded)") + ">";
      });

  register_kernel_cache(d);

  d.def(
      "load_module",
      [](const std::string& key, py::handle image, drv::Context* ctx, py::object setup, py::object teardown) {
        drv::Context& c = context_or_current(ctx);
        drv::ModuleHooks hooks{python_hook(std::move(setup)), python_hook(std::move(teardown))};
        std::string bytes = image_bytes(image);
        py::gil_scoped_release release;  // hooks take the GIL back when they run
        return drv::module_loader().load(key, c, bytes, std::move(hooks));
      },
      py::arg("key"), py::arg("image"), py::arg("context") = nullptr, py::arg("setup") = py::none(),
      py::arg("teardown") = py::none(),
      "Loads `image` once per (key, context): setup(module) runs after the load, teardown(module) before the "
      "unload.");
  d.def(
      "find_module",
      [](const std::string& key, drv::Context* ctx) {
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        return drv::module_loader().find(key, c);
      },
      py::arg("key"), py::arg("context") = nullptr);
  d.def(
      "unload_module",
      [](const std::string& key, drv::Context* ctx) {
        drv::Context& c = context_or_current(ctx);
        py::gil_scoped_release release;
        return drv::module_loader().unload(key, c);
      },
      py::arg("key"), py::arg("context") = nullptr);
  d.def(
      "unload_key", [](const std::string& key) { return drv::module_loader().unload_key(key); }, py::arg("key"),
      py::call_guard<py::gil_scoped_release>());
  d.def(
      "unload_context", [](drv::Context& ctx) { return drv::module_loader().unload_context(ctx); }, py::arg("context"),
      py::call_guard<py::gil_scoped_release>());
  d.def(
      "unload_all_modules", [] { return drv::module_loader().unload_all(); }, py::call_guard<py::gil_scoped_release>());
  d.def("loaded_module_count", [] { return drv::module_loader().size(); });

  // ---- launches ----
  d.def(
      "validate_launch_config",
      [](py::handle grid, py::handle block, std::size_t sharedmem, std::optional<py::dict> limits) {
        drv::LaunchConfig c;
        c.grid = to_dim3(grid, "griddim");
        c.block = to_dim3(block, "blockdim");
        c.shared_mem = sharedmem;
        drv::LaunchLimits l;
        if (limits) {
          for (auto [k, v] : *limits) {
            std::string key = k.cast<std::string>();
            if (key == "max_grid")
              l.max_grid = v.cast<std::array<std::int64_t, 3>>();
            else if (key == "max_block")
              l.max_block = v.cast<std::array<std::int64_t, 3>>();
            else if (key == "max_threads_per_block")
              l.max_threads_per_block = v.cast<std::int64_t>();
            else if (key == "max_shared_per_block")
              l.max_shared_per_block = v.cast<std::int64_t>();
            else if (key == "static_shared")
              l.static_shared = v.cast<std::int64_t>();
            else
              throw py::value_error("unknown launch limit " + key);
          }
        }
        drv::validate_launch_config(c, l);
      },
      py::arg("griddim"), py::arg("blockdim"), py::arg("sharedmem") = 0, py::arg("limits") = py::none(),
      "Raises LaunchConfigError for a configuration no launch can have (default limits: every current GPU).");

  py::class_<drv::KernelLauncher>(d, "KernelLauncher")
      .def(py::init([](py::iterable slots) {
             std::vector<drv::ArgSlot> v;
             for (py::handle s : slots) v.push_back(to_slot(s));
             return drv::KernelLauncher(drv::ArgumentPlan(std::move(v)));
           }),
           py::arg("slots"))
      .def_property_readonly("slots",
                             [](const drv::KernelLauncher& k) {
                               py::list out;
                               for (const auto& s : k.plan().slots()) out.append(slot_spec(s));
                               return out;
                             })
      .def_property_readonly("param_count", [](const drv::KernelLauncher& k) { return k.plan().param_count(); })
      .def_property_readonly("param_offsets", [](const drv::KernelLauncher& k) { return k.plan().param_offsets(); })
      .def_property_readonly("param_sizes", [](const drv::KernelLauncher& k) { return k.plan().param_sizes(); })
      .def_property_readonly("buffer_size", [](const drv::KernelLauncher& k) { return k.plan().buffer_size(); })
      .def(
          "pack",
          [](const drv::KernelLauncher& k, py::handle values) {
            drv::ArgumentBuffer buf = k.make_buffer();
            fill_buffer(buf, k.plan(), values);
            return py::bytes(reinterpret_cast<const char*>(buf.data()), buf.size());
          },
          py::arg("values"), "The parameter buffer these values pack into (for tests and tools).")
      .def(
          "arrays_overlap",
          [](const drv::KernelLauncher& k, py::handle values) {
            drv::ArgumentBuffer buf = k.make_buffer();
            fill_buffer(buf, k.plan(), values);
            return buf.arrays_overlap();
          },
          py::arg("values"), "Whether the bytes of two of these array values overlap.")
      .def(
          "launch",
          [](const drv::KernelLauncher& k, py::handle function, py::handle griddim, py::handle blockdim,
             py::handle stream, std::size_t sharedmem, py::handle values, bool cooperative, py::handle if_overlap) {
            drv::LaunchConfig c;
            c.grid = to_dim3(griddim, "griddim");
            c.block = to_dim3(blockdim, "blockdim");
            c.shared_mem = sharedmem;
            c.stream = to_stream(stream);
            c.cooperative = cooperative;
            drv::ArgumentBuffer buf = k.make_buffer();
            fill_buffer(buf, k.plan(), values);
            py::object chosen;  // keeps the fallback's Function alive through the launch
            if (!if_overlap.is_none() && buf.arrays_overlap()) {
              chosen = py::reinterpret_borrow<py::object>(if_overlap)();
              function = chosen;
            }
            if (py::isinstance<drv::Function>(function)) {
              drv::Function& fn = function.cast<drv::Function&>();
              py::gil_scoped_release release;
              k.launch(fn, c, buf);
            } else {
              auto raw = reinterpret_cast<drv::CUfunction>(
                  py::int_(py::reinterpret_borrow<py::object>(function)).cast<std::uintptr_t>());
              py::gil_scoped_release release;
              k.launch(raw, c, buf);
            }
          },
          py::arg("function"), py::arg("griddim"), py::arg("blockdim"), py::arg("stream") = py::none(),
          py::arg("sharedmem") = 0, py::arg("values") = py::tuple(), py::arg("cooperative") = false,
          py::arg("if_overlap") = py::none(),
          "Packs `values` (one per slot; arrays as (data, nitems, itemsize, shape, strides)) and launches;\n"
          "when two arrays overlap and `if_overlap` is given, launches the function it returns instead.");
}

}  // namespace cujit::bindings
