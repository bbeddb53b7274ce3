// The CPU target's runtime and driver as cujit._runtime has them (`_core.host`): what a launch and the driver
// need, without the compiler (the kernels' code is cujit._compiler's, py_host.cpp).
#include "bindings.h"
#include "cujit/host_driver.h"
#include "cujit/hostrt.h"

namespace cujit::bindings {

void register_host_runtime(py::module_& m) {
  py::module_ h = m.def_submodule("host", "the CPU target's runtime: blocks on worker threads, its driver");
  h.def("worker_count", &hostrt::worker_count, "the worker threads a launch runs blocks on");
  h.def(
      "thread_stack_kib", [] { return (hostrt::thread_stack_bytes() - hostrt::kRuntimeStackBytes) / 1024; },
      "the stack each thread's locals may use, in KiB (CUJIT_HOST_STACK_KIB, default 512)");
  h.def("max_cooperative_blocks", &hostrt::max_cooperative_blocks, py::arg("threads_per_block"),
        "the most blocks of that many threads a cooperative launch may have on the CPU target");
  h.def("use_host_driver", &hostrt::install_host_driver,
        "Installs the CPU target's driver in place of libcuda for the rest of the process (host memory, "
        "synchronous streams, host-clock events, one device 'cujit CPU target').");
  h.def("host_driver_active", &hostrt::host_driver_installed, "whether the CPU target's driver is installed");
}

}  // namespace cujit::bindings
