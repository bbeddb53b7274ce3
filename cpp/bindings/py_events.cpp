// Python view (in `cujit._core.driver`) of the host runtime API beyond memory
// and streams: events (Event, create_event), the calling thread's context stack
// (push_context, pop_context, pop_all_contexts, known_contexts) and the profiler switch
// (profiler_start, profiler_stop). cujit/cudadrv/events.py, devices.py and
// profiler.py give them numba-cuda's shapes. Blocking calls release the GIL.
#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/context_stack.h"
#include "cujit/events.h"
#include "cujit/profiler.h"

namespace cujit::bindings {
namespace {

namespace drv = cujit::driver;

// A stream argument: None (the default stream), a _core.driver.Stream, or a CUstream as an int.
drv::CUstream stream_arg(py::handle stream) {
  if (stream.is_none()) return nullptr;
  if (py::isinstance<drv::Stream>(stream)) return stream.cast<drv::Stream&>().handle();
  if (!PyLong_Check(stream.ptr()))
    throw py::type_error("expected a stream (a cujit Stream, a CUstream int or None), got " +
                         py::str(py::type::handle_of(stream).attr("__name__")).cast<std::string>());
  return reinterpret_cast<drv::CUstream>(stream.cast<std::uintptr_t>());
}

std::uintptr_t as_int(const void* handle) { return reinterpret_cast<std::uintptr_t>(handle); }

}  // namespace

void register_events(py::module_& m) {
  py::module_ d = m.attr("driver").cast<py::module_>();
  auto ref = py::return_value_policy::reference;

  py::class_<drv::Event, std::shared_ptr<drv::Event>>(d, "Event")
      .def_property_readonly("handle", [](const drv::Event& e) { return as_int(e.handle()); })
      .def_property_readonly("timing", &drv::Event::timing)
      .def_property_readonly("recorded", &drv::Event::recorded)
      .def_property_readonly("context", &drv::Event::context, ref)
      .def(
          "record", [](drv::Event& e, py::handle stream) { e.record(stream_arg(stream)); },
          py::arg("stream") = py::none())
      .def("synchronize", &drv::Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &drv::Event::query)
      .def(
          "wait", [](const drv::Event& e, py::handle stream) { e.wait(stream_arg(stream)); },
          py::arg("stream") = py::none())
      .def_static("elapsed_ms", &drv::Event::elapsed_ms, py::arg("start"), py::arg("end"));
  d.def(
      "create_event",
      [](bool timing, drv::Context* ctx) { return drv::Event::create(ctx ? *ctx : drv::current_context(), timing); },
      py::arg("timing") = true, py::arg("context") = nullptr);

  d.def("push_context", &drv::push_context, py::arg("context"));
  d.def("pop_context", [] { return as_int(drv::pop_context()); }, "the popped CUcontext as an int (0: none)");
  d.def("pop_all_contexts", &drv::pop_all_contexts);
  d.def("known_contexts", &drv::known_contexts, ref, "every context cujit has used in this process");

  d.def("profiler_start", &drv::profiler_start);
  d.def("profiler_stop", &drv::profiler_stop);
}

}  // namespace cujit::bindings
