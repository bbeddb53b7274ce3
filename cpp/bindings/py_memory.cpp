// Python view of cujit/memory.h (`cujit._core.memory`): page-locked host memory (allocated or registered),
// managed memory, CUDA IPC handles and mappings, and the per-context cleanup pause. The Python memory managers
// (python/cujit/cudadrv/memory_managers.py) wrap these in numba-cuda's MemoryPointer classes. Driver calls
// run with the GIL released; addresses are Python ints.
#include <cstring>

#include "bindings.h"
#include "cujit/memory.h"

namespace cujit::bindings {
namespace {

namespace drv = cujit::driver;

drv::Context& given_or_current(drv::Context* ctx) { return ctx ? *ctx : drv::current_context(); }

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

drv::IpcHandleBytes to_handle(const py::bytes& handle) {
  std::string bytes = handle;
  drv::IpcHandleBytes out{};
  if (bytes.size() != out.size())
    throw py::value_error("a CUDA IPC handle has " + std::to_string(out.size()) + " bytes, got " +
                          std::to_string(bytes.size()));
  std::memcpy(out.data(), bytes.data(), out.size());
  return out;
}

void register_host_memory(py::module_& mm) {
  auto ref = py::return_value_policy::reference;
  auto nogil = py::call_guard<py::gil_scoped_release>();
  py::class_<drv::HostAllocation, std::shared_ptr<drv::HostAllocation>>(
      mm, "HostAllocation", "Page-locked host memory from cuMemHostAlloc (freed on release or collection)")
      .def_property_readonly("host_ptr", [](const drv::HostAllocation& h) { return address(h.host_ptr()); })
      .def_property_readonly("device_ptr", &drv::HostAllocation::device_ptr, "0 unless mapped")
      .def_property_readonly("size", &drv::HostAllocation::size)
      .def_property_readonly("mapped", &drv::HostAllocation::mapped)
      .def_property_readonly("context", &drv::HostAllocation::context, ref)
      .def("release", &drv::HostAllocation::release, nogil);
  mm.def(
      "host_alloc",
      [](std::size_t nbytes, bool mapped, bool portable, bool write_combined, drv::Context* ctx) {
        drv::Context& c = given_or_current(ctx);
        py::gil_scoped_release release;
        return drv::HostAllocation::allocate(c, nbytes, mapped, portable, write_combined);
      },
      py::arg("nbytes"), py::arg("mapped") = false, py::arg("portable") = false, py::arg("write_combined") = false,
      py::arg("context") = nullptr);

  py::class_<drv::HostRegistration, std::shared_ptr<drv::HostRegistration>>(
      mm, "HostRegistration", "Host memory page-locked by cuMemHostRegister (lifted on release or collection)")
      .def_property_readonly("host_ptr", [](const drv::HostRegistration& h) { return address(h.host_ptr()); })
      .def_property_readonly("device_ptr", &drv::HostRegistration::device_ptr, "0 unless mapped")
      .def_property_readonly("size", &drv::HostRegistration::size)
      .def_property_readonly("mapped", &drv::HostRegistration::mapped)
      .def_property_readonly("context", &drv::HostRegistration::context, ref)
      .def("release", &drv::HostRegistration::release, nogil);
  mm.def(
      "host_register",
      [](std::uintptr_t ptr, std::size_t nbytes, bool mapped, bool portable, drv::Context* ctx) {
        drv::Context& c = given_or_current(ctx);
        py::gil_scoped_release release;
        return drv::HostRegistration::register_memory(c, reinterpret_cast<void*>(ptr), nbytes, mapped, portable);
      },
      py::arg("ptr"), py::arg("nbytes"), py::arg("mapped") = false, py::arg("portable") = false,
      py::arg("context") = nullptr, "Page-locks existing host memory; the caller keeps the memory alive.");

  py::class_<drv::ManagedAllocation, std::shared_ptr<drv::ManagedAllocation>>(
      mm, "ManagedAllocation", "cuMemAllocManaged memory: one address on host and device")
      .def_property_readonly("ptr", &drv::ManagedAllocation::ptr)
      .def_property_readonly("size", &drv::ManagedAllocation::size)
      .def_property_readonly("context", &drv::ManagedAllocation::context, ref)
      .def("release", &drv::ManagedAllocation::release, nogil);
  mm.def(
      "alloc_managed",
      [](std::size_t nbytes, bool attach_global, drv::Context* ctx) {
        drv::Context& c = given_or_current(ctx);
        py::gil_scoped_release release;
        return drv::ManagedAllocation::allocate(c, nbytes, attach_global);
      },
      py::arg("nbytes"), py::arg("attach_global") = true, py::arg("context") = nullptr);

  mm.def(
      "host_device_pointer",
      [](std::uintptr_t host, drv::Context* ctx) {
        drv::Context& c = given_or_current(ctx);
        py::gil_scoped_release release;
        return drv::host_device_pointer(c, reinterpret_cast<const void*>(host));
      },
      py::arg("host_ptr"), py::arg("context") = nullptr, "The device address of mapped page-locked host memory.");
  mm.def(
      "address_range",
      [](std::uint64_t ptr, drv::Context* ctx) {
        drv::Context& c = given_or_current(ctx);
        py::gil_scoped_release release;
        return drv::address_range(c, ptr);
      },
      py::arg("ptr"), py::arg("context") = nullptr, "(base, size) of the device allocation containing `ptr`.");
}

void register_ipc(py::module_& mm) {
  mm.def(
      "ipc_handle",
      [](std::uint64_t base, drv::Context* ctx) {
        drv::Context& c = given_or_current(ctx);
        drv::IpcHandleBytes handle;
        {
          py::gil_scoped_release release;
          handle = drv::ipc_handle(c, base);
        }
        return py::bytes(reinterpret_cast<const char*>(handle.data()), handle.size());
      },
      py::arg("base"), py::arg("context") = nullptr,
      "The 64-byte CUipcMemHandle of the device allocation starting at `base`.");
  py::class_<drv::IpcMapping, std::shared_ptr<drv::IpcMapping>>(
      mm, "IpcMapping", "Another process's allocation, opened here (closed by close() or collection)")
      .def_property_readonly("ptr", &drv::IpcMapping::ptr)
      .def_property_readonly("is_open", &drv::IpcMapping::is_open)
      .def_property_readonly("context", &drv::IpcMapping::context, py::return_value_policy::reference)
      .def("close", &drv::IpcMapping::close, py::call_guard<py::gil_scoped_release>());
  mm.def(
      "ipc_open",
      [](const py::bytes& handle, drv::Context* ctx) {
        drv::IpcHandleBytes bytes = to_handle(handle);
        drv::Context& c = given_or_current(ctx);
        py::gil_scoped_release release;
        return drv::IpcMapping::open(c, bytes);
      },
      py::arg("handle"), py::arg("context") = nullptr);
}

void register_cleanup_pause(py::module_& mm) {
  auto nogil = py::call_guard<py::gil_scoped_release>();
  mm.def("pause_cleanup", &drv::pause_cleanup, py::arg("context"), nogil,
         "Deferred frees of `context` wait until the matching resume_cleanup (pauses nest).");
  mm.def("resume_cleanup", &drv::resume_cleanup, py::arg("context"), nogil);
  mm.def("cleanup_paused", &drv::cleanup_paused, py::arg("context"));
}

}  // namespace

void register_memory(py::module_& m) {
  py::module_ mm = m.def_submodule("memory", "host, managed and IPC memory (cujit/memory.h)");
  register_host_memory(mm);
  register_ipc(mm);
  register_cleanup_pause(mm);
}

}  // namespace cujit::bindings
