// The extension module `cujit._runtime`: what launching a kernel needs (types, options, the driver, the launch fast
// path, linking, the disk cache, the CPU target's runtime), without LLVM. The compiler is `cujit._compiler`
// (compiler_module.cpp), loaded at the first compile; `cujit._core` (Python) shows both as one module.
#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/background.h"
#include "cujit/telemetry.h"
#include "py_interfaces.h"

PYBIND11_MODULE(_runtime, m) {
  namespace py = pybind11;
  namespace cb = cujit::bindings;
  m.doc() = "cujit's C++ runtime: types, options, the driver, launching, linking and the disk cache";
  // A CompileError that reaches Python without passing through unwrap() (type constructors, conversions) still
  // becomes the exception its kind names (pybind11's translators serve both extension modules).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cujit::CompileError& e) {
      cb::set_python_error(e.error(), nullptr);
    }
  });
  py::register_local_exception_translator(&cb::set_runtime_error);
  // At import: what `import cujit` needs (types, options, the resolver's answers, the interfaces Python subclasses,
  // the toolkit locator).
  cb::register_types(m);
  cb::register_options(m);
  cb::register_resolved(m);
  cb::register_interfaces(m);
  cb::register_toolkit(m);
  // The rest (the driver, launching, memory, linking, the disk cache, the CPU target's runtime: about 300
  // functions and classes, two thirds of the module's init) when a program first uses one of them: cujit._core
  // calls this once, then shows the names it added.
  m.def("_register_runtime", [m]() mutable {
    static bool done = false;
    if (done) return;
    done = true;
    cb::register_driver(m);
    cb::register_events(m);
    cb::register_memory(m);
    cb::register_launch(m);
    cb::register_link(m);
    cb::register_cache(m);
    cb::register_host_runtime(m);
  });
  m.def("wait_for_background_work", &cujit::background::wait_idle, py::call_guard<py::gil_scoped_release>(),
        "Returns once no thread of cujit's own runs (NVRTC prefetches, the warm-up, loading nvJitLink).");
  py::module_ tm = m.def_submodule("telemetry", "compile stage totals (cpp/include/cujit/telemetry.h)");
  tm.def(
      "stages",
      [](bool reset) {
        py::dict out;
        auto totals = cujit::telemetry::totals(reset);
        for (int i = 0; i < static_cast<int>(cujit::telemetry::Stage::kCount); ++i)
          out[cujit::telemetry::stage_name(static_cast<cujit::telemetry::Stage>(i))] =
              py::make_tuple(totals[i].count, totals[i].nanoseconds / 1e9);
        return out;
      },
      py::arg("reset") = false, "{stage: (count, seconds)} since the process started or the last reset");
}
