// Python bindings of the CPU target's code (cujit._compiler): `_core.compile_kernel(..., target="cpu")` compiles a
// kernel for this machine (hostgen/host_jit.cpp) and `HostKernel.launch(...)` runs its grid on the host runtime
// (hostrt/), with parameters packed as KernelLauncher.pack packs them for a GPU launch. Its runtime and driver
// are cujit._runtime's (py_host_runtime.cpp).
#include <cstring>
#include <optional>
#include <stdexcept>

#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/codegen.h"
#include "cujit/hostgen.h"
#include "cujit/hostrt.h"
#include "cujit/ir.h"

namespace cujit::bindings {

namespace {

// Whether this is the interpreter's main thread, where Python delivers SIGINT as KeyboardInterrupt.
bool on_main_thread() {
  static const unsigned long main_ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return PyThread_get_thread_ident() == main_ident;
}

hostrt::Dim3 dim3_of(const std::vector<uint32_t>& d) {
  hostrt::Dim3 out;
  if (d.size() > 0) out.x = d[0];
  if (d.size() > 1) out.y = d[1];
  if (d.size() > 2) out.z = d[2];
  return out;
}

void launch(const hostgen::HostKernel& kernel, const std::vector<uint32_t>& grid, const std::vector<uint32_t>& block,
            uint64_t sharedmem, const py::bytes& params, const std::vector<std::size_t>& offsets, bool cooperative,
            const std::string& name) {
  std::string bytes = params;
  std::vector<uint64_t> storage(bytes.size() / 8 + 1);
  std::memcpy(storage.data(), bytes.data(), bytes.size());
  std::vector<void*> pointers;
  for (std::size_t offset : offsets) {
    if (offset >= bytes.size()) throw py::value_error("a parameter offset lies outside the parameter buffer");
    pointers.push_back(reinterpret_cast<char*>(storage.data()) + offset);
  }
  hostrt::HostLaunch config{
      dim3_of(grid), dim3_of(block), kernel.static_shared_bytes, sharedmem, kernel.uses_barrier, cooperative, name};
  config.strict_barriers = kernel.shared_checks != nullptr;  // debug=True: divergent barriers are errors too
  config.frame_bytes = kernel.frame_bytes;
  config.block_entry = kernel.block_entry;
  config.block_thread_bytes = kernel.block_thread_bytes;
  config.blocks_axis = kernel.blocks_axis;
  std::optional<Error> error;
  {
    std::optional<hostrt::InterruptScope> ctrl_c;  // Ctrl-C stops the launch (KeyboardInterrupt, below)
    if (on_main_thread()) ctrl_c.emplace();
    py::gil_scoped_release nogil;
    error = hostrt::launch(kernel.entry, pointers.data(), config);
  }
  // (the checks' records are taken whatever happened, so that a failed launch leaves none for the next)
  std::optional<std::string> bad_index = hostgen::take_index_error(kernel);
  std::optional<std::string> bad_shared = hostgen::take_shared_report(kernel);
  // Interrupted: Python's own handler saw the SIGINT too, and raises what the user's handler asks for.
  if (error && error->kind == ErrorKind::Interrupted && PyErr_CheckSignals() != 0) throw py::error_already_set();
  if (error) raise_error(*error);
  if (bad_index) throw py::index_error(*bad_index);
  if (bad_shared) throw std::runtime_error(*bad_shared);
}

}  // namespace

void register_host_compiler(py::module_& m) {
  py::class_<hostgen::HostKernel, codegen::KernelCode, std::shared_ptr<hostgen::HostKernel>>(
      m, "HostKernel", "the CPU target's code of a kernel (what _core.compile_kernel(target='cpu') makes)")
      .def_readonly("symbol", &hostgen::HostKernel::symbol)
      .def_readonly("static_shared_bytes", &hostgen::HostKernel::static_shared_bytes)
      .def_readonly("uses_barrier", &hostgen::HostKernel::uses_barrier)
      .def_property_readonly(
          "runs_as_loop", [](const hostgen::HostKernel& k) { return k.block_entry != nullptr; },
          "whether a block's threads run as loops between its barriers (no other collective, no spin point)")
      .def_readonly("blocks_axis", &hostgen::HostKernel::blocks_axis,
                    "the axis of the block ids its blocks run along, fastest first (0: x, 1: y; blocks run as loops)")
      .def_readonly("frame_bytes", &hostgen::HostKernel::frame_bytes,
                    "the stack its fixed-size locals need per thread (a launch refuses more than the limit)")
      .def_property_readonly(
          "object", [](const hostgen::HostKernel& k) { return py::bytes(k.object); },
          "its code as a relocatable object of this machine (what the disk cache keeps; load_host_kernel loads it)")
      .def("global_address", &hostgen::host_global_address, py::arg("name"),
           "the address of a global the module keeps (a debug kernel's exception records), or 0")
      .def("launch", &launch, py::arg("grid"), py::arg("block"), py::arg("sharedmem"), py::arg("params"),
           py::arg("offsets"), py::arg("cooperative") = false, py::arg("name") = "",
           "Runs the grid: params is KernelLauncher.pack's buffer, offsets its param_offsets; cooperative: every "
           "block at once (a grid sync); name: the kernel's, for error reports (a deadlock is a RuntimeError).");
  m.def(
      "load_host_kernel",
      [](const py::bytes& object, const std::string& symbol, const std::string& qualname) {
        std::string bytes = object;
        auto kernel = [&] {
          py::gil_scoped_release nogil;
          return hostgen::load_host_kernel(std::move(bytes), symbol, qualname);
        }();
        if (!kernel) raise_error(kernel.error());
        return *kernel;
      },
      py::arg("object"), py::arg("symbol"), py::arg("qualname"),
      "The HostKernel whose object (HostKernel.object, of this build and machine) is given, loaded with no compile.");
  m.def("host_machine_id", &hostgen::host_machine_id,
        "what host kernels' code depends on: the target triple, this CPU and its features (the disk cache's key)");
  m.def("host_math_functions", &hostgen::host_math_names,
        "the libdevice functions (and compiler runtime helpers) the CPU target implements");
  m.def("_nudge_host_math", &hostgen::set_host_math_nudge, py::arg("ulps"),
        "Tests only: the next compiles move each transcendental function's result by `ulps` ulps (0 stops).");
}

}  // namespace cujit::bindings
